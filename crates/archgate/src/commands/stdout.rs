//! The CLI's output channel, and what happens when its reader goes away. Class: "writing to
//! stdout assumes it stays open" — `println!` panics ("failed printing to stdout: Broken pipe")
//! when a pager or `head` closes the pipe early. A CLI ends quietly on a closed pipe, as ripgrep
//! does: the first write that fails marks stdout closed, nothing more is written, the command
//! finishes what it holds (the audit log is flushed as usual) and a follower (`log --follow`)
//! stops. Any other write error is said once on stderr.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

static CLOSED: AtomicBool = AtomicBool::new(false);

/// Whether stdout's reader went away (or stdout could not be written): nothing more is written,
/// and a command that would go on writing (a follower) should stop.
pub fn stdout_closed() -> bool {
    CLOSED.load(Ordering::Relaxed)
}

/// Prints `s` and a newline to stdout (never used while serving stdio).
pub fn out(s: impl std::fmt::Display) {
    write_out(format_args!("{s}\n"));
}

/// Prints `s` as it is, with no newline added.
pub fn out_raw(s: &str) {
    write_out(format_args!("{s}"));
}

/// Prints bytes as they are (generated completions, the man page).
pub fn out_bytes(b: &[u8]) {
    if stdout_closed() {
        return;
    }
    let mut o = std::io::stdout().lock();
    if let Err(e) = o.write_all(b).and_then(|()| o.flush()) {
        closed(&e);
    }
}

fn write_out(args: std::fmt::Arguments<'_>) {
    if stdout_closed() {
        return;
    }
    let mut o = std::io::stdout().lock();
    if let Err(e) = o.write_fmt(args).and_then(|()| o.flush()) {
        closed(&e);
    }
}

fn closed(e: &std::io::Error) {
    if !CLOSED.swap(true, Ordering::Relaxed) && e.kind() != std::io::ErrorKind::BrokenPipe {
        note(format_args!("archgate: cannot write to stdout: {e}"));
    }
}

/// Writes a line to stderr; a closed stderr is not a reason to stop (or to panic, as `eprintln!`
/// would).
pub fn note(s: impl std::fmt::Display) {
    let _ = writeln!(std::io::stderr().lock(), "{s}");
}
