//! The parts of `archgate setup` that teach: what it found on this desktop (Omarchy, Claude
//! Code), what an approval will look like, a named client per agent it connects over HTTP (so
//! every surface names that client, not the first-run `default`), and one harmless test question
//! at the end — the person answers it where they will answer real ones; nothing runs either way.

use archgate_core::approval::{ApprovalOutcome, Question};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::out;
use crate::app::App;
use crate::cli::ClientKind;
use crate::person::snippets::{self, Connect, Token};

/// What setup found on this desktop.
pub(super) struct Found {
    /// Omarchy's version and where it is.
    pub omarchy: Option<String>,
    /// Where Claude Code was found (its program on PATH, or its files in HOME).
    pub claude_code: Option<PathBuf>,
}

/// Looks for Omarchy (as the tools find it: config, $OMARCHY_PATH, the usual places) and Claude
/// Code (`claude` on PATH, else `~/.claude`).
pub(super) fn detect(config: Option<PathBuf>) -> Found {
    let omarchy = crate::app::config_and_paths(config)
        .ok()
        .and_then(|(cfg, _)| {
            let (path, _) = cfg.omarchy_install_from_process()?;
            let version = archgate_desktop::omarchy_version(&path)
                .unwrap_or_else(|| "version unknown".into());
            Some(format!("{version} at {}", path.display()))
        });
    let on_path = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("claude"))
            .find(|f| f.is_file())
    });
    let in_home = std::env::var_os("HOME")
        .map(|h| Path::new(&h).join(".claude"))
        .filter(|d| d.is_dir());
    Found {
        omarchy,
        claude_code: on_path.or(in_home),
    }
}

/// The "this desktop" and "what an approval looks like" sections.
pub(super) fn explain(found: &Found, timeout_s: u64) {
    out("");
    out("== this desktop");
    match &found.omarchy {
        Some(o) => out(format!(
            "Omarchy {o}: its notifications show archgate's questions"
        )),
        None => out("no Omarchy found (the desktop tools that need it say so when asked)"),
    }
    match &found.claude_code {
        Some(p) => out(format!(
            "Claude Code found ({}): connect it with --client claude-code",
            p.display()
        )),
        None => out("no Claude Code found"),
    }
    out("");
    out("== what an approval looks like");
    out(
        "When an agent asks for something that needs your yes, a desktop notification says who asks and how long you have, e.g.",
    );
    out("  claude-code asks to run clipboard_write · 1:00 left · says it is claude-code 2.1");
    out(
        "with the exact command below it. Click it to open the approval page at that call; Allow and Deny are in the notification too (mako: `makoctl menu`, or bind them; Omarchy's own notification card offers the click only).",
    );
    if found.omarchy.is_some() {
        out("On Omarchy, Super+Alt+Comma invokes the last notification: it opens the page too.");
    }
    out(format!(
        "In a terminal: `archgate approvals`, then `archgate approve` (one waiting: it asks [y/N/a]). Silence is no: after {timeout_s} s the call is declined."
    ));
}

/// Makes the client `kind` its own named HTTP client (its grant: `preset`) and prints its
/// snippet with the token, shown this once. Falls back to the first-run token's snippet when a
/// client of that name exists already (its token was shown when it was made).
pub(super) async fn connect_named(
    config: Option<PathBuf>,
    kind: ClientKind,
    preset: &str,
) -> anyhow::Result<()> {
    let name = kind.names().0;
    let app = App::open_without_calls(config.clone())?;
    let exists = app.clients.list().iter().any(|c| c.name == name);
    if exists {
        app.shutdown();
        out(format!(
            "client {name:?} exists (its token was shown when it was made); to make a new one: archgate clients revoke {name}, then setup again. Meanwhile, with the first-run token:"
        ));
        super::client_config::run(config, kind, true)?;
        return Ok(());
    }
    let me = crate::person::presence::Subject::this_process().map_err(|e| e.to_string());
    let added = crate::person::clients::add(&app, name, preset, None, "cli", me).await;
    let port = snippets::served_port(&app.paths, app.gate.config().current().server.port);
    app.shutdown();
    let added = added?;
    out(format!(
        "made the client {name:?} (preset {preset}): every question from it says {name}. Its token is in this snippet, shown once; put it in the client's own config file and keep it private:"
    ));
    out(snippets::snippet(
        kind,
        &Connect::Http {
            url: &snippets::mcp_url(port),
            token: Token::Shown(&added.token),
        },
    ));
    Ok(())
}

/// One harmless question on the person's channels (notification, page, CLI), answered where
/// real ones are; nothing runs whatever the answer. Says what came back.
pub(super) async fn test_question(config: Option<PathBuf>) -> anyhow::Result<bool> {
    let app = Arc::new(App::open(config, None)?);
    let shutdown = tokio_util::sync::CancellationToken::new();
    let channels = crate::channels::start(app.clone(), "setup", shutdown.clone()).await;
    let timeout = app.gate.config().current().approval.timeout;
    let now = archgate_core::person::now_secs();
    let q = Question {
        id: format!("setup-test-{}", std::process::id()),
        // archgate itself asks: the grant's name is the one the person reads first.
        client: "archgate setup".into(),
        token: None,
        agent: None,
        tool: "setup_test".into(),
        route: "setup_test".into(),
        summary: "nothing runs: this is archgate setup's test question".into(),
        sentence: archgate_core::sentence::Sentence {
            parts: vec![archgate_core::sentence::Part {
                text: "archgate setup wants to check that a question reaches you (nothing runs)"
                    .into(),
                strong: false,
            }],
            replaces: None,
        },
        picture: None,
        tier: archgate_policy::Tier::Read,
        args: serde_json::json!({}),
        created: now,
        deadline: now + timeout.as_secs(),
        rule_allowed: false,
        follows: None,
    };
    out("");
    out("== a test question");
    out(format!(
        "archgate asks you one harmless question now (id {}): answer it in the notification, on the page, or in another terminal with `archgate approve`. Nothing runs either way; {} s to answer.",
        q.id,
        timeout.as_secs()
    ));
    let outcome = app.gate.broker().ask(q, timeout).await;
    let (reached, said) = match &outcome {
        ApprovalOutcome::Accepted { channel, .. } => (
            true,
            format!(
                "you said yes through {channel}: questions reach you and your answers come back. Nothing ran."
            ),
        ),
        ApprovalOutcome::Declined { channel } => (
            true,
            format!(
                "you said no through {channel}: questions reach you and your answers come back. Nothing ran."
            ),
        ),
        ApprovalOutcome::Cancelled { channel } => (
            true,
            format!(
                "you dismissed it ({channel}): it reached you; a dismissed question is a no. Nothing ran."
            ),
        ),
        ApprovalOutcome::TimedOut => (
            false,
            format!(
                "no answer within {} s: did a notification show? `archgate doctor` says what is missing. Nothing ran.",
                timeout.as_secs()
            ),
        ),
        ApprovalOutcome::Unsupported { reason } => {
            (false, format!("it could not be asked: {reason}"))
        }
        ApprovalOutcome::Unreachable => (false, "it was withdrawn before an answer".to_owned()),
    };
    out(said);
    drop(channels);
    shutdown.cancel();
    app.shutdown();
    Ok(reached)
}
