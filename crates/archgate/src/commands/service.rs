//! `archgate service install|uninstall|status|print`: archgate as a systemd user service, for
//! people without the Omarchy plugin.
//!
//! `install` writes `~/.config/systemd/user/archgate.service` for the binary that runs the
//! command (or uses the package's identical copy), imports the session's variables into the
//! user manager, reloads it and enables the unit at once. `systemctl` runs through
//! `archgate_exec::run_for_person`: the person's own command, with the executor's trust checks.
//! When the user manager cannot be reached the unit stays written and the exact commands are
//! printed for the person to run.

use archgate_exec::{CommandSpec, run_for_person};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use super::out;
use super::unit::{self, PACKAGED_UNIT, SESSION_VARS, SOCKET_UNIT, SOCKET_UNIT_NAME, UNIT_NAME};
use crate::cli::ServiceAction;

pub async fn run(config: Option<PathBuf>, action: ServiceAction) -> anyhow::Result<ExitCode> {
    match action {
        ServiceAction::Print { exec } => {
            let exec = match exec {
                Some(e) => e,
                None => current_exe()?,
            };
            // The unit text ends with a newline already.
            print_raw(&unit::render(&exec));
            Ok(ExitCode::SUCCESS)
        }
        ServiceAction::Install { write_only } => install(config, write_only).await,
        ServiceAction::Uninstall => uninstall().await,
        ServiceAction::Status => status(config).await,
    }
}

fn print_raw(s: &str) {
    super::out_raw(s);
}

fn current_exe() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    Ok(exe.canonicalize().unwrap_or(exe))
}

fn user_unit() -> anyhow::Result<PathBuf> {
    let env = archgate_core::paths::PathEnv::from_process();
    Ok(unit::user_unit_dir(&env)?.join(UNIT_NAME))
}

/// What `systemctl --user` said, in one line for the person.
struct Ran {
    ok: bool,
    said: String,
}

async fn systemctl(args: &[&str], extra_env: &[(&str, String)]) -> Ran {
    let mut spec = CommandSpec::new("systemctl")
        .arg("--user")
        .args(args.iter().copied())
        .timeout(Duration::from_secs(30));
    for (k, v) in extra_env {
        spec = spec.env(*k, v.clone());
    }
    match run_for_person(spec).await {
        Ok(o) => {
            let text = format!("{}{}", o.stdout_lossy(), o.stderr_lossy());
            Ran {
                ok: o.success(),
                said: text.trim().to_owned(),
            }
        }
        Err(e) => Ran {
            ok: false,
            said: e.to_string(),
        },
    }
}

/// The session variables set in this process, with their values.
fn session_env() -> Vec<(&'static str, String)> {
    SESSION_VARS
        .iter()
        .filter_map(|k| {
            std::env::var(k)
                .ok()
                .filter(|v| !v.is_empty())
                .map(|v| (*k, v))
        })
        .collect()
}

pub(super) async fn install(config: Option<PathBuf>, write_only: bool) -> anyhow::Result<ExitCode> {
    let exe = current_exe()?;
    let text = unit::render(&exe);
    let packaged = std::fs::read_to_string(PACKAGED_UNIT).ok();
    let target = user_unit()?;
    if packaged.as_deref() == Some(text.as_str()) {
        out(format!(
            "using the package's unit {PACKAGED_UNIT} (it runs {})",
            exe.display()
        ));
        if target.exists() && std::fs::read_to_string(&target).ok().as_deref() == Some(&text) {
            std::fs::remove_file(&target)?;
            out(format!("removed the identical copy {}", target.display()));
        }
    } else {
        // Into the person's unit directory judged now, never through a link at the unit's
        // (predictable) name: class *a file written at a path judged once follows what is there*.
        archgate_core::paths::write_private_file_creating(&target, text.as_bytes())?;
        out(format!(
            "wrote {} (ExecStart={} serve --http)",
            target.display(),
            exe.display()
        ));
    }
    // The bridge socket for stdio clients, beside the service (socket activation).
    let socket_unit = target.with_file_name(SOCKET_UNIT_NAME);
    archgate_core::paths::write_private_file_creating(&socket_unit, SOCKET_UNIT.as_bytes())?;
    out(format!("wrote {}", socket_unit.display()));
    let env = session_env();
    let names: Vec<&str> = env.iter().map(|(k, _)| *k).collect();
    let mut by_hand = Vec::new();
    if !names.is_empty() {
        by_hand.push(format!(
            "systemctl --user import-environment {}",
            names.join(" ")
        ));
    }
    by_hand.push("systemctl --user daemon-reload".to_owned());
    by_hand.push(format!("systemctl --user enable --now {SOCKET_UNIT_NAME}"));
    by_hand.push(format!("systemctl --user enable --now {UNIT_NAME}"));
    if write_only {
        out("nothing else was run (--write-only); to start it:");
        for c in &by_hand {
            out(format!("  {c}"));
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(port) = serving_port(&config) {
        out(format!(
            "note: an archgate already serves on 127.0.0.1:{port} (the Omarchy plugin, or one started by hand); the service cannot bind that port while it runs"
        ));
    }
    let mut steps: Vec<(Vec<&str>, String)> = Vec::new();
    if !names.is_empty() {
        let mut args = vec!["import-environment"];
        args.extend(names.iter().copied());
        steps.push((
            args,
            format!("imported {} into the user manager", names.join(", ")),
        ));
    } else {
        out(
            "note: no Wayland session variables are set here; desktop tools will work once the compositor imports them (see the comments in the unit)",
        );
    }
    steps.push((vec!["daemon-reload"], "reloaded the user manager".into()));
    steps.push((
        vec!["enable", "--now", SOCKET_UNIT_NAME],
        format!("enabled {SOCKET_UNIT_NAME} (stdio clients reach the daemon through it)"),
    ));
    steps.push((
        vec!["enable", "--now", UNIT_NAME],
        format!("enabled and started {UNIT_NAME}"),
    ));
    for (args, done) in steps {
        let ran = systemctl(&args, &env).await;
        if !ran.ok {
            out(format!(
                "`systemctl --user {}` failed: {}",
                args.join(" "),
                if ran.said.is_empty() {
                    "no output"
                } else {
                    &ran.said
                }
            ));
            out("the unit is written; run these yourself inside your graphical session:");
            for c in &by_hand {
                out(format!("  {c}"));
            }
            return Ok(ExitCode::from(1));
        }
        out(done);
    }
    // Give it a moment to bind, then say what a bar would say.
    for _ in 0..20 {
        if let Ok(super::status::Seen::Serving { port, .. }) =
            super::status::observe(config.clone(), None)
        {
            out(format!(
                "archgate is serving at http://127.0.0.1:{port}/mcp"
            ));
            return Ok(ExitCode::SUCCESS);
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    out(format!(
        "archgate did not answer yet; see `archgate service status` and `journalctl --user -u {UNIT_NAME}`"
    ));
    Ok(ExitCode::SUCCESS)
}

fn serving_port(config: &Option<PathBuf>) -> Option<u16> {
    match super::status::observe(config.clone(), None) {
        Ok(super::status::Seen::Serving { port, .. }) => Some(port),
        _ => None,
    }
}

async fn uninstall() -> anyhow::Result<ExitCode> {
    let target = user_unit()?;
    let disabled = systemctl(&["disable", "--now", UNIT_NAME], &[]).await;
    if disabled.ok {
        out(format!("stopped and disabled {UNIT_NAME}"));
    } else {
        out(format!(
            "`systemctl --user disable --now {UNIT_NAME}` said: {}",
            disabled.said
        ));
    }
    let socket_off = systemctl(&["disable", "--now", SOCKET_UNIT_NAME], &[]).await;
    if socket_off.ok {
        out(format!("stopped and disabled {SOCKET_UNIT_NAME}"));
    }
    if remove_if_present(&target.with_file_name(SOCKET_UNIT_NAME))? {
        out(format!(
            "removed {}",
            target.with_file_name(SOCKET_UNIT_NAME).display()
        ));
    }
    let removed = remove_if_present(&target)?;
    if removed {
        out(format!("removed {}", target.display()));
        let reload = systemctl(&["daemon-reload"], &[]).await;
        if !reload.ok {
            out(format!(
                "`systemctl --user daemon-reload` said: {} (run it yourself)",
                reload.said
            ));
        }
    } else {
        out(format!("no unit at {}", target.display()));
    }
    if Path::new(PACKAGED_UNIT).exists() {
        out(format!(
            "{PACKAGED_UNIT} belongs to the package and stays (disabled)"
        ));
    }
    Ok(if disabled.ok || removed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn remove_if_present(p: &Path) -> anyhow::Result<bool> {
    match std::fs::remove_file(p) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e.into()),
    }
}

async fn status(config: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let target = user_unit()?;
    let wanted = unit::render(&current_exe()?);
    let (path, text) = match std::fs::read_to_string(&target) {
        Ok(t) => (target.display().to_string(), Some(t)),
        Err(_) => match std::fs::read_to_string(PACKAGED_UNIT) {
            Ok(t) => (PACKAGED_UNIT.to_owned(), Some(t)),
            Err(_) => (target.display().to_string(), None),
        },
    };
    match &text {
        None => out(format!(
            "unit: not installed (expected at {path}); `archgate service install` writes it"
        )),
        Some(t) if *t == wanted => out(format!("unit: {path} (up to date)")),
        Some(_) => out(format!(
            "unit: {path} (differs from what this archgate would write; `archgate service install` rewrites it)"
        )),
    }
    let enabled = systemctl(&["is-enabled", UNIT_NAME], &[]).await;
    let active = systemctl(&["is-active", UNIT_NAME], &[]).await;
    out(format!("enabled: {}", first_line(&enabled.said)));
    out(format!("active: {}", first_line(&active.said)));
    let seen = super::status::observe(config, None)?;
    let serving = matches!(seen, super::status::Seen::Serving { .. });
    let w = super::status::waybar(&seen, archgate_core::person::now_secs());
    out(format!(
        "health: {}",
        w.tooltip.lines().next().unwrap_or_default()
    ));
    Ok(if serving {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(3)
    })
}

fn first_line(s: &str) -> &str {
    let l = s.lines().next().unwrap_or("").trim();
    if l.is_empty() { "unknown" } else { l }
}
