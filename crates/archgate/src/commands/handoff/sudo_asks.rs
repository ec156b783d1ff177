//! What sudo will do, asked of sudo itself from the hand-off's terminal: whether it asks the
//! person's password for this very command or for any a route's script may run (`sudo -n -D`
//! probes in the C locale, `tools/handoff/sudo.rs`, `sudo_any.rs`), and dropping what it cached.
//! A route's script keeps nothing to drop: its sudo is archgate's asking sudo
//! (`tools/handoff/asking_sudo.rs`).

use archgate_core::exec::{CommandSpec, ExecConfig};
use std::path::PathBuf;

use crate::tools::handoff::pam;
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
pub(super) fn will_sudo_ask_for_any(
    sudo_path: &std::path::Path,
    programs: Option<&[String]>,
) -> Asks {
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
        Ok(o) => sudo_any::judge_for(
            o.status.code,
            &o.stdout_lossy(),
            &o.stderr_lossy(),
            programs,
        ),
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
        Err(_) => person_can_be_asked(),
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
        Ok(o) => match sudo::judge(o.status.code, &o.stderr_lossy()) {
            Asks::Yes => person_can_be_asked(),
            other => other,
        },
        Err(why) => Asks::Unknown(why),
    }
}

/// Whether sudo will really ask the person, beyond what the probe of the command says: sudo is
/// set up for them at all (attack 9 F5: for a user no rule names, `sudo -n` also says "a
/// password is required", and the person typed their password for nothing; `sudo -n -v` says
/// "may not run sudo" without one), their account has a password to ask for, and sudo's PAM
/// stack has no way through without one (attack 11 F4, `tools/handoff/pam/`).
pub(super) fn person_can_be_asked() -> Asks {
    match sudo_set_up() {
        Asks::Yes => match account_has_password() {
            Asks::Yes => match listed_defaults() {
                Asks::Yes => pam::will_pam_ask(),
                other => other,
            },
            other => other,
        },
        other => other,
    }
}

/// The sudoers defaults that decide whose password sudo asks and through which PAM service
/// (attack 16 F3, F3b: `pam_service`, `rootpw`, `targetpw`, `runaspw`), where sudo shows them:
/// its listing (`-n -k -l`, C locale) when it lists without a password. When listing needs a
/// password they cannot be known by the person's uid (sudoers is root's to read); SECURITY.md
/// says so and doctor's hand-off line names it.
fn listed_defaults() -> Asks {
    let sudo = match pinned::program("sudo") {
        Ok(p) => p,
        Err(e) => return Asks::Unknown(format!("sudo cannot be used: {e}")),
    };
    let spec = CommandSpec::new(sudo.to_string_lossy().into_owned())
        .args(["-n", "-k", "-l"])
        .clear_env()
        .env("LC_ALL", "C")
        .timeout(std::time::Duration::from_secs(10));
    match run_probe(spec) {
        Ok(o) if o.status.code == Some(0) => match sudo_any::deciding_defaults(&o.stdout_lossy()) {
            Some(why) => Asks::Unknown(why),
            None => Asks::Yes,
        },
        // "a password is required" (or anything else): the command's own probe judges.
        _ => Asks::Yes,
    }
}

/// `sudo -n -v` in the C locale: "may not run sudo" means no rule names the person.
fn sudo_set_up() -> Asks {
    let sudo = match pinned::program("sudo") {
        Ok(p) => p,
        Err(e) => return Asks::Unknown(format!("sudo cannot be used: {e}")),
    };
    let spec = CommandSpec::new(sudo.to_string_lossy().into_owned())
        .args(["-n", "-v"])
        .clear_env()
        .env("LC_ALL", "C")
        .timeout(std::time::Duration::from_secs(10));
    match run_probe(spec) {
        Ok(o) => validation(o.status.code, &o.stderr_lossy()),
        Err(why) => Asks::Unknown(why),
    }
}

/// What `sudo -n -v` said: "may not run sudo" (no rule names the person) refuses; anything else
/// leaves the judgement to the command's own probe.
fn validation(code: Option<i32>, stderr: &str) -> Asks {
    if code != Some(0) && stderr.contains("may not run sudo") {
        Asks::No(
            "sudo is not set up for you: no sudoers rule names your user, so your password would be asked for nothing"
                .into(),
        )
    } else {
        Asks::Yes
    }
}

/// Whether the person's account has a password for sudo to ask (attack 9 F2; class: *sudo's
/// probe answers for sudoers, PAM decides*): `sudo -n` says "a password is required" from
/// sudoers alone, but where the account's password is empty PAM's `pam_unix nullok` (Arch's and
/// Debian's default) lets sudo through without asking, and a keystroke alone runs the command.
/// Asked of `passwd -S` (the person's own status, in the C locale): `NP` refuses; what cannot
/// be read refuses too.
fn account_has_password() -> Asks {
    let passwd = match pinned::program("passwd") {
        Ok(p) => p,
        Err(e) => return Asks::Unknown(format!("passwd cannot be used: {e}")),
    };
    let spec = CommandSpec::new(passwd.to_string_lossy().into_owned())
        .arg("-S")
        .clear_env()
        .env("LC_ALL", "C")
        .timeout(std::time::Duration::from_secs(10));
    match run_probe(spec) {
        Ok(o) if o.status.code == Some(0) => password_status(&o.stdout_lossy()),
        Ok(o) => Asks::Unknown(format!("passwd -S said: {}", o.stderr_lossy().trim())),
        Err(why) => Asks::Unknown(why),
    }
}

/// `passwd -S`'s line (`NAME STATUS DATE …`, shadow-utils): `P` (a usable password) and `L` (a
/// locked one: sudo asks and cannot succeed) ask; `NP` (none) does not.
fn password_status(line: &str) -> Asks {
    match line.split_whitespace().nth(1) {
        Some("P" | "PS" | "L" | "LK") => Asks::Yes,
        Some("NP") => Asks::No(
            "your account has no password (passwd -S: NP), so sudo lets the command through without asking"
                .into(),
        ),
        _ => Asks::Unknown(format!("passwd -S said: {}", line.trim())),
    }
}

/// Runs a sudo probe pinned to root's sudo, from the helper's synchronous code.
pub(super) fn run_probe(spec: CommandSpec) -> Result<archgate_core::exec::Output, String> {
    let spec = pinned::executor().pin(spec).map_err(|e| e.to_string())?;
    let h = tokio::runtime::Handle::try_current().map_err(|_| "no runtime".to_owned())?;
    tokio::task::block_in_place(|| h.block_on(archgate_core::exec::run_for_person(spec)))
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_account_without_a_password_is_one_sudo_does_not_ask_for() {
        // Lines in the shape shadow-utils' `passwd -S` prints (Debian 12 and Arch).
        assert_eq!(
            password_status("alice P 2026-12-05 0 99999 7 -1\n"),
            Asks::Yes
        );
        assert_eq!(
            password_status("alice L 2026-12-05 0 99999 7 -1\n"),
            Asks::Yes
        );
        assert!(matches!(
            password_status("alice NP 2026-12-05 0 99999 7 -1\n"),
            Asks::No(why) if why.contains("no password")
        ));
        assert!(matches!(password_status(""), Asks::Unknown(_)));
        // `sudo -n -v` as sudo 1.9 words it for a user no rule names, and for one it would ask.
        assert!(matches!(
            validation(Some(1), "Sorry, user alice may not run sudo on vm.\n"),
            Asks::No(why) if why.contains("not set up")
        ));
        assert_eq!(
            validation(Some(1), "sudo: a password is required\n"),
            Asks::Yes
        );
        assert!(matches!(
            password_status("passwd: unknown"),
            Asks::Unknown(_)
        ));
    }
}
