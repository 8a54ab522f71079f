//! DiskSim / SSDsim / MQSim ASCII traces.
//!
//! One request per line, five whitespace-separated fields:
//! `arrival_time device start_sector size_sectors type`, with 512-byte
//! sectors and `type` 0 = write, 1 = read. The time unit is not recorded in
//! the file (MQSim and SSDsim use integer ns, DiskSim fractional ms), so it
//! comes from [`TimeUnit`](super::TimeUnit).

use super::num::{parse_decimal_ns, parse_u32, parse_u64, quote};
use super::{FieldError, Parsed, TraceOp, TraceRequest};

/// Field names, in column order, as used in error messages.
pub(super) const FIELDS: [&str; 5] = ["time", "device", "sector", "size", "type"];

/// Parses one non-blank, non-comment line.
pub(super) fn parse_line(line: &str, unit_ns: u64) -> Result<Parsed<'_>, FieldError> {
    let mut it = line.split_ascii_whitespace();
    let mut next = |i: usize| {
        it.next().ok_or_else(|| {
            FieldError::new(
                FIELDS[i],
                format!(
                    "missing field {} of 5 (`time device sector size type`)",
                    i + 1
                ),
            )
        })
    };
    let time = next(0)?;
    let device = next(1)?;
    let sector = next(2)?;
    let size = next(3)?;
    let op = next(4)?;
    if let Some(extra) = it.next() {
        return Err(FieldError::new(
            "line",
            format!(
                "unexpected sixth field {} (expected 5 fields)",
                quote(extra)
            ),
        ));
    }
    let time_ns = parse_decimal_ns(time, unit_ns).map_err(|r| FieldError::new("time", r))?;
    let device = parse_u32(device).map_err(|r| FieldError::new("device", r))?;
    let offset_bytes = sectors_to_bytes(sector, "sector")?;
    let len_bytes = sectors_to_bytes(size, "size")?;
    let op = match op {
        "0" => TraceOp::Write,
        "1" => TraceOp::Read,
        other => {
            return Err(FieldError::new(
                "type",
                format!(
                    "unknown op {} (expected 0 = write or 1 = read)",
                    quote(other)
                ),
            ))
        }
    };
    TraceRequest::checked(
        time_ns,
        op,
        offset_bytes,
        len_bytes,
        device,
        ["sector", "size"],
    )
    .map(Parsed::Request)
}

/// Parses a 512-byte sector count and converts it to bytes.
fn sectors_to_bytes(s: &str, field: &'static str) -> Result<u64, FieldError> {
    let v = parse_u64(s).map_err(|r| FieldError::new(field, r))?;
    v.checked_mul(512).ok_or_else(|| {
        FieldError::new(field, format!("{} sectors overflow 64-bit bytes", quote(s)))
    })
}
