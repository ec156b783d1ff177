//! archgate: the library behind the binary. The CLI for people and the MCP server for agents,
//! both on the same gate; `main.rs` only calls [`main`].
//!
//! Modules by role, each depending only on those listed before it (a tidy test holds the order,
//! `crates/core/tests/core/tidy.rs` `the_binarys_modules_are_layered_by_role`, with no exception):
//! `cli` (the command line's types), `tools` (the catalogue), `app` (what one running archgate
//! holds, and the [`Extension`] another binary may add), `server` (the transports and the
//! daemon's files), `person` (what the person does, from any channel), `channels` (the person's
//! channels: control socket, page, notifications), `commands` (one module per command family).
//!
//! Besides [`main`], the library offers one way in for other binaries: [`serve_http_extended`],
//! the daemon with an [`Extension`] assembled in. The MCP conformance suite's binary
//! (`crates/conformance`) is the one user; archgate's own binary never builds an extension.
//! Neither has a way to serve `/mcp` without a client's bearer token.

mod app;
mod channels;
mod cli;
mod commands;
mod person;
mod server;
mod tools;

use clap::Parser;
use std::process::ExitCode;
use std::sync::Arc;

pub use app::extension::Extension;
pub use server::render::to_call_result;
/// What a tool run by an extension may do inside a call that may become an MCP task.
pub use server::tasks::{become_task, declared as declares_tasks, request_input};

/// The whole program: parse the command line, run the command, and say how it ended.
pub fn main() -> ExitCode {
    // archgate's asking sudo (`tools::handoff::asking_sudo`): this binary, by a link named sudo.
    if tools::handoff::asking_sudo::started_as_sudo() {
        return commands::handoff::as_sudo::run();
    }
    // archgate's program guard (`archgate_exec::guard`): this binary, started by itself.
    if std::env::args_os().nth(1).as_deref()
        == Some(std::ffi::OsStr::new(archgate_exec::guard::ARG))
    {
        return archgate_exec::guard::serve();
    }
    register_guard();
    // A config entry naming no tool of these keeps the file from applying (`config::known`).
    archgate_core::config::known::know_tools(tools::known_names);
    let cli = cli::Cli::parse();
    app::init_logging(cli.log.as_deref());
    run(commands::run(cli))
}

/// `archgate serve --http [--port N]` (the config found the usual way, from `XDG_*`) with
/// `extension`'s tools and handlers: for a binary built on this library.
pub fn serve_http_extended(
    port: Option<u16>,
    log: Option<&str>,
    extension: Arc<dyn Extension>,
) -> ExitCode {
    app::init_logging(log);
    run(commands::serve::run_daemon_extended(port, extension))
}

/// The programs this process runs die with it (`archgate_exec::guard`): the guard is this very
/// binary, which `main` makes answer `archgate_exec::guard::ARG`. Another binary built on the
/// library (`serve_http_extended`: the conformance suite's) registers none, and its programs
/// are not guarded.
fn register_guard() {
    if let Ok(exe) = std::env::current_exe() {
        archgate_exec::guard::use_program(exe);
    }
}

fn run(command: impl Future<Output = anyhow::Result<ExitCode>>) -> ExitCode {
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            commands::note(format_args!(
                "archgate: cannot start the async runtime: {e}"
            ));
            return ExitCode::from(2);
        }
    };
    let done = rt.block_on(command);
    // A read of stdin cannot be cancelled (it runs on a blocking thread): dropping the runtime
    // would wait for the client to close stdin, so a stdio server told to stop (SIGTERM) would
    // linger as long as its client. Everything worth finishing has finished by now.
    rt.shutdown_timeout(std::time::Duration::from_millis(200));
    match done {
        Ok(code) => code,
        // A closed stdout or stdin pipe ends the command quietly, as ripgrep does.
        Err(e)
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            commands::note(format_args!("archgate: {e:#}"));
            ExitCode::from(2)
        }
    }
}
