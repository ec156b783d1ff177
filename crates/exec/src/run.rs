//! Starting, supervising and ending processes: the one spawn site in archgate.
//!
//! Every process starts in its own process group (`process_group(0)`), so the whole group can be
//! signalled with `killpg`. A run ends in one of two ways:
//! - the leader exits: anything still alive in its group gets SIGTERM, then SIGKILL after the
//!   grace period, so helpers a program left behind do not outlive the call;
//! - the timeout passes first: SIGTERM to the group, SIGKILL after the grace period.
//!
//! Output is read concurrently with the wait, by two tasks, so a chatty program never blocks on
//! a full pipe. If the call itself is dropped (the client went away), a guard sends SIGKILL to
//! the group.
//!
//! Detached programs also get their own group instead of a new session: `setsid` would need a
//! `pre_exec` hook, which is `unsafe`, forbidden in this workspace. A separate group is enough
//! for a launcher: archgate's group signals never reach it and, having no terminal, it gets no
//! SIGHUP from one. A background thread waits for it so it never lingers as a zombie.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Child;
use tokio::sync::watch;

use crate::capture::{HeadTail, Output, share};
use crate::error::ExecError;
use crate::executor::Executor;
use crate::pin::ProgramPin;
use crate::spec::CommandSpec;

/// How long to keep reading after the process group has ended, for output still in the pipes
/// (or held by a process that left the group).
const DRAIN: Duration = Duration::from_millis(500);
/// How long to wait for the group to disappear after SIGKILL.
const SETTLE: Duration = Duration::from_secs(2);
/// Longest grace period honoured (a larger configured value is clamped, never overflows).
const MAX_GRACE: Duration = Duration::from_secs(3600);
/// Interval of checks for a group to empty.
const POLL: Duration = Duration::from_millis(10);
/// Read buffer per stream.
const CHUNK: usize = 64 * 1024;

/// Build the command for a resolved program. This is the one place in archgate that constructs
/// a process command (clippy's `disallowed-methods` forbids it everywhere else).
#[allow(clippy::disallowed_methods)] // the single spawn site, see DESIGN invariant 2
fn command(resolved: &Path, spec: &CommandSpec, executor: &Executor) -> std::process::Command {
    let inherited: Vec<(std::ffi::OsString, std::ffi::OsString)> = if spec.inherit_env {
        std::env::vars_os().collect()
    } else {
        Vec::new()
    };
    let env = crate::env::build_with(inherited, executor.config(), &spec.env, spec.root_path_only);
    let mut cmd = std::process::Command::new(resolved);
    cmd.arg0(arg0(std::ffi::OsStr::new(&spec.program), resolved))
        .args(&spec.args)
        .env_clear()
        .envs(env)
        // Set, never passed on: a Python program (a route's `powerprofilesctl`) would otherwise
        // run the `import` lines of the person's `~/.local/lib/python3.X/site-packages/*.pth`
        // and their `usercustomize` before its own first line — the person's files, the agent's
        // to write (attack 25 F4; class: *an interpreter started so that it reads the person's
        // start-up files*, the environment-is-code class of attack 18 F2).
        .env("PYTHONNOUSERSITE", "1")
        // And a Python script's own directory is not put first on its import path: an Omarchy
        // script in the person's `bin/` imports `json`, and a `json.py` the agent dropped beside
        // it ran under the person's yes (attack 33 F6's neighbour). Python >= 3.11 reads it.
        .env("PYTHONSAFEPATH", "1")
        // The same for every PulseAudio client (`pactl` in read routes): libpulse reads the
        // person's `~/.config/pulse/client.conf`, and when no server answers it starts the
        // `daemon-binary` that file names (attack 26 F7: a read route ran the agent's program).
        // An empty configuration instead: the defaults, root's `/usr/bin/pulseaudio`.
        .env("PULSE_CLIENTCONFIG", "/dev/null")
        .current_dir(spec.cwd.as_deref().unwrap_or(Path::new("/")))
        .process_group(0);
    cmd
}

/// The name a program is told it has (`argv[0]`): the name asked for when it is the resolved
/// file's own name (`bash` → `/usr/bin/bash`), else the resolved real path. A multi-call binary
/// picks its command by that name (`/usr/bin/reboot` → `systemctl`, which reboots when called
/// `reboot`), so a link's name must never pick a command other than the file that was judged
/// (attack 15 F5; class: *what is judged is not what the program is told it is*).
pub(crate) fn arg0<'a>(asked: &'a std::ffi::OsStr, resolved: &'a Path) -> &'a std::ffi::OsStr {
    let asked_name = Path::new(asked).file_name();
    if asked_name.is_some() && asked_name == resolved.file_name() {
        asked
    } else {
        resolved.as_os_str()
    }
}

/// Check the spec, resolve its program (or check the pinned file is still the one judged) and
/// build the command.
pub(crate) fn prepare(
    executor: &Executor,
    spec: &CommandSpec,
    pin: Option<&ProgramPin>,
) -> Result<(PathBuf, std::process::Command), ExecError> {
    if let Some((bad, _)) = spec.env.iter().find(|(k, _)| !crate::env::valid_key(k)) {
        return Err(ExecError::Spawn {
            command: spec.display(),
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("invalid environment variable name {bad:?}"),
            ),
        });
    }
    // Only the table's names reach a program (see `env.rs`); a caller asking for another is a
    // mistake to see, not to drop quietly.
    if let Some((bad, _)) = spec.env.iter().find(|(k, _)| !crate::env::may_set(k)) {
        return Err(ExecError::Spawn {
            command: spec.display(),
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "environment variable {bad:?} is not one a program may receive (archgate_exec::env::TABLE)"
                ),
            ),
        });
    }
    let resolved = match pin {
        Some(pin) => {
            crate::pin::verify(executor.config(), pin)?;
            pin.path().to_owned()
        }
        None => executor.resolve_program(&spec.program)?,
    };
    let cmd = command(&resolved, spec, executor);
    Ok((resolved, cmd))
}

/// Run to the end; see [`crate::Permit::run`].
pub(crate) async fn run(
    executor: &Executor,
    permit_timeout: Option<Duration>,
    spec: CommandSpec,
    pin: Option<Arc<ProgramPin>>,
) -> Result<Output, ExecError> {
    let cfg = executor.config();
    let shown = spec.display();
    let (resolved, std_cmd) = prepare(executor, &spec, pin.as_deref())?;
    let timeout = spec
        .timeout
        .or(permit_timeout)
        .unwrap_or(cfg.default_timeout);
    let mut cmd = tokio::process::Command::from(std_cmd);
    cmd.stdin(if spec.stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .kill_on_drop(true);

    tracing::debug!(command = %shown, program = %resolved.display(), ?timeout, "running");
    let started = Instant::now();
    let mut child = cmd.spawn().map_err(|source| ExecError::Spawn {
        command: shown.clone(),
        source,
    })?;
    let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) else {
        return Err(ExecError::Spawn {
            command: shown,
            source: std::io::Error::other("the process ended before its id could be read"),
        });
    };
    crate::guard::watch(pid);
    let mut guard = GroupGuard {
        pgid: Pid::from_raw(pid),
        armed: true,
    };

    let writer = match (spec.stdin, child.stdin.take()) {
        (Some(bytes), Some(mut pipe)) => Some(tokio::spawn(async move {
            // A program that exits without reading all of it gives EPIPE: not our concern.
            let _ = pipe.write_all(&bytes).await;
        })),
        _ => None,
    };
    let (stop_tx, stop_rx) = watch::channel(false);
    let cap = cfg.output_cap;
    let mut out_task = tokio::spawn(collect(child.stdout.take(), cap, stop_rx.clone()));
    let mut err_task = tokio::spawn(collect(child.stderr.take(), cap, stop_rx));

    let ended = supervise(&mut child, guard.pgid, timeout, cfg.kill_grace).await;
    guard.armed = false;
    let duration = started.elapsed();

    // The group is gone; what is left in the pipes arrives at once. Only a process that left the
    // group while holding a pipe could keep it open: stop reading after a short while.
    let (mut out, mut err) = (None, None);
    let drained = tokio::time::timeout(DRAIN, async {
        out = Some((&mut out_task).await);
        err = Some((&mut err_task).await);
    })
    .await;
    if drained.is_err() {
        tracing::debug!(command = %shown, "a process outside the group still holds the output pipes");
    }
    let _ = stop_tx.send(true);
    if let Some(w) = writer {
        w.abort();
    }
    let out = match out {
        Some(done) => done,
        None => out_task.await,
    }
    .unwrap_or_else(|_| HeadTail::new(0));
    let err = match err {
        Some(done) => done,
        None => err_task.await,
    }
    .unwrap_or_else(|_| HeadTail::new(0));

    match ended {
        Ended::TimedOut => {
            tracing::debug!(command = %shown, ?timeout, "timed out");
            Err(ExecError::TimedOut {
                command: shown,
                after: timeout,
            })
        }
        Ended::WaitFailed(source) => Err(ExecError::Spawn {
            command: shown,
            source,
        }),
        Ended::Exited(status) => {
            let (out_keep, err_keep) = share(cap, out.total(), err.total());
            let (stdout, out_cut) = out.finish(out_keep);
            let (stderr, err_cut) = err.finish(err_keep);
            tracing::debug!(command = %shown, ?status, ?duration, "finished");
            Ok(Output {
                program: resolved,
                status: status.into(),
                stdout,
                stderr,
                truncated: out_cut || err_cut,
                duration,
            })
        }
    }
}

/// Start without waiting; see [`crate::Permit::spawn_detached`].
pub(crate) fn spawn_detached(
    executor: &Executor,
    spec: CommandSpec,
    pin: Option<Arc<ProgramPin>>,
) -> Result<u32, ExecError> {
    let shown = spec.display();
    if spec.stdin.is_some() {
        return Err(ExecError::Spawn {
            command: shown,
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "a detached program takes no stdin",
            ),
        });
    }
    let (resolved, mut cmd) = prepare(executor, &spec, pin.as_deref())?;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    tracing::debug!(command = %shown, program = %resolved.display(), "launching detached");
    let mut child = cmd.spawn().map_err(|source| ExecError::Spawn {
        command: shown.clone(),
        source,
    })?;
    let pid = child.id();
    let reaper = std::thread::Builder::new()
        .name("archgate-reap".into())
        .spawn(move || {
            let status = child.wait();
            tracing::debug!(pid, ?status, "detached program ended");
        });
    if let Err(e) = reaper {
        tracing::warn!(command = %shown, error = %e, "no thread to reap a detached program; it will stay a zombie until archgate exits");
    }
    Ok(pid)
}

/// How the leader's wait ended.
enum Ended {
    Exited(ExitStatus),
    TimedOut,
    WaitFailed(std::io::Error),
}

/// Wait for the leader within the timeout, then make sure nothing of its group is left.
async fn supervise(child: &mut Child, pgid: Pid, timeout: Duration, grace: Duration) -> Ended {
    match tokio::time::timeout(timeout, child.wait()).await {
        Ok(Ok(status)) => {
            if group_alive(pgid) {
                tracing::debug!(pgid = pgid.as_raw(), "ending processes left behind");
                end_group(child, pgid, grace).await;
            }
            Ended::Exited(status)
        }
        Ok(Err(e)) => {
            end_group(child, pgid, Duration::ZERO).await;
            Ended::WaitFailed(e)
        }
        Err(_) => {
            end_group(child, pgid, grace).await;
            Ended::TimedOut
        }
    }
}

/// SIGTERM to the group, SIGKILL to what is left after `grace`, then wait for it to go.
async fn end_group(child: &mut Child, pgid: Pid, grace: Duration) {
    let deadline = tokio::time::Instant::now() + grace.min(MAX_GRACE);
    signal_group(pgid, Signal::SIGTERM);
    let _ = tokio::time::timeout_at(deadline, child.wait()).await;
    wait_group_gone(pgid, deadline).await;
    if group_alive(pgid) {
        signal_group(pgid, Signal::SIGKILL);
    }
    let settle = tokio::time::Instant::now() + SETTLE;
    let _ = tokio::time::timeout_at(settle, child.wait()).await;
    wait_group_gone(pgid, settle).await;
}

async fn wait_group_gone(pgid: Pid, deadline: tokio::time::Instant) {
    while group_alive(pgid) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(POLL).await;
    }
}

fn signal_group(pgid: Pid, sig: Signal) {
    match killpg(pgid, sig) {
        Ok(()) | Err(Errno::ESRCH) => {}
        Err(e) => {
            tracing::warn!(pgid = pgid.as_raw(), signal = %sig, error = %e, "could not signal process group")
        }
    }
}

/// Whether any process of the group is alive (zombies, which hold nothing, do not count).
fn group_alive(pgid: Pid) -> bool {
    match killpg(pgid, None) {
        Err(Errno::ESRCH) => false,
        Ok(()) => live_member_in_proc(pgid).unwrap_or(true),
        Err(_) => true,
    }
}

/// Scan `/proc` for a non-zombie process whose process group is `pgid`.
fn live_member_in_proc(pgid: Pid) -> Option<bool> {
    let entries = std::fs::read_dir("/proc").ok()?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        if let Some((state, pgrp)) = parse_stat(&stat)
            && pgrp == pgid.as_raw()
            && state != 'Z'
            && state != 'X'
        {
            return Some(true);
        }
    }
    Some(false)
}

/// State and process group from a `/proc/PID/stat` line (the name may contain spaces and `)`).
pub(crate) fn parse_stat(stat: &str) -> Option<(char, i32)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_ascii_whitespace();
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((state, pgrp))
}

/// Read one stream into a head-and-tail collector until EOF or until told to stop.
async fn collect<R: AsyncRead + Unpin>(
    reader: Option<R>,
    cap: usize,
    mut stop: watch::Receiver<bool>,
) -> HeadTail {
    let mut kept = HeadTail::new(cap);
    let Some(mut reader) = reader else {
        return kept;
    };
    let mut buf = vec![0u8; CHUNK];
    loop {
        tokio::select! {
            biased;
            _ = stop.changed() => break,
            r = reader.read(&mut buf) => match r {
                Ok(0) => break,
                Ok(n) => kept.push(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    tracing::debug!(error = %e, "reading program output failed");
                    break;
                }
            },
        }
    }
    kept
}

/// Kills the whole group if a run is abandoned midway (its future dropped); and, held from the
/// spawn to the end, keeps the group with archgate's guard so it dies with this process.
struct GroupGuard {
    pgid: Pid,
    armed: bool,
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.armed {
            signal_group(self.pgid, Signal::SIGKILL);
        }
        // Ended (or killed just now): the guard forgets it (`guard.rs`).
        crate::guard::release(self.pgid.as_raw());
    }
}

#[cfg(test)]
mod tests {
    use super::parse_stat;

    #[test]
    fn stat_lines_with_odd_names_parse() {
        assert_eq!(
            parse_stat("1234 (a) b (c) S 1 4321 4321 0 -1 4194560 0"),
            Some(('S', 4321))
        );
        assert_eq!(parse_stat("77 (sh) Z 1 77 77"), Some(('Z', 77)));
        assert_eq!(parse_stat("garbage"), None);
    }
}
