//! Tencent Cloud Block Storage traces (2018).
//!
//! One request per line, five comma-separated fields, no header:
//! `timestamp,offset,size,iotype,volume_id`, with `timestamp` in seconds
//! (Unix time; a fraction is accepted), `offset` and `size` in 512-byte
//! sectors, `iotype` `0` = read, `1` = write. The volume becomes the
//! device. The published files are hourly; `ftl replay --concat` joins them.

use super::num::{parse_decimal_ns, parse_u32, split_fields, times_unit};
use super::{FieldError, Parsed, TraceOp, TraceRequest};

/// Field names, in column order, as used in error messages.
pub(super) const FIELDS: [&str; 5] = ["timestamp", "offset", "size", "iotype", "volume_id"];

/// Parses one non-blank, non-comment line.
pub(super) fn parse_line(line: &str) -> Result<Parsed<'static>, FieldError> {
    let f = split_fields(
        line,
        Some(','),
        &FIELDS,
        "timestamp,offset,size,iotype,volume_id",
        false,
    )?;
    let time_ns =
        parse_decimal_ns(f[0], 1_000_000_000).map_err(|r| FieldError::new("timestamp", r))?;
    let offset = times_unit(f[1], 512, "offset")?;
    let len = times_unit(f[2], 512, "size")?;
    let op = match f[3] {
        "0" => TraceOp::Read,
        "1" => TraceOp::Write,
        other => {
            return Err(FieldError::new(
                "iotype",
                format!(
                    "unknown op {} (expected 0 = read or 1 = write)",
                    super::num::quote(other)
                ),
            ))
        }
    };
    let device = parse_u32(f[4]).map_err(|r| FieldError::new("volume_id", r))?;
    TraceRequest::checked(time_ns, op, offset, len, device, ["offset", "size"]).map(Parsed::Request)
}
