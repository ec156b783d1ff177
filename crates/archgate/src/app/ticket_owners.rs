//! A trusted relay's ticket (stateless era, `server/relay.rs`) belongs to the identity it was
//! handed to — the token itself, as a task does (`server::tasks::owner`) — not to the client's
//! name: the gate keeps a ticket under the name (`gate::ask`), and a name outlives the grant
//! that held it. A revoked client's successor, or a renamed client's namesake, coming back with
//! the ticket (the person's yes may already be on it) would otherwise be given the call. So the
//! transport notes who was handed each ticket, and a ticket brought back by anyone else reaches
//! the gate as one that was never issued: `ticket_unknown`, nothing runs, one record.
//!
//! Class: *a name string outliving the grant that held it* (attack 4 F2).
//!
//! Bounded: an entry is forgotten [`KEEP`] after it was handed out (longer than any question
//! waits plus the time a settled ticket is kept), and at most [`MAX`] are kept (oldest first).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a ticket's owner is remembered.
pub const KEEP: Duration = Duration::from_secs(3 * 3600);
/// Tickets whose owner is remembered at most.
pub const MAX: usize = 4096;

#[derive(Default)]
pub struct TicketOwners {
    by_ticket: Mutex<HashMap<String, (String, Instant)>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl TicketOwners {
    /// `ticket` was handed to `owner`.
    pub fn handed(&self, ticket: &str, owner: &str) {
        let mut m = lock(&self.by_ticket);
        let now = Instant::now();
        m.retain(|_, (_, at)| now.duration_since(*at) < KEEP);
        if m.len() >= MAX
            && let Some(oldest) = m
                .iter()
                .min_by_key(|(_, (_, at))| *at)
                .map(|(k, _)| k.clone())
        {
            m.remove(&oldest);
        }
        m.insert(ticket.to_owned(), (owner.to_owned(), now));
    }

    /// The ticket to give the gate for `ticket` brought back by `owner`: itself only when
    /// `owner` is known to have been handed it, else one no ticket can be. A ticket whose owner
    /// is not remembered (forgotten past [`KEEP`] or [`MAX`], never noted) fails closed: the
    /// gate may still hold it under the name, and a name is not the grant.
    pub fn brought_back(&self, ticket: &str, owner: &str) -> String {
        match lock(&self.by_ticket).get(ticket) {
            Some((o, _)) if o == owner => ticket.to_owned(),
            _ => format!("{ticket} (not handed to this client)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ticket_brought_back_by_another_identity_is_no_ticket() {
        let t = TicketOwners::default();
        t.handed("q-1", "a1");
        assert_eq!(t.brought_back("q-1", "a1"), "q-1");
        assert_ne!(t.brought_back("q-1", "b2"), "q-1");
        // One whose owner is not remembered (never noted, or forgotten) fails closed.
        assert_ne!(t.brought_back("q-9", "b2"), "q-9");
    }
}
