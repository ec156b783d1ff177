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
        // A session bus that starts nothing on its own: no service directories, so a name asked
        // for (a notification daemon, systemd) is never activated from the machine's files.
        let conf = self.path("scratch/session-bus.conf");
        std::fs::write(
            &conf,
            format!(
                "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\" \
                 \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n\
                 <busconfig><type>session</type><listen>unix:path={}</listen><auth>EXTERNAL</auth>\
                 <policy context=\"default\"><allow send_destination=\"*\" eavesdrop=\"true\"/>\
                 <allow eavesdrop=\"true\"/><allow own=\"*\"/></policy></busconfig>\n",
                socket.display()
            ),
        )
        .unwrap();
        let mut c = Command::new("dbus-daemon");
        self.sandbox(&mut c)
            .args([
                &format!("--config-file={}", conf.display()),
                "--nofork",
                "--nopidfile",
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
