//! `system_status`: the machine at a glance, from /proc, /sys and one `systemctl`, and the
//! desktop (compositor, Omarchy's version and theme, outputs) from `Desktop::desktop_facts`.

use archgate_core::exec::Permit;
use archgate_core::tool::{CallCx, Tool, ToolError, ToolOutput, ToolSpec};
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;

/// No arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SystemStatusArgs {}

pub struct SystemStatus {
    desktop: archgate_desktop::Desktop,
}

impl SystemStatus {
    /// For the session `env` describes (see `tools::session_env`).
    pub fn new(env: archgate_desktop::DesktopEnv) -> SystemStatus {
        SystemStatus {
            desktop: archgate_desktop::Desktop::new(
                env,
                archgate_desktop::DesktopConfig::default(),
            ),
        }
    }
}

read_spec!(static SPEC = "system_status", "System status", open_world: false, provenance: archgate_core::provenance::Provenance::ArchgateOnly, "Kernel, uptime, load, memory, swap, disk of / and /home, failed units, battery, and the \
                  desktop (compositor, Omarchy, theme, outputs). Use it first when the machine feels \
                  slow or broken.");

impl Tool for SystemStatus {
    type Args = SystemStatusArgs;
    type Run = SystemStatusArgs;
    archgate_core::resolve_as_planned!();

    fn spec(&self) -> &'static ToolSpec {
        &SPEC
    }

    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        permit: Permit,
        _args: SystemStatusArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let status = archgate_sysinfo::system_status(
                &permit,
                &archgate_sysinfo::SysinfoOptions::default(),
            )
            .await;
            let desktop = self.desktop.desktop_facts().await;
            let mut v = serde_json::to_value(status).unwrap_or_else(|_| serde_json::json!({}));
            if let Some(obj) = v.as_object_mut() {
                obj.insert(
                    "desktop".into(),
                    serde_json::to_value(desktop).unwrap_or(serde_json::Value::Null),
                );
            }
            // Already a JSON value: `ToolOutput::json` would copy it whole once more.
            Ok(ToolOutput {
                structured: Some(v),
                ..ToolOutput::default()
            })
        })
    }
}
