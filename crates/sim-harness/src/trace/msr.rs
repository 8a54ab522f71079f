//! MSR Cambridge CSV traces (SNIA IOTTA).
//!
//! `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`, no header
//! line in the published files (a header line whose first field is
//! `Timestamp` is nevertheless accepted and counted). `Timestamp` is a Windows
//! filetime (100 ns units since 1601), `Offset` and `Size` are bytes, `Type`
//! is `Read` or `Write` (any case). `DiskNumber` becomes the device;
//! `Hostname` is validated as non-empty and otherwise ignored (each published
//! file holds a single host); `ResponseTime` is validated and ignored.

use super::num::{parse_u32, parse_u64, quote};
use super::{FieldError, Parsed, SkipKind, TraceOp, TraceRequest};

/// Field names, in column order, as used in error messages.
pub(super) const FIELDS: [&str; 7] = [
    "Timestamp",
    "Hostname",
    "DiskNumber",
    "Type",
    "Offset",
    "Size",
    "ResponseTime",
];

/// Parses one non-blank, non-comment line.
pub(super) fn parse_line(line: &str) -> Result<Parsed<'static>, FieldError> {
    let mut f: [&str; 7] = [""; 7];
    let mut n = 0;
    for (i, field) in line.split(',').enumerate() {
        if i >= 7 {
            return Err(FieldError::new(
                "line",
                "more than 7 comma-separated fields \
                 (expected Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime)",
            ));
        }
        f[i] = field.trim();
        n = i + 1;
    }
    if f[0].eq_ignore_ascii_case("timestamp") {
        return Ok(Parsed::Skip(SkipKind::Header));
    }
    if n < 7 {
        return Err(FieldError::new(
            FIELDS[n],
            format!("missing field {} of 7", n + 1),
        ));
    }
    let ticks = parse_u64(f[0]).map_err(|r| FieldError::new("Timestamp", r))?;
    let time_ns = ticks.checked_mul(100).ok_or_else(|| {
        FieldError::new(
            "Timestamp",
            format!("filetime {} overflows 64-bit nanoseconds", quote(f[0])),
        )
    })?;
    if f[1].is_empty() {
        return Err(FieldError::new("Hostname", "empty host name"));
    }
    let device = parse_u32(f[2]).map_err(|r| FieldError::new("DiskNumber", r))?;
    let op = if f[3].eq_ignore_ascii_case("read") {
        TraceOp::Read
    } else if f[3].eq_ignore_ascii_case("write") {
        TraceOp::Write
    } else {
        return Err(FieldError::new(
            "Type",
            format!("unknown op {} (expected Read or Write)", quote(f[3])),
        ));
    };
    let offset = parse_u64(f[4]).map_err(|r| FieldError::new("Offset", r))?;
    let len = parse_u64(f[5]).map_err(|r| FieldError::new("Size", r))?;
    parse_u64(f[6]).map_err(|r| FieldError::new("ResponseTime", r))?;
    TraceRequest::checked(time_ns, op, offset, len, device, ["Offset", "Size"]).map(Parsed::Request)
}
