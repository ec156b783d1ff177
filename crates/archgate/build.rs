//! The archgate binary is linked with its relative relocations packed (`DT_RELR`, glibc 2.36
//! and later, which Arch Linux has long shipped): as a position-independent executable it holds
//! some 69,000 of them, 1.6 MiB of `.rela.dyn` the loader read at every start and kept mapped —
//! a third of the daemon's idle memory (issue 34: idle RSS <= 16 MiB). Packed, they take 21 KiB.
//! The binary stays position-independent (ASLR unchanged); only the table's form changes.
//! Held by `tests/archgate/binary.rs`.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
