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

/// The tree at `root` judged under `executor`'s trust rule: `None` when it passes or the rule is
/// off (`[exec] trust = "off"`), else the first entry that fails and why.
pub fn judge(executor: &archgate_exec::Executor, root: &Path) -> Option<(PathBuf, String)> {
    let cfg = executor.config();
    if !cfg.require_root_owned {
        return None;
    }
    if !root.is_absolute() {
        return Some((root.to_path_buf(), "is not an absolute path".into()));
    }
    first_untrusted(root, cfg.person_uid)
}

/// Before one of Omarchy's programs starts: the tree it is given as `OMARCHY_PATH` (where its
/// scripts source libraries and find helpers) judged whole; refused, naming the file, when it
/// fails. Judged as each program starts — a question may have waited minutes since the route
/// was judged (attack 36 F2: a link's end created meanwhile) — and before the registry is
/// loaded by running the dispatcher, which is Omarchy's code too (attack 36 F6).
pub fn judge_given(
    executor: &archgate_exec::Executor,
    spec: &archgate_exec::CommandSpec,
) -> crate::error::Result<()> {
    let Some((_, root)) = spec.env_list().iter().find(|(k, _)| k == "OMARCHY_PATH") else {
        return Ok(());
    };
    match judge(executor, Path::new(root)) {
        None => Ok(()),
        Some((path, why)) => Err(crate::error::DesktopError::Blocked {
            command: format!(
                "{} (Omarchy at {root}: {} {why})",
                spec.display(),
                path.display()
            ),
            reason: "a file of Omarchy's tree is one another user could have written; archgate \
                     runs no code another user could have changed (fix the file's owner and \
                     mode, replacing the file, then call again)",
        }),
    }
}

/// The first entry of the tree at `root` that fails the trust rule, with why; `None` when every
/// entry passes. `person_uid`: whose files besides root's are trusted (`None`: root's alone).
pub fn first_untrusted(root: &Path, person_uid: Option<u32>) -> Option<(PathBuf, String)> {
    let trusted_owner = |uid: u32| uid == 0 || Some(uid) == person_uid;
    // The tree's own directory and the way to it: whoever controls a hop chooses the tree.
    if let Err(why) = archgate_exec::trusted_path(person_uid, root) {
        return Some((root.to_path_buf(), why.to_string()));
    }
    let mut stack = vec![root.to_path_buf()];
    // Directories reached through links, by their real path: each walked once.
    let mut walked: std::collections::BTreeSet<PathBuf> = root.canonicalize().into_iter().collect();
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
                match std::fs::metadata(&path) {
                    Ok(end) => {
                        if let Err(why) = archgate_exec::trusted_path(person_uid, &path) {
                            return Some((
                                path,
                                format!("leads to what another user could write: {why}"),
                            ));
                        }
                        // A link to a directory is walked like a directory of the tree: what
                        // a script reaches through it is the tree's (attack 36 F2).
                        if end.is_dir()
                            && let Ok(real) = path.canonicalize()
                            && walked.insert(real.clone())
                        {
                            stack.push(real);
                        }
                    }
                    Err(_) => {
                        // A link that leads nowhere yet: whoever may create its end chooses
                        // what a script reaches through it (attack 36 F2: created by another
                        // user while the question waited). Its end's nearest existing
                        // directory must be one only root or the person can write in.
                        if let Some((dir, why)) = dangling_end_open(&path, person_uid) {
                            return Some((
                                path,
                                format!(
                                    "leads to nothing yet, in {} that another user could \
                                     write: {why}",
                                    dir.display()
                                ),
                            ));
                        }
                    }
                }
                continue;
            }
            if !trusted_owner(meta.uid()) {
                return Some((path, format!("is owned by uid {}", meta.uid())));
            }
            if meta.mode() & 0o022 != 0 {
                // Refused for good while it is this inode: a descriptor another user opened now
                // outlives a later `chmod` (attack 37 F8, as for programs: `once_open`).
                archgate_exec::once_open::remember(&meta);
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

/// For a link whose end does not exist: the directory another user could create that end in,
/// with why — `None` when only root or the person could. The chain is followed to its last link
/// (attack 37 F3: `lib/x -> ~/l2 -> /tmp/absent` was judged by its first hop, the person's own
/// `~/l2`), and the nearest existing directory of where it finally leads is judged.
pub fn dangling_end_open(link: &Path, person_uid: Option<u32>) -> Option<(PathBuf, String)> {
    let mut at = link.to_path_buf();
    for _ in 0..40 {
        let target = std::fs::read_link(&at).ok()?;
        let end = at.parent().unwrap_or(Path::new("/")).join(target);
        // Text is not the disk: `..` after a directory that does not exist yet reaches, once a
        // script creates it, somewhere the text does not say (attack 38 F7).
        if end
            .components()
            .any(|c| c == std::path::Component::ParentDir)
            && std::fs::metadata(&end).is_err()
        {
            return Some((end, "a link to nothing that climbs with `..`".into()));
        }
        match std::fs::symlink_metadata(&end) {
            Ok(m) if m.file_type().is_symlink() => at = end,
            // Something is there after all (or a hop's directory is no directory): whatever it
            // is, its own judgement is `trusted_path`'s.
            Ok(_) => return None,
            Err(_) => return nearest_existing_open(&end, person_uid),
        }
    }
    Some((link.to_path_buf(), "a chain of more than 40 links".into()))
}

/// `path`'s nearest existing ancestor, when it fails the trust rule, with why: where another
/// user could create `path` (for a link's end here, for a value in `arg_files`).
pub(crate) fn nearest_existing_open(
    path: &Path,
    person_uid: Option<u32>,
) -> Option<(PathBuf, String)> {
    let mut dir = path.parent();
    while let Some(d) = dir {
        if std::fs::symlink_metadata(d).is_ok() {
            return archgate_exec::trusted_path(person_uid, d)
                .err()
                .map(|why| (d.to_path_buf(), why.to_string()));
        }
        dir = d.parent();
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
        // Replaced (a `chmod` keeps the inode, refused for good: below).
        std::fs::remove_file(lib.join("common.sh")).unwrap();
        std::fs::write(lib.join("common.sh"), "true\n").unwrap();
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
        std::fs::remove_file(lib.join("linked.sh")).unwrap();
        assert_eq!(first_untrusted(t.path(), me), None);
        // Attack 36 F2: a link to a directory is walked — a 0777 directory behind it is found.
        let ext = tempfile::tempdir().unwrap();
        std::fs::create_dir(ext.path().join("sub")).unwrap();
        std::os::unix::fs::symlink(ext.path(), lib.join("ext")).unwrap();
        assert_eq!(first_untrusted(t.path(), me), None);
        std::fs::set_permissions(
            ext.path().join("sub"),
            std::fs::Permissions::from_mode(0o777),
        )
        .unwrap();
        let (path, why) = first_untrusted(t.path(), me).expect("the open directory behind a link");
        assert_eq!(path, ext.path().canonicalize().unwrap().join("sub"));
        assert!(why.contains("writable"), "{why}");
        std::fs::remove_file(lib.join("ext")).unwrap();
        // A link to itself's parent loops no walk.
        std::os::unix::fs::symlink("..", lib.join("up")).unwrap();
        assert_eq!(first_untrusted(t.path(), me), None);
        // A link that leads nowhere: found when another user could create its end, not when
        // only the person could.
        std::os::unix::fs::symlink(open.path().join("absent.sh"), lib.join("dang.sh")).unwrap();
        let (path, why) = first_untrusted(t.path(), me).expect("a dangling link into 0777");
        assert_eq!(path, lib.join("dang.sh"));
        assert!(why.contains("leads to nothing yet"), "{why}");
        std::fs::remove_file(lib.join("dang.sh")).unwrap();
        std::os::unix::fs::symlink(t.path().join("absent/x.sh"), lib.join("dang.sh")).unwrap();
        assert_eq!(first_untrusted(t.path(), me), None);
        // Attack 37 F3: the chain is followed to its last link — the person's own link on the
        // way leads where another user could create the end.
        std::fs::remove_file(lib.join("dang.sh")).unwrap();
        let hop = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(open.path().join("later.sh"), hop.path().join("l2")).unwrap();
        std::os::unix::fs::symlink(hop.path().join("l2"), lib.join("chain.sh")).unwrap();
        let (path, why) = first_untrusted(t.path(), me).expect("a chain ending in 0777");
        assert_eq!(path, lib.join("chain.sh"));
        assert!(why.contains("leads to nothing yet"), "{why}");
        std::fs::remove_file(lib.join("chain.sh")).unwrap();
        // Attack 37 F8: a file refused as open to others stays refused while it is that inode.
        let lib_file = lib.join("common.sh");
        std::fs::set_permissions(&lib_file, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(first_untrusted(t.path(), me).is_some());
        std::fs::set_permissions(&lib_file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let (path, why) = first_untrusted(t.path(), me).expect("the same inode, fixed by chmod");
        assert_eq!(path, lib_file);
        assert!(why.contains("was writable by another user"), "{why}");
        // Replaced, it passes.
        std::fs::remove_file(&lib_file).unwrap();
        std::fs::write(&lib_file, "true\n").unwrap();
        std::fs::set_permissions(&lib_file, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(first_untrusted(t.path(), me), None);
    }
}
