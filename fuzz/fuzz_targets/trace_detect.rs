//! Format detection (`--format auto`), on raw lines and through the loader:
//! never panics, and a detected format is one the loader then uses.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sim_harness::trace::TraceFormat;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = TraceFormat::detect(text.lines().take(64));
    ftl_fuzz::parse_trace(None, data);
});
