//! The project's own trace format, `ftl`: the only one that can carry a
//! copy command (seed 003's copyless copy).
//!
//! One request per line, whitespace-separated:
//!
//! ```text
//! time_ns op offset_bytes len_bytes [src_offset_bytes]
//! ```
//!
//! `time_ns` is an integer time in nanoseconds; `op` is `R` (read), `W`
//! (write), `T` (trim) or `C` (copy), any case; offsets and lengths are
//! bytes. A copy has a fifth field, the source offset: it copies
//! `len_bytes` from `src_offset_bytes` to `offset_bytes`, and the two
//! ranges must not overlap. The other ops have exactly four fields. The
//! device number is always 0. Offsets should be multiples of the mapping
//! unit: replay maps a request to the units it touches, and a copy to as
//! many units from the unit holding its source offset.
//!
//! Example (a 4 KiB write, then a copy of it 1 MiB further):
//!
//! ```text
//! # ftl trace
//! 0 W 0 4096
//! 1000 C 1048576 4096 0
//! ```

use super::num::{parse_u64, quote};
use super::{FieldError, Parsed, TraceOp, TraceRequest};

/// Field names, in column order, as used in error messages.
pub(super) const FIELDS: [&str; 5] = ["time", "op", "offset", "len", "src"];

/// Parses one non-blank, non-comment line.
pub(super) fn parse_line(line: &str) -> Result<Parsed<'_>, FieldError> {
    let mut toks = [""; 5];
    let mut n = 0usize;
    for t in line.split_ascii_whitespace() {
        if n == toks.len() {
            return Err(FieldError::new(
                "line",
                format!("unexpected sixth field {} (at most 5 fields)", quote(t)),
            ));
        }
        toks[n] = t;
        n += 1;
    }
    if n < 4 {
        return Err(FieldError::new(
            FIELDS[n],
            format!("missing field {} (`time op offset len [src]`)", n + 1),
        ));
    }
    let time_ns = parse_u64(toks[0]).map_err(|r| FieldError::new("time", r))?;
    let offset = parse_u64(toks[2]).map_err(|r| FieldError::new("offset", r))?;
    let len = parse_u64(toks[3]).map_err(|r| FieldError::new("len", r))?;
    let op = match toks[1] {
        "R" | "r" => TraceOp::Read,
        "W" | "w" => TraceOp::Write,
        "T" | "t" => TraceOp::Trim,
        "C" | "c" => {
            if n < 5 {
                return Err(FieldError::new(
                    "src",
                    "missing field 5: a copy needs its source offset",
                ));
            }
            let src = parse_u64(toks[4]).map_err(|r| FieldError::new("src", r))?;
            if src.checked_add(len).is_none() {
                return Err(FieldError::new(
                    "src",
                    "source offset + length overflows 64-bit bytes",
                ));
            }
            if src != offset && src < offset.saturating_add(len) && offset < src + len {
                return Err(FieldError::new(
                    "src",
                    format!("source [{src}, {}) overlaps the destination", src + len),
                ));
            }
            TraceOp::Copy { src_bytes: src }
        }
        other => {
            return Err(FieldError::new(
                "op",
                format!("unknown op {} (expected R, W, T or C)", quote(other)),
            ))
        }
    };
    if n == 5 && !matches!(op, TraceOp::Copy { .. }) {
        return Err(FieldError::new("src", "only a copy (C) has a fifth field"));
    }
    TraceRequest::checked(time_ns, op, offset, len, 0, ["offset", "len"]).map(Parsed::Request)
}

/// Whether a line looks like this format (for detection): 4 or 5 tokens,
/// integers around an op letter.
pub(super) fn looks_like(t: &str) -> bool {
    let toks: Vec<&str> = t.split_ascii_whitespace().take(6).collect();
    let int = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match toks.as_slice() {
        [a, op, b, c] => {
            int(a) && int(b) && int(c) && matches!(*op, "R" | "r" | "W" | "w" | "T" | "t")
        }
        [a, op, b, c, d] => int(a) && int(b) && int(c) && int(d) && matches!(*op, "C" | "c"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{parse_bytes, CapacityPolicy, TraceFormat, TraceOp, TraceOptions};

    const BIG: u64 = 1 << 40;

    fn parse(text: &str, cap: u64, policy: CapacityPolicy) -> Result<super::super::Trace, String> {
        let opts = TraceOptions {
            capacity_policy: policy,
            ..TraceOptions::default()
        };
        parse_bytes("t.ftl", text.as_bytes(), &opts, cap).map_err(|e| e.to_string())
    }

    #[test]
    fn reads_every_op_and_is_detected() {
        let t = parse(
            "# ftl trace\n0 W 0 8192\n10 r 4096 4096\n20 T 8192 4096\n30 C 1048576 8192 0\n",
            BIG,
            CapacityPolicy::Reject,
        )
        .unwrap();
        assert_eq!(t.stats.format, TraceFormat::Ftl);
        let ops: Vec<TraceOp> = t.requests.iter().map(|r| r.op).collect();
        assert_eq!(
            ops,
            vec![
                TraceOp::Write,
                TraceOp::Read,
                TraceOp::Trim,
                TraceOp::Copy { src_bytes: 0 }
            ]
        );
        assert_eq!(t.requests[3].offset_bytes, 1_048_576);
        assert_eq!(t.requests[3].len_bytes, 8192);
        assert_eq!((t.stats.copies, t.stats.copy_bytes), (1, 8192));
        assert_eq!(t.requests[1].time_ns, 10);
    }

    #[test]
    fn malformed_lines_name_their_field() {
        let field = |text: &str| {
            let e = parse_bytes(
                "t.ftl",
                text.as_bytes(),
                &TraceOptions {
                    format: Some(TraceFormat::Ftl),
                    ..TraceOptions::default()
                },
                BIG,
            )
            .unwrap_err();
            (e.line, e.field)
        };
        assert_eq!(field("0 C 0 4096\n"), (1, "src".to_string()));
        assert_eq!(field("0 W 0 4096 8192\n"), (1, "src".to_string()));
        assert_eq!(
            field("0 C 0 8192 4096\n"),
            (1, "src".to_string()),
            "overlap"
        );
        assert_eq!(field("0 X 0 4096\n"), (1, "op".to_string()));
        assert_eq!(field("0 W 0 0\n"), (1, "len".to_string()));
        assert_eq!(field("0 W 0\n"), (1, "len".to_string()));
        assert_eq!(field("0 C 0 4096 1 2\n"), (1, "line".to_string()));
    }

    #[test]
    fn capacity_policies_move_copy_sources_too() {
        // Reject: a source beyond the capacity is refused.
        assert!(parse("0 C 0 4096 65536\n", 32768, CapacityPolicy::Reject).is_err());
        // Scale: the source scales with the destination.
        let t = parse(
            "0 W 0 4096\n1 C 0 4096 61440\n",
            32768,
            CapacityPolicy::Scale,
        )
        .unwrap();
        match t.requests[1].op {
            TraceOp::Copy { src_bytes } => assert!(src_bytes + 4096 <= 32768 && src_bytes > 0),
            op => panic!("{op:?}"),
        }
        // Wrap: both ranges fold; one that crosses the end is split there.
        let t = parse("0 C 40960 4096 36864\n", 32768, CapacityPolicy::Wrap).unwrap();
        assert_eq!(t.requests[0].offset_bytes, 8192);
        assert_eq!(t.requests[0].op, TraceOp::Copy { src_bytes: 4096 });
        let t = parse("0 C 30720 4096 0\n", 32768, CapacityPolicy::Wrap).unwrap();
        let pieces: Vec<(u64, u64, TraceOp)> = t
            .requests
            .iter()
            .map(|r| (r.offset_bytes, r.len_bytes, r.op))
            .collect();
        assert_eq!(
            pieces,
            vec![
                (30720, 2048, TraceOp::Copy { src_bytes: 0 }),
                (0, 2048, TraceOp::Copy { src_bytes: 2048 })
            ]
        );
        assert_eq!((t.stats.split, t.stats.requests), (1, 2));
        // A source crossing the end splits too: three pieces here.
        let t = parse("0 C 1024 8192 28672\n", 32768, CapacityPolicy::Wrap).unwrap();
        let lens: Vec<u64> = t.requests.iter().map(|r| r.len_bytes).collect();
        assert_eq!(lens, vec![4096, 4096]);
        let t = parse("0 C 28672 8192 63488\n", 32768, CapacityPolicy::Wrap).unwrap();
        let lens: Vec<u64> = t.requests.iter().map(|r| r.len_bytes).collect();
        assert_eq!(lens, vec![2048, 2048, 4096]);
        assert_eq!(t.stats.split, 2);
    }
}
