//! A tool's answer: its content (text and images), its structured JSON, and how it is rendered
//! as text for clients that read no structured content — bounded, so a large answer costs what
//! its cap allows and no more.

use serde_json::Value;
use std::sync::Arc;

/// A tool's answer.
#[derive(Debug, Clone, Default)]
pub struct ToolOutput {
    pub content: Vec<Content>,
    /// JSON for clients that read structured content; also rendered as text.
    pub structured: Option<Value>,
    pub exit_code: Option<i32>,
    /// `structured` as compact JSON text, rendered once by the gate when it measures the answer
    /// against the output cap (`measure`): the transports send this text rather than render
    /// the value again. Derived: `measure` replaces whatever a tool left here.
    pub structured_text: Option<String>,
    /// This answer holds only archgate's words and the agent's own arguments, whatever the
    /// tool's provenance says its answers can carry: it opens no untrusted window. Set by the
    /// tool that knows (a relayed program that printed nothing: `theme set` switching quietly
    /// does not make the person's standing rule for it step back; `theme list` does).
    pub own_words: bool,
    /// The answer a tool keeps between calls, rendered once (`ToolOutput::rendered`): `measure`
    /// takes its text instead of rendering `structured` again, while `structured` is still its
    /// value (issue 34).
    pub shared: Option<Arc<Rendered>>,
}

/// A structured answer and its compact JSON text, made together from one value, for a tool
/// whose answer stays the same from call to call while its source is unchanged (pacman.conf):
/// it is rendered once, not on every call.
#[derive(Debug)]
pub struct Rendered {
    value: Value,
    text: String,
}

impl Rendered {
    pub fn of(v: impl serde::Serialize) -> Rendered {
        let value = serde_json::to_value(v)
            .unwrap_or_else(|e| Value::String(format!("unserializable result: {e}")));
        let text = value.to_string();
        Rendered { value, text }
    }
    pub fn value(&self) -> &Value {
        &self.value
    }
    pub fn text(&self) -> &str {
        &self.text
    }
}

#[derive(Debug, Clone)]
pub enum Content {
    Text(String),
    Image { data: Vec<u8>, mime: &'static str },
}

impl ToolOutput {
    pub fn json(v: impl serde::Serialize) -> ToolOutput {
        let v = serde_json::to_value(v)
            .unwrap_or_else(|e| Value::String(format!("unserializable result: {e}")));
        ToolOutput {
            content: Vec::new(),
            structured: Some(v),
            exit_code: None,
            structured_text: None,
            own_words: false,
            shared: None,
        }
    }
    /// A kept answer (`Rendered`): its value, and its text for `measure`.
    pub fn rendered(r: &Arc<Rendered>) -> ToolOutput {
        ToolOutput {
            content: Vec::new(),
            structured: Some(r.value.clone()),
            exit_code: None,
            structured_text: None,
            own_words: false,
            shared: Some(r.clone()),
        }
    }
    pub fn text(t: impl Into<String>) -> ToolOutput {
        ToolOutput {
            content: vec![Content::Text(t.into())],
            structured: None,
            exit_code: None,
            structured_text: None,
            own_words: false,
            shared: None,
        }
    }
    /// Marks the answer as holding only archgate's words (see `own_words`).
    pub fn own_words(mut self) -> ToolOutput {
        self.own_words = true;
        self
    }
    /// Bytes this output takes on the wire, for the output cap `cap`. The structured value is
    /// rendered as text here, once, and kept in `structured_text` for the transport; past `cap`
    /// the rest is only counted (an answer too large to send is never held twice).
    pub fn measure(&mut self, cap: usize) -> usize {
        let content = self
            .content
            .iter()
            .map(|c| match c {
                Content::Text(t) => t.len(),
                // base64 grows by 4/3.
                Content::Image { data, .. } => data.len() * 4 / 3 + 4,
            })
            .sum::<usize>();
        // Always rendered from `structured` here: a text the tool set could say something else.
        self.structured_text = None;
        let shared = self.shared.take();
        let Some(v) = &self.structured else {
            return content;
        };
        // A kept answer's text, while `structured` is still its value (comparing is cheaper than
        // rendering; a value changed after `rendered` is rendered again below).
        if let Some(r) = shared
            && r.value == *v
        {
            let size = r.text.len() + content;
            if size <= cap {
                self.structured_text = Some(r.text.clone());
            }
            return size;
        }
        let mut w = Capped {
            text: Vec::new(),
            cap: cap.saturating_sub(content),
            beyond: 0,
        };
        let _ = serde_json::to_writer(&mut w, v);
        let size = w.text.len() + w.beyond + content;
        if w.beyond == 0 {
            // serde_json writes UTF-8 only.
            self.structured_text = String::from_utf8(w.text).ok();
        }
        size
    }
}

/// Keeps what is written up to `cap` bytes and counts the rest.
struct Capped {
    text: Vec<u8>,
    cap: usize,
    beyond: usize,
}

impl std::io::Write for Capped {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        if self.beyond == 0 && self.text.len() + b.len() <= self.cap {
            self.text.extend_from_slice(b);
        } else {
            self.beyond += b.len();
        }
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
