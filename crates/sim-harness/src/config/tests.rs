use super::keys::parse_typed;
use super::*;
use proptest::prelude::*;

/// The public key interface: renaming or dropping a key must fail this list.
const EXPECTED_KEYS: &[&str] = &[
    "controller.flash_cores",
    "reparo.mode",
    "reparo.n_bad_die",
    "reparo.p2l",
    "buffer.flush_policy",
    "buffer.map_protect_ratio",
    "buffer.flush_start_ratio",
    "buffer.gc_outside_budget",
    "buffer.write_buffer_bytes",
    "ftl.map_entries_per_page",
    "ftl.gc_reserve_blocks",
    "ftl.gc_slots_per_plane",
    "ftl.gc_trigger_blocks",
    "ftl.mapping_unit_bytes",
    "ftl.max_inflight",
    "ftl.op_ratio",
    "ftl.read_slots",
    "ftl.wl_check_interval",
    "ftl.wl_threshold",
    "ftl.superblock",
    "ftl.list_pages",
    "geometry.blocks_per_plane",
    "geometry.channels",
    "geometry.dies_per_channel",
    "copyback.max_threshold",
    "copyback.min_live_units",
    "copy.mode",
    "copy.refcount_bits",
    "copy.shadow_oob_entries",
    "copyback.mode",
    "copyback.retention_months",
    "copyback.selector",
    "copyback.table",
    "erase.bpm_capacity_loss_pct",
    "erase.gerase_mode",
    "erase.gerase_scope",
    "erase.mode",
    "erase.waf_window",
    "gc.copy_mode",
    "gc.destination",
    "gc.transaction_pages",
    "geometry.page_bytes",
    "geometry.pages_per_block",
    "geometry.pages_per_wordline",
    "geometry.planes_per_die",
    "geometry.spare_bytes",
    "host.arbitration",
    "host.interface",
    "zns.zone_bytes",
    "zns.zone_capacity_bytes",
    "zns.max_open",
    "zns.max_active",
    "fdp.handles",
    "fdp.reclaim_unit_bytes",
    "host.queue_depth",
    "nand.ecc_limit",
    "nand.endurance_scale",
    "nand.erase_fail_prob",
    "nand.factory_bad_ratio",
    "nand.full_data",
    "nand.initial_pe",
    "nand.model",
    "nand.program_fail_prob",
    "nand.rated_pe",
    "nand.retention_months",
    "nand.seed",
    "sim.seed",
    "timing.cache_program",
    "timing.channel_mts",
    "timing.dram_mib_s",
    "timing.host_mib_s",
    "timing.t_cmd_ns",
    "timing.t_dl_ns",
    "timing.t_erase_us",
    "timing.t_prog_us",
    "timing.t_read_us",
];

fn expected_keys() -> Vec<String> {
    let mut v: Vec<String> = EXPECTED_KEYS.iter().map(|k| k.to_string()).collect();
    v.sort();
    v
}

fn core(name: &str) -> firmware_core::Config {
    SimConfig::preset(name)
        .unwrap()
        .to_core_config()
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn config_keys_are_the_public_interface() {
    assert_eq!(SimConfig::keys(), expected_keys());
}

#[test]
fn config_default_is_the_default_preset() {
    assert_eq!(SimConfig::default(), SimConfig::preset("default").unwrap());
    assert_eq!(presets()[0].name, "default");
}

#[test]
fn config_every_preset_validates_and_converts() {
    let mut names: Vec<&str> = presets().iter().map(|p| p.name).collect();
    assert_eq!(
        names,
        [
            "default",
            "rcftl-dac18",
            "rcftl-thesis",
            "longftl-mqsim",
            "dgcb-flashsim",
            "dawid-femu",
            "mqsim-gc16",
            "native-2tb"
        ]
    );
    for p in presets() {
        assert!(
            !p.description.is_empty() && !p.source.is_empty(),
            "{}",
            p.name
        );
        let cfg = SimConfig::preset(p.name).unwrap();
        cfg.validate().unwrap_or_else(|e| panic!("{}: {e}", p.name));
        let c = cfg.to_core_config().unwrap();
        c.validate().unwrap();
        assert_eq!(
            c.geometry.units_per_page as u32,
            cfg.geometry.page_bytes / cfg.ftl.mapping_unit_bytes
        );
        assert_eq!(
            u64::from(c.write_buffer_units),
            cfg.buffer.write_buffer_bytes / u64::from(cfg.ftl.mapping_unit_bytes)
        );
        assert!(c.logical_units < c.geometry.total_units());
    }
    names.sort();
    names.dedup();
    assert_eq!(names.len(), presets().len());
}

#[test]
fn config_unknown_preset_lists_the_known_ones() {
    let e = SimConfig::preset("nope").unwrap_err();
    assert_eq!(e.source, "preset");
    for p in presets() {
        assert!(e.reason.contains(p.name), "{e}");
    }
    assert!(e
        .to_string()
        .starts_with("preset: key preset: unknown preset `nope`"));
}

#[test]
fn config_native_2tb_description_states_the_values_it_uses() {
    let cfg = SimConfig::preset("native-2tb").unwrap();
    let info = presets().iter().find(|p| p.name == "native-2tb").unwrap();
    let d = info.description;
    let g = &cfg.geometry;
    let t = &cfg.timing;
    let c = cfg.to_core_config().unwrap();
    let geometry = format!(
        "{} ch x {} dies x {} planes x {} blocks x {} pages x {} KiB",
        g.channels,
        g.dies_per_channel,
        g.planes_per_die,
        g.blocks_per_plane,
        g.pages_per_block,
        g.page_bytes / 1024
    );
    let gib = (u64::from(c.geometry.total_units()) * u64::from(c.geometry.unit_bytes())) >> 30;
    let physical = c.geometry.total_units().to_string();
    let physical = physical
        .as_bytes()
        .rchunks(3)
        .rev()
        .map(|d| std::str::from_utf8(d).unwrap())
        .collect::<Vec<_>>()
        .join(",");
    for want in [
        geometry,
        format!("{gib} GiB of flash"),
        format!("{} KiB mapping", cfg.ftl.mapping_unit_bytes / 1024),
        format!("{physical} physical"),
        format!("{} pages per wordline", g.pages_per_wordline),
        format!("OP {}%", (cfg.ftl.op_ratio * 100.0).round()),
        format!("tR {} us", t.t_read_us),
        format!("tPROG {} us", t.t_prog_us),
        format!("tBERS {} ms", t.t_erase_us / 1000.0),
        format!("{} MT/s", t.channel_mts),
        format!("{} MiB write buffer", cfg.buffer.write_buffer_bytes >> 20),
    ] {
        assert!(d.contains(&want), "description lacks `{want}`: {d}");
    }
    // The source names where each value comes from, and what was chosen.
    for want in [
        "1600 MT/s",
        "tR 50 us",
        "tPROG 400 us",
        "tBERS 3.5 ms",
        "rated P/E 3000",
    ] {
        assert!(info.source.contains(want), "source lacks `{want}`");
    }
    assert_eq!(cfg.nand.rated_pe, 3000);
    assert_eq!(c.geometry.total_units(), 603_979_776);
}

#[test]
fn config_mqsim_gc16_capacity_is_exact() {
    let c = core("mqsim-gc16");
    assert_eq!(c.geometry.total_units(), 4_194_304);
    assert_eq!(c.logical_units, 3_900_702);
    assert_eq!(c.geometry.dies(), 64);
    assert_eq!(c.geometry.planes(), 128);
    // The same count survives a TOML round trip of the float.
    let cfg = SimConfig::preset("mqsim-gc16").unwrap();
    let back = SimConfig::from_toml_str(&cfg.to_toml_string(), "echo").unwrap();
    assert_eq!(back.to_core_config().unwrap().logical_units, 3_900_702);
}

#[test]
fn config_preset_numbers_match_the_papers() {
    // Seed 000: 8 x 8 chips x 1024 blocks x 64 pages x 16 KiB = 64 GiB.
    let c = core("rcftl-dac18");
    assert_eq!(u64::from(c.geometry.total_pages()) * 16384, 64 << 30);
    let cfg = SimConfig::preset("rcftl-dac18").unwrap();
    assert_eq!(cfg.timing.t_prog_us, 640.0);
    assert_eq!(cfg.buffer.write_buffer_bytes, 10 << 20);
    // Seed 001 ch. 4: 128 GiB, 533 MT/s, tPROG 660 us.
    let c = core("rcftl-thesis");
    assert_eq!(u64::from(c.geometry.total_pages()) * 16384, 128 << 30);
    let cfg = SimConfig::preset("rcftl-thesis").unwrap();
    assert_eq!(
        (cfg.timing.channel_mts, cfg.timing.t_prog_us),
        (533.0, 660.0)
    );
    // Seed 001 ch. 3: 4 x 1 x 2 x 1822 x 576 x 8 KiB, TLC, 10% OP in MQSim's sense.
    let c = core("longftl-mqsim");
    assert_eq!(c.geometry.total_pages(), 4 * 2 * 1822 * 576);
    assert_eq!(c.geometry.pages_per_wordline, 3);
    assert_eq!(
        c.logical_units,
        (f64::from(c.geometry.total_units()) * 0.9) as u32
    );
    let cfg = SimConfig::preset("longftl-mqsim").unwrap();
    assert_eq!(
        (
            cfg.timing.t_prog_us,
            cfg.timing.t_erase_us,
            cfg.timing.channel_mts
        ),
        (700.0, 4000.0, 333.0)
    );
    // Seed 002 Table II.
    let cfg = SimConfig::preset("dgcb-flashsim").unwrap();
    assert_eq!(
        (
            cfg.timing.t_read_us,
            cfg.timing.t_prog_us,
            cfg.timing.t_erase_us
        ),
        (75.0, 1300.0, 3000.0)
    );
    assert_eq!(
        (cfg.geometry.page_bytes, cfg.geometry.spare_bytes),
        (8192, 448)
    );
    assert_eq!(cfg.timing.channel_mts, 40.0); // tRC 25 ns
                                              // Seed 004 / FEMU: 16 GiB physical, 12 GiB exposed.
    let c = core("dawid-femu");
    assert_eq!(u64::from(c.geometry.total_units()) * 4096, 16 << 30);
    assert_eq!(u64::from(c.logical_units) * 4096, 12 << 30);
}

#[test]
fn config_apply_set_parses_each_type() {
    let mut c = SimConfig::default();
    c.apply_set("geometry.channels=8").unwrap();
    assert_eq!(c.geometry.channels, 8);
    c.apply_set(" timing.t_read_us = 42.5 ").unwrap();
    assert_eq!(c.timing.t_read_us, 42.5);
    c.apply_set("timing.t_prog_us=700").unwrap(); // integer text into a float key
    assert_eq!(c.timing.t_prog_us, 700.0);
    c.apply_set("ftl.op_ratio=1e-1").unwrap();
    assert_eq!(c.ftl.op_ratio, 0.1);
    c.apply_set("nand.full_data=true").unwrap();
    assert!(c.nand.full_data);
    c.apply_set("buffer.write_buffer_bytes=8_388_608").unwrap();
    assert_eq!(c.buffer.write_buffer_bytes, 8 << 20);
    c.apply_set("sim.seed=9223372036854775807").unwrap();
    assert_eq!(c.sim.seed, i64::MAX as u64);
    c.apply_set("nand.ecc_limit=24").unwrap();
    assert_eq!(c.nand.ecc_limit, 24);
    assert_eq!(c.get("geometry.channels").as_deref(), Some("8"));
    assert_eq!(c.get("timing.t_read_us").as_deref(), Some("42.5"));
    assert_eq!(c.get("nand.full_data").as_deref(), Some("true"));
    // Strings, for keys added later: quoted or bare.
    let s = serde_json::Value::String(String::new());
    assert_eq!(
        parse_typed(&s, "\"a b\"").unwrap(),
        serde_json::json!("a b")
    );
    assert_eq!(
        parse_typed(&s, "plain").unwrap(),
        serde_json::json!("plain")
    );
}

#[test]
fn config_apply_set_errors_name_the_key() {
    let mut c = SimConfig::default();
    let before = c.clone();
    let cases = [
        (
            "geometry.chanels=4",
            "geometry.chanels",
            "did you mean geometry.channels?",
        ),
        (
            "geometry.channels=abc",
            "geometry.channels",
            "expected an integer",
        ),
        ("geometry.channels=70000", "geometry.channels", "u16"),
        ("geometry.channels=-1", "geometry.channels", "u16"),
        (
            "geometry.channels=1.5",
            "geometry.channels",
            "expected an integer",
        ),
        (
            "timing.t_read_us=fast",
            "timing.t_read_us",
            "expected a number",
        ),
        ("timing.t_read_us=nan", "timing.t_read_us", "finite"),
        ("nand.full_data=yes", "nand.full_data", "true or false"),
        ("geometry.channels", "geometry.channels", "missing `=`"),
        ("geometry=4", "geometry", "is a section"),
        ("nosuch=4", "nosuch", "unknown key"),
        (
            "ftl.page_bytes=4096",
            "ftl.page_bytes",
            "did you mean geometry.page_bytes?",
        ),
        (
            "geometry.channels.x=1",
            "geometry.channels.x",
            "unknown key",
        ),
        ("=1", "", "empty key"),
    ];
    for (input, key, reason) in cases {
        let e = c.apply_set(input).unwrap_err();
        assert_eq!(e.source, "--set", "{input}");
        assert_eq!(e.line, None, "{input}");
        assert_eq!(e.key, key, "{input}: {e}");
        assert!(e.reason.contains(reason), "{input}: {e}");
        assert_eq!(c, before, "{input} changed the config");
    }
    let e = c.apply_set("geometry.chanels=4").unwrap_err();
    assert_eq!(
        e.to_string(),
        "--set: key geometry.chanels: unknown key (did you mean geometry.channels?)"
    );
}

#[test]
fn config_get_and_set_round_trip_every_key() {
    for p in presets() {
        let cfg = SimConfig::preset(p.name).unwrap();
        for key in SimConfig::keys() {
            let v = cfg.get(&key).unwrap_or_else(|| panic!("{key}"));
            let mut again = cfg.clone();
            again.apply_set(&format!("{key}={v}")).unwrap();
            assert_eq!(again, cfg, "{}: {key}={v}", p.name);
        }
    }
    let c = SimConfig::default();
    assert_eq!(c.get("geometry"), None);
    assert_eq!(c.get("geometry.nope"), None);
    assert_eq!(c.get(""), None);
}

#[test]
fn config_toml_partial_file_keeps_defaults() {
    let text = "# comment\n[geometry]\nchannels = 8\n\n[timing]\nt_read_us = 60\n\n[nand]\nfull_data = true\n";
    let c = SimConfig::from_toml_str(text, "cfg.toml").unwrap();
    let mut expected = SimConfig::default();
    expected.geometry.channels = 8;
    expected.timing.t_read_us = 60.0;
    expected.nand.full_data = true;
    assert_eq!(c, expected);
    // Dotted keys and inline tables are TOML too.
    let c = SimConfig::from_toml_str("geometry.channels = 2\nftl = { op_ratio = 0.25 }\n", "x")
        .unwrap();
    assert_eq!((c.geometry.channels, c.ftl.op_ratio), (2, 0.25));
    assert_eq!(
        SimConfig::from_toml_str("", "empty").unwrap(),
        SimConfig::default()
    );
}

#[test]
fn config_toml_unknown_key_reports_line() {
    let text = "[geometry]\nchannels = 4\nchanels = 8\n";
    let e = SimConfig::from_toml_str(text, "cfg.toml").unwrap_err();
    assert_eq!(
        e.to_string(),
        "cfg.toml:3: key geometry.chanels: unknown key (did you mean geometry.channels?)"
    );
    assert_eq!(e.line, Some(3));

    // The first problem in file order wins.
    let text = "[timing]\nt_read_us = 50\n\n[geometry]\nbogus = 1\nchanels = 8\n";
    let e = SimConfig::from_toml_str(text, "c.toml").unwrap_err();
    assert_eq!((e.key.as_str(), e.line), ("geometry.bogus", Some(5)));

    let e = SimConfig::from_toml_str("[geometri]\nchannels = 4\n", "c.toml").unwrap_err();
    assert_eq!((e.key.as_str(), e.line), ("geometri", Some(1)));
    assert!(e.reason.contains("did you mean geometry?"), "{e}");

    let e = SimConfig::from_toml_str("a = 1\n\n[zzz]\n", "c.toml").unwrap_err();
    assert_eq!((e.key.as_str(), e.line), ("a", Some(1)));
    let e = SimConfig::from_toml_str("[ftl]\n\n[zzz]\n", "c.toml").unwrap_err();
    assert_eq!((e.key.as_str(), e.line), ("zzz", Some(3)));

    let e = SimConfig::from_toml_str("x = 1\ngeometry.chanels = 4\n", "c.toml").unwrap_err();
    assert_eq!((e.key.as_str(), e.line), ("x", Some(1)));
    let e = SimConfig::from_toml_str("\ngeometry.chanels = 4\n", "c.toml").unwrap_err();
    assert_eq!((e.key.as_str(), e.line), ("geometry.chanels", Some(2)));

    let e = SimConfig::from_toml_str("geometry = 3\n", "c.toml").unwrap_err();
    assert_eq!((e.key.as_str(), e.line), ("geometry", Some(1)));
    assert!(e.reason.contains("section"), "{e}");

    let e = SimConfig::from_toml_str("[geometry.sub]\na = 1\n", "c.toml").unwrap_err();
    assert_eq!((e.key.as_str(), e.line), ("geometry.sub", Some(1)));
}

#[test]
fn config_toml_bad_values_report_key_and_line() {
    let text = "[geometry]\nchannels = 4\n\n[timing]\nt_read_us = \"fast\"\n";
    let e = SimConfig::from_toml_str(text, "c.toml").unwrap_err();
    assert_eq!((e.key.as_str(), e.line), ("timing.t_read_us", Some(5)));
    assert!(
        e.to_string()
            .starts_with("c.toml:5: key timing.t_read_us: invalid type"),
        "{e}"
    );

    let e = SimConfig::from_toml_str("[geometry]\nchannels = 70000\n", "c.toml").unwrap_err();
    assert_eq!((e.key.as_str(), e.line), ("geometry.channels", Some(2)));

    let e = SimConfig::from_toml_str("[ftl]\nop_ratio = nan\n", "c.toml").unwrap_err();
    assert_eq!((e.key.as_str(), e.line), ("ftl.op_ratio", Some(2)));
    assert!(e.reason.contains("finite"), "{e}");

    let e = SimConfig::from_toml_str("[nand]\nfull_data = 1\n", "c.toml").unwrap_err();
    assert_eq!(e.key, "nand.full_data");

    // Syntax error: line from the parser, no key.
    let e = SimConfig::from_toml_str("[geometry]\nchannels = = 4\n", "c.toml").unwrap_err();
    assert_eq!((e.key.as_str(), e.line), ("", Some(2)));
    assert!(e.to_string().starts_with("c.toml:2: "), "{e}");
    let e = SimConfig::from_toml_str("[ftl]\nop_ratio = 0.1\nop_ratio = 0.2\n", "c").unwrap_err();
    assert_eq!(e.line, Some(3), "{e}");
}

#[test]
fn config_toml_round_trips_every_preset() {
    for p in presets() {
        let cfg = SimConfig::preset(p.name).unwrap();
        let text = cfg.to_toml_string();
        assert!(text.contains("[geometry]"), "{text}");
        let back = SimConfig::from_toml_str(&text, p.name).unwrap();
        assert_eq!(back, cfg, "{}", p.name);
        // Plain serde with deny_unknown_fields agrees.
        let direct: SimConfig = toml::from_str(&text).unwrap();
        assert_eq!(direct, cfg);
    }
}

#[test]
fn config_toml_file_loading() {
    let dir = std::env::temp_dir().join(format!("sim-harness-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("cfg.toml");
    std::fs::write(&path, "[host]\nqueue_depth = 4\n[ftl]\nbogus = 1\n").unwrap();
    let e = SimConfig::from_toml_file(&path).unwrap_err();
    assert_eq!(e.source, path.display().to_string());
    assert_eq!((e.key.as_str(), e.line), ("ftl.bogus", Some(4)));
    std::fs::write(&path, "[host]\nqueue_depth = 4\n").unwrap();
    assert_eq!(
        SimConfig::from_toml_file(&path).unwrap().host.queue_depth,
        4
    );
    let e = SimConfig::from_toml_file(dir.join("missing.toml")).unwrap_err();
    assert!(e.reason.contains("cannot read"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

fn invalid(set: &str) -> ConfigError {
    let mut c = SimConfig::default();
    c.apply_set(set).unwrap();
    let e = c.validate().unwrap_err();
    assert_eq!(e.source, "config");
    assert_eq!(c.to_core_config().unwrap_err(), e);
    e
}

#[test]
fn config_validate_names_the_key() {
    let cases = [
        ("geometry.channels=0", "geometry.channels"),
        ("geometry.dies_per_channel=0", "geometry.dies_per_channel"),
        ("geometry.planes_per_die=0", "geometry.planes_per_die"),
        ("geometry.blocks_per_plane=0", "geometry.blocks_per_plane"),
        ("geometry.pages_per_block=0", "geometry.pages_per_block"),
        ("geometry.page_bytes=0", "geometry.page_bytes"),
        (
            "geometry.pages_per_wordline=0",
            "geometry.pages_per_wordline",
        ),
        (
            "geometry.pages_per_wordline=5",
            "geometry.pages_per_wordline",
        ),
        ("geometry.pages_per_wordline=3", "geometry.pages_per_block"),
        ("geometry.page_bytes=6000", "geometry.page_bytes"),
        ("geometry.page_bytes=65536", "geometry.page_bytes"),
        ("geometry.blocks_per_plane=4", "ftl.gc_trigger_blocks"),
        ("geometry.blocks_per_plane=600000", "geometry"),
        ("ftl.mapping_unit_bytes=0", "ftl.mapping_unit_bytes"),
        ("ftl.mapping_unit_bytes=1000", "ftl.mapping_unit_bytes"),
        ("ftl.op_ratio=0", "ftl.op_ratio"),
        ("ftl.op_ratio=-0.5", "ftl.op_ratio"),
        ("ftl.gc_reserve_blocks=0", "ftl.gc_reserve_blocks"),
        ("ftl.gc_trigger_blocks=1", "ftl.gc_trigger_blocks"),
        ("ftl.wl_check_interval=0", "ftl.wl_check_interval"),
        ("ftl.max_inflight=3", "ftl.max_inflight"),
        ("ftl.read_slots=0", "ftl.read_slots"),
        ("ftl.gc_slots_per_plane=3", "ftl.gc_slots_per_plane"),
        (
            "buffer.write_buffer_bytes=8192",
            "buffer.write_buffer_bytes",
        ),
        (
            "buffer.write_buffer_bytes=1073741824",
            "buffer.write_buffer_bytes",
        ),
        ("timing.t_read_us=0", "timing.t_read_us"),
        ("timing.t_prog_us=-1", "timing.t_prog_us"),
        ("timing.t_erase_us=0", "timing.t_erase_us"),
        ("timing.channel_mts=0", "timing.channel_mts"),
        ("timing.dram_mib_s=0", "timing.dram_mib_s"),
        ("timing.host_mib_s=-3", "timing.host_mib_s"),
        ("timing.t_cmd_ns=-1", "timing.t_cmd_ns"),
        ("host.queue_depth=0", "host.queue_depth"),
        ("nand.rated_pe=0", "nand.rated_pe"),
        ("nand.retention_months=-1", "nand.retention_months"),
        ("nand.factory_bad_ratio=1.5", "nand.factory_bad_ratio"),
        ("nand.program_fail_prob=-0.1", "nand.program_fail_prob"),
        ("nand.erase_fail_prob=2", "nand.erase_fail_prob"),
        ("nand.seed=18446744073709551615", "nand.seed"),
        ("sim.seed=9223372036854775808", "sim.seed"),
    ];
    for (set, key) in cases {
        let e = invalid(set);
        assert_eq!(e.key, key, "{set}: {e}");
        assert!(
            e.to_string().starts_with(&format!("config: key {key}: ")),
            "{e}"
        );
    }
    // Non-finite values set in code are caught too.
    let mut c = SimConfig::default();
    c.timing.t_erase_us = f64::INFINITY;
    assert_eq!(c.validate().unwrap_err().key, "timing.t_erase_us");
    let mut c = SimConfig::default();
    c.nand.erase_fail_prob = f64::NAN;
    assert_eq!(c.validate().unwrap_err().key, "nand.erase_fail_prob");
}

#[test]
fn config_op_ratio_below_gc_reserve_is_rejected() {
    // Default: 1,048,576 units; reserve max(3 + 1, 2 + 3 open) = 5 blocks x 16
    // planes x 256 units = 20,480, so op_ratio must exceed
    // 1048576 / 1028096 - 1 = 0.019920.
    let e = invalid("ftl.op_ratio=0.01");
    assert_eq!(e.key, "ftl.op_ratio");
    assert!(e.reason.contains("over-provisioning"), "{e}");
    assert!(e.reason.contains("0.019920"), "{e}");
    assert!(e.reason.contains("5 blocks per plane"), "{e}");
    let mut c = SimConfig::default();
    c.apply_set("ftl.op_ratio=0.0195").unwrap();
    assert_eq!(c.validate().unwrap_err().key, "ftl.op_ratio");
    c.apply_set("ftl.op_ratio=0.0205").unwrap();
    c.validate().unwrap();
    // A larger GC trigger needs more over-provisioning.
    c.apply_set("ftl.gc_trigger_blocks=20").unwrap();
    assert_eq!(c.validate().unwrap_err().key, "ftl.op_ratio");
}

#[test]
fn config_core_messages_map_to_keys() {
    assert_eq!(
        core_message_key("over-provisioning below the gc reserve (logical + reserve > physical)"),
        "ftl.op_ratio"
    );
    assert_eq!(core_message_key("logical capacity is zero"), "ftl.op_ratio");
    assert_eq!(
        core_message_key("gc trigger below gc reserve"),
        "ftl.gc_trigger_blocks"
    );
    assert_eq!(
        core_message_key("too many buffer slots (limit 65535)"),
        "buffer.write_buffer_bytes"
    );
    assert_eq!(
        core_message_key("gc reserve must be at least one block"),
        "ftl.gc_reserve_blocks"
    );
    assert_eq!(
        core_message_key("too few blocks per plane for the gc thresholds"),
        "ftl.gc_trigger_blocks"
    );
    assert_eq!(
        core_message_key("write buffer smaller than one page"),
        "buffer.write_buffer_bytes"
    );
    assert_eq!(
        core_message_key("gc slots per plane smaller than one page"),
        "ftl.gc_slots_per_plane"
    );
    assert_eq!(
        core_message_key("read slots or in-flight operations too few"),
        "ftl.read_slots"
    );
    assert_eq!(
        core_message_key("units per page out of range"),
        "geometry.page_bytes"
    );
    assert_eq!(
        core_message_key("pages per block not a multiple of pages per wordline"),
        "geometry.pages_per_block"
    );
    assert_eq!(core_message_key("geometry dimension is zero"), "geometry");
}

/// Every unknown key is reported, the first few by name and the rest
/// counted, in time linear in the file: 40,000 unknown keys (in one
/// section, and as sections of their own) take a fraction of a second in a
/// release build (the quadratic search of each key's line took minutes).
#[test]
fn config_many_unknown_keys_are_summarised_in_linear_time() {
    let n = 40_000;
    let mut keys = String::from("[geometry]\nchannels = 4\n");
    for i in 0..n {
        keys.push_str(&format!("k{i} = 1\n"));
    }
    let mut sections = String::new();
    for i in 0..n {
        sections.push_str(&format!("[s{i}]\nk = 1\n"));
    }
    for (text, first, second) in [
        (&keys, "geometry.k0", "geometry.k1 (line 4)"),
        (&sections, "s0", "s1 (line 3)"),
    ] {
        let t0 = std::time::Instant::now();
        let e = SimConfig::from_toml_str(text, "many.toml").unwrap_err();
        let secs = t0.elapsed().as_secs_f64();
        assert_eq!(e.key, first, "{e}");
        assert!(e.reason.starts_with("unknown key"), "{e}");
        assert!(
            e.reason
                .contains(&format!("{n} unknown keys in all: {first}")),
            "{e}"
        );
        assert!(e.reason.contains(second), "{e}");
        assert!(e.reason.ends_with(&format!(" and {} more", n - 5)), "{e}");
        assert!(e.to_string().len() < 400, "{e}");
        // Generous for a debug build; the quadratic search took minutes.
        assert!(secs < 30.0, "{secs} s");
    }
    // A value error first in the file still names the unknown keys after it.
    let e =
        SimConfig::from_toml_str("[geometry]\nchannels = -1\nbogus = 1\n", "c.toml").unwrap_err();
    assert_eq!((e.key.as_str(), e.line), ("geometry.channels", Some(2)));
    assert!(
        e.reason
            .ends_with("; 1 unknown keys in all: geometry.bogus (line 3)"),
        "{e}"
    );
}

/// A huge value, key or section name is cut in the message, not echoed.
#[test]
fn config_errors_cut_long_values() {
    let big = "x".repeat(5 << 20);
    for text in [
        format!("[erase]\nmode = \"{big}\"\n"),
        format!("[geometry]\n{big} = 1\n"),
        format!("[{big}]\nk = 1\n"),
        format!("[geometry]\nchannels = \"{big}\"\n"),
    ] {
        let e = SimConfig::from_toml_str(&text, "big.toml").unwrap_err();
        let m = e.to_string();
        assert!(
            m.len() < 600,
            "{} bytes: {}",
            m.len(),
            &m[..600.min(m.len())]
        );
        assert!(m.contains("…(") && m.contains(" bytes)"), "{m}");
    }
    let mut cfg = SimConfig::default();
    let e = cfg
        .apply_set(&format!("erase.mode={}", &big[..200_000]))
        .unwrap_err();
    assert!(e.to_string().contains("…(200000 bytes)"), "{e}");
    assert!(e.to_string().len() < 600, "{e}");
}

#[test]
fn config_error_display() {
    let e = ConfigError {
        source: "cfg.toml".into(),
        line: Some(3),
        key: "geometry.chanels".into(),
        reason: "unknown key".into(),
    };
    assert_eq!(
        e.to_string(),
        "cfg.toml:3: key geometry.chanels: unknown key"
    );
    let e = ConfigError { line: None, ..e };
    assert_eq!(e.to_string(), "cfg.toml: key geometry.chanels: unknown key");
    let e = ConfigError {
        key: String::new(),
        ..e
    };
    assert_eq!(e.to_string(), "cfg.toml: unknown key");
    let _: &dyn std::error::Error = &e;
}

#[test]
fn config_suggestions() {
    assert_eq!(edit_distance("kitten", "sitting"), 3);
    assert_eq!(suggest("chanels", ["channels", "planes"]), Some("channels"));
    assert_eq!(suggest("zzzzzzzz", ["channels"]), None);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn config_arbitrary_text_never_panics(text in any::<String>()) {
        let _ = SimConfig::from_toml_str(&text, "fuzz");
        let mut c = SimConfig::default();
        let before = c.clone();
        if c.apply_set(&text).is_err() {
            prop_assert_eq!(c, before);
        }
    }

    #[test]
    fn config_toml_like_text_never_panics(
        section in prop::sample::select(vec!["geometry", "timing", "ftl", "buffer", "host", "nand", "sim", "x"]),
        key in "[a-z_]{0,20}",
        value in prop::sample::select(vec!["1", "-1", "0", "1.5", "nan", "inf", "true", "\"s\"", "[1, 2]", "{ a = 1 }", "1979-05-27", "99999999999999999999", "= ="]),
        prefix in "[ -~\n]{0,40}",
    ) {
        let text = format!("{prefix}\n[{section}]\n{key} = {value}\n");
        let _ = SimConfig::from_toml_str(&text, "fuzz");
        let dotted = format!("{section}.{key} = {value}\n");
        if let Err(e) = SimConfig::from_toml_str(&dotted, "fuzz") {
            prop_assert!(e.line.is_none() || e.line == Some(1), "{}", e);
        }
        let mut c = SimConfig::default();
        let _ = c.apply_set(&format!("{section}.{key}={value}"));
        let _ = c.validate();
    }

    #[test]
    fn config_set_any_key_never_panics(
        idx in 0usize..64,
        value in any::<String>(),
    ) {
        let keys = SimConfig::keys();
        let key = &keys[idx % keys.len()];
        let mut c = SimConfig::default();
        match c.apply_set(&format!("{key}={value}")) {
            Ok(()) => { let _ = c.validate(); let _ = c.to_toml_string(); }
            Err(e) => prop_assert_eq!(&e.key, key),
        }
    }
}

#[test]
fn calibrated_presets_and_classifier() {
    let c = SimConfig::preset("rcftl-thesis").unwrap();
    let rel = c.reliability().unwrap();
    assert_eq!(rel.ecc_limit, 120);
    assert_eq!(rel.rated_pe, 5000);
    assert_eq!(rel.retention_months, 12.0);
    let k = c.ber_classifier().unwrap();
    // Four steps per column of Table 6, each column ending where the table's does.
    let steps = firmware_core::tech::rcftl::ctt::CLASSIFIER_STEPS;
    for (i, end) in firmware_core::tech::rcftl::ctt::RCPB_PE_UPPER
        .iter()
        .enumerate()
    {
        assert_eq!(k.pe_upper[(i + 1) * steps / 6 - 1], *end);
    }
    for b in 0..steps {
        assert!(k.best_max[b] < k.median_max[b]);
        if b > 0 {
            assert!(k.pe_upper[b] > k.pe_upper[b - 1]);
        }
    }
    let d = SimConfig::preset("rcftl-dac18").unwrap();
    assert_eq!(d.reliability().unwrap().base_errors, 4.33);
    let mut bad = SimConfig::default();
    bad.nand.model = "nope".to_string();
    assert_eq!(bad.validate().unwrap_err().key, "nand.model");
}

#[test]
fn placement_keys_are_checked_and_reach_the_core() {
    let mut c = SimConfig::default();
    c.apply_set("host.interface=fdp").unwrap();
    c.apply_set("fdp.handles=3").unwrap();
    assert_eq!(c.to_core_config().unwrap().placement.handles, 3);
    c.apply_set("fdp.handles=0").unwrap();
    assert_eq!(c.validate().unwrap_err().key, "fdp.handles");
    c.apply_set("fdp.handles=2").unwrap();
    c.apply_set("fdp.reclaim_unit_bytes=4096").unwrap();
    assert_eq!(c.validate().unwrap_err().key, "fdp.reclaim_unit_bytes");
    let mut z = SimConfig::default();
    z.apply_set("host.interface=zns").unwrap();
    z.apply_set("zns.max_open=4").unwrap();
    z.apply_set("zns.max_active=6").unwrap();
    assert_eq!(z.to_core_config().unwrap().placement.handles, 6);
    let g = z.zone_geometry().unwrap();
    assert_eq!(u64::from(g.size) * 4096, z.block_group_bytes());
    z.apply_set("zns.max_open=7").unwrap();
    assert_eq!(z.validate().unwrap_err().key, "zns.max_open");
    assert_eq!(
        SimConfig::default()
            .to_core_config()
            .unwrap()
            .placement
            .handles,
        0
    );
}

#[test]
fn config_preset_descriptions_state_the_mapping_persistence_they_use() {
    for p in presets() {
        let c = SimConfig::preset(p.name).unwrap();
        let d = p.description;
        let n = c.ftl.map_entries_per_page;
        if n > 0 {
            assert!(
                d.contains(&format!("L2P persisted in {n}-entry translation pages")),
                "{}: {d}",
                p.name
            );
        } else {
            assert!(d.contains("L2P in DRAM only"), "{}: {d}", p.name);
            assert!(d.contains("not power-safe"), "{}: {d}", p.name);
        }
        let start = c.buffer.flush_start_ratio;
        if start == 0.5 {
            assert!(d.contains("flush from half the buffer"), "{}: {d}", p.name);
        } else {
            assert_eq!(start, 0.0, "{}", p.name);
            if n > 0 {
                assert!(
                    d.contains("each full page flushed at once"),
                    "{}: {d}",
                    p.name
                );
            }
        }
    }
    // Power-safe by default.
    assert!(SimConfig::default().ftl.map_entries_per_page > 0);
}

#[test]
fn config_channel_gc_destination_needs_a_conventional_off_chip_drive() {
    let mut c = SimConfig::default();
    c.apply_set("gc.destination=channel").unwrap();
    c.apply_set("copyback.mode=off-chip").unwrap();
    c.validate().unwrap();
    for (set, why) in [
        ("host.interface=fdp", "host.interface"),
        ("host.interface=zns", "host.interface"),
    ] {
        let mut d = c.clone();
        d.apply_set(set).unwrap();
        let e = d.validate().unwrap_err().to_string();
        assert!(
            e.contains("gc.destination") && e.contains(why),
            "{set}: {e}"
        );
    }
}
