//! `archgate handoff-run ID` (hidden: the terminal a hand-off opens runs it) and `archgate
//! handoff ID` (the person, in their own terminal): the helper that runs a hand-off's command at
//! the person's keystroke.
//!
//! It takes the prepared command from the running archgate over the control socket (never from
//! its own arguments or environment, which an agent could shape: the id only names which),
//! shows it escaped, refuses when `sudo` would not ask the person's password for this very
//! command (an exact probe, `tools/handoff/sudo.rs`) or sudo or the program is not root's
//! (`tools/handoff/pinned.rs`) or pacman's lock is held, waits for Enter in this terminal (Escape,
//! `q`, Ctrl-C, Ctrl-D or closing it cancels; what was typed before the prompt is discarded),
//! then runs the argv — no shell, the program pinned when it was shown, the allowlisted
//! environment — and reports how it ended on the same connection. The terminal stays until the
//! person closes it.

use anyhow::Context;
use archgate_core::exec::{CommandSpec, ExecConfig, Executor};
use archgate_core::text::for_terminal;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::ExitCode;

use super::{out, out_raw};

pub mod as_sudo;
mod as_sudo_checks;
mod checks;
mod ended;
mod limits;
mod route_rebuilt;
mod sudo_asks;

use crate::tools::handoff::registry::{Outcome, Prepared, RouteScript};
use crate::tools::handoff::sudo::Asks;
use crate::tools::handoff::{asking_sudo, pinned};
use checks::{
    another_hand_off_open, files_still_roots, files_unchanged, rebuilt, still_as_shown, with_facts,
    with_route_facts, with_transaction,
};
use sudo_asks::{forget_sudo, script_dir_of, sudo_program, will_sudo_ask, will_sudo_ask_for_any};

/// The output's tail kept for the agent.
pub const TAIL_BYTES: usize = 4096;

/// Runs hand-off `id`; `channel` says where the person confirms (`terminal`, `own_terminal`).
pub async fn run(config: Option<PathBuf>, id: &str, channel: &str) -> anyhow::Result<ExitCode> {
    let (cfg, paths) = crate::app::config_and_paths(config)?;
    let dir = paths.runtime_dir;
    // The executor the server judged the command with (its search directories: Omarchy's bin/).
    let exec_config = cfg.executor_config();
    let mut found = None;
    let mut why = Vec::new();
    for sock in crate::channels::control::sockets(&dir) {
        match claim(&sock, id, channel) {
            Ok(c) => {
                found = Some(c);
                break;
            }
            Err(e) => why.push(e.to_string()),
        }
    }
    let Some((mut conn, prepared)) = found else {
        out(format!(
            "archgate: no hand-off {} is waiting here ({}).",
            for_terminal(id),
            for_terminal(&why.join("; "))
        ));
        linger(channel);
        return Ok(ExitCode::from(1));
    };
    // The command is the helper's own, built from the operation and its values (attack 8 F1,
    // F2), or judged from root's files for a route's script (attack 9 F1): the archgate process
    // on the other end may be one the agent started or preloaded.
    let prepared = {
        let own = if prepared.script.is_none() {
            match rebuilt(&prepared, &cfg.arch.pacman_conf) {
                Ok(p) => with_transaction(p, &cfg.arch.pacman_conf).await,
                Err(e) => Err(e),
            }
        } else {
            // The file the script's pacman reads, never archgate's setting (attack 13 F2); a
            // script's own `--config` is judged by the asking sudo on the exact line.
            route_rebuilt::rebuilt_route(
                &prepared,
                std::path::Path::new(crate::tools::handoff::pacman_reads::DEFAULT_CONF),
            )
        };
        match own {
            Ok(p) => p,
            Err(why) => return Ok(refused_before_showing(&mut conn, channel, why)),
        }
    };
    // One terminal asking for a password at a time, whichever archgate opened it.
    if let Some(pid) = another_hand_off_open() {
        let why = format!(
            "another hand-off's terminal is open (pid {pid}); one at a time, so that your password \
             goes only to the command you mean — close that one first"
        );
        return Ok(refused_before_showing(&mut conn, channel, why));
    }
    // Limits the command would inherit through sudo, made whole or refused (limits.rs).
    if let Err(why) = limits::made_whole() {
        return Ok(refused_before_showing(&mut conn, channel, why));
    }
    out_raw(&render(&prepared));
    let confirmed = match &prepared.script {
        Some(script) => confirm_script(&prepared, script, &exec_config),
        // Root's programs in root's directories, verified under the rule that pinned them.
        None => prepare_and_confirm(&prepared, &cfg.arch.pacman_conf)
            .map(|spec| (spec, pinned::executor().config().clone())),
    };
    // Again after the Enter, just before the run: another process of the person's may have
    // lowered them while the question stood.
    let confirmed = confirmed.and_then(|c| {
        limits::made_whole()
            .map(|()| c)
            .map_err(|why| Outcome::Refused { why })
    });
    let code = match confirmed {
        Err(outcome) => {
            let what = match &outcome {
                Outcome::Cancelled { .. } => "Cancelled; nothing ran.".to_owned(),
                Outcome::Refused { why } | Outcome::Failed { why } => {
                    format!("Refused; nothing ran: {}", for_terminal(why))
                }
                _ => String::new(),
            };
            out(format!("\n{what}"));
            let _ = step(&mut conn, &json!({"op": "done", "outcome": outcome}));
            ExitCode::from(1)
        }
        Ok((spec, exec_config)) => {
            match step(&mut conn, &json!({"op": "started"})) {
                Ok(r) if r["ok"] == true => {}
                other => {
                    out(format!(
                        "\narchgate withdrew this hand-off; nothing ran ({}).",
                        for_terminal(&format!("{other:?}"))
                    ));
                    linger(channel);
                    return Ok(ExitCode::from(1));
                }
            }
            out("");
            let script = prepared.script.is_some();
            if script {
                // A credential this terminal holds from before (the person's own terminal, with
                // `archgate handoff ID`) is dropped: the script's hooks could call root's sudo by
                // its path and find it.
                forget_sudo().await;
            }
            let ran =
                archgate_core::exec::run_for_person_in_terminal(exec_config, spec, TAIL_BYTES * 4)
                    .await;
            if script {
                // None left behind for the terminal that stays open (the asking sudo keeps none;
                // a credential of the person's own from before is dropped too).
                forget_sudo().await;
            }
            let outcome = match ran {
                Ok(r) => Outcome::Ran {
                    exit_code: r.status.code,
                    signal: r.status.signal,
                    duration_ms: u64::try_from(r.duration.as_millis()).unwrap_or(u64::MAX),
                    tail: redact_tail(&r.tail, TAIL_BYTES),
                },
                Err(e) => Outcome::Failed { why: e.to_string() },
            };
            let code = match &outcome {
                Outcome::Ran {
                    exit_code: Some(0),
                    duration_ms,
                    ..
                } => {
                    out(format!(
                        "\narchgate: done (exit status 0, {} s).",
                        duration_ms / 1000
                    ));
                    ExitCode::SUCCESS
                }
                Outcome::Ran {
                    exit_code, signal, ..
                } => {
                    let pacman = prepared.argv.iter().any(|a| a.ends_with("/pacman"))
                        || prepared.script.is_some();
                    out(format!(
                        "\narchgate: {}",
                        ended::failed(*exit_code, *signal, pacman)
                    ));
                    ExitCode::from(1)
                }
                o => {
                    out(format!(
                        "\narchgate: it did not start: {}",
                        for_terminal(&format!("{o:?}"))
                    ));
                    ExitCode::from(1)
                }
            };
            let _ = step(&mut conn, &json!({"op": "done", "outcome": outcome}));
            code
        }
    };
    drop(conn);
    linger(channel);
    Ok(code)
}

/// A hand-off refused before its command was shown: said in the terminal, told to the archgate
/// that opened it, and the terminal left for the person to read.
fn refused_before_showing(conn: &mut UnixStream, channel: &str, why: String) -> ExitCode {
    out(format!(
        "archgate: this hand-off is refused; nothing ran: {}",
        for_terminal(&why)
    ));
    let _ = step(
        conn,
        &json!({"op": "done", "outcome": Outcome::Refused { why }}),
    );
    linger(channel);
    ExitCode::from(1)
}

/// Claims the hand-off on one control socket: the connection and what it holds.
fn claim(
    sock: &std::path::Path,
    id: &str,
    channel: &str,
) -> anyhow::Result<(UnixStream, Prepared)> {
    let mut s = UnixStream::connect(sock).with_context(|| format!("{}", sock.display()))?;
    daemon_is_ours(&s, channel)?;
    let r = step(
        &mut s,
        &json!({"op": "handoff_claim", "id": id, "channel": channel}),
    )?;
    if r["ok"] != true {
        anyhow::bail!("{}", r["reason"].as_str().unwrap_or("refused"));
    }
    let p: Prepared = serde_json::from_value(r["handoff"].clone())?;
    Ok((s, p))
}

/// Whether the process serving this control socket may hand this helper its command (attack 7
/// F4; class: *a privileged command taken from whoever answers on a same-uid socket* — the
/// runtime directory is the agent's to write, so it can unlink archgate's socket and bind its
/// own). The kernel names the listener (`SO_PEERCRED`: the process that bound it): for the
/// terminal archgate opened, it must be this helper's ancestor — the archgate process that
/// spawned the terminal; for `archgate handoff ID` in the person's own terminal, where no
/// ancestry binds them, it must at least run this very archgate binary (and the answer says
/// archgate did not see who answered).
fn daemon_is_ours(s: &UnixStream, channel: &str) -> anyhow::Result<()> {
    let cred = nix::sys::socket::getsockopt(s, nix::sys::socket::sockopt::PeerCredentials)
        .context("the control socket's process")?;
    let pid = u32::try_from(cred.pid()).unwrap_or(0);
    if channel == "terminal" {
        if pid != 0 && archgate_core::exec::process_tree::descends_from(std::process::id(), pid) {
            return Ok(());
        }
        anyhow::bail!(
            "the process on this control socket (pid {pid}) did not open this terminal; its command is not taken"
        );
    }
    let exe = |p: &str| std::fs::read_link(format!("/proc/{p}/exe")).ok();
    match (exe(&pid.to_string()), exe("self")) {
        (Some(theirs), Some(ours)) if theirs == ours => Ok(()),
        _ => anyhow::bail!(
            "the process on this control socket (pid {pid}) is not this archgate; its command is not taken"
        ),
    }
}

/// Sends one line and reads the one-line answer.
fn step(s: &mut UnixStream, v: &Value) -> anyhow::Result<Value> {
    s.write_all(format!("{v}\n").as_bytes())?;
    let mut line = String::new();
    BufReader::new(Read::take(&mut *s, 64 * 1024)).read_line(&mut line)?;
    Ok(serde_json::from_str(&line)?)
}

/// What the person reads: every word the agent wrote, and the command, escaped.
pub fn render(p: &Prepared) -> String {
    let cmd = crate::tools::handoff::display(&p.argv);
    format!(
        "archgate hand-off {id}\n\n\
         An agent ({client}) asks you to run a privileged command.\n\
         Why, in the agent's words: {reason}\n\
         What it changes: {changes}\n\n\
         The command (it runs exactly as shown, without a shell):\n\n    {cmd}\n\n",
        id = for_terminal(&p.id),
        client = for_terminal(&p.client),
        reason = for_terminal(&p.reason),
        changes = for_terminal(&p.changes),
        cmd = for_terminal(&cmd),
    )
}

/// The checks before the question, then the question, then the checks again: the pinned command,
/// or how it ended.
fn prepare_and_confirm(
    p: &Prepared,
    pacman_conf: &std::path::Path,
) -> Result<CommandSpec, Outcome> {
    let refused = |why: String| Outcome::Refused { why };
    let [first, rest @ ..] = p.argv.as_slice() else {
        return Err(refused("an empty command".into()));
    };
    if !first.ends_with("/sudo") || rest.first().map(String::as_str) != Some("-k") {
        return Err(refused(
            "not a hand-off command (it must start `/usr/bin/sudo -k`)".into(),
        ));
    }
    // sudo and the program it runs: root's alone, by the absolute paths shown (F1).
    let program = rest.get(2).cloned().unwrap_or_default();
    for shown in [first, &program] {
        match pinned::program(shown) {
            Ok(p) if p.to_string_lossy() == shown.as_str() => {}
            Ok(p) => {
                return Err(refused(format!(
                    "{shown} is not the program archgate would run ({})",
                    p.display()
                )));
            }
            Err(e) => return Err(refused(format!("not run as root: {e}"))),
        }
    }
    let spec = pinned::executor()
        .pin(with_facts(
            CommandSpec::new(first.clone()).args(rest.iter().cloned()),
        ))
        .map_err(|e| refused(format!("sudo cannot be used: {e}")))?;
    match will_sudo_ask(&p.argv) {
        Asks::Yes => {}
        Asks::No(why) => {
            return Err(refused(format!(
                "sudo would not ask your password here ({why}); a keystroke alone is not you, so archgate \
                 does not hand off where sudo does not ask. Run the command yourself if you want it"
            )));
        }
        Asks::Unknown(why) => {
            return Err(refused(format!(
                "could not tell whether sudo will ask your password (sudo said: {why})"
            )));
        }
    }
    if let Some(lock) = &p.lock
        && lock.exists()
    {
        return Err(refused(format!(
            "pacman's lock {} is held: another pacman is running (if none is, it was killed; remove the lock only then)",
            lock.display()
        )));
    }
    out("Press Enter to run it; sudo will ask for your password. Escape cancels.");
    match wait_for_enter() {
        Key::Enter => {
            one_at_a_time().map_err(refused)?;
            files_still_roots(&program, rest).map_err(refused)?;
            // Everything the command reads judged again as before the question — pacman's
            // configuration, a local repository's files, a `-U` file — since the question can
            // wait minutes (attack 29 F8: the agent rewrote a person-owned package file then).
            still_as_shown(p, pacman_conf).map_err(refused)?;
            Ok(spec)
        }
        Key::Cancel(why) => Err(Outcome::Cancelled { why }),
        Key::NoTerminal(why) => Err(refused(why)),
    }
}

/// The checks and the question for an Omarchy route's script (`tools/handoff/route.rs`): it is
/// still the file shown (pinned by content, found as the server found it), the files its
/// arguments name are unchanged, and sudo asks for every command (the script may run any).
/// The pinned script with the route's session variables, and the executor to run it under.
fn confirm_script(
    p: &Prepared,
    script: &RouteScript,
    config: &ExecConfig,
) -> Result<(CommandSpec, ExecConfig), Outcome> {
    let refused = |why: String| Outcome::Refused { why };
    let [first, rest @ ..] = p.argv.as_slice() else {
        return Err(refused("an empty command".into()));
    };
    if !first.starts_with('/') {
        return Err(refused("the script is not named by its path".into()));
    }
    let sudo_path =
        pinned::program("sudo").map_err(|e| refused(format!("sudo cannot be used: {e}")))?;
    // The script calls `sudo` (and Omarchy's other scripts) by name: its search path is
    // archgate's asking sudo, then its own directory and root's, all of them root's alone — never
    // a directory of the person's from `[exec] search_dirs`, where a `sudo` of the agent's would
    // take the password (F1's class). The asking sudo first: each sudo asks and keeps nothing
    // for the hooks and configuration the script runs after it (attack 8 F3, F4).
    let asking = asking_sudo::installed().map_err(refused)?;
    let script_dir = std::path::Path::new(first)
        .parent()
        .map(std::path::Path::to_path_buf)
        .ok_or_else(|| refused("the script has no directory".into()))?;
    let config = &ExecConfig {
        search_dirs: [asking, script_dir]
            .into_iter()
            .chain(pinned::DIRS.iter().map(std::path::PathBuf::from))
            .collect(),
        require_root_owned: true,
        person_uid: None,
        ..config.clone()
    };
    let exec = Executor::new(config.clone());
    let mut spec = exec
        .pin(with_route_facts(
            CommandSpec::new(first.clone()).args(rest.iter().cloned()),
        ))
        .map_err(|e| refused(format!("the script cannot be run: {e}")))?;
    if spec.pinned().map(|p| p.sha256()) != Some(script.sha256.clone()) {
        return Err(refused(format!(
            "{first} changed since it was shown; run the route again to see what it is now"
        )));
    }
    for (k, v) in &script.env {
        spec = spec.env(k, v);
    }
    files_unchanged(script).map_err(refused)?;
    // The programs the script gives sudo, as sudo runs them: a NOPASSWD entry for another
    // command leaves them asking; one the script names through a variable makes any NOPASSWD
    // entry refuse.
    let named: Option<Vec<String>> = script
        .sudo_programs
        .iter()
        .map(|n| sudo_program(n, &script_dir_of(first)).map(|p| p.to_string_lossy().into_owned()))
        .collect();
    match will_sudo_ask_for_any(&sudo_path, named.as_deref()) {
        Asks::Yes => {}
        Asks::No(why) => {
            return Err(refused(format!(
                "sudo would not ask your password for every command here ({why}); the script may run any, \
                 and a keystroke alone is not you, so archgate does not hand it off. Run it yourself if you want it"
            )));
        }
        Asks::Unknown(why) => {
            return Err(refused(format!(
                "could not tell whether sudo will ask your password (sudo said: {why})"
            )));
        }
    }
    // The listing misses a command's own `Defaults!CMD !authenticate`: sudo is asked about each
    // program the script gives it (attack 7 F6).
    for name in &script.sudo_programs {
        let Some(program) = sudo_program(name, &script_dir_of(first)) else {
            continue;
        };
        let argv = [
            sudo_path.to_string_lossy().into_owned(),
            "-k".into(),
            "--".into(),
            program.to_string_lossy().into_owned(),
        ];
        match will_sudo_ask(&argv) {
            Asks::Yes => {}
            Asks::No(why) => {
                return Err(refused(format!(
                    "sudo would not ask your password for {} ({why}), which the script runs with sudo; \
                     a keystroke alone is not you, so archgate does not hand it off. Run it yourself if you want it",
                    program.display()
                )));
            }
            Asks::Unknown(why) => {
                return Err(refused(format!(
                    "could not tell whether sudo will ask your password for {} (sudo said: {why})",
                    program.display()
                )));
            }
        }
    }
    out(
        "Press Enter to run it. Escape cancels. Each sudo inside the script says what it runs and \
         asks for your password; type it only for what you expect.",
    );
    match wait_for_enter() {
        Key::Enter => {}
        Key::Cancel(why) => return Err(Outcome::Cancelled { why }),
        Key::NoTerminal(why) => return Err(refused(why)),
    }
    one_at_a_time().map_err(refused)?;
    files_unchanged(script).map_err(refused)?;
    Ok((spec, config.clone()))
}

/// Still the only hand-off open, after the Enter (one opened while this one waited).
fn one_at_a_time() -> Result<(), String> {
    match another_hand_off_open() {
        Some(pid) => Err(format!(
            "another hand-off's terminal opened while this one waited (pid {pid}); one at a time, \
             so that your password goes only to the command you mean"
        )),
        None => Ok(()),
    }
}

enum Key {
    Enter,
    Cancel(String),
    NoTerminal(String),
}

/// One key in raw mode: Enter runs; Escape, `q`, `n`, Ctrl-C, Ctrl-D cancel; end of input (the
/// terminal closed) cancels. Input typed before the prompt is discarded first.
fn wait_for_enter() -> Key {
    use nix::sys::termios::{self, FlushArg, SetArg};
    let stdin = std::io::stdin();
    let Ok(saved) = termios::tcgetattr(&stdin) else {
        return Key::NoTerminal(
            "the helper's input is not a terminal; run `archgate handoff ID` in one".into(),
        );
    };
    let mut raw = saved.clone();
    termios::cfmakeraw(&mut raw);
    // Output keeps its newline translation so what is printed meanwhile stays readable.
    raw.output_flags = saved.output_flags;
    let _ = termios::tcflush(&stdin, FlushArg::TCIFLUSH);
    if termios::tcsetattr(&stdin, SetArg::TCSANOW, &raw).is_err() {
        return Key::NoTerminal("the terminal cannot be read key by key".into());
    }
    let mut b = [0u8; 1];
    let key = loop {
        match stdin.lock().read(&mut b) {
            Ok(0) | Err(_) => break Key::Cancel("the terminal closed before Enter".into()),
            Ok(_) => match b[0] {
                b'\r' | b'\n' => break Key::Enter,
                0x1b | 3 | 4 | b'q' | b'n' => break Key::Cancel("the person cancelled".into()),
                _ => continue,
            },
        }
    };
    let _ = termios::tcsetattr(&stdin, SetArg::TCSANOW, &saved);
    key
}

/// The output's last `max` bytes for the agent: control characters but newlines and tabs
/// dropped, and any line that names a password, token, secret or key redacted.
pub fn redact_tail(tail: &[u8], max: usize) -> String {
    let text = String::from_utf8_lossy(tail);
    let mut lines: Vec<String> = Vec::new();
    for line in text.split('\n') {
        let clean: String = line
            .chars()
            .filter(|c| *c == '\t' || !c.is_control())
            .collect();
        let lower = clean.to_lowercase();
        let secret = [
            "password",
            "passwd",
            "token",
            "secret",
            "api_key",
            "apikey",
            "authorization",
            "private key",
        ]
        .iter()
        .any(|w| lower.contains(w));
        lines.push(if secret {
            "[line redacted: it may hold a secret]".into()
        } else {
            clean
        });
    }
    let joined = lines.join("\n");
    let start = joined.len().saturating_sub(max);
    let start = (start..=joined.len())
        .find(|i| joined.is_char_boundary(*i))
        .unwrap_or(joined.len());
    joined[start..].to_owned()
}

/// The terminal archgate opened stays until the person closes it (or presses Enter).
fn linger(channel: &str) {
    if channel != "terminal" {
        return;
    }
    out("\nPress Enter or close this terminal.");
    let mut b = [0u8; 1];
    let _ = std::io::stdin().lock().read(&mut b);
}

#[cfg(test)]
mod tests;
