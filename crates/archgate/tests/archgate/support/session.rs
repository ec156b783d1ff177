//! A desktop session for a sandbox: a real `dbus-daemon` holding the session bus socket in the
//! sandbox's runtime directory, started with the sandbox's environment (its `XDG_*` base
//! directories). A bridge that starts a daemon reads the base directories of archgate's files
//! from the session — the process serving its socket, as it would read a compositor's — never
//! from its own environment, so the session a test makes must carry the sandbox's directories,
//! as a real session carries the person's.

use std::process::{Child, Command, Stdio};

use super::{Env, wait_for};

/// The session's bus; ended (by its pid) when dropped.
pub struct Session(Child);

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Env {
    /// Starts the sandbox's session bus at `$XDG_RUNTIME_DIR/bus`, with the sandbox's
    /// environment (and `vars` as they are now).
    pub fn session(&self) -> Session {
        let socket = self.path("runtime").join("bus");
        let mut c = Command::new("dbus-daemon");
        self.sandbox(&mut c)
            .args([
                "--session",
                "--nofork",
                "--nopidfile",
                &format!("--address=unix:path={}", socket.display()),
            ])
            .stdout(Stdio::null());
        let child = c
            .spawn()
            .expect("dbus-daemon (scripts/test-deps.sh installs dbus)");
        let s = Session(child);
        wait_for("the session bus", || socket.exists().then_some(()));
        s
    }
}
