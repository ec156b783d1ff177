//! A bare rmcp server: tools answering constant JSON values, served by rmcp's
//! `StreamableHttpService` on axum with TCP_NODELAY — the stack archgate is built on (this
//! crate's very rmcp, axum, hyper and tokio, with their features), with nothing of archgate's
//! around it. Not a test: bench/rmcp/run.sh builds it (`cargo bench --no-run`) and measures
//! archgate against it.
//!
//!   bare_rmcp --bench [NAME=CONSTANT.json ...]   tool NAME answers the file's JSON
//!                                                 (none given: `system_status` answers `{"ok":true}`)
//!
//! Listens on a free loopback port and prints `{"event":"listening","port":N}` on stdout. The
//! bench gives it archgate's own answer to each tool it calls, so both serialize the same value.
//!
//! This target runs it on the system allocator, as the SDK comes (the reference);
//! `bare_rmcp_mimalloc` runs the very same server on mimalloc, the allocator archgate's binary
//! uses, so the bench can show how much of the gap the allocator alone accounts for.

#[path = "bare/server.rs"]
mod server;

fn main() -> std::io::Result<()> {
    server::main()
}
