//! Whether archgate's configured port is held by another uid: said loudly by `status` and
//! `doctor` (attack 3 F12). The person's HTTP clients are configured for that port, so whoever
//! listens there receives their bearer token and every call; a bridge no longer moves a daemon
//! off it quietly (`bridge/spawn.rs`), and these commands say who holds it. Class: *another uid
//! answering on archgate's port is taken for archgate* (`adversary/squatter.rs`); the approval
//! page's port is the class's second member (`page_warning`).

/// The uid of what listens on `127.0.0.1:port` when it is not the person; `None` when nothing
/// listens, the person does, or no owner can be named (nothing to say loudly).
pub fn other_holder(port: u16) -> Option<u32> {
    let uid = crate::server::peer::listener_owner(port).ok()?;
    (uid != crate::server::peer::my_uid()).then_some(uid)
}

/// The warning for `port` when something of another uid listens on `127.0.0.1:port`.
pub fn warning(port: u16) -> Option<String> {
    other_holder(port).map(|uid| {
        format!(
            "127.0.0.1:{port}, archgate's configured port, is held by uid {uid}, not you: your HTTP \
             clients configured for it send their token and calls to that process. Stop using \
             them, free the port (find it: ss -ltnp 'sport = :{port}'), or choose another with \
             [server] port and run `archgate client-config` again"
        )
    })
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

/// What is said when the page's port is held by `uid`: by the daemon's log when the page starts
/// elsewhere, and by `status` and `doctor`.
pub fn page_text(port: u16, uid: u32) -> String {
    format!(
        "127.0.0.1:{port}, archgate's approval page port, is held by uid {uid}, not you: a bookmark \
         of the page reaches that process, which may look like the page and ask for your login code. \
         Open the page with `archgate ui` (it goes where the page really is), free the port (find \
         it: ss -ltnp 'sport = :{port}'), or choose another with [approval] page_port"
    )
}
