//! `Include` patterns, expanded as pacman's `glob(3)` does in the hand-off's locale.

use std::path::{Path, PathBuf};

use crate::error::ConfProblem;

/// `Include` values may be globs (`*`, `?`) in their last component, expanded as pacman's
/// `glob(3)` with `GLOB_NOCHECK` does (attack 26 F4): a wildcard never matches a leading `.`
/// (only a pattern that starts with `.` names hidden files), and a pattern that matches nothing
/// is read as the path it is — which pacman then cannot read either. The matches are in byte
/// order; pacman's `glob(3)` sorts in its locale's collation, so a hand-off runs pacman with
/// `LC_COLLATE=C` (`tools/handoff/facts_env.rs`, attack 26 F3).
///
/// What `?` matches depends on the locale's character type (attack 29 F6; class: *the glob
/// expanded in another locale than judged*): glibc's `fnmatch` matches one *character* when the
/// name is valid in a multibyte `LC_CTYPE` (`é.conf` under `?.conf` in UTF-8) and one byte
/// otherwise (the C locale, or a name that is not valid UTF-8). A hand-off gives pacman
/// `LC_CTYPE=C.UTF-8`, which is UTF-8 where the system has that locale and C where it does not
/// (glibc's `setlocale(LC_ALL, "")` then fails as a whole): so a pattern is expanded both ways and
/// one whose files differ between them is refused ([`ConfProblem::GlobByLocale`]) — whatever
/// pacman's glob is, it reads the files judged. What archgate does not expand as `glob(3)` does
/// refuses too ([`ConfProblem::GlobNotJudged`]): a bracket expression `[…]` or a backslash (glob
/// reads both, by the locale's classes and collation), a wildcard in a directory's name.
pub(super) fn expand_glob(value: &str) -> Result<Vec<PathBuf>, ConfProblem> {
    let path = Path::new(value);
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let dir = path.parent().unwrap_or(Path::new("/"));
    if value.contains(['[', '\\']) || dir.to_string_lossy().contains(['*', '?']) {
        return Err(ConfProblem::GlobNotJudged(value.to_owned()));
    }
    if !name.contains(['*', '?']) {
        return Ok(vec![path.to_owned()]);
    }
    let hidden_too = name.starts_with('.');
    let mut found = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let file = e.file_name();
        let bytes = file.as_encoded_bytes();
        if !hidden_too && bytes.starts_with(b".") {
            continue;
        }
        let by_bytes = wildcard(name.as_bytes(), bytes);
        let by_chars = match std::str::from_utf8(bytes) {
            Ok(text) => wildcard(
                &name.chars().collect::<Vec<_>>(),
                &text.chars().collect::<Vec<_>>(),
            ),
            // Not valid in the locale: glibc matches its bytes.
            Err(_) => by_bytes,
        };
        if by_bytes != by_chars {
            return Err(ConfProblem::GlobByLocale {
                pattern: value.to_owned(),
                file: file.to_string_lossy().into_owned(),
            });
        }
        if by_bytes {
            found.push(e.path());
        }
    }
    if found.is_empty() {
        return Ok(vec![path.to_owned()]);
    }
    found.sort();
    Ok(found)
}

/// `*` and `?` over units: bytes (the C locale) or characters (a UTF-8 one).
fn wildcard<T: PartialEq + From<u8>>(pattern: &[T], name: &[T]) -> bool {
    let (star, one) = (T::from(b'*'), T::from(b'?'));
    match (pattern.first(), name.first()) {
        (None, None) => true,
        (Some(p), _) if *p == star => {
            wildcard(&pattern[1..], name) || (!name.is_empty() && wildcard(pattern, &name[1..]))
        }
        (Some(p), Some(_)) if *p == one => wildcard(&pattern[1..], &name[1..]),
        (Some(p), Some(n)) if p == n => wildcard(&pattern[1..], &name[1..]),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Attack 29 F6: `?` is one byte to glob(3) in C and one character in UTF-8 — `é.conf` (two
    /// bytes) under `?.conf` is read by pacman in the hand-off's UTF-8 locale; archgate read only
    /// `a.conf`. Now the pattern is refused: which files pacman reads depends on its locale.
    #[test]
    fn a_question_mark_that_is_a_byte_in_one_locale_and_a_character_in_another_refuses() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.conf"), "[options]\n").unwrap();
        std::fs::write(
            d.path().join("\u{e9}.conf"),
            "[options]\nSigLevel = Never\n",
        )
        .unwrap();
        let pattern = format!("{}/?.conf", d.path().display());
        assert!(
            matches!(expand_glob(&pattern), Err(ConfProblem::GlobByLocale { ref file, .. }) if file == "\u{e9}.conf"),
            "{:?}",
            expand_glob(&pattern)
        );
        // `*` reads the same files in both: UTF-8 is self-synchronising.
        let all = expand_glob(&format!("{}/*.conf", d.path().display())).unwrap();
        assert_eq!(all.len(), 2);
        // `??.conf`: `é` is two bytes, so C matches it and UTF-8 does not — refused too.
        assert!(expand_glob(&format!("{}/??.conf", d.path().display())).is_err());
        // Only ASCII names: one answer in every locale.
        std::fs::remove_file(d.path().join("\u{e9}.conf")).unwrap();
        assert_eq!(expand_glob(&pattern).unwrap(), [d.path().join("a.conf")]);
    }

    /// A name that is not UTF-8 is matched by its bytes in both (glibc's fallback), as before.
    #[test]
    fn a_name_that_is_not_text_is_matched_by_its_bytes() {
        use std::os::unix::ffi::OsStrExt;
        let d = tempfile::tempdir().unwrap();
        let odd = d.path().join(std::ffi::OsStr::from_bytes(b"b\xff.conf"));
        std::fs::write(&odd, "[options]\n").unwrap();
        assert_eq!(
            expand_glob(&format!("{}/*.conf", d.path().display())).unwrap(),
            std::slice::from_ref(&odd)
        );
        assert_eq!(
            expand_glob(&format!("{}/b?.conf", d.path().display())).unwrap(),
            [odd]
        );
    }

    /// Bracket expressions and backslashes are glob(3)'s too; archgate does not expand them.
    #[test]
    fn what_glob_reads_and_archgate_does_not_refuses() {
        for p in [
            "/etc/pacman.d/[a]*.conf",
            "/etc/pacman.d/[m]irrorlist",
            "/etc/\\*.conf",
            "/etc/*/x.conf",
        ] {
            assert!(
                matches!(expand_glob(p), Err(ConfProblem::GlobNotJudged(_))),
                "{p}"
            );
        }
    }
}
