//! The screen and what reaches it: screenshots and screen text, the clipboard, notifications and
//! the OSD — doors that read what the person sees or show them something.

use archgate_core::exec::CommandSpec;
use archgate_core::exec::Permit;
use archgate_core::picture::{Area, Picture, Screen};
use archgate_core::policy::Tier;
use archgate_core::tool::{
    Action, CallCx, Content, Plan, Probe, Resolved, Tool, ToolError, ToolOutput, ToolSpec,
};
use archgate_desktop::*;
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;

use super::{DesktopService, json, route_action};
use crate::tools::domain_err;
use crate::tools::packages::NoArgs;

// ---- screen and clipboard ------------------------------------------------------------------

/// Arguments of `screenshot` and `screen_text`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaptureArgs {
    /// What to capture (default: every output); a region in layout pixels.
    #[serde(default)]
    pub target: Option<CaptureTarget>,
}

/// The programs a capture runs and the monitor or window it names, found before the person is
/// asked: a missing `grim` (or `tesseract`) or an unknown name is refused first, and the question
/// says what will be captured. Execution takes the target as settled here (every output when
/// none was named).
async fn resolve_capture_target(
    svc: &DesktopService,
    probe: &Probe,
    programs: &[Program],
    plan: &Plan,
    a: CaptureArgs,
) -> Result<Resolved<CaptureTarget>, ToolError> {
    require(probe, programs)?;
    let target = a.target.unwrap_or(CaptureTarget::Output);
    let state = svc.desktop.desktop_state().await.ok();
    let resolved =
        archgate_desktop::screen::resolve_capture(&target, state.as_ref()).map_err(domain_err)?;
    let mut r = Resolved::planned(plan, target.clone());
    r.action.target = Some(resolved.description);
    r.action.picture = state.as_ref().and_then(|s| screens_map(s, &target));
    Ok(r)
}

/// The screens as the compositor lays them out, with the area `target` takes outlined (none:
/// every screen): what the page draws for the person.
fn screens_map(state: &DesktopState, target: &CaptureTarget) -> Option<Picture> {
    let area = |r: &Rect| Area {
        x: r.x,
        y: r.y,
        width: r.width,
        height: r.height,
    };
    let screens = state
        .monitors
        .iter()
        .map(|m| Screen {
            name: m.name.clone(),
            area: area(&m.logical),
        })
        .collect();
    let taken = match target {
        CaptureTarget::Output => None,
        CaptureTarget::Monitor { name } => Some(area(&state.monitor(name)?.logical)),
        CaptureTarget::Window { id } => Some(area(&state.window(id)?.geometry)),
        CaptureTarget::Region {
            x,
            y,
            width,
            height,
        } => Some(Area {
            x: *x,
            y: *y,
            width: *width,
            height: *height,
        }),
    };
    Picture::screens(screens, taken)
}

/// Each program a tool runs, found and trusted before anyone is asked (`not_available` names
/// the package).
fn require(probe: &Probe, programs: &[Program]) -> Result<(), ToolError> {
    for p in programs {
        p.require(&probe.permit).map_err(domain_err)?;
    }
    Ok(())
}

pub struct Screenshot(pub(super) Arc<DesktopService>);
impl Tool for Screenshot {
    type Args = CaptureArgs;
    type Run = CaptureTarget;
    fn resolve<'a>(
        &'a self,
        _cx: &'a CallCx,
        probe: &'a Probe,
        plan: &'a Plan,
        a: CaptureArgs,
    ) -> BoxFuture<'a, Result<Resolved<CaptureTarget>, ToolError>> {
        Box::pin(async move {
            let mut r = resolve_capture_target(&self.0, probe, &[Program::Grim], plan, a).await?;
            // The person may see exactly the image the agent will receive before answering.
            r.action.preview = true;
            Ok(r)
        })
    }
    fn spec(&self) -> &'static ToolSpec {
        spec!("screenshot", "Screenshot", Act, read_only: true, destructive: false, private: [], provenance: archgate_core::provenance::Provenance::Untrusted(archgate_core::provenance::Source::Screen), says: archgate_core::sentence::Phrase::cases(&[("", "take a screenshot of {target}")]),
            "The screen, a monitor, a window or a region as an image fit to the answer limit, with its real size and scale.")
    }
    fn execute<'a>(
        &'a self,
        cx: &'a CallCx,
        p: Permit,
        target: CaptureTarget,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let shot = self
                .0
                .desktop
                .screenshot_within(
                    &p,
                    &target,
                    cx.config.desktop.screenshot_max_dim,
                    cx.config.limits.max_output_bytes,
                )
                .await
                .map_err(domain_err)?;
            let meta = serde_json::to_value(&shot).unwrap_or_default();
            Ok(ToolOutput {
                content: vec![Content::Image {
                    data: shot.data,
                    mime: shot.mime,
                }],
                structured: Some(meta),
                ..ToolOutput::default()
            })
        })
    }
}

pub struct ScreenText(pub(super) Arc<DesktopService>);
impl Tool for ScreenText {
    type Args = CaptureArgs;
    type Run = CaptureTarget;
    fn resolve<'a>(
        &'a self,
        _cx: &'a CallCx,
        probe: &'a Probe,
        plan: &'a Plan,
        a: CaptureArgs,
    ) -> BoxFuture<'a, Result<Resolved<CaptureTarget>, ToolError>> {
        Box::pin(resolve_capture_target(
            &self.0,
            probe,
            &[Program::Grim, Program::Tesseract],
            plan,
            a,
        ))
    }
    fn spec(&self) -> &'static ToolSpec {
        spec!("screen_text", "Read text on screen", Act, read_only: true, destructive: false, private: [], provenance: archgate_core::provenance::Provenance::Untrusted(archgate_core::provenance::Source::Screen), says: archgate_core::sentence::Phrase::cases(&[("", "read the text on {target}")]),
            "The text shown on screen (OCR), best on a region or a window.")
    }
    execute!(|d, p, target: CaptureTarget| d.screen_text(&p, &target).await.map_err(domain_err));
}

pub struct ClipboardRead(pub(super) Arc<DesktopService>);
impl Tool for ClipboardRead {
    type Args = NoArgs;
    type Run = NoArgs;
    /// `wl-paste` is found before anyone is asked.
    fn resolve<'a>(
        &'a self,
        _cx: &'a CallCx,
        probe: &'a Probe,
        plan: &'a Plan,
        a: NoArgs,
    ) -> BoxFuture<'a, Result<Resolved<NoArgs>, ToolError>> {
        Box::pin(async move {
            require(probe, &[Program::WlPaste])?;
            Ok(Resolved::planned(plan, a))
        })
    }
    fn spec(&self) -> &'static ToolSpec {
        spec!("clipboard_read", "Read the clipboard", Act, read_only: true, destructive: false, private: [], provenance: archgate_core::provenance::Provenance::Untrusted(archgate_core::provenance::Source::Clipboard), says: archgate_core::sentence::Phrase::cases(&[("", "read your clipboard")]),
            "The clipboard's text (never written to the audit log).")
    }
    execute!(|d, p, _a: NoArgs| d.clipboard_read(&p).await.map_err(domain_err));
}

/// Arguments of `clipboard_write`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClipboardWriteArgs {
    /// Text to put on the clipboard.
    pub text: String,
}

pub struct ClipboardWrite(pub(super) Arc<DesktopService>);
impl Tool for ClipboardWrite {
    type Args = ClipboardWriteArgs;
    type Run = ClipboardWriteArgs;
    /// The person is asked with the text itself (the audit keeps only its length).
    fn resolve<'a>(
        &'a self,
        _cx: &'a CallCx,
        probe: &'a Probe,
        plan: &'a Plan,
        a: ClipboardWriteArgs,
    ) -> BoxFuture<'a, Result<Resolved<ClipboardWriteArgs>, ToolError>> {
        Box::pin(async move {
            self.0
                .desktop
                .check_clipboard_text(&a.text)
                .map_err(domain_err)?;
            require(probe, &[Program::WlCopy, Program::Setsid])?;
            let mut action = Action::from_plan(plan);
            action.shown = Some(a.text.clone());
            action.target = Some(format!("the clipboard ({} bytes of text)", a.text.len()));
            Ok(Resolved { action, run: a })
        })
    }
    fn spec(&self) -> &'static ToolSpec {
        spec!("clipboard_write", "Write the clipboard", Act, read_only: false, destructive: true, private: ["text"], provenance: archgate_core::provenance::Provenance::ArchgateOnly, says: archgate_core::sentence::Phrase { cases: &[("", "put {size:text} on your clipboard")], replaces: Some("what is on your clipboard now") },
            "Put text on the clipboard.")
    }
    execute!(|d, p, a: ClipboardWriteArgs| {
        d.clipboard_write(&p, &a.text).await.map_err(domain_err)?;
        Ok(serde_json::json!({"written_bytes": a.text.len()}))
    });
}

// ---- notifications ---------------------------------------------------------------------------

/// Arguments of `notify`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NotifyArgs {
    /// Title.
    pub title: String,
    /// Body text.
    #[serde(default)]
    pub body: String,
}

pub struct Notify(pub(super) Arc<DesktopService>);
impl Tool for Notify {
    type Args = NotifyArgs;
    type Run = CommandSpec;
    fn spec(&self) -> &'static ToolSpec {
        spec!("notify", "Desktop notification", Act, read_only: false, destructive: false, private: [], provenance: archgate_core::provenance::Provenance::ArchgateOnly, says: archgate_core::sentence::Phrase::cases(&[("", "show you a notification “{title}”")]),
            "Show the person a desktop notification.")
    }
    fn resolve<'a>(
        &'a self,
        cx: &'a CallCx,
        _probe: &'a Probe,
        plan: &'a Plan,
        a: NotifyArgs,
    ) -> BoxFuture<'a, Result<Resolved<CommandSpec>, ToolError>> {
        Box::pin(async move {
            let spec = self
                .0
                .desktop
                .notify_command(&a.title, &a.body, &cx.client)
                .map_err(domain_err)?;
            let mut action = Action::from_plan(plan);
            action.commands = vec![spec.clone()];
            action.shown = Some(format!("{}\n{}", a.title, a.body));
            Ok(Resolved { action, run: spec })
        })
    }
    execute!(|d, p, spec: CommandSpec| {
        d.notify(&p, spec).await.map_err(domain_err)?;
        Ok(serde_json::json!({"shown": true}))
    });
}

/// Arguments of `osd`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OsdArgs {
    /// A short message.
    pub message: String,
}

pub struct Osd(pub(super) Arc<DesktopService>);
impl Tool for Osd {
    type Args = OsdArgs;
    type Run = OsdCommand;
    fn spec(&self) -> &'static ToolSpec {
        spec!("osd", "On-screen message", Act, read_only: false, destructive: false, private: [], provenance: archgate_core::provenance::Provenance::ArchgateOnly, says: archgate_core::sentence::Phrase::cases(&[("", "flash a message on your screen: “{message}”")]),
            "Flash a short on-screen message (Omarchy's OSD, else a notification).")
    }
    /// Omarchy's osd route, when there is one, is judged as that route (its rules, its tier).
    fn resolve<'a>(
        &'a self,
        cx: &'a CallCx,
        probe: &'a Probe,
        plan: &'a Plan,
        a: OsdArgs,
    ) -> BoxFuture<'a, Result<Resolved<OsdCommand>, ToolError>> {
        Box::pin(async move {
            let cmd = self
                .0
                .desktop
                .osd_command(&probe.permit, &a.message, &cx.client)
                .await
                .map_err(domain_err)?;
            let mut action = match &cmd.route {
                Some(call) => route_action(call),
                None => {
                    let mut a = Action::from_plan(plan);
                    a.commands = vec![cmd.spec.clone()];
                    a
                }
            };
            action.shown = Some(a.message.clone());
            Ok(Resolved { action, run: cmd })
        })
    }
    execute!(|d, p, cmd: OsdCommand| d.osd(&p, cmd).await.map_err(domain_err));
}
