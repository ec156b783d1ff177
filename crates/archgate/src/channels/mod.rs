//! The person's approval channels, started together by `archgate serve` (both modes): the
//! approval page (when `approval.page`), the control socket for the CLI, and desktop
//! notifications (when `approval.notifications` and a session bus with a notification server
//! exist). A channel that cannot start is logged and left out; the others still run, and with
//! none at all a call that needs approval is refused `unsupported` with the command to run.

use std::sync::Arc;
use tokio_util::sync::CancellationToken;

use crate::app::App;

pub mod ancestry;
pub mod control;
pub mod handoff;
pub mod notify;
mod notify_text;
pub mod page;

/// Keeps the channels up; dropping it takes them down.
pub struct Channels {
    _page: Option<page::Page>,
    _control: Option<control::ControlServer>,
    _notifications: Option<Arc<notify::Notifications>>,
}

pub async fn start(app: Arc<App>, mode: &'static str, shutdown: CancellationToken) -> Channels {
    let config = app.gate.config().current();
    let page = if config.approval.page {
        match page::start(app.clone(), shutdown.clone()).await {
            Ok(p) => Some(p),
            Err(e) => {
                tracing::warn!("the approval page could not start: {e}");
                None
            }
        }
    } else {
        None
    };
    let control = match control::start(app.clone(), page.as_ref().map(|p| p.handle.clone()), mode) {
        Ok(c) => Some(c),
        Err(e) => {
            tracing::warn!(
                "the control socket could not start (`archgate approve` will not reach this instance): {e}"
            );
            None
        }
    };
    let notifications = if config.approval.notifications {
        match notify::start(app.clone(), page.as_ref().map(|p| p.handle.clone())).await {
            Ok(n) => {
                app.gate.broker().add_push_channel(n.clone());
                Some(n)
            }
            Err(e) => {
                tracing::info!(
                    kind = e.kind(),
                    "desktop notifications are not a channel: {e}"
                );
                None
            }
        }
    } else {
        None
    };
    Channels {
        _page: page,
        _control: control,
        _notifications: notifications,
    }
}
