//! `archgate clients add|list|revoke|rename`.

use std::path::PathBuf;
use std::process::ExitCode;

use super::out;
use crate::app::App;
use crate::cli::ClientsAction;

pub fn run(config: Option<PathBuf>, action: ClientsAction) -> anyhow::Result<ExitCode> {
    let app = App::open(config, None)?;
    match action {
        ClientsAction::Add {
            name,
            preset,
            tools,
        } => {
            let token = app.clients.add(&name, &preset, tools)?;
            let port = app.gate.config.current().server.port;
            out(format!(
                "client {name:?} added with preset {preset}. Its token is shown once:\n\n  {token}\n"
            ));
            out("Connect it over HTTP, for example (Claude Code):");
            out(format!(
                "  claude mcp add --transport http archgate http://127.0.0.1:{port}/mcp --header \"Authorization: Bearer {token}\""
            ));
        }
        ClientsAction::List => {
            out(format!(
                "{:<20} {:<10} {:<26} tools",
                "name", "preset", "created"
            ));
            out(format!(
                "{:<20} {:<10} {:<26} all",
                "default", "full", "(first run)"
            ));
            for c in app.clients.list() {
                let tools = c.tools.map(|t| t.join(",")).unwrap_or_else(|| "all".into());
                out(format!(
                    "{:<20} {:<10} {:<26} {tools}",
                    c.name, c.preset, c.created
                ));
            }
        }
        ClientsAction::Revoke { name } => {
            app.clients.revoke(&name)?;
            out(format!(
                "client {name:?} revoked; running servers refuse its token from the next request"
            ));
        }
        ClientsAction::Rename { from, to } => {
            app.clients.rename(&from, &to)?;
            out(format!("client {from:?} is now {to:?}"));
        }
    }
    app.shutdown();
    Ok(ExitCode::SUCCESS)
}
