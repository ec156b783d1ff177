//! `archgate tools` and `archgate call`: the catalogue and the gate, for people.

use archgate_core::clients::LOCAL_CLIENT;
use archgate_core::gate::Client;
use std::path::PathBuf;
use std::process::ExitCode;

use super::out;
use crate::app::App;

pub fn tools(config: Option<PathBuf>, json: bool) -> anyhow::Result<ExitCode> {
    let app = App::open(config, None)?;
    let cfg = app.gate.config.current();
    let list: Vec<_> = app
        .gate
        .catalogue
        .all()
        .map(|t| {
            let s = t.spec();
            serde_json::json!({
                "name": s.name,
                "title": s.title,
                "tier": s.tier.as_str(),
                "enabled": !cfg.tools.disabled.contains(s.name),
                "description": s.description,
                "annotations": {"readOnlyHint": s.read_only, "destructiveHint": s.destructive,
                                "idempotentHint": s.idempotent, "openWorldHint": s.open_world},
                "inputSchema": *t.input_schema(),
            })
        })
        .collect();
    if json {
        out(serde_json::to_string_pretty(&list)?);
    } else {
        for t in &list {
            let off = if t["enabled"] == true {
                ""
            } else {
                " (disabled)"
            };
            out(format!(
                "{:<20} {:<12} {}{off}",
                t["name"].as_str().unwrap_or(""),
                t["tier"].as_str().unwrap_or(""),
                t["title"].as_str().unwrap_or("")
            ));
        }
    }
    app.shutdown();
    Ok(ExitCode::SUCCESS)
}

pub async fn call(config: Option<PathBuf>, tool: &str, args: &str) -> anyhow::Result<ExitCode> {
    let args: serde_json::Value =
        serde_json::from_str(args).map_err(|e| anyhow::anyhow!("arguments are not JSON: {e}"))?;
    let app = App::open(config, None)?;
    let cfg = app.gate.config.current();
    let client = Client {
        name: LOCAL_CLIENT.into(),
        grant: archgate_core::clients::grant_for(LOCAL_CLIENT, None, &cfg),
    };
    let r = app.gate.call(&client, tool, args).await;
    let failed = r.output.is_err();
    let rendered = crate::server::mcp::to_call_result(r);
    out(serde_json::to_string_pretty(&rendered)?);
    app.shutdown();
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
