//! Running a program in the person's terminal, at their keystroke: a hand-off's command.
//!
//! `archgate handoff-run` (the helper a hand-off's terminal runs) starts the person's command
//! here. Unlike a tool's run, the program must reach the terminal: it stays in the helper's
//! process group — the terminal's foreground group, so `sudo` can read the password from
//! `/dev/tty` and pacman can ask its questions on stdin, which is the terminal. Its stdout and
//! stderr are copied to the helper's as they come, and the last `tail_cap` bytes are kept for
//! the agent's answer. No timeout: the person watches it and can end it (Ctrl-C reaches the
//! whole foreground group). Otherwise as every launch: argv only, the program found (or its pin
//! verified) in the trusted directories, the allowlisted environment.
//!
//! **Invariant:** like [`crate::run_for_person`], only `crates/archgate/src/commands/` calls
//! [`run_for_person_in_terminal`] (`tests/exec/tidy.rs`).

use std::collections::VecDeque;
use std::os::unix::process::CommandExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::capture::ExitInfo;
use crate::config::ExecConfig;
use crate::error::ExecError;
use crate::executor::Executor;
use crate::spec::CommandSpec;

/// What a program run in the terminal left behind.
#[derive(Debug, Clone)]
pub struct TerminalRun {
    pub status: ExitInfo,
    /// The last bytes of stdout and stderr, interleaved as they came.
    pub tail: Vec<u8>,
    /// Bytes written in all.
    pub total: u64,
    pub duration: Duration,
}

/// Runs `spec` (pinned by [`Executor::pin`] when it was shown) in the caller's terminal; see the
/// module documentation.
/// `config` is the executor's settings the command was judged under (its search directories
/// make the `PATH` a route's script finds Omarchy's helpers in).
pub async fn run_for_person_in_terminal(
    config: ExecConfig,
    spec: CommandSpec,
    tail_cap: usize,
) -> Result<TerminalRun, ExecError> {
    let executor = Executor::new(config);
    let shown = spec.display();
    let (_, mut cmd) = crate::run::prepare(&executor, &spec, spec.pinned())?;
    // The helper's own group: the terminal's foreground group.
    cmd.process_group(nix::unistd::getpgrp().as_raw());
    cmd.stdin(Stdio::inherit())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut cmd = tokio::process::Command::from(cmd);
    let started = Instant::now();
    let mut child = cmd.spawn().map_err(|source| ExecError::Spawn {
        command: shown.clone(),
        source,
    })?;
    let tail = std::sync::Arc::new(std::sync::Mutex::new(Tail {
        kept: VecDeque::new(),
        cap: tail_cap,
        total: 0,
    }));
    let out = tokio::spawn(copy(child.stdout.take(), tokio::io::stdout(), tail.clone()));
    let err = tokio::spawn(copy(child.stderr.take(), tokio::io::stderr(), tail.clone()));
    let status = child.wait().await.map_err(|source| ExecError::Spawn {
        command: shown,
        source,
    })?;
    let _ = out.await;
    let _ = err.await;
    let t = tail.lock().unwrap_or_else(|p| p.into_inner());
    Ok(TerminalRun {
        status: status.into(),
        tail: t.kept.iter().copied().collect(),
        total: t.total,
        duration: started.elapsed(),
    })
}

struct Tail {
    kept: VecDeque<u8>,
    cap: usize,
    total: u64,
}

async fn copy<R: AsyncRead + Unpin, W: AsyncWrite + Unpin>(
    from: Option<R>,
    mut to: W,
    tail: std::sync::Arc<std::sync::Mutex<Tail>>,
) {
    let Some(mut from) = from else { return };
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match from.read(&mut buf).await {
            Ok(0) => break,
            Ok(n) => {
                // The terminal may be gone; the tail is still kept.
                let _ = to.write_all(&buf[..n]).await;
                let _ = to.flush().await;
                let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
                t.total += n as u64;
                t.kept.extend(&buf[..n]);
                let over = t.kept.len().saturating_sub(t.cap);
                t.kept.drain(..over);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
}
