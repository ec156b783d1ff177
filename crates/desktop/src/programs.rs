//! The programs the desktop operations run, the Arch packages that provide them, and the one
//! helper through which they are run (via a [`Permit`]).

use archgate_exec::{CommandSpec, ExecError, Output, Permit};

use crate::env::DesktopEnv;
use crate::error::{DesktopError, Result};

/// A program archgate's desktop operations use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Program {
    /// Screenshots.
    Grim,
    /// OCR.
    Tesseract,
    /// Clipboard read.
    WlPaste,
    /// Clipboard write.
    WlCopy,
    /// Starting the clipboard server in its own session.
    Setsid,
    /// Notifications.
    NotifySend,
    /// Audio.
    Wpctl,
    /// Brightness.
    Brightnessctl,
    /// Media players (MPRIS).
    Playerctl,
    /// Opening URLs and files.
    XdgOpen,
    /// Launching desktop entries.
    GtkLaunch,
    /// Omarchy's command dispatcher.
    Omarchy,
    /// Omarchy's theme switcher.
    OmarchyThemeSet,
    /// Omarchy's background switcher.
    OmarchyThemeBgNext,
    /// Omarchy's on-screen display.
    OmarchyOsd,
    /// Quickshell's command line (IPC).
    Qs,
    /// Notification daemon control (used by doctor only).
    Makoctl,
}

impl Program {
    /// The executable name.
    pub fn name(self) -> &'static str {
        match self {
            Program::Grim => "grim",
            Program::Tesseract => "tesseract",
            Program::WlPaste => "wl-paste",
            Program::WlCopy => "wl-copy",
            Program::Setsid => "setsid",
            Program::NotifySend => "notify-send",
            Program::Wpctl => "wpctl",
            Program::Brightnessctl => "brightnessctl",
            Program::Playerctl => "playerctl",
            Program::XdgOpen => "xdg-open",
            Program::GtkLaunch => "gtk-launch",
            Program::Omarchy => "omarchy",
            Program::OmarchyThemeSet => "omarchy-theme-set",
            Program::OmarchyThemeBgNext => "omarchy-theme-bg-next",
            Program::OmarchyOsd => "omarchy-osd",
            Program::Qs => "qs",
            Program::Makoctl => "makoctl",
        }
    }

    /// The Arch package that provides it.
    pub fn package(self) -> &'static str {
        match self {
            Program::Grim => "grim",
            Program::Tesseract => "tesseract tesseract-data-eng",
            Program::WlPaste | Program::WlCopy => "wl-clipboard",
            Program::Setsid => "util-linux",
            Program::NotifySend => "libnotify",
            Program::Wpctl => "wireplumber",
            Program::Brightnessctl => "brightnessctl",
            Program::Playerctl => "playerctl",
            Program::XdgOpen => "xdg-utils",
            Program::GtkLaunch => "gtk3",
            Program::Omarchy
            | Program::OmarchyThemeSet
            | Program::OmarchyThemeBgNext
            | Program::OmarchyOsd => "omarchy (https://omarchy.org)",
            Program::Qs => "quickshell",
            Program::Makoctl => "mako",
        }
    }

    /// What archgate cannot do without it.
    pub fn disables(self) -> &'static str {
        match self {
            Program::Grim => "screenshot, screen_text",
            Program::Tesseract => "screen_text",
            Program::WlPaste => "clipboard_read",
            Program::WlCopy | Program::Setsid => "clipboard_write",
            Program::NotifySend => "notify, and osd where Omarchy is absent",
            Program::Wpctl => "audio",
            Program::Brightnessctl => "brightness",
            Program::Playerctl => "media",
            Program::XdgOpen => "launch of URLs and files",
            Program::GtkLaunch => "launch of desktop entries by id",
            Program::Omarchy => "omarchy_search, omarchy_run, toggle",
            Program::OmarchyThemeSet => "theme set",
            Program::OmarchyThemeBgNext => "background next",
            Program::OmarchyOsd => "osd through Omarchy (falls back to notify)",
            Program::Qs => "shell_targets, shell_call",
            Program::Makoctl => "nothing archgate calls (notification checks in tests)",
        }
    }

    /// A command for this program with the session's environment.
    pub(crate) fn spec(self, env: &DesktopEnv) -> CommandSpec {
        env.apply_to(CommandSpec::new(self.name()))
    }

    /// The file this program runs from, found and checked now by `permit`'s executor: a tool
    /// settles this in resolution, so a missing program is `not_available` (naming its package)
    /// before anyone is asked, never after a yes.
    pub fn require(self, permit: &Permit) -> Result<std::path::PathBuf> {
        permit
            .executor()
            .resolve_program(self.name())
            .map_err(|e| exec_error(self, e))
    }
}

/// Maps "not installed" to `not_available` naming the package.
pub(crate) fn exec_error(program: Program, e: ExecError) -> DesktopError {
    match e {
        ExecError::NotInstalled { searched, .. } => DesktopError::NotAvailable {
            what: program.name(),
            package: program.package(),
            why: format!(
                "not found in {}",
                searched
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        },
        other => DesktopError::Exec(other),
    }
}

/// Runs `spec` (built from `program`) and returns its output, whatever its exit status. One of
/// Omarchy's programs runs only while the Omarchy tree it is given passes the trust rule
/// (`omarchy::tree::judge_given`): the registry's load, a route, `theme set`, `background next`,
/// an OSD — every door to Omarchy's code (attack 36 F6).
pub(crate) async fn run_any(
    permit: &Permit,
    program: Program,
    spec: CommandSpec,
) -> Result<Output> {
    if matches!(
        program,
        Program::Omarchy
            | Program::OmarchyThemeSet
            | Program::OmarchyThemeBgNext
            | Program::OmarchyOsd
    ) {
        crate::omarchy::tree::judge_given(permit.executor(), &spec)?;
    }
    permit.run(spec).await.map_err(|e| exec_error(program, e))
}

/// Runs `spec` and requires success: a failing exit is `command_failed` with its stderr.
pub(crate) async fn run_ok(permit: &Permit, program: Program, spec: CommandSpec) -> Result<Output> {
    let shown = spec.display();
    let out = run_any(permit, program, spec).await?;
    if out.success() {
        Ok(out)
    } else {
        Err(failed(shown, &out))
    }
}

/// The `command_failed` error for an output.
pub(crate) fn failed(command: String, out: &Output) -> DesktopError {
    let mut stderr = out.stderr_lossy();
    if stderr.trim().is_empty() {
        stderr = out.stdout_lossy();
    }
    let stderr: String = stderr.trim().chars().take(600).collect();
    DesktopError::CommandFailed {
        command,
        code: out.status.code,
        stderr,
    }
}

/// Output as text, refusing truncated output (the executor kept only head and tail).
pub(crate) fn full_text(out: &Output, what: &'static str, cap: usize) -> Result<String> {
    if out.truncated {
        return Err(DesktopError::TooLarge { what, limit: cap });
    }
    Ok(out.stdout_lossy())
}
