//! archgate: the binary. Everything is in the library (`lib.rs`).

// The allocator (see the workspace Cargo.toml: a fifth of the CPU of a call went to glibc's malloc).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    archgate::main()
}
