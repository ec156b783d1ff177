//! Programs die with the archgate process that runs them.
//!
//! **Class closed here:** *a program outlives the archgate that answers for it* (issue 33: a
//! `kill -9` of the daemon left an approved program running to its end, its own process group,
//! with no archgate left to time it out, end its helpers or record it). A parent-death signal
//! would need code between fork and exec (`unsafe`, forbidden here) and fires when the *thread*
//! that forked exits (tokio's blocking threads end when idle), and it reaches only the leader,
//! not the helpers in its group.
//!
//! So each archgate process that runs programs keeps one guard: `bash` (found and trusted like
//! any program, in the default search directories, with the allowlisted environment, its own
//! process group, stdout and stderr on /dev/null) reading lines on a pipe whose only writer is
//! this process — `+ PGID` when a program's group starts, `- PGID` when it has ended. When the pipe
//! closes — this process exited, however: `kill -9`, a crash, a normal end — the kernel closes
//! the writer, the guard reads end of file and sends SIGKILL to every group it still holds. A
//! guard that died (killed by a same-user process) is started again at the next program, and is
//! told every group still running.
//!
//! Left, said: a program started in the moment between its spawn and the `+ PGID` line (a
//! `write` on a pipe, microseconds) escapes; so does a process that leaves its group (`setsid`,
//! a double fork into another group). Detached launches (`spawn_detached`: an application the
//! person opens) are not guarded: they are meant to outlive archgate.

use std::collections::BTreeSet;
use std::io::Write;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::Mutex;

use crate::config::ExecConfig;

/// The guard's program: holds the groups it is told, kills what is left at end of file. Groups
/// are numbers only; anything else on a line is ignored.
const SCRIPT: &str = r#"trap '' HUP INT
declare -A g
while read -r op id; do
  [[ $id =~ ^[1-9][0-9]*$ ]] || continue
  case $op in
    +) g[$id]=1 ;;
    -) unset "g[$id]" ;;
  esac
done
for id in "${!g[@]}"; do kill -KILL -- "-$id" 2>/dev/null; done
"#;

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
    // Root's `bash` only: never one a variable (`OMARCHY_PATH`) adds to the search.
    let cfg = ExecConfig {
        search_dirs: vec!["/usr/bin".into()],
        ..ExecConfig::default()
    };
    let bash = crate::resolve::resolve(&cfg, "bash").map_err(std::io::Error::other)?;
    let env = crate::env::build(Vec::new(), &cfg, &[]);
    use std::os::unix::process::CommandExt;
    let mut child: Child = std::process::Command::new(bash)
        .arg0("archgate-guard")
        .args(["-c", SCRIPT])
        .env_clear()
        .envs(env)
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
