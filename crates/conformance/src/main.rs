//! `archgate-conformance [--port N]`: archgate's daemon (`serve --http`) with the MCP conformance
//! suite's fixtures, for `tests/run-conformance.sh`. Never installed, never packaged.
//!
//! The suite cannot send a bearer token, and archgate has no way to serve `/mcp` without one. So
//! this binary runs only in a fresh sandbox — directories archgate has never used: no token file,
//! no clients file — adds the client `conformance` there (preset `full`), and puts its token on
//! every request in front of archgate's router (`Fixtures::front`). archgate's own token check
//! stays in the path, unchanged.

mod fixtures;

use archgate_core::paths::{PathEnv, Paths};
use std::process::ExitCode;
use std::sync::Arc;

/// The client the suite's requests authenticate as.
const CLIENT: &str = "conformance";

fn main() -> ExitCode {
    let port = match port(std::env::args().skip(1)) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("archgate-conformance: {e}\nusage: archgate-conformance [--port N]");
            return ExitCode::from(2);
        }
    };
    let token = match sandbox_token() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("archgate-conformance: {e}");
            return ExitCode::from(2);
        }
    };
    let authorization = match axum::http::HeaderValue::try_from(format!("Bearer {token}")) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("archgate-conformance: the token is no header value: {e}");
            return ExitCode::from(2);
        }
    };
    archgate::serve_http_extended(
        Some(port),
        None,
        Arc::new(fixtures::Fixtures { authorization }),
    )
}

/// `--port N` (default 0: any free port, named in the `listening` frame).
fn port(mut args: impl Iterator<Item = String>) -> Result<u16, String> {
    let mut port = 0;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--port" => {
                let v = args.next().ok_or("--port needs a number")?;
                port = v.parse().map_err(|e| format!("--port {v}: {e}"))?;
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(port)
}

/// Adds the `conformance` client to a sandbox archgate has never run in, and returns its token.
/// Directories that hold a token or clients file are someone's archgate: refused.
fn sandbox_token() -> Result<String, String> {
    let env = PathEnv::from_process();
    let file = Paths::config_dir(&env)
        .map_err(|e| e.to_string())?
        .join("config.toml");
    let config = archgate_core::config::load(&file).config;
    let paths = Paths::resolve(&env, Some(file), &config.paths).map_err(|e| e.to_string())?;
    for used in [paths.token_file(), paths.clients_file()] {
        if used.exists() {
            return Err(format!(
                "{} exists: archgate-conformance runs only in a fresh sandbox (set XDG_CONFIG_HOME, \
                 XDG_STATE_HOME, XDG_RUNTIME_DIR and XDG_CACHE_HOME to new directories)",
                used.display()
            ));
        }
    }
    paths
        .prepare(env.uid)
        .map_err(|e| format!("preparing the sandbox: {e}"))?;
    let store =
        archgate_core::clients::ClientStore::open(&paths.token_file(), &paths.clients_file())
            .map_err(|e| e.to_string())?;
    store
        .add(CLIENT, "full", None)
        .map_err(|e| format!("adding the {CLIENT} client: {e}"))
}

#[cfg(test)]
mod tests {
    use super::port;

    fn args(a: &[&str]) -> impl Iterator<Item = String> {
        a.iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .into_iter()
    }

    #[test]
    fn the_port_is_parsed_and_anything_else_refused() {
        assert_eq!(port(args(&[])), Ok(0));
        assert_eq!(port(args(&["--port", "8123"])), Ok(8123));
        assert!(port(args(&["--port"])).is_err());
        assert!(port(args(&["--port", "x"])).is_err());
        assert!(port(args(&["--no-auth"])).is_err());
    }
}
