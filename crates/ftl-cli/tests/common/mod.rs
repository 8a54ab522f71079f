//! Running the `ftl` binary and reading its JSON report, for the CLI tests.
#![allow(dead_code)]

use std::process::{Command, Output};

use serde_json::Value;

/// Runs `ftl` with `args`.
pub fn ftl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ftl"))
        .args(args)
        .output()
        .expect("run ftl")
}

/// The one JSON object `ftl` printed on stdout (the run must have succeeded).
pub fn json_of(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "ftl failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout.clone()).expect("utf8");
    assert_eq!(
        text.trim().lines().count(),
        1,
        "exactly one JSON object on stdout"
    );
    serde_json::from_str(text.trim()).expect("stdout is JSON")
}

/// The value at a dotted key of a report.
pub fn get<'a>(v: &'a Value, path: &str) -> &'a Value {
    path.split('.').fold(v, |cur, k| {
        cur.get(k).unwrap_or_else(|| panic!("missing key {path}"))
    })
}
