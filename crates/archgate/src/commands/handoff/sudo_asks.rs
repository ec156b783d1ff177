//! What sudo will do, asked of sudo itself from the hand-off's terminal: whether it asks the
//! person's password for this very command or for any a route's script may run (`sudo -n -D`
//! probes in the C locale, `tools/handoff/sudo.rs`, `sudo_any.rs`), whether it keeps that password
//! to this terminal alone, and dropping what it cached.

use archgate_core::exec::{CommandSpec, ExecConfig};
use std::path::PathBuf;

use super::super::out;
use super::checks::with_facts;
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

/// For a route's script, which runs sudo itself (attack 7 F5; class: *the person's password,
/// asked for the hand-off, usable by other programs of theirs while it runs*): sudo's credential
/// cached before is dropped, the person's password is asked once here (`sudo -v`), and sudo is
/// then asked, from a new session without this terminal (`setsid --wait sudo -n -v`), whether
/// it would act without a password there. Where it would (`timestamp_type=global`,
/// `!tty_tickets`), any program of the person's — the agent's shell — could use the password
/// while the script runs: refused, nothing ran. Otherwise the script's own `sudo` finds the
/// credential of this terminal alone.
pub(super) async fn sudo_stays_in_this_terminal() -> Result<(), String> {
    forget_sudo().await;
    let sudo = pinned::program("sudo").map_err(|e| format!("sudo cannot be used: {e}"))?;
    let sudo = sudo.to_string_lossy().into_owned();
    out("sudo asks your password once, before the script runs:");
    let ask = pinned::executor()
        .pin(with_facts(CommandSpec::new(sudo.clone()).arg("-v")))
        .map_err(|e| format!("sudo cannot be used: {e}"))?;
    let asked = archgate_core::exec::run_for_person_in_terminal(
        pinned::executor().config().clone(),
        ask,
        0,
    )
    .await
    .map_err(|e| format!("sudo could not ask: {e}"))?;
    if asked.status.code != Some(0) {
        return Err("sudo did not take the password".into());
    }
    let setsid = pinned::program("setsid")
        .map_err(|e| format!("setsid is needed to check where sudo keeps your password: {e}"))?;
    let probe = CommandSpec::new(setsid.to_string_lossy().into_owned())
        .args(["--wait".to_owned(), sudo, "-n".into(), "-v".into()])
        .clear_env()
        .env("LC_ALL", "C")
        .timeout(std::time::Duration::from_secs(10));
    match run_probe(probe) {
        Ok(o) if o.status.code == Some(0) => Err(
            "sudo keeps your password for programs outside this terminal (sudoers has \
             timestamp_type=global or !tty_tickets): while the script ran, any program of yours \
             could use it, so archgate does not hand a script off here"
                .into(),
        ),
        Ok(o) if o.stderr_lossy().contains("a password is required") => Ok(()),
        Ok(o) => Err(format!(
            "could not tell where sudo keeps your password (sudo said: {})",
            o.stderr_lossy().trim()
        )),
        Err(why) => Err(format!(
            "could not tell where sudo keeps your password: {why}"
        )),
    }
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
