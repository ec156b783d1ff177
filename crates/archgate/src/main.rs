//! archgate: the binary. CLI for people, MCP server for agents, both on the same gate.

mod app;
mod channels;
mod cli;
mod client_actions;
mod commands;
mod control;
mod daemon;
mod frames;
mod instances;
mod notify;
mod page;
mod person_actions;
mod presence;
mod server;
mod sessions;
mod snippets;
mod tools;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    app::init_logging(cli.log.as_deref());
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("archgate: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let done = rt.block_on(commands::run(cli));
    // A read of stdin cannot be cancelled (it runs on a blocking thread): dropping the runtime
    // would wait for the client to close stdin, so a stdio server told to stop (SIGTERM) would
    // linger as long as its client. Everything worth finishing has finished by now.
    rt.shutdown_timeout(std::time::Duration::from_millis(200));
    match done {
        Ok(code) => code,
        Err(e) => {
            eprintln!("archgate: {e:#}");
            ExitCode::from(2)
        }
    }
}
