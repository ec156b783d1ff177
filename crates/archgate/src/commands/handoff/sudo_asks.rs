//! What sudo will do, asked of sudo itself from the hand-off's terminal: whether it asks the
//! person's password for this very command or for any a route's script may run (`sudo -n -D`
//! probes in the C locale, `tools/handoff/sudo.rs`, `sudo_any.rs`), and dropping what it cached.
//! A route's script keeps nothing to drop: its sudo is archgate's asking sudo
//! (`tools/handoff/asking_sudo.rs`).

use archgate_core::exec::{CommandSpec, ExecConfig};
use std::path::PathBuf;

use crate::tools::handoff::pinned;
use crate::tools::handoff::sudo::{self, Asks};
use crate::tools::handoff::sudo_any;

/// The directory of a route's script (named by its absolute path).
pub(super) fn script_dir_of(script: &str) -> PathBuf {
    std::path::Path::new(script)
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default()
}

/// The file sudo runs for `name` as a script wrote it: an absolute path, or a name found in
/// root's directories or the script's own (root's alone). `None` for what names no such program
/// (a variable's name): sudo cannot be asked about it, and the listing's judgement stands.
pub(super) fn sudo_program(name: &str, script_dir: &std::path::Path) -> Option<PathBuf> {
    if let Ok(p) = pinned::program(name) {
        return Some(p);
    }
    if name.contains('/') {
        return None;
    }
    let in_dir = script_dir.join(name);
    pinned::root_file(&in_dir).ok().map(|_| in_dir)
}

/// `sudo -k` in this terminal's session: sudo keeps its credentials per terminal, so it runs
/// where the script does (the terminal's foreground group), dropping any it cached here.
pub(super) async fn forget_sudo() {
    let Ok(sudo) = pinned::program("sudo") else {
        return;
    };
    let spec = CommandSpec::new(sudo.to_string_lossy().into_owned()).arg("-k");
    let _ = archgate_core::exec::run_for_person_in_terminal(ExecConfig::default(), spec, 0).await;
}

/// Whether sudo will ask for every command a route's script may run with it: sudo's listing
/// (`-n -k -l`, in the C locale: its words are judged) with no entry that skips the password
/// (`tools/handoff/sudo_any.rs`), and the exact probe of the hand-off's other commands for
/// pacman itself, which the listing may not show a `Defaults!` entry for (attack 5b F3).
pub(super) fn will_sudo_ask_for_any(sudo_path: &std::path::Path) -> Asks {
    if nix::unistd::getuid().is_root() {
        return Asks::No("you are root, and sudo asks root for no password".into());
    }
    let sudo = sudo_path.to_string_lossy().into_owned();
    let spec = CommandSpec::new(sudo.clone())
        .args(["-n", "-k", "-l"])
        .clear_env()
        .env("LC_ALL", "C")
        .timeout(std::time::Duration::from_secs(10));
    let out = run_probe(spec);
    let listed = match out {
        Ok(o) => sudo_any::judge(o.status.code, &o.stdout_lossy(), &o.stderr_lossy()),
        Err(why) => Asks::Unknown(why),
    };
    if listed != Asks::Yes {
        return listed;
    }
    match pinned::program("pacman") {
        Ok(pacman) => will_sudo_ask(&[
            sudo,
            "-k".into(),
            "--".into(),
            pacman.to_string_lossy().into_owned(),
            "-V".into(),
        ]),
        Err(_) => Asks::Yes,
    }
}

/// Asks sudo whether it would ask for *this* command: the exact argv with `-n` and a directory
/// that does not exist (`tools/handoff/sudo.rs`), in the C locale (sudo's words are judged).
pub(super) fn will_sudo_ask(argv: &[String]) -> Asks {
    if nix::unistd::getuid().is_root() {
        return Asks::No("you are root, and sudo asks root for no password".into());
    }
    let Some(probe) = sudo::probe_argv(argv) else {
        return Asks::Unknown("not a `sudo -k -- PROGRAM` command".into());
    };
    let mut probe = probe.into_iter();
    let spec = CommandSpec::new(probe.next().unwrap_or_default())
        .args(probe)
        // Nothing of the session's language: sudo's words are judged (F9).
        .clear_env()
        .env("LC_ALL", "C")
        .timeout(std::time::Duration::from_secs(10));
    let out = run_probe(spec);
    match out {
        Ok(o) => sudo::judge(o.status.code, &o.stderr_lossy()),
        Err(why) => Asks::Unknown(why),
    }
}

/// Runs a sudo probe pinned to root's sudo, from the helper's synchronous code.
pub(super) fn run_probe(spec: CommandSpec) -> Result<archgate_core::exec::Output, String> {
    let spec = pinned::executor().pin(spec).map_err(|e| e.to_string())?;
    let h = tokio::runtime::Handle::try_current().map_err(|_| "no runtime".to_owned())?;
    tokio::task::block_in_place(|| h.block_on(archgate_core::exec::run_for_person(spec)))
        .map_err(|e| e.to_string())
}
