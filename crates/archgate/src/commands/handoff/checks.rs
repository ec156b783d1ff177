//! The hand-off's command as the helper rebuilds and checks it, before the question and after
//! the Enter: built from the operation and its typed values, never taken from the archgate process
//! that asks (attack 8 F1, F2); the files a rename or delete touches still root's alone after the
//! Enter (attack 7 F3); a route's files unchanged; the environment facts only (attack 7 F1).

use archgate_core::exec::CommandSpec;

use crate::tools::handoff::pinned;
use crate::tools::handoff::registry::{Prepared, RouteScript};

/// The hand-off as this helper builds it from the operation and its typed values, checked
/// again here as the server checked them — the values by the closed set's rules, sudo and the
/// program root's, pacman's configuration (`pacman_conf`, this helper's own setting) root's
/// alone for what reads it, a package file in its cache, a `.pacnew` where root is alone — with
/// the command, the words for what it changes and pacman's lock its own. A command that is not
/// exactly the one the server showed the agent is refused: the record holds what runs.
pub(super) fn rebuilt(p: &Prepared, pacman_conf: &std::path::Path) -> Result<Prepared, String> {
    use crate::tools::handoff::{ops, pacman};
    let op =
        p.op.ok_or("the hand-off names no operation of the closed set")?;
    let operation = ops::Operation::from_args(op, p.values.clone()).map_err(|e| e.to_string())?;
    let sudo = pinned::program("sudo").map_err(|e| format!("sudo cannot be used: {e}"))?;
    let program =
        pinned::program(operation.program()).map_err(|e| format!("not run as root: {e}"))?;
    let argv = ops::argv(&operation, &sudo, &program, pacman_conf);
    if argv != p.argv {
        return Err(format!(
            "the command archgate was asked to run ({}) is not the one its operation builds ({})",
            crate::tools::handoff::display(&p.argv),
            crate::tools::handoff::display(&argv)
        ));
    }
    let mut lock = None;
    if operation.reads_pacman_conf() {
        let c = archgate_pacman::conf::PacmanConf::load(pacman_conf)
            .map_err(|e| format!("pacman's configuration: {e}"))?;
        pacman::check_conf(&c).map_err(|e| e.message)?;
        if operation.takes_pacman_lock() {
            lock = Some(ops::pacman_lock(&c.db_path));
        }
        if let ops::Operation::InstallFile { path } = &operation {
            pacman::check_cache_file(path, &c.cache_dirs).map_err(|e| e.message)?;
        }
    }
    if operation.reads_default_pacman_conf() {
        let c = archgate_pacman::conf::PacmanConf::load(std::path::Path::new(
            crate::tools::handoff::pacman_reads::DEFAULT_CONF,
        ))
        .map_err(|e| format!("pacman's configuration: {e}"))?;
        pacman::check_conf(&c).map_err(|e| e.message)?;
    }
    pacman::check_pacnew_paths(&operation).map_err(|e| e.message)?;
    Ok(Prepared {
        argv,
        changes: operation.changes(),
        lock,
        ..p.clone()
    })
}

/// After the person's Enter, the command and what it reads judged again as [`rebuilt`] judged
/// them before the question (attack 29 F8; class: *the check reads a different object than the
/// privileged command uses* — in time: a person-owned package file in root's cache was judged,
/// then rewritten by the agent while the question waited). The reason it is refused now.
pub(super) fn still_as_shown(p: &Prepared, pacman_conf: &std::path::Path) -> Result<(), String> {
    if p.script.is_some() {
        return Ok(()); // a route's pacman is judged by the asking sudo at each line it runs
    }
    rebuilt(p, pacman_conf)
        .map(|_| ())
        .map_err(|why| format!("changed since it was shown: {why}"))
}

/// For an install, the words for what it changes are the transaction this helper computes
/// itself from pacman's sync databases, as `pkg_install_plan` does — the packages asked for and
/// those pulled in — and a transaction that would remove a package is refused here too (attack
/// 9 F4: since the helper built the command itself it showed only "the dependencies pacman
/// pulls in").
pub(super) async fn with_transaction(
    p: Prepared,
    pacman_conf: &std::path::Path,
) -> Result<Prepared, String> {
    let Some(crate::tools::handoff::ops::Operation::Install { packages }) = p
        .op
        .and_then(|op| crate::tools::handoff::ops::Operation::from_args(op, p.values.clone()).ok())
    else {
        return Ok(p);
    };
    let db = archgate_pacman::PacmanDb::new(archgate_pacman::PacmanSettings {
        conf_path: pacman_conf.to_owned(),
        ..Default::default()
    });
    let plan = db
        .install_plan(&archgate_pacman::args::InstallPlanArgs { names: packages })
        .await
        .map_err(|e| format!("the install's transaction: {e}"))?;
    let changes = crate::tools::handoff::pacman::transaction(&plan).map_err(|e| e.message)?;
    Ok(Prepared { changes, ..p })
}

/// For a command that renames or deletes files as root (`mv`, `rm`: a `.pacnew` hand-off), each
/// file after the program's `--` and every directory on the way to it still root's alone after the person's
/// Enter, as the server checked before it asked (attack 7 F3: the question can wait minutes).
pub(super) fn files_still_roots(program: &str, rest: &[String]) -> Result<(), String> {
    if !(program.ends_with("/mv") || program.ends_with("/rm")) {
        return Ok(());
    }
    // The program's own `--` is the last one (sudo's comes first).
    let start = rest
        .iter()
        .rposition(|a| a == "--")
        .map_or(rest.len(), |i| i + 1);
    let operands = rest[start..].iter().map(std::path::Path::new);
    for (i, f) in operands.enumerate() {
        let dir = f
            .parent()
            .ok_or_else(|| format!("{} has no directory", f.display()))?;
        pinned::root_dir(dir)?;
        // The file moved or deleted is root's; the live file a `mv` replaces may be anything
        // root made there, or nothing yet.
        if i == 0 {
            pinned::root_file(f)?;
        }
    }
    Ok(())
}

/// The files a route's arguments name are the ones shown.
pub(super) fn files_unchanged(script: &RouteScript) -> Result<(), String> {
    for (path, sha) in &script.files {
        let now = archgate_core::exec::FilePin::open(path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        if now.sha256() != *sha {
            return Err(format!("{} changed since it was shown", path.display()));
        }
    }
    Ok(())
}

/// `spec` with nothing of this process's environment, only the facts of
/// `tools/handoff/facts_env.rs` (attack 7 F1: the client's `USER` reached root's commands).
/// The facts for an Omarchy route's script, without the person's home and runtime directory:
/// `HOME` is [`archgate_core::exec::env::NO_HOME`], which no one but root can make exist (attack
/// 11 F2; class: *code or configuration of the person's uid run in the terminal where the
/// person types their password* — Omarchy's scripts run `~/.config/omarchy/hooks/…` and read
/// `~/.config`; the agent wrote a hook that printed the asking sudo's line for the next step and
/// then asked the password for its own command).
pub(super) fn with_route_facts(spec: CommandSpec) -> CommandSpec {
    crate::tools::handoff::facts_env::facts()
        .into_iter()
        .filter(|(k, _)| k != "HOME" && k != "XDG_RUNTIME_DIR")
        .fold(spec.clear_env(), |s, (k, v)| s.env(k, v))
        .env("HOME", archgate_core::exec::env::NO_HOME)
}

pub(super) fn with_facts(spec: CommandSpec) -> CommandSpec {
    crate::tools::handoff::facts_env::facts()
        .into_iter()
        .fold(spec.clear_env(), |s, (k, v)| s.env(k, v))
}

/// Another hand-off helper of this uid that is open now — this very archgate binary running
/// `handoff-run` or `handoff ID` — by the kernel's process list, not by a lock file (attack 9
/// F3; class: *a one-at-a-time invariant kept by cooperating processes in a place the agent can
/// write* — the agent unlinked `handoff.lock`, and its own archgate's terminal opened over the
/// person's and took the password they typed for theirs). Its pid.
pub(super) fn another_hand_off_open() -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let me = std::process::id();
    let uid = nix::unistd::getuid().as_raw();
    let exe = std::fs::metadata("/proc/self/exe").ok()?;
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me || e.metadata().map(|m| m.uid()).ok() != Some(uid) {
            continue;
        }
        let same_binary = std::fs::metadata(e.path().join("exe"))
            .is_ok_and(|m| (m.dev(), m.ino()) == (exe.dev(), exe.ino()));
        if !same_binary {
            continue;
        }
        let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        // Any argument, not the first word: global options come before the command (`archgate
        // --log warn handoff ID`: attack 13 F4). Counting too many is safe; too few is not.
        let argv: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        let helper = argv
            .iter()
            .skip(1)
            .any(|a| *a == b"handoff-run" || *a == b"handoff");
        if helper {
            return Some(pid);
        }
    }
    None
}
