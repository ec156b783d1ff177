//! How a hand-off's command ended, told to the person in words.
//!
//! A command that died by a signal is the one case the person must read closely: root's program
//! stopped where the signal found it, and a transaction may be half done. sudo passes on to root's
//! command the signals it receives, and sudo runs with the person's real uid, so any program of
//! theirs may send one — the agent's included (attack 30 F5: `kill -TERM` of sudo stopped pacman
//! inside a scriptlet, and the helper only said "signal Some(15)"). archgate cannot tell who sent
//! it; it says what the signal is, that it was not archgate, who could have, and what to check.
//! Not closed: stopping the signal (a root-side wrapper that ignores what sudo relays would also
//! take the person's own Ctrl-C away) — SECURITY.md "Hand-offs".

use nix::sys::signal::Signal;

/// The line said after the command ended with `exit_code` / `signal` (not for exit status 0).
pub(super) fn failed(exit_code: Option<i32>, signal: Option<i32>, pacman: bool) -> String {
    match (exit_code, signal) {
        (_, Some(n)) => {
            let name = Signal::try_from(n)
                .map_or_else(|_| format!("signal {n}"), |s| s.as_str().to_owned());
            let who = match n {
                2 => {
                    "Ctrl-C in this terminal, or another program running as you (sudo passes signals on to the command)"
                }
                1 => {
                    "this terminal closing, or another program running as you (sudo passes signals on to the command)"
                }
                _ => {
                    "not archgate, and not a key you pressed: another program running as you (any of them may signal sudo, which passes it on to the command)"
                }
            };
            let check = if pacman {
                " It may have stopped in the middle of a transaction: check with `sudo pacman -Dk` and \
                 `pacman -Qkk`, and if no pacman runs and /var/lib/pacman/db.lck is left, remove it \
                 and run the update again."
            } else {
                " It may have stopped halfway: check what it was doing before running it again."
            };
            format!("it was stopped by {name} (signal {n}) — {who}.{check}")
        }
        (Some(code), None) => format!("it failed (exit status {code})."),
        (None, None) => "it ended without an exit status.".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_is_named_with_who_may_have_sent_it_and_what_to_check() {
        let t = failed(None, Some(15), true);
        assert!(
            t.starts_with("it was stopped by SIGTERM (signal 15) — not archgate"),
            "{t}"
        );
        assert!(t.contains("another program running as you"), "{t}");
        assert!(t.contains("db.lck"), "{t}");
        let t = failed(None, Some(2), false);
        assert!(t.contains("SIGINT") && t.contains("Ctrl-C"), "{t}");
        assert!(!t.contains("pacman"), "{t}");
        assert_eq!(failed(Some(1), None, true), "it failed (exit status 1).");
        assert!(failed(None, Some(77), false).contains("signal 77"));
    }
}
