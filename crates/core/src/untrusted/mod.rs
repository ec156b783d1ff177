//! What each session read that archgate did not write, for a while (`[approval]
//! untrusted_window_s`): the gate records every answer of a tool whose provenance is
//! `Untrusted` (`crate::provenance`) here, and for an act or destructive call of the same
//! session within the window, a standing rule (unless it opted in, `after_untrusted`) or
//! developer mode does not approve: the person is asked, told what the session read and how long
//! ago, and which of the call's strings appeared verbatim in that text.
//!
//! A session is an MCP session over HTTP, a bridged stdio connection, the in-process stdio
//! server, or — for a stateless request — the client's name; a read is recorded under the
//! session and under its client's name too, so a stateless request of the same client follows
//! its sessions' reads. Memory is bounded: at most [`MAX_SESSIONS`] sessions, each with
//! [`READS_PER_SESSION`] reads, each with at most [`TOKENS_PER_READ`] hashed strings — when they
//! are full the two oldest are folded into one (at most [`EARLIER_TOKENS`] strings, the older
//! first), so no number of reads pushes a read out inside the window; past the session cap the
//! session that read longest ago is forgotten first.
//!
//! **Invariant:** a yes to one question does not clear the window; only time does.

use serde_json::Value;
use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::BuildHasher;
use std::sync::Mutex;

use crate::provenance::Source;
use crate::tool::{Content, ToolOutput};

/// Sessions remembered at once.
pub const MAX_SESSIONS: usize = 128;
/// Reads remembered per session (the latest).
pub const READS_PER_SESSION: usize = 8;
/// Distinct strings kept per read (the first ones of the answer).
pub const TOKENS_PER_READ: usize = 1024;
/// Distinct strings kept for the earlier reads folded into one when a session's reads are full.
pub const EARLIER_TOKENS: usize = 2 * TOKENS_PER_READ;
/// The longest label of folded reads.
const MAX_FOLDED_LABEL: usize = 300;
/// A string shorter than this is too common to point at.
pub const MIN_TOKEN_CHARS: usize = 8;
/// A string longer than this is not kept (nor looked for).
const MAX_TOKEN_CHARS: usize = 512;
/// Matched strings shown in one question.
const MATCHES_SHOWN: usize = 5;

/// The key of a call's session.
pub fn client_key(client: &str) -> String {
    format!("client:{client}")
}

/// One read of untrusted text.
#[derive(Debug, Clone)]
struct Read {
    source: Source,
    label: String,
    at: u64,
    tokens: HashSet<u64>,
}

/// What an act call follows: the session's latest untrusted read within the window.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Follows {
    pub source: Source,
    /// What was read ("AUR package foo's PKGBUILD and files").
    pub label: String,
    /// Seconds between that read and this call.
    pub age_s: u64,
    /// The call's strings (≥ [`MIN_TOKEN_CHARS`]) that appeared verbatim in text read within the
    /// window, longest first.
    pub matched: Vec<String>,
    /// The other sources read within the window (labels), newest first.
    pub also: Vec<String>,
    /// All of it in one line for the person: "this follows text from …, read 12 s ago" (the
    /// label and the matches are the agent's and the text's words: renderers escape them).
    pub sentence: String,
}

/// One line for the person: "this follows text from …, read 12 s ago; …", naming the other
/// sources read within the window too (`also`).
fn sentence(label: &str, age_s: u64, matched: &[String], also: &[String]) -> String {
    let mut s = format!("this follows text from {label}, read {age_s} s ago");
    if !also.is_empty() {
        s.push_str(&format!(" (also read just before: {})", also.join("; ")));
    }
    s.push_str("; a standing rule or developer mode does not approve it");
    if !matched.is_empty() {
        let quoted: Vec<String> = matched.iter().map(|m| format!("{m:?}")).collect();
        s.push_str(&format!(
            "; the call repeats what that text said: {}",
            quoted.join(", ")
        ));
    }
    s
}

/// Every session's recent untrusted reads, and every client's.
///
/// The client's entry holds the reads of all its sessions and is what an act call is judged on
/// together with its session's: a session id is the agent's to choose (a stateless request may
/// name any), and sessions are evicted past [`MAX_SESSIONS`] — neither may end the window. The
/// clients are kept apart from the sessions, so no number of sessions can evict one; their names
/// are the person's (a token's client, a known bridged name), at most [`MAX_CLIENTS`].
#[derive(Default)]
pub struct Ledger {
    sessions: Mutex<HashMap<String, VecDeque<Read>>>,
    clients: Mutex<HashMap<String, VecDeque<Read>>>,
    hasher: RandomState,
}

/// Clients kept at most (the person's; past it, the one that read longest ago is forgotten).
pub const MAX_CLIENTS: usize = 256;

/// Adds `read` to `key`'s reads in `m`, forgetting that key's reads past the window; a new key
/// that finds `cap` keys forgets every read past the window, then, still full, the key that read
/// longest ago.
fn remember(
    m: &mut HashMap<String, VecDeque<Read>>,
    key: &str,
    read: &Read,
    cap: usize,
    now: u64,
    window_s: u64,
) {
    let fresh = |r: &Read| now.saturating_sub(r.at) < window_s;
    // The whole map is swept only when a new key finds it full: a read of a key already here
    // costs that key's reads, not every session's (this runs under a lock all sessions share;
    // `follows` judges each read's age itself, so a stale one kept a while says nothing).
    if let Some(reads) = m.get_mut(key) {
        reads.retain(fresh);
    } else if m.len() >= cap {
        m.retain(|_, reads| {
            reads.retain(fresh);
            !reads.is_empty()
        });
    }
    if !m.contains_key(key) && m.len() >= cap {
        let oldest = m
            .iter()
            .min_by_key(|(_, r)| r.back().map_or(0, |r| r.at))
            .map(|(k, _)| k.clone());
        if let Some(k) = oldest {
            m.remove(&k);
        }
    }
    let reads = m.entry(key.to_owned()).or_default();
    // The same text read again (the same source and subject) is one read, now: a flood of a
    // harmless read cannot push out the one that carried an instruction (attack 6 F1); its
    // strings are kept with the new ones, the older first.
    if let Some(i) = reads
        .iter()
        .position(|r| r.source == read.source && r.label == read.label)
    {
        let mut same = reads.remove(i).unwrap_or_else(|| read.clone());
        same.at = read.at;
        for t in &read.tokens {
            if same.tokens.len() >= TOKENS_PER_READ {
                break;
            }
            same.tokens.insert(*t);
        }
        reads.push_back(same);
        return;
    }
    // Full: the two oldest become one, never forgotten inside the window — reads of other
    // sources cannot push out the one whose words a later call repeats (class: *a bounded
    // memory that the agent's own reads can empty*).
    if reads.len() >= READS_PER_SESSION
        && let (Some(older), Some(newer)) = (reads.pop_front(), reads.pop_front())
    {
        reads.push_front(fold(older, newer));
    }
    reads.push_back(read.clone());
}

/// Two reads as one: the older's source, both labels (bounded), the newer's time (the window
/// ends for the pair when it ends for the newer) and the strings of both up to
/// [`EARLIER_TOKENS`], the older's first.
fn fold(older: Read, newer: Read) -> Read {
    let mut label = format!("{}; {}", older.label, newer.label);
    if label.chars().count() > MAX_FOLDED_LABEL {
        label = label.chars().take(MAX_FOLDED_LABEL).collect::<String>() + "…";
    }
    let mut tokens = older.tokens;
    for t in newer.tokens {
        if tokens.len() >= EARLIER_TOKENS {
            break;
        }
        tokens.insert(t);
    }
    Read {
        source: older.source,
        label,
        at: older.at.max(newer.at),
        tokens,
    }
}

impl Ledger {
    /// `session` (and `client`'s key) read `output`, from `source`, at `now`. Reads older than
    /// `window_s` are forgotten here too.
    pub fn record(
        &self,
        session: &str,
        client: &str,
        (source, label): (Source, String),
        output: &ToolOutput,
        now: u64,
        window_s: u64,
    ) {
        let read = Read {
            source,
            label,
            at: now,
            tokens: self.tokens_of(output),
        };
        let client = client_key(client);
        if session != client {
            let mut m = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
            remember(&mut m, session, &read, MAX_SESSIONS, now, window_s);
        }
        let mut c = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        remember(&mut c, &client, &read, MAX_CLIENTS, now, window_s);
    }

    /// What an act call of `session` (of `client`) with `args` follows at `now`, if the session
    /// or any session of its client read untrusted text less than `window_s` ago.
    pub fn follows(
        &self,
        session: &str,
        client: &str,
        args: &Value,
        now: u64,
        window_s: u64,
    ) -> Option<Follows> {
        let m = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        let c = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        let recent: Vec<&Read> = m
            .get(session)
            .into_iter()
            .chain(c.get(&client_key(client)))
            .flatten()
            .filter(|r| r.at <= now && now - r.at < window_s)
            .collect();
        let latest = recent.iter().max_by_key(|r| r.at)?;
        let mut matched: Vec<String> = Vec::new();
        // The read the call repeats words of, the latest such: the one that asked for it, even
        // with a harmless read after it (attack 5b F12: the question named only the latest).
        let mut source: Option<&Read> = None;
        for s in candidates(args) {
            let h = self.hasher.hash_one(&s);
            let holders = recent.iter().filter(|r| r.tokens.contains(&h));
            if let Some(r) = holders.max_by_key(|r| r.at) {
                if source.is_none_or(|now| r.at > now.at) {
                    source = Some(r);
                }
                if !matched.contains(&s) {
                    matched.push(s);
                }
            }
        }
        let named = source.unwrap_or(latest);
        // Longest first; a string inside a longer match adds nothing.
        matched.sort_by_key(|s| std::cmp::Reverse(s.chars().count()));
        let mut shown: Vec<String> = Vec::new();
        for s in matched {
            if shown.len() < MATCHES_SHOWN && !shown.iter().any(|l| l.contains(&s)) {
                shown.push(s);
            }
        }
        // Every other source read within the window, newest first, each once.
        let mut by_age: Vec<&&Read> = recent.iter().collect();
        by_age.sort_by_key(|r| std::cmp::Reverse(r.at));
        let mut also: Vec<String> = Vec::new();
        for r in by_age {
            if r.label != named.label && !also.contains(&r.label) {
                also.push(r.label.clone());
            }
        }
        let age_s = now - named.at;
        Some(Follows {
            source: named.source,
            sentence: sentence(&named.label, age_s, &shown, &also),
            label: named.label.clone(),
            age_s,
            matched: shown,
            also,
        })
    }

    /// The hashed strings of an answer: every word, and every run of two and three words, of
    /// at least [`MIN_TOKEN_CHARS`] characters, in every text it carries.
    fn tokens_of(&self, output: &ToolOutput) -> HashSet<u64> {
        let mut out = HashSet::new();
        let mut add = |text: &str| {
            if out.len() >= TOKENS_PER_READ {
                return;
            }
            // Repeats are kept once: look at a few times as many as are kept.
            for t in phrases(text, 4 * TOKENS_PER_READ) {
                if out.len() >= TOKENS_PER_READ {
                    return;
                }
                out.insert(self.hasher.hash_one(&t));
            }
        };
        for c in &output.content {
            if let Content::Text(t) = c {
                add(t);
            }
        }
        if let Some(v) = &output.structured {
            each_string(v, &mut |s| add(s));
        }
        out
    }
}

/// Every string in a JSON value, depth first (object keys too: a map keyed by text).
fn each_string(v: &Value, f: &mut dyn FnMut(&str)) {
    match v {
        Value::String(s) => f(s),
        Value::Array(a) => a.iter().for_each(|x| each_string(x, f)),
        Value::Object(m) => m.iter().for_each(|(k, x)| {
            f(k);
            each_string(x, f);
        }),
        _ => {}
    }
}

/// A word without the quotes and punctuation text puts around it.
fn trim_word(w: &str) -> &str {
    w.trim_matches(|c: char| "\"'`()[]{}<>,;:.!?*".contains(c))
}

/// The words of `text`, and runs of two and three, that are long enough to point at.
/// At most `max` of them, from the start: a long answer is not turned into strings past what is
/// kept.
fn phrases(text: &str, max: usize) -> Vec<String> {
    let words: Vec<&str> = text
        .split_whitespace()
        .map(trim_word)
        .filter(|w| !w.is_empty())
        .collect();
    let mut out = Vec::new();
    for i in 0..words.len() {
        if out.len() >= max {
            break;
        }
        for n in 1..=3 {
            if i + n > words.len() {
                break;
            }
            let p = words[i..i + n].join(" ");
            let len = p.chars().count();
            if (MIN_TOKEN_CHARS..=MAX_TOKEN_CHARS).contains(&len) {
                out.push(p);
            }
        }
    }
    out
}

/// The strings of a call's arguments that could have come from what the session read: each
/// string argument whole, and its words and runs of words.
fn candidates(args: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut add = |s: &str| {
        let whole = trim_word(s.trim());
        let len = whole.chars().count();
        if (MIN_TOKEN_CHARS..=MAX_TOKEN_CHARS).contains(&len) {
            out.push(whole.split_whitespace().collect::<Vec<_>>().join(" "));
        }
        out.extend(phrases(s, usize::MAX));
    };
    each_string(args, &mut |s| add(s));
    out
}

#[cfg(test)]
mod tests;
