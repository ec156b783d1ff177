//! Transports: stdio and streamable HTTP, sharing one MCP handler.

pub mod bridge;
#[cfg(feature = "conformance")]
pub mod conformance;
pub mod http;
pub mod limits;
pub mod mcp;
pub mod progress;
pub mod prompts;
pub mod relay;
pub mod resources;
pub mod stdio;
