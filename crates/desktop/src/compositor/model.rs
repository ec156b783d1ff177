//! The one normalized shape of desktop state that both compositors are mapped into.

use serde::Serialize;

/// Which compositor answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CompositorKind {
    /// Hyprland (Omarchy's compositor).
    Hyprland,
    /// Sway (i3 IPC).
    Sway,
}

impl CompositorKind {
    /// The compositor's name.
    pub fn name(self) -> &'static str {
        match self {
            CompositorKind::Hyprland => "hyprland",
            CompositorKind::Sway => "sway",
        }
    }
}

/// A rectangle in the compositor's global layout coordinates (logical pixels).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Rect {
    /// Left edge.
    pub x: i32,
    /// Top edge.
    pub y: i32,
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
}

/// A monitor (Hyprland) or output (Sway).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Monitor {
    /// Connector name, e.g. `DP-1`, `HEADLESS-1`.
    pub name: String,
    /// Make and model, when the compositor says.
    pub description: Option<String>,
    /// Mode width in physical pixels.
    pub width: u32,
    /// Mode height in physical pixels.
    pub height: u32,
    /// Refresh rate in Hz, when known.
    pub refresh_hz: Option<f64>,
    /// Scale factor (physical pixels per logical pixel).
    pub scale: f64,
    /// Position and logical size in the global layout.
    pub logical: Rect,
    /// Whether this monitor has focus.
    pub focused: bool,
    /// Name of the workspace shown on it.
    pub active_workspace: Option<String>,
}

/// A workspace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Workspace {
    /// Numeric id (Hyprland id, Sway number), when it has one.
    pub id: Option<i64>,
    /// Name.
    pub name: String,
    /// The monitor it is on.
    pub monitor: Option<String>,
    /// How many windows it holds, when known.
    pub windows: Option<u32>,
    /// Whether it is shown on some monitor.
    pub visible: bool,
    /// Whether it has focus.
    pub focused: bool,
}

/// A toplevel window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Window {
    /// Compositor id: Hyprland address (`0x…`) or Sway container id.
    pub id: String,
    /// Class (Hyprland, X11) or app_id (Wayland on Sway).
    pub class: Option<String>,
    /// Title.
    pub title: String,
    /// Name of the workspace it is on.
    pub workspace: Option<String>,
    /// Position and size in logical pixels.
    pub geometry: Rect,
    /// Floating rather than tiled.
    pub floating: bool,
    /// Fullscreen (any fullscreen mode).
    pub fullscreen: bool,
    /// Has keyboard focus.
    pub focused: bool,
    /// Process id, when known.
    pub pid: Option<i64>,
}

/// What has focus.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Focus {
    /// Focused monitor.
    pub monitor: Option<String>,
    /// Focused workspace.
    pub workspace: Option<String>,
    /// Focused window id.
    pub window: Option<String>,
}

/// Monitors, workspaces, windows and focus, the same shape for every compositor.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DesktopState {
    /// The compositor that answered.
    pub compositor: CompositorKind,
    /// Monitors, in the compositor's order.
    pub monitors: Vec<Monitor>,
    /// Workspaces, in the compositor's order.
    pub workspaces: Vec<Workspace>,
    /// Toplevel windows.
    pub windows: Vec<Window>,
    /// What has focus.
    pub focus: Focus,
}

impl DesktopState {
    /// The monitor of that name.
    pub fn monitor(&self, name: &str) -> Option<&Monitor> {
        self.monitors.iter().find(|m| m.name == name)
    }

    /// The window with that id (Hyprland addresses match with or without `0x`).
    pub fn window(&self, id: &str) -> Option<&Window> {
        let bare = id.trim_start_matches("0x");
        self.windows
            .iter()
            .find(|w| w.id == id || w.id.trim_start_matches("0x") == bare)
    }

    /// The largest monitor scale, which is grim's default output scale.
    pub fn max_scale(&self) -> f64 {
        let max = self
            .monitors
            .iter()
            .map(|m| m.scale)
            .filter(|s| s.is_finite() && *s > 0.0)
            .fold(0.0_f64, f64::max);
        if max > 0.0 { max } else { 1.0 }
    }
}
