//! fio I/O logs (`fio --write_iolog=FILE`), versions 2 and 3.
//!
//! The first data line is the header `fio version 2 iolog` or
//! `fio version 3 iolog`. Then, whitespace-separated:
//!
//! - version 2: `filename action [offset length]`;
//! - version 3: `time_us filename action [offset length]`, `time_us` the
//!   microseconds since the job started.
//!
//! Actions: `add`, `open`, `close` (file handling, counted as
//! [`SkipKind::FileAction`]); `read`, `write`, `trim` with an offset and a
//! length in bytes; `sync` and `datasync` (counted as flushes, not
//! replayed); `wait` (version 2: the offset field is a delay in
//! microseconds that moves the time of every later request, version 3:
//! ignored, like fio does). Each file name is a device, numbered from 0 in
//! the order the log first names it; file names must not contain spaces.

use super::num::{parse_u64, quote};
use super::{FieldError, Parsed, SkipKind, TraceOp, TraceRequest};

/// Line parser: remembers the version, the file names and (version 2) the
/// time that `wait` lines add up to.
#[derive(Default)]
pub(super) struct Fio {
    version: Option<u8>,
    files: Vec<String>,
    wait_ns: u64,
}

/// Whether a line is a fio iolog header, and its version.
pub(super) fn header_version(t: &str) -> Option<u8> {
    match t {
        "fio version 2 iolog" => Some(2),
        "fio version 3 iolog" => Some(3),
        _ => None,
    }
}

/// Whether `s` is an iolog action word.
pub(super) fn is_action(s: &str) -> bool {
    matches!(
        s,
        "add" | "open" | "close" | "read" | "write" | "trim" | "sync" | "datasync" | "wait"
    )
}

impl Fio {
    /// Parses one non-blank, non-comment line.
    pub(super) fn parse_line<'a>(&mut self, line: &'a str) -> Result<Parsed<'a>, FieldError> {
        if let Some(v) = header_version(line) {
            if self.version.is_some() {
                return Err(FieldError::new("line", "second iolog header"));
            }
            self.version = Some(v);
            return Ok(Parsed::Skip(SkipKind::Header));
        }
        let Some(version) = self.version else {
            return Err(FieldError::new(
                "line",
                "missing header `fio version 2 iolog` or `fio version 3 iolog` before the first entry",
            ));
        };
        let mut toks = [""; 5];
        let mut n = 0;
        for t in line.split_ascii_whitespace() {
            if n == toks.len() {
                return Err(FieldError::new(
                    "line",
                    format!("unexpected field {} (at most 5 fields)", quote(t)),
                ));
            }
            toks[n] = t;
            n += 1;
        }
        let (time_ns, rest) = if version == 3 {
            let us = parse_u64(toks[0]).map_err(|r| FieldError::new("time", r))?;
            let ns = us.checked_mul(1_000).ok_or_else(|| {
                FieldError::new("time", "microseconds overflow 64-bit nanoseconds")
            })?;
            (ns, &toks[1..n.max(1)])
        } else {
            (self.wait_ns, &toks[..n])
        };
        let (file, action, args) = match rest {
            [f, a] => (*f, *a, None),
            [f, a, o, l] => (*f, *a, Some((*o, *l))),
            _ => {
                return Err(FieldError::new(
                    "line",
                    if version == 3 {
                        "expected `time filename action [offset length]`"
                    } else {
                        "expected `filename action [offset length]`"
                    },
                ))
            }
        };
        let op = match action {
            "add" | "open" | "close" if args.is_none() => {
                self.device(file);
                return Ok(Parsed::Skip(SkipKind::FileAction));
            }
            "sync" | "datasync" => return Ok(Parsed::Skip(SkipKind::Flush)),
            "read" => TraceOp::Read,
            "write" => TraceOp::Write,
            "trim" => TraceOp::Trim,
            "wait" => {
                let us = match args {
                    Some((o, _)) => parse_u64(o).map_err(|r| FieldError::new("offset", r))?,
                    None => 0,
                };
                if version == 2 {
                    self.wait_ns = us
                        .checked_mul(1_000)
                        .and_then(|ns| self.wait_ns.checked_add(ns))
                        .ok_or_else(|| {
                            FieldError::new(
                                "offset",
                                "the waits add up to more than 64-bit nanoseconds",
                            )
                        })?;
                }
                return Ok(Parsed::Skip(SkipKind::Wait));
            }
            other => {
                return Err(FieldError::new(
                    "action",
                    format!(
                        "unknown action {} (expected add, open, close, read, write, trim, sync, datasync or wait)",
                        quote(other)
                    ),
                ))
            }
        };
        let Some((o, l)) = args else {
            return Err(FieldError::new(
                "offset",
                format!("`{action}` needs an offset and a length"),
            ));
        };
        let offset = parse_u64(o).map_err(|r| FieldError::new("offset", r))?;
        let len = parse_u64(l).map_err(|r| FieldError::new("length", r))?;
        let device = self.device(file);
        TraceRequest::checked(time_ns, op, offset, len, device, ["offset", "length"])
            .map(Parsed::Request)
    }

    /// Device number of a file name, numbering new names in order.
    fn device(&mut self, file: &str) -> u32 {
        match self.files.iter().position(|f| f == file) {
            Some(i) => i as u32,
            None => {
                self.files.push(file.to_string());
                (self.files.len() - 1) as u32
            }
        }
    }
}
