//! Will `sudo` ask the person's password for *this* command? Asked of sudo itself, exactly.
//!
//! A keystroke is not presence: a same-user process can type into the focused terminal through
//! the compositor's virtual keyboard. What protects a hand-off is sudo's password, so a hand-off
//! runs only where sudo will ask for it.
//!
//! Class (attack 5b, F3 and F9): *sudo's decision for one command predicted from another query,
//! in human words*. `sudo -l` is governed by `listpw`, not by the command's rule, and does not
//! show `Defaults!CMD`, `Defaults>runas` or `Defaults@host`; and its words are translated. So the
//! helper asks sudo about the exact invocation it will run: the same user, host, runas and
//! argv, with `-n` (never prompt) and `-D` naming a directory that does not exist:
//!
//! ```text
//! /usr/bin/sudo -k -n -D /nonexistent/archgate-sudo-probe -- /usr/bin/pacman …   (env: LC_ALL=C only)
//! ```
//!
//! sudo looks up the rule for that argv and authenticates as the rule says *before* it judges
//! `-D`, so (sudo 1.9.13, run here with a test user, 2026-12-06):
//!
//! - `sudo: a password is required` (exit 1): sudo would ask — the hand-off may go on;
//! - `you are not permitted to use the -D option` or `unable to change directory to
//!   /nonexistent/…`: sudo went past authentication without a password (`NOPASSWD`,
//!   `!authenticate`, `Defaults!CMD …`): refused; and the command never ran (the `-D` refusal or
//!   the failed change of directory stops sudo before it executes anything);
//! - anything else (another message, exit 0, a signal, sudo missing): *could not tell*, refused.
//!
//! Cached credentials never apply: `-k` here and in the command itself.

/// The directory the probe names: it never exists (`/nonexistent` is the conventional home of
/// users without one; the leaf is archgate's).
pub const PROBE_DIR: &str = "/nonexistent/archgate-sudo-probe";

/// What sudo did with the probe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asks {
    /// sudo will ask for the password.
    Yes,
    /// sudo would run it without a password; the reason says how that was seen.
    No(String),
    /// Could not tell; the reason is sudo's answer.
    Unknown(String),
}

/// The probe's argv for the hand-off command `argv` (`SUDO -k -- PROGRAM ARGS…`): `SUDO -k -n
/// -D PROBE_DIR -- PROGRAM ARGS…`. None when `argv` is not such a command.
pub fn probe_argv(argv: &[String]) -> Option<Vec<String>> {
    let [sudo, k, dashes, rest @ ..] = argv else {
        return None;
    };
    if k != "-k" || dashes != "--" || rest.is_empty() {
        return None;
    }
    let mut v = vec![
        sudo.clone(),
        "-k".into(),
        "-n".into(),
        "-D".into(),
        PROBE_DIR.into(),
        "--".into(),
    ];
    v.extend(rest.iter().cloned());
    Some(v)
}

/// Judges the probe's exit status and stderr (sudo's words in the C locale).
pub fn judge(exit: Option<i32>, stderr: &str) -> Asks {
    let said = || -> String { stderr.trim().chars().take(400).collect() };
    if exit != Some(1) {
        return Asks::Unknown(format!("exit {exit:?}: {}", said()));
    }
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    match lines.first().copied() {
        Some("sudo: a password is required") if lines.len() == 1 => Asks::Yes,
        Some(l)
            if l.starts_with("sudo: you are not permitted to use the -D option")
                || l.starts_with(&format!("sudo: unable to change directory to {PROBE_DIR}")) =>
        {
            Asks::No(format!(
                "sudo went past its password check for this very command without asking: a NOPASSWD rule, \
                 `!authenticate` or a Defaults entry for it applies (sudo said: {})",
                said()
            ))
        }
        _ => Asks::Unknown(said()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_probe_is_the_exact_command_with_never_prompt_and_a_directory_that_is_not() {
        let cmd = argv(&[
            "/usr/bin/sudo",
            "-k",
            "--",
            "/usr/bin/pacman",
            "-S",
            "--noconfirm",
            "--",
            "x",
        ]);
        assert_eq!(
            probe_argv(&cmd).unwrap(),
            argv(&[
                "/usr/bin/sudo",
                "-k",
                "-n",
                "-D",
                PROBE_DIR,
                "--",
                "/usr/bin/pacman",
                "-S",
                "--noconfirm",
                "--",
                "x"
            ])
        );
        assert!(probe_argv(&argv(&["/usr/bin/sudo", "--", "/usr/bin/pacman"])).is_none());
        assert!(!std::path::Path::new(PROBE_DIR).exists());
    }

    // sudo 1.9.13's words, as it printed them here for each sudoers shape (2026-12-06).
    #[test]
    fn a_password_required_for_this_command_means_sudo_will_ask() {
        assert_eq!(judge(Some(1), "sudo: a password is required\n"), Asks::Yes);
    }

    #[test]
    fn sudo_passing_its_password_check_refuses_whatever_the_rule_looks_like() {
        // `NOPASSWD: /usr/bin/pacman`, `Defaults!/usr/bin/pacman !authenticate`, `listpw=always`
        // with NOPASSWD, `NOPASSWD: ALL`: the -D refusal.
        let d = "sudo: you are not permitted to use the -D option with /usr/bin/pacman\n";
        assert!(matches!(judge(Some(1), d), Asks::No(_)));
        // With `runcwd=*` (or `CWD=*`) the change of directory fails instead.
        let c = format!(
            "sudo: unable to change directory to {PROBE_DIR}: No such file or directory\n\
             sudo: unable to execute /usr/bin/pacman: No such file or directory\n"
        );
        assert!(matches!(judge(Some(1), &c), Asks::No(_)));
    }

    #[test]
    fn anything_unrecognised_is_could_not_tell_never_will_ask() {
        // A translated answer (the probe runs in the C locale; should one come through anyway).
        for (exit, err) in [
            (Some(1), "sudo: Ein Passwort ist notwendig\n"),
            (
                Some(1),
                "sudo: unable to resolve host vm\nsudo: a password is required\n",
            ),
            (Some(0), ""),
            (None, ""),
            (
                Some(1),
                "sudo: account validation failure, is your account locked?\n",
            ),
        ] {
            match judge(exit, err) {
                Asks::Unknown(_) => {}
                other => panic!("{exit:?} {err:?}: {other:?}"),
            }
        }
    }
}
