//! An Omarchy route that needs root, as a hand-off (`op: omarchy`).
//!
//! Omarchy's scripts that need root run `sudo` themselves (`omarchy pkg add` runs `sudo pacman
//! -S …`), so the hand-off's command is the route's own script, not `sudo` of it: resolved and
//! checked exactly as `omarchy_run` resolves a route (`desktop::resolve_route_call`: the usage,
//! themes, files pinned, addresses), pinned by its content, with the session's variables
//! `omarchy_run` gives it and nothing else from the agent. The helper runs it after the person's
//! Enter with archgate's asking sudo first on its search path (`asking_sudo.rs`), so each `sudo`
//! inside names its command, asks their password in that terminal and keeps none for what the
//! script runs next (the person's hooks and configuration: attack 8 F3, F4); it refuses where
//! sudo would not ask for *any* command, since the script may run any (`sudo_any.rs`).
//!
//! Not handed off: a route that needs no root (`omarchy_run` runs it), one that would stop or
//! reconfigure archgate, one whose arguments run as code — what would run is the argument's,
//! which the person cannot judge from the command shown — and one whose script asks questions
//! of its own (`gum confirm`, a picker, `read`): after the password, whoever types next answers
//! them (attack 7 F2); one that reaches root past a `sudo` found by name (`/usr/bin/sudo`,
//! `pkexec`, a search path of its own: `archgate_desktop::omarchy::past_sudo`); and any route
//! where the asking sudo is not installed.

use archgate_core::tool::{CallCx, ErrorKind, Probe, ToolError};

use super::registry::RouteScript;
use crate::tools::desktop::{DesktopService, resolve_route_call};

/// What a route's hand-off carries.
pub struct RouteHandoff {
    pub argv: Vec<String>,
    pub script: RouteScript,
    pub changes: String,
    /// The files its arguments name, pinned: the gate checks them at the yes, the helper again
    /// before the script runs.
    pub files: Vec<archgate_exec::FilePin>,
    /// Every name of the route (canonical and aliases, with and without `omarchy`): rules on
    /// any of them apply to its hand-off.
    pub names: Vec<String>,
}

/// Resolves `route` with `args` for a hand-off; see the module documentation.
pub async fn prepare(
    desktop: &DesktopService,
    cx: &CallCx,
    probe: &Probe,
    route: &str,
    args: &[String],
) -> Result<RouteHandoff, ToolError> {
    let (call, files) =
        resolve_route_call(&desktop.desktop, cx, &probe.permit, route, args).await?;
    let r = &call.route;
    let refused = |why: String| ToolError::new(ErrorKind::Refused, why);
    if call.targets_archgate {
        return Err(refused(format!(
            "`{}` would stop, restart, reconfigure or remove archgate or its supervisor; it is not handed off",
            r.route
        )));
    }
    let runs_code = archgate_desktop::omarchy::classify::runs_values(&r.words)
        || archgate_desktop::omarchy::classify::runs_route(&r.words, args)
        || call.script.runs_values.is_some();
    if runs_code {
        return Err(refused(format!(
            "`{}` runs its arguments as code: what would run is not the command shown, so it is not handed off",
            r.route
        ))
        .next("name what you want as a route or an operation of its own"));
    }
    if !r.requires_sudo {
        return Err(ToolError::new(
            ErrorKind::InvalidArgument,
            format!("`{}` needs no root: run it with omarchy_run", r.route),
        ));
    }
    if let Some(why) = script_refusal(&call.script) {
        return Err(
            refused(format!("`{}` {why}, so it is not handed off", r.route))
                .next("tell the person to run the route themselves in their own terminal"),
        );
    }
    super::asking_sudo::installed().map_err(|e| {
        refused(format!("`{}` needs root and is not handed off here: {e}", r.route)).next(
            "tell the person to run the route themselves in their own terminal, or to install archgate's package",
        )
    })?;
    let spec = probe.permit.executor().pin(call.spec.clone())?;
    // The script crosses privilege (it runs sudo with the person's password): root's alone, like
    // sudo and the program of every other hand-off (`pinned.rs`; attack 5b F1's class). A git
    // install of Omarchy in the person's home is theirs to write — and the agent's, same uid.
    super::pinned::root_file(std::path::Path::new(spec.program())).map_err(|e| {
        ToolError::new(
            ErrorKind::Refused,
            format!(
                "`{}`'s script is not root's alone, so any program of yours could change what sudo runs inside it ({e})",
                r.route
            ),
        )
        .next("tell the person the route's script is theirs to write; they can run the route themselves")
    })?;
    let sha256 = spec.pinned().map(|p| p.sha256()).unwrap_or_default();
    let mut argv = vec![spec.program().to_owned()];
    argv.extend(spec.arg_list().iter().cloned());
    let why = call
        .script
        .elevates
        .as_ref()
        .map(|s| format!(" ({s})"))
        .unwrap_or_default();
    Ok(RouteHandoff {
        changes: format!(
            "runs Omarchy's `{}`: {}. Its script runs sudo itself{why}; sudo asks your password for it",
            r.route, r.summary
        ),
        script: RouteScript {
            sha256,
            env: spec.env_list().to_vec(),
            files: files
                .iter()
                .map(|f| (f.path().to_owned(), f.sha256()))
                .collect(),
            sudo_programs: call.script.sudo_programs.iter().cloned().collect(),
        },
        files,
        names: r
            .names()
            .flat_map(|n| [n.to_owned(), n.trim_start_matches("omarchy ").to_owned()])
            .collect(),
        argv,
    })
}

/// Whether the script gives `sudo` pacman — by name, by its path, through `env` (Omarchy's
/// `sudo env OMARCHY_UPDATE_PACMAN=1 pacman …`), `pacman-key` (pacman's GnuPG directory), or a
/// script of Omarchy's own that may run either as root: it then reads pacman's configuration as
/// root.
pub fn runs_pacman(script: &RouteScript) -> bool {
    script.sudo_programs.iter().any(|p| {
        let base = p.rsplit('/').next().unwrap_or(p);
        matches!(base, "pacman" | "pacman-key" | "env") || base.starts_with("omarchy")
    })
}

/// Why what a route's script (and the scripts it calls) was read doing keeps it from being
/// handed off, if anything does — the server's judgement before a terminal opens and the
/// helper's own after (`commands/handoff/route_rebuilt.rs`), one list:
/// - it asks questions of its own: after the password, whoever types next answers them (attack
///   7 F2);
/// - it reaches root past a `sudo` found by name: the asking sudo would not stand in the way and
///   a credential could serve what the script runs next (attack 8 F3);
/// - it finds the person's home past `$HOME`, which it gets as a directory no one's: what it
///   runs there is the agent's to write, where the person types the password (attack 11 F2);
/// - it makes or changes files as the person that its sudo steps may take as root's input
///   (a `mktemp` staging directory, a download: attack 11 F3).
pub fn script_refusal(facts: &archgate_desktop::omarchy::script::ScriptFacts) -> Option<String> {
    if let Some(asked) = &facts.asks {
        return Some(format!(
            "asks its own questions in the terminal ({asked}); after your password anyone who can \
             type into your desktop could answer them"
        ));
    }
    if let Some(past) = &facts.elevates_past_sudo {
        return Some(format!(
            "reaches root past a sudo found by name ({past}): its password could serve what the \
             script runs next"
        ));
    }
    if let Some(at) = &facts.reaches_home {
        return Some(format!(
            "reaches your home past $HOME ({at}): what it runs there is any program of yours to \
             write, in the terminal where you type your password"
        ));
    }
    if let Some(at) = &facts.changes_as_person {
        return Some(format!(
            "makes or changes files as you ({at}) that its sudo steps may take as root's input, \
             and any program of yours could change them first"
        ));
    }
    None
}
