//! What the journal shows of the launchers that log the command lines they start (attack 19
//! F2; class: *a launcher or session manager logs every command it starts*).
//!
//! uwsm (Omarchy starts every keybinding, web app, editor and terminal app through
//! `uwsm-app -- CMD ARGS`): its app daemon (`wayland-wm-app-daemon.service`,
//! `SyslogIdentifier=uwsm_app-daemon`, stdout to the journal) prints each request it serves,
//! `received: <the client's arguments, shell-quoted>` and `sent: <the shell code it answers>`
//! (`exec systemd-run --user … -- CMD ARGS`, or `error '<message with the arguments>' N`,
//! `message '…'`, `pong`); journald makes an entry of each line. Its other units
//! (`uwsm_env-preloader`, `uwsm_waitenv`, `uwsm_bindpid`) and the compositor's
//! (`uwsm_<entry>`, whose stream every app the compositor starts writes into, uwsm-app's own
//! `Invalid arguments: …` errors included) carry the same identifier prefix. (Shapes from uwsm's
//! `uwsm/main.py` `app_daemon()`/`send_cmdline()`, `app()`, `systemd/user/*.service.in`.)
//!
//! Default-deny, as for every writer (`writers.rs`): `received:`/`sent:` keep the program of
//! each side of the `--` and withhold the rest, the daemon's lines known to carry no command
//! line are shown, any other line is withheld whole.
//!
//! elephant (walker's launcher backend on Omarchy, `elephant.service`, stderr to the journal):
//! run with `--debug` it logs every desktop entry it starts as the whole `sh -c` command line
//! (`internal/providers/desktopapplications/activate.go`: `slog.Debug(Name, "activate",
//! cmd.String())`, Go's `log/slog` text handler: `time=… level=DEBUG msg=… activate="…"`). Its
//! INFO, WARN and ERROR lines in either of slog's shapes (the text handler's `level=INFO`, the
//! default logger's `2025/01/02 03:04:05 INFO …`) are shown; any other line — DEBUG, or not
//! slog's — is withheld whole.

use super::cut::MESSAGE_WITHHELD;
use super::cut::keep_program;

/// uwsm's lines known to carry no command line (uwsm's `print_normal` messages about the
/// daemon and the compositor's unit).
const UWSM_SAFE: [&str; 9] = [
    "Received signal ",
    "Exiting.",
    "Will stop compositor ",
    "Found running compositor ",
    "Process with PID ",
    "Will start ",
    "Will reload systemd user manager.",
    "Reloading systemd user manager.",
    "Default compositor ID unchanged: ",
];

/// What of a uwsm line is shown: `None` when it is shown as it is.
pub(crate) fn uwsm(message: &str) -> Option<String> {
    for kind in ["received: ", "sent: "] {
        if let Some(rest) = message.strip_prefix(kind) {
            if rest == "pong" || rest.is_empty() {
                return None;
            }
            return Some(format!("{kind}{}", launch(rest)));
        }
    }
    if UWSM_SAFE.iter().any(|p| message.starts_with(p)) {
        return None;
    }
    Some(MESSAGE_WITHHELD.to_owned())
}

/// What of an elephant line is shown: `None` when it is shown as it is.
pub(crate) fn elephant(message: &str) -> Option<String> {
    const LEVELS: [&str; 3] = ["INFO", "WARN", "ERROR"];
    let text_handler = message.starts_with("time=")
        && LEVELS
            .iter()
            .any(|l| message.contains(&format!(" level={l} ")));
    // `2025/01/02 03:04:05 INFO …`: the date and time are 19 bytes and a space.
    let default_logger = message.len() > 20
        && message.as_bytes()[..19]
            .iter()
            .enumerate()
            .all(|(i, b)| match i {
                4 | 7 => *b == b'/',
                10 => *b == b' ',
                13 | 16 => *b == b':',
                _ => b.is_ascii_digit(),
            })
        && LEVELS
            .iter()
            .any(|l| message[20..].starts_with(&format!("{l} ")));
    (!(text_handler || default_logger)).then(|| MESSAGE_WITHHELD.to_owned())
}

/// A launcher's request or answer: the program of each side of the first `--` kept (`app`,
/// `exec`; the command's program), the rest withheld.
fn launch(rest: &str) -> String {
    let cut = |s: &str| keep_program(s, 0, s.len());
    match rest.split_once(" -- ") {
        Some((head, command)) => format!("{} -- {}", cut(head), cut(command)),
        None => cut(rest),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::cut::WITHHELD;

    #[test]
    fn elephant_shows_only_its_levels_known_safe() {
        for shown in [
            "time=2025-12-06T10:00:00.000+01:00 level=INFO msg=desktopapplications activated=firefox.desktop",
            "2025/12/06 10:00:00 INFO elephant startup=12ms",
            "2025/12/06 10:00:00 ERROR desktopapplications activate=x.desktop error=\"exec: no\"",
        ] {
            assert_eq!(elephant(shown), None, "{shown}");
        }
        for withheld in [
            "time=2025-12-06T10:00:00.000+01:00 level=DEBUG msg=desktopapplications activate=\"/usr/bin/sh -c uwsm-app -- mysql -pS3cret\"",
            "2025/12/06 10:00:00 DEBUG desktopapplications activate=\"sh -c mysql -pS3cret\"",
            "mysql -pS3cret",
            "2025/12/06 10:00:0 INFO x",
        ] {
            assert_eq!(elephant(withheld).unwrap(), MESSAGE_WITHHELD, "{withheld}");
        }
    }

    #[test]
    fn uwsm_keeps_the_launched_program_and_withholds_the_rest() {
        assert_eq!(
            uwsm("received: app -- chromium --app=https://vault.example.com/?token=S3cret")
                .unwrap(),
            format!("received: app -- chromium {WITHHELD}")
        );
        assert_eq!(
            uwsm("sent: exec systemd-run --user --scope --setenv=A=S3cret -- alacritty -e mysql -pS3cret")
                .unwrap(),
            format!("sent: exec {WITHHELD} -- alacritty {WITHHELD}")
        );
        assert_eq!(
            uwsm("sent: error 'Invalid arguments: app -x mysql -pS3cret' 2").unwrap(),
            format!("sent: error {WITHHELD}")
        );
        assert_eq!(uwsm("received: ping"), Some("received: ping".to_owned()));
        assert_eq!(uwsm("sent: pong"), None);
        assert_eq!(uwsm("Received signal 15, stopping app daemon..."), None);
        for other in [
            "Starting: Hyprland --config /home/alice/S3cret.conf...",
            "Executing mysql -pS3cret",
            "Command not found: \"mysql -pS3cret\"",
        ] {
            assert_eq!(uwsm(other).unwrap(), MESSAGE_WITHHELD, "{other}");
        }
    }
}
