//! Package repositories for the stand-in AUR, made with real `git` (plumbing, so a test can
//! write exactly the tree it means, hostile names included) and served over git's smart HTTP by
//! `git http-backend` run as a CGI program, as aur.archlinux.org serves `<pkgbase>.git`.

// The fixtures are built and served by real git, started here directly: this is the test's
// stand-in for the AUR's server, not archgate running a program.
#![allow(clippy::disallowed_methods)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::{Reply, Request};

/// A directory of bare repositories, `<root>/<pkgbase>.git`, and an empty HOME for the git
/// commands that build and serve them (no ~/.gitconfig of whoever runs the tests).
pub struct GitRoot {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    home: PathBuf,
}

/// One entry of a tree a test writes.
pub enum Entry<'a> {
    File(&'a str, &'a [u8]),
    Executable(&'a str, &'a [u8]),
    Symlink(&'a str, &'a str),
}

impl GitRoot {
    pub fn new() -> GitRoot {
        let dir = tempfile::tempdir().expect("tmp");
        let root = dir.path().join("repos");
        let home = dir.path().join("home");
        std::fs::create_dir_all(&root).expect("root");
        std::fs::create_dir_all(&home).expect("home");
        GitRoot {
            _dir: dir,
            root,
            home,
        }
    }

    pub fn repo(&self, pkgbase: &str) -> PathBuf {
        self.root.join(format!("{pkgbase}.git"))
    }

    fn git(&self, dir: &Path) -> Command {
        let mut c = Command::new("git");
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("LC_ALL", "C")
            .arg(format!("--git-dir={}", dir.display()));
        c
    }

    fn run(&self, mut c: Command, stdin: &[u8]) -> String {
        let mut child = c
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("git runs");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(stdin)
            .expect("write stdin");
        let out = child.wait_with_output().expect("git ends");
        assert!(
            out.status.success(),
            "git failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout)
            .expect("utf-8")
            .trim()
            .to_owned()
    }

    /// An empty bare repository (what the AUR serves for a name it does not know).
    pub fn init(&self, pkgbase: &str) -> PathBuf {
        let dir = self.repo(pkgbase);
        if !dir.exists() {
            let mut c = self.git(&dir);
            c.args(["init", "--bare", "--quiet", "--template=", "-b", "master"])
                .arg(&dir);
            self.run(c, b"");
        }
        dir
    }

    /// A blob with these bytes.
    pub fn blob(&self, pkgbase: &str, bytes: &[u8]) -> String {
        let dir = self.init(pkgbase);
        let mut c = self.git(&dir);
        c.args(["hash-object", "-w", "--stdin"]);
        self.run(c, bytes)
    }

    /// A tree of raw `(mode, name, object id)` entries, written as git's tree object format
    /// itself (`--literally`): nothing checks the names, as a hostile server would not.
    pub fn raw_tree(&self, pkgbase: &str, entries: &[(&str, &str, &str)]) -> String {
        let dir = self.init(pkgbase);
        let mut sorted: Vec<&(&str, &str, &str)> = entries.iter().collect();
        sorted.sort_by(|a, b| a.1.cmp(b.1));
        let mut bytes = Vec::new();
        for (mode, name, id) in sorted {
            bytes.extend_from_slice(format!("{mode} {name}\0").as_bytes());
            bytes.extend_from_slice(&hex_bytes(id));
        }
        let mut c = self.git(&dir);
        c.args(["hash-object", "-w", "-t", "tree", "--literally", "--stdin"]);
        self.run(c, &bytes)
    }

    /// A tree of these files.
    pub fn tree(&self, pkgbase: &str, files: &[Entry<'_>]) -> String {
        let mut raw = Vec::new();
        for e in files {
            let (mode, name, bytes) = match e {
                Entry::File(n, b) => ("100644", *n, *b),
                Entry::Executable(n, b) => ("100755", *n, *b),
                Entry::Symlink(n, t) => ("120000", *n, t.as_bytes()),
            };
            raw.push((mode, name, self.blob(pkgbase, bytes)));
        }
        let refs: Vec<(&str, &str, &str)> =
            raw.iter().map(|(m, n, i)| (*m, *n, i.as_str())).collect();
        self.raw_tree(pkgbase, &refs)
    }

    /// A commit of `tree` on top of the branch (or replacing it when `parent` is `None` and the
    /// branch exists: a rewritten history), by `author` on `date` (`2024-01-01T12:00:00+0000`).
    /// Moves `master` to it and answers its id.
    pub fn commit(
        &self,
        pkgbase: &str,
        tree: &str,
        parent: Option<&str>,
        author: &str,
        subject: &str,
        date: &str,
    ) -> String {
        let dir = self.init(pkgbase);
        let email = format!("{}@example.org", author.to_lowercase().replace(' ', "."));
        let mut c = self.git(&dir);
        c.env("GIT_AUTHOR_NAME", author)
            .env("GIT_AUTHOR_EMAIL", &email)
            .env("GIT_AUTHOR_DATE", date)
            .env("GIT_COMMITTER_NAME", author)
            .env("GIT_COMMITTER_EMAIL", &email)
            .env("GIT_COMMITTER_DATE", date)
            .args(["commit-tree", tree, "-m", subject]);
        if let Some(p) = parent {
            c.args(["-p", p]);
        }
        let id = self.run(c, b"");
        let mut u = self.git(&dir);
        u.args(["update-ref", "refs/heads/master", &id]);
        self.run(u, b"");
        id
    }

    /// The entries of `tree` as `(mode, name, object id)`.
    pub fn ls_tree(&self, pkgbase: &str, tree: &str) -> Vec<(String, String, String)> {
        let mut c = self.git(&self.repo(pkgbase));
        c.args(["ls-tree", tree]);
        self.run(c, b"")
            .lines()
            .map(|l| {
                let (meta, name) = l.split_once('\t').expect("tab");
                let m: Vec<&str> = meta.split(' ').collect();
                (m[0].to_owned(), name.to_owned(), m[2].to_owned())
            })
            .collect()
    }

    /// Answers one smart-HTTP request for `/<pkgbase>.git/...` by `git http-backend` (CGI).
    pub fn serve(&self, req: &Request) -> Reply {
        let mut c = Command::new("git");
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_PROJECT_ROOT", &self.root)
            .env("GIT_HTTP_EXPORT_ALL", "1")
            .env("PATH_INFO", &req.path)
            .env("QUERY_STRING", &req.raw_query)
            .env("REQUEST_METHOD", &req.method)
            .env("REMOTE_ADDR", "127.0.0.1")
            .env("CONTENT_LENGTH", req.body.len().to_string())
            .arg("http-backend");
        if let Some(t) = req.header("content-type") {
            c.env("CONTENT_TYPE", t);
        }
        if let Some(e) = req.header("content-encoding") {
            c.env("HTTP_CONTENT_ENCODING", e);
        }
        if let Some(p) = req.header("git-protocol") {
            c.env("GIT_PROTOCOL", p);
        }
        let mut child = c
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("git http-backend runs");
        let mut stdin = child.stdin.take().expect("stdin");
        let body = req.body.clone();
        let writer = std::thread::spawn(move || {
            let _ = stdin.write_all(&body);
        });
        let out = child.wait_with_output().expect("http-backend ends");
        let _ = writer.join();
        cgi_reply(&out.stdout)
    }
}

/// A CGI answer (headers, a blank line, the body) as the server's reply.
fn cgi_reply(out: &[u8]) -> Reply {
    let (split, skip) = match out.windows(4).position(|w| w == b"\r\n\r\n") {
        Some(i) => (i, 4),
        None => match out.windows(2).position(|w| w == b"\n\n") {
            Some(i) => (i, 2),
            None => return Reply::Status(500, vec![], b"bad CGI answer".to_vec()),
        },
    };
    let head = String::from_utf8_lossy(&out[..split]).into_owned();
    let body = out[split + skip..].to_vec();
    let mut status = 200;
    let mut headers = Vec::new();
    for line in head.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let v = v.trim().to_owned();
        if k.eq_ignore_ascii_case("status") {
            status = v
                .split_whitespace()
                .next()
                .and_then(|s| s.parse().ok())
                .unwrap_or(500);
        } else {
            let k: &'static str = match k.to_ascii_lowercase().as_str() {
                "content-type" => "Content-Type",
                "cache-control" => "Cache-Control",
                "expires" => "Expires",
                "pragma" => "Pragma",
                _ => continue,
            };
            headers.push((k, v));
        }
    }
    Reply::Status(status, headers, body)
}

fn hex_bytes(id: &str) -> Vec<u8> {
    (0..id.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&id[i..i + 2], 16).expect("hex"))
        .collect()
}
