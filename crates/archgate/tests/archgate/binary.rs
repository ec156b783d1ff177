//! The binary itself: how it is linked (`build.rs`).

use std::io::{Read, Seek, SeekFrom};

/// Every section of an ELF64 little-endian file: name and size, from its section headers.
fn sections(path: &str) -> Vec<(String, u64)> {
    let mut f = std::fs::File::open(path).unwrap();
    let mut head = [0u8; 64];
    f.read_exact(&mut head).unwrap();
    assert_eq!(&head[..4], b"\x7fELF", "{path}: not ELF");
    assert_eq!(
        (head[4], head[5]),
        (2, 1),
        "{path}: not ELF64 little-endian"
    );
    let u16_at = |b: &[u8], o: usize| u16::from_le_bytes([b[o], b[o + 1]]) as usize;
    let u32_at = |b: &[u8], o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap()) as usize;
    let u64_at = |b: &[u8], o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
    let (shoff, shentsize) = (u64_at(&head, 0x28), u16_at(&head, 0x3a));
    let (shnum, shstrndx) = (u16_at(&head, 0x3c), u16_at(&head, 0x3e));
    let mut table = vec![0u8; shentsize * shnum];
    f.seek(SeekFrom::Start(shoff)).unwrap();
    f.read_exact(&mut table).unwrap();
    let header = |i: usize| &table[i * shentsize..(i + 1) * shentsize];
    let names = header(shstrndx);
    let mut strings = vec![0u8; u64_at(names, 32) as usize];
    f.seek(SeekFrom::Start(u64_at(names, 24))).unwrap();
    f.read_exact(&mut strings).unwrap();
    (0..shnum)
        .map(|i| {
            let h = header(i);
            let start = u32_at(h, 0);
            let end = start + strings[start..].iter().position(|&c| c == 0).unwrap();
            (
                String::from_utf8_lossy(&strings[start..end]).into_owned(),
                u64_at(h, 32),
            )
        })
        .collect()
}

/// The binary's relative relocations are packed (`.relr.dyn`): the loader reads a few KiB at
/// every start instead of the 1.6 MiB `.rela.dyn` a position-independent archgate held, which
/// stayed mapped in the daemon's idle memory (issue 34).
#[test]
fn the_binarys_relative_relocations_are_packed() {
    let s = sections(crate::support::BIN);
    let size = |name: &str| s.iter().find(|(n, _)| n == name).map(|(_, z)| *z);
    assert!(size(".relr.dyn").is_some(), "no .relr.dyn: {s:?}");
    let rela = size(".rela.dyn").unwrap_or(0);
    assert!(rela < 256 << 10, ".rela.dyn is {rela} bytes");
}
