//! The bare rmcp server of `bare_rmcp.rs` on mimalloc, the allocator archgate's binary uses: the
//! bench's second reference, so a ratio bought by the allocator alone is visible as such.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "bare/server.rs"]
mod server;

fn main() -> std::io::Result<()> {
    server::main()
}
