//! The project's own trace format, `ftl`: the only one that can carry a
//! copy command (seed 003's copyless copy), placement identifiers (NVMe
//! FDP) and zone commands (NVMe ZNS).
//!
//! One request per line, whitespace-separated:
//!
//! ```text
//! time_ns op offset_bytes [len_bytes [src_offset_bytes | placement]]
//! ```
//!
//! `time_ns` is an integer time in nanoseconds; offsets and lengths are
//! bytes; `op` is one of (any case):
//!
//! | op | command | fields |
//! |---|---|---|
//! | `R` | read | `time R offset len` |
//! | `W` | write; under `host.interface = zns` a zone write, at the zone's write pointer | `time W offset len [placement]` |
//! | `T` | trim (discard) | `time T offset len` |
//! | `C` | copy `len` bytes from `src` to `offset` (ranges must not overlap) | `time C offset len src` |
//! | `A` | zone append to the zone starting at `offset` | `time A offset len` |
//! | `ZO`, `ZC`, `ZF`, `ZR` | Zone Send open, close, finish, reset of the zone starting at `offset` | `time ZR offset` |
//!
//! A write's optional fifth field is an FDP placement identifier
//! (0..=255; the drive's `fdp.handles` bound it at replay). The device
//! number is always 0. Offsets should be multiples of the mapping unit:
//! replay maps a request to the units it touches, and a copy to as many
//! units from the unit holding its source offset.
//!
//! Example (a 4 KiB write, then a copy of it 1 MiB further, a write on
//! placement identifier 2, an append to the zone at 16 MiB and its reset):
//!
//! ```text
//! # ftl trace
//! 0 W 0 4096
//! 1000 C 1048576 4096 0
//! 2000 W 8192 4096 2
//! 3000 A 16777216 8192
//! 4000 ZR 16777216
//! ```

use super::num::{parse_u64, quote};
use super::{FieldError, Parsed, TraceOp, TraceRequest, ZoneSend};

/// Field names, in column order, as used in error messages.
pub(super) const FIELDS: [&str; 5] = ["time", "op", "offset", "len", "src"];

/// Every op code, as the error for an unknown one lists them.
const OPS: &str = "R, W, T, C, A, ZO, ZC, ZF or ZR";

/// The Zone Send action of a `Z?` op code.
fn zone_send(op: &str) -> Option<ZoneSend> {
    match op.to_ascii_uppercase().as_str() {
        "ZO" => Some(ZoneSend::Open),
        "ZC" => Some(ZoneSend::Close),
        "ZF" => Some(ZoneSend::Finish),
        "ZR" => Some(ZoneSend::Reset),
        _ => None,
    }
}

/// The op code of a Zone Send action.
fn zone_code(a: ZoneSend) -> &'static str {
    match a {
        ZoneSend::Open => "ZO",
        ZoneSend::Close => "ZC",
        ZoneSend::Finish => "ZF",
        ZoneSend::Reset => "ZR",
    }
}

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
    if let Some(action) = (n >= 2).then(|| zone_send(toks[1])).flatten() {
        if n < 3 {
            return Err(FieldError::new(
                "offset",
                "missing field 3 (`time Z? offset`)",
            ));
        }
        if n > 3 {
            return Err(FieldError::new(
                "len",
                format!(
                    "a zone send ({}) has no length: `time {} offset`",
                    toks[1], toks[1]
                ),
            ));
        }
        let time_ns = parse_u64(toks[0]).map_err(|r| FieldError::new("time", r))?;
        let offset = parse_u64(toks[2]).map_err(|r| FieldError::new("offset", r))?;
        return TraceRequest::checked(
            time_ns,
            TraceOp::Zone(action),
            offset,
            1,
            0,
            ["offset", "len"],
        )
        .map(Parsed::Request);
    }
    let known = ["R", "W", "T", "C", "A"];
    if n >= 2 && !known.iter().any(|k| k.eq_ignore_ascii_case(toks[1])) {
        return Err(FieldError::new(
            "op",
            format!("unknown op {} (expected {OPS})", quote(toks[1])),
        ));
    }
    if n < 4 {
        return Err(FieldError::new(
            FIELDS[n],
            format!(
                "missing field {} (`time op offset len [src | placement]`)",
                n + 1
            ),
        ));
    }
    let time_ns = parse_u64(toks[0]).map_err(|r| FieldError::new("time", r))?;
    let offset = parse_u64(toks[2]).map_err(|r| FieldError::new("offset", r))?;
    let len = parse_u64(toks[3]).map_err(|r| FieldError::new("len", r))?;
    let op = match toks[1] {
        "R" | "r" => TraceOp::Read,
        "W" | "w" if n == 5 => {
            let pid = parse_u64(toks[4]).map_err(|r| FieldError::new("placement", r))?;
            let pid = u8::try_from(pid).map_err(|_| {
                FieldError::new(
                    "placement",
                    format!("placement identifier {pid} is beyond 255"),
                )
            })?;
            TraceOp::PlacedWrite { pid }
        }
        "W" | "w" => TraceOp::Write,
        "T" | "t" => TraceOp::Trim,
        "A" | "a" => TraceOp::Append,
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
            if super::ranges_overlap(src, offset, len) {
                let what = if src == offset {
                    "is the destination itself (a copy onto itself)"
                } else {
                    "overlaps the destination"
                };
                return Err(FieldError::new(
                    "src",
                    format!(
                        "source [{src}, {}) {what}; a copy's ranges must not overlap",
                        src + len
                    ),
                ));
            }
            TraceOp::Copy { src_bytes: src }
        }
        other => {
            return Err(FieldError::new(
                "op",
                format!("unknown op {} (expected {OPS})", quote(other)),
            ))
        }
    };
    if n == 5 && !matches!(op, TraceOp::Copy { .. } | TraceOp::PlacedWrite { .. }) {
        return Err(FieldError::new(
            "src",
            "only a copy (C, source offset) or a write (W, placement identifier) has a fifth field",
        ));
    }
    TraceRequest::checked(time_ns, op, offset, len, 0, ["offset", "len"]).map(Parsed::Request)
}

/// Writes `r` as one line of this format (without a newline); what
/// [`parse_line`] reads back as `r` (device 0).
pub fn format_line(r: &TraceRequest) -> String {
    let (t, o, l) = (r.time_ns, r.offset_bytes, r.len_bytes);
    match r.op {
        TraceOp::Read => format!("{t} R {o} {l}"),
        TraceOp::Write => format!("{t} W {o} {l}"),
        TraceOp::PlacedWrite { pid } => format!("{t} W {o} {l} {pid}"),
        TraceOp::Trim => format!("{t} T {o} {l}"),
        TraceOp::Copy { src_bytes } => format!("{t} C {o} {l} {src_bytes}"),
        TraceOp::Append => format!("{t} A {o} {l}"),
        TraceOp::Zone(a) => format!("{t} {} {o}", zone_code(a)),
    }
}

/// Whether a line looks like this format (for detection): 3 to 5 tokens,
/// integers around an op code.
pub(super) fn looks_like(t: &str) -> bool {
    let toks: Vec<&str> = t.split_ascii_whitespace().take(6).collect();
    let int = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match toks.as_slice() {
        [a, op, b] => int(a) && int(b) && zone_send(op).is_some(),
        [a, op, b, c] => {
            int(a)
                && int(b)
                && int(c)
                && matches!(*op, "R" | "r" | "W" | "w" | "T" | "t" | "A" | "a")
        }
        [a, op, b, c, d] => {
            int(a) && int(b) && int(c) && int(d) && matches!(*op, "C" | "c" | "W" | "w")
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{
        parse_bytes, CapacityPolicy, TraceFormat, TraceOp, TraceOptions, TraceRequest, ZoneSend,
    };
    use super::format_line;

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
        assert_eq!(field("0 W 0 4096 8192\n"), (1, "placement".to_string()));
        assert_eq!(field("0 R 0 4096 1\n"), (1, "src".to_string()));
        assert_eq!(
            field("0 C 0 8192 4096\n"),
            (1, "src".to_string()),
            "overlap"
        );
        assert_eq!(
            field("0 C 4096 4096 4096\n"),
            (1, "src".to_string()),
            "a copy onto itself"
        );
        assert_eq!(
            field("0 C 4096 8192 0\n"),
            (1, "src".to_string()),
            "source below the destination"
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
        // Both ranges crossing the end share its last byte once folded: the
        // copy would overlap itself, which no copy may.
        let e = parse("0 C 28672 8192 63488\n", 32768, CapacityPolicy::Wrap).unwrap_err();
        assert!(e.starts_with("t.ftl:1: field src: "), "{e}");
        assert!(e.contains("overlapping its destination"), "{e}");
        // So may scaling, which maps nearby ranges onto the same place.
        let e = parse(
            "0 W 0 4096\n1 C 8388608 4096 8392704\n",
            32768,
            CapacityPolicy::Scale,
        )
        .unwrap_err();
        assert!(e.starts_with("t.ftl:2: field src: "), "{e}");
    }

    /// Parses `text` as an `ftl` trace (format given, not detected).
    fn parse_ftl(text: &str) -> Result<super::super::Trace, super::super::TraceError> {
        let opts = TraceOptions {
            format: Some(TraceFormat::Ftl),
            ..TraceOptions::default()
        };
        parse_bytes("z.trace", text.as_bytes(), &opts, BIG)
    }

    /// One op code: `line` parses into `op` at offset 1 MiB, writes back as
    /// the same line and parses again into the same request, and is
    /// detected as this format; `bad` is refused naming file, line 2,
    /// `field` and a reason.
    fn op_code(line: &str, op: TraceOp, len: u64, bad: &str, field: &str) {
        let t = parse(&format!("# ftl\n{line}\n"), BIG, CapacityPolicy::Reject).unwrap();
        assert_eq!(t.stats.format, TraceFormat::Ftl, "{line}");
        let want = TraceRequest {
            time_ns: 0,
            op,
            offset_bytes: 1 << 20,
            len_bytes: len,
            device: 0,
        };
        assert_eq!(t.requests, vec![want], "{line}");
        let back = format_line(&t.requests[0]);
        assert_eq!(back.to_ascii_uppercase(), line.to_ascii_uppercase());
        assert_eq!(parse_ftl(&back).unwrap().requests, vec![want]);
        let e = parse_ftl(&format!("{line}\n{bad}\n")).unwrap_err();
        assert_eq!((e.line, e.field.as_str()), (2, field), "{bad}: {e}");
        assert!(
            e.to_string()
                .starts_with(&format!("z.trace:2: field {field}: "))
                && !e.reason.is_empty(),
            "{e}"
        );
    }

    #[test]
    fn read_write_trim_and_copy_round_trip() {
        op_code("0 R 1048576 4096", TraceOp::Read, 4096, "1 R 0", "len");
        op_code("0 W 1048576 8192", TraceOp::Write, 8192, "1 W 0 x", "len");
        op_code("0 T 1048576 4096", TraceOp::Trim, 4096, "1 T 0 0", "len");
        op_code(
            "0 C 1048576 4096 0",
            TraceOp::Copy { src_bytes: 0 },
            4096,
            "1 C 0 4096",
            "src",
        );
    }

    #[test]
    fn placement_identifiers_round_trip() {
        op_code(
            "0 W 1048576 4096 7",
            TraceOp::PlacedWrite { pid: 7 },
            4096,
            "1 W 0 4096 256",
            "placement",
        );
        op_code(
            "0 w 1048576 4096 255",
            TraceOp::PlacedWrite { pid: 255 },
            4096,
            "1 W 0 4096 -1",
            "placement",
        );
        let t = parse_ftl("0 W 0 4096 3\n1 W 4096 4096\n2 W 0 4096 9\n3 W 0 4096 9\n").unwrap();
        assert_eq!((t.stats.writes, t.stats.placed_writes), (4, 3));
        let (max, at) = t.stats.uses.max_placement.clone().unwrap();
        assert_eq!((max, at.line), (9, 3));
        assert_eq!(t.stats.uses.placed.as_ref().map(|l| l.line), Some(1));
        assert!(t.stats.uses.zone_op.is_none());
    }

    #[test]
    fn zone_append_round_trips() {
        op_code(
            "0 A 1048576 16384",
            TraceOp::Append,
            16384,
            "1 A 0 0",
            "len",
        );
        op_code(
            "0 a 1048576 4096",
            TraceOp::Append,
            4096,
            "1 A 0 4096 1",
            "src",
        );
    }

    #[test]
    fn zone_sends_round_trip() {
        for (code, action) in [
            ("ZO", ZoneSend::Open),
            ("ZC", ZoneSend::Close),
            ("ZF", ZoneSend::Finish),
            ("ZR", ZoneSend::Reset),
        ] {
            let line = format!("0 {code} 1048576");
            let bad = format!("1 {code} 0 4096");
            op_code(&line, TraceOp::Zone(action), 1, &bad, "len");
            op_code(
                &line,
                TraceOp::Zone(action),
                1,
                &format!("1 {code}"),
                "offset",
            );
        }
        op_code(
            "0 zr 1048576",
            TraceOp::Zone(ZoneSend::Reset),
            1,
            "1 ZX 0",
            "op",
        );
        let t = parse_ftl("0 W 0 4096\n1 T 0 4096\n2 A 0 4096\n3 ZF 0\n4 ZR 0\n").unwrap();
        assert_eq!(
            (t.stats.appends, t.stats.append_bytes, t.stats.zone_sends),
            (1, 4096, 2)
        );
        assert_eq!(t.stats.uses.zone_op.as_ref().map(|l| l.line), Some(3));
        assert_eq!(t.stats.uses.trim_or_copy.as_ref().map(|l| l.line), Some(2));
    }
}
