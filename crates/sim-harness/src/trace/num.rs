//! Allocation-free number parsing for trace fields.
//!
//! The standard `str::parse` accepts a leading `+` and produces error values
//! without the offending text; these helpers are stricter (digits only) and
//! return a reason that quotes the field, which ends up in a `TraceError`.

/// Quotes `s` for an error message, cutting very long (e.g. fuzzed) fields
/// ([`crate::clip::clip`]).
pub(crate) fn quote(s: &str) -> String {
    format!("`{}`", crate::clip::clip(s))
}

/// Parses an unsigned decimal integer (ASCII digits only, no sign).
pub(crate) fn parse_u64(s: &str) -> Result<u64, String> {
    if s.is_empty() {
        return Err("empty field, expected an unsigned integer".into());
    }
    if s.starts_with('-') {
        return Err(format!("negative value {}", quote(s)));
    }
    let mut v: u64 = 0;
    for b in s.bytes() {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return Err(format!("{} is not an unsigned decimal integer", quote(s)));
        }
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(d)))
            .ok_or_else(|| format!("{} does not fit in 64 bits", quote(s)))?;
    }
    Ok(v)
}

/// Parses an unsigned decimal integer that must fit in 32 bits.
pub(crate) fn parse_u32(s: &str) -> Result<u32, String> {
    let v = parse_u64(s)?;
    u32::try_from(v).map_err(|_| format!("{} does not fit in 32 bits", quote(s)))
}

/// Parses a one- or two-digit hexadecimal byte, with an optional `0x` prefix.
pub(crate) fn parse_hex_u8(s: &str) -> Result<u8, String> {
    let digits = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    if digits.is_empty() || digits.len() > 2 {
        return Err(format!("{} is not a one-byte hex opcode", quote(s)));
    }
    let mut v: u8 = 0;
    for b in digits.bytes() {
        let d = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => return Err(format!("{} is not a one-byte hex opcode", quote(s))),
        };
        v = v.wrapping_mul(16).wrapping_add(d);
    }
    Ok(v)
}

/// Parses a non-negative decimal number with an optional fraction (`12`,
/// `12.5`, `.5`, `12.`) counted in units of `unit_ns` nanoseconds, and returns
/// whole nanoseconds (sub-nanosecond fractions are truncated). Exact: no
/// floating point, so `0.000031865` seconds is exactly 31,865 ns.
pub(crate) fn parse_decimal_ns(s: &str, unit_ns: u64) -> Result<u64, String> {
    if s.starts_with('-') {
        return Err(format!("negative time {}", quote(s)));
    }
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) => (i, f),
        None => (s, ""),
    };
    if int.is_empty() && frac.is_empty() {
        return Err(format!("{} is not a number", quote(s)));
    }
    let bad = || format!("{} is not a non-negative decimal number", quote(s));
    let too_big = || format!("time {} does not fit in 64-bit nanoseconds", quote(s));
    let mut whole: u128 = 0;
    for b in int.bytes() {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return Err(bad());
        }
        whole = whole * 10 + u128::from(d);
        if whole > u128::from(u64::MAX) {
            return Err(too_big());
        }
    }
    // Up to 20 fractional digits are significant (finer than 1 ns for any
    // unit up to 10^11 ns); later digits are validated and ignored.
    let mut frac_val: u128 = 0;
    let mut scale: u128 = 1;
    for (i, b) in frac.bytes().enumerate() {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return Err(bad());
        }
        if i < 20 {
            frac_val = frac_val * 10 + u128::from(d);
            scale *= 10;
        }
    }
    let unit = u128::from(unit_ns);
    let total = whole * unit + frac_val * unit / scale;
    u64::try_from(total).map_err(|_| too_big())
}

/// Splits `line` at `sep` (`None`: ASCII whitespace) into exactly `N`
/// trimmed fields, or into at least `N` when `extra_ok` (the rest is
/// ignored). The error names the first missing field or says that there
/// are too many; `names` are the field names, `layout` the documented
/// line layout for the message.
pub(crate) fn split_fields<'a, const N: usize>(
    line: &'a str,
    sep: Option<char>,
    names: &[&'static str; N],
    layout: &str,
    extra_ok: bool,
) -> Result<[&'a str; N], super::FieldError> {
    let mut f = [""; N];
    let mut n = 0;
    let mut push = |field: &'a str| -> Result<bool, super::FieldError> {
        if n == N {
            if extra_ok {
                return Ok(false);
            }
            return Err(super::FieldError::new(
                "line",
                format!(
                    "unexpected field {} {} (expected {N} fields: `{layout}`)",
                    N + 1,
                    quote(field)
                ),
            ));
        }
        f[n] = field.trim();
        n += 1;
        Ok(true)
    };
    match sep {
        Some(c) => {
            for field in line.split(c) {
                if !push(field)? {
                    break;
                }
            }
        }
        None => {
            for field in line.split_ascii_whitespace() {
                if !push(field)? {
                    break;
                }
            }
        }
    }
    if n < N {
        return Err(super::FieldError::new(
            names[n],
            format!("missing field {} of {N} (`{layout}`)", n + 1),
        ));
    }
    Ok(f)
}

/// Multiplies a parsed count by `unit` bytes, naming `field` on overflow.
pub(crate) fn times_unit(
    s: &str,
    unit: u64,
    field: &'static str,
) -> Result<u64, super::FieldError> {
    let v = parse_u64(s).map_err(|r| super::FieldError::new(field, r))?;
    v.checked_mul(unit).ok_or_else(|| {
        super::FieldError::new(field, format!("{} overflows 64-bit bytes", quote(s)))
    })
}

/// Parses `R`/`W` (any case, also `Read`/`Write`) into a read or write.
pub(crate) fn parse_rw(s: &str, field: &'static str) -> Result<super::TraceOp, super::FieldError> {
    if s.eq_ignore_ascii_case("r") || s.eq_ignore_ascii_case("read") {
        Ok(super::TraceOp::Read)
    } else if s.eq_ignore_ascii_case("w") || s.eq_ignore_ascii_case("write") {
        Ok(super::TraceOp::Write)
    } else {
        Err(super::FieldError::new(
            field,
            format!("unknown op {} (expected R or W)", quote(s)),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_num_u64() {
        assert_eq!(parse_u64("0"), Ok(0));
        assert_eq!(parse_u64("18446744073709551615"), Ok(u64::MAX));
        assert!(parse_u64("18446744073709551616").is_err());
        assert!(parse_u64("+1").is_err());
        assert!(parse_u64("-1").unwrap_err().contains("negative"));
        assert!(parse_u64("").is_err());
        assert!(parse_u64("1a").is_err());
        assert!(parse_u32("4294967296").is_err());
    }

    #[test]
    fn trace_num_hex() {
        assert_eq!(parse_hex_u8("2a"), Ok(0x2a));
        assert_eq!(parse_hex_u8("0x8A"), Ok(0x8a));
        assert_eq!(parse_hex_u8("8"), Ok(8));
        assert!(parse_hex_u8("123").is_err());
        assert!(parse_hex_u8("0x").is_err());
        assert!(parse_hex_u8("g1").is_err());
    }

    #[test]
    fn trace_num_decimal() {
        assert_eq!(parse_decimal_ns("0.000031865", 1_000_000_000), Ok(31_865));
        assert_eq!(parse_decimal_ns("1.5", 1_000_000), Ok(1_500_000));
        assert_eq!(parse_decimal_ns(".5", 1_000), Ok(500));
        assert_eq!(parse_decimal_ns("2.", 1_000), Ok(2_000));
        assert_eq!(parse_decimal_ns("7.9", 1), Ok(7));
        assert_eq!(parse_decimal_ns("123", 1), Ok(123));
        assert!(parse_decimal_ns(".", 1).is_err());
        assert!(parse_decimal_ns("", 1).is_err());
        assert!(parse_decimal_ns("1e3", 1).is_err());
        assert!(parse_decimal_ns("1.2.3", 1).is_err());
        assert!(parse_decimal_ns("-1", 1).unwrap_err().contains("negative"));
        assert!(parse_decimal_ns("18446744073709551616", 1).is_err());
        assert!(parse_decimal_ns("18446744073709552", 1000).is_err());
    }
}
