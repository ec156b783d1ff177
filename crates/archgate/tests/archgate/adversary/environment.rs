//! Issue 33, items 3, 4 and 8. Class: *programs get an allowlisted environment; the daemon's
//! environment comes from the person's session, never from a client*.
//!
//! What it tries: an agent's client starts archgate with every code-loading variable
//! (`BASH_ENV`, `ENV`, `BASH_FUNC_*%%`, `PERL5OPT`, `PYTHONPATH`, `NODE_OPTIONS`, `LD_*` …),
//! credentials under names no marker list holds (`BW_SESSION`, `OP_SESSION_*`,
//! `BORG_PASSPHRASE`, `*_SESSION_COOKIE`), random names, and a world-writable directory at the
//! front of `PATH` holding a helper a trusted Omarchy script calls by name. Then a call the
//! policy allows runs that trusted script (bash, so `BASH_ENV` would be sourced). Once in-process,
//! once through a daemon the hostile client's bridge started while a second, clean client makes
//! the call. The script records the environment it got (`/proc/PID/environ`, as it was given); nothing outside
//! `archgate_exec::env::TABLE` may be in it, and no hostile code may have run.

use serde_json::{Value, json};
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};

use crate::support::*;

/// A temporary directory on a path every component of which is owned by root or this user and
/// writable by neither group nor others, as the executor's trust rule wants for programs.
fn trusted_tempdir() -> tempfile::TempDir {
    use std::os::unix::fs::MetadataExt;
    let me = std::fs::metadata("/proc/self").unwrap().uid();
    let trusted = |p: &Path| {
        p.canonicalize().is_ok_and(|real| {
            real.ancestors().all(|a| {
                std::fs::metadata(a)
                    .is_ok_and(|m| (m.uid() == 0 || m.uid() == me) && m.mode() & 0o022 == 0)
            })
        })
    };
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let base = [Some(PathBuf::from(env!("CARGO_TARGET_TMPDIR"))), home]
        .into_iter()
        .flatten()
        .find(|b| trusted(b))
        .expect("a trusted base directory: the target's tmp dir or HOME");
    let dir = tempfile::tempdir_in(base).unwrap();
    set_mode(dir.path(), 0o755);
    dir
}

fn set_mode(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn write_exe(p: &Path, text: &str) {
    std::fs::write(p, text).unwrap();
    set_mode(p, 0o755);
}

fn random_word() -> String {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    format!("{:016X}", h.finish())
}

/// The trusted Omarchy install (its `bin/` a search directory), the world-writable directory,
/// the hostile file `BASH_ENV` names and the canaries, around one sandbox.
struct Rig {
    env: Env,
    trusted: tempfile::TempDir,
    world: PathBuf,
}

impl Rig {
    fn new() -> Rig {
        let trusted = trusted_tempdir();
        let t = trusted.path();
        let omarchy = t.join("omarchy");
        let bin = omarchy.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        set_mode(&omarchy, 0o755);
        set_mode(&bin, 0o755);
        std::fs::write(omarchy.join("version"), "4.0.0\n").unwrap();
        // Omarchy 4's registry shape (`omarchy commands --all --json`); our own route.
        std::fs::write(
            t.join("commands.json"),
            r#"{"ok": true, "commands": [
  {"route": "omarchy env probe", "binary": "omarchy-env-probe", "group": "env", "name": "probe", "summary": "Record the environment", "requires_sudo": false, "hidden": false, "args": "", "examples": [], "aliases": [], "filename_route": "omarchy env probe", "routes": ["omarchy env probe"]}
]}"#,
        )
        .unwrap();
        write_exe(
            &bin.join("omarchy"),
            &format!(
                "#!/bin/sh\ncase \"$1\" in\n  version) echo 4.0.0 ;;\n  commands) /usr/bin/cat {} ;;\nesac\n",
                t.join("commands.json").display()
            ),
        );
        // The trusted script: bash (so BASH_ENV would be read), calling a helper by name.
        write_exe(
            &bin.join("omarchy-env-probe"),
            &format!(
                "#!/bin/bash\n/usr/bin/cat /proc/$$/environ > {}\ntrue\narchgate-h33-helper 2>/dev/null\necho recorded\n",
                t.join("dump").display()
            ),
        );

        let env = Env::new();
        let s = env.path("scratch");
        let world = s.join("world");
        std::fs::create_dir(&world).unwrap();
        set_mode(&world, 0o777);
        write_exe(
            &world.join("archgate-h33-helper"),
            &format!("#!/bin/sh\ntouch {}\n", s.join("helper-ran").display()),
        );
        std::fs::write(
            s.join("evil.sh"),
            format!("touch {}\n", s.join("bash-env-ran").display()),
        )
        .unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        env.write_config(&format!(
            "[server]\nport = {port}\n\
             [approval]\npage = false\nnotifications = false\n\
             [exec]\nsearch_dirs = [\"{}\", \"/usr/bin\"]\nrequire_root_owned = true\ntimeout_s = 20\n\
             [policy]\nallow = [\"omarchy_run env probe\"]\n",
            bin.display()
        ));
        Rig {
            env,
            trusted,
            world,
        }
    }

    fn omarchy(&self) -> PathBuf {
        self.trusted.path().join("omarchy")
    }

    /// What the hostile client adds to its environment (and so to archgate's).
    fn hostile(&self) -> Vec<(String, String)> {
        let s = |p: &str| self.env.path("scratch").join(p).display().to_string();
        let w = self.world.display().to_string();
        let mut v: Vec<(String, String)> = [
            ("BASH_ENV", s("evil.sh")),
            ("ENV", s("evil.sh")),
            (
                "BASH_FUNC_true%%",
                format!("() {{ touch {}; }}", s("func-ran")),
            ),
            ("PERL5OPT", "-Mwarnings=FATAL".into()),
            ("PYTHONPATH", s("py")),
            ("NODE_OPTIONS", format!("--require {}", s("x.js"))),
            ("LD_PRELOAD", s("evil.so")),
            ("BW_SESSION", "bw-secret-h33".into()),
            ("OP_SESSION_my", "op-secret-h33".into()),
            ("BORG_PASSPHRASE", "borg-secret-h33".into()),
            ("GITLAB_SESSION_COOKIE", "cookie-secret-h33".into()),
            ("EDITOR", s("evil-editor")),
            ("TERMINAL", s("evil-term")),
            ("PATH", format!("{w}:/usr/bin:/bin")),
            ("XDG_DATA_DIRS", format!("{w}:/usr/share")),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        for i in 0..12 {
            v.push((format!("R{i}_{}", random_word()), random_word()));
        }
        v
    }

    /// The session variables the client's environment also holds: they pass when archgate serves
    /// that client in-process, and must not reach a daemon that serves others.
    fn client_session() -> Vec<(String, String)> {
        vec![
            ("LANG".into(), "de_DE.UTF-8".into()),
            ("WAYLAND_DISPLAY".into(), "wayland-client-one".into()),
        ]
    }

    /// The environment the probe recorded (once it has run).
    fn dump(&self) -> Vec<(String, String)> {
        let bytes = std::fs::read(self.trusted.path().join("dump")).expect("the probe ran");
        String::from_utf8_lossy(&bytes)
            .split('\0')
            .filter(|l| !l.is_empty())
            .map(|l| {
                let (k, v) = l.split_once('=').expect("KEY=VALUE");
                (k.to_owned(), v.to_owned())
            })
            .collect()
    }

    /// Asserts what no program may see or do, prints the figure, and returns the dump.
    #[allow(clippy::print_stdout)] // the figure issue 33 asks a test to print
    fn check(&self, hostile: &[(String, String)]) -> Vec<(String, String)> {
        let seen = self.dump();
        let outside: Vec<&String> = seen
            .iter()
            .map(|(k, _)| k)
            .filter(|k| archgate_exec::env::row(k).is_none())
            .collect();
        println!(
            "variables outside the allowlist reaching a program: {}",
            outside.len()
        );
        assert!(
            outside.is_empty(),
            "{outside:?} reached the program: {seen:?}"
        );
        for (k, v) in hostile {
            assert!(
                !seen.iter().any(|(sk, sv)| sv == v && sk == k),
                "{k}={v} reached the program"
            );
        }
        let w = self.world.display().to_string();
        assert!(
            !seen.iter().any(|(_, v)| v.contains(&w)),
            "the world-writable directory reached the program: {seen:?}"
        );
        for canary in ["helper-ran", "bash-env-ran", "func-ran"] {
            assert!(
                !self.env.path("scratch").join(canary).exists(),
                "{canary}: hostile code ran inside the approved program"
            );
        }
        seen
    }
}

fn get<'a>(seen: &'a [(String, String)], k: &str) -> Option<&'a str> {
    seen.iter()
        .find(|(key, _)| key == k)
        .map(|(_, v)| v.as_str())
}

#[test]
fn an_approved_program_gets_only_the_allowlist_and_a_trusted_path() {
    let mut rig = Rig::new();
    let hostile = rig.hostile();
    rig.env.vars.extend(hostile.iter().cloned());
    rig.env.vars.extend(Rig::client_session());
    rig.env
        .vars
        .push(("OMARCHY_PATH".into(), rig.omarchy().display().to_string()));
    let (result, out) = rig.env.call("omarchy_run", &json!({"route": "env probe"}));
    assert_eq!(outcome(&result), "ok", "{result} {}", text(&out));
    let seen = rig.check(&hostile);
    // PATH: the trusted directories of the client's, then the search directories it lacked.
    let path: Vec<&str> = get(&seen, "PATH").unwrap().split(':').collect();
    let bin = rig.omarchy().join("bin");
    assert!(
        path.contains(&"/usr/bin") && path.contains(&bin.to_str().unwrap()),
        "{path:?}"
    );
    assert_eq!(get(&seen, "XDG_DATA_DIRS"), Some("/usr/share"));
    // The session's own variables pass: the program is the person's.
    assert_eq!(get(&seen, "LANG"), Some("de_DE.UTF-8"));
    assert_eq!(get(&seen, "WAYLAND_DISPLAY"), Some("wayland-client-one"));
    assert_eq!(
        get(&seen, "OMARCHY_PATH"),
        Some(rig.omarchy().to_str().unwrap())
    );
}

/// Ends a process this test started (by its pid) when the test ends, however it ends.
struct KillOnDrop(i32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &self.0.to_string()])
            .status();
        let until = std::time::Instant::now() + PATIENCE;
        while std::time::Instant::now() < until && Path::new(&format!("/proc/{}", self.0)).exists()
        {
            std::thread::sleep(POLL);
        }
    }
}

fn init(c: &mut StdioServer) {
    c.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "t", "version": "1"}}),
    );
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
}

/// Item 8: the first client's bridge starts the daemon; a second client's approved call must
/// run with the session's environment (the user manager's, here a `systemctl` in the trusted
/// Omarchy bin answering `show-environment` for the sandbox's runtime directory), not the first
/// client's.
#[test]
fn a_bridge_started_daemon_takes_the_sessions_environment_not_its_first_clients() {
    // The stand-in user manager is a `systemctl` in the rig's Omarchy bin, taken before root's
    // `/usr/bin/systemctl` only when that directory is root's too: a program name resolves in
    // root's directories first (attack 34 F6), so a `systemctl` of the person's — the agent's —
    // never stands in for the real one (round 34's L7: the bridge ran a planted one).
    if !nix::unistd::geteuid().is_root() {
        eprintln!(
            "SKIPPED: needs root (its stand-in systemctl must sit in a directory root owns); CI runs it as root"
        );
        return;
    }
    let mut rig = Rig::new();
    let e = &rig.env;
    let manager = [
        ("HOME", e.path("scratch").display().to_string()),
        ("LANG", "C.UTF-8".to_owned()),
        ("XDG_RUNTIME_DIR", e.path("runtime").display().to_string()),
        ("XDG_CONFIG_HOME", e.path("config").display().to_string()),
        ("XDG_STATE_HOME", e.path("state").display().to_string()),
        ("XDG_CACHE_HOME", e.path("cache").display().to_string()),
        ("OMARCHY_PATH", rig.omarchy().display().to_string()),
        ("WAYLAND_DISPLAY", "wayland-session".to_owned()),
        ("PATH", "/usr/local/bin:/usr/bin".to_owned()),
        ("MANAGER_ONLY_NOT_IN_TABLE", "x".to_owned()),
    ];
    let lines: String = manager.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
    std::fs::write(rig.trusted.path().join("manager.env"), lines).unwrap();
    write_exe(
        &rig.omarchy().join("bin/systemctl"),
        &format!(
            "#!/bin/sh\n[ \"$1 $2\" = \"--user show-environment\" ] && exec /usr/bin/cat {}\nexit 1\n",
            rig.trusted.path().join("manager.env").display()
        ),
    );
    // The first client: hostile, and the one whose bridge finds no daemon and starts one (its
    // `systemctl` is found in the trusted Omarchy bin its OMARCHY_PATH names).
    let hostile = rig.hostile();
    rig.env.vars.extend(hostile.iter().cloned());
    rig.env.vars.extend(Rig::client_session());
    rig.env
        .vars
        .push(("OMARCHY_PATH".into(), rig.omarchy().display().to_string()));
    let mut first = StdioServer::start_with(&rig.env, &["serve", "--client", "claude-code"]);
    rig.env.vars.clear();
    let e = &rig.env;
    init(&mut first);
    let info: Value = wait_for("the daemon the first bridge started", || {
        std::fs::read_to_string(e.runtime_dir().join("daemon.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
    });
    let _stop = KillOnDrop(info["pid"].as_u64().unwrap() as i32);
    assert_eq!(info["spawned"], true, "{info}");

    // The second client, clean, makes the call the person allowed.
    let mut second = StdioServer::start(e);
    init(&mut second);
    let r = second.request(
        2,
        "tools/call",
        json!({"name": "omarchy_run", "arguments": {"route": "env probe"}}),
    );
    assert_ne!(r["result"]["isError"], true, "{r}");
    let seen = rig.check(&hostile);
    // The session's values, not the first client's.
    assert_eq!(get(&seen, "WAYLAND_DISPLAY"), Some("wayland-session"));
    assert_eq!(get(&seen, "LANG"), Some("C.UTF-8"));
    second.close();
    first.close();
}
