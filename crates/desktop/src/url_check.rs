//! Which addresses `launch` opens: `http`, `https` and `mailto` only, with no whitespace or
//! control characters (the handler that opens them: `url_handler.rs`).

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
}
