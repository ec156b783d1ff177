//! `Desktop`: the handle through which the binary reaches one person's desktop session.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Mutex;

use crate::compositor::{Compositor, DesktopState};
use crate::env::DesktopEnv;
use crate::error::Result;
use crate::omarchy::Registry;

/// Settings of the desktop operations.
#[derive(Debug, Clone)]
pub struct DesktopConfig {
    /// Hard timeout of one compositor IPC request (connect, write, read to the end).
    pub ipc_timeout: Duration,
    /// Timeout of one program run by an operation (grim, tesseract, wpctl…).
    pub program_timeout: Duration,
    /// Largest screenshot file read back, in bytes.
    pub max_image_bytes: usize,
    /// Largest clipboard text read or written, in bytes.
    pub max_clipboard_bytes: usize,
    /// Extra theme directories searched after `~/.config/omarchy/themes` and
    /// `$OMARCHY_PATH/themes` (tests point this at fixtures).
    pub extra_theme_dirs: Vec<PathBuf>,
}

impl Default for DesktopConfig {
    fn default() -> Self {
        DesktopConfig {
            ipc_timeout: Duration::from_secs(2),
            program_timeout: Duration::from_secs(20),
            max_image_bytes: 32 * 1024 * 1024,
            max_clipboard_bytes: 1024 * 1024,
            extra_theme_dirs: Vec::new(),
        }
    }
}

/// One desktop session: its environment, settings and the cached Omarchy registry.
#[derive(Debug)]
pub struct Desktop {
    pub(crate) env: DesktopEnv,
    pub(crate) config: DesktopConfig,
    pub(crate) registry: Mutex<Option<Arc<Registry>>>,
}

impl Desktop {
    /// A desktop for the session `env` describes.
    pub fn new(env: DesktopEnv, config: DesktopConfig) -> Self {
        Desktop {
            env,
            config,
            registry: Mutex::new(None),
        }
    }

    /// The session environment.
    pub fn env(&self) -> &DesktopEnv {
        &self.env
    }

    /// The settings.
    pub fn config(&self) -> &DesktopConfig {
        &self.config
    }

    /// The compositor of this session (`not_available` when there is none).
    pub fn compositor(&self) -> Result<Compositor> {
        Compositor::from_env(&self.env, self.config.ipc_timeout)
    }

    /// Monitors, workspaces, windows and focus, one shape for Hyprland and Sway.
    pub async fn desktop_state(&self) -> Result<DesktopState> {
        self.compositor()?.state().await
    }
}
