//! archgate-exec: the only place in archgate that starts a process.
//!
//! Everything that runs a program goes through a [`Permit`], which only the gate in
//! `archgate-core` constructs (via the hidden `Permit::__issued_by_gate`). Running a
//! [`CommandSpec`] through it guarantees:
//!
//! - **argv only, never a shell**: arguments reach the program byte for byte;
//! - **trusted program**: argv\[0\] is resolved against the fixed [`ExecConfig::search_dirs`], never
//!   the inherited `PATH`; an absolute path is accepted only inside those directories; by default
//!   the file and every directory on the way to it must be owned by root or by the person (the uid
//!   archgate runs as) and writable by neither group nor others ([`ExecError::Untrusted`]
//!   otherwise). The resolved file is what runs, while [`CommandSpec::display`] shows the command
//!   as written;
//! - **the file judged is the file run**: [`Executor::pin`] pins a program when it is judged
//!   (opened, content digested, a script's `#!` interpreter too, see [`FilePin`]); a pinned
//!   command runs only while its path still names that file with that content
//!   ([`ExecError::Changed`] otherwise);
//! - **an allowlisted environment**: only the variables [`env::TABLE`] names (each with why a
//!   desktop program needs it) reach a program; `PATH` is rebuilt from directories that pass the
//!   same trust rule as the program, and a spec may set only the table's names (see [`mod@env`]);
//! - **stdin** is `/dev/null` unless the spec gives bytes, which are written and then closed;
//! - **own process group**: on timeout the whole group gets SIGTERM, then SIGKILL after
//!   [`ExecConfig::kill_grace`]; after a normal exit any member left behind is ended the same way,
//!   so nothing started by the call outlives it; and the group is killed when the archgate
//!   process running it ends, however it ends (`kill -9` too: see `guard.rs`);
//! - **capped output**: stdout and stderr together are kept to [`ExecConfig::output_cap`] bytes,
//!   head and tail, with a visible marker where bytes were left out.
//!
//! Detached launches ([`Permit::spawn_detached`]) get their own process group and no output; they
//! are not waited for (a background thread reaps them).
//!
//! Launches that need no permit are the person's own: [`spawn_for_person`] and
//! [`run_for_person`] (`archgate ui` opening the browser, `archgate service` running
//! `systemctl --user`), and [`run_for_person_in_terminal`] (a hand-off's command, run in the
//! person's terminal at their keystroke). A tidy test keeps them to the CLI's command modules.

#![forbid(unsafe_code)]

mod capture;
mod config;
pub mod env;
mod error;
mod executor;
pub mod guard;
pub mod once_open;
pub mod own_file;
mod permit;
mod person;
mod pin;
pub mod process_tree;
mod resolve;
mod run;
mod spec;
mod terminal;

pub use capture::{ExitInfo, Output};
pub use config::ExecConfig;
pub use error::{Change, ExecError, UntrustedReason};
pub use executor::Executor;
pub use permit::Permit;
pub use person::{become_for_person, run_for_person, spawn_for_person, spawn_for_person_with};
pub use pin::{FilePin, ProgramPin};
pub use spec::CommandSpec;
pub use terminal::{TerminalRun, run_for_person_in_terminal};

/// Whether `dir` is a directory root's all the way from `/` — every hop, each link followed and
/// judged, owned by root and writable by neither group nor others — whatever the trust setting
/// says of the person's directories: the question "could anyone but root have put a file here",
/// which decides the order of program lookup (`resolve`), the children's `PATH` (`env`) and what
/// `launch` takes as a system program.
pub fn roots_all_the_way(dir: &std::path::Path) -> bool {
    resolve::roots_all_the_way(dir)
}

/// Whether a file or directory at the absolute `path` may be taken as root's or, given
/// `person_uid`, the person's own: walked from `/` one component and one link at a time, every
/// hop — each directory, each link, the end — owned by root or the person and writable by
/// neither group nor others; a root-owned sticky directory such as `/tmp` is only passed
/// through, and its entry must still be root's or the person's. Whoever controls any hop chooses
/// what is at the end. `None` trusts root alone. The answer is the real path, or the first hop
/// that fails and why.
pub fn trusted_path(
    person_uid: Option<u32>,
    path: &std::path::Path,
) -> Result<std::path::PathBuf, UntrustedReason> {
    resolve::trusted_path(person_uid, path)
}
