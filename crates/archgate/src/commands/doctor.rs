//! `archgate doctor`: what this machine has, and what each missing piece disables.

use archgate_core::exec::{ExecConfig, Executor};
use std::path::PathBuf;
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

/// Whether person presence can be confirmed here: polkit on the system bus with archgate's
/// actions installed. (Whether an agent answers is known only when one is asked.)
async fn presence(setting: archgate_core::presence::Presence) -> Check {
    use archgate_core::presence::Presence;
    let name = format!("person presence (polkit, presence = {})", setting.as_str());
    let (ok, detail) = match crate::presence::availability().await {
        crate::presence::Availability::Ready(_) => (
            true,
            "polkit and archgate's actions are installed; your desktop's polkit agent is asked"
                .to_owned(),
        ),
        crate::presence::Availability::Missing(reason) => (false, reason),
    };
    Check {
        name,
        ok: ok || setting == Presence::Off,
        detail: if setting == Presence::Off {
            format!("off in config: any process of yours can say yes through the CLI ({detail})")
        } else {
            detail
        },
        disables: match setting {
            Presence::Polkit => {
                "every yes is refused until polkit and archgate's actions are installed"
            }
            _ => "presence: another process of yours can approve in your name (see SECURITY.md)",
        },
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
        match archgate_pacman::PacmanConf::load(&cfg.arch.pacman_conf) {
            Ok(conf) => {
                let sync = conf.db_path.join("sync");
                let dbs = sync
                    .read_dir()
                    .map(|d| {
                        d.flatten()
                            .filter(|e| e.path().extension().is_some_and(|x| x == "db"))
                            .count()
                    })
                    .unwrap_or(0);
                Check {
                    name: "pacman databases".into(),
                    ok: dbs > 0,
                    detail: format!(
                        "{} ({} repositories configured, {dbs} sync databases in {})",
                        conf.path.display(),
                        conf.repos.len(),
                        sync.display()
                    ),
                    disables: "pkg_search/pkg_info answer from archlinux.org; pkg_updates cannot compare",
                }
            }
            Err(e) => Check {
                name: "pacman databases".into(),
                ok: false,
                detail: e.to_string(),
                disables: "package tools read archlinux.org instead of this machine's databases",
            },
        },
        program(
            &exec,
            "pacman",
            "nothing: archgate reads the databases itself; only used by people",
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
    checks.push(presence(cfg.approval.presence).await);
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
