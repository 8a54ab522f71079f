//! Reading a configuration file with a size bound: a configuration is a
//! few kilobytes, so a file (or a device such as `/dev/zero`) larger than
//! [`MAX_CONFIG_BYTES`] is refused after reading at most one byte past the
//! bound, instead of being read without end.

use std::io::Read;
use std::path::Path;

use super::ConfigError;

/// Largest configuration file read: 4 MiB, a thousand times the largest
/// configuration the project writes.
pub const MAX_CONFIG_BYTES: u64 = 4 << 20;

/// The text of the configuration file at `path`, read up to
/// [`MAX_CONFIG_BYTES`]. Errors name the file: it cannot be opened or read,
/// it is larger than the bound, or it is not UTF-8.
pub fn read_config_text(path: &Path) -> Result<String, ConfigError> {
    let name = path.display().to_string();
    let err = |reason: String| ConfigError::new(&name, None, "", reason);
    let file = std::fs::File::open(path).map_err(|e| err(format!("cannot read file: {e}")))?;
    let mut bytes = Vec::new();
    file.take(MAX_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| err(format!("cannot read file: {e}")))?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(err(format!(
            "larger than {MAX_CONFIG_BYTES} bytes (4 MiB), the most a configuration file may \
             hold; is it a configuration file?"
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        err(format!(
            "not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!("cfg-read-{}-{name}", std::process::id()));
        std::fs::write(&p, bytes).unwrap();
        p
    }

    #[test]
    fn a_file_over_the_bound_is_refused_with_its_name() {
        let p = temp("big.toml", &vec![b'#'; MAX_CONFIG_BYTES as usize + 1]);
        let e = read_config_text(&p).unwrap_err();
        let _ = std::fs::remove_file(&p);
        assert_eq!(e.source, p.display().to_string());
        assert!(e.reason.contains("larger than"), "{e}");
    }

    #[test]
    fn an_endless_device_is_refused_without_reading_it_all() {
        let dev = Path::new("/dev/zero");
        if dev.exists() {
            let e = read_config_text(dev).unwrap_err();
            assert!(e.to_string().starts_with("/dev/zero: "), "{e}");
            assert!(e.reason.contains("larger than"), "{e}");
        }
    }

    #[test]
    fn a_file_at_the_bound_is_read() {
        let p = temp("edge.toml", &vec![b'#'; MAX_CONFIG_BYTES as usize]);
        let t = read_config_text(&p);
        let _ = std::fs::remove_file(&p);
        assert_eq!(t.map(|t| t.len()), Ok(MAX_CONFIG_BYTES as usize));
    }
}
