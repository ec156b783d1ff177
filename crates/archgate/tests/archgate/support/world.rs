//! The world every test's archgate runs in: no polkit and no system bus, whatever the machine
//! runs. On a machine with polkitd and archgate's actions installed (what the Arch package
//! does), a normal user's archgate under `presence = auto` asks polkit for every weighty yes and
//! no agent answers in a test; the developer's own polkitd must not change a result. So each
//! process the harness starts loads `tests/world/no-polkit.c` (built here once per source text,
//! with the C compiler Rust links with), which makes `/usr/share/polkit-1/actions` and
//! `/run/dbus` look absent to it. A mount namespace does the same only for root: a normal user's
//! namespace shows root's files as unmapped and archgate's trust checks then refuse every
//! program. Tests about presence choose `approval.presence` in their config and find polkit
//! "not installed" here; polkit itself is exercised by `tests/run-polkit.sh` and by
//! `person::presence` tests against a test root.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Our own C source (see its header).
const SOURCE: &str = include_str!("../../../../../tests/world/no-polkit.c");

/// The shared object to put in `LD_PRELOAD`, built on first use. Its name carries a hash of the
/// source, and it is written under another name and renamed into place, so runs at once and
/// runs of older sources never meet a half-written or stale file.
pub fn no_polkit() -> &'static Path {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    LIB.get_or_init(build)
}

fn build() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("world");
    std::fs::create_dir_all(&dir).expect("the world's build directory");
    let lib = dir.join(format!("no-polkit-{:016x}.so", fnv1a(SOURCE.as_bytes())));
    if lib.is_file() {
        return lib;
    }
    let work = tempfile::tempdir_in(&dir).expect("a build directory");
    let src = work.path().join("no-polkit.c");
    std::fs::write(&src, SOURCE).unwrap();
    let built = work.path().join("no-polkit.so");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let out = Command::new(&cc)
        .args(["-shared", "-fPIC", "-O2", "-o"])
        .arg(&built)
        .arg(&src)
        .arg("-ldl")
        .output()
        .unwrap_or_else(|e| panic!("{cc} (to build the tests' world without polkit): {e}"));
    assert!(
        out.status.success(),
        "{cc} could not build tests/world/no-polkit.c: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::rename(&built, &lib).expect("the world's library in place");
    lib
}

/// FNV-1a, 64 bits: a name for one source text, not a security measure.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}
