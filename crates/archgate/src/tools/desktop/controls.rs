//! The screen, the clipboard and notifications: doors that read what the person sees or tell
//! them something.

use archgate_core::exec::Permit;
use archgate_core::policy::Tier;
use archgate_core::tool::{CallCx, Content, Tool, ToolError, ToolOutput, ToolSpec};
use archgate_desktop::*;
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;

use super::{DesktopService, json};
use crate::tools::domain_err;
use crate::tools::packages::NoArgs;

// ---- screen and clipboard ------------------------------------------------------------------

/// Arguments of `screenshot` and `screen_text`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaptureArgs {
    /// What to capture (default: every output).
    #[serde(default)]
    pub target: Option<CaptureTarget>,
}

pub struct Screenshot(pub(super) Arc<DesktopService>);
impl Tool for Screenshot {
    type Args = CaptureArgs;
    fn spec(&self) -> &'static ToolSpec {
        spec!("screenshot", "Screenshot", Act, read_only: true, destructive: false, private: [],
            "A PNG of the screen, a monitor, a window or a region, scaled to at most the configured size.")
    }
    fn execute<'a>(
        &'a self,
        cx: &'a CallCx,
        p: Permit,
        a: CaptureArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let target = a.target.unwrap_or(CaptureTarget::Output);
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
                exit_code: None,
            })
        })
    }
}

pub struct ScreenText(pub(super) Arc<DesktopService>);
impl Tool for ScreenText {
    type Args = CaptureArgs;
    fn spec(&self) -> &'static ToolSpec {
        spec!("screen_text", "Read text on screen", Act, read_only: true, destructive: false, private: [],
            "The text shown on screen (OCR), best on a region or a window.")
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        p: Permit,
        a: CaptureArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let target = a.target.unwrap_or(CaptureTarget::Output);
            json(
                self.0
                    .desktop
                    .screen_text(&p, &target)
                    .await
                    .map_err(domain_err)?,
            )
        })
    }
}

pub struct ClipboardRead(pub(super) Arc<DesktopService>);
impl Tool for ClipboardRead {
    type Args = NoArgs;
    fn spec(&self) -> &'static ToolSpec {
        spec!("clipboard_read", "Read the clipboard", Act, read_only: true, destructive: false, private: [],
            "The text on the clipboard. Its contents never reach the audit log.")
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        p: Permit,
        _a: NoArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            json(
                self.0
                    .desktop
                    .clipboard_read(&p)
                    .await
                    .map_err(domain_err)?,
            )
        })
    }
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
    fn spec(&self) -> &'static ToolSpec {
        spec!("clipboard_write", "Write the clipboard", Act, read_only: false, destructive: false, private: ["text"],
            "Put text on the clipboard.")
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        p: Permit,
        a: ClipboardWriteArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            self.0
                .desktop
                .clipboard_write(&p, &a.text)
                .await
                .map_err(domain_err)?;
            json(serde_json::json!({"written_bytes": a.text.len()}))
        })
    }
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
    fn spec(&self) -> &'static ToolSpec {
        spec!("notify", "Desktop notification", Act, read_only: false, destructive: false, private: [],
            "Show the person a desktop notification.")
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        p: Permit,
        a: NotifyArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            self.0
                .desktop
                .notify(&p, &a.title, &a.body)
                .await
                .map_err(domain_err)?;
            json(serde_json::json!({"shown": true}))
        })
    }
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
    fn spec(&self) -> &'static ToolSpec {
        spec!("osd", "On-screen message", Act, read_only: false, destructive: false, private: [],
            "Flash a short on-screen message (Omarchy's OSD, else a notification).")
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        p: Permit,
        a: OsdArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            json(
                self.0
                    .desktop
                    .osd(&p, &a.message)
                    .await
                    .map_err(domain_err)?,
            )
        })
    }
}
