//! The person's side: what they do from any of their channels (`actions`), the HTTP clients they
//! manage (`clients`), the snippets they paste into MCP clients (`snippets`), and the polkit
//! presence check before a yes that needs it (`presence`), and times as the person reads them
//! (`clock`: local time, time left).

pub mod actions;
pub mod clients;
pub mod clock;
pub mod presence;
pub mod snippets;
