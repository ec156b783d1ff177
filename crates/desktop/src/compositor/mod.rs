//! Compositor IPC: Hyprland and Sway clients, chosen from the environment, and the normalized
//! desktop state both map into.

pub mod hyprland;
pub mod model;
pub mod sway;

use std::time::Duration;

use crate::env::DesktopEnv;
use crate::error::{DesktopError, Result};

pub use hyprland::HyprlandClient;
pub use model::{CompositorKind, DesktopState, Focus, Monitor, Rect, Window, Workspace};
pub use sway::SwayClient;

/// The compositor this session runs, with a client for it.
#[derive(Debug, Clone)]
pub enum Compositor {
    /// Hyprland, through its request socket.
    Hyprland(HyprlandClient),
    /// Sway, through `SWAYSOCK`.
    Sway(SwayClient),
}

impl Compositor {
    /// Picks the compositor from the environment: Hyprland when `HYPRLAND_INSTANCE_SIGNATURE`
    /// is set, else Sway when `SWAYSOCK` is; otherwise `not_available`.
    pub fn from_env(env: &DesktopEnv, timeout: Duration) -> Result<Self> {
        if let Some(h) = HyprlandClient::from_env(env, timeout) {
            return Ok(Compositor::Hyprland(h));
        }
        if let Some(sock) = &env.swaysock {
            return Ok(Compositor::Sway(SwayClient::at(sock.clone(), timeout)));
        }
        Err(DesktopError::NotAvailable {
            what: "a compositor (Hyprland or Sway)",
            package: "hyprland",
            why: "neither HYPRLAND_INSTANCE_SIGNATURE nor SWAYSOCK is set".to_owned(),
        })
    }

    /// Which compositor this is.
    pub fn kind(&self) -> CompositorKind {
        match self {
            Compositor::Hyprland(_) => CompositorKind::Hyprland,
            Compositor::Sway(_) => CompositorKind::Sway,
        }
    }

    /// The normalized state.
    pub async fn state(&self) -> Result<DesktopState> {
        match self {
            Compositor::Hyprland(h) => h.state().await,
            Compositor::Sway(s) => s.state().await,
        }
    }

    /// The compositor's version.
    pub async fn version(&self) -> Result<Option<String>> {
        match self {
            Compositor::Hyprland(h) => h.version().await,
            Compositor::Sway(s) => s.version().await,
        }
    }

    /// Runs a compositor command: a Hyprland request such as `dispatch workspace 2`, or a Sway
    /// command such as `workspace 2`.
    pub async fn command(&self, command: &str) -> Result<()> {
        match self {
            Compositor::Hyprland(h) => h.command(command).await.map(|_| ()),
            Compositor::Sway(s) => s.run_command(command).await,
        }
    }
}
