//! `archgate status [--waybar | --json]`: is archgate serving, and what waits for the person.
//!
//! The answer comes from `/health` of the running daemon (the port in `state.json` when that
//! file names a live daemon, then `server.port` from the config), and falls back to
//! `state.json` when nothing answers — that is where the Omarchy plugin says why archgate is
//! not running. A daemon whose process exists but whose `/health` does not answer is
//! *unresponsive*, not serving: a wedged server looks alive to a pid check.
//!
//! `--waybar` prints the one JSON object a Waybar `custom` module reads (`return-type: json`):
//! `text`, `tooltip`, `class` (a list, for CSS) and `alt` (for `format-icons`). Its exit status
//! is always 0 so the module shows a stopped archgate instead of vanishing.

use serde::Serialize;
use serde_json::Value;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use super::health_probe::{self, ProbeError};
use super::out;
use crate::server::state_file::{self, BarState};

const PROBE_TIMEOUT: Duration = Duration::from_millis(1500);

/// What `status` found.
#[derive(Debug)]
pub enum Seen {
    Serving {
        port: u16,
        health: Value,
        /// Unix seconds when developer mode ends, when the daemon's state file says.
        dev_until: Option<u64>,
    },
    /// The process exists; `/health` does not answer.
    Unresponsive {
        pid: u32,
        port: Option<u16>,
        why: String,
    },
    /// Not serving: `stopped`, `failed`, `missing` or `starting`, with the reason when known.
    NotServing {
        status: String,
        reason: Option<String>,
    },
}

/// Looks at `state.json` and `/health`. `port` overrides where to look.
pub fn observe(config: Option<PathBuf>, port: Option<u16>) -> anyhow::Result<Seen> {
    let (cfg, paths) = crate::app::config_and_paths(config)?;
    let state = state_file::read(&paths.state_json());
    let live = state.as_ref().filter(|s| s.live_daemon());
    let mut ports = Vec::new();
    match port {
        Some(p) => ports.push(p),
        None => {
            if let Some(p) = live.and_then(|s| s.port) {
                ports.push(p);
            }
            if !ports.contains(&cfg.server.port) {
                ports.push(cfg.server.port);
            }
        }
    }
    let mut last_error: Option<ProbeError> = None;
    for p in ports {
        match health_probe::health(p, PROBE_TIMEOUT) {
            Ok(health) => {
                let dev_until = live
                    .filter(|s| s.port == Some(p))
                    .and_then(|s| s.developer_mode_until);
                return Ok(Seen::Serving {
                    port: p,
                    health,
                    dev_until,
                });
            }
            Err(e) => {
                tracing::debug!(kind = e.kind(), "no archgate on port {p}: {e}");
                last_error = Some(e);
            }
        }
    }
    if let Some(s) = live {
        return Ok(Seen::Unresponsive {
            pid: s.pid.unwrap_or_default(),
            port: s.port,
            why: last_error.map(|e| e.to_string()).unwrap_or_default(),
        });
    }
    Ok(not_serving(state))
}

fn not_serving(state: Option<BarState>) -> Seen {
    match state {
        Some(s) if s.status == "serving" => Seen::NotServing {
            status: "stopped".into(),
            reason: Some(format!(
                "the archgate that served (pid {}) has ended",
                s.pid.unwrap_or_default()
            )),
        },
        Some(s) if s.status == "unresponsive" => Seen::Unresponsive {
            pid: s.pid.unwrap_or_default(),
            port: s.port,
            why: s.reason.unwrap_or_default(),
        },
        Some(s) => Seen::NotServing {
            status: s.status,
            reason: s.reason,
        },
        None => Seen::NotServing {
            status: "stopped".into(),
            reason: None,
        },
    }
}

/// What a Waybar `custom` module reads.
#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct Waybar {
    pub text: String,
    pub tooltip: String,
    pub class: Vec<String>,
    pub alt: String,
}

const START_HINT: &str = "Start it: systemctl --user start archgate (see `archgate service`), or enable the Omarchy plugin.";

/// The activity log that cannot be written (`/health`'s `audit.writable`): archgate answers no
/// call until it can (attack 33 F1: thirty reads answered, no record, and `status` said nothing).
fn log_problem(health: &Value) -> Option<String> {
    let audit = &health["audit"];
    (audit["writable"].as_bool() == Some(false)).then(|| {
        format!(
            "NOT WRITABLE ({} failed writes) — no call is answered until it is; check the disk and `archgate doctor`",
            audit["write_failures"].as_u64().unwrap_or(0)
        )
    })
}

/// Why archgate's stored state is not in use, from `/health`'s `state` (`server/health.rs`).
fn state_problem(health: &Value) -> Option<&str> {
    (health["state"]["ok"].as_bool() == Some(false)).then(|| {
        health["state"]["problem"]
            .as_str()
            .unwrap_or("see the daemon's log")
    })
}

pub fn waybar(seen: &Seen, now: u64) -> Waybar {
    match seen {
        Seen::Serving {
            port,
            health,
            dev_until,
        } => {
            let pending = health["pending_approvals"].as_u64().unwrap_or(0);
            let dev = health["developer_mode"].as_bool().unwrap_or(false);
            let config_ok = health["config"]["ok"].as_bool().unwrap_or(true);
            let version = health["version"].as_str().unwrap_or("?");
            let mut class = vec!["serving".to_owned()];
            let mut tooltip = vec![format!(
                "archgate {version} is serving at http://127.0.0.1:{port}/mcp"
            )];
            tooltip.push(match pending {
                0 => "No approvals waiting.".to_owned(),
                1 => "1 approval waiting: open the approval page (archgate ui).".to_owned(),
                n => format!("{n} approvals waiting: open the approval page (archgate ui)."),
            });
            if pending > 0 {
                class.push("pending".into());
            }
            if dev {
                class.push("dev-mode".into());
                let left = dev_until
                    .map(|u| format!(" (about {} min left)", u.saturating_sub(now).div_ceil(60)))
                    .unwrap_or_default();
                tooltip.push(format!(
                    "Developer mode is on{left}: every call except destructive and blocked ones is approved without asking. End it: archgate dev-mode off"
                ));
            }
            if !config_ok {
                class.push("config-problem".into());
                let problems: Vec<&str> = health["config"]["problems"]
                    .as_array()
                    .map(|a| a.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let using = health["config"]["using"]
                    .as_str()
                    .unwrap_or("the previous config");
                let file = health["config"]["file"].as_str().unwrap_or("config.toml");
                tooltip.push(format!(
                    "{file} is not applied; using {using}: {}",
                    problems.join("; ")
                ));
            }
            if let Some(why) = log_problem(health) {
                class.push("log-problem".into());
                tooltip.push(why);
            }
            if let Some(why) = state_problem(health) {
                class.push("state-problem".into());
                tooltip.push(format!(
                    "archgate's stored rules are not used (no standing rule approves): {why}"
                ));
            }
            let text = match (dev, pending) {
                (true, 0) => "dev".to_owned(),
                (true, n) => format!("dev {n}"),
                (false, 0) => "on".to_owned(),
                (false, n) => n.to_string(),
            };
            let alt = if dev {
                "dev-mode"
            } else if pending > 0 {
                "pending"
            } else {
                "serving"
            };
            Waybar {
                text,
                tooltip: tooltip.join("\n"),
                class,
                alt: alt.into(),
            }
        }
        Seen::Unresponsive { pid, port, why } => Waybar {
            text: "?".into(),
            tooltip: format!(
                "archgate (pid {pid}) is running but its /health{} does not answer: {why}\nRestart it: systemctl --user restart archgate, or the Omarchy plugin's restart.",
                port.map(|p| format!(" on port {p}")).unwrap_or_default()
            ),
            class: vec!["unresponsive".into()],
            alt: "unresponsive".into(),
        },
        Seen::NotServing { status, reason } => {
            let (text, first) = match status.as_str() {
                "failed" => ("failed", "archgate could not start."),
                "missing" => (
                    "missing",
                    "archgate is not installed where the plugin looks.",
                ),
                "starting" => ("…", "archgate is starting."),
                _ => ("off", "archgate is not running."),
            };
            let mut tooltip = vec![first.to_owned()];
            if let Some(r) = reason.as_deref().filter(|r| !r.is_empty()) {
                tooltip.push(r.to_owned());
            }
            if status != "starting" && status != "missing" {
                tooltip.push(START_HINT.to_owned());
            }
            let mut class = vec![match status.as_str() {
                "failed" | "missing" => "failed".to_owned(),
                "starting" => "starting".to_owned(),
                _ => "stopped".to_owned(),
            }];
            if status == "missing" {
                class.push("missing".into());
            }
            Waybar {
                text: text.into(),
                tooltip: tooltip.join("\n"),
                class,
                alt: if status == "starting" || status == "failed" || status == "missing" {
                    status.clone()
                } else {
                    "stopped".into()
                },
            }
        }
    }
}

fn human(seen: &Seen) -> Vec<String> {
    match seen {
        Seen::Serving { port, health, .. } => {
            let mut lines = vec![format!(
                "archgate {}: serving at http://127.0.0.1:{port}/mcp (up {})",
                health["version"].as_str().unwrap_or("?"),
                duration(health["uptime_s"].as_u64().unwrap_or(0))
            )];
            lines.push(format!(
                "approvals waiting: {}",
                health["pending_approvals"].as_u64().unwrap_or(0)
            ));
            let dev = health["developer_mode"].as_bool().unwrap_or(false);
            lines.push(format!(
                "developer mode: {}",
                if dev {
                    "ON (archgate dev-mode off)"
                } else {
                    "off"
                }
            ));
            if health["config"]["ok"].as_bool().unwrap_or(true) {
                lines.push("config: ok".into());
            } else {
                lines.push(format!(
                    "config: NOT APPLIED — {}; using {}",
                    health["config"]["error"]
                        .as_str()
                        .unwrap_or("see `archgate config check`"),
                    health["config"]["using"]
                        .as_str()
                        .unwrap_or("the previous config")
                ));
            }
            for p in health["config"]["problems"]
                .as_array()
                .into_iter()
                .flatten()
            {
                lines.push(format!("  problem: {}", p.as_str().unwrap_or("")));
            }
            if let Some(why) = log_problem(health) {
                lines.push(format!("activity log: {why}"));
            }
            if let Some(why) = state_problem(health) {
                lines.push(format!(
                    "state: NOT USED — {why}; no standing rule approves until it is archgate's again"
                ));
            }
            let pending: Vec<&str> = health["config"]["restart_pending"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|k| k.as_str())
                .collect();
            if !pending.is_empty() {
                lines.push(format!(
                    "config: {} changed; takes effect at restart",
                    pending.join(", ")
                ));
            }
            let calls = &health["calls"];
            if calls.is_object() {
                lines.push(format!("calls: {calls}"));
            }
            lines
        }
        other => waybar(other, 0)
            .tooltip
            .lines()
            .map(str::to_owned)
            .collect(),
    }
}

fn duration(secs: u64) -> String {
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

fn json(seen: &Seen) -> Value {
    match seen {
        Seen::Serving { port, health, .. } => {
            serde_json::json!({"status": "serving", "port": port, "health": health})
        }
        Seen::Unresponsive { pid, port, why } => {
            serde_json::json!({"status": "unresponsive", "pid": pid, "port": port, "reason": why})
        }
        Seen::NotServing { status, reason } => {
            serde_json::json!({"status": status, "reason": reason})
        }
    }
}

pub fn run(
    config: Option<PathBuf>,
    waybar_json: bool,
    as_json: bool,
    port: Option<u16>,
) -> anyhow::Result<ExitCode> {
    let (cfg, paths) = crate::app::config_and_paths(config.clone())?;
    let seen = observe(config, port)?;
    // Said whatever else is seen: the person's HTTP clients talk to that port.
    let held = crate::server::port_holder::warning_for(cfg.server.port, &paths);
    let page_held = cfg
        .approval
        .page
        .then(|| crate::server::port_holder::page_warning(cfg.approval.page_port))
        .flatten();
    if waybar_json {
        let mut bar = waybar(&seen, archgate_core::person::now_secs());
        for w in [&held, &page_held].into_iter().flatten() {
            if !bar.class.iter().any(|c| c == "port-held") {
                bar.class.push("port-held".into());
                bar.text = format!("! {}", bar.text);
            }
            bar.tooltip = format!("WARNING: {w}\n{}", bar.tooltip);
        }
        out(serde_json::to_string(&bar)?);
        return Ok(ExitCode::SUCCESS);
    }
    if as_json {
        let mut v = json(&seen);
        if let Some(w) = &held {
            v["port_warning"] = Value::String(w.clone());
        }
        if let Some(w) = &page_held {
            v["page_port_warning"] = Value::String(w.clone());
        }
        out(serde_json::to_string_pretty(&v)?);
    } else {
        for w in [&held, &page_held].into_iter().flatten() {
            out(format!("WARNING: {w}"));
        }
        for l in human(&seen) {
            out(l);
        }
    }
    Ok(match seen {
        Seen::Serving { .. } => ExitCode::SUCCESS,
        // Like `systemctl is-active`: 3 = not running.
        _ => ExitCode::from(3),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn health(pending: u64, dev: bool) -> Value {
        serde_json::json!({"name": "archgate", "version": "9.9.9", "pending_approvals": pending,
            "developer_mode": dev, "config": {"ok": true, "problems": []}})
    }

    #[test]
    fn dev_mode_is_louder_than_pending() {
        let w = waybar(
            &Seen::Serving {
                port: 1,
                health: health(2, true),
                dev_until: Some(1000 + 90),
            },
            1000,
        );
        assert_eq!(w.text, "dev 2");
        assert_eq!(w.alt, "dev-mode");
        assert_eq!(w.class, ["serving", "pending", "dev-mode"]);
        assert!(w.tooltip.contains("about 2 min left"), "{}", w.tooltip);
    }

    #[test]
    fn a_daemon_gone_without_a_word_is_stopped() {
        let s = not_serving(Some(BarState {
            status: "serving".into(),
            writer: "archgate".into(),
            pid: Some(4_194_305),
            port: Some(1),
            version: None,
            pending_approvals: 3,
            developer_mode: false,
            developer_mode_until: None,
            config_ok: true,
            config_problem: None,
            log_ok: true,
            log_problem: None,
            reason: None,
            updated_at: 0,
        }));
        let w = waybar(&s, 0);
        assert_eq!(w.alt, "stopped");
        assert!(w.tooltip.contains("pid 4194305"), "{}", w.tooltip);
    }
}
