//! The TOML loader and `--set` overrides: input is TOML text, then after a
//! NUL byte one `key=value` per line. Never panics; a configuration that
//! validates is written back as TOML that reads back equal.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sim_harness::config::SimConfig;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (toml, sets) = text.split_once('\0').unwrap_or((&text, ""));
    let Ok(mut cfg) = SimConfig::from_toml_str(toml, "fuzz.toml") else {
        return;
    };
    for s in sets.lines() {
        let before = cfg.clone();
        if cfg.apply_set(s).is_err() {
            assert_eq!(
                cfg, before,
                "a failed --set must leave the configuration alone"
            );
        }
    }
    if cfg.validate().is_ok() {
        let back = SimConfig::from_toml_str(&cfg.to_toml_string(), "echo")
            .expect("the echoed configuration parses");
        assert_eq!(back, cfg, "the echoed configuration reads back equal");
    }
});
