//! Sway's IPC (the i3 protocol) over `SWAYSOCK`: one connection per request, a hard timeout.
//!
//! A message is the magic `i3-ipc`, the payload length and the message type (both 32-bit,
//! native byte order), then the JSON payload. The answer has the same frame with the same type.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

use super::model::{CompositorKind, DesktopState, Focus, Monitor, Rect, Window, Workspace};
use crate::error::{DesktopError, Result};

const MAGIC: &[u8; 6] = b"i3-ipc";
/// Largest answer read from Sway.
pub const MAX_ANSWER: usize = 16 * 1024 * 1024;

/// i3 IPC message types used here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum MessageType {
    /// Run compositor commands.
    RunCommand = 0,
    /// Workspaces.
    GetWorkspaces = 1,
    /// Outputs.
    GetOutputs = 3,
    /// The layout tree.
    GetTree = 4,
    /// Version.
    GetVersion = 7,
    /// The config file Sway loaded, as text.
    GetConfig = 9,
}

/// A client for Sway's IPC socket.
#[derive(Debug, Clone)]
pub struct SwayClient {
    socket: PathBuf,
    timeout: Duration,
}

impl SwayClient {
    /// A client for the socket at `socket`.
    pub fn at(socket: impl Into<PathBuf>, timeout: Duration) -> Self {
        SwayClient {
            socket: socket.into(),
            timeout,
        }
    }

    /// The socket this client talks to.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// Sends one message and returns the answer's payload.
    pub async fn request(&self, kind: MessageType, payload: &[u8]) -> Result<Vec<u8>> {
        let reach = |source| DesktopError::CouldNotReach {
            what: "Sway's IPC socket",
            path: self.socket.clone(),
            source,
        };
        let exchange = async {
            let len = u32::try_from(payload.len()).map_err(|_| DesktopError::TooLarge {
                what: "Sway request",
                limit: u32::MAX as usize,
            })?;
            let mut stream = UnixStream::connect(&self.socket).await.map_err(reach)?;
            let mut frame = Vec::with_capacity(14 + payload.len());
            frame.extend_from_slice(MAGIC);
            frame.extend_from_slice(&len.to_ne_bytes());
            frame.extend_from_slice(&(kind as u32).to_ne_bytes());
            frame.extend_from_slice(payload);
            stream.write_all(&frame).await.map_err(reach)?;
            let mut header = [0u8; 14];
            stream.read_exact(&mut header).await.map_err(reach)?;
            if &header[..6] != MAGIC {
                return Err(DesktopError::malformed(
                    "Sway",
                    "answer does not start with i3-ipc",
                ));
            }
            let len = u32::from_ne_bytes([header[6], header[7], header[8], header[9]]) as usize;
            let answered = u32::from_ne_bytes([header[10], header[11], header[12], header[13]]);
            if answered != kind as u32 {
                return Err(DesktopError::malformed(
                    "Sway",
                    format_args!("asked type {}, answered type {answered}", kind as u32),
                ));
            }
            if len > MAX_ANSWER {
                return Err(DesktopError::TooLarge {
                    what: "Sway's answer",
                    limit: MAX_ANSWER,
                });
            }
            let mut body = vec![0u8; len];
            stream.read_exact(&mut body).await.map_err(reach)?;
            Ok(body)
        };
        match tokio::time::timeout(self.timeout, exchange).await {
            Ok(r) => r,
            Err(_) => Err(DesktopError::TimedOut {
                what: format!("Sway ({kind:?})"),
                after: self.timeout,
            }),
        }
    }

    async fn json<T: DeserializeOwned>(&self, kind: MessageType) -> Result<T> {
        let body = self.request(kind, b"").await?;
        serde_json::from_slice(&body)
            .map_err(|e| DesktopError::malformed(format!("Sway ({kind:?})"), e))
    }

    /// Runs Sway commands (`RUN_COMMAND`); a command Sway rejects is [`DesktopError::Refused`].
    pub async fn run_command(&self, command: &str) -> Result<()> {
        if command.trim().is_empty() {
            return Err(DesktopError::invalid("command", "empty Sway command"));
        }
        let body = self
            .request(MessageType::RunCommand, command.as_bytes())
            .await?;
        let results: Vec<CommandResult> = serde_json::from_slice(&body)
            .map_err(|e| DesktopError::malformed("Sway (RunCommand)", e))?;
        match results.into_iter().find(|r| !r.success) {
            None => Ok(()),
            Some(failed) => Err(DesktopError::Refused {
                command: command.to_owned(),
                message: failed.error.unwrap_or_else(|| "failed".to_owned()),
            }),
        }
    }

    /// Sway's version string.
    pub async fn version(&self) -> Result<Option<String>> {
        let v: SwayVersion = self.json(MessageType::GetVersion).await?;
        Ok(v.human_readable)
    }

    /// The text of the config file Sway loaded (`GET_CONFIG`: `{"config": "…"}`).
    pub async fn config(&self) -> Result<String> {
        #[derive(Deserialize)]
        struct Loaded {
            config: String,
        }
        let c: Loaded = self.json(MessageType::GetConfig).await?;
        Ok(c.config)
    }

    /// Monitors, workspaces, windows and focus in the normalized shape.
    pub async fn state(&self) -> Result<DesktopState> {
        let outputs: Vec<SwayOutput> = self.json(MessageType::GetOutputs).await?;
        let workspaces: Vec<SwayWorkspace> = self.json(MessageType::GetWorkspaces).await?;
        let tree: SwayNode = self.json(MessageType::GetTree).await?;
        Ok(normalize(outputs, workspaces, &tree))
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct CommandResult {
    success: bool,
    error: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct SwayVersion {
    human_readable: Option<String>,
}

#[derive(Debug, Default, Deserialize, Clone, Copy)]
#[serde(default)]
struct SwayRect {
    x: i32,
    y: i32,
    width: u32,
    height: u32,
}

impl From<SwayRect> for Rect {
    fn from(r: SwayRect) -> Rect {
        Rect {
            x: r.x,
            y: r.y,
            width: r.width,
            height: r.height,
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct SwayMode {
    width: u32,
    height: u32,
    refresh: Option<i64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct SwayOutput {
    name: String,
    make: Option<String>,
    model: Option<String>,
    active: Option<bool>,
    scale: Option<f64>,
    rect: SwayRect,
    current_mode: Option<SwayMode>,
    focused: bool,
    current_workspace: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct SwayWorkspace {
    num: Option<i64>,
    name: String,
    visible: bool,
    focused: bool,
    output: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct WindowProperties {
    class: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct SwayNode {
    id: i64,
    #[serde(rename = "type")]
    kind: String,
    name: Option<String>,
    rect: SwayRect,
    focused: bool,
    fullscreen_mode: Option<i64>,
    app_id: Option<String>,
    pid: Option<i64>,
    window_properties: Option<WindowProperties>,
    nodes: Vec<SwayNode>,
    floating_nodes: Vec<SwayNode>,
}

fn normalize(
    outputs: Vec<SwayOutput>,
    workspaces: Vec<SwayWorkspace>,
    tree: &SwayNode,
) -> DesktopState {
    let monitors: Vec<Monitor> = outputs
        .into_iter()
        .filter(|o| o.active != Some(false))
        .map(|o| {
            let scale = o.scale.filter(|s| s.is_finite() && *s > 0.0).unwrap_or(1.0);
            let (width, height, refresh) = match &o.current_mode {
                Some(m) if m.width > 0 => (m.width, m.height, m.refresh),
                _ => (
                    (f64::from(o.rect.width) * scale).round() as u32,
                    (f64::from(o.rect.height) * scale).round() as u32,
                    None,
                ),
            };
            let description = match (o.make.as_deref(), o.model.as_deref()) {
                (Some(a), Some(b)) => Some(format!("{a} {b}")),
                (Some(a), None) | (None, Some(a)) => Some(a.to_owned()),
                (None, None) => None,
            };
            Monitor {
                name: o.name,
                description,
                width,
                height,
                // Sway reports millihertz.
                refresh_hz: refresh.filter(|r| *r > 0).map(|r| r as f64 / 1000.0),
                scale,
                logical: o.rect.into(),
                focused: o.focused,
                active_workspace: o.current_workspace,
            }
        })
        .collect();
    let mut windows = Vec::new();
    collect_windows(tree, None, false, &mut windows);
    let focus_window = windows.iter().find(|w| w.focused).map(|w| w.id.clone());
    let workspaces: Vec<Workspace> = workspaces
        .into_iter()
        .map(|w| Workspace {
            windows: Some(
                windows
                    .iter()
                    .filter(|win| win.workspace.as_deref() == Some(w.name.as_str()))
                    .count() as u32,
            ),
            id: w.num.filter(|n| *n >= 0),
            name: w.name,
            monitor: w.output,
            visible: w.visible,
            focused: w.focused,
        })
        .collect();
    let focus_workspace = workspaces.iter().find(|w| w.focused);
    let focus = Focus {
        monitor: focus_workspace
            .and_then(|w| w.monitor.clone())
            .or_else(|| monitors.iter().find(|m| m.focused).map(|m| m.name.clone())),
        workspace: focus_workspace.map(|w| w.name.clone()),
        window: focus_window,
    };
    DesktopState {
        compositor: CompositorKind::Sway,
        monitors,
        workspaces,
        windows,
        focus,
    }
}

/// Walks the tree; a window is a container with a pid or an app id/class (a leaf view).
fn collect_windows(
    node: &SwayNode,
    workspace: Option<&str>,
    floating: bool,
    out: &mut Vec<Window>,
) {
    let workspace = if node.kind == "workspace" {
        node.name.as_deref()
    } else {
        workspace
    };
    let class = node.app_id.clone().filter(|s| !s.is_empty()).or_else(|| {
        node.window_properties
            .as_ref()
            .and_then(|p| p.class.clone())
    });
    let is_view = matches!(node.kind.as_str(), "con" | "floating_con")
        && (node.pid.is_some() || class.is_some())
        && node.nodes.is_empty();
    if is_view {
        out.push(Window {
            id: node.id.to_string(),
            class,
            title: node.name.clone().unwrap_or_default(),
            workspace: workspace.map(str::to_owned),
            geometry: node.rect.into(),
            floating: floating || node.kind == "floating_con",
            fullscreen: node.fullscreen_mode.unwrap_or(0) != 0,
            focused: node.focused,
            pid: node.pid,
        });
    }
    for child in &node.nodes {
        collect_windows(child, workspace, floating, out);
    }
    for child in &node.floating_nodes {
        collect_windows(child, workspace, true, out);
    }
}
