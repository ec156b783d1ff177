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

/// `scripts/link-order.sh --map`: the list's names (demangled, or a symbol itself) become this
/// build's symbols in the list's order, every instance of a name; a name the build lacks is
/// skipped, not an error (issue 34: the layout that keeps idle RSS low; a stale list only costs
/// memory). Run on the test's own binary, whose symbols `nm` lists as a release build's are.
#[test]
fn the_link_order_list_maps_to_this_builds_symbols_in_its_order() {
    let nm = |demangle: bool| {
        let mut c = std::process::Command::new("nm");
        if demangle {
            c.arg("-C");
        }
        let out = c
            .args(["--defined-only", crate::support::BIN])
            .output()
            .unwrap();
        assert!(out.status.success(), "nm failed");
        String::from_utf8(out.stdout).unwrap()
    };
    let code = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| matches!(l.split(' ').nth(1), Some("t" | "T" | "w" | "W")))
            .map(|l| l.splitn(3, ' ').nth(2).unwrap().to_owned())
            .collect()
    };
    let (mangled, demangled) = (code(&nm(false)), code(&nm(true)));
    assert_eq!(mangled.len(), demangled.len());
    let symbols_of = |name: &str| -> Vec<&str> {
        (0..mangled.len())
            .filter(|&i| demangled[i] == name)
            .map(|i| mangled[i].as_str())
            .collect()
    };
    // A name with one symbol, a name with several (a generic function's instances), and a
    // symbol listed as itself.
    let one = "archgate::cli::command";
    let several = "alloc::raw_vec::RawVec<T,A>::grow_one";
    let itself = symbols_of("<&T as core::fmt::Debug>::fmt")[0].to_owned();
    assert_eq!(symbols_of(one).len(), 1, "{one}");
    assert!(symbols_of(several).len() > 1, "{several}");
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("list");
    std::fs::write(
        &list,
        format!("# a comment\n{several}\nno::such::function\n{itself}\n{one}\n{one}\n"),
    )
    .unwrap();
    let script = crate::manifest_dir().join("../../scripts/link-order.sh");
    let out = std::process::Command::new("bash")
        .arg(&script)
        .args(["--map", crate::support::BIN])
        .arg(&list)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
    let mut want: Vec<&str> = symbols_of(several);
    want.push(&itself);
    want.extend(symbols_of(one));
    assert_eq!(got, want);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("3 of 4 listed functions found"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
