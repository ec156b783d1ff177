//! Class: *a privileged command taken from whoever answers on a same-uid socket* (attack 7 F4).
//! The runtime directory is the person's uid's to write — the agent's too: it unlinked
//! archgate's control socket and bound its own, and archgate's hand-off terminal showed and ran
//! the agent's command. The helper now asks the kernel who listens (`SO_PEERCRED`) before it
//! says a word: for the terminal archgate opened, the archgate that opened it; for `archgate
//! handoff ID` in the person's own terminal, at least this very archgate binary.
//!
//! What it tries, against the real binary: a stand-in daemon (another program, python) listens
//! on `control.sock` in archgate's runtime directory; `archgate handoff ID` must send it
//! nothing, run nothing, and say why.

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use crate::support::{Env, text};

#[test]
fn a_stand_in_on_the_control_socket_is_never_told_or_obeyed() {
    let env = Env::new();
    let dir = env.runtime_dir();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let sock = dir.join("control.sock");
    let heard = env.path("scratch/heard");
    // Listens, and writes down whatever a client sends in its first second.
    let mut stand_in = std::process::Command::new("python3")
        .args([
            "-c",
            "import socket,sys\n\
             s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen()\n\
             open(sys.argv[2]+'.ready','w').close()\n\
             c,_=s.accept(); c.settimeout(1.0)\n\
             data=b''\n\
             try:\n    data=c.recv(4096)\nexcept Exception:\n    pass\n\
             open(sys.argv[2],'wb').write(data)\n",
            &sock.display().to_string(),
            &heard.display().to_string(),
        ])
        .spawn()
        .unwrap();
    let ready = heard.with_extension("ready");
    let until = Instant::now() + Duration::from_secs(20);
    while !ready.exists() {
        assert!(Instant::now() < until, "the stand-in never listened");
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = env.run(&["handoff", "0123456789abcdef0123456789abcdef"]);
    let said = text(&out);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("is not this archgate"), "{said}");
    // The stand-in heard nothing: no claim, so no id and no command to hand back.
    let until = Instant::now() + Duration::from_secs(20);
    while !heard.exists() {
        assert!(Instant::now() < until, "the stand-in never ended");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut got = Vec::new();
    std::fs::File::open(&heard)
        .unwrap()
        .read_to_end(&mut got)
        .unwrap();
    assert!(got.is_empty(), "told: {}", String::from_utf8_lossy(&got));
    let _ = stand_in.kill();
    let _ = stand_in.wait();
}
