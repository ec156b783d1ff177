//! archgate-desktop: the person's desktop as a typed async API.
//!
//! - [`compositor`]: own small IPC clients for Hyprland and Sway, chosen from the environment,
//!   and one normalized [`DesktopState`];
//! - [`omarchy`]: Omarchy's command registry (`omarchy commands --json`), search, runs, and
//!   [`targets_archgate`], which recognises calls that would switch off archgate's supervision;
//! - [`shell`]: Quickshell IPC targets and checked calls;
//! - curated operations on [`Desktop`]: screenshot, screen text, clipboard, notify, osd, theme,
//!   background, audio, brightness, media, toggle, launch, desktop facts and doctor.
//!
//! Nothing here knows MCP. Every operation that runs a program takes an
//! [`archgate_exec::Permit`], which only the gate issues; this crate never starts a process any
//! other way.

#![forbid(unsafe_code)]

pub mod app_entries;
pub mod audio;
pub mod clipboard;
pub mod compositor;
pub mod controls;
mod desktop;
mod env;
mod error;
pub mod exec_line;
pub mod facts;
mod image;
pub mod launch;
pub mod launch_door;
pub mod notify;
pub mod omarchy;
mod programs;
mod routes;
pub mod screen;
pub mod shell;
pub mod theme;
pub mod url_check;
pub mod url_handler;

pub use audio::{AudioAction, AudioReport, Sink, Volume};
pub use clipboard::ClipboardText;
pub use compositor::{
    Compositor, CompositorKind, DesktopState, Focus, HyprlandClient, Monitor, Rect, SwayClient,
    Window, Workspace,
};
pub use controls::{Brightness, BrightnessAction, MediaAction, MediaStatus};
pub use desktop::{Desktop, DesktopConfig};
pub use env::DesktopEnv;
pub use error::{DesktopError, Result};
pub use facts::{Check, DesktopFacts, OutputFact, omarchy_version};
pub use launch::{LaunchTarget, Launched};
pub use notify::{OsdCommand, OsdShown};
pub use omarchy::{
    CommandOutcome, Invocation, Registry, Route, RouteCall, RouteTier, SearchHit, Usage,
    targets_archgate,
};
pub use programs::Program;
pub use screen::{CaptureTarget, ScreenText, Screenshot};
pub use shell::{IpcFunction, IpcParam, IpcProperty, IpcType, ShellTarget};
pub use theme::{BackgroundAction, BackgroundPlan, ThemeAction, ThemeReport};
