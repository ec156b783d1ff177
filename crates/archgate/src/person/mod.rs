//! The person's side: what they do from any of their channels (`actions`), the HTTP clients they
//! manage (`clients`), the snippets they paste into MCP clients (`snippets`), and the polkit
//! presence check before a yes that needs it (`presence`).

pub mod actions;
pub mod clients;
pub mod presence;
pub mod snippets;
