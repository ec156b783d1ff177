//! Opening a terminal on the person's desktop for a hand-off.
//!
//! Omarchy's own way first: its launchers run `xdg-terminal-exec` (the person's default
//! terminal, set by `omarchy-default-terminal`), so archgate does the same when it is installed;
//! else `foot`. The terminal runs `ARCHGATE handoff-run ID` — archgate's own binary, by its path
//! — and nothing of the command: the helper takes the prepared command from this process over
//! the control socket. The environment is the allowlist of `archgate_exec::env::TABLE`.

use archgate_core::exec::{CommandSpec, Permit};

/// What the answer says when there is no desktop to open a terminal on.
pub const NO_DESKTOP: &str =
    "no desktop session here (neither WAYLAND_DISPLAY nor DISPLAY is set for archgate)";

/// The terminals tried, in order.
pub const TERMINALS: &[&str] = &["xdg-terminal-exec", "foot"];

/// The window title every hand-off terminal has.
pub const TITLE: &str = "archgate hand-off";

/// The desktop a terminal can be opened on.
#[derive(Debug, Clone)]
pub struct Desktop {
    pub wayland_display: Option<String>,
    pub display: Option<String>,
    pub xdg_runtime_dir: Option<std::path::PathBuf>,
}

/// The person's desktop as this process sees it, if any: its environment completed from the
/// runtime directory (`DesktopEnv::from_process`, as `doctor` and the desktop tools see it).
pub fn desktop() -> Option<Desktop> {
    let env = archgate_desktop::DesktopEnv::from_process();
    let d = Desktop {
        wayland_display: env.wayland_display.filter(|v| !v.is_empty()),
        display: std::env::var("DISPLAY").ok().filter(|v| !v.is_empty()),
        xdg_runtime_dir: env.xdg_runtime_dir,
    };
    (d.wayland_display.is_some() || d.display.is_some()).then_some(d)
}

/// The terminal's argv for hand-off `id`: `TERMINAL --title=… ARCHGATE handoff-run ID`.
pub fn argv(terminal: &str, archgate: &str, id: &str) -> Vec<String> {
    vec![
        terminal.to_owned(),
        format!("--title={TITLE}"),
        archgate.to_owned(),
        "handoff-run".to_owned(),
        id.to_owned(),
    ]
}

/// Which terminal would open here, if any (for `doctor` too): the absolute path of the first of
/// [`TERMINALS`] that is root's alone (`pinned.rs`: the terminal takes the password). `_exec` is
/// kept for callers; the person's search directories are not consulted.
pub fn which(_exec: &archgate_core::exec::Executor) -> Option<String> {
    TERMINALS
        .iter()
        .find_map(|t| super::pinned::program(t).ok())
        .map(|p| p.to_string_lossy().into_owned())
}

/// Opens the terminal; its pid, or the reason when it cannot.
pub fn open(permit: &Permit, desk: &Desktop, id: &str) -> Result<u32, String> {
    let Some(term) = which(permit.executor()) else {
        return Err(format!(
            "no terminal to open here ({} not installed where root alone can write: {})",
            TERMINALS.join(", "),
            super::pinned::DIRS.join(", ")
        ));
    };
    let me = std::env::current_exe().map_err(|e| format!("archgate's own path is unknown: {e}"))?;
    // The helper shows the command and hands over to sudo: root's alone, like sudo (F1).
    super::pinned::root_file(&me).map_err(|e| {
        format!("archgate itself is not root's alone, so the helper in the terminal could be anyone's: {e}")
    })?;
    let mut argv = argv(&term, &me.to_string_lossy(), id).into_iter();
    let mut spec = CommandSpec::new(argv.next().unwrap_or_default()).args(argv);
    if let Some(w) = &desk.wayland_display {
        spec = spec.env("WAYLAND_DISPLAY", w);
    }
    if let Some(d) = &desk.display {
        spec = spec.env("DISPLAY", d);
    }
    if let Some(r) = &desk.xdg_runtime_dir {
        spec = spec.env("XDG_RUNTIME_DIR", r.to_string_lossy());
    }
    permit
        .spawn_detached(spec)
        .map_err(|e| format!("the terminal did not start: {e}"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_terminal_runs_the_helper_with_the_id_and_nothing_of_the_command() {
        let v = super::argv("foot", "/usr/bin/archgate", "abc-1-2");
        assert_eq!(
            v,
            [
                "foot",
                "--title=archgate hand-off",
                "/usr/bin/archgate",
                "handoff-run",
                "abc-1-2"
            ]
        );
    }
}
