//! End-to-end checks of the real `archgate` binary: started as a process with private XDG
//! directories, spoken to over stdio (JSON-RPC lines) and over loopback HTTP (plain HTTP/1.1 on
//! a `TcpStream`), as any MCP client would.

mod aur_shadow;
mod bridge;
mod bridge_daemon;
mod cli;
mod clients;
mod closed_pipe;
mod desktop;
mod handoff;
mod handoff_omarchy;
mod http;
mod journal;
mod machine;
mod network_bus;
mod page_clients;
mod settled;
mod stdio;
mod upkeep;
