//! `state.json` in archgate's runtime directory: what a bar shows without asking a server.
//!
//! Two writers, never at the same time:
//! - `archgate serve --http` keeps it current while it serves (port, pid, pending approvals,
//!   developer mode, whether the config parses) and marks it `stopped` when it ends;
//! - the Omarchy plugin writes it when no daemon is serving (`stopped`, `failed`, `missing`,
//!   `unresponsive`, `starting`), so the bar can say why.
//!
//! A daemon only overwrites a file that names no other live, serving archgate: a second
//! instance that fails to bind never hides the one that serves. Readers (`archgate status`, the
//! bar widget) treat a `serving` file whose pid is gone as stopped. The file holds counts and
//! flags only, never arguments or secrets; it is 0600 in the 0700 runtime directory.

use archgate_core::paths::{Paths, write_private_file};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::app::App;

/// The file's content. Fields the plugin does not know are optional, so either writer's file
/// parses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BarState {
    /// `serving`, `stopped`, `failed`, `missing`, `unresponsive` or `starting`.
    pub status: String,
    /// Who wrote it: `archgate` (the daemon) or `plugin`.
    #[serde(default)]
    pub writer: String,
    /// The daemon's process id (while it serves).
    #[serde(default)]
    pub pid: Option<u32>,
    /// The port of `/mcp` and `/health` on 127.0.0.1.
    #[serde(default)]
    pub port: Option<u16>,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub pending_approvals: u64,
    #[serde(default)]
    pub developer_mode: bool,
    /// Unix seconds when developer mode ends.
    #[serde(default)]
    pub developer_mode_until: Option<u64>,
    /// False while the config file is not applied (the last good copy stays in force).
    #[serde(default = "yes")]
    pub config_ok: bool,
    /// While the config file is not applied: why, and which config is in force instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_problem: Option<String>,
    /// False while the activity log cannot be written: every call is refused until it can
    /// (attack 35 F7: the bar said nothing while `status` did).
    #[serde(default = "yes")]
    pub log_ok: bool,
    /// While the log cannot be written: in words for the person.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_problem: Option<String>,
    /// Why it is not serving, in words for the person.
    #[serde(default)]
    pub reason: Option<String>,
    /// Unix seconds of the last write.
    #[serde(default)]
    pub updated_at: u64,
}

fn yes() -> bool {
    true
}

impl BarState {
    /// Whether this file claims a serving daemon whose process still exists.
    pub fn live_daemon(&self) -> bool {
        self.status == "serving" && self.pid.is_some_and(pid_alive)
    }
}

pub fn pid_alive(pid: u32) -> bool {
    i32::try_from(pid)
        .is_ok_and(|p| p > 0 && nix::sys::signal::kill(nix::unistd::Pid::from_raw(p), None).is_ok())
}

/// Reads and parses the file; `None` when it is missing or not ours to understand.
pub fn read(path: &Path) -> Option<BarState> {
    // Only archgate's own file (not a link, not another uid's): the bar and `status` believe it.
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut std::io::Read::take(archgate_core::paths::open_private(path).ok()?, 1 << 20),
        &mut text,
    )
    .ok()?;
    serde_json::from_str(&text).ok()
}

fn write(path: &Path, state: &BarState) {
    let mut bytes = serde_json::to_vec_pretty(state).unwrap_or_default();
    bytes.push(b'\n');
    if let Err(e) = write_private_file(path, &bytes) {
        tracing::warn!("cannot write {}: {e}", path.display());
    }
}

/// True when the file names another archgate that is alive and serving.
fn held_by_another(path: &Path) -> bool {
    read(path).is_some_and(|s| s.live_daemon() && s.pid != Some(std::process::id()))
}

/// The daemon's view of itself now.
fn snapshot(app: &App, port: u16) -> BarState {
    let gate = &app.gate;
    let now = archgate_core::person::now_secs();
    let until = gate.person().dev_mode_until(now);
    BarState {
        status: "serving".into(),
        writer: "archgate".into(),
        pid: Some(std::process::id()),
        port: Some(port),
        version: Some(env!("CARGO_PKG_VERSION").into()),
        pending_approvals: gate.broker().pending().len() as u64,
        developer_mode: until.is_some(),
        developer_mode_until: until,
        config_ok: !gate.config().is_broken(),
        config_problem: config_problem(&gate.config().status()),
        log_ok: gate.audit().writable(),
        log_problem: log_problem(gate.audit()),
        reason: None,
        updated_at: now,
    }
}

/// One line for a bar while the activity log cannot be written.
pub fn log_problem(log: &archgate_core::audit::AuditLog) -> Option<String> {
    let failures = log
        .stats()
        .write_failures
        .load(std::sync::atomic::Ordering::Relaxed);
    (!log.writable()).then(|| {
        format!(
            "the activity log cannot be written ({failures} failed writes): no call is answered \
             until it can; check the disk and `archgate doctor`"
        )
    })
}

/// One line for a bar while the config file is not applied.
pub fn config_problem(s: &archgate_core::config::ConfigStatus) -> Option<String> {
    (!s.ok).then(|| {
        format!(
            "{} is not applied ({}); using {}",
            s.file,
            s.error.as_deref().unwrap_or("see `archgate config check`"),
            s.using
        )
    })
}

/// Marks the file `stopped` when the daemon that owns it ends (dropped at the end of serving).
pub struct Writer {
    path: std::path::PathBuf,
    port: u16,
}

impl Drop for Writer {
    fn drop(&mut self) {
        if read(&self.path).is_some_and(|s| s.pid == Some(std::process::id())) {
            write(
                &self.path,
                &BarState {
                    status: "stopped".into(),
                    writer: "archgate".into(),
                    pid: None,
                    port: Some(self.port),
                    version: Some(env!("CARGO_PKG_VERSION").into()),
                    pending_approvals: 0,
                    developer_mode: false,
                    developer_mode_until: None,
                    config_ok: true,
                    config_problem: None,
                    log_ok: true,
                    log_problem: None,
                    reason: None,
                    updated_at: archgate_core::person::now_secs(),
                },
            );
        }
    }
}

/// Starts keeping the file current for a daemon serving on `port`: written at once, again
/// whenever a question is asked or decided, and when a once-a-second look finds developer mode,
/// the pending count or the config's health changed. Ends with `shutdown`; the returned guard
/// marks the file stopped when dropped.
pub fn start(
    app: Arc<App>,
    port: u16,
    shutdown: tokio_util::sync::CancellationToken,
) -> Option<Writer> {
    let path = app.paths.state_json();
    if held_by_another(&path) {
        tracing::warn!(
            "{} belongs to another running archgate; not taking it over",
            path.display()
        );
        return None;
    }
    let mut last = snapshot(&app, port);
    write(&path, &last);
    let mut events = app.gate.broker().subscribe();
    let task_path = path.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                ev = events.recv() => {
                    if matches!(ev, Err(tokio::sync::broadcast::error::RecvError::Closed)) {
                        break;
                    }
                }
                _ = shutdown.cancelled() => break,
            }
            let now = snapshot(&app, port);
            let same = BarState {
                updated_at: last.updated_at,
                ..now.clone()
            } == last;
            if !same {
                write(&task_path, &now);
                last = now;
            }
        }
    });
    Some(Writer { path, port })
}

/// Records that the daemon could not serve, unless another archgate serves already.
pub fn failed(paths: &Paths, reason: &str) {
    let path = paths.state_json();
    if held_by_another(&path) || !path.parent().is_some_and(Path::is_dir) {
        return;
    }
    write(
        &path,
        &BarState {
            status: "failed".into(),
            writer: "archgate".into(),
            pid: None,
            port: None,
            version: Some(env!("CARGO_PKG_VERSION").into()),
            pending_approvals: 0,
            developer_mode: false,
            developer_mode_until: None,
            config_ok: true,
            config_problem: None,
            log_ok: true,
            log_problem: None,
            reason: Some(reason.into()),
            updated_at: archgate_core::person::now_secs(),
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plugin_written_file_with_few_fields_parses() {
        let s: BarState = serde_json::from_str(
            r#"{"status":"missing","writer":"plugin","reason":"no archgate on PATH"}"#,
        )
        .unwrap();
        assert_eq!(s.status, "missing");
        assert!(s.config_ok);
        assert!(s.log_ok);
        assert!(!s.live_daemon());
    }

    #[test]
    fn a_serving_file_whose_pid_is_gone_is_not_a_live_daemon() {
        let mine = BarState {
            status: "serving".into(),
            writer: "archgate".into(),
            pid: Some(std::process::id()),
            port: Some(1),
            version: None,
            pending_approvals: 0,
            developer_mode: false,
            developer_mode_until: None,
            config_ok: true,
            config_problem: None,
            log_ok: true,
            log_problem: None,
            reason: None,
            updated_at: 0,
        };
        assert!(mine.live_daemon());
        // Pid numbers above the kernel's largest pid_max (2^22) never name a process.
        let gone = BarState {
            pid: Some(4_194_305),
            ..mine
        };
        assert!(!gone.live_daemon());
    }
}
