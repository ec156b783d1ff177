//! Transports: stdio and streamable HTTP, sharing one MCP handler.

pub mod bridge;
#[cfg(feature = "conformance")]
pub mod conformance;
pub mod daemon;
pub mod frames;
pub mod http;
pub mod instances;
pub mod limits;
pub mod mcp;
pub mod peer;
pub mod progress;
pub mod state_file;
// The conformance build serves the suite's prompts and resources instead of archgate's.
#[cfg_attr(feature = "conformance", allow(dead_code))]
pub mod prompts;
pub mod relay;
#[cfg_attr(feature = "conformance", allow(dead_code))]
pub mod resources;
pub mod stdio;
