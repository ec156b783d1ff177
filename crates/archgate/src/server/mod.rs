//! Transports: stdio and streamable HTTP, sharing one MCP handler.

pub mod http;
pub mod mcp;
pub mod stdio;
