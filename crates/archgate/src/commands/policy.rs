//! `archgate policy explain TOOL [ARGS]` (the gate's own decision for that call),
//! `archgate policy ack ROUTE` and `archgate rules after-untrusted ID on|off` (both widen what
//! runs without a question, so both are confirmed through presence where it applies).

use std::path::PathBuf;
use std::process::ExitCode;

use super::out;
use crate::app::App;
use crate::cli::PolicyAction;

pub async fn run(config: Option<PathBuf>, action: PolicyAction) -> anyhow::Result<ExitCode> {
    let app = App::open_without_calls(config)?;
    let code = match action {
        PolicyAction::Explain { tool, args, client } => {
            let args: serde_json::Value = serde_json::from_str(&args).map_err(|e| {
                anyhow::anyhow!(
                    "ARGS must be the call's arguments as JSON ({e}); e.g. archgate policy explain \
                     omarchy_run '{{\"route\":\"theme set\",\"args\":[\"nord\"]}}'"
                )
            })?;
            let cfg = app.gate.config().current();
            let who = archgate_core::gate::Client {
                grant: archgate_core::clients::grant_for(&client, None, &cfg),
                name: client,
                agent: None,
                transport: archgate_core::gate::Transport::Cli,
                token: None,
            };
            match app.gate.explain(&who, &tool, args).await {
                Ok(e) => {
                    let d = &e.decision;
                    out(format!("route:    {}", e.action.route));
                    if !e.action.names.is_empty() {
                        out(format!("also:     {}", e.action.names.join(", ")));
                    }
                    out(format!("runs:     {}", e.action.summary()));
                    out(format!("decision: {}", d.verdict));
                    out(format!(
                        "tier:     {}{}",
                        d.tier,
                        if d.classified { "" } else { " (unclassified)" }
                    ));
                    out(format!(
                        "rule:     {}",
                        d.rule.as_deref().unwrap_or("(built-in)")
                    ));
                    out(format!("reason:   {}", d.reason));
                    if let Some(id) = &e.standing_rule {
                        out(format!("approved: by standing rule {id}, without asking"));
                    } else if e.developer_mode {
                        out("approved: by developer mode, without asking".to_string());
                    }
                    if let Some(line) = after_untrusted(&e) {
                        out(line);
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    out(format!("{}: {}", e.kind, e.message));
                    ExitCode::from(2)
                }
            }
        }
        PolicyAction::Ack { route } => {
            // It widens what an allow grants: the person confirms it where presence applies.
            let subject =
                crate::person::presence::Subject::this_process().map_err(|e| e.to_string());
            match crate::person::actions::acknowledge_confirmed(
                &app.gate,
                &app.person_channel,
                &route,
                "cli",
                subject,
            )
            .await
            {
                Ok(()) => {
                    out(format!(
                        "acknowledged {route:?}: an allow prefix may now grant it"
                    ));
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    out(format!("not acknowledged ({}): {e}", e.kind()));
                    ExitCode::from(1)
                }
            }
        }
    };
    app.shutdown();
    Ok(code)
}

/// `archgate rules after-untrusted ID on|off`.
pub async fn rule_after_untrusted(
    config: Option<PathBuf>,
    id: String,
    on: crate::cli::OnOff,
) -> anyhow::Result<ExitCode> {
    let app = App::open_without_calls(config)?;
    let on = on == crate::cli::OnOff::On;
    let subject = crate::person::presence::Subject::this_process().map_err(|e| e.to_string());
    let code = match crate::person::actions::set_after_untrusted_confirmed(
        &app.gate,
        &app.person_channel,
        &id,
        on,
        "cli",
        subject,
    )
    .await
    {
        Ok(()) if on => {
            out(format!(
                "standing rule {id} now approves after untrusted text too (after_untrusted = true)"
            ));
            ExitCode::SUCCESS
        }
        Ok(()) => {
            out(format!(
                "standing rule {id} steps back after untrusted text again"
            ));
            ExitCode::SUCCESS
        }
        Err(e) => {
            out(format!("unchanged ({}): {e}", e.kind()));
            ExitCode::from(1)
        }
    };
    app.shutdown();
    Ok(code)
}

/// What happens to this call after the calling session read text archgate did not write
/// (issue 31): whether the standing rule or developer mode that would approve it steps back.
fn after_untrusted(e: &archgate_core::gate::Explained) -> Option<String> {
    let w = e.untrusted_window_s?;
    let what = match (&e.standing_rule, e.rule_after_untrusted, e.developer_mode) {
        (Some(id), true, _) => {
            format!("standing rule {id} still approves it (it has after_untrusted = true)")
        }
        (Some(id), false, _) => format!(
            "standing rule {id} steps back (set after_untrusted = true on it to keep it) and the person is asked"
        ),
        (None, _, true) => "developer mode steps back and the person is asked".to_owned(),
        (None, _, false) => "the person is asked, as now".to_owned(),
    };
    Some(format!(
        "after untrusted text: within {w} s after the calling session read text archgate did not write (an AUR PKGBUILD, a wiki page, the clipboard …), {what}"
    ))
}
