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
/// unlimited need); `Err` names the hard limits lowered below the need.
pub fn made_whole() -> Result<(), String> {
    let mut short = Vec::new();
    for &(resource, need, name) in NEEDED {
        let (soft, hard) =
            getrlimit(resource).map_err(|e| format!("reading the {name} limit: {e}"))?;
        if below(hard, need) {
            short.push(format!("{name} {}", shown(hard)));
            continue;
        }
        if below(soft, need) {
            setrlimit(resource, need.min(hard), hard)
                .map_err(|e| format!("raising the {name} limit: {e}"))?;
        }
    }
    if short.is_empty() {
        Ok(())
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

    /// In a child process (limits are per process): a lowered soft limit is raised back, and a
    /// lowered hard one refuses, naming it. The test binary runs itself as that child.
    #[test]
    fn lowered_soft_limits_are_raised_and_lowered_hard_ones_refuse() {
        if std::env::var_os("ARCHGATE_LIMITS_CHILD").is_some() {
            // Raising back needs the hard limits unlimited, as a login session has them.
            for resource in [Resource::RLIMIT_FSIZE, Resource::RLIMIT_CPU] {
                let (_, hard) = getrlimit(resource).unwrap();
                if hard == RLIM_INFINITY {
                    setrlimit(resource, 5, hard).unwrap();
                    made_whole().unwrap();
                    assert_eq!(getrlimit(resource).unwrap().0, hard);
                }
            }
            setrlimit(Resource::RLIMIT_FSIZE, 4096, 4096).unwrap();
            let why = made_whole().unwrap_err();
            assert!(why.contains("file size 4096"), "{why}");
            println!("child-ok");
            return;
        }
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "commands::handoff::limits::tests::lowered_soft_limits_are_raised_and_lowered_hard_ones_refuse",
                "--nocapture",
            ])
            .env("ARCHGATE_LIMITS_CHILD", "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("child-ok"),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
