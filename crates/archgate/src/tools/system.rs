//! `system_status`: the machine at a glance, from /proc, /sys and one `systemctl`.

use archgate_core::exec::Permit;
use archgate_core::policy::Tier;
use archgate_core::tool::{CallCx, Tool, ToolError, ToolOutput, ToolSpec};
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;

/// No arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SystemStatusArgs {}

pub struct SystemStatus;

static SPEC: ToolSpec = ToolSpec {
    name: "system_status",
    title: "System status",
    description: "Kernel, uptime, load, memory, swap, disk use of / and /home, failed systemd units and \
                  battery. Use it first when the person asks how their machine is doing or something \
                  feels slow or broken. Each probe that fails says why without failing the others.",
    tier: Tier::Read,
    read_only: true,
    destructive: false,
    idempotent: true,
    open_world: false,
    private_args: &[],
};

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
            Ok(ToolOutput::json(status))
        })
    }
}
