//! Alibaba Cloud block traces (2020).
//!
//! One request per line, five comma-separated fields, no header:
//! `device_id,opcode,offset,length,timestamp`, with `opcode` `R` or `W`,
//! `offset` and `length` in bytes and `timestamp` in microseconds. The
//! `device_id` (a virtual disk) becomes the device.

use super::num::{parse_decimal_ns, parse_rw, parse_u32, parse_u64, split_fields};
use super::{FieldError, Parsed, TraceRequest};

/// Field names, in column order, as used in error messages.
pub(super) const FIELDS: [&str; 5] = ["device_id", "opcode", "offset", "length", "timestamp"];

/// Parses one non-blank, non-comment line.
pub(super) fn parse_line(line: &str) -> Result<Parsed<'static>, FieldError> {
    let f = split_fields(
        line,
        Some(','),
        &FIELDS,
        "device_id,opcode,offset,length,timestamp",
        false,
    )?;
    let device = parse_u32(f[0]).map_err(|r| FieldError::new("device_id", r))?;
    let op = parse_rw(f[1], "opcode")?;
    let offset = parse_u64(f[2]).map_err(|r| FieldError::new("offset", r))?;
    let len = parse_u64(f[3]).map_err(|r| FieldError::new("length", r))?;
    let time_ns = parse_decimal_ns(f[4], 1_000).map_err(|r| FieldError::new("timestamp", r))?;
    TraceRequest::checked(time_ns, op, offset, len, device, ["offset", "length"])
        .map(Parsed::Request)
}
