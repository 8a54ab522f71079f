//! `--max-memory`: the most memory a command may plan to allocate, checked
//! against the worst case its configuration implies before anything is
//! allocated. The default is the machine's physical RAM.

use crate::CliError;

/// Parses a size: bytes, or a number with a binary suffix `K`, `M`, `G`,
/// `T` (optionally followed by `iB` or `B`, any case), e.g. `512M`, `1.5GiB`.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let body = lower
        .strip_suffix("ib")
        .or_else(|| lower.strip_suffix('b'))
        .unwrap_or(&lower);
    let (num, shift) = match body.chars().last() {
        Some('k') => (&body[..body.len() - 1], 10),
        Some('m') => (&body[..body.len() - 1], 20),
        Some('g') => (&body[..body.len() - 1], 30),
        Some('t') => (&body[..body.len() - 1], 40),
        _ => (body, 0),
    };
    let x: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a size (bytes, or a number with K, M, G or T)"))?;
    let bytes = x * (1u64 << shift) as f64;
    if !(bytes.is_finite() && bytes >= 1.0 && bytes < u64::MAX as f64) {
        return Err(format!("`{s}` is not a size between 1 byte and 16 EiB"));
    }
    Ok(bytes as u64)
}

/// Physical RAM in bytes (`MemTotal` of `/proc/meminfo`), if known.
pub fn physical_ram() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Bytes in the largest binary unit that keeps the number at least 1.
pub fn human(bytes: u64) -> String {
    let units = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut x = bytes as f64;
    let mut i = 0;
    while x >= 1024.0 && i + 1 < units.len() {
        x /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{x:.2} {}", units[i])
    }
}

/// The limit in force and where it comes from: `--max-memory`, else the
/// physical RAM, else none.
pub fn effective(limit: Option<u64>) -> Option<(u64, &'static str)> {
    match limit {
        Some(l) => Some((l, "--max-memory")),
        None => physical_ram().map(|l| (l, "the physical RAM, the default of --max-memory")),
    }
}

/// Fails with an input error when `need` bytes exceed `limit` (`None`: the
/// physical RAM, or no limit when it is unknown); `what` says what needs it.
pub fn check(need: u64, limit: Option<u64>, what: &str) -> Result<(), CliError> {
    let Some((limit, origin)) = effective(limit) else {
        return Ok(());
    };
    if need > limit {
        return Err(CliError::Input(format!(
            "--max-memory: {what} would take up to {} ({need} bytes), more than {} ({origin}); \
             shrink the configuration or raise --max-memory",
            human(need),
            human(limit)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_size("2t"), Ok(2 << 40));
        assert_eq!(parse_size(" 8kb "), Ok(8 << 10));
        for bad in ["", "G", "-1G", "0", "1e30T", "NaN", "12X"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_check_names_the_flag_and_the_need() {
        assert!(check(10, Some(10), "x").is_ok());
        match check(3 << 30, Some(1 << 30), "this run") {
            Err(CliError::Input(m)) => {
                assert!(
                    m.contains("--max-memory") && m.contains("3.00 GiB") && m.contains("1.00 GiB"),
                    "{m}"
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
