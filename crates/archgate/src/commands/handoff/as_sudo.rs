//! archgate's asking sudo as a process (`tools/handoff/asking_sudo.rs` says why and when it is
//! used): started by the name `sudo` from an Omarchy route's script in a hand-off's terminal, it
//! says on the terminal what it is asked to run, then becomes root's `sudo -k` with the same
//! arguments and environment, so sudo asks the person's password for it and keeps none.

use std::ffi::OsString;
use std::process::ExitCode;

use crate::tools::handoff::{asking_sudo, display, pinned};
use archgate_core::text::for_terminal;

/// Runs as the asking sudo (see the module documentation). Returns only when it could not
/// become sudo.
pub fn run() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let sudo = match pinned::program("sudo") {
        Ok(s) => s,
        Err(e) => {
            eprintln!("archgate (sudo for a hand-off): {}", for_terminal(&e));
            return ExitCode::from(1);
        }
    };
    let shown: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    say(&format!(
        "archgate: sudo is asked to run, as root: {}",
        for_terminal(&display(&shown))
    ));
    let argv = asking_sudo::command(&sudo, &args);
    let err = archgate_core::exec::become_for_person(&sudo, &argv[1..]);
    eprintln!("archgate (sudo for a hand-off): {}: {err}", sudo.display());
    ExitCode::from(1)
}

/// On the terminal itself (`/dev/tty`, where sudo asks), not on stderr, which a script may
/// discard (`sudo pacman -Rns … 2>/dev/null`: attack 11 F5 — the person saw a bare password
/// prompt); stderr only where there is no terminal.
fn say(line: &str) {
    use std::io::Write;
    match std::fs::OpenOptions::new().write(true).open("/dev/tty") {
        Ok(mut tty) => {
            let _ = writeln!(tty, "{line}");
        }
        Err(_) => eprintln!("{line}"),
    }
}
