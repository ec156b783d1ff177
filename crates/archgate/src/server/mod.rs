//! Transports: stdio and streamable HTTP, sharing one MCP handler.

pub mod accept;
mod answer_end;
mod apart;
mod bearer;
pub mod bridge;
pub mod daemon;
pub mod frames;
pub mod health;
pub mod http;
pub mod instances;
pub mod limits;
pub mod mcp;
mod moved;
mod named_client;
pub mod peer;
pub mod port_holder;
pub mod progress;
pub mod prompts;
pub mod relay;
pub mod render;
pub mod resources;
pub mod state_file;
pub mod stdio;
pub mod tasks;
