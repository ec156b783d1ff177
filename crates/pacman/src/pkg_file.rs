//! A package file's name as pacman and repo-add write it: `name-ver-rel-arch.pkg.tar[.ext]`. Read
//! for the cache (`cache.rs`) and for the Arch Linux Archive's listings (`ala.rs`).

/// `name-ver-rel-arch.pkg.tar[.ext]` → (name, version, arch).
pub fn parse_file_name(file: &str) -> Option<(&str, String, &str)> {
    let stem = match file.find(".pkg.tar") {
        Some(i) => {
            let tail = &file[i + ".pkg.tar".len()..];
            // `.pkg.tar` or `.pkg.tar.<compression>`, nothing after (no .sig, .part).
            let ok = tail.is_empty()
                || (tail.starts_with('.')
                    && tail.len() > 1
                    && tail[1..].bytes().all(|b| b.is_ascii_alphanumeric()));
            if !ok {
                return None;
            }
            &file[..i]
        }
        None => return None,
    };
    let mut parts = stem.rsplitn(4, '-');
    let arch = parts.next()?;
    let rel = parts.next()?;
    let ver = parts.next()?;
    let name = parts.next()?;
    if [arch, rel, ver, name].iter().any(|s| s.is_empty()) {
        return None;
    }
    Some((name, format!("{ver}-{rel}"), arch))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_as_pacman_writes_them() {
        assert_eq!(
            parse_file_name("editor-one-2:3.0-1-x86_64.pkg.tar.zst"),
            Some(("editor-one", "2:3.0-1".to_owned(), "x86_64"))
        );
        assert_eq!(
            parse_file_name("a-b-c-1.0-1-any.pkg.tar"),
            Some(("a-b-c", "1.0-1".to_owned(), "any"))
        );
        assert_eq!(parse_file_name("x-1.0-1-any.pkg.tar.zst.sig"), None);
        assert_eq!(parse_file_name("x-1.0-1-any.pkg.tar.zst.part"), None);
        assert_eq!(parse_file_name("x-1.0-any.pkg.tar.zst"), None);
        assert_eq!(parse_file_name("notes.txt"), None);
    }
}
