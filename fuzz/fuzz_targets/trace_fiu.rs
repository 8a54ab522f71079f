//! The `fiu` trace parser, with every replay option: never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sim_harness::trace::TraceFormat;

fuzz_target!(|data: &[u8]| ftl_fuzz::parse_trace(Some(TraceFormat::Fiu), data));
