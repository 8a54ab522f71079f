//! Running the `ftl` binary and reading its JSON report, for the CLI tests.
#![allow(dead_code)]

pub mod nbd;

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

/// Runs `ftl` with `args` under `ulimit -v 1 GiB`: a command that allocated
/// a large configuration before validating it would abort instead of
/// exiting with status 2.
pub fn ftl_limited(args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 1048576; exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_ftl"))
        .args(args)
        .output()
        .expect("run ftl under ulimit")
}

/// Asserts that `out` is an input error (status 2, nothing on stdout)
/// whose message contains every needle.
pub fn assert_rejected(out: &Output, needles: &[&str]) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert!(
        out.stdout.is_empty(),
        "no report: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(!err.contains("panicked"), "{err}");
    for n in needles {
        assert!(err.contains(n), "`{n}` missing from: {err}");
    }
}
