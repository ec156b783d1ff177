//! `archgate serve [--http [--port N]]` and `archgate reload`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::CancellationToken;

use crate::app::App;
use crate::{frames, instances, server};

pub async fn run(
    config: Option<PathBuf>,
    http: bool,
    port: Option<u16>,
) -> anyhow::Result<ExitCode> {
    let observer: Option<archgate_core::gate::Observer> = if http {
        Some(Box::new(frames::call_frame))
    } else {
        None
    };
    let app = match App::open(config.clone(), observer) {
        Ok(a) => Arc::new(a),
        Err(e) => {
            if http {
                frames::emit(&serde_json::json!({"event": "failed", "reason": format!("{e:#}")}));
                // A config that cannot be applied refuses the start; the bar says why.
                if let Ok((_, paths)) = crate::app::config_and_paths(config) {
                    crate::commands::state_file::failed(&paths, &format!("{e:#}"));
                }
            }
            return Err(e);
        }
    };
    let _registration =
        instances::register(&app.paths.runtime_dir, if http { "http" } else { "stdio" });
    let shutdown = CancellationToken::new();
    spawn_signal_handlers(app.clone(), shutdown.clone())?;
    spawn_config_poll(app.clone(), shutdown.clone());
    // The person's approval channels: page, control socket, notifications.
    let _channels = crate::channels::start(
        app.clone(),
        if http { "http" } else { "stdio" },
        shutdown.clone(),
    )
    .await;

    let served = if http {
        let port = port.unwrap_or(app.gate.config().current().server.port);
        server::http::serve(app.clone(), port, shutdown.clone()).await
    } else {
        tokio::select! {
            r = server::stdio::serve(app.clone()) => r,
            _ = shutdown.cancelled() => Ok(()),
        }
    };
    // Calls still in flight (a client gone mid-approval) write their records before the audit
    // log is flushed.
    if !app.gate.wait_idle(Duration::from_secs(3)).await {
        tracing::warn!("calls still running at shutdown; their records may be missing");
    }
    app.shutdown();
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
fn spawn_config_poll(app: Arc<App>, shutdown: CancellationToken) {
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
            if let Some(old) = old {
                if old.server.port != new.server.port {
                    tracing::warn!("server.port changed; it applies at the next start");
                }
                if old.paths != new.paths || old.audit != new.audit {
                    tracing::warn!("[paths] and [audit] changes apply at the next start");
                }
            }
            return true;
        }
        ReloadOutcome::Rejected => {
            tracing::warn!(
                trigger = why,
                "config file does not parse; the previous config stays in force"
            );
            // Once per broken version of the file (an unchanged file is not re-reported).
            let problems: Vec<String> = app
                .gate
                .config()
                .problems()
                .iter()
                .map(|p| p.to_string())
                .collect();
            tokio::spawn(async move {
                let body = format!(
                    "The previous config stays in force. {}",
                    problems.join("; ")
                );
                if let Err(e) =
                    crate::notify::plain("archgate: config.toml does not parse", &body).await
                {
                    tracing::debug!("no notification about the config: {e}");
                }
            });
        }
        ReloadOutcome::WaitingForFile | ReloadOutcome::Unchanged => {}
    }
    false
}

pub fn reload(config: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let env = archgate_core::paths::PathEnv::from_process();
    let file = crate::app::config_path(config)?;
    let loaded = archgate_core::config::load(&file);
    let paths = archgate_core::paths::Paths::resolve(&env, Some(file), &loaded.config.paths)?;
    let pids = instances::live(&paths.runtime_dir);
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
