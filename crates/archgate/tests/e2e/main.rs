//! End-to-end checks of the real `archgate` binary: started as a process with private XDG
//! directories, spoken to over stdio (JSON-RPC lines) and over loopback HTTP (plain HTTP/1.1 on
//! a `TcpStream`), as any MCP client would. No part of archgate is linked into this test.

// These tests start the archgate binary itself; that is their whole point, so the workspace rule
// that only crates/exec spawns processes does not apply to them.
#![allow(clippy::disallowed_methods)]

mod bridge;
mod cli;
mod clients;
mod desktop;
mod harness;
mod http;
mod journal;
mod machine;
mod mcp_http;
mod network_bus;
mod page_clients;
mod stdio;
mod upkeep;
mod wire;
