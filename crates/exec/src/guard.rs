//! Programs die with the archgate process that runs them.
//!
//! **Class closed here:** *a program outlives the archgate that answers for it* (issue 33: a
//! `kill -9` of the daemon left an approved program running to its end, its own process group,
//! with no archgate left to time it out, end its helpers or record it). A parent-death signal
//! would need code between fork and exec (`unsafe`, forbidden here) and fires when the *thread*
//! that forked exits (tokio's blocking threads end when idle), and it reaches only the leader,
//! not the helpers in its group.
//!
//! So each archgate process that runs programs keeps one guard: the archgate binary itself, run
//! as `archgate __program-guard` ([`serve`]; the binary registers itself with [`use_program`]),
//! with an empty environment, its own process group, stdout and stderr on /dev/null, reading
//! lines on a pipe whose only writer is this process — `+ PGID` when a program's group starts, `- PGID` when it has ended. When the pipe
//! closes — this process exited, however: `kill -9`, a crash, a normal end — the kernel closes
//! the writer, the guard reads end of file and sends SIGKILL to every group it still holds. A
//! guard that died (killed by a same-user process) is started again at once — its reaping thread
//! sees it end — and is told every group still running.
//!
//! No shell is involved (DESIGN invariant 2): the guard parses numbers and calls `killpg`. A
//! process built on this crate that registered no guard program (this crate's own tests) runs
//! programs unguarded, and says so once.
//!
//! Left, said: a program started in the moment between its spawn and the `+ PGID` line (a
//! `write` on a pipe, microseconds) escapes; so does a process that leaves its group (`setsid`,
//! a double fork into another group). Detached launches (`spawn_detached`: an application the
//! person opens) are not guarded: they are meant to outlive archgate.

use std::collections::BTreeSet;
use std::io::Write;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::Mutex;

/// The argument that makes the archgate binary a guard ([`serve`]).
pub const ARG: &str = "__program-guard";

static PROGRAM: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// The binary that serves as the guard when started with [`ARG`]: the running archgate.
pub fn use_program(exe: std::path::PathBuf) {
    let _ = PROGRAM.set(exe);
}

/// The guard itself: holds the process groups it is told (`+ PGID`, `- PGID`, one a line;
/// anything else is ignored) and, at end of file — its archgate gone, however — sends SIGKILL to
/// every group it still holds.
pub fn serve() -> std::process::ExitCode {
    use std::io::BufRead;
    let mut held = BTreeSet::new();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let Some((op, id)) = line.split_once(' ') else {
            continue;
        };
        let Ok(id) = id.trim().parse::<i32>() else {
            continue;
        };
        if id <= 1 {
            continue;
        }
        match op {
            "+" => {
                held.insert(id);
            }
            "-" => {
                held.remove(&id);
            }
            _ => {}
        }
    }
    for id in held {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(id),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    std::process::ExitCode::SUCCESS
}

struct Guard {
    stdin: ChildStdin,
    /// Waited for by a thread of its own, so it never lingers as a zombie.
    pid: u32,
}

struct State {
    guard: Option<Guard>,
    groups: BTreeSet<i32>,
}

static STATE: Mutex<State> = Mutex::new(State {
    guard: None,
    groups: BTreeSet::new(),
});

fn lock() -> std::sync::MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts a guard (see the module documentation).
#[allow(clippy::disallowed_methods)] // part of the one spawn site (`run.rs`), see DESIGN invariant 2
fn start() -> std::io::Result<Guard> {
    let program = PROGRAM
        .get()
        .ok_or_else(|| std::io::Error::other("no guard program was registered"))?;
    use std::os::unix::process::CommandExt;
    let mut child: Child = std::process::Command::new(program)
        .arg0("archgate-guard")
        .arg(ARG)
        .env_clear()
        .current_dir("/")
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let stdin = child
        .stdin
        .take()
        .ok_or_else(|| std::io::Error::other("the guard has no stdin"))?;
    let pid = child.id();
    std::thread::Builder::new()
        .name("archgate-guard-reap".into())
        .spawn(move || {
            let status = child.wait();
            tracing::debug!(pid, ?status, "the program guard ended");
            // Ended while this process runs (a same-user process killed it): another at once,
            // told every group still running — not only at the next program, since this process
            // may be killed before then (attack 33 F5: the guard killed, then the daemon, and
            // the approved program ran to its end).
            let mut state = lock();
            if state.guard.as_ref().is_some_and(|g| g.pid == pid) {
                tracing::warn!(pid, "the program guard ended; starting another");
                state.guard = None;
                send(&mut state, "");
            }
        })?;
    Ok(Guard { stdin, pid })
}

/// Writes `line`, starting a guard (again) when there is none or it stopped reading, and then
/// telling it every group still held.
fn send(state: &mut State, line: &str) {
    if let Some(g) = state.guard.as_mut() {
        if g.stdin.write_all(line.as_bytes()).is_ok() {
            return;
        }
        tracing::warn!(pid = g.pid, "the program guard is gone; starting another");
        state.guard = None;
    }
    if PROGRAM.get().is_none() {
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| {
            tracing::info!(
                "no program guard registered in this process: its programs would outlive it if it were killed"
            )
        });
        return;
    }
    match start() {
        Ok(mut g) => {
            let all: String = state.groups.iter().map(|p| format!("+ {p}\n")).collect();
            if g.stdin.write_all(all.as_bytes()).is_ok() {
                state.guard = Some(g);
            }
        }
        Err(e) => tracing::warn!(
            "no program guard could start ({e}): a program running when archgate is killed would outlive it"
        ),
    }
}

/// Starts this process's guard now, when one is registered and none runs: a server has its
/// guard from its start, not from its first program (a resource taken lazily under load is
/// indistinguishable from a leak, and the first program would wait for the guard to start).
pub fn start_now() {
    let mut state = lock();
    if state.guard.is_none() && PROGRAM.get().is_some() {
        send(&mut state, "");
    }
}

/// How many programs' groups this process's guard holds now: each is killed if this process
/// ends before it does (`/health` shows it, so a test can see the guard was told).
pub fn guarded() -> usize {
    lock().groups.len()
}

/// A program's group has started: kill it if this process ends before [`release`].
pub(crate) fn watch(pgid: i32) {
    let mut state = lock();
    state.groups.insert(pgid);
    send(&mut state, &format!("+ {pgid}\n"));
}

/// A program's group has ended (or was killed): forget it.
pub(crate) fn release(pgid: i32) {
    let mut state = lock();
    if state.groups.remove(&pgid) && state.guard.is_some() {
        send(&mut state, &format!("- {pgid}\n"));
    }
}
