//! Tests of the trace parsers: the real traces in `shared/traces`, small
//! hand-built files per format, the policies, and property tests.

mod edges;
mod formats;
mod policies;
mod props;
mod real_files;
mod samples;

use super::*;

/// A capacity large enough for every test trace (1 PiB).
const BIG: u64 = 1 << 50;

/// Options for a fixed format, with time rebasing off so raw times show.
fn raw_opts(format: TraceFormat) -> TraceOptions {
    TraceOptions {
        format: Some(format),
        rebase_time: false,
        ..TraceOptions::default()
    }
}

/// Parses `text` as `format` with [`raw_opts`] and a huge capacity.
fn parse(format: TraceFormat, text: &str) -> Result<Trace, TraceError> {
    parse_bytes("t.trace", text.as_bytes(), &raw_opts(format), BIG)
}

/// Parses with options.
fn parse_with(text: &str, opts: &TraceOptions, cap: u64) -> Result<Trace, TraceError> {
    parse_bytes("t.trace", text.as_bytes(), opts, cap)
}

/// Asserts that parsing fails at `line` in `field`, and returns the error.
#[track_caller]
fn expect_err(format: TraceFormat, text: &str, line: u64, field: &str) -> TraceError {
    match parse(format, text) {
        Ok(t) => panic!(
            "expected an error at line {line} field {field}, parsed {:?}",
            t.stats
        ),
        Err(e) => {
            assert_eq!(
                (e.line, e.field.as_str()),
                (line, field),
                "wrong location in error: {e}"
            );
            assert!(e
                .to_string()
                .starts_with(&format!("t.trace:{line}: field {field}: ")));
            e
        }
    }
}
