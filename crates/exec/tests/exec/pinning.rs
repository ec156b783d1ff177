//! What is approved is what runs (issue 33, item 9): a program is pinned by the file, not the
//! path. `Executor::pin` opens the program when it is judged and digests it (and a script's
//! interpreter); the permit runs it only while its path still names that file with that content.
//! The attacker here renames a new script over the pinned path, rewrites it in place, or swaps
//! the interpreter its `#!` line names — each after the pin, as between a question and a yes.
//!
//! The programs are real scripts in a directory the test creates under the target directory
//! (trusted when its chain is owned by root or the uid running the tests, as in CI and on a
//! person's machine; else the ownership check is left off, which pinning does not depend on).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use archgate_exec::{Change, CommandSpec, ExecConfig, ExecError, Executor, FilePin, Permit};

use crate::support::*;

struct Bin {
    dir: tempfile::TempDir,
    cfg: ExecConfig,
}

impl Bin {
    fn new() -> Bin {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
        set_mode(dir.path(), 0o755);
        let me = nix::unistd::geteuid().as_raw();
        let trusted = dir.path().ancestors().all(|p| {
            std::fs::metadata(p)
                .is_ok_and(|m| (m.uid() == 0 || m.uid() == me) && m.mode() & 0o022 == 0)
        });
        let cfg = ExecConfig {
            search_dirs: vec![dir.path().to_path_buf(), PathBuf::from("/usr/bin")],
            require_root_owned: trusted,
            ..config()
        };
        Bin { dir, cfg }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A script written beside its final name and renamed into place, as an installer does.
    fn script(&self, name: &str, text: &str) -> PathBuf {
        let tmp = self.path(&format!(".{name}.new"));
        std::fs::write(&tmp, text).unwrap();
        set_mode(&tmp, 0o755);
        let p = self.path(name);
        std::fs::rename(&tmp, &p).unwrap();
        p
    }

    fn executor(&self) -> Executor {
        Executor::new(self.cfg.clone())
    }

    /// The command pinned as the gate pins it, and a permit bound to it.
    fn pinned(&self, spec: CommandSpec) -> (CommandSpec, Permit) {
        let pinned = self.executor().pin(spec).expect("pins");
        let permit = Permit::for_tests(self.cfg.clone()).bound_to(vec![pinned.clone()]);
        (pinned, permit)
    }
}

fn changed(e: ExecError) -> (PathBuf, Change) {
    assert_eq!(e.kind(), "changed_since_approval", "{e}");
    match e {
        ExecError::Changed { path, change } => (path, change),
        other => panic!("{other}"),
    }
}

#[tokio::test]
async fn a_script_renamed_over_the_pinned_path_never_runs() {
    let bin = Bin::new();
    let marker = bin.path("ran");
    let prog = bin.script(
        "omarchy-hello",
        &format!("#!/bin/sh\necho approved > '{}'\n", marker.display()),
    );
    let (pinned, permit) = bin.pinned(CommandSpec::new("omarchy-hello"));
    assert_eq!(pinned.program(), prog.to_str().unwrap());
    assert_eq!(pinned.pinned().unwrap().path(), prog);

    bin.script(
        "omarchy-hello",
        &format!("#!/bin/sh\necho swapped > '{}'\n", marker.display()),
    );
    let err = permit.run(pinned.clone()).await.unwrap_err();
    assert!(
        err.to_string().contains(&prog.display().to_string()),
        "{err}"
    );
    assert!(err.to_string().contains("another file"), "{err}");
    assert_eq!(changed(err), (prog.clone(), Change::Replaced));
    // The tool building its command again by name is refused the same way, detached too.
    let by_name = permit.run(CommandSpec::new("omarchy-hello")).await;
    assert_eq!(changed(by_name.unwrap_err()).1, Change::Replaced);
    let detached = permit.spawn_detached(pinned.clone()).unwrap_err();
    assert_eq!(changed(detached).1, Change::Replaced);
    // An unbound permit honours a pinned spec too.
    let unbound = Permit::for_tests(bin.cfg.clone()).run(pinned).await;
    assert_eq!(changed(unbound.unwrap_err()).1, Change::Replaced);
    assert!(!marker.exists(), "the swapped script ran");
}

#[tokio::test]
async fn a_script_rewritten_in_place_never_runs_and_an_unchanged_one_does() {
    let bin = Bin::new();
    let prog = bin.script("omarchy-hello", "#!/bin/sh\necho approved\n");
    let (pinned, permit) = bin.pinned(CommandSpec::new("omarchy-hello"));
    let out = permit.run(pinned.clone()).await.expect("unchanged: runs");
    assert_eq!(out.stdout_lossy(), "approved\n");
    assert_eq!(out.program, prog);

    let ino = std::fs::metadata(&prog).unwrap().ino();
    std::fs::write(&prog, "#!/bin/sh\necho swapped!\n").unwrap();
    assert_eq!(std::fs::metadata(&prog).unwrap().ino(), ino, "same inode");
    let err = permit.run(pinned).await.unwrap_err();
    assert_eq!(changed(err), (prog, Change::Rewritten));
}

#[tokio::test]
async fn a_removed_program_is_refused_as_removed() {
    let bin = Bin::new();
    let prog = bin.script("omarchy-hello", "#!/bin/sh\necho approved\n");
    let (pinned, permit) = bin.pinned(CommandSpec::new("omarchy-hello"));
    std::fs::remove_file(&prog).unwrap();
    assert_eq!(
        changed(permit.run(pinned).await.unwrap_err()),
        (prog, Change::Removed)
    );
}

#[tokio::test]
async fn the_interpreter_a_script_names_is_pinned_too() {
    let bin = Bin::new();
    let sh = bin.path("mysh");
    std::fs::copy("/usr/bin/sh", &sh).unwrap();
    set_mode(&sh, 0o755);
    let marker = bin.path("ran");
    bin.script(
        "omarchy-hello",
        &format!(
            "#!{}\necho approved > '{}'\n",
            sh.display(),
            marker.display()
        ),
    );
    let (pinned, permit) = bin.pinned(CommandSpec::new("omarchy-hello"));
    let interp = pinned.pinned().unwrap().interpreter().expect("a script");
    assert_eq!(interp.path(), sh);
    assert!(interp.interpreter().is_none());

    // Another interpreter renamed over the one the script names: the script is unchanged, the
    // program that would read it is not.
    bin.script(
        "mysh",
        &format!("#!/bin/sh\necho swapped > '{}'\n", marker.display()),
    );
    let err = permit.run(pinned).await.unwrap_err();
    assert_eq!(changed(err), (sh, Change::Replaced));
    assert!(!marker.exists());
}

#[tokio::test]
async fn an_interpreter_named_through_a_link_is_pinned_through_the_link() {
    let bin = Bin::new();
    let dir = bin.dir.path().canonicalize().unwrap();
    let marker = bin.path("ran");
    std::fs::copy("/usr/bin/sh", dir.join("sh-a")).unwrap();
    set_mode(&dir.join("sh-a"), 0o755);
    // Another interpreter, which does something else with the script it is given.
    bin.script(
        "sh-b",
        &format!("#!/bin/sh\necho swapped > '{}'\n", marker.display()),
    );
    let link = dir.join("sh");
    std::os::unix::fs::symlink(dir.join("sh-a"), &link).unwrap();
    bin.script(
        "omarchy-hello",
        &format!(
            "#!{}\necho approved > '{}'\n",
            link.display(),
            marker.display()
        ),
    );
    let (pinned, permit) = bin.pinned(CommandSpec::new("omarchy-hello"));
    assert_eq!(
        pinned.pinned().unwrap().interpreter().unwrap().path(),
        dir.join("sh-a")
    );
    // The link now leads to another interpreter; sh-a itself is untouched.
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(dir.join("sh-b"), &link).unwrap();
    let err = permit.run(pinned).await.unwrap_err();
    assert_eq!(changed(err), (link, Change::Replaced));
    assert!(!marker.exists());
}

/// Pinned programs still run by their path: a script sees its own path as `$0` and
/// `${BASH_SOURCE[0]}` (Omarchy's `omarchy` finds its bin directory that way) and can source a
/// sibling next to it; `ps` names it by its own name.
#[tokio::test]
async fn a_pinned_script_sees_its_own_path_and_sources_its_siblings() {
    let bin = Bin::new();
    std::fs::write(bin.path("lib.sh"), "LIBVAL=from-the-sibling\n").unwrap();
    let prog = bin.script(
        "omarchy-hello",
        "#!/bin/bash\nhere=$(cd -- \"$(dirname -- \"${BASH_SOURCE[0]}\")\" && pwd)\n\
         . \"$here/lib.sh\"\nprintf '%s|%s|%s|%s\\n' \"$0\" \"$here\" \"$LIBVAL\" \"$(cat /proc/$$/comm)\"\n",
    );
    let (pinned, permit) = bin.pinned(CommandSpec::new("omarchy-hello"));
    let out = permit.run(pinned).await.expect("runs");
    let dir = bin.dir.path().canonicalize().unwrap();
    assert_eq!(
        out.stdout_lossy(),
        format!(
            "{}|{}|from-the-sibling|omarchy-hello\n",
            prog.display(),
            dir.display()
        ),
        "{}",
        out.stderr_lossy()
    );
}

#[test]
fn file_pins_see_every_way_a_file_can_change() {
    let bin = Bin::new();
    let dir = bin.dir.path().canonicalize().unwrap();
    let image = dir.join("wall.png");
    std::fs::write(&image, b"the image the person saw").unwrap();
    let pin = FilePin::open(&image).expect("pins");
    assert_eq!(pin.path(), image);
    assert_eq!(pin.check(), Ok(()));
    assert_eq!(pin.sha256().unwrap().len(), 64);

    // Rewritten in place, same length.
    std::fs::write(&image, b"the image nobody ever saw").unwrap();
    assert_eq!(pin.check(), Err(Change::Rewritten));

    // Replaced by a link to another file (archgate's token, say).
    let pin = FilePin::open(&image).unwrap();
    let secret = dir.join("token");
    std::fs::write(&secret, b"secret").unwrap();
    std::fs::remove_file(&image).unwrap();
    std::os::unix::fs::symlink(&secret, &image).unwrap();
    assert_eq!(pin.check(), Err(Change::Replaced));

    // Removed.
    std::fs::remove_file(&image).unwrap();
    assert_eq!(pin.check(), Err(Change::Removed));

    // A directory on the way turned into a link to a copy: the path no longer leads to the file.
    let sub = dir.join("Pictures");
    std::fs::create_dir(&sub).unwrap();
    let inside = sub.join("wall.png");
    std::fs::write(&inside, b"x").unwrap();
    let pin = FilePin::open(&inside).unwrap();
    let elsewhere = dir.join("elsewhere");
    std::fs::rename(&sub, &elsewhere).unwrap();
    std::fs::create_dir(dir.join("copy")).unwrap();
    std::fs::write(dir.join("copy/wall.png"), b"x").unwrap();
    std::os::unix::fs::symlink(dir.join("copy"), &sub).unwrap();
    assert_eq!(pin.check(), Err(Change::Replaced));

    // A directory is pinned by its inode.
    let pin = FilePin::open(&elsewhere).unwrap();
    assert!(pin.sha256().is_none());
    assert_eq!(pin.check(), Ok(()));
}

#[test]
fn what_cannot_be_pinned_is_refused_without_being_opened() {
    // A link (not canonical), a relative path, a device: never pinned.
    let bin = Bin::new();
    let dir = bin.dir.path().canonicalize().unwrap();
    std::os::unix::fs::symlink("/usr/bin/true", dir.join("link")).unwrap();
    for p in [dir.join("link"), PathBuf::from("usr/bin/true")] {
        let e = FilePin::open(&p).unwrap_err();
        assert_eq!(
            e.kind(),
            std::io::ErrorKind::InvalidInput,
            "{}: {e}",
            p.display()
        );
    }
    let e = FilePin::open(Path::new("/dev/null")).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{e}");
}
