//! A small installed system of its own for the health tests (integrity, .pacnew, cache): real
//! packages built with makepkg (as nobody when root), installed, upgraded and removed by real pacman into
//! a temporary root, then damaged by the tests. Each test gets its own world, so damage never
//! leaks into another test or into the shared fixture.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::support::fixture;

/// The versions of `conf-keeper` built (1.10 sorts after 1.2 by vercmp, before it as text).
pub const KEEPER_VERSIONS: [&str; 4] = ["1.0", "1.1", "1.2", "1.10"];

/// Built packages: conf-keeper in every `KEEPER_VERSIONS`, conf-saver 1.0, many-files 1.0.
pub fn built() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
        let out = tmp.join("pkghealth-pkgs-v2");
        if out.join(".done").exists() {
            return out;
        }
        // Built aside and renamed into place: two runs at once sharing a target directory never
        // remove or read each other's half-built directory; the second to finish uses the first's.
        let work = tempfile::tempdir_in(tmp).unwrap();
        for v in KEEPER_VERSIONS {
            makepkg(work.path(), "conf-keeper", v, KEEPER_BODY);
        }
        makepkg(work.path(), "conf-saver", "1.0", SAVER_BODY);
        makepkg(work.path(), "many-files", "1.0", MANY_BODY);
        std::fs::write(work.path().join(".done"), "").unwrap();
        match std::fs::rename(work.path(), &out) {
            Ok(()) => {
                let _ = work.keep();
                out
            }
            // Another run's, complete.
            Err(_) if out.join(".done").exists() => out,
            // Something half-built by an older harness is in the way: ours, where it is.
            Err(_) => work.keep(),
        }
    })
}

/// A backup file whose text changes with the version, a symlink, and a data file.
const KEEPER_BODY: &str = r#"backup=('etc/keeper.conf')
package() {
  install -d "$pkgdir/etc" "$pkgdir/usr/share/keeper"
  printf 'setting = %s\nshared = yes\nline three\nline four\nline five\nline six\nline seven\nlast = %s\n' "$pkgver" "$pkgver" > "$pkgdir/etc/keeper.conf"
  ln -s target-a "$pkgdir/usr/share/keeper/link"
  printf 'data %s\n' "$pkgver" > "$pkgdir/usr/share/keeper/data"
}
"#;

const SAVER_BODY: &str = r#"backup=('etc/saver/saver.conf')
package() {
  install -d "$pkgdir/etc/saver"
  printf 'saved = no\n' > "$pkgdir/etc/saver/saver.conf"
}
"#;

/// More files than an answer lists per package.
const MANY_BODY: &str = r#"package() {
  install -d "$pkgdir/usr/share/many"
  for i in $(seq 1 70); do echo "$i" > "$pkgdir/usr/share/many/f$i"; done
}
"#;

fn makepkg(out: &Path, name: &str, ver: &str, body: &str) {
    let dir = tempfile::Builder::new()
        .prefix("archgate-pkghealth")
        .tempdir_in("/tmp")
        .unwrap();
    let pkgbuild = format!(
        "pkgname={name}\npkgver={ver}\npkgrel=1\npkgdesc=\"archgate health test package\"\n\
         arch=('x86_64')\nurl='https://example.invalid/{name}'\nlicense=('MIT')\n\
         options=('!strip' '!debug')\n{body}"
    );
    std::fs::write(dir.path().join("PKGBUILD"), pkgbuild).unwrap();
    // makepkg refuses root: as root it runs as nobody, as anyone else as that user.
    let mut cmd = if crate::support::is_root() {
        let nobody = Some(65534);
        for p in [dir.path().to_owned(), dir.path().join("PKGBUILD")] {
            std::os::unix::fs::chown(&p, nobody, nobody).unwrap();
        }
        let mut c = Command::new("setpriv");
        c.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "env"]);
        c
    } else {
        Command::new("env")
    };
    let d = dir.path().display().to_string();
    let out_cmd = cmd
        .arg(format!("HOME={d}"))
        .arg("PKGEXT=.pkg.tar.zst")
        .arg(format!("PKGDEST={d}"))
        .arg(format!("SRCDEST={d}"))
        .arg(format!("BUILDDIR={d}/build"))
        .arg("PACKAGER=Archgate Tests <tests@archgate.invalid>")
        .args(["makepkg", "--nodeps", "--noconfirm", "--nocheck"])
        .current_dir(dir.path())
        .env("LC_ALL", "C")
        .output()
        .expect("run makepkg");
    assert!(
        out_cmd.status.success(),
        "makepkg {name} {ver}: {}",
        String::from_utf8_lossy(&out_cmd.stderr)
    );
    let file = format!("{name}-{ver}-1-x86_64.pkg.tar.zst");
    std::fs::copy(dir.path().join(&file), out.join(&file)).unwrap();
}

/// A built package file.
pub fn pkg(name: &str, ver: &str) -> PathBuf {
    let p = built().join(format!("{name}-{ver}-1-x86_64.pkg.tar.zst"));
    assert!(p.exists(), "{} not built", p.display());
    p
}

/// A package file of the shared fixture (`pkgs/`).
pub fn fixture_pkg(stem: &str) -> PathBuf {
    fixture().join("pkgs").join(format!("{stem}.pkg.tar.zst"))
}

/// One test's system: its own root, database, cache and log.
pub struct World {
    pub dir: tempfile::TempDir,
    pub conf: PathBuf,
}

impl World {
    pub fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for sub in ["root", "db", "cache", "hooks"] {
            std::fs::create_dir_all(d.join(sub)).unwrap();
        }
        let conf = d.join("pacman.conf");
        std::fs::write(
            &conf,
            format!(
                "[options]\nRootDir = {d}/root\nDBPath = {d}/db\nCacheDir = {d}/cache\n\
                 LogFile = {d}/pacman.log\nGPGDir = {gpg}\nHookDir = {d}/hooks\n\
                 Architecture = x86_64\nSigLevel = Never\nLocalFileSigLevel = Never\n",
                d = d.display(),
                gpg = fixture().join("gnupg").display(),
            ),
        )
        .unwrap();
        World { dir, conf }
    }

    pub fn root(&self) -> PathBuf {
        self.dir.path().join("root")
    }

    pub fn at(&self, rel: &str) -> PathBuf {
        self.root().join(rel)
    }

    pub fn cache(&self) -> PathBuf {
        self.dir.path().join("cache")
    }

    /// Runs a real pacman transaction on this world (no questions); panics when it fails.
    pub fn pacman(&self, args: &[&str]) {
        let mut all = vec!["--noconfirm", "--noprogressbar"];
        all.extend_from_slice(args);
        let (code, out, err) = self.pacman_output(&all);
        assert_eq!(code, 0, "pacman {args:?}: {out}{err}");
    }

    /// Runs real pacman; (exit code, stdout, stderr).
    pub fn pacman_output(&self, args: &[&str]) -> (i32, String, String) {
        let out = crate::support::pacman_command()
            .arg("--config")
            .arg(&self.conf)
            .args(args)
            .env("LC_ALL", "C")
            .env("TZ", "UTC")
            .output()
            .expect("run pacman");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Installs package files with `pacman -U`.
    pub fn install(&self, files: &[PathBuf]) {
        let mut args = vec!["-U".to_owned()];
        args.extend(files.iter().map(|f| f.display().to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        self.pacman(&args);
    }

    pub fn snapshot(&self) -> archgate_pacman::Snapshot {
        crate::support::snapshot_for(&self.conf)
    }
}
