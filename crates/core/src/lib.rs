//! archgate-core: the gate every call passes, and everything it stands on.
//!
//! Read `gate::Gate::call` first: admit → policy → resolve → approval → execute → record. The
//! rest of the crate is what those steps need: `config` (raw → validated → `Arc` snapshot,
//! reload), `paths` (every location), `resolve` (names to checked targets), `approval` (the
//! broker where calls wait for the person), `person` (what only the person changes), `audit`
//! (one JSON line per call), `counters`, `text` (agent-written text made safe to show),
//! `sentence` (a question in one plain sentence), `picture` (what a question can
//! show drawn), and `tool` (what a tool is to the gate).
//!
//! This crate knows nothing of MCP or HTTP; the binary adapts it.

pub mod agent;
pub mod approval;
pub mod audit;
pub mod clients;
pub mod clock;
pub mod config;
pub mod counters;
pub mod diff;
pub mod error_kind;
pub mod file_watch;
pub mod gate;
pub mod paths;
pub mod person;
pub mod phrase;
pub mod picture;
pub mod presence;
pub mod preview;
pub mod private_file;
pub mod provenance;
pub mod resolve;
pub mod schema;
pub mod sentence;
pub mod text;
pub mod token_id;
pub mod tool;
pub mod tool_error;
pub mod tool_output;
pub mod untrusted;

pub use archgate_exec as exec;
pub use archgate_policy as policy;
