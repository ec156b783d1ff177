//! `archgate clients add|list|revoke|rename`, through `person::clients` (as the approval page).

use std::path::PathBuf;
use std::process::ExitCode;

use super::out;
use crate::app::App;
use crate::cli::{ClientKind, ClientsAction};
use crate::person::clients;
use crate::person::snippets::{self, Connect, Token};

pub async fn run(config: Option<PathBuf>, action: ClientsAction) -> anyhow::Result<ExitCode> {
    let app = App::open_without_calls(config)?;
    let done = act(&app, action).await;
    app.shutdown();
    done?;
    Ok(ExitCode::SUCCESS)
}

/// This command changes the clients file itself, so polkit is asked about this process.
fn me() -> Result<crate::person::presence::Subject, String> {
    crate::person::presence::Subject::this_process().map_err(|e| e.to_string())
}

async fn act(app: &App, action: ClientsAction) -> anyhow::Result<()> {
    match action {
        ClientsAction::Add {
            name,
            preset,
            tools,
        } => {
            let added = clients::add(app, &name, &preset, tools, "cli", me()).await?;
            let port = snippets::served_port(&app.paths, app.gate.config().current().server.port);
            let url = snippets::mcp_url(port);
            out(format!(
                "client {name:?} added with preset {preset}. Its token is shown once:\n\n  {}\n",
                added.token
            ));
            out(
                "Connect it over HTTP, for example Claude Code: put this in the project's \
                 .mcp.json (a file, never a command line: the token stays out of shell history \
                 and process arguments; keep the file out of version control):",
            );
            out(snippets::snippet(
                ClientKind::ClaudeCode,
                &Connect::Http {
                    url: &url,
                    token: Token::Shown(&added.token),
                },
            ));
        }
        ClientsAction::List => {
            out(format!(
                "{:<20} {:<10} {:<26} tools",
                "name", "preset", "created"
            ));
            for c in clients::list(app) {
                let created = match (&c.created, c.name.as_str()) {
                    (Some(t), _) => t.clone(),
                    (None, archgate_core::clients::LOCAL_CLIENT) => "(stdio)".into(),
                    (None, _) => "(first run)".into(),
                };
                let tools = c.tools.map(|t| t.join(",")).unwrap_or_else(|| "all".into());
                out(format!(
                    "{:<20} {:<10} {:<26} {tools}",
                    c.name, c.preset, created
                ));
            }
        }
        ClientsAction::Revoke { name } => {
            clients::revoke(app, &name, "cli", me()).await?;
            out(format!(
                "client {name:?} revoked; running servers refuse its token from the next request"
            ));
        }
        ClientsAction::Rename { from, to } => {
            clients::rename(app, &from, &to, "cli", me()).await?;
            out(format!("client {from:?} is now {to:?}"));
        }
    }
    Ok(())
}
