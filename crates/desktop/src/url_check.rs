//! Which addresses `launch` opens: `http`, `https` and `mailto` only, with no whitespace or
//! control characters (the handler that opens them: `url_handler.rs`); and [`percent_decode`],
//! the one `%XX` decoder of a URL's parts (a `mailto:` field's name, a resource URI's variable).

use crate::error::{DesktopError, Result};

/// Checks a URL: `http`, `https` or `mailto`, no whitespace or control characters.
pub fn check_url(url: &str) -> Result<()> {
    let lower = url.to_ascii_lowercase();
    let ok_scheme = (lower.starts_with("https://") || lower.starts_with("http://"))
        && url.len() > 8
        || lower.starts_with("mailto:") && url.len() > 7;
    if !ok_scheme {
        return Err(DesktopError::invalid(
            "url",
            "only http, https and mailto addresses open",
        ));
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) || url.len() > 8192 {
        return Err(DesktopError::invalid(
            "url",
            "contains whitespace or control characters",
        ));
    }
    Ok(())
}

/// A URL part with its `%XX` escapes decoded: an escape of two hex digits is a byte; anything
/// else (`%` at the end, `%zz`) is kept as written; bytes that are not UTF-8 are replaced.
pub fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Ok(hex) = std::str::from_utf8(&bytes[i + 1..i + 3])
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked() {
        assert!(check_url("https://archlinux.org/").is_ok());
        assert!(check_url("mailto:someone@example.invalid").is_ok());
        for bad in [
            "file:///etc/passwd",
            "javascript:alert(1)",
            "https://a b",
            "https://",
            "-x",
        ] {
            assert!(check_url(bad).is_err(), "{bad}");
        }
    }

    /// What the launcher's `mailto:` check and the MCP resources' URI variables decode alike.
    #[test]
    fn percent_decoding_takes_only_whole_escapes() {
        assert_eq!(percent_decode("att%61ch"), "attach");
        assert_eq!(
            percent_decode("Pacman_%28Espa%C3%B1ol%29"),
            "Pacman_(Español)"
        );
        assert_eq!(percent_decode("a%2Fb"), "a/b");
        for kept in ["a%2", "%", "100%", "%zz", "ä%"] {
            assert_eq!(percent_decode(kept), kept);
        }
        assert_eq!(percent_decode("%%41"), "%A");
        assert_eq!(percent_decode("%ff"), "\u{fffd}");
    }
}
