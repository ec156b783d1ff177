//! Root's code that ends the person's session or stops the machine while a package installs
//! (attack 32 F7; class: *the same effect judged in one place and not its twin* — the message to
//! the session's bus that logs the person out is high since round 31, `loginctl terminate-user`
//! from the install script was nothing): powering off or rebooting, ending a user's session or
//! every process of a user, killing every process (`kill -9 -1`). No package's install needs it;
//! one that asks the person to reboot says so in words.

use super::{Ctx, Sink};
use crate::audit::names;
use crate::audit::report::Severity;
use crate::audit::shell::Phase;

pub(super) fn check(ctx: &Ctx, sink: &mut Sink) {
    for cmd in &ctx.an.cmds {
        if !matches!(cmd.phase, Phase::Install | Phase::Hook) {
            continue;
        }
        let (name, args) = names::program(cmd);
        let t: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
        let verb = t
            .iter()
            .find(|a| !a.starts_with('-'))
            .copied()
            .unwrap_or("");
        let what = match name {
            "poweroff" | "reboot" | "halt" | "shutdown" | "kexec" => {
                Some("stops or restarts the machine")
            }
            "systemctl"
                if matches!(
                    verb,
                    "poweroff"
                        | "reboot"
                        | "halt"
                        | "kexec"
                        | "soft-reboot"
                        | "suspend"
                        | "hibernate"
                        | "hybrid-sleep"
                        | "suspend-then-hibernate"
                        | "emergency"
                        | "rescue"
                ) =>
            {
                Some("stops, restarts or suspends the machine")
            }
            "loginctl"
                if matches!(
                    verb,
                    "terminate-user"
                        | "terminate-session"
                        | "kill-user"
                        | "kill-session"
                        | "lock-sessions"
                        | "terminate-seat"
                ) =>
            {
                Some("ends or locks the person's session")
            }
            // `-1` as the process (the last word): every process it may signal. `kill -1 PID`
            // is signal 1 (a reload) to PID, nothing of the kind.
            "kill" if t.len() > 1 && t.last() == Some(&"-1") => {
                Some("signals every process it may: the person's whole session")
            }
            "pkill" | "killall" if t.iter().any(|a| *a == "-u" || a.starts_with("--user")) => {
                Some("kills every process of an account: the person's session")
            }
            _ => None,
        };
        if let Some(what) = what {
            sink.cmd(
                "AUR-ENDS-SESSION",
                Severity::High,
                cmd,
                format!("{what} while the package installs, as root"),
            );
        }
    }
}
