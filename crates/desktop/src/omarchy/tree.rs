//! Omarchy's tree judged whole. Class: *trust judged from the mode*, its member *a file a trusted
//! script reaches as code* (attack 34 F4, attack 35 F1): a route's script runs helpers by name,
//! `source`s libraries in any spelling (`"$OMARCHY_PATH"/lib/x.sh`, through another library, a
//! variable), reads its defaults — and a file there that another user can write is that user's
//! code under the person's yes. Reading every spelling a script may use to reach a file is the
//! losing game (round 35 found two more within the hour); what every one of them reaches is a
//! file under `$OMARCHY_PATH`. So the tree is judged, every entry: owned by root or the person and
//! writable by neither group nor others (the trust rule program lookup uses), a link judged by
//! where it leads. A route of an Omarchy whose tree fails anywhere is refused, saying which file.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The most entries judged; a bigger tree is refused rather than half read (Omarchy 4 holds about
/// 1,500 with its git objects packed).
const MAX_ENTRIES: usize = 50_000;

/// The first entry of the tree at `root` that fails the trust rule, with why; `None` when every
/// entry passes. `person_uid`: whose files besides root's are trusted (`None`: root's alone).
pub fn first_untrusted(root: &Path, person_uid: Option<u32>) -> Option<(PathBuf, String)> {
    let trusted_owner = |uid: u32| uid == 0 || Some(uid) == person_uid;
    let mut stack = vec![root.to_path_buf()];
    let mut seen = 0usize;
    while let Some(dir) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) => return Some((dir, format!("cannot be read: {e}"))),
        };
        for entry in entries {
            seen += 1;
            if seen > MAX_ENTRIES {
                return Some((
                    root.to_path_buf(),
                    format!("holds more than {MAX_ENTRIES} entries; not judged whole"),
                ));
            }
            let Ok(entry) = entry else { continue };
            let path = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.file_type().is_symlink() {
                // Whoever owns a link chose its target: the link, and where it leads.
                if !trusted_owner(meta.uid()) {
                    return Some((path, format!("is a link owned by uid {}", meta.uid())));
                }
                if path.exists()
                    && let Err(why) = archgate_exec::trusted_path(person_uid, &path)
                {
                    return Some((
                        path,
                        format!("leads to what another user could write: {why}"),
                    ));
                }
                continue;
            }
            if !trusted_owner(meta.uid()) {
                return Some((path, format!("is owned by uid {}", meta.uid())));
            }
            if meta.mode() & 0o022 != 0 {
                return Some((
                    path,
                    format!(
                        "is writable by group or others (mode {:04o})",
                        meta.mode() & 0o7777
                    ),
                ));
            }
            if meta.is_file() && archgate_exec::once_open::was_open_to_others(&meta) {
                return Some((
                    path,
                    "was writable by another user when archgate looked".into(),
                ));
            }
            if meta.is_dir() {
                stack.push(path);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn any_file_of_the_tree_another_user_could_write_is_found() {
        let t = tempfile::tempdir().unwrap();
        // This process's uid: the owner of the directory it just made.
        let me = Some(std::fs::metadata(t.path()).unwrap().uid());
        let lib = t.path().join("lib");
        std::fs::create_dir_all(t.path().join("bin")).unwrap();
        std::fs::create_dir_all(&lib).unwrap();
        std::fs::write(lib.join("common.sh"), "true\n").unwrap();
        std::fs::write(t.path().join("bin/omarchy-x"), "#!/bin/sh\n").unwrap();
        assert_eq!(first_untrusted(t.path(), me), None);
        std::fs::set_permissions(
            lib.join("common.sh"),
            std::fs::Permissions::from_mode(0o666),
        )
        .unwrap();
        let (path, why) = first_untrusted(t.path(), me).expect("the open library");
        assert_eq!(path, lib.join("common.sh"));
        assert!(why.contains("writable"), "{why}");
        std::fs::set_permissions(
            lib.join("common.sh"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        std::fs::set_permissions(&lib, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert_eq!(
            first_untrusted(t.path(), me).map(|(p, _)| p),
            Some(lib.clone())
        );
        std::fs::set_permissions(&lib, std::fs::Permissions::from_mode(0o755)).unwrap();
        // A link to a file another user could write.
        let open = tempfile::tempdir().unwrap();
        std::fs::set_permissions(open.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        std::fs::write(open.path().join("x.sh"), "true\n").unwrap();
        std::os::unix::fs::symlink(open.path().join("x.sh"), lib.join("linked.sh")).unwrap();
        assert_eq!(
            first_untrusted(t.path(), me).map(|(p, _)| p),
            Some(lib.join("linked.sh"))
        );
    }
}
