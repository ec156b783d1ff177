//! Whether archgate's configured port is held by another uid: said loudly by `status` and
//! `doctor` (attack 3 F12). The person's HTTP clients are configured for that port, so whoever
//! listens there receives their bearer token and every call; a bridge no longer moves a daemon
//! off it quietly (`bridge/spawn.rs`), and these commands say who holds it. Class: *another uid
//! answering on archgate's port is taken for archgate* (`adversary/squatter.rs`); the approval
//! page's port is the class's second member (`page_warning`).

/// Who listens on `127.0.0.1:port`, as far as the kernel's socket table tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    /// Nothing listens (the probe was refused).
    Nobody,
    /// The person's own process.
    Me,
    /// A process of another uid.
    Other(u32),
    /// Something listens whose owner could not be read, after a few tries: it closed the probe
    /// before the table was asked (as archgate itself closes another uid's connection at once).
    Unnamed,
}

/// Who holds `127.0.0.1:port`. Class: *a failure to name the holder read as the holder's
/// absence* (attack 33 F4: a squatter of another uid that resets every connection at once was
/// "free or yours" 11 times in 20): only a refused probe is "nobody"; a listener whose owner
/// cannot be named after three tries is said as such.
pub fn holder(port: u16) -> Holder {
    use crate::server::peer::{TcpOwnerError, listener_owner, my_uid};
    for _ in 0..3 {
        match listener_owner(port) {
            Ok(uid) if uid == my_uid() => return Holder::Me,
            Ok(uid) => return Holder::Other(uid),
            Err(TcpOwnerError::Table(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                return Holder::Nobody;
            }
            Err(_) => std::thread::sleep(std::time::Duration::from_millis(20)),
        }
    }
    Holder::Unnamed
}

/// Who holds `port` on the IPv6 loopback, as [`holder`] says for `127.0.0.1`.
pub fn holder_v6(port: u16) -> Holder {
    use crate::server::peer::{my_uid, tcp_owner};
    let addr = std::net::SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, port));
    for _ in 0..3 {
        let probe =
            match std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_secs(1)) {
                Ok(p) => p,
                // Refused, or no IPv6 loopback at all: nobody there. Anything else — a probe
                // that timed out against a full accept queue above all — is no one's absence
                // (attack 36 F3: such a listener was "free or yours" while it took a token).
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::ConnectionRefused
                            | std::io::ErrorKind::AddrNotAvailable
                            | std::io::ErrorKind::NetworkUnreachable
                    ) =>
                {
                    return Holder::Nobody;
                }
                Err(_) => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    continue;
                }
            };
        match probe
            .local_addr()
            .ok()
            .and_then(|ours| tcp_owner(ours, addr).ok())
        {
            Some(uid) if uid == my_uid() => return Holder::Me,
            Some(uid) => return Holder::Other(uid),
            None => std::thread::sleep(std::time::Duration::from_millis(20)),
        }
    }
    Holder::Unnamed
}

/// Who holds `port` when it is not free and not the person's — on `127.0.0.1`, or on `[::1]`,
/// where a client configured with `localhost` goes first (attack 35 F2: a stranger that took
/// `[::1]` before the daemon started was said only in the daemon's log): `Some(Some(uid))`, or
/// `Some(None)` when something listens that cannot be named.
pub fn other_holder(port: u16) -> Option<Option<u32>> {
    for h in [holder(port), holder_v6(port)] {
        match h {
            Holder::Nobody | Holder::Me => {}
            Holder::Other(uid) => return Some(Some(uid)),
            Holder::Unnamed => return Some(None),
        }
    }
    None
}

/// Whose process: a uid, or one archgate cannot name.
fn whose(uid: Option<u32>) -> String {
    match uid {
        Some(uid) => format!("uid {uid}, not you"),
        None => {
            "a process archgate cannot name (it closed archgate's look at it at once, as archgate \
                 itself closes another user's connection; yours would have answered)"
                .to_owned()
        }
    }
}

/// The warning for `port` when something of another uid (or of no uid archgate can name)
/// listens on `127.0.0.1:port`.
pub fn warning(port: u16) -> Option<String> {
    other_holder(port).map(|uid| {
        format!(
            "127.0.0.1:{port} (or [::1]:{port}), archgate's port, is held by {}: your HTTP \
             clients configured for it send their token and calls to that process. Stop using \
             them, free the port (find it: ss -ltnp 'sport = :{port}'), or choose another with \
             [server] port and run `archgate client-config` again",
            whose(uid)
        )
    })
}

/// [`warning`] for the configured port, else for the port the running daemon serves when it is
/// another (`serve --port N`; attack 36 F3: only the configured one was looked at).
pub fn warning_for(configured: u16, paths: &archgate_core::paths::Paths) -> Option<String> {
    let served = crate::server::state_file::read(&paths.state_json())
        .filter(crate::server::state_file::BarState::live_daemon)
        .and_then(|s| s.port)
        .filter(|p| *p != configured && *p != 0);
    warning(configured).or_else(|| served.and_then(warning))
}

/// The warning for the approval page's configured port held by another uid (attack 5a F1: the
/// page moved to a free port with an INFO line, and the person's bookmark reached that process,
/// which can look like the page and ask for the login code). `None` for port 0 (any port).
pub fn page_warning(port: u16) -> Option<String> {
    if port == 0 {
        return None;
    }
    other_holder(port).map(|uid| page_text(port, uid))
}

/// What is said when the page's port is held by `uid` (or by no uid archgate can name): by the
/// daemon's log when the page starts elsewhere, and by `status` and `doctor`.
pub fn page_text(port: u16, uid: Option<u32>) -> String {
    format!(
        "127.0.0.1:{port}, archgate's approval page port, is held by {}: a bookmark \
         of the page reaches that process, which may look like the page and ask for your login code. \
         Open the page with `archgate ui` (it goes where the page really is), free the port (find \
         it: ss -ltnp 'sport = :{port}'), or choose another with [approval] page_port",
        whose(uid)
    )
}

/// Who holds `[::1]:port`, in words, as far as the socket table tells.
pub fn v6_holder_text(port: u16) -> String {
    match holder_v6(port) {
        Holder::Me => "a process of yours".to_owned(),
        Holder::Other(uid) => format!("uid {uid}, not you"),
        Holder::Nobody | Holder::Unnamed => "a process archgate cannot name".to_owned(),
    }
}
