//! Notifications (notify-send) and the on-screen display (Omarchy's osd route when its registry
//! offers one, else a short transient notification).

use archgate_exec::{CommandSpec, Permit};
use serde::Serialize;

use crate::desktop::Desktop;
use crate::error::{DesktopError, Result};
use crate::omarchy::{Registry, Route};
use crate::programs::{self, Program};

/// Longest title or body passed on, in characters.
const MAX_TEXT: usize = 2000;

/// How an OSD message was shown.
#[derive(Debug, Clone, Serialize)]
pub struct OsdShown {
    /// `omarchy` (the registry's osd route) or `notification`.
    pub via: &'static str,
    /// The command that ran.
    pub command: String,
}

fn check_text(what: &'static str, s: &str) -> Result<()> {
    if s.chars().count() > MAX_TEXT {
        return Err(DesktopError::invalid(
            what,
            format!("longer than {MAX_TEXT} characters"),
        ));
    }
    if s.contains('\0') {
        return Err(DesktopError::invalid(what, "contains a NUL byte"));
    }
    Ok(())
}

/// What `osd` will run: Omarchy's osd route (`route`), or a transient notification.
#[derive(Debug, Clone)]
pub struct OsdCommand {
    /// Exactly what runs.
    pub spec: CommandSpec,
    /// The route, when it is Omarchy's.
    pub route: Option<crate::omarchy::RouteCall>,
}

/// The registry's route for on-screen display messages, if it has one: a route whose words
/// include `osd`, runnable (no sudo, not archgate's own).
pub fn osd_route(reg: &Registry) -> Option<&Route> {
    reg.routes
        .iter()
        .filter(|r| {
            r.words.iter().any(|w| w == "osd")
                && !r.requires_sudo
                && !r.targets_archgate
                && !r.hidden
        })
        .min_by_key(|r| r.words.len())
}

/// The arguments that make `route` show `message`: `--message TEXT` when its usage has that
/// flag (Omarchy 4's `omarchy osd [-m|--message <text>]`), else the message as its one value.
pub fn osd_args(route: &Route, message: &str) -> Vec<String> {
    let has_flag = match &route.usage {
        crate::omarchy::Usage::Read { flags, .. } => flags
            .iter()
            .any(|f| f.names.iter().any(|n| n == "--message")),
        _ => false,
    };
    if has_flag {
        vec!["--message".to_owned(), message.to_owned()]
    } else {
        vec![message.to_owned()]
    }
}

impl Desktop {
    /// The command `notify` runs for the client `from`: `notify-send --app-name "FROM via
    /// archgate" -- "Message from FROM: TITLE" BODY`. The agent's words never arrive under
    /// archgate's own name, which its questions and warnings use (attack 5b F11: a notification
    /// written to read like an approval question or a hand-off notice was indistinguishable from
    /// archgate's own); the summary names the sender because that is the line a notification
    /// daemon always shows (mako's default shows no app name). Pure, so the person is shown
    /// exactly this.
    pub fn notify_command(&self, title: &str, body: &str, from: &str) -> Result<CommandSpec> {
        check_text("title", title)?;
        check_text("body", body)?;
        if title.trim().is_empty() {
            return Err(DesktopError::invalid("title", "must not be empty"));
        }
        let app = format!("{from} via archgate");
        let summary = format!("Message from {from}: {title}");
        Ok(Program::NotifySend
            .spec(&self.env)
            .args(["--app-name", &app, "--", &summary, body])
            .timeout(self.config.program_timeout))
    }

    /// `notify`: runs the command [`Desktop::notify_command`] built.
    pub async fn notify(&self, permit: &Permit, spec: CommandSpec) -> Result<()> {
        programs::run_ok(permit, Program::NotifySend, spec).await?;
        Ok(())
    }

    /// The command `osd` runs for the client `from`: Omarchy's osd route when the registry
    /// (read through `probe` when Omarchy is installed) has one, else a transient notification
    /// under the client's name. The message shown starts with `FROM: `, as `notify`'s does.
    pub async fn osd_command(
        &self,
        probe: &Permit,
        message: &str,
        from: &str,
    ) -> Result<OsdCommand> {
        check_text("message", message)?;
        if message.trim().is_empty() {
            return Err(DesktopError::invalid("message", "must not be empty"));
        }
        let message = &format!("{from}: {message}");
        let app = format!("{from} via archgate");
        let registry = match self.omarchy_registry(probe).await {
            Ok(r) => Some(r),
            Err(e) => {
                tracing::debug!(error = %e, "no Omarchy registry; osd falls back to a notification");
                None
            }
        };
        if let Some(route) = registry.as_deref().and_then(osd_route) {
            let call = self
                .resolve_route(probe, &route.route, &osd_args(route, message))
                .await?;
            return Ok(OsdCommand {
                spec: call.spec.clone(),
                route: Some(call),
            });
        }
        let spec = Program::NotifySend
            .spec(&self.env)
            .args([
                "--app-name",
                &app,
                "--expire-time",
                "1500",
                "--hint",
                "string:x-canonical-private-synchronous:archgate-osd",
                "--",
                message,
            ])
            .timeout(self.config.program_timeout);
        Ok(OsdCommand { spec, route: None })
    }

    /// `osd`: runs the command [`Desktop::osd_command`] built.
    pub async fn osd(&self, permit: &Permit, cmd: OsdCommand) -> Result<OsdShown> {
        let shown = cmd.spec.display();
        // A route, as `run_route` runs one: the programs its scripts pick and the files its
        // values name judged again at the start (attack 37 F4: the OSD ran a resolved route with
        // neither); its tree as each of Omarchy's programs starts (`programs::run_any`).
        if let Some(call) = &cmd.route {
            self.check_picks(call)?;
            crate::omarchy::files_still_the_persons(
                &call.route,
                &call.script,
                call.spec.arg_list(),
            )?;
        }
        let (program, via) = match cmd.route {
            Some(_) => (Program::Omarchy, "omarchy"),
            None => (Program::NotifySend, "notification"),
        };
        programs::run_ok(permit, program, cmd.spec).await?;
        Ok(OsdShown {
            via,
            command: shown,
        })
    }
}
