//! One module per command family; `run` dispatches.

mod approvals;
mod approve;
mod audit;
mod bridge;
mod call;
mod client_config;
mod clients;
mod config;
mod doctor;
mod doctor_verdict;
pub(crate) mod handoff;
mod health_probe;
mod log;
mod pick;
mod policy;
pub mod serve;
mod service;
mod setup;
mod setup_teach;
mod show;
mod status;
mod stdout;
mod unit;
mod wiki;

use std::process::ExitCode;

use crate::cli::{Cli, Command};
pub use stdout::{note, out, out_bytes, out_raw, stdout_closed};

pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let config = cli.config;
    match cli.command.unwrap_or(Command::Serve {
        http: false,
        port: None,
        client: None,
        in_process: false,
        detached: false,
    }) {
        Command::Serve {
            http: true,
            port,
            detached,
            ..
        } => serve::run_daemon(config, port, detached).await,
        Command::Serve {
            client, in_process, ..
        } => bridge::run(config, client, in_process).await,
        Command::Tools { json, markdown } => call::tools(config, json, markdown),
        Command::Audit { target, json } => audit::run(config, &target, json).await,
        Command::Wiki { action } => wiki::run(config, action).await,
        Command::Call { tool, args } => call::call(config, &tool, &args).await,
        Command::Doctor => doctor::run(config).await,
        Command::ClientConfig { client, http } => client_config::run(config, client, http),
        Command::Config { action } => config::run(config, action),
        Command::Policy { action } => policy::run(config, action).await,
        Command::Log {
            follow,
            tool,
            since,
            json,
        } => log::run(config, follow, tool, since, json).await,
        Command::Clients { action } => clients::run(config, action).await,
        Command::Reload => serve::reload(config),
        Command::Approvals { json } => approvals::list(config, json),
        Command::Handoff { id } => handoff::run(config, &id, "own_terminal").await,
        Command::HandoffRun { id } => handoff::run(config, &id, "terminal").await,
        Command::Show { id, json } => show::run(config, &id, json),
        Command::Approve { id, always } => approve::approve(config, id.as_deref(), always),
        Command::Deny { id } => approve::deny(config, &id),
        Command::DevMode { action } => approvals::dev_mode(config, action),
        Command::Rules {
            action: crate::cli::RulesAction::AfterUntrusted { id, on },
        } => policy::rule_after_untrusted(config, id, on).await,
        Command::Rules { action } => approvals::rules(config, action),
        Command::Ui { print } => approvals::ui(config, print),
        Command::Status { waybar, json, port } => status::run(config, waybar, json, port),
        Command::Service { action } => service::run(config, action).await,
        Command::Setup(args) => setup::run(config, args).await,
        Command::Completions { shell } => {
            let mut b = Vec::new();
            clap_complete::generate(shell, &mut crate::cli::command(), "archgate", &mut b);
            out_bytes(&b);
            Ok(ExitCode::SUCCESS)
        }
        Command::Man => {
            let mut b = Vec::new();
            clap_mangen::Man::new(crate::cli::command()).render(&mut b)?;
            out_bytes(&b);
            Ok(ExitCode::SUCCESS)
        }
    }
}
