//! `archgate log [--follow] [--tool T] [--since TIME] [--json]`: the activity log for people,
//! each call at the person's local time, by the agent's own name beside its client's.
//!
//! Tool names, routes and targets in the log were written by agents: each is shown through
//! `for_terminal` (and `--json` through `json_for_terminal`), so a record cannot draw a fake
//! record over a real one or reorder what the person reads.

use archgate_core::audit::{Entry, Record};
use std::io::{BufRead, Seek};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::out;
use archgate_core::text::{for_terminal, json_for_terminal};

fn parse_since(s: &str) -> anyhow::Result<OffsetDateTime> {
    if let Ok(t) = OffsetDateTime::parse(s, &Rfc3339) {
        return Ok(t);
    }
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: i64 = num.parse().map_err(|_| {
        anyhow::anyhow!("--since takes RFC 3339 or a duration like 10m, 2h, 1d; got {s:?}")
    })?;
    let secs = match unit {
        "s" => n,
        "m" | "" => n * 60,
        "h" => n * 3600,
        "d" => n * 86400,
        other => anyhow::bail!("unknown unit {other:?} in --since (use s, m, h or d)"),
    };
    Ok(OffsetDateTime::now_utc() - time::Duration::seconds(secs))
}

fn show(
    line: &str,
    tool: Option<&str>,
    since: Option<OffsetDateTime>,
    json: bool,
    skipped: &mut usize,
) {
    let Some(entry) = archgate_core::audit::reader::parse_line(line) else {
        *skipped += 1;
        return;
    };
    match entry {
        Entry::Event(v) => {
            if tool.is_none() {
                let text = v.to_string();
                let text = json_for_terminal(&text);
                out(if json {
                    text.into_owned()
                } else {
                    format!("-- {text}")
                });
            }
        }
        Entry::Call(r) => {
            if tool.is_some_and(|t| t != r.tool) {
                return;
            }
            if let Some(s) = since
                && OffsetDateTime::parse(&r.time, &Rfc3339).is_ok_and(|t| t < s)
            {
                return;
            }
            out(if json {
                json_for_terminal(line).into_owned()
            } else {
                human(&r)
            });
        }
    }
}

fn human(r: &Record) -> String {
    let approval = r
        .approval
        .as_ref()
        .map(|a| {
            format!(
                " approval={}{}",
                for_terminal(&a.outcome),
                a.channel
                    .as_deref()
                    .map(|c| format!("/{}", for_terminal(c)))
                    .unwrap_or_default()
            )
        })
        .unwrap_or_default();
    // The person's local time; the record keeps UTC (`--json` shows it as written).
    let time = crate::person::clock::local_of_rfc3339(&r.time);
    // Read back from a file: escaped again, whatever wrote it.
    let agent = r.agent.as_deref().map(|a| for_terminal(a).into_owned());
    // Answered through an MCP task: which one (a client holds its id).
    let task = r
        .task
        .as_deref()
        .map(|t| format!(" task={}", for_terminal(t)))
        .unwrap_or_default();
    // The client with the door it came through (`default/bridge`, `default/http`): two clients
    // of one name stay apart here too.
    let client = if r.transport.is_empty() {
        r.client.clone()
    } else {
        format!("{}/{}", r.client, r.transport)
    };
    let who = archgate_core::agent::who(&client, agent.as_deref());
    format!(
        "{} {:<14} {:<18} {:<16} {}{}{} {}ms{}",
        for_terminal(&time),
        who,
        for_terminal(&r.tool),
        r.outcome.as_str(),
        for_terminal(r.target.as_deref().or(r.route.as_deref()).unwrap_or("")),
        approval,
        task,
        r.duration_ms,
        if r.dev_mode { " [dev mode]" } else { "" }
    )
}

pub async fn run(
    config: Option<PathBuf>,
    follow: bool,
    tool: Option<String>,
    since: Option<String>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let since = since.as_deref().map(parse_since).transpose()?;
    let (_, paths) = crate::app::config_and_paths(config)?;
    let path = paths.audit_log();
    let mut skipped = 0;
    let mut pos = 0u64;
    let mut partial = String::new();
    loop {
        if let Ok(mut f) = archgate_core::paths::open_private(&path) {
            let len = f.metadata()?.len();
            if len < pos {
                pos = 0; // rotated
            }
            f.seek(std::io::SeekFrom::Start(pos))?;
            let mut reader = std::io::BufReader::new(f);
            let mut line = String::new();
            while reader.read_line(&mut line)? > 0 {
                if line.ends_with('\n') {
                    partial.push_str(line.trim_end());
                    show(&partial, tool.as_deref(), since, json, &mut skipped);
                    partial.clear();
                } else {
                    partial.push_str(&line); // a line still being written
                }
                line.clear();
            }
            pos = len;
        }
        if !follow || super::stdout_closed() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    if !partial.is_empty() {
        skipped += 1;
    }
    if skipped > 0 {
        super::note(format_args!(
            "archgate: {skipped} line(s) were not whole records (a torn last line after a crash) and were skipped"
        ));
    }
    Ok(ExitCode::SUCCESS)
}
