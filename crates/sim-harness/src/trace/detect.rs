//! Format detection for `--format auto`.
//!
//! Each data line of the sample is classified into the set of formats it is
//! valid in; the sets are intersected, and exactly one format must remain.
//! Blank and `#` comment lines are neutral. The rules:
//! - vSCSI: header starting `version,` or 5 CSV fields `int,number,hex,int,int`
//!   with a version of at most 3 digits;
//! - MSR: header starting `Timestamp,` (but not `Timestamp,Response`) or 7
//!   CSV fields with `Read`/`Write` in the fourth;
//! - Systor: header starting `Timestamp,Response` or 6 CSV fields
//!   `number,[number],R|W,int,int,int`;
//! - Alibaba: 5 CSV fields `int,R|W,int,int,number`;
//! - Tencent: 5 CSV fields `number,int,int,0|1,int`;
//! - SPC: 5 or more CSV fields `int,int,int,r|w,number`;
//! - FIU: 9 whitespace-separated fields `int int name int int R|W int int md5`;
//! - fio: the header `fio version 2 iolog` / `fio version 3 iolog`, then
//!   lines of 2 to 5 fields with an iolog action second (version 2) or
//!   third (version 3);
//! - blkparse: first token `major,minor` followed by at least 5 more tokens,
//!   or the start of the closing summary block (`CPU0 (sdb):`, `Total (...)`),
//!   after which the sample is no longer examined;
//! - ASCII: exactly 5 whitespace-separated numbers (the first may be
//!   fractional);
//! - ftl: `time op offset len` with `op` one of `R`, `W`, `T`, or five
//!   fields with `C` (integers around the op letter).

use std::fmt;

use super::num::quote;
use super::TraceFormat;

const ASCII: u16 = 1;
const MSR: u16 = 2;
const BLK: u16 = 4;
const VSCSI: u16 = 8;
const FTL: u16 = 16;
const ALIBABA: u16 = 32;
const TENCENT: u16 = 64;
const SYSTOR: u16 = 128;
const FIU: u16 = 256;
const SPC: u16 = 512;
const FIO: u16 = 1024;
const ALL: u16 = 2047;

/// Each format's bit and name.
const FORMATS: [(u16, TraceFormat); 11] = [
    (ASCII, TraceFormat::Ascii),
    (MSR, TraceFormat::Msr),
    (BLK, TraceFormat::Blkparse),
    (VSCSI, TraceFormat::Vscsi),
    (FTL, TraceFormat::Ftl),
    (ALIBABA, TraceFormat::Alibaba),
    (TENCENT, TraceFormat::Tencent),
    (SYSTOR, TraceFormat::Systor),
    (FIU, TraceFormat::Fiu),
    (SPC, TraceFormat::Spc),
    (FIO, TraceFormat::Fio),
];

/// Why [`TraceFormat::detect`] could not pick a format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DetectError {
    /// 1-based line number (within the sample) that decided the failure, or
    /// 0 when no single line is to blame (e.g. an empty sample).
    pub line: u64,
    /// Human-readable explanation.
    pub reason: String,
}

impl fmt::Display for DetectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.reason)
    }
}

impl std::error::Error for DetectError {}

fn names(mask: u16) -> String {
    let v: Vec<&str> = FORMATS
        .iter()
        .filter(|(bit, _)| mask & bit != 0)
        .map(|(_, f)| f.name())
        .collect();
    v.join(" or ")
}

fn is_rw(s: &str) -> bool {
    s.eq_ignore_ascii_case("r") || s.eq_ignore_ascii_case("w")
}

fn starts_with_ci(s: &str, prefix: &str) -> bool {
    s.as_bytes()
        .get(..prefix.len())
        .is_some_and(|p| p.eq_ignore_ascii_case(prefix.as_bytes()))
}

fn is_int(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

fn is_decimal(s: &str) -> bool {
    let (i, f) = s.split_once('.').unwrap_or((s, ""));
    !(i.is_empty() && f.is_empty())
        && i.bytes().all(|b| b.is_ascii_digit())
        && f.bytes().all(|b| b.is_ascii_digit())
}

fn is_hex(s: &str) -> bool {
    let d = s.strip_prefix("0x").unwrap_or(s);
    (1..=2).contains(&d.len()) && d.bytes().all(|b| b.is_ascii_hexdigit())
}

fn is_dev(s: &str) -> bool {
    s.split_once(',')
        .is_some_and(|(a, b)| is_int(a) && is_int(b))
}

fn is_summary_start(tok: &str) -> bool {
    tok == "Total" || tok.strip_prefix("CPU").is_some_and(is_int)
}

/// Formats a trimmed, non-blank, non-comment line is valid in.
fn line_mask(t: &str) -> u16 {
    if starts_with_ci(t, "version,") {
        return VSCSI;
    }
    if starts_with_ci(t, "timestamp,response") {
        return SYSTOR;
    }
    if starts_with_ci(t, "timestamp,") {
        return MSR;
    }
    if super::fio::header_version(t).is_some() {
        return FIO;
    }
    let mut f = [""; 8];
    let mut n = 0;
    for field in t.split(',') {
        if n == f.len() {
            n += 1;
            break;
        }
        f[n] = field.trim();
        n += 1;
    }
    let mut mask = 0;
    if n == 7
        && is_int(f[0])
        && (f[3].eq_ignore_ascii_case("read") || f[3].eq_ignore_ascii_case("write"))
    {
        mask |= MSR;
    }
    if n == 5
        && is_int(f[0])
        && f[0].len() <= 3
        && is_decimal(f[1])
        && is_hex(f[2])
        && is_int(f[3])
        && is_int(f[4])
    {
        mask |= VSCSI;
    }
    if n == 6
        && is_decimal(f[0])
        && (f[1].is_empty() || is_decimal(f[1]))
        && is_rw(f[2])
        && f[3..6].iter().all(|s| is_int(s))
    {
        mask |= SYSTOR;
    }
    if n == 5 && is_int(f[0]) && is_rw(f[1]) && is_int(f[2]) && is_int(f[3]) && is_decimal(f[4]) {
        mask |= ALIBABA;
    }
    if n == 5
        && is_decimal(f[0])
        && is_int(f[1])
        && is_int(f[2])
        && (f[3] == "0" || f[3] == "1")
        && is_int(f[4])
    {
        mask |= TENCENT;
    }
    if n >= 5 && f[..3].iter().all(|s| is_int(s)) && is_rw(f[3]) && is_decimal(f[4]) {
        mask |= SPC;
    }
    let mut toks = [""; 9];
    let mut nt = 0;
    for tok in t.split_ascii_whitespace() {
        if nt < toks.len() {
            toks[nt] = tok;
        }
        nt += 1;
    }
    if (nt >= 6 && is_dev(toks[0])) || (nt >= 1 && is_summary_start(toks[0])) {
        mask |= BLK;
    }
    if nt == 5 && is_decimal(toks[0]) && toks[1..5].iter().all(|s| is_int(s)) {
        mask |= ASCII;
    }
    if super::native::looks_like(t) {
        mask |= FTL;
    }
    if nt == 9
        && is_int(toks[0])
        && is_int(toks[1])
        && is_int(toks[3])
        && is_int(toks[4])
        && is_rw(toks[5])
        && is_int(toks[6])
        && is_int(toks[7])
        && toks[8].len() == 32
        && toks[8].bytes().all(|b| b.is_ascii_hexdigit())
    {
        mask |= FIU;
    }
    let action_at = |i: usize| toks.get(i).is_some_and(|a| super::fio::is_action(a));
    if (2..=5).contains(&nt) && (action_at(1) || (is_int(toks[0]) && action_at(2))) {
        mask |= FIO;
    }
    mask
}

/// See [`TraceFormat::detect`].
pub(super) fn detect<'a, I>(lines: I) -> Result<TraceFormat, DetectError>
where
    I: IntoIterator<Item = &'a str>,
{
    let mut cand = ALL;
    let mut seen = 0u64;
    for (i, line) in lines.into_iter().enumerate() {
        let lineno = i as u64 + 1;
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        seen += 1;
        let m = line_mask(t);
        if m == 0 {
            return Err(DetectError {
                line: lineno,
                reason: format!(
                    "{} matches no known format (ascii: 5 numbers `time device sector size type`; \
                     msr: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`; \
                     blkparse: `maj,min cpu seq time pid action ...`; \
                     vscsi: `version,time,op,size,lbn`; ftl: `time op offset len [src]`; \
                     alibaba: `device_id,opcode,offset,length,timestamp`; \
                     tencent: `timestamp,offset,size,iotype,volume_id`; \
                     systor: `Timestamp,Response,IOType,LUN,Offset,Size`; \
                     fiu: `ts pid process lba size op major minor md5`; \
                     spc: `ASU,LBA,Size,Opcode,Timestamp`; fio: `fio version 2 iolog` header)",
                    quote(t)
                ),
            });
        }
        if cand & m == 0 {
            return Err(DetectError {
                line: lineno,
                reason: format!(
                    "{} looks like {} but earlier lines look like {}",
                    quote(t),
                    names(m),
                    names(cand)
                ),
            });
        }
        cand &= m;
        if cand == BLK
            && t.split_ascii_whitespace()
                .next()
                .is_some_and(is_summary_start)
        {
            break;
        }
    }
    match cand {
        _ if seen == 0 => Err(DetectError {
            line: 0,
            reason: "no data lines to examine (empty, or only blank and comment lines)".into(),
        }),
        c if FORMATS.iter().any(|(bit, _)| *bit == c) => Ok(FORMATS
            .iter()
            .find(|(bit, _)| *bit == c)
            .map_or(TraceFormat::Ascii, |(_, f)| *f)),
        _ => Err(DetectError {
            line: 0,
            reason: format!("ambiguous: the lines fit {}", names(cand)),
        }),
    }
}
