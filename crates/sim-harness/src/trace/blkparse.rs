//! Linux `blkparse` default text output.
//!
//! Event lines are `maj,min cpu seq time_s pid action rwbs ...`. Only `D`
//! (dispatch to the device driver) events become requests: they are what the
//! device saw, after merging and scheduling. Every other event (`Q`, `G`,
//! `I`, `M`, `C`, ...) is counted per action as [`SkipKind::BlkEvent`];
//! scheduler message lines (action `m`, e.g. CFQ/BFQ notes) as
//! [`SkipKind::SchedulerMessage`]. The summary block that `blkparse` prints
//! at the end (starting with `CPU<n> (...)` or `Total (...)`) is counted line
//! by line as [`SkipKind::Summary`].
//!
//! A `D` line is `... D rwbs sector + nsectors [(elapsed)] [process]`. The
//! operation letter of `rwbs` decides the request: `R` read, `W` write, `D`
//! discard (trim). A dispatch whose operation is a flush (`F` alone, or `FN`)
//! counts as [`SkipKind::Flush`], a dispatch without data (`N`, e.g. SCSI
//! pass-through) as [`SkipKind::NoData`], and a zero-sector data dispatch as
//! a flush if it carries a flush/barrier flag (`F`/`B`, the old empty-barrier
//! idiom) and as [`SkipKind::ZeroLength`] otherwise. `blkparse -f` custom
//! formats are not supported.
//!
//! Devices are numbered like the kernel's `dev_t`: see [`blk_device_id`].

use super::num::{parse_decimal_ns, parse_u32, parse_u64, quote};
use super::{FieldError, Parsed, SkipKind, TraceOp, TraceRequest};

/// Device number of a block device, `major << 20 | minor` (the kernel's
/// internal `dev_t` layout), so `8,16` (sdb) is 8388624. Returns `None` when
/// `major` does not fit in 12 bits or `minor` in 20. Use it to build a
/// [`DevicePolicy::Select`](super::DevicePolicy::Select) for a blkparse trace.
pub fn blk_device_id(major: u32, minor: u32) -> Option<u32> {
    (major < (1 << 12) && minor < (1 << 20)).then_some((major << 20) | minor)
}

/// Splits a [`blk_device_id`] back into `(major, minor)`.
pub fn blk_device_parts(id: u32) -> (u32, u32) {
    (id >> 20, id & ((1 << 20) - 1))
}

/// What the `rwbs` field of a dispatch says about the request.
enum Rwbs {
    /// A data request, with whether a flush/FUA/barrier flag is present.
    Data(TraceOp, bool),
    /// A cache flush without data.
    Flush,
    /// A request without data that is not a flush.
    NoData,
}

fn classify_rwbs(s: &str) -> Result<Rwbs, FieldError> {
    let mut primary: Option<u8> = None;
    let mut flush = false;
    for b in s.bytes() {
        match b {
            b'R' | b'W' | b'D' | b'N' => {
                if primary.is_some() {
                    return Err(FieldError::new(
                        "rwbs",
                        format!("{} names two operations", quote(s)),
                    ));
                }
                primary = Some(b);
            }
            b'F' | b'B' => flush = true,
            b'S' | b'M' | b'A' | b'E' => {}
            _ => {
                return Err(FieldError::new(
                    "rwbs",
                    format!(
                        "unknown flag in {} (expected letters of RWDNFBSMAE)",
                        quote(s)
                    ),
                ))
            }
        }
    }
    Ok(match primary {
        Some(b'R') => Rwbs::Data(TraceOp::Read, flush),
        Some(b'W') => Rwbs::Data(TraceOp::Write, flush),
        Some(b'D') => Rwbs::Data(TraceOp::Trim, flush),
        Some(_) if flush => Rwbs::Flush,
        Some(_) => Rwbs::NoData,
        None if flush => Rwbs::Flush,
        None => {
            return Err(FieldError::new(
                "rwbs",
                format!("{} has no operation letter", quote(s)),
            ))
        }
    })
}

/// Whether a dispatch line is complete: the default layout ends with
/// `[process]` (without it the size field may itself be cut short); the
/// custom layout, recognised by the `.` in its second field, has no end
/// marker and counts as complete.
pub(super) fn complete_dispatch(text: &str) -> bool {
    text.ends_with(']')
        || text
            .split_ascii_whitespace()
            .nth(1)
            .is_some_and(|t| t.contains('.'))
}

/// Is this first token the start of blkparse's closing summary block?
fn is_summary_start(tok: &str) -> bool {
    tok == "Total"
        || tok
            .strip_prefix("CPU")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Parses `maj,min` into a [`blk_device_id`].
fn parse_dev(s: &str) -> Result<u32, FieldError> {
    let bad = || {
        FieldError::new(
            "dev",
            format!("{} is not a `major,minor` device number", quote(s)),
        )
    };
    let (maj, min) = s.split_once(',').ok_or_else(bad)?;
    let maj = parse_u32(maj).map_err(|_| bad())?;
    let min = parse_u32(min).map_err(|_| bad())?;
    blk_device_id(maj, min).ok_or_else(|| {
        FieldError::new(
            "dev",
            format!("{} is out of range (major < 4096, minor < 2^20)", quote(s)),
        )
    })
}

/// Line parser; remembers whether the closing summary block has started.
#[derive(Default)]
pub(super) struct Blkparse {
    in_summary: bool,
}

impl Blkparse {
    /// Parses one non-blank, non-comment line.
    pub(super) fn parse_line<'a>(&mut self, line: &'a str) -> Result<Parsed<'a>, FieldError> {
        if self.in_summary {
            return Ok(Parsed::Skip(SkipKind::Summary));
        }
        let mut it = line.split_ascii_whitespace();
        let Some(first) = it.next() else {
            return Ok(Parsed::Skip(SkipKind::Blank));
        };
        if is_summary_start(first) {
            self.in_summary = true;
            return Ok(Parsed::Skip(SkipKind::Summary));
        }
        let device = parse_dev(first)?;
        let rest = it.clone().next().unwrap_or("");
        if rest.contains('.') {
            return Self::parse_custom(device, it);
        }
        let mut next = |field: &'static str| {
            it.next()
                .ok_or_else(|| FieldError::new(field, "missing field"))
        };
        parse_u32(next("cpu")?).map_err(|r| FieldError::new("cpu", r))?;
        parse_u64(next("seq")?).map_err(|r| FieldError::new("seq", r))?;
        let time_ns = parse_decimal_ns(next("time")?, 1_000_000_000)
            .map_err(|r| FieldError::new("time", r))?;
        parse_u64(next("pid")?).map_err(|r| FieldError::new("pid", r))?;
        let action = next("action")?;
        if action.len() > 3 || !action.bytes().all(|b| b.is_ascii_alphabetic()) {
            return Err(FieldError::new(
                "action",
                format!("{} is not a blktrace action", quote(action)),
            ));
        }
        match action {
            "D" => {}
            "m" => return Ok(Parsed::Skip(SkipKind::SchedulerMessage)),
            other => return Ok(Parsed::Event(other)),
        }
        let (op, flush) = match classify_rwbs(next("rwbs")?)? {
            Rwbs::Data(op, flush) => (op, flush),
            Rwbs::Flush => return Ok(Parsed::Skip(SkipKind::Flush)),
            Rwbs::NoData => return Ok(Parsed::Skip(SkipKind::NoData)),
        };
        let sector = next("sector")?;
        parse_u64(sector).map_err(|r| FieldError::new("sector", r))?;
        let plus = next("+")?;
        if plus != "+" {
            return Err(FieldError::new(
                "+",
                format!(
                    "expected `+` between sector and size, found {}",
                    quote(plus)
                ),
            ));
        }
        let nsect = next("nsectors")?;
        parse_u64(nsect).map_err(|r| FieldError::new("nsectors", r))?;
        // Optional `(elapsed)` from `blkparse -t`, then `[process]`.
        let mut tok = next("process")?;
        if tok.starts_with('(') {
            while !tok.ends_with(')') {
                tok = next("process")?;
            }
            tok = next("process")?;
        }
        if !tok.starts_with('[') {
            return Err(FieldError::new(
                "process",
                format!("expected `[process]`, found {}", quote(tok)),
            ));
        }
        dispatch(device, time_ns, op, flush, sector, nsect)
    }

    /// The custom layout `maj,min time action rwbs sector nsectors`; `it`
    /// is past the device.
    fn parse_custom<'a>(
        device: u32,
        mut it: std::str::SplitAsciiWhitespace<'a>,
    ) -> Result<Parsed<'a>, FieldError> {
        let mut next = |field: &'static str| {
            it.next().ok_or_else(|| {
                FieldError::new(
                    field,
                    "missing field (custom layout `maj,min time action rwbs sector nsectors`)",
                )
            })
        };
        let time_ns = parse_decimal_ns(next("time")?, 1_000_000_000)
            .map_err(|r| FieldError::new("time", r))?;
        let action = next("action")?;
        let rwbs = next("rwbs")?;
        let sector = next("sector")?;
        let nsect = next("nsectors")?;
        if let Some(extra) = it.next() {
            return Err(FieldError::new(
                "line",
                format!(
                    "unexpected seventh field {} in the custom layout",
                    quote(extra)
                ),
            ));
        }
        match action {
            "D" => {}
            "m" => return Ok(Parsed::Skip(SkipKind::SchedulerMessage)),
            a if a.len() <= 3 && a.bytes().all(|b| b.is_ascii_alphabetic()) => {
                return Ok(Parsed::Event(a))
            }
            a => {
                return Err(FieldError::new(
                    "action",
                    format!("{} is not a blktrace action", quote(a)),
                ))
            }
        }
        let (op, flush) = match classify_rwbs(rwbs)? {
            Rwbs::Data(op, flush) => (op, flush),
            Rwbs::Flush => return Ok(Parsed::Skip(SkipKind::Flush)),
            Rwbs::NoData => return Ok(Parsed::Skip(SkipKind::NoData)),
        };
        dispatch(device, time_ns, op, flush, sector, nsect)
    }
}

/// A data dispatch of `nsect` sectors at `sector` (both still text).
fn dispatch(
    device: u32,
    time_ns: u64,
    op: TraceOp,
    flush: bool,
    sector: &str,
    nsect: &str,
) -> Result<Parsed<'static>, FieldError> {
    let sector = parse_u64(sector).map_err(|r| FieldError::new("sector", r))?;
    let nsect = parse_u64(nsect).map_err(|r| FieldError::new("nsectors", r))?;
    if nsect == 0 {
        let kind = if flush {
            SkipKind::Flush
        } else {
            SkipKind::ZeroLength
        };
        return Ok(Parsed::Skip(kind));
    }
    let offset = sector
        .checked_mul(512)
        .ok_or_else(|| FieldError::new("sector", "sector overflows 64-bit bytes".to_string()))?;
    let len = nsect
        .checked_mul(512)
        .ok_or_else(|| FieldError::new("nsectors", "size overflows 64-bit bytes".to_string()))?;
    TraceRequest::checked(time_ns, op, offset, len, device, ["sector", "nsectors"])
        .map(Parsed::Request)
}
