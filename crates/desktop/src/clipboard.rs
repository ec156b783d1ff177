//! The clipboard through wl-clipboard. Text goes to `wl-copy` on stdin, never in argv (argv is
//! visible to every process and would reach records).
//!
//! `wl-copy` serves the selection from a process that must outlive the call, while the executor
//! ends everything left in a call's process group. So `wl-copy` starts under `setsid --fork
//! --wait`: the serving process lives in a session of its own, and `setsid` still waits for
//! `wl-copy`'s first process, so a failure to copy is reported.

use archgate_exec::Permit;
use serde::Serialize;

use crate::desktop::Desktop;
use crate::error::{DesktopError, Result};
use crate::programs::{self, Program};

/// What the clipboard holds, as text.
#[derive(Debug, Clone, Serialize)]
pub struct ClipboardText {
    /// The text (empty when the clipboard is empty).
    pub text: String,
    /// Whether the clipboard was empty.
    pub empty: bool,
}

impl Desktop {
    /// `clipboard_read`: the clipboard as text. An empty clipboard is an answer, not an error;
    /// a clipboard holding only non-text (an image) is `invalid_argument`.
    pub async fn clipboard_read(&self, permit: &Permit) -> Result<ClipboardText> {
        let spec = Program::WlPaste
            .spec(&self.env)
            .args(["--no-newline", "--type", "text"])
            .timeout(self.config.program_timeout);
        let out = programs::run_any(permit, Program::WlPaste, spec).await?;
        if !out.success() {
            let err = out.stderr_lossy().to_lowercase();
            if err.contains("nothing is copied") || err.contains("no selection") {
                return Ok(ClipboardText {
                    text: String::new(),
                    empty: true,
                });
            }
            if err.contains("no suitable type") {
                return Err(DesktopError::invalid(
                    "clipboard",
                    "the clipboard holds no text (an image or other data)",
                ));
            }
            return Err(programs::failed(
                "wl-paste --no-newline --type text".to_owned(),
                &out,
            ));
        }
        let cap = permit
            .executor()
            .config()
            .output_cap
            .min(self.config.max_clipboard_bytes);
        if out.truncated || out.stdout.len() > self.config.max_clipboard_bytes {
            return Err(DesktopError::TooLarge {
                what: "clipboard contents",
                limit: cap,
            });
        }
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        Ok(ClipboardText {
            empty: text.is_empty(),
            text,
        })
    }

    /// Whether `text` may go on the clipboard (its size), checked in resolution too so an
    /// oversized text is refused before anyone is asked.
    pub fn check_clipboard_text(&self, text: &str) -> Result<()> {
        if text.len() > self.config.max_clipboard_bytes {
            return Err(DesktopError::TooLarge {
                what: "clipboard text",
                limit: self.config.max_clipboard_bytes,
            });
        }
        Ok(())
    }

    /// `clipboard_write`: puts `text` on the clipboard (served until something else is copied).
    pub async fn clipboard_write(&self, permit: &Permit, text: &str) -> Result<()> {
        self.check_clipboard_text(text)?;
        // Resolve wl-copy first so its absence is reported as wl-clipboard's, not setsid's.
        permit
            .executor()
            .resolve_program(Program::WlCopy.name())
            .map_err(|e| programs::exec_error(Program::WlCopy, e))?;
        let spec = Program::Setsid
            .spec(&self.env)
            .args([
                "--fork",
                "--wait",
                Program::WlCopy.name(),
                "--type",
                "text/plain",
            ])
            .stdin_bytes(text.as_bytes().to_vec())
            .timeout(self.config.program_timeout);
        programs::run_ok(permit, Program::Setsid, spec).await?;
        Ok(())
    }
}
