//! SNIA Systor '17 enterprise VDI traces.
//!
//! A header line `Timestamp,Response,IOType,LUN,Offset,Size`, then one
//! request per line: `Timestamp` and `Response` in (fractional) seconds,
//! `IOType` `R` or `W`, `LUN` the logical unit (the device), `Offset` and
//! `Size` in bytes. `Response` may be empty (requests whose completion was
//! not captured); when present it must be a number, and is otherwise
//! ignored. The published files are per LUN and per day; `ftl replay
//! --concat` joins them in timestamp order.

use super::num::{parse_decimal_ns, parse_rw, parse_u32, parse_u64, split_fields};
use super::{FieldError, Parsed, SkipKind, TraceRequest};

/// Field names, in column order, as used in error messages.
pub(super) const FIELDS: [&str; 6] = ["Timestamp", "Response", "IOType", "LUN", "Offset", "Size"];

/// Parses one non-blank, non-comment line.
pub(super) fn parse_line(line: &str) -> Result<Parsed<'static>, FieldError> {
    let f = split_fields(
        line,
        Some(','),
        &FIELDS,
        "Timestamp,Response,IOType,LUN,Offset,Size",
        false,
    )?;
    if f[0].eq_ignore_ascii_case("timestamp") {
        return Ok(Parsed::Skip(SkipKind::Header));
    }
    let time_ns =
        parse_decimal_ns(f[0], 1_000_000_000).map_err(|r| FieldError::new("Timestamp", r))?;
    if !f[1].is_empty() {
        parse_decimal_ns(f[1], 1_000_000_000).map_err(|r| FieldError::new("Response", r))?;
    }
    let op = parse_rw(f[2], "IOType")?;
    let device = parse_u32(f[3]).map_err(|r| FieldError::new("LUN", r))?;
    let offset = parse_u64(f[4]).map_err(|r| FieldError::new("Offset", r))?;
    let len = parse_u64(f[5]).map_err(|r| FieldError::new("Size", r))?;
    TraceRequest::checked(time_ns, op, offset, len, device, ["Offset", "Size"]).map(Parsed::Request)
}
