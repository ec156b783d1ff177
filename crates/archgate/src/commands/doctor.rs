//! `archgate doctor`: what this machine has, and what each missing piece disables.

use archgate_core::exec::{ExecConfig, Executor};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use super::out;

struct Check {
    name: String,
    ok: bool,
    detail: String,
    disables: &'static str,
}

fn program(exec: &Executor, name: &str, disables: &'static str) -> Check {
    match exec.resolve_program(name) {
        Ok(p) => Check {
            name: name.into(),
            ok: true,
            detail: p.display().to_string(),
            disables,
        },
        Err(e) => Check {
            name: name.into(),
            ok: false,
            detail: e.to_string(),
            disables,
        },
    }
}

async fn reachable(name: &str, url: &str, disables: &'static str) -> Check {
    let host = url
        .split("://")
        .nth(1)
        .unwrap_or(url)
        .split(['/', '?'])
        .next()
        .unwrap_or("")
        .to_owned();
    let addr = if host.contains(':') {
        host.clone()
    } else if url.starts_with("https") {
        format!("{host}:443")
    } else {
        format!("{host}:80")
    };
    let r = tokio::time::timeout(
        Duration::from_secs(3),
        tokio::net::TcpStream::connect(addr.clone()),
    )
    .await;
    let (ok, detail) = match r {
        Ok(Ok(_)) => (true, format!("{addr} reachable")),
        Ok(Err(e)) => (false, format!("{addr}: {e}")),
        Err(_) => (false, format!("{addr}: no answer within 3 s")),
    };
    Check {
        name: name.into(),
        ok,
        detail,
        disables,
    }
}

pub async fn run(config: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let file = crate::app::config_path(config)?;
    let cfg = archgate_core::config::load(&file).config;
    let mut ec = ExecConfig::default();
    if let Some(d) = &cfg.exec.search_dirs {
        ec.search_dirs = d.clone();
    }
    ec.require_root_owned = cfg.exec.require_root_owned;
    let exec = Executor::new(ec);
    let mut checks = vec![
        Check {
            name: "pacman.conf".into(),
            ok: cfg.arch.pacman_conf.exists(),
            detail: cfg.arch.pacman_conf.display().to_string(),
            disables: "package tools read archlinux.org instead of this machine's databases",
        },
        Check {
            name: "pacman sync databases".into(),
            ok: Path::new("/var/lib/pacman/sync")
                .read_dir()
                .is_ok_and(|mut d| d.next().is_some()),
            detail: "/var/lib/pacman/sync".into(),
            disables: "pkg_search/pkg_info answer from archlinux.org; pkg_updates cannot compare",
        },
        program(
            &exec,
            "pacman",
            "nothing: archgate reads the databases itself; only used by people",
        ),
        Check {
            name: "compositor".into(),
            ok: std::env::var_os("HYPRLAND_INSTANCE_SIGNATURE").is_some()
                || std::env::var_os("SWAYSOCK").is_some(),
            detail: if std::env::var_os("HYPRLAND_INSTANCE_SIGNATURE").is_some() {
                "Hyprland".into()
            } else if std::env::var_os("SWAYSOCK").is_some() {
                "Sway".into()
            } else {
                "neither HYPRLAND_INSTANCE_SIGNATURE nor SWAYSOCK is set".into()
            },
            disables: "desktop_state, windows and workspaces (install hyprland or sway and run archgate inside the session)",
        },
        program(&exec, "grim", "screenshot and screen_text (install grim)"),
        program(
            &exec,
            "tesseract",
            "screen_text (install tesseract and tesseract-data-eng)",
        ),
        program(&exec, "wl-copy", "clipboard_write (install wl-clipboard)"),
        program(&exec, "wl-paste", "clipboard_read (install wl-clipboard)"),
        program(&exec, "notify-send", "notify (install libnotify)"),
        program(&exec, "wpctl", "audio (install wireplumber)"),
        program(&exec, "brightnessctl", "brightness (install brightnessctl)"),
        program(&exec, "playerctl", "media (install playerctl)"),
        program(
            &exec,
            "omarchy",
            "omarchy_search/omarchy_run and Omarchy's toggles (Omarchy is not installed)",
        ),
        program(&exec, "systemctl", "failed units in system_status"),
        Check {
            name: "notification daemon (D-Bus session)".into(),
            ok: std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some(),
            detail: std::env::var("DBUS_SESSION_BUS_ADDRESS")
                .unwrap_or_else(|_| "DBUS_SESSION_BUS_ADDRESS is not set".into()),
            disables: "approval notifications and notify (run archgate inside the desktop session)",
        },
    ];
    checks.push(
        reachable(
            "AUR",
            &cfg.arch.aur_url,
            "aur_* tools answer could_not_reach",
        )
        .await,
    );
    checks.push(
        reachable(
            "ArchWiki",
            &cfg.wiki.url,
            "online wiki answers (build the offline index: archgate wiki index)",
        )
        .await,
    );
    let mut missing = 0;
    for c in &checks {
        if c.ok {
            out(format!("  ok       {:<36} {}", c.name, c.detail));
        } else {
            missing += 1;
            out(format!(
                "  MISSING  {:<36} {}\n           disables: {}",
                c.name, c.detail, c.disables
            ));
        }
    }
    out(format!(
        "\n{} of {} pieces present.",
        checks.len() - missing,
        checks.len()
    ));
    Ok(ExitCode::SUCCESS)
}
