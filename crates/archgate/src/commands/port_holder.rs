//! Whether archgate's configured port is held by another uid: said loudly by `status` and
//! `doctor` (attack 3 F12). The person's HTTP clients are configured for that port, so whoever
//! listens there receives their bearer token and every call; a bridge no longer moves a daemon
//! off it quietly (`bridge/spawn.rs`), and these commands say who holds it. Class: *another uid
//! answering on archgate's port is taken for archgate* (`adversary/squatter.rs`).

/// The warning for `port` when something of another uid listens on `127.0.0.1:port`; `None`
/// when nothing listens, the person does, or no owner can be named (nothing to say loudly).
pub fn warning(port: u16) -> Option<String> {
    let uid = crate::server::peer::listener_owner(port).ok()?;
    (uid != crate::server::peer::my_uid()).then(|| {
        format!(
            "127.0.0.1:{port}, archgate's configured port, is held by uid {uid}, not you: your HTTP \
             clients configured for it send their token and calls to that process. Stop using \
             them, free the port (find it: ss -ltnp 'sport = :{port}'), or choose another with \
             [server] port and run `archgate client-config` again"
        )
    })
}
