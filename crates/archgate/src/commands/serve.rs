//! `archgate serve [--http [--port N]]` and `archgate reload`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::CancellationToken;

use crate::app::App;
use crate::server::{self, frames, instances};

/// `archgate serve --http`: the daemon. `detached`: started by a stdio bridge (`bridge/spawn.rs`),
/// so it leaves the bridge's session and logs to the state directory.
pub async fn run_daemon(
    config: Option<PathBuf>,
    port: Option<u16>,
    detached: bool,
) -> anyhow::Result<ExitCode> {
    if detached {
        detach(config.clone());
    }
    run(config, true, port, detached, None).await
}

/// `serve --http` with an extension assembled in (another binary built on the library: the
/// conformance suite's). archgate's own commands never pass one.
pub async fn run_daemon_extended(
    port: Option<u16>,
    extension: Arc<dyn crate::app::extension::Extension>,
) -> anyhow::Result<ExitCode> {
    run(None, true, port, false, Some(extension)).await
}

/// `archgate serve` in this process (no daemon reached, or `--in-process`).
pub async fn run_in_process(config: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    run(config, false, None, false, None).await
}

/// A new session (away from the bridge's terminal and process group) and stderr to
/// `daemon.log` in the state directory (0600), since the spawner's stdio is /dev/null.
fn detach(config: Option<PathBuf>) {
    let _ = nix::unistd::setsid();
    let Ok((_, paths)) = crate::app::config_and_paths(config) else {
        return;
    };
    let uid = nix::unistd::getuid().as_raw();
    if archgate_core::paths::ensure_private_dir(&paths.state_dir, uid).is_err()
        || archgate_core::paths::untrusted_dir(&paths.state_dir, uid).is_some()
    {
        return;
    }
    // Never through a link at its name (it would have the daemon's stderr appended to the
    // person's file of someone else's choosing), never another's file, in the directory judged.
    if let Ok(f) = archgate_core::paths::OwnDir::open(&paths.state_dir)
        .and_then(|d| d.open_append("daemon.log".as_ref()))
    {
        let _ = nix::unistd::dup2_stderr(&f);
    }
}

async fn run(
    config: Option<PathBuf>,
    http: bool,
    port: Option<u16>,
    spawned: bool,
    extension: Option<Arc<dyn crate::app::extension::Extension>>,
) -> anyhow::Result<ExitCode> {
    let observer: Option<archgate_core::gate::Observer> = if http {
        Some(Box::new(frames::call_frame))
    } else {
        None
    };
    let app = match App::open_extended(config.clone(), observer, extension) {
        Ok(a) => Arc::new(a),
        Err(e) => {
            if http {
                frames::emit(&serde_json::json!({"event": "failed", "reason": format!("{e:#}")}));
                // A config that cannot be applied refuses the start; the bar says why.
                if let Ok((_, paths)) = crate::app::config_and_paths(config) {
                    crate::server::state_file::failed(&paths, &format!("{e:#}"));
                }
            }
            return Err(e);
        }
    };
    // A server checks on every request whether a client was revoked: by inotify, so a request
    // reads one counter instead of `stat`ing two files (without inotify, the `stat`s go on).
    // (HTTP only: a stdio server reads no tokens, and inotify instances are few per user.)
    if http && !app.clients.watch() {
        tracing::debug!(
            "no inotify watch on the clients files; they are looked at on each request"
        );
    }
    // One daemon per runtime directory: a second one refuses and names the first (its
    // state.json stays the first one's).
    let _claim = if http {
        match crate::server::daemon::claim(&app.paths, spawned) {
            Ok(c) => Some(c),
            Err(e) => {
                frames::emit(&serde_json::json!({"event": "failed", "reason": e.to_string()}));
                return Err(e.into());
            }
        }
    } else {
        tracing::info!(
            "serving stdio in this process: its own broker, budgets and pending list (no daemon)"
        );
        None
    };
    let _registration =
        instances::register(&app.paths.runtime_dir, if http { "http" } else { "stdio" });
    let shutdown = CancellationToken::new();
    spawn_signal_handlers(app.clone(), shutdown.clone())?;
    // The programs this server runs die with it: its guard from the start (`exec::guard`).
    archgate_core::exec::guard::start_now();
    spawn_config_poll(app.clone(), shutdown.clone(), http);
    // Started on the last good copy (the file cannot be applied, or is gone): said at once on
    // the desktop too, not only on stderr, /health and the bar.
    if app.gate.config().is_broken() {
        let status = app.gate.config().status();
        tokio::spawn(async move {
            let (title, body) = config_notice(&status);
            if let Err(e) = crate::channels::notify::plain(&title, &body).await {
                tracing::debug!("no notification about the config: {e}");
            }
        });
    }
    // The person's approval channels: page, control socket, notifications.
    let _channels = crate::channels::start(
        app.clone(),
        if http { "http" } else { "stdio" },
        shutdown.clone(),
    )
    .await;
    // The daemon's socket for bridged stdio clients.
    let bridge = if http {
        match server::bridge::start(app.clone()) {
            Ok(b) => Some(b),
            Err(e) => {
                tracing::warn!(
                    "the bridge socket could not start (stdio clients will serve in-process): {e}"
                );
                None
            }
        }
    } else {
        None
    };

    let served = if http {
        let port = port.unwrap_or(app.gate.config().current().server.port);
        server::http::serve(app.clone(), port, shutdown.clone()).await
    } else {
        server::stdio::serve(app.clone(), shutdown.clone()).await
    };
    // Calls still parked end now (`unreachable`, each recorded and answered); calls still in
    // flight (a client gone mid-approval) write their records before the audit log is flushed.
    let withdrawn = app.gate.broker().withdraw_all();
    if withdrawn > 0 {
        tracing::info!("stopping: {withdrawn} parked approval(s) withdrawn");
    }
    if !app.gate.wait_idle(Duration::from_secs(3)).await {
        tracing::warn!("calls still running at shutdown; their records may be missing");
    }
    // Bridged calls have answered by now; then their connections close.
    if let Some(b) = bridge {
        b.close(Duration::from_secs(1)).await;
    }
    app.shutdown();
    // Every call's frame is out before the daemon ends (they are written in batches).
    if http {
        frames::flush();
    }
    served.map(|_| ExitCode::SUCCESS)
}

fn spawn_signal_handlers(app: Arc<App>, shutdown: CancellationToken) -> anyhow::Result<()> {
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    let mut hup = signal(SignalKind::hangup())?;
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = term.recv() => break,
                _ = int.recv() => break,
                _ = hup.recv() => {
                    app.clients.reload_if_changed();
                    reload_now(&app, "SIGHUP");
                    refresh_sessions(&app).await;
                }
            }
        }
        tracing::info!("stopping");
        shutdown.cancel();
    });
    Ok(())
}

/// Clients every 500 ms (a revoked token's sessions end within a second), config every 2 s.
/// A daemon whose runtime directory is gone (the session ended, a test's directory removed)
/// stops: nothing can reach it any more.
fn spawn_config_poll(app: Arc<App>, shutdown: CancellationToken, daemon: bool) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(500));
        let mut n: u64 = 0;
        loop {
            tokio::select! {
                _ = tick.tick() => {
                    n += 1;
                    let clients_changed = app.clients.reload_if_changed();
                    let config_changed = n.is_multiple_of(4) && reload_now(&app, "poll");
                    if clients_changed || config_changed {
                        refresh_sessions(&app).await;
                    }
                    if daemon && n.is_multiple_of(4) && !app.paths.runtime_dir.exists() {
                        tracing::warn!(dir = %app.paths.runtime_dir.display(), "the runtime directory is gone; stopping");
                        shutdown.cancel();
                    }
                }
                _ = shutdown.cancelled() => break,
            }
        }
    });
}

async fn refresh_sessions(app: &App) {
    let config = app.gate.config().current();
    app.sessions
        .refresh(app.gate.catalogue(), &config, &app.clients)
        .await;
}

/// Re-reads the config; true when a new snapshot is in force.
pub fn reload_now(app: &App, why: &str) -> bool {
    use archgate_core::config::ReloadOutcome;
    let (outcome, old) = app.gate.config().reload();
    match outcome {
        ReloadOutcome::Applied => {
            let new = app.gate.config().current();
            tracing::info!(trigger = why, "config reloaded");
            // Keys read only at start (`config::START_ONLY`): said on each reload that changes
            // one, and shown by /health and `archgate status` until the restart.
            if let Some(old) = old {
                let changed = archgate_core::config::restart_needed(&old, &new);
                if !changed.is_empty() {
                    tracing::warn!(
                        keys = %changed.join(", "),
                        "{} changed; takes effect at restart",
                        changed.join(", ")
                    );
                }
            }
            return true;
        }
        ReloadOutcome::Rejected => {
            // Once per change on disk (an unchanged file is not re-reported): which file, why,
            // and which config applies instead.
            let status = app.gate.config().status();
            tracing::warn!(
                trigger = why,
                file = %status.file,
                using = %status.using,
                "config file not applied; the previous config stays in force: {}",
                status.error.as_deref().unwrap_or("")
            );
            tokio::spawn(async move {
                let (title, body) = config_notice(&status);
                if let Err(e) = crate::channels::notify::plain(&title, &body).await {
                    tracing::debug!("no notification about the config: {e}");
                }
            });
        }
        ReloadOutcome::WaitingForFile | ReloadOutcome::Unchanged => {}
    }
    false
}

/// The desktop notification while the config file is not applied: the file, why, and that
/// the last good config applies instead.
pub fn config_notice(s: &archgate_core::config::ConfigStatus) -> (String, String) {
    let name = std::path::Path::new(&s.file)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "config.toml".into());
    (
        format!("archgate: {name} is not applied"),
        format!(
            "{}: {}. Using {} (`archgate config check` says more).",
            s.file,
            s.error.as_deref().unwrap_or("see `archgate config check`"),
            s.using
        ),
    )
}

pub fn reload(config: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let file = crate::app::config_path(config.clone())?;
    // The file's problems are told; the daemons are found where the config in force puts them.
    let loaded = archgate_core::config::load(&file);
    let (_, paths) = crate::app::config_and_paths(config)?;
    // Only archgates of this user, named in a runtime directory of archgate's own: a pid named
    // by another user's file is never signalled (attack 14 F6).
    let pids = match instances::live_checked(&paths.runtime_dir) {
        Ok(pids) => pids,
        Err(why) => {
            super::out(format!(
                "not signalling anything: the runtime directory is not archgate's own: {why}"
            ));
            return Ok(ExitCode::from(1));
        }
    };
    if pids.is_empty() {
        super::out("no running archgate found; the config applies when it starts");
        return Ok(ExitCode::from(1));
    }
    for pid in &pids {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(*pid),
            nix::sys::signal::Signal::SIGHUP,
        );
    }
    super::out(format!(
        "asked {} running archgate instance(s) to reload",
        pids.len()
    ));
    for p in &loaded.problems {
        super::out(format!("  problem: {p}"));
    }
    Ok(ExitCode::SUCCESS)
}
