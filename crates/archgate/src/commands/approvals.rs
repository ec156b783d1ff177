//! The person's approval commands over the control socket: `archgate approvals`, `approve`,
//! `deny`, `dev-mode`, `rules`, and `ui` (opens the approval page with a one-time login link).
//!
//! Each stdio client runs its own archgate, so these commands speak to every live instance:
//! listing gathers all of them, an answer goes to the one holding that id, developer mode is
//! switched in all of them.

use archgate_core::paths::Paths;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::out;
use crate::channels::control::{self, Request};
use crate::cli::{DevModeAction, RulesAction};
use crate::person::actions::{Choice, parse_duration};
use archgate_core::text::{for_terminal, json_for_terminal};

/// Where the running archgate keeps its sockets: from the config it runs on (the last good
/// copy while the file is missing or not applied, `config::in_force`), never from defaults.
fn runtime_dir(config: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    Ok(paths(config)?.runtime_dir)
}

fn paths(config: Option<PathBuf>) -> anyhow::Result<Paths> {
    Ok(crate::app::config_and_paths(config)?.1)
}

pub(super) const NONE_RUNNING: &str =
    "no running archgate found (nothing can be waiting for approval)";

fn reason(v: &Value) -> String {
    format!(
        "{}: {}",
        v["error"].as_str().unwrap_or("error"),
        v["reason"].as_str().unwrap_or("")
    )
}

fn ok(v: &Value) -> bool {
    v["ok"] == true
}

/// The questions waiting in every live instance (each with `seconds_left` and `pid`), and how
/// many instances answered.
pub(super) fn gather(config: Option<PathBuf>) -> anyhow::Result<(usize, Vec<Value>)> {
    let dir = runtime_dir(config)?;
    let mut all: Vec<Value> = Vec::new();
    let mut reached = 0;
    for (sock, reply) in control::request_all(&dir, &Request::Pending) {
        match reply {
            Ok(v) if ok(&v) => {
                reached += 1;
                let now = v["now"].as_u64().unwrap_or(0);
                for mut q in v["pending"].as_array().cloned().unwrap_or_default() {
                    let left = q["deadline"].as_u64().unwrap_or(0).saturating_sub(now);
                    q["seconds_left"] = left.into();
                    q["pid"] = v["pid"].clone();
                    all.push(q);
                }
            }
            Ok(v) => tracing::warn!(socket = %sock.display(), "{}", for_terminal(&reason(&v))),
            Err(e) => tracing::debug!(socket = %sock.display(), "not reachable: {e}"),
        }
    }
    Ok((reached, all))
}

pub(super) const NOTHING_WAITING: &str = "nothing is waiting for your approval";

/// Every string an agent wrote is shown through `for_terminal`: a route or a command cannot move
/// the cursor, draw a row or reorder what the person reads.
pub fn list(config: Option<PathBuf>, json: bool) -> anyhow::Result<ExitCode> {
    let (reached, all) = gather(config)?;
    if json {
        out(json_for_terminal(&serde_json::to_string_pretty(&all)?));
        return Ok(ExitCode::SUCCESS);
    }
    if reached == 0 {
        out(NONE_RUNNING);
        return Ok(ExitCode::SUCCESS);
    }
    if all.is_empty() {
        out(NOTHING_WAITING);
        return Ok(ExitCode::SUCCESS);
    }
    let lines = table(&all);
    out(lines[0].clone());
    for (q, row) in all.iter().zip(&lines[1..]) {
        out(row.clone());
        for line in super::show::detail_lines(q, "    ") {
            out(line);
        }
    }
    out(
        "\napprove: archgate approve ID [--always]   deny: archgate deny ID   all of one: archgate show ID\n(ID may be a unique prefix; with one call waiting, `archgate approve` asks here)",
    );
    Ok(ExitCode::SUCCESS)
}

/// The waiting calls as a table whose columns are as wide as their widest cell (ids are
/// longer than a fixed column; a row never shifts the ones below).
/// The header and one row per question, each column as wide as its widest cell. Every cell is
/// escaped for the terminal first, so the widths are those of what is shown.
fn table(all: &[Value]) -> Vec<String> {
    const HEAD: [&str; 5] = ["ID", "TOOL", "TIER", "CLIENT", "LEFT"];
    let text = |q: &Value, k: &str| for_terminal(q[k].as_str().unwrap_or("")).into_owned();
    let rows: Vec<[String; 6]> = all
        .iter()
        .map(|q| {
            [
                text(q, "id"),
                text(q, "tool"),
                text(q, "tier"),
                text(q, "client"),
                crate::person::clock::left(q["seconds_left"].as_u64().unwrap_or(0)),
                text(q, "summary"),
            ]
        })
        .collect();
    let width = |i: usize| {
        rows.iter()
            .map(|r| r[i].chars().count())
            .chain([HEAD[i].len()])
            .max()
            .unwrap_or(0)
    };
    let w: [usize; 5] = std::array::from_fn(width);
    let line = |c: [&str; 6]| {
        format!(
            "{:<w0$}  {:<w1$}  {:<w2$}  {:<w3$}  {:>w4$}  {}",
            c[0],
            c[1],
            c[2],
            c[3],
            c[4],
            c[5],
            w0 = w[0],
            w1 = w[1],
            w2 = w[2],
            w3 = w[3],
            w4 = w[4],
        )
    };
    let mut lines = vec![line([
        HEAD[0], HEAD[1], HEAD[2], HEAD[3], HEAD[4], "COMMAND",
    ])];
    for r in &rows {
        lines.push(line(std::array::from_fn(|i| r[i].as_str())));
    }
    lines
}

pub fn answer(
    config: Option<PathBuf>,
    id: &str,
    always: bool,
    deny: bool,
) -> anyhow::Result<ExitCode> {
    let dir = runtime_dir(config)?;
    let choice = match (deny, always) {
        (true, _) => Choice::Deny,
        (false, true) => Choice::AllowAlways,
        (false, false) => Choice::Allow,
    };
    let req = Request::Answer {
        id: id.to_owned(),
        answer: choice,
    };
    let sockets = control::sockets(&dir);
    if sockets.is_empty() {
        out(NONE_RUNNING);
        return Ok(ExitCode::from(1));
    }
    if choice != Choice::Deny {
        super::note(format_args!(
            "approving {id}: if your polkit agent asks for your password now, it is for this approval"
        ));
    }
    for sock in sockets {
        let v = match control::request(&sock, &req) {
            Ok(v) => v,
            Err(e) => {
                tracing::debug!(socket = %sock.display(), "not reachable: {e}");
                continue;
            }
        };
        if ok(&v) {
            let what = match choice {
                Choice::Allow => "approved",
                Choice::AllowAlways => "approved, with a standing rule for identical calls,",
                Choice::Deny => "denied",
            };
            out(format!("{what} {id}"));
            return Ok(ExitCode::SUCCESS);
        }
        let presence = v["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("presence_"));
        if v["error"] == "too_late" || v["error"] == "refused" || presence {
            out(reason(&v));
            return Ok(ExitCode::from(1));
        }
    }
    out(format!(
        "no pending approval {id}: it was already decided, withdrawn, or never existed (see `archgate approvals`)"
    ));
    Ok(ExitCode::from(1))
}

pub fn dev_mode(config: Option<PathBuf>, action: DevModeAction) -> anyhow::Result<ExitCode> {
    let dir = runtime_dir(config)?;
    let req = match &action {
        DevModeAction::On { duration } => {
            let Some(secs) = parse_duration(duration) else {
                out(format!(
                    "{duration:?} is not a duration; use e.g. 30m, 2h, 1h30m"
                ));
                return Ok(ExitCode::from(2));
            };
            if secs > archgate_core::person::DEV_MODE_MAX_SECS {
                out("developer mode lasts at most 8 hours");
                return Ok(ExitCode::from(2));
            }
            super::note(format_args!(
                "developer mode on: if your polkit agent asks for your password, it is for this (once per running archgate)"
            ));
            Request::DevModeOn { secs }
        }
        DevModeAction::Off => Request::DevModeOff,
        DevModeAction::Status => Request::DevModeStatus,
    };
    let replies = control::request_all(&dir, &req);
    let mut reached = 0;
    let mut until: Option<u64> = None;
    for (sock, reply) in replies {
        match reply {
            Ok(v) if ok(&v) => {
                reached += 1;
                if let Some(u) = v["developer_mode"]["until"].as_u64() {
                    until = Some(until.map_or(u, |x| x.max(u)));
                }
            }
            Ok(v) => {
                out(reason(&v));
                return Ok(ExitCode::from(1));
            }
            Err(e) => tracing::debug!(socket = %sock.display(), "not reachable: {e}"),
        }
    }
    if reached == 0 {
        out("no running archgate found; developer mode is off at every start");
        return Ok(ExitCode::from(match action {
            DevModeAction::Status | DevModeAction::Off => 0,
            DevModeAction::On { .. } => 1,
        }));
    }
    let now = archgate_core::person::now_secs();
    match until {
        Some(u) => out(format!(
            "developer mode is ON in {reached} running archgate(s) for {} more minutes: every call except destructive and blocked ones is approved and audited",
            u.saturating_sub(now).div_ceil(60)
        )),
        None => out(format!(
            "developer mode is off in {reached} running archgate(s)"
        )),
    }
    Ok(ExitCode::SUCCESS)
}

pub fn rules(config: Option<PathBuf>, action: RulesAction) -> anyhow::Result<ExitCode> {
    let paths = paths(config)?;
    let req = match &action {
        RulesAction::List { .. } => Request::Rules,
        RulesAction::Revoke { id } => Request::Revoke { id: id.clone() },
        RulesAction::RevokeAll => Request::RevokeAll,
        RulesAction::AfterUntrusted { .. } => {
            anyhow::bail!("`rules after-untrusted` is `policy::rule_after_untrusted`'s")
        }
    };
    // Rules are stored once for every instance: one live instance is enough (it audits the
    // change); with none running, the stored file is changed directly.
    let reply = control::sockets(&paths.runtime_dir)
        .iter()
        .find_map(|s| control::request(s, &req).ok());
    let reply = match reply {
        Some(v) => v,
        None => offline_rules(&paths, &req),
    };
    if !ok(&reply) {
        out(reason(&reply));
        return Ok(ExitCode::from(1));
    }
    match action {
        RulesAction::List { json } => {
            let rules = reply["rules"].as_array().cloned().unwrap_or_default();
            if json {
                out(json_for_terminal(&serde_json::to_string_pretty(&rules)?));
            } else if rules.is_empty() {
                out("no standing rules");
            } else {
                let now = archgate_core::person::now_secs();
                for r in &rules {
                    out(format!(
                        "{:<22} {:<12} {:<18} {} uses today of {}, {} min left\n    args: {}",
                        for_terminal(r["id"].as_str().unwrap_or("")),
                        for_terminal(r["client"].as_str().unwrap_or("")),
                        for_terminal(r["tool"].as_str().unwrap_or("")),
                        r["uses"].as_array().map_or(0, |u| u.len()),
                        r["max_uses_per_day"],
                        r["expires"].as_u64().unwrap_or(0).saturating_sub(now) / 60,
                        archgate_core::text::display_value(&r["args"]),
                    ));
                    if r["after_untrusted"] == true {
                        out("    after untrusted text: still applies (after_untrusted = true)");
                    }
                }
            }
        }
        RulesAction::Revoke { id } => out(format!("revoked standing rule {id}")),
        RulesAction::RevokeAll => out(format!(
            "revoked all standing rules ({})",
            reply["revoked"].as_u64().unwrap_or(0)
        )),
        RulesAction::AfterUntrusted { .. } => {}
    }
    Ok(ExitCode::SUCCESS)
}

fn offline_rules(paths: &Paths, req: &Request) -> Value {
    let person = archgate_core::person::PersonChannel::offline(
        paths.standing_rules_file(),
        paths.acknowledged_file(),
    );
    let now = archgate_core::person::now_secs();
    match req {
        Request::Rules => serde_json::json!({
            "ok": true,
            "rules": person.state().rules().into_iter().filter(|r| !r.is_expired(now)).collect::<Vec<_>>(),
        }),
        Request::Revoke { id } => match person.revoke_rule(id) {
            Ok(()) => serde_json::json!({"ok": true}),
            Err(e) => serde_json::json!({"ok": false, "error": e.kind(), "reason": e.to_string()}),
        },
        _ => {
            let n = person.state().rules().len();
            person.revoke_all_rules();
            serde_json::json!({"ok": true, "revoked": n})
        }
    }
}

const NO_PAGE: &str = "no running archgate serves the approval page; start `archgate serve` (your MCP client does this) with [approval] page = true";

/// Opens the approval page. The one-time login never travels on a command line (every local
/// user reads `/proc/PID/cmdline`): the instance writes a 0600 login file into the 0700 runtime
/// directory, and only that file's path goes to the browser opener. `--print` prints the page's
/// login form and a short one-time code to type into it.
/// The file is removed when its link is used or after two minutes.
pub fn ui(config: Option<PathBuf>, print: bool) -> anyhow::Result<ExitCode> {
    let (in_force, paths) = crate::app::config_and_paths(config)?;
    let dir = paths.runtime_dir;
    if print {
        // Nothing usable by pasting leaves the terminal: a short code the person types into the
        // page's login form.
        let got = control::sockets(&dir).iter().find_map(|s| {
            let v = control::request(s, &Request::LoginCode).ok()?;
            Some((
                v["url"].as_str()?.to_owned(),
                v["code"].as_str()?.to_owned(),
            ))
        });
        let Some((url, code)) = got else {
            out(NO_PAGE);
            return Ok(ExitCode::from(1));
        };
        out(format!(
            "open {} and type the code {} (it works once, within two minutes)",
            for_terminal(&url),
            for_terminal(&code)
        ));
        return Ok(ExitCode::SUCCESS);
    }
    let Some(file) = login_file(&dir) else {
        out(NO_PAGE);
        return Ok(ExitCode::from(1));
    };
    let shown = for_terminal(&file.display().to_string()).into_owned();
    // What xdg-open needs (the XDG directories, the desktop's name) is in the executor's table
    // and passes from the person's terminal; `BROWSER` names a program and does not (xdg-open
    // finds the person's browser through the desktop's MIME defaults).
    let spec = archgate_exec::CommandSpec::new("xdg-open").arg(file.display().to_string());
    // The opener is found as every program archgate starts is: the person's `[exec]` settings.
    match archgate_exec::spawn_for_person_with(in_force.executor_config(), spec) {
        Ok(_) => {
            out("opened the approval page in your browser (the login works once)");
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            out(format!(
                "could not open a browser ({e}); open this file yourself, it logs in once:\n{shown}"
            ));
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// A login file from the first instance that serves a page (`control.sock` first). Only a file
/// inside the runtime directory is taken.
fn login_file(dir: &Path) -> Option<PathBuf> {
    control::sockets(dir).iter().find_map(|s| {
        let v = control::request(s, &Request::LoginFile).ok()?;
        let f = PathBuf::from(v["file"].as_str()?);
        let canon = |p: &Path| std::fs::canonicalize(p).ok();
        (f.parent().and_then(canon).is_some() && f.parent().and_then(canon) == canon(dir))
            .then_some(f)
    })
}

#[cfg(test)]
mod table_tests {
    use super::table;
    use serde_json::json;

    /// Each column starts at the same place on every line, whatever the width of the cells
    /// (a 32-character id, a long client name): no row shifts another.
    #[test]
    fn columns_never_shift() {
        let rows = [
            json!({"id": "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6", "tool": "system_status", "tier": "read",
                   "client": "local", "seconds_left": 48, "summary": "system_status"}),
            json!({"id": "7", "tool": "clipboard_write", "tier": "act",
                   "client": "a-client-with-a-long-name", "seconds_left": 5, "summary": "clipboard_write text"}),
        ];
        let lines = table(&rows);
        assert_eq!(lines.len(), 3);
        let starts = |l: &str, cells: &[&str]| -> Vec<usize> {
            let mut at = 0;
            cells
                .iter()
                .map(|c| {
                    let i = l[at..].find(c).unwrap() + at;
                    at = i + c.len();
                    i
                })
                .collect()
        };
        let head = starts(&lines[0], &["ID", "TOOL", "TIER", "CLIENT", "COMMAND"]);
        let a = starts(
            &lines[1],
            &["a1b2", "system_status", "read", "local", "system_status"],
        );
        let b = starts(
            &lines[2],
            &[
                "7",
                "clipboard_write",
                "act",
                "a-client",
                "clipboard_write text",
            ],
        );
        assert_eq!(head, a, "{lines:#?}");
        assert_eq!(head, b, "{lines:#?}");
        // LEFT is right-aligned under its header.
        let end = |l: &str, c: &str| l.find(c).unwrap() + c.len();
        assert_eq!(end(&lines[0], "LEFT"), end(&lines[1], "0:48"), "{lines:#?}");
        assert_eq!(end(&lines[0], "LEFT"), end(&lines[2], "0:05"), "{lines:#?}");
    }
}
