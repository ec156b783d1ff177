//! Hyprland's IPC: one Unix-socket connection per request, closed at once, under a hard timeout.
//!
//! The request socket is `$XDG_RUNTIME_DIR/hypr/$HYPRLAND_INSTANCE_SIGNATURE/.socket.sock`
//! (releases before 0.40 used `/tmp/hypr/…`). A request is the command text, prefixed `j/` for a
//! JSON answer; the answer is everything until Hyprland closes the connection. A held connection
//! stalls the compositor, so nothing here keeps one open.
//!
//! Hyprland's JSON changes between releases (fields appear, `fullscreen` went from a bool to a
//! mode number, workspaces are objects in some places and ids in others), so every field is
//! optional and the polymorphic ones are read from [`serde_json::Value`].

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

use super::model::{CompositorKind, DesktopState, Focus, Monitor, Rect, Window, Workspace};
use crate::env::DesktopEnv;
use crate::error::{DesktopError, Result};

/// Largest answer read from Hyprland (a busy desktop's `clients` is well under this).
pub const MAX_ANSWER: usize = 8 * 1024 * 1024;

/// A client for one Hyprland instance's request socket.
#[derive(Debug, Clone)]
pub struct HyprlandClient {
    socket: PathBuf,
    timeout: Duration,
}

impl HyprlandClient {
    /// A client for the socket at `socket`.
    pub fn at(socket: impl Into<PathBuf>, timeout: Duration) -> Self {
        HyprlandClient {
            socket: socket.into(),
            timeout,
        }
    }

    /// The client for the instance named by `HYPRLAND_INSTANCE_SIGNATURE`, if the environment
    /// names one. The socket under `XDG_RUNTIME_DIR` is preferred; the pre-0.40 location under
    /// `/tmp/hypr` is used when only it exists.
    pub fn from_env(env: &DesktopEnv, timeout: Duration) -> Option<Self> {
        let sig = env.hyprland_instance_signature.as_deref()?;
        if sig.contains('/') || sig == ".." {
            return None;
        }
        let modern = env
            .xdg_runtime_dir
            .as_ref()
            .map(|d| d.join("hypr").join(sig).join(".socket.sock"));
        let legacy = Path::new("/tmp/hypr").join(sig).join(".socket.sock");
        let socket = match modern {
            Some(m) if m.exists() || !legacy.exists() => m,
            _ => legacy,
        };
        Some(Self::at(socket, timeout))
    }

    /// The socket this client talks to.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// Sends `request` as written and returns the whole answer.
    pub async fn request_raw(&self, request: &str) -> Result<Vec<u8>> {
        let exchange = async {
            let mut stream = UnixStream::connect(&self.socket).await.map_err(|source| {
                DesktopError::CouldNotReach {
                    what: "Hyprland's IPC socket",
                    path: self.socket.clone(),
                    source,
                }
            })?;
            let io_err = |source| DesktopError::CouldNotReach {
                what: "Hyprland's IPC socket",
                path: self.socket.clone(),
                source,
            };
            stream.write_all(request.as_bytes()).await.map_err(io_err)?;
            let mut answer = Vec::new();
            let mut limited = (&mut stream).take(MAX_ANSWER as u64 + 1);
            limited.read_to_end(&mut answer).await.map_err(io_err)?;
            if answer.len() > MAX_ANSWER {
                return Err(DesktopError::TooLarge {
                    what: "Hyprland's answer",
                    limit: MAX_ANSWER,
                });
            }
            Ok(answer)
        };
        match tokio::time::timeout(self.timeout, exchange).await {
            Ok(answer) => answer,
            Err(_) => Err(DesktopError::TimedOut {
                what: format!("Hyprland ({request})"),
                after: self.timeout,
            }),
        }
    }

    /// Sends `j/<command>` and parses the JSON answer.
    pub async fn json<T: DeserializeOwned>(&self, command: &str) -> Result<T> {
        let answer = self.request_raw(&format!("j/{command}")).await?;
        serde_json::from_slice(&answer).map_err(|e| {
            DesktopError::malformed(
                format!("Hyprland ({command})"),
                format_args!("{e}; answer began {:?}", head(&answer)),
            )
        })
    }

    /// Sends a plain command (e.g. `dispatch workspace 2`, `keyword general:gaps_in 5`) and
    /// returns Hyprland's text answer; anything but `ok` is a [`DesktopError::Refused`].
    pub async fn command(&self, command: &str) -> Result<String> {
        if command.trim().is_empty() {
            return Err(DesktopError::invalid("command", "empty Hyprland command"));
        }
        let answer = self.request_raw(command).await?;
        let text = String::from_utf8_lossy(&answer).trim().to_owned();
        if text == "ok" {
            Ok(text)
        } else {
            Err(DesktopError::Refused {
                command: command.to_owned(),
                message: text,
            })
        }
    }

    /// `dispatch <args>`: runs a Hyprland dispatcher, e.g. `dispatch("workspace 2")`.
    pub async fn dispatch(&self, args: &str) -> Result<()> {
        self.command(&format!("dispatch {args}")).await.map(|_| ())
    }

    /// Hyprland's version tag, when it says.
    pub async fn version(&self) -> Result<Option<String>> {
        let v: HyprVersion = self.json("version").await?;
        Ok(v.tag.or(v.commit))
    }

    /// Monitors, workspaces, windows and focus in the normalized shape.
    pub async fn state(&self) -> Result<DesktopState> {
        let monitors: Vec<HyprMonitor> = self.json("monitors").await?;
        let workspaces: Vec<HyprWorkspace> = self.json("workspaces").await?;
        let clients: Vec<HyprClient> = self.json("clients").await?;
        let active: Value = self.json("activewindow").await?;
        let active_address = active
            .get("address")
            .and_then(Value::as_str)
            .map(str::to_owned);
        Ok(normalize(monitors, workspaces, clients, active_address))
    }
}

fn head(bytes: &[u8]) -> String {
    String::from_utf8_lossy(&bytes[..bytes.len().min(80)]).into_owned()
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct HyprVersion {
    tag: Option<String>,
    commit: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct HyprMonitor {
    id: Option<i64>,
    name: String,
    description: Option<String>,
    width: u32,
    height: u32,
    refresh_rate: Option<f64>,
    x: i32,
    y: i32,
    scale: Option<f64>,
    transform: Option<i64>,
    focused: bool,
    active_workspace: Option<Value>,
    disabled: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct HyprWorkspace {
    id: Option<i64>,
    name: Option<String>,
    monitor: Option<String>,
    windows: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct HyprClient {
    address: String,
    mapped: Option<bool>,
    at: Option<(i32, i32)>,
    size: Option<(u32, u32)>,
    workspace: Option<Value>,
    floating: Option<bool>,
    class: Option<String>,
    title: Option<String>,
    pid: Option<i64>,
    fullscreen: Option<Value>,
}

/// A workspace reference: `{"id":1,"name":"1"}` in most releases, a bare id or name in others.
fn workspace_name(v: &Value) -> Option<String> {
    match v {
        Value::Object(o) => o
            .get("name")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| o.get("id").and_then(Value::as_i64).map(|i| i.to_string())),
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

/// `fullscreen`: a bool before 0.42, a mode number (0 none, 1 maximized, 2 fullscreen…) after.
fn truthy(v: &Value) -> bool {
    match v {
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        _ => false,
    }
}

fn normalize(
    monitors: Vec<HyprMonitor>,
    workspaces: Vec<HyprWorkspace>,
    clients: Vec<HyprClient>,
    active_address: Option<String>,
) -> DesktopState {
    let monitors: Vec<Monitor> = monitors
        .into_iter()
        .filter(|m| m.disabled != Some(true))
        .map(|m| {
            let scale = m.scale.filter(|s| s.is_finite() && *s > 0.0).unwrap_or(1.0);
            // Transforms 1, 3, 5 and 7 rotate by 90° or 270°: the layout size swaps.
            let rotated = matches!(m.transform, Some(1 | 3 | 5 | 7));
            let (w, h) = if rotated {
                (m.height, m.width)
            } else {
                (m.width, m.height)
            };
            Monitor {
                description: m.description.filter(|d| !d.is_empty()),
                refresh_hz: m.refresh_rate,
                scale,
                logical: Rect {
                    x: m.x,
                    y: m.y,
                    width: (f64::from(w) / scale).round() as u32,
                    height: (f64::from(h) / scale).round() as u32,
                },
                focused: m.focused,
                active_workspace: m.active_workspace.as_ref().and_then(workspace_name),
                width: m.width,
                height: m.height,
                name: if m.name.is_empty() {
                    m.id.map(|i| format!("monitor-{i}")).unwrap_or_default()
                } else {
                    m.name
                },
            }
        })
        .collect();
    let focused_monitor = monitors.iter().find(|m| m.focused);
    let focus_monitor = focused_monitor.map(|m| m.name.clone());
    let focus_workspace = focused_monitor.and_then(|m| m.active_workspace.clone());
    let workspaces = workspaces
        .into_iter()
        .map(|w| {
            let name = w
                .name
                .clone()
                .or_else(|| w.id.map(|i| i.to_string()))
                .unwrap_or_default();
            let visible = monitors
                .iter()
                .any(|m| m.active_workspace.as_deref() == Some(name.as_str()));
            Workspace {
                focused: focus_workspace.as_deref() == Some(name.as_str()),
                id: w.id,
                monitor: w.monitor,
                windows: w.windows,
                visible,
                name,
            }
        })
        .collect();
    let windows = clients
        .into_iter()
        .filter(|c| c.mapped != Some(false) && !c.address.is_empty())
        .map(|c| {
            let (x, y) = c.at.unwrap_or_default();
            let (width, height) = c.size.unwrap_or_default();
            Window {
                focused: active_address.as_deref() == Some(c.address.as_str()),
                class: c.class.filter(|s| !s.is_empty()),
                title: c.title.unwrap_or_default(),
                workspace: c.workspace.as_ref().and_then(workspace_name),
                geometry: Rect {
                    x,
                    y,
                    width,
                    height,
                },
                floating: c.floating.unwrap_or(false),
                fullscreen: c.fullscreen.as_ref().is_some_and(truthy),
                pid: c.pid,
                id: c.address,
            }
        })
        .collect::<Vec<_>>();
    DesktopState {
        compositor: CompositorKind::Hyprland,
        focus: Focus {
            monitor: focus_monitor,
            workspace: focus_workspace,
            window: active_address.filter(|a| windows.iter().any(|w| w.id == *a)),
        },
        monitors,
        workspaces,
        windows,
    }
}
