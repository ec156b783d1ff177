//! Who may claim a hand-off archgate opened a terminal for: exactly the process archgate asked
//! that terminal to run (attack 22 F1; class: *a claim bound to "descends from the terminal"
//! while the terminal starts programs the person's files choose* — foot's new-terminal key
//! starts a new foot that reads `foot.ini`, whose `shell=` is the agent's to write; that program,
//! a grandchild of the hand-off's terminal, claimed the hand-off and reported `ran, exit 0` for a
//! run that never happened; Alacritty's `msg create-window`, kitty's new-window key and a
//! terminal's URL or notification commands are the same door).
//!
//! The claimant, read from the kernel while it is connected (`/proc/PID/stat`, `exe`,
//! `cmdline`), must be all of:
//! - the terminal's **direct child** (the terminal runs the command it was given itself;
//!   anything the terminal starts later on its own is a child too, but runs another program);
//! - running **this archgate binary**: `/proc/PID/exe` the same file (device and inode) as this
//!   process's own — the helper's code is archgate's, which takes nothing of the command from
//!   its arguments or environment (`commands/handoff`);
//! - with the arguments `handoff-run ID`, this hand-off's id, and nothing else;
//! - started with no dynamic-loader variables (`LD_PRELOAD`, `LD_LIBRARY_PATH`, `LD_AUDIT`, any
//!   `LD_*`, `GLIBC_TUNABLES`: what puts other code into a dynamically linked archgate before its
//!   `main`). The terminal's own children are started by it alone, but one of them — a
//!   notification or URL command found on the terminal's `PATH` — could `exec` archgate as
//!   `handoff-run ID` in its own process with a library preloaded (attack 22 F1's second door);
//!   archgate gives the terminal no such variable (`exec/src/env`), so the real helper has none.
//!
//! A terminal that hands its command to a program of its own first (a login shell, a
//! single-instance server that opens the window) fails the first rule: the hand-off is then
//! not claimable from it and ends at its deadline, unverified nowhere — refusal, not trust.

use std::os::unix::fs::MetadataExt;

/// What the kernel says of a process that asks to claim a hand-off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claimant {
    pub pid: u32,
    /// Its parent (`/proc/PID/stat`).
    pub parent: Option<u32>,
    /// The file it runs: device and inode of `/proc/PID/exe`.
    pub exe: Option<(u64, u64)>,
    /// Its arguments after `argv[0]` (`/proc/PID/cmdline`).
    pub args: Vec<String>,
    /// Whether the environment it was started with (`/proc/PID/environ`) gives the dynamic
    /// loader code to load or settings (`LD_*`, `GLIBC_TUNABLES`), or could not be read.
    pub loader_env: bool,
}

impl Claimant {
    /// Reads process `pid` now.
    pub fn read(pid: u32) -> Claimant {
        let args = std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|raw| {
                raw.split(|&b| b == 0)
                    .skip(1)
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect::<Vec<_>>()
            })
            .map(|mut v| {
                // cmdline ends with a NUL: the split's last, empty piece is not an argument.
                if v.last().is_some_and(String::is_empty) {
                    v.pop();
                }
                v
            })
            .unwrap_or_default();
        let loader_env = std::fs::read(format!("/proc/{pid}/environ")).map_or(true, |raw| {
            raw.split(|&b| b == 0)
                .any(|v| v.starts_with(b"LD_") || v.starts_with(b"GLIBC_TUNABLES="))
        });
        Claimant {
            pid,
            parent: archgate_core::exec::process_tree::parent(pid),
            exe: exe_of(&format!("/proc/{pid}/exe")),
            args,
            loader_env,
        }
    }

    /// Whether this is the helper archgate asked `terminal` to run for hand-off `id`.
    pub fn is_the_helper(&self, terminal: u32, id: &str) -> bool {
        self.parent == Some(terminal)
            && self.exe.is_some()
            && self.exe == own_exe()
            && self.args.len() == 2
            && self.args[0] == "handoff-run"
            && self.args[1] == id
            && !self.loader_env
    }
}

/// This process's own binary: device and inode of `/proc/self/exe`.
pub fn own_exe() -> Option<(u64, u64)> {
    exe_of("/proc/self/exe")
}

fn exe_of(link: &str) -> Option<(u64, u64)> {
    std::fs::metadata(link).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn helper(terminal: u32, id: &str) -> Claimant {
        Claimant {
            pid: 4242,
            parent: Some(terminal),
            exe: own_exe(),
            args: vec!["handoff-run".into(), id.into()],
            loader_env: false,
        }
    }

    /// Attack 22 F1: only the terminal's direct child running this binary as `handoff-run ID`.
    #[test]
    fn only_the_terminals_own_child_running_archgate_for_this_id_is_the_helper() {
        assert!(helper(10, "a1").is_the_helper(10, "a1"));
        // A grandchild (a program a new terminal window started).
        let grandchild = Claimant {
            parent: Some(11),
            ..helper(10, "a1")
        };
        assert!(!grandchild.is_the_helper(10, "a1"));
        // Another program the terminal started itself (its shell, a URL opener).
        let other = Claimant {
            exe: Some((0, 1)),
            ..helper(10, "a1")
        };
        assert!(!other.is_the_helper(10, "a1"));
        let unknown = Claimant {
            exe: None,
            ..helper(10, "a1")
        };
        assert!(!unknown.is_the_helper(10, "a1"));
        // The terminal's own child running this binary, preloaded by whatever exec'd it.
        let preloaded = Claimant {
            loader_env: true,
            ..helper(10, "a1")
        };
        assert!(!preloaded.is_the_helper(10, "a1"));
        // This binary, but not asked to be this hand-off's helper.
        for args in [
            vec!["handoff-run", "b2"],
            vec!["handoff", "a1"],
            vec!["handoff-run", "a1", "extra"],
            vec!["handoff-run"],
        ] {
            let c = Claimant {
                args: args.into_iter().map(str::to_owned).collect(),
                ..helper(10, "a1")
            };
            assert!(!c.is_the_helper(10, "a1"), "{:?}", c.args);
        }
    }

    /// The kernel's view of a real process: this test process is read with its parent, its
    /// arguments after `argv[0]` and this binary; its parent (the test runner's) with another.
    #[test]
    fn a_process_is_read_from_the_kernel() {
        let mine = Claimant::read(std::process::id());
        let parent = nix::unistd::getppid().as_raw().unsigned_abs();
        assert_eq!(mine.parent, Some(parent));
        assert_eq!(mine.args, std::env::args().skip(1).collect::<Vec<_>>());
        assert!(mine.exe.is_some());
        assert_eq!(mine.exe, own_exe());
        let up = Claimant::read(parent);
        assert_ne!(up.exe, own_exe());
        assert!(!up.is_the_helper(up.parent.unwrap_or(0), "a1"));
    }
}
