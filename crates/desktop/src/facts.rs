//! Desktop facts for `system_status`, and `doctor`: each piece the desktop tools need, whether
//! it is there, and what its absence disables.

use archgate_exec::Executor;
use serde::Serialize;

use crate::compositor::CompositorKind;
use crate::desktop::Desktop;
use crate::programs::Program;

/// One output, briefly.
#[derive(Debug, Clone, Serialize)]
pub struct OutputFact {
    /// Connector name.
    pub name: String,
    /// Mode width in pixels.
    pub width: u32,
    /// Mode height in pixels.
    pub height: u32,
    /// Scale.
    pub scale: f64,
    /// Whether it has focus.
    pub focused: bool,
}

/// What `system_status` shows about the desktop. Gathering it runs no program.
#[derive(Debug, Clone, Serialize)]
pub struct DesktopFacts {
    /// The compositor, if one answered.
    pub compositor: Option<CompositorKind>,
    /// Its version, if it said.
    pub compositor_version: Option<String>,
    /// Why the compositor could not be asked, if it could not.
    pub compositor_error: Option<String>,
    /// Outputs.
    pub outputs: Vec<OutputFact>,
    /// Omarchy's version, from `$OMARCHY_PATH/version`.
    pub omarchy_version: Option<String>,
    /// The current Omarchy theme.
    pub theme: Option<String>,
    /// The Wayland display.
    pub wayland_display: Option<String>,
}

/// One doctor line.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// The piece checked (a program name, or `compositor`).
    pub name: String,
    /// Whether it is there and usable.
    pub ok: bool,
    /// What was found, or why not.
    pub detail: String,
    /// The Arch package that provides it.
    pub package: &'static str,
    /// What does not work without it.
    pub disables: &'static str,
}

/// Every program the desktop tools use, in doctor order.
pub const PROGRAMS: &[Program] = &[
    Program::Grim,
    Program::Tesseract,
    Program::WlPaste,
    Program::WlCopy,
    Program::Setsid,
    Program::NotifySend,
    Program::Wpctl,
    Program::Brightnessctl,
    Program::Playerctl,
    Program::XdgOpen,
    Program::Omarchy,
    Program::OmarchyThemeSet,
    Program::OmarchyThemeBgNext,
    Program::Qs,
];

impl Desktop {
    /// Compositor, versions and outputs, for `system_status`. Never fails: what cannot be
    /// learned is absent, with the reason for the compositor.
    pub async fn desktop_facts(&self) -> DesktopFacts {
        let omarchy_version = self.env.omarchy_path.as_ref().and_then(|p| {
            std::fs::read_to_string(p.join("version"))
                .ok()
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        });
        let mut facts = DesktopFacts {
            compositor: None,
            compositor_version: None,
            compositor_error: None,
            outputs: Vec::new(),
            omarchy_version,
            theme: self.current_theme(),
            wayland_display: self.env.wayland_display.clone(),
        };
        let comp = match self.compositor() {
            Ok(c) => c,
            Err(e) => {
                facts.compositor_error = Some(e.to_string());
                return facts;
            }
        };
        facts.compositor = Some(comp.kind());
        match comp.state().await {
            Ok(state) => {
                facts.outputs = state
                    .monitors
                    .iter()
                    .map(|m| OutputFact {
                        name: m.name.clone(),
                        width: m.width,
                        height: m.height,
                        scale: m.scale,
                        focused: m.focused,
                    })
                    .collect();
                facts.compositor_version = comp.version().await.ok().flatten();
            }
            Err(e) => facts.compositor_error = Some(e.to_string()),
        }
        facts
    }

    /// Each piece the desktop tools need, whether it is there, and what its absence disables.
    /// Looks programs up the way the executor will (trusted directories only); runs nothing.
    pub async fn doctor(&self, executor: &Executor) -> Vec<Check> {
        let mut checks = Vec::with_capacity(PROGRAMS.len() + 2);
        let (ok, detail) = match self.compositor() {
            Ok(c) => match c.state().await {
                Ok(s) => (
                    true,
                    format!(
                        "{} answers; {} output(s)",
                        c.kind().name(),
                        s.monitors.len()
                    ),
                ),
                Err(e) => (false, format!("{} does not answer: {e}", c.kind().name())),
            },
            Err(e) => (false, e.to_string()),
        };
        checks.push(Check {
            name: "compositor".to_owned(),
            ok,
            detail,
            package: "hyprland (or sway)",
            disables: "desktop_state, window and monitor screenshots, background set on Sway",
        });
        checks.push(Check {
            name: "wayland display".to_owned(),
            ok: self.env.wayland_display.is_some() && self.env.xdg_runtime_dir.is_some(),
            detail: match (&self.env.wayland_display, &self.env.xdg_runtime_dir) {
                (Some(d), Some(r)) => format!("{d} in {}", r.display()),
                _ => "WAYLAND_DISPLAY or XDG_RUNTIME_DIR is not set".to_owned(),
            },
            package: "hyprland (or sway)",
            disables: "screenshot, screen_text, clipboard_read, clipboard_write",
        });
        for p in PROGRAMS {
            let (ok, detail) = match executor.resolve_program(p.name()) {
                Ok(path) => (true, path.display().to_string()),
                Err(e) => (false, e.to_string()),
            };
            checks.push(Check {
                name: p.name().to_owned(),
                ok,
                detail,
                package: p.package(),
                disables: p.disables(),
            });
        }
        checks
    }
}
