//! Cutting user-given text quoted in error messages: a value, key or field
//! of any length (a fuzzed file may hold one of megabytes) is shown by its
//! first [`CLIP_CHARS`] characters and its length, so an error message stays
//! a line long.

/// Characters of a long value kept in an error message.
pub const CLIP_CHARS: usize = 64;

/// `text` itself when at most [`CLIP_CHARS`] characters long, else its
/// first [`CLIP_CHARS`] characters followed by `…(N bytes)`, `N` being the
/// length of the whole text.
pub fn clip(text: &str) -> String {
    match text.char_indices().nth(CLIP_CHARS) {
        None => text.to_string(),
        Some((end, _)) => format!("{}…({} bytes)", &text[..end], text.len()),
    }
}

/// `message` with every run quoted in backticks or double quotes that is
/// longer than [`CLIP_CHARS`] cut by [`clip`]: for messages built by other
/// code (serde, TOML) that quote a value whole.
pub fn clip_quoted(message: &str) -> String {
    if message.len() <= CLIP_CHARS {
        return message.to_string();
    }
    let mut out = String::with_capacity(message.len().min(1024));
    let mut rest = message;
    while let Some(open) = rest.find(['`', '"']) {
        let quote = &rest[open..open + 1];
        out.push_str(&rest[..=open]);
        let body = &rest[open + 1..];
        match body.find(quote) {
            Some(close) => {
                out.push_str(&clip(&body[..close]));
                out.push_str(quote);
                rest = &body[close + 1..];
            }
            None => {
                out.push_str(&clip(body));
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_kept_whole() {
        assert_eq!(clip("geometry.channels"), "geometry.channels");
        let exact = "x".repeat(CLIP_CHARS);
        assert_eq!(clip(&exact), exact);
    }

    #[test]
    fn long_text_keeps_its_head_and_says_its_length() {
        let long = "é".repeat(5_000_000);
        let c = clip(&long);
        assert!(c.starts_with(&"é".repeat(CLIP_CHARS)), "{c}");
        assert!(c.ends_with("…(10000000 bytes)"), "{c}");
        assert!(c.chars().count() < CLIP_CHARS + 20);
    }

    #[test]
    fn quoted_runs_are_cut_and_the_rest_kept() {
        let v = "a".repeat(1000);
        let m = clip_quoted(&format!(
            "unknown variant `{v}`, expected `normal` or \"{v}\""
        ));
        assert!(
            m.starts_with(&format!(
                "unknown variant `{}…(1000 bytes)`",
                &v[..CLIP_CHARS]
            )),
            "{m}"
        );
        assert!(m.contains(", expected `normal` or \""), "{m}");
        assert!(m.len() < 250, "{m}");
        let unclosed = clip_quoted(&format!("bad `{v}"));
        assert!(unclosed.ends_with("…(1000 bytes)"), "{unclosed}");
        let plain = format!("a reason of more than {CLIP_CHARS} characters, {v}, none quoted");
        assert_eq!(clip_quoted(&plain), plain);
    }
}
