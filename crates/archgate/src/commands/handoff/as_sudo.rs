//! archgate's asking sudo as a process (`tools/handoff/asking_sudo.rs` says why and when it is
//! used): started by the name `sudo` from an Omarchy route's script in a hand-off's terminal, it
//! says on the terminal what it is asked to run, then becomes root's `sudo -k` with the same
//! arguments and environment, so sudo asks the person's password for it and keeps none —
//! after it checked the exact command (`as_sudo_checks.rs`): sudo asks for this very argv, and
//! a pacman in it reads a configuration root's alone. Otherwise nothing runs as root.

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
    if let Err((what, why)) = exact_checks(&sudo, &shown) {
        // On the terminal for the person, and on stderr for the hand-off's output tail (the
        // agent's answer says why the script failed); sudo's own words on a line of their own,
        // as the tail redacts a line that names a password.
        let mut lines = vec![format!(
            "archgate: refused; nothing ran as root: {}",
            for_terminal(&what)
        )];
        lines.extend(why.map(|w| format!("archgate: sudo said: {}", for_terminal(&w))));
        for line in &lines {
            eprintln!("{line}");
            if !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
                say(line);
            }
        }
        return ExitCode::from(1);
    }
    let argv = asking_sudo::command(&sudo, &args);
    let err = archgate_core::exec::become_for_person(&sudo, &argv[1..]);
    eprintln!("archgate (sudo for a hand-off): {}: {err}", sudo.display());
    ExitCode::from(1)
}

/// The checks of `as_sudo_checks.rs` on the command as the script gave it; what refuses it,
/// and sudo's own words when they are the reason.
fn exact_checks(sudo: &std::path::Path, args: &[String]) -> Result<(), (String, Option<String>)> {
    use super::as_sudo_checks::{pacman_reads_roots_alone, split, sudo_asks_for};
    use crate::tools::handoff::sudo::Asks;
    let call = split(args).map_err(|e| (e, None))?;
    pacman_reads_roots_alone(&call.command).map_err(|e| (e, None))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| (format!("sudo could not be asked: {e}"), None))?;
    match rt.block_on(sudo_asks_for(sudo, &call)) {
        Asks::Yes => Ok(()),
        Asks::No(why) => Err((
            "sudo would run this very command without asking you; a keystroke alone is not you"
                .into(),
            Some(why),
        )),
        Asks::Unknown(why) => Err((
            "could not tell whether sudo will ask you for this very command".into(),
            Some(why),
        )),
    }
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
