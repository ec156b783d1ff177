//! "See exactly what the agent will receive before it does": for an action that allows it (a
//! screenshot), the person may ask, while the question waits, for the call's output. The gate
//! then runs the call once — the same tool, the same resolved target, a permit as the run's —
//! and holds its output in memory with the waiting call; the person is shown those bytes, and a
//! yes gives the agent those same bytes (the call is not run again); a no, the deadline or the
//! client going away drops them with the call. The output is the run's, so it is bounded as
//! every answer is (`limits.max_output_bytes`), and one call holds at most one.
//!
//! [`Previews`] connects the person's channel (the page) to the waiting call: the gate opens a
//! slot for the call's id while it waits ([`Previews::open`]); a request ([`Previews::request`])
//! reaches only an open slot, and the slot closes when the wait ends.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, oneshot};

/// What the person is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Preview {
    /// The image the agent will receive on a yes, byte for byte.
    Image { data: Arc<[u8]>, mime: &'static str },
    /// Not taken yet (a look that does not take).
    NotTaken,
    /// The run failed: that error is held, and is what a yes gives the agent.
    Failed(String),
}

/// A request to the waiting call: `take` runs the call when nothing is held yet.
pub struct Request {
    pub take: bool,
    pub reply: oneshot::Sender<Preview>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PreviewError {
    #[error("no waiting question {0:?} can show its output before the answer")]
    NotOpen(String),
    #[error("the question {0:?} was answered while its output was being taken")]
    Gone(String),
}

impl PreviewError {
    pub fn kind(&self) -> &'static str {
        match self {
            PreviewError::NotOpen(_) => "no_preview",
            PreviewError::Gone(_) => "not_pending",
        }
    }
}

/// The waiting calls that can show their output, by call id.
#[derive(Default)]
pub struct Previews {
    open: Mutex<HashMap<String, mpsc::Sender<Request>>>,
}

impl std::fmt::Debug for Previews {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Previews").finish_non_exhaustive()
    }
}

/// The gate's end of an open slot; the slot closes when this is dropped.
pub struct Slot {
    previews: Arc<Previews>,
    id: String,
    pub requests: mpsc::Receiver<Request>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.previews
            .open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.id);
    }
}

impl Previews {
    /// Opens the slot of call `id` while it waits for the person.
    pub fn open(self: &Arc<Self>, id: &str) -> Slot {
        // A few requests at once at most (a page's clicks); more wait for room.
        let (tx, requests) = mpsc::channel(4);
        self.open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id.to_owned(), tx);
        Slot {
            previews: self.clone(),
            id: id.to_owned(),
            requests,
        }
    }

    /// Whether waiting call `id` can show its output before the answer.
    pub fn is_open(&self, id: &str) -> bool {
        self.open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains_key(id)
    }

    /// The output of waiting call `id`, taken now if `take` and nothing is held yet.
    pub async fn request(&self, id: &str, take: bool) -> Result<Preview, PreviewError> {
        let tx = self
            .open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .cloned()
            .ok_or_else(|| PreviewError::NotOpen(id.to_owned()))?;
        let (reply, rx) = oneshot::channel();
        tx.send(Request { take, reply })
            .await
            .map_err(|_| PreviewError::Gone(id.to_owned()))?;
        rx.await.map_err(|_| PreviewError::Gone(id.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_request_reaches_only_an_open_slot_and_the_slot_closes_with_its_wait() {
        let p = Arc::new(Previews::default());
        assert_eq!(
            p.request("c-1", true).await,
            Err(PreviewError::NotOpen("c-1".into()))
        );
        let mut slot = p.open("c-1");
        let asker = {
            let p = p.clone();
            tokio::spawn(async move { p.request("c-1", false).await })
        };
        let r = slot.requests.recv().await.expect("a request");
        assert!(!r.take);
        let _ = r.reply.send(Preview::NotTaken);
        assert_eq!(asker.await.unwrap(), Ok(Preview::NotTaken));
        drop(slot);
        assert!(matches!(
            p.request("c-1", true).await,
            Err(PreviewError::NotOpen(_))
        ));
    }
}
