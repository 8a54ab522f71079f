//! UMass Trace Repository / SPC traces (Financial1-2, WebSearch1-3).
//!
//! One request per line, comma-separated: `ASU,LBA,Size,Opcode,Timestamp`,
//! with the application storage unit `ASU` (the device), `LBA` in 512-byte
//! blocks, `Size` in bytes, `Opcode` `r` or `w` (any case) and `Timestamp`
//! in (fractional) seconds. The SPC specification allows optional fields
//! after the fifth; they are ignored.

use super::num::{parse_decimal_ns, parse_rw, parse_u32, parse_u64, split_fields, times_unit};
use super::{FieldError, Parsed, TraceRequest};

/// Field names, in column order, as used in error messages.
pub(super) const FIELDS: [&str; 5] = ["ASU", "LBA", "Size", "Opcode", "Timestamp"];

/// Parses one non-blank, non-comment line.
pub(super) fn parse_line(line: &str) -> Result<Parsed<'static>, FieldError> {
    let f = split_fields(
        line,
        Some(','),
        &FIELDS,
        "ASU,LBA,Size,Opcode,Timestamp",
        true,
    )?;
    let device = parse_u32(f[0]).map_err(|r| FieldError::new("ASU", r))?;
    let offset = times_unit(f[1], 512, "LBA")?;
    let len = parse_u64(f[2]).map_err(|r| FieldError::new("Size", r))?;
    let op = parse_rw(f[3], "Opcode")?;
    let time_ns =
        parse_decimal_ns(f[4], 1_000_000_000).map_err(|r| FieldError::new("Timestamp", r))?;
    TraceRequest::checked(time_ns, op, offset, len, device, ["LBA", "Size"]).map(Parsed::Request)
}
