//! The resource limits a hand-off's command inherits, made whole before it runs.
//!
//! sudo gives the command the invoking process's resource limits (only the core size is its
//! own), so root's pacman runs under the limits of the helper — and any process of the person's
//! uid may lower those of another (`prlimit --pid`), the agent's included, and so of the daemon
//! whose terminal the helper inherits them from. A file-size limit kills pacman with `SIGXFSZ`
//! in the middle of extracting a package, a CPU-time limit with `SIGXCPU`, an address-space or
//! data limit makes it fail to allocate halfway: a transaction half done, on the person's system,
//! after the person's yes. Class: *the privileged command inherits a process attribute the
//! agent can set on the person's processes* (the environment was the first member, closed in
//! `facts_env.rs`).
//!
//! So, before the command is shown and again just before it runs, every soft limit that can end
//! a transaction is raised to what the system allows (an unprivileged process may raise its soft
//! limits up to the hard ones), and where a hard limit was lowered below what a transaction
//! needs the hand-off is refused, saying which and how to get a fresh session. Left alone: the
//! stack's soft limit above 8 MiB (unlimited changes the memory layout of the child), limits root
//! is not held to (process count, locked memory), and the core size (sudo sets its own).

use std::path::Path;

use nix::sys::resource::{RLIM_INFINITY, Resource, getrlimit, setrlimit};

/// The stack a transaction's programs are given at least (the usual default).
const STACK: u64 = 8 << 20;
/// Descriptors a transaction's programs are given at least (the usual soft default).
const FILES: u64 = 1024;

/// What each limit must allow at least, and its name for the person.
const NEEDED: &[(Resource, u64, &str)] = &[
    (Resource::RLIMIT_FSIZE, RLIM_INFINITY, "file size"),
    (Resource::RLIMIT_CPU, RLIM_INFINITY, "CPU time"),
    (Resource::RLIMIT_AS, RLIM_INFINITY, "address space"),
    (Resource::RLIMIT_DATA, RLIM_INFINITY, "data size"),
    (Resource::RLIMIT_STACK, STACK, "stack size"),
    (Resource::RLIMIT_NOFILE, FILES, "open files"),
];

/// Raises each soft limit a transaction needs to what it needs (or to the hard limit, for an
/// unlimited need), and takes back an OOM score another process raised ([`oom_made_whole`]);
/// `Err` names the hard limits lowered below the need.
pub fn made_whole() -> Result<(), String> {
    let mut now = Vec::with_capacity(NEEDED.len());
    for &(resource, _, name) in NEEDED {
        now.push(getrlimit(resource).map_err(|e| format!("reading the {name} limit: {e}"))?);
    }
    for (resource, soft, hard) in raises(&now)? {
        setrlimit(resource, soft, hard)
            .map_err(|e| format!("raising a limit ({resource:?}): {e}"))?;
    }
    oom_made_whole(Path::new(OOM_SCORE_ADJ))
}

/// This process's OOM score adjustment, which sudo's command inherits.
const OOM_SCORE_ADJ: &str = "/proc/self/oom_score_adj";

/// The same class's next member (attack 31 F10): any process of the person's may raise another's
/// `oom_score_adj` (up to 1000) without privilege, sudo's command keeps it, and root's pacman
/// becomes the first process the kernel kills when memory runs short — SIGKILL halfway through a
/// transaction. A raised score is set back to 0, which an unprivileged process may do for itself
/// (only going below its floor needs privilege); a score at or below 0 is left as it is.
fn oom_made_whole(file: &Path) -> Result<(), String> {
    let now = std::fs::read_to_string(file).map_err(|e| format!("reading the OOM score: {e}"))?;
    let score: i32 = now
        .trim()
        .parse()
        .map_err(|_| format!("reading the OOM score: `{}`", now.trim()))?;
    if score <= 0 {
        return Ok(());
    }
    std::fs::write(file, "0").map_err(|e| {
        format!(
            "this terminal's OOM score was raised to {score} (root's command would be the first \
             the kernel kills when memory runs short) and could not be set back: {e}"
        )
    })
}

/// For the limits now in force (soft, hard; in [`NEEDED`]'s order): the soft limits to raise, or
/// why the hand-off cannot run.
fn raises(now: &[(u64, u64)]) -> Result<Vec<(Resource, u64, u64)>, String> {
    let mut short = Vec::new();
    let mut raise = Vec::new();
    for (&(resource, need, name), &(soft, hard)) in NEEDED.iter().zip(now) {
        if below(hard, need) {
            short.push(format!("{name} {}", shown(hard)));
        } else if below(soft, need) {
            raise.push((resource, need.min(hard), hard));
        }
    }
    if short.is_empty() {
        Ok(raise)
    } else {
        Err(format!(
            "this terminal's resource limits were lowered ({}): sudo would give them to the \
             command, which could be stopped halfway through a transaction; run it from a new \
             login session (or raise them as root)",
            short.join(", ")
        ))
    }
}

fn below(limit: u64, need: u64) -> bool {
    limit != RLIM_INFINITY && (need == RLIM_INFINITY || limit < need)
}

fn shown(limit: u64) -> String {
    if limit == RLIM_INFINITY {
        "unlimited".to_owned()
    } else {
        limit.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INF: u64 = RLIM_INFINITY;

    /// A session's usual limits: nothing to raise but descriptors' soft limit when it is low.
    #[test]
    fn a_sessions_usual_limits_pass_and_low_soft_ones_are_raised() {
        let usual = [
            (INF, INF),
            (INF, INF),
            (INF, INF),
            (INF, INF),
            (8 << 20, INF),
            (1024, 524_288),
        ];
        assert!(raises(&usual).unwrap().is_empty());
        let lowered = [
            (4096, INF),
            (5, INF),
            (INF, INF),
            (INF, INF),
            (64 << 10, INF),
            (16, 524_288),
        ];
        let r = raises(&lowered).unwrap();
        let got: Vec<(u64, u64)> = r.iter().map(|&(_, s, h)| (s, h)).collect();
        assert_eq!(
            got,
            [(INF, INF), (INF, INF), (8 << 20, INF), (1024, 524_288)]
        );
        assert_eq!(r[0].0, Resource::RLIMIT_FSIZE);
        // The process's own limits as they are here pass (the tests run in a login-like session).
        made_whole().unwrap();
    }

    /// The typed line's `prlimit` options (attack 30 F4) are this table's, one for one: the same
    /// resources, each at least what a transaction needs (run through the real binary's typed line
    /// and util-linux's `prlimit` by `e2e::handoff`).
    #[test]
    fn the_typed_lines_limits_are_this_tables() {
        use crate::tools::handoff::facts_env::ROOT_LIMITS;
        let option = |r: Resource| match r {
            Resource::RLIMIT_FSIZE => "fsize",
            Resource::RLIMIT_CPU => "cpu",
            Resource::RLIMIT_AS => "as",
            Resource::RLIMIT_DATA => "data",
            Resource::RLIMIT_STACK => "stack",
            Resource::RLIMIT_NOFILE => "nofile",
            other => panic!("{other:?} has no prlimit option here"),
        };
        assert_eq!(ROOT_LIMITS.len(), NEEDED.len());
        for &(resource, need, name) in NEEDED {
            let (_, value) = ROOT_LIMITS
                .iter()
                .find(|(o, _)| *o == option(resource))
                .unwrap_or_else(|| panic!("{name} is not set on the typed line"));
            let soft = value.split(':').next().unwrap();
            let soft = if soft == "unlimited" {
                INF
            } else {
                soft.parse().unwrap()
            };
            assert!(!below(soft, need), "{name}: {value}");
            let hard = value.rsplit(':').next().unwrap();
            // `soft:` keeps the hard limit; `unlimited` alone sets both.
            assert!(
                hard.is_empty() || hard == "unlimited" || hard.parse::<u64>().unwrap() >= soft,
                "{name}"
            );
        }
    }

    /// Attack 31 F10: an OOM score another process raised is set back to 0; one at or below 0
    /// stays; a file that cannot be written refuses, saying why. Then this test process's own
    /// score (per process), raised and made whole as the helper does for itself.
    #[test]
    fn a_raised_oom_score_is_set_back_and_a_low_one_left() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("oom_score_adj");
        std::fs::write(&f, "1000\n").unwrap();
        oom_made_whole(&f).unwrap();
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "0");
        std::fs::write(&f, "-500\n").unwrap();
        oom_made_whole(&f).unwrap();
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "-500\n");
        std::fs::write(&f, "700\n").unwrap();
        let mut p = std::fs::metadata(&f).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut p, 0o444);
        std::fs::set_permissions(&f, p).unwrap();
        if !nix::unistd::geteuid().is_root() {
            let why = oom_made_whole(&f).unwrap_err();
            assert!(why.contains("OOM score was raised to 700"), "{why}");
        }
        // The process's own file, as the helper writes it: raised, then made whole.
        let own = Path::new(OOM_SCORE_ADJ);
        let before = std::fs::read_to_string(own).unwrap();
        if before.trim() == "0" {
            std::fs::write(own, "300").unwrap();
            oom_made_whole(own).unwrap();
            assert_eq!(std::fs::read_to_string(own).unwrap().trim(), "0");
        }
    }

    /// A hard limit lowered below the need refuses, naming each; a soft one alone never does.
    #[test]
    fn lowered_hard_limits_refuse_naming_them() {
        let why = raises(&[
            (4096, 4096),
            (INF, INF),
            (1 << 30, 1 << 30),
            (INF, INF),
            (8 << 20, INF),
            (64, 64),
        ])
        .unwrap_err();
        for part in [
            "file size 4096",
            "address space 1073741824",
            "open files 64",
        ] {
            assert!(why.contains(part), "{why}");
        }
        assert!(!why.contains("CPU"), "{why}");
    }
}
