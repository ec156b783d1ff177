//! Whether a process on the control socket descends from a program archgate started.
//!
//! Class (attack 3, F10): *the agent answers its own question through a means it controls* — a
//! command route once ran `archgate approve …` as the person, and the record said `cli`, the
//! person's yes. Command routes are now the person's to approve (never automatic), so the agent
//! cannot start such a program on its own; but a program the person did approve (a terminal, a
//! TUI) can still run the CLI. The environment cannot mark it (the variables programs get are
//! allowlisted, and a program can drop any), so the kernel's process tree is asked instead: a
//! peer whose chain of parents reaches a child of this daemon (every program archgate runs is
//! one, in its own process group) answers on the channel `cli_from_program`, so the record tells
//! it from the person's own terminal. A program that re-parents itself away (double fork,
//! `setsid` under the user manager) is not seen: this distinguishes, it does not prove — the
//! bound is that such a program ran only after the person's yes to its exact command.

use archgate_core::exec::process_tree::descends_from;

/// The channel a control-socket answer is recorded under: `cli`, or `cli_from_program` when the
/// peer descends from this process (a program archgate started, or one it started).
pub fn cli_channel(peer_pid: Option<u32>) -> &'static str {
    match peer_pid {
        Some(pid) if descends_from(pid, std::process::id()) => "cli_from_program",
        _ => "cli",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use archgate_core::exec::process_tree::parent;

    #[test]
    fn descent_is_read_from_the_kernel_s_process_tree() {
        // This test process descends from its parent and its grandparent (the harness, a shell):
        // so a program archgate started, and any program that program started, descend from the
        // daemon. Itself, pid 1 and no pid do not: the person's own terminal answers as `cli`.
        let me = std::process::id();
        let up = parent(me).expect("a parent");
        assert!(descends_from(me, up));
        if let Some(up2) = parent(up).filter(|p| *p != 0) {
            assert!(descends_from(me, up2));
        }
        assert!(!descends_from(up, me));
        assert!(!descends_from(me, me));
        assert!(!descends_from(1, me));
        assert_eq!(cli_channel(Some(me)), "cli");
        assert_eq!(cli_channel(Some(1)), "cli");
        assert_eq!(cli_channel(None), "cli");
    }
}
