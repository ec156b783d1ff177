//! Notifications (notify-send) and the on-screen display (Omarchy's osd route when its registry
//! offers one, else a short transient notification).

use archgate_exec::Permit;
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

/// The registry's route for on-screen display messages, if it has one: a route whose words
/// include `osd` and which takes an argument.
pub fn osd_route(reg: &Registry) -> Option<&Route> {
    reg.routes
        .iter()
        .filter(|r| r.words.iter().any(|w| w == "osd") && !r.needs_sudo && !r.targets_archgate)
        .min_by_key(|r| (r.args.is_empty(), r.words.len()))
}

impl Desktop {
    /// `notify`: a desktop notification from archgate.
    pub async fn notify(&self, permit: &Permit, title: &str, body: &str) -> Result<()> {
        check_text("title", title)?;
        check_text("body", body)?;
        if title.trim().is_empty() {
            return Err(DesktopError::invalid("title", "must not be empty"));
        }
        let spec = Program::NotifySend
            .spec(&self.env)
            .args(["--app-name", "archgate", "--", title, body])
            .timeout(self.config.program_timeout);
        programs::run_ok(permit, Program::NotifySend, spec).await?;
        Ok(())
    }

    /// `osd`: a short on-screen message. Uses Omarchy's osd route when the registry (loaded
    /// through this permit when Omarchy is installed) has one, else a transient notification.
    pub async fn osd(&self, permit: &Permit, message: &str) -> Result<OsdShown> {
        check_text("message", message)?;
        if message.trim().is_empty() {
            return Err(DesktopError::invalid("message", "must not be empty"));
        }
        let registry = match self.omarchy_registry(permit).await {
            Ok(r) => Some(r),
            Err(e) => {
                tracing::debug!(error = %e, "no Omarchy registry; osd falls back to a notification");
                None
            }
        };
        if let Some(route) = registry.as_deref().and_then(osd_route) {
            let spec = self.env.apply_to(
                crate::omarchy::route_command(route, &[message.to_owned()])?
                    .timeout(self.config.program_timeout),
            );
            let shown = spec.display();
            programs::run_ok(permit, Program::Omarchy, spec).await?;
            return Ok(OsdShown {
                via: "omarchy",
                command: shown,
            });
        }
        let spec = Program::NotifySend
            .spec(&self.env)
            .args([
                "--app-name",
                "archgate",
                "--expire-time",
                "1500",
                "--hint",
                "string:x-canonical-private-synchronous:archgate-osd",
                "--",
                message,
            ])
            .timeout(self.config.program_timeout);
        let shown = spec.display();
        programs::run_ok(permit, Program::NotifySend, spec).await?;
        Ok(OsdShown {
            via: "notification",
            command: shown,
        })
    }
}
