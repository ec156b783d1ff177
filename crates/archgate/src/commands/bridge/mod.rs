//! `archgate serve` (stdio): a thin bridge to the desktop's daemon.
//!
//! The client's MCP bytes go to the daemon's bridge socket (`server/bridge.rs`) and the
//! daemon's come back, line for line and unchanged (`pump.rs`). Where the daemon is: the runtime
//! directory's `bridge.sock` and nowhere else (`server/daemon.rs`: never a pointer file). When
//! nothing listens there: the socket unit's path is the same socket (systemd starts the daemon on
//! connect), else the daemon is spawned detached (`spawn.rs`), else — or with `--in-process` —
//! this process serves as before, with its own broker and budgets, and says so in its log.
//!
//! A daemon that listens but does not take this client (its hello slots held by connections
//! that never say hello, or it is starting) is waited for, up to [`BUSY_PATIENCE`], and then the
//! bridge fails with the reason. It never serves in-process beside a live daemon: that second
//! server would keep its own budgets and pending approvals, out of the person's sight.

mod dirs;
mod pump;
mod record;
mod session;
mod spawn;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

use archgate_core::clients::LOCAL_CLIENT;
use archgate_core::paths::Paths;

pub use pump::Inflight;

/// How long one connection attempt (connect, hello, answer) may take.
const CONNECT_PATIENCE: Duration = Duration::from_secs(5);
/// How long a bridge keeps trying a daemon that listens but does not take it.
pub const BUSY_PATIENCE: Duration = Duration::from_secs(10);

/// A connection the daemon accepted: its two halves (the reader keeps what it buffered).
pub struct Link {
    pub read: BufReader<tokio::net::unix::OwnedReadHalf>,
    pub write: tokio::net::unix::OwnedWriteHalf,
    /// The daemon's pid, from its answer.
    pub pid: u64,
}

/// Why a daemon did not take the connection.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error("no daemon at {0}: {1}")]
    Absent(PathBuf, std::io::Error),
    #[error("the process at {0} is not this user's")]
    Foreign(PathBuf),
    #[error("the daemon refused this client ({kind}): {reason}")]
    Refused { kind: String, reason: String },
    #[error("the daemon did not answer the hello: {0}")]
    NoAnswer(String),
}

pub async fn run(
    config: Option<PathBuf>,
    client: Option<String>,
    in_process: bool,
) -> anyhow::Result<ExitCode> {
    let name = client.unwrap_or_else(|| LOCAL_CLIENT.to_owned());
    if !crate::server::bridge::valid_name(&name) {
        anyhow::bail!(
            "{:?} is not a valid client name (letters, digits, '-', '_', at most 64)",
            archgate_core::text::for_terminal(&name).into_owned()
        );
    }
    if in_process {
        return super::serve::run_in_process(config).await;
    }
    let (cfg, paths) = crate::app::config_and_paths(config.clone())?;
    let link = match reach(&paths, &name).await {
        Ok(l) => Some(l),
        Err(LinkError::Refused { kind, reason }) => {
            // The daemon runs and said no: serving anyway would split the truth again.
            anyhow::bail!("the archgate daemon refused client {name:?} ({kind}): {reason}");
        }
        Err(first @ LinkError::NoAnswer(_)) => Some(wait_for_busy(&paths, &name, &first).await?),
        // A client whose config file, state or cache directory is not the session's (an
        // `ARCHGATE_CONFIG` or `XDG_CONFIG_HOME` in a project's `.mcp.json`) starts no daemon:
        // `start_daemon` says why, and it is served in its own process (`dirs.rs`).
        Err(first) => match spawn::start_daemon(config.clone(), &paths).await {
            Ok(()) => match reach_patiently(&paths, &name, Duration::from_secs(10)).await {
                Ok(l) => Some(l),
                Err(e @ LinkError::NoAnswer(_)) => Some(wait_for_busy(&paths, &name, &e).await?),
                Err(e) => {
                    tracing::warn!(
                        "no archgate daemon answered ({first}; after starting one: {e}); serving in-process"
                    );
                    None
                }
            },
            Err(why) => {
                tracing::info!(
                    "no archgate daemon answered ({first}) and {why}; serving in-process"
                );
                None
            }
        },
    };
    let Some(link) = link else {
        // Never beside a live daemon of the same files, wherever its runtime directory is: a
        // second gate would count its own budgets and ask on a page nobody looks at.
        if crate::server::daemon::serves_these_files(&paths) {
            anyhow::bail!(
                "an archgate daemon serves these files (state directory {}) from another runtime \
                 directory than this client's ({}): start the client with the session's \
                 XDG_RUNTIME_DIR, where the daemon's bridge socket is; archgate does not serve a \
                 second gate beside it",
                paths.state_dir.display(),
                paths.runtime_dir.display()
            );
        }
        return super::serve::run_in_process(config).await;
    };
    tracing::info!(client = %name, daemon = link.pid, "bridging stdio to the archgate daemon");
    pump::run(
        link,
        pump::Setup {
            name,
            paths,
            config: cfg,
        },
    )
    .await?;
    Ok(ExitCode::SUCCESS)
}

/// The daemon's socket, if it takes this client.
pub async fn reach(paths: &Paths, name: &str) -> Result<Link, LinkError> {
    connect(
        &crate::server::daemon::socket(paths),
        name,
        &paths.config_file,
        &paths.state_dir,
    )
    .await
}

/// Something listens on the daemon's socket but did not take this client: wait for it (up to
/// [`BUSY_PATIENCE`]), then fail with the reason — never serve in-process beside it.
async fn wait_for_busy(paths: &Paths, name: &str, first: &LinkError) -> anyhow::Result<Link> {
    tracing::info!("the archgate daemon did not take this client yet ({first}); waiting");
    match reach_patiently(paths, name, BUSY_PATIENCE).await {
        Ok(l) => Ok(l),
        Err(LinkError::Refused { kind, reason }) => {
            anyhow::bail!("the archgate daemon refused client {name:?} ({kind}): {reason}")
        }
        Err(e) => {
            let who = crate::server::daemon::running(paths)
                .map(|i| format!(" (pid {})", i.pid))
                .unwrap_or_default();
            anyhow::bail!(
                "the archgate daemon{who} at {} is busy: it did not take this client within {} s ({e}); \
                 its bridge socket may be held by connections that never say hello. This bridge \
                 starts no second server of its own beside it (that one would keep its own budgets \
                 and pending approvals); try again, or see `archgate doctor`",
                crate::server::daemon::socket(paths).display(),
                BUSY_PATIENCE.as_secs()
            )
        }
    }
}

/// `reach`, retried until `within` has passed (a daemon starting, or restarting).
pub async fn reach_patiently(
    paths: &Paths,
    name: &str,
    within: Duration,
) -> Result<Link, LinkError> {
    let until = tokio::time::Instant::now() + within;
    loop {
        match reach(paths, name).await {
            Ok(l) => return Ok(l),
            Err(e @ LinkError::Refused { .. }) => return Err(e),
            Err(e) if tokio::time::Instant::now() >= until => return Err(e),
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

/// Connects, checks that the daemon runs as this user, says hello and reads the answer.
pub async fn connect(
    socket: &Path,
    name: &str,
    config: &Path,
    state: &Path,
) -> Result<Link, LinkError> {
    match connect_once(socket, name, config, Some(state)).await {
        // A daemon from before the `state` field (running since an upgrade) refuses it as
        // unknown: it cannot judge it, so the hello is said again without it.
        Err(LinkError::Refused { kind, reason })
            if kind == "malformed" && reason.contains("\"state\"") =>
        {
            connect_once(socket, name, config, None).await
        }
        other => other,
    }
}

async fn connect_once(
    socket: &Path,
    name: &str,
    config: &Path,
    state: Option<&Path>,
) -> Result<Link, LinkError> {
    let attempt = async {
        let stream = UnixStream::connect(socket)
            .await
            .map_err(|e| LinkError::Absent(socket.to_owned(), e))?;
        // The other end must be this user's too (a socket someone else put there is not ours).
        if !crate::server::bridge::peer_is_me(&stream) {
            return Err(LinkError::Foreign(socket.to_owned()));
        }
        let (read, mut write) = stream.into_split();
        let mut hello = serde_json::json!({
            "archgate_bridge": crate::server::bridge::VERSION,
            "client": name,
            "config": config,
        });
        if let Some(state) = state {
            hello["state"] = serde_json::json!(state);
        }
        write
            .write_all(format!("{hello}\n").as_bytes())
            .await
            .map_err(|e| LinkError::NoAnswer(e.to_string()))?;
        let mut read = BufReader::new(read);
        let mut line = Vec::new();
        (&mut read)
            .take(64 * 1024)
            .read_until(b'\n', &mut line)
            .await
            .map_err(|e| LinkError::NoAnswer(e.to_string()))?;
        let answer: serde_json::Value = serde_json::from_slice(&line)
            .map_err(|_| LinkError::NoAnswer("the answer was not JSON".into()))?;
        if answer["ok"] != true {
            return Err(LinkError::Refused {
                kind: answer["error"].as_str().unwrap_or("refused").to_owned(),
                reason: answer["reason"].as_str().unwrap_or("").to_owned(),
            });
        }
        Ok(Link {
            read,
            write,
            pid: answer["pid"].as_u64().unwrap_or(0),
        })
    };
    tokio::time::timeout(CONNECT_PATIENCE, attempt)
        .await
        .unwrap_or_else(|_| Err(LinkError::NoAnswer("no answer within 5 s".into())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A daemon from before the hello's `state` field refuses it as unknown; the bridge says its
    /// hello again without it (an upgrade leaves the old daemon running until it restarts).
    #[tokio::test]
    async fn a_daemon_that_predates_the_state_field_is_greeted_without_it() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("bridge.sock");
        let listener = tokio::net::UnixListener::bind(&socket).unwrap();
        let old_daemon = tokio::spawn(async move {
            let (mut hellos, mut open) = (Vec::new(), Vec::new());
            for _ in 0..2 {
                let (s, _) = listener.accept().await.unwrap();
                let (r, mut w) = s.into_split();
                let mut line = String::new();
                BufReader::new(r).read_line(&mut line).await.unwrap();
                let answer = if line.contains("\"state\"") {
                    r#"{"ok":false,"error":"malformed","reason":"not a bridge hello: unknown field \"state\""}"#
                } else {
                    r#"{"ok":true,"pid":7}"#
                };
                w.write_all(format!("{answer}\n").as_bytes()).await.unwrap();
                hellos.push(line);
                // The accepted connection stays open for the bridge until the test ends.
                open.push(w);
            }
            (hellos, open)
        });
        let link = connect(
            &socket,
            "local",
            Path::new("/c/config.toml"),
            Path::new("/s/archgate"),
        )
        .await
        .unwrap();
        assert_eq!(link.pid, 7);
        let (hellos, _open) = old_daemon.await.unwrap();
        assert_eq!(hellos.len(), 2, "{hellos:?}");
        assert!(hellos[0].contains("/s/archgate"), "{hellos:?}");
    }
}
