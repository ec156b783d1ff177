//! The control socket: how the person's CLI reaches a running archgate.
//!
//! A Unix socket in the runtime directory (`control.sock`, or `control-<pid>.sock` when another
//! live instance already holds that name — each stdio client starts its own archgate), mode 0600
//! inside the 0700 runtime directory. Every connection's peer credentials (SO_PEERCRED) must be
//! this process's uid, otherwise it is refused before a byte is read. Requests and replies are
//! one JSON object per line, each within `server.header_timeout_s`; at most 32 connections are
//! served at once. While the socket is up it counts as a pull channel of the broker,
//! so calls that need approval park instead of being refused `unsupported`.
//!
//! **Invariant:** no tool can reach this socket: resolution refuses archgate's runtime directory,
//! and nothing here is exposed over MCP. The one-time page login link travels only here.

use archgate_core::approval::PullChannelGuard;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};

use crate::app::App;
use crate::channels::page::PageHandle;
use crate::person::actions::{self as actions, Choice};
use crate::person::presence::Subject;

/// Longest request line accepted.
pub const MAX_LINE: u64 = 64 * 1024;
/// Connections served at once; past it a new one is closed at once (the CLI sends one line and
/// reads one, so a handful is plenty).
const MAX_CONNECTIONS: usize = 32;
/// How long the CLI waits for one instance's answer.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(5);

/// One request on the control socket.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    /// Who is this instance (pid, mode, page URL, developer mode).
    Hello,
    /// The questions waiting for the person.
    Pending,
    /// The person's answer to one question.
    Answer {
        id: String,
        answer: Choice,
    },
    /// Developer mode on for `secs` seconds (at most 8 h).
    DevModeOn {
        secs: u64,
    },
    DevModeOff,
    DevModeStatus,
    /// Standing rules in force.
    Rules,
    Revoke {
        id: String,
    },
    RevokeAll,
    /// A one-time login link for the approval page.
    LoginLink,
    /// A one-time login for the approval page as a 0600 file in the runtime directory (the
    /// link inside it), for the browser opener: only the file's path travels on a command line.
    LoginFile,
    /// A one-time short code for the page's login form, and the form's URL.
    LoginCode,
    /// The helper in the person's terminal takes hand-off `id` (`channels/handoff.rs`): the
    /// rest of the connection belongs to it. `channel`: `terminal` or `own_terminal`.
    HandoffClaim {
        id: String,
        channel: String,
    },
}

/// A running control socket; removed when dropped.
pub struct ControlServer {
    path: PathBuf,
    task: tokio::task::JoinHandle<()>,
    _pull: PullChannelGuard,
}

impl Drop for ControlServer {
    fn drop(&mut self) {
        self.task.abort();
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Binds the socket and serves it until dropped.
pub fn start(
    app: Arc<App>,
    page: Option<PageHandle>,
    mode: &'static str,
) -> std::io::Result<ControlServer> {
    let (listener, path) = bind(&app.paths.runtime_dir)?;
    tracing::info!(socket = %path.display(), "control socket ready");
    let pull = app.gate.broker().register_pull_channel();
    let cx = Arc::new(Cx { app, page, mode });
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let task = tokio::spawn(async move {
        loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    let Ok(slot) = slots.clone().try_acquire_owned() else {
                        tracing::debug!("control socket: too many connections; closed a new one");
                        continue;
                    };
                    let cx = cx.clone();
                    tokio::spawn(async move {
                        serve_connection(cx, stream).await;
                        drop(slot);
                    });
                }
                Err(e) => {
                    tracing::warn!("control socket accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
        }
    });
    Ok(ControlServer {
        path,
        task,
        _pull: pull,
    })
}

fn bind(runtime_dir: &Path) -> std::io::Result<(UnixListener, PathBuf)> {
    let primary = runtime_dir.join("control.sock");
    match bind_private(&primary) {
        Ok(l) => return Ok((l, primary)),
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
            if std::os::unix::net::UnixStream::connect(&primary).is_err() {
                // Left behind by an instance that died: take the name over.
                let _ = std::fs::remove_file(&primary);
                if let Ok(l) = bind_private(&primary) {
                    return Ok((l, primary));
                }
            }
        }
        Err(e) => return Err(e),
    }
    let own = runtime_dir.join(format!("control-{}.sock", std::process::id()));
    let _ = std::fs::remove_file(&own);
    Ok((bind_private(&own)?, own))
}

fn bind_private(path: &Path) -> std::io::Result<UnixListener> {
    let l = UnixListener::bind(path)?;
    // The directory is 0700 already; the socket itself is 0600 as well.
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(l)
}

struct Cx {
    app: Arc<App>,
    page: Option<PageHandle>,
    mode: &'static str,
}

/// The process on the other end, for polkit: its pid from SO_PEERCRED and its start time read
/// now, at connect time, so a pid reused later is a different subject to polkit.
fn peer_subject(stream: &UnixStream) -> Result<Subject, String> {
    let cred = crate::server::peer::credentials(stream).map_err(|e| e.to_string())?;
    let pid = u32::try_from(cred.pid()).map_err(|_| "no peer pid".to_owned())?;
    Subject::of(pid, cred.uid()).map_err(|e| format!("process {pid}: {e}"))
}

async fn serve_connection(cx: Arc<Cx>, mut stream: UnixStream) {
    let me = nix::unistd::getuid().as_raw();
    match crate::server::peer::uid(&stream) {
        Ok(uid) if uid == me => {}
        Ok(uid) => {
            tracing::warn!(
                uid,
                "control socket: refused a connection from another user"
            );
            let _ = stream
                .write_all(
                    format!(
                        "{}\n",
                        refusal("refused", "this socket answers only its own user")
                    )
                    .as_bytes(),
                )
                .await;
            return;
        }
        Err(e) => {
            tracing::warn!("control socket: no peer credentials ({e}); refused");
            return;
        }
    }
    let subject = peer_subject(&stream);
    // An answer from a program archgate started is recorded as such (attack 3, F10).
    let peer_pid = crate::server::peer::credentials(&stream)
        .ok()
        .and_then(|c| u32::try_from(c.pid()).ok());
    let channel = super::ancestry::cli_channel(peer_pid);
    let (read, mut write) = stream.into_split();
    let mut reader = tokio::io::BufReader::new(read);
    // A line (or the wait for the next one) gets `server.header_timeout_s`, like an HTTP
    // request header: a half-sent line cannot hold a connection.
    let patience = cx.app.gate.config().current().server.header_timeout;
    loop {
        let mut line = Vec::new();
        let n = match tokio::time::timeout(
            patience,
            (&mut reader).take(MAX_LINE).read_until(b'\n', &mut line),
        )
        .await
        {
            Ok(Ok(n)) => n,
            _ => return,
        };
        if n == 0 {
            return;
        }
        let reply = if line.last() != Some(&b'\n') && n as u64 >= MAX_LINE {
            refusal("too_large", "request lines are limited to 64 KiB")
        } else {
            match serde_json::from_slice::<Request>(&line) {
                Ok(Request::HandoffClaim { id, channel }) => {
                    super::handoff::serve(
                        cx.app.clone(),
                        id,
                        channel,
                        peer_pid,
                        MAX_LINE,
                        reader,
                        write,
                    )
                    .await;
                    return;
                }
                Ok(req) => handle(&cx, req, &subject, channel).await,
                Err(e) => refusal("malformed", &format!("not a control request: {e}")),
            }
        };
        if write
            .write_all(format!("{reply}\n").as_bytes())
            .await
            .is_err()
        {
            return;
        }
        if n as u64 >= MAX_LINE {
            return;
        }
    }
}

fn refusal(kind: &str, reason: &str) -> Value {
    json!({"ok": false, "error": kind, "reason": reason})
}

fn ok(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        o.insert("ok".into(), true.into());
        o.insert("pid".into(), std::process::id().into());
    }
    v
}

async fn handle(
    cx: &Cx,
    req: Request,
    subject: &Result<Subject, String>,
    channel: &'static str,
) -> Value {
    let gate = &cx.app.gate;
    let person = &cx.app.person_channel;
    match req {
        Request::Hello => ok(json!({
            "mode": cx.mode,
            "page_url": cx.page.as_ref().map(|p| p.url()),
            "pending": actions::pending(gate).len(),
            "developer_mode": actions::dev_mode(gate),
        })),
        Request::Pending => ok(json!({
            "now": archgate_core::person::now_secs(),
            "pending": actions::pending(gate),
        })),
        Request::Answer { id, answer } => {
            // A client the CLI changed a moment ago counts before any answer: a revoked client's
            // questions, or a stdio client's under a name just given to a token, are withdrawn.
            cx.app.sync_clients().await;
            match actions::answer_confirmed(gate, &id, answer, channel, subject.clone()).await {
                Ok(()) => ok(json!({"id": id, "answer": answer})),
                Err(e) => refusal(e.kind(), &e.to_string()),
            }
        }
        Request::DevModeOn { secs } => {
            match actions::set_dev_mode_confirmed(
                gate,
                person,
                Some(secs),
                channel,
                subject.clone(),
            )
            .await
            {
                Ok(d) => ok(json!({"developer_mode": d})),
                Err(e) => refusal(e.kind(), &e.to_string()),
            }
        }
        Request::DevModeOff => {
            match actions::set_dev_mode_confirmed(gate, person, None, channel, Err(String::new()))
                .await
            {
                Ok(d) => ok(json!({"developer_mode": d})),
                Err(e) => refusal(e.kind(), &e.to_string()),
            }
        }
        Request::DevModeStatus => ok(json!({"developer_mode": actions::dev_mode(gate)})),
        Request::Rules => ok(json!({"rules": actions::rules(gate)})),
        Request::Revoke { id } => match actions::revoke(gate, person, &id, channel) {
            Ok(()) => ok(json!({"revoked": id})),
            Err(e) => refusal(e.kind(), &e.to_string()),
        },
        Request::RevokeAll => ok(json!({"revoked": actions::revoke_all(gate, person, channel)})),
        Request::LoginCode => match &cx.page {
            Some(p) => match p.login_code() {
                Some(code) => ok(json!({"code": code, "url": format!("{}login", p.url())})),
                None => refusal("could_not_write", "no safe random code could be made"),
            },
            None => refusal(
                "not_available",
                "this instance serves no approval page ([approval] page = false, or it could not start)",
            ),
        },
        Request::LoginFile => match &cx.page {
            Some(p) => match p.login_file() {
                Ok(f) => ok(json!({"file": f})),
                Err(e) => refusal("could_not_write", &format!("no login file: {e}")),
            },
            None => refusal(
                "not_available",
                "this instance serves no approval page ([approval] page = false, or it could not start)",
            ),
        },
        Request::HandoffClaim { .. } => refusal(
            "malformed",
            "a hand-off is claimed on a connection of its own",
        ),
        Request::LoginLink => match &cx.page {
            Some(p) => ok(json!({"link": p.login_link()})),
            None => refusal(
                "not_available",
                "this instance serves no approval page ([approval] page = false, or it could not start)",
            ),
        },
    }
}

/// The control sockets of live instances: `control.sock` first. Sockets of instances that are
/// gone are removed.
pub fn sockets(runtime_dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    // Only in a runtime directory of archgate's own, judged now (attack 14 F6: its files and
    // sockets are named by whoever may write it otherwise).
    if archgate_core::paths::untrusted_dir(runtime_dir, nix::unistd::getuid().as_raw()).is_some() {
        return out;
    }
    let primary = runtime_dir.join("control.sock");
    if primary.exists() {
        out.push(primary);
    }
    let Ok(rd) = std::fs::read_dir(runtime_dir) else {
        return out;
    };
    let mut others: Vec<PathBuf> = Vec::new();
    for e in rd.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("control-"))
            .and_then(|n| n.strip_suffix(".sock"))
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        if nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok() {
            others.push(e.path());
        } else {
            let _ = std::fs::remove_file(e.path());
        }
    }
    others.sort();
    out.extend(others);
    out
}

/// Sends one request to one socket and reads the one-line reply (blocking; for the CLI).
pub fn request(socket: &Path, req: &Request) -> std::io::Result<Value> {
    let mut s = std::os::unix::net::UnixStream::connect(socket)?;
    // The listener must be this user's, as the daemon's sockets check their clients: another
    // user's socket at this name would be told the person's answers and could forge replies.
    let cred = nix::sys::socket::getsockopt(&s, nix::sys::socket::sockopt::PeerCredentials)
        .map_err(std::io::Error::from)?;
    if cred.uid() != nix::unistd::getuid().as_raw() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!(
                "{} is listened on by uid {}, not by you: not archgate's",
                socket.display(),
                cred.uid()
            ),
        ));
    }
    // A yes may wait for the person to authenticate to polkit (presence): up to the longest
    // question deadline, or the time given for a change.
    let read = match req {
        Request::Answer { .. } => Duration::from_secs(605),
        Request::DevModeOn { .. } => crate::person::presence::CHANGE_WAIT + CLIENT_TIMEOUT,
        _ => CLIENT_TIMEOUT,
    };
    s.set_read_timeout(Some(read))?;
    s.set_write_timeout(Some(CLIENT_TIMEOUT))?;
    let mut line = serde_json::to_string(req).map_err(std::io::Error::other)?;
    line.push('\n');
    s.write_all(line.as_bytes())?;
    let mut reply = String::new();
    BufReader::new(std::io::Read::take(s, MAX_LINE * 64)).read_line(&mut reply)?;
    serde_json::from_str(&reply).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("the control socket answered something that is not JSON: {e}"),
        )
    })
}

/// Sends the request to every live instance; each reply with the socket it came from.
pub fn request_all(runtime_dir: &Path, req: &Request) -> Vec<(PathBuf, std::io::Result<Value>)> {
    sockets(runtime_dir)
        .into_iter()
        .map(|s| {
            let r = request(&s, req);
            (s, r)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// Class: archgate's own state trusted by its path, its CLI side (attack 14 F6). The CLI
    /// finds control sockets only in a runtime directory of archgate's own, judged when it
    /// looks: once a hop may be written by another user, no socket there is spoken to.
    #[test]
    fn control_sockets_are_found_only_in_a_trusted_runtime_directory() {
        let t = tempfile::tempdir().unwrap();
        std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let rt = t.path().join("rt");
        std::fs::create_dir(&rt).unwrap();
        std::fs::set_permissions(&rt, std::fs::Permissions::from_mode(0o700)).unwrap();
        let _l = std::os::unix::net::UnixListener::bind(rt.join("control.sock")).unwrap();
        assert_eq!(sockets(&rt), vec![rt.join("control.sock")]);
        std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(
            sockets(&rt).is_empty(),
            "a socket in a directory others may swap"
        );
        std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    }
}
