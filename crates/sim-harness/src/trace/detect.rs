//! Format detection for `--format auto`.
//!
//! Each data line of the sample is classified into the set of formats it is
//! valid in; the sets are intersected, and exactly one format must remain.
//! Blank and `#` comment lines are neutral. The rules:
//! - vSCSI: header starting `version,` or 5 CSV fields `int,number,hex,int,int`;
//! - MSR: header starting `Timestamp,` or 7 CSV fields with `Read`/`Write`
//!   in the fourth;
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

const ASCII: u8 = 1;
const MSR: u8 = 2;
const BLK: u8 = 4;
const VSCSI: u8 = 8;
const FTL: u8 = 16;
const ALL: u8 = ASCII | MSR | BLK | VSCSI | FTL;

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

fn names(mask: u8) -> String {
    let mut v = Vec::new();
    for (bit, name) in [
        (ASCII, "ascii"),
        (MSR, "msr"),
        (BLK, "blkparse"),
        (VSCSI, "vscsi"),
        (FTL, "ftl"),
    ] {
        if mask & bit != 0 {
            v.push(name);
        }
    }
    v.join(" or ")
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
fn line_mask(t: &str) -> u8 {
    if starts_with_ci(t, "version,") {
        return VSCSI;
    }
    if starts_with_ci(t, "timestamp,") {
        return MSR;
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
    if n == 5 && is_int(f[0]) && is_decimal(f[1]) && is_hex(f[2]) && is_int(f[3]) && is_int(f[4]) {
        mask |= VSCSI;
    }
    let mut toks = [""; 6];
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
                     vscsi: `version,time,op,size,lbn`; ftl: `time op offset len [src]`)",
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
        ASCII => Ok(TraceFormat::Ascii),
        MSR => Ok(TraceFormat::Msr),
        BLK => Ok(TraceFormat::Blkparse),
        VSCSI => Ok(TraceFormat::Vscsi),
        FTL => Ok(TraceFormat::Ftl),
        _ => Err(DetectError {
            line: 0,
            reason: format!("ambiguous: the lines fit {}", names(cand)),
        }),
    }
}
