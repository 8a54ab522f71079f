//! CloudPhysics VMware vSCSI CSV traces (as converted by PyMimircache).
//!
//! Header `version,time,op,size,lbn`; `time` in microseconds (a fraction is
//! accepted), `op` the SCSI opcode in hex, `size` in bytes, `lbn` in 512-byte
//! blocks. `version` must be an unsigned integer and is otherwise ignored.
//! The format has no device column: every request is device 0.
//!
//! Opcodes:
//! - reads: `08` READ(6), `28` READ(10), `a8` READ(12), `88` READ(16);
//! - writes: `0a` WRITE(6), `2a` WRITE(10), `aa` WRITE(12), `8a` WRITE(16),
//!   and WRITE AND VERIFY `2e`/`ae`/`8e` (they write data);
//! - `35` SYNCHRONIZE CACHE(10) and `91` SYNCHRONIZE CACHE(16) are counted as
//!   [`SkipKind::Flush`];
//! - every other opcode (e.g. `42` UNMAP, whose ranges live in the data-out
//!   buffer that the trace does not record, or `00` TEST UNIT READY) is a
//!   valid line carrying no replayable request: counted per opcode as
//!   [`SkipKind::ScsiCommand`], never dropped silently.

use super::num::{parse_decimal_ns, parse_hex_u8, parse_u64, quote};
use super::{FieldError, Parsed, SkipKind, TraceOp, TraceRequest};

/// Field names, in column order, as used in error messages.
pub(super) const FIELDS: [&str; 5] = ["version", "time", "op", "size", "lbn"];

/// The data-transfer class of a SCSI opcode as this parser treats it.
pub(super) fn classify_opcode(op: u8) -> Option<TraceOp> {
    match op {
        0x08 | 0x28 | 0xa8 | 0x88 => Some(TraceOp::Read),
        0x0a | 0x2a | 0xaa | 0x8a | 0x2e | 0xae | 0x8e => Some(TraceOp::Write),
        _ => None,
    }
}

/// Parses one non-blank, non-comment line.
pub(super) fn parse_line(line: &str) -> Result<Parsed<'static>, FieldError> {
    let mut f: [&str; 5] = [""; 5];
    let mut n = 0;
    for (i, field) in line.split(',').enumerate() {
        if i >= 5 {
            return Err(FieldError::new(
                "line",
                "more than 5 comma-separated fields (expected version,time,op,size,lbn)",
            ));
        }
        f[i] = field.trim();
        n = i + 1;
    }
    if f[0].eq_ignore_ascii_case("version") {
        return Ok(Parsed::Skip(SkipKind::Header));
    }
    if n < 5 {
        return Err(FieldError::new(
            FIELDS[n],
            format!("missing field {} of 5", n + 1),
        ));
    }
    parse_u64(f[0]).map_err(|r| FieldError::new("version", r))?;
    let time_ns = parse_decimal_ns(f[1], 1_000).map_err(|r| FieldError::new("time", r))?;
    let opcode = parse_hex_u8(f[2]).map_err(|r| FieldError::new("op", r))?;
    let len = parse_u64(f[3]).map_err(|r| FieldError::new("size", r))?;
    let lbn = parse_u64(f[4]).map_err(|r| FieldError::new("lbn", r))?;
    let op = match classify_opcode(opcode) {
        Some(op) => op,
        None if opcode == 0x35 || opcode == 0x91 => return Ok(Parsed::Skip(SkipKind::Flush)),
        None => return Ok(Parsed::Skip(SkipKind::ScsiCommand(opcode))),
    };
    let offset = lbn.checked_mul(512).ok_or_else(|| {
        FieldError::new(
            "lbn",
            format!("{} blocks overflow 64-bit bytes", quote(f[4])),
        )
    })?;
    TraceRequest::checked(time_ns, op, offset, len, 0, ["lbn", "size"]).map(Parsed::Request)
}

/// A short name for a SCSI opcode, for statistics output.
pub(super) fn opcode_name(op: u8) -> &'static str {
    match op {
        0x00 => "TEST UNIT READY",
        0x03 => "REQUEST SENSE",
        0x12 => "INQUIRY",
        0x1a => "MODE SENSE(6)",
        0x25 => "READ CAPACITY(10)",
        0x2f => "VERIFY(10)",
        0x35 => "SYNCHRONIZE CACHE(10)",
        0x41 => "WRITE SAME(10)",
        0x42 => "UNMAP",
        0x4d => "LOG SENSE",
        0x5a => "MODE SENSE(10)",
        0x89 => "COMPARE AND WRITE",
        0x8f => "VERIFY(16)",
        0x91 => "SYNCHRONIZE CACHE(16)",
        0x93 => "WRITE SAME(16)",
        0x9e => "SERVICE ACTION IN(16)",
        0xa0 => "REPORT LUNS",
        0xa3 => "MAINTENANCE IN",
        _ => "unknown opcode",
    }
}
