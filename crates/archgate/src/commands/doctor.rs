//! `archgate doctor`: what this machine has, and what each missing piece disables: pacman's
//! databases, the network services, the person's session (what was found in the runtime
//! directory rather than the environment), Omarchy (where, which version, whether its directory
//! is trusted and why not) and the desktop (compositor, grim, tesseract, wl-clipboard, the
//! notification daemon, Quickshell, the polkit agent), each with its fix. It opens with a verdict
//! (`doctor_verdict.rs`): can a question reach the person and be answered here.

use archgate_core::exec::Executor;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use super::out;

struct Check {
    name: String,
    ok: bool,
    detail: String,
    disables: &'static str,
    fix: Option<String>,
}

fn program(exec: &Executor, name: &str, disables: &'static str) -> Check {
    match exec.resolve_program(name) {
        Ok(p) => Check {
            name: name.into(),
            ok: true,
            detail: p.display().to_string(),
            disables,
            fix: None,
        },
        Err(e) => Check {
            name: name.into(),
            ok: false,
            detail: e.to_string(),
            disables,
            fix: None,
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
        fix: None,
    }
}

/// The session: the runtime directory and the session variables, each marked when it was found
/// in the runtime directory rather than the environment.
fn session(env: &archgate_desktop::DesktopEnv) -> Check {
    let mark = |k: &str| {
        if env.discovered.contains(&k) {
            " (discovered)"
        } else {
            ""
        }
    };
    let mut parts = Vec::new();
    match &env.xdg_runtime_dir {
        Some(d) => parts.push(format!(
            "XDG_RUNTIME_DIR={}{}",
            d.display(),
            mark("XDG_RUNTIME_DIR")
        )),
        None => parts.push("no XDG_RUNTIME_DIR and no /run/user/UID of yours".to_owned()),
    }
    for (k, v) in [
        ("WAYLAND_DISPLAY", env.wayland_display.clone()),
        (
            "HYPRLAND_INSTANCE_SIGNATURE",
            env.hyprland_instance_signature.clone(),
        ),
        (
            "SWAYSOCK",
            env.swaysock.as_ref().map(|p| p.display().to_string()),
        ),
        (
            "DBUS_SESSION_BUS_ADDRESS",
            env.dbus_session_bus_address.clone(),
        ),
    ] {
        if let Some(v) = v {
            parts.push(format!("{k}={v}{}", mark(k)));
        }
    }
    Check {
        name: "desktop session".into(),
        ok: env.xdg_runtime_dir.is_some() && env.wayland_display.is_some(),
        detail: parts.join("; "),
        disables: "every desktop tool, and approval notifications",
        fix: Some(
            "log in to the desktop (logind makes /run/user/UID), or run archgate inside it".into(),
        ),
    }
}

/// Omarchy: where, from which setting, its version, and whether its `bin/` is trusted.
fn omarchy(cfg: &archgate_core::config::Config, exec: &Executor) -> Check {
    let disables = "omarchy_search, omarchy_run, theme, background, osd, shell_call";
    let Some((path, source)) = cfg.omarchy_install_from_process() else {
        return Check {
            name: "Omarchy".into(),
            ok: false,
            detail: "not found ([desktop] omarchy_path, $OMARCHY_PATH, ~/.local/share/omarchy, /usr/share/omarchy)".into(),
            disables,
            fix: Some("install Omarchy, or set [desktop] omarchy_path".into()),
        };
    };
    let version =
        archgate_desktop::omarchy_version(&path).unwrap_or_else(|| "version unknown".into());
    let bin = path.join("bin");
    let (ok, trust, fix) = if !bin.is_dir() {
        (
            false,
            format!("{} is missing", bin.display()),
            Some("point [desktop] omarchy_path at the Omarchy checkout".to_owned()),
        )
    } else if cfg
        .exec
        .search_dirs
        .as_ref()
        .is_some_and(|d| !d.contains(&bin))
    {
        (
            false,
            format!("{} is not in [exec] search_dirs", bin.display()),
            Some(format!("add {} to [exec] search_dirs", bin.display())),
        )
    } else {
        match exec.check_directory(&bin) {
            Ok(_) => (true, format!("{} is trusted", bin.display()), None),
            Err(why) => (
                false,
                format!("{} is not trusted: {why}", bin.display()),
                Some("make every directory up to / owned by root or you and not writable by group or others".to_owned()),
            ),
        }
    };
    Check {
        name: "Omarchy".into(),
        ok,
        detail: format!(
            "{version} at {} ({}); {trust}",
            path.display(),
            source.describe()
        ),
        disables,
        fix,
    }
}

/// Whether person presence applies here (root's files: archgate's actions installed, polkitd
/// there) and whether polkit answers now. (Whether an agent answers is known only when one is asked.)
async fn presence(setting: archgate_core::presence::Presence) -> Check {
    use archgate_core::presence::Presence;
    let name = format!("person presence (polkit, presence = {})", setting.as_str());
    use crate::person::presence::{Installed, installed, reachable};
    // Whether presence applies is root's files' word; whether polkit answers now is only shown.
    let (ok, detail) = match installed() {
        Installed::Yes => match reachable().await {
            Ok(()) => (
                true,
                "polkit and archgate's actions are installed; your desktop's polkit agent is asked"
                    .to_owned(),
            ),
            Err(reason) => (
                false,
                format!(
                    "polkit and archgate's actions are installed, but polkit cannot be reached now ({reason}): every yes that needs presence is refused until it can"
                ),
            ),
        },
        Installed::No(reason) => (false, reason),
        Installed::Untrusted(reason) => (
            false,
            format!("{reason}: every yes that needs presence is refused"),
        ),
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
        fix: (!ok).then(|| {
            "sudo install -m644 packaging/polkit/org.archgate.policy /usr/share/polkit-1/actions/ \
             (the Arch package installs it), and run polkitd with a polkit agent in your session"
                .to_owned()
        }),
    }
}

/// What a hand-off cannot know from the person's account (attack 16 F3, F3b; SECURITY.md).
pub(crate) const SUDOERS_LIMIT: &str = "Not seen from your account: sudoers' `pam_service`, \
     `rootpw`/`targetpw`/`runaspw` (unless sudo lists your rules without a password) and whether \
     root's password is empty — root's choices that, like a NOPASSWD rule, would let a keystroke \
     through";

/// Whether a hand-off can open a terminal here, and which: a desktop session, a terminal to
/// open (as the hand-off chooses one, `tools/handoff/terminal.rs`), sudo.
async fn handoff() -> Check {
    use crate::tools::handoff::terminal;
    // What the hand-off itself finds (the environment completed from the runtime directory).
    let desktop = terminal::desktop();
    let term = match &desktop {
        Some(d) => terminal::which(d).await,
        None => None,
    };
    // As the hand-off itself finds it: root's alone, in root's directories.
    let sudo = crate::tools::handoff::pinned::program("sudo").is_ok();
    // The helper in the terminal is this binary: it is used only when root alone can write it.
    let own = std::env::current_exe()
        .map_err(|e| e.to_string())
        .and_then(|me| crate::tools::handoff::pinned::root_file(&me));
    if let (Err(why), true, true) = (&own, desktop.is_some(), sudo) {
        return Check {
            name: "hand-offs".into(),
            ok: false,
            detail: format!(
                "archgate itself is not root's alone, so no terminal opens for a hand-off ({why}): you run `archgate handoff ID` in your own terminal instead"
            ),
            disables: "handoff opens no terminal: the agent gives you `archgate handoff ID` or the command to run",
            fix: Some(
                "install archgate where root alone can write it (the Arch package; or `sudo install -m755 ~/.local/bin/archgate /usr/local/bin/`)".into(),
            ),
        };
    }
    if let Err(why) = terminal::fonts() {
        return Check {
            name: "hand-offs".into(),
            ok: false,
            detail: format!("no terminal opens for a hand-off: {why}"),
            disables: "handoff opens no terminal: the agent gives you `archgate handoff ID` or the command to run",
            fix: Some(format!(
                "install archgate's Arch package, or: sudo install -Dm644 packaging/handoff/fonts.conf {}",
                terminal::FONTS
            )),
        };
    }
    let (ok, detail, fix) = match (desktop.is_some(), &term, sudo) {
        (_, _, false) => (
            false,
            "sudo is not installed".to_owned(),
            Some("install sudo and give your user a rule that asks your password".to_owned()),
        ),
        (false, _, true) => (
            false,
            "no desktop session (no WAYLAND_DISPLAY or DISPLAY): a hand-off answers with `archgate handoff ID` to run in your own terminal".to_owned(),
            None,
        ),
        (true, None, true) => (
            false,
            format!("no terminal to open ({} not installed)", terminal::TERMINALS.join(", ")),
            Some("install foot (or name Alacritty, kitty or Ghostty as your compositor's terminal)".to_owned()),
        ),
        (true, Some(t), true) => {
            let name = t.program.rsplit('/').next().unwrap_or(&t.program);
            (
                true,
                format!(
                    "opens {name} ({}) — {} — on your desktop; sudo asks your password there. {}",
                    t.program, t.how, SUDOERS_LIMIT
                ),
                None,
            )
        }
    };
    Check {
        name: "hand-offs".into(),
        ok,
        detail,
        disables: "handoff opens no terminal: the agent gives you `archgate handoff ID` or the command to run",
        fix,
    }
}

/// Whether an Omarchy route that needs root can be handed off here: archgate's asking sudo
/// installed for this very archgate (`tools/handoff/asking_sudo.rs`).
fn route_handoffs() -> Check {
    let asking = crate::tools::handoff::asking_sudo::installed();
    Check {
        name: "route hand-offs".into(),
        ok: asking.is_ok(),
        detail: match &asking {
            Ok(dir) => format!(
                "an Omarchy route that needs root is handed off with archgate's asking sudo ({}/sudo): each sudo inside names its command and asks your password",
                dir.display()
            ),
            Err(why) => why.clone(),
        },
        disables: "handoff of an Omarchy route that needs root: you run the route in your own terminal",
        fix: asking.is_err().then(|| {
            "install archgate's Arch package (packaging/arch: it links /usr/lib/archgate/sudo-asks/sudo to /usr/bin/archgate)".to_owned()
        }),
    }
}

pub async fn run(config: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    // What the daemon runs on (the last good copy while the file is missing or not applied).
    let file = crate::app::config_path(config)?;
    let (cfg, _) = crate::app::config_and_paths(Some(file.clone()))?;
    let exec = Executor::new(cfg.executor_config());
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
                    fix: Some("pacman -Sy (as root), or set [arch] pacman_conf".into()),
                }
            }
            Err(e) => Check {
                name: "pacman databases".into(),
                ok: false,
                detail: e.to_string(),
                disables: "package tools read archlinux.org instead of this machine's databases",
                fix: Some("set [arch] pacman_conf to a readable pacman.conf".into()),
            },
        },
        program(
            &exec,
            "pacman",
            "nothing: archgate reads the databases itself; only used by people",
        ),
        program(&exec, "systemctl", "failed units in system_status"),
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
    let env = crate::tools::session_env(&cfg);
    let env_bus = env.dbus_session_bus_address.clone();
    checks.push(session(&env));
    checks.push(omarchy(&cfg, &exec));
    checks.push(handoff().await);
    checks.push(route_handoffs());
    let desktop = archgate_desktop::Desktop::new(env, archgate_desktop::DesktopConfig::default());
    for c in desktop.doctor(&exec).await {
        checks.push(Check {
            name: c.name,
            ok: c.ok,
            detail: c.detail,
            disables: c.disables,
            fix: Some(c.fix),
        });
    }
    if let Ok((_, paths)) = crate::app::config_and_paths(Some(file.clone())) {
        checks.push(daemon(&paths));
    }
    // The verdict first: can a question reach the person and be answered here?
    let polkit_ready = {
        use crate::person::presence::{Installed, installed, reachable};
        matches!(installed(), Installed::Yes) && reachable().await.is_ok()
    };
    let notifier = match &env_bus {
        Some(addr) => crate::channels::notify::probe(addr)
            .await
            .map_err(|e| e.to_string()),
        None => Err(
            "no session bus found (DBUS_SESSION_BUS_ADDRESS, or a bus in your runtime directory)"
                .to_owned(),
        ),
    };
    let reach = super::doctor_verdict::Reach {
        presence: cfg.approval.presence,
        polkit_ready,
        notifications_on: cfg.approval.notifications,
        notifier,
        page_on: cfg.approval.page,
        timeout_s: cfg.approval.timeout.as_secs(),
    };
    for l in super::doctor_verdict::verdict(&reach) {
        out(l);
    }
    out("");
    let paths = crate::app::config_and_paths(Some(file.clone())).map(|(_, p)| p);
    checks.push(own_port(cfg.server.port, paths.as_ref().ok()));
    if cfg.approval.page {
        checks.push(own_page_port(cfg.approval.page_port));
    }
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
            if let Some(fix) = &c.fix {
                out(format!("           fix: {fix}"));
            }
        }
    }
    out(format!(
        "\n{} of {} pieces present.",
        checks.len() - missing,
        checks.len()
    ));
    Ok(ExitCode::SUCCESS)
}

/// Whether archgate's configured port — and the port its daemon serves, when another — is free or
/// the person's, not another uid's (attack 3 F12, attack 36 F3).
fn own_port(port: u16, paths: Option<&archgate_core::paths::Paths>) -> Check {
    let held = match paths {
        Some(p) => crate::server::port_holder::warning_for(port, p),
        None => crate::server::port_holder::warning(port),
    };
    match held {
        None => Check {
            name: "archgate port".into(),
            ok: true,
            detail: format!("127.0.0.1:{port} is free or yours"),
            disables: "",
            fix: None,
        },
        Some(w) => Check {
            name: "archgate port".into(),
            ok: false,
            detail: w,
            disables: "your HTTP clients' token and calls go to another user's process",
            fix: Some(format!(
                "free 127.0.0.1:{port}, or set [server] port and run archgate client-config again"
            )),
        },
    }
}

/// Whether the approval page's configured port is free or the person's (attack 5a F1).
fn own_page_port(port: u16) -> Check {
    match crate::server::port_holder::page_warning(port) {
        None => Check {
            name: "approval page port".into(),
            ok: true,
            detail: format!("127.0.0.1:{port} is free or yours (0: any free port)"),
            disables: "",
            fix: None,
        },
        Some(w) => Check {
            name: "approval page port".into(),
            ok: false,
            detail: w,
            disables: "a bookmark of the approval page reaches another user's process",
            fix: Some(format!(
                "free 127.0.0.1:{port}, or set [approval] page_port; open the page with archgate ui"
            )),
        },
    }
}

/// Whether the desktop's one daemon runs, and how many stdio servers serve in their own process.
fn daemon(paths: &archgate_core::paths::Paths) -> Check {
    let in_process = crate::server::instances::in_process(&paths.runtime_dir);
    let alone = if in_process == 0 {
        String::new()
    } else {
        format!(
            "; {in_process} stdio server(s) serve in their own process, each with its own pending list and budgets"
        )
    };
    match crate::server::daemon::running(paths) {
        Some(d) => Check {
            name: "archgate daemon".into(),
            ok: true,
            detail: format!(
                "pid {} since {}; stdio clients are bridged through {}{alone}",
                d.pid,
                d.since,
                d.socket.display()
            ),
            disables: "",
            fix: None,
        },
        None => Check {
            name: "archgate daemon".into(),
            ok: false,
            detail: format!(
                "none runs for {}: stdio clients start one when they find your session, else serve in-process{alone}",
                paths.runtime_dir.display()
            ),
            disables: "one pending list, one budget per client and one nag guard for all clients",
            fix: Some(
                "archgate service install (a user unit and archgate.socket), or the Omarchy plugin"
                    .into(),
            ),
        },
    }
}
