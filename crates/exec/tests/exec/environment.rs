//! The environment a program sees (issue 33, items 3, 4 and 8; class: *programs get an
//! allowlisted environment*): only the variables `archgate_exec::env::TABLE` names reach it;
//! code-loading variables and credentials under any name never do; `PATH`, `XDG_DATA_DIRS`,
//! `XDG_CONFIG_DIRS` and `OMARCHY_PATH` keep trusted directories only.
//!
//! The hostile environment is given to a child copy of this test binary (the executor reads the
//! process's own environment), which runs real programs through the executor: `env -0`, and
//! `bash`, which would source `BASH_ENV`, run an exported `BASH_FUNC_true%%` and find a helper
//! in a world-writable directory at the front of `PATH`.

use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};

use archgate_exec::{CommandSpec, ExecConfig, Permit};

use crate::support::*;

/// The marker variable naming the child's scratch directory.
const CHILD: &str = "ARCHGATE_EXEC_ENV_CHILD";

/// The child half of `a_hostile_environment_reaches_no_program`: runs `env -0` and `bash`
/// through the executor and prints what `env` saw between markers. Does nothing unless the
/// parent started it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::print_stdout)] // the parent reads this process's stdout
async fn env_child_prints_what_a_program_sees() {
    let Some(scratch) = std::env::var_os(CHILD) else {
        return;
    };
    let scratch = PathBuf::from(scratch);
    let p = Permit::for_tests(ExecConfig {
        search_dirs: vec![PathBuf::from("/usr/bin")],
        require_root_owned: true,
        ..config()
    });
    let out = p
        .run(CommandSpec::new("env").arg("-0").env("LANG", "C.UTF-8"))
        .await
        .unwrap();
    println!("<<ENV\n{}ENV>>", out.stdout_lossy());
    // `true` is a builtin an exported function would replace; `archgate-h33-helper` exists only
    // in the world-writable directory.
    let script = format!(
        "true; archgate-h33-helper; echo ran > {}",
        scratch.join("bash-ran").display()
    );
    let out = p
        .run(CommandSpec::new("bash").args(["-c", &script]))
        .await
        .unwrap();
    println!("<<BASH\n{}{}BASH>>", out.stdout_lossy(), out.stderr_lossy());
    // sd-bus runs a `unixexec:` address's program to reach the bus; where busctl is installed,
    // it gets the chance to.
    let _ = p
        .run(
            CommandSpec::new("busctl")
                .args(["--user", "--timeout=2", "list"])
                .timeout(std::time::Duration::from_secs(10)),
        )
        .await;
}

/// A fresh name for each run, so no list of names could have anticipated it.
fn random_word() -> String {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(std::process::id().into());
    format!("{:016X}", h.finish())
}

/// Every variable an attack of issue 33 set, plus random ones: nothing here may reach a program.
fn hostile(scratch: &Path, world: &Path) -> Vec<(String, String)> {
    let s = |p: &str| scratch.join(p).display().to_string();
    let mut v: Vec<(String, String)> = [
        ("BASH_ENV", s("evil.sh")),
        ("ENV", s("evil.sh")),
        (
            "BASH_FUNC_true%%",
            format!("() {{ touch {}; }}", s("func-ran")),
        ),
        ("PERL5OPT", "-Mwarnings=FATAL".into()),
        ("PERL5LIB", s("lib")),
        ("PYTHONPATH", s("py")),
        ("PYTHONSTARTUP", s("py/start.py")),
        ("NODE_OPTIONS", format!("--require {}", s("x.js"))),
        ("RUBYOPT", "-rsomething".into()),
        ("LD_PRELOAD", s("evil.so")),
        ("LD_LIBRARY_PATH", s("lib")),
        ("GCONV_PATH", s("gconv")),
        ("LOCPATH", s("locale")),
        ("BW_SESSION", "bw-secret".into()),
        ("OP_SESSION_my", "op-secret".into()),
        ("BORG_PASSPHRASE", "borg-secret".into()),
        ("GITLAB_SESSION_COOKIE", "cookie-secret".into()),
        ("GITHUB_TOKEN", "gh-secret".into()),
        ("ARCHGATE_TOKEN", "ag-secret".into()),
        ("EDITOR", s("evil-editor")),
        ("TERMINAL", s("evil-term")),
        ("BROWSER", s("evil-browser")),
        ("SHELL", s("evil-shell")),
        ("TERM", "xterm".into()),
        ("PULSE_SERVER", "tcp:203.0.113.1".into()),
        ("SSH_AUTH_SOCK", s("agent")),
        // Names of the table whose values would load code.
        ("LC_CTYPE", s("locale")),
        (
            "DBUS_SESSION_BUS_ADDRESS",
            format!("unixexec:path={}", s("bus-exec")),
        ),
        ("OMARCHY_PATH", world.display().to_string()),
        ("XDG_DATA_HOME", world.display().to_string()),
        ("XDG_CONFIG_HOME", "/tmp".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    for i in 0..16 {
        v.push((format!("R{i}_{}", random_word()), random_word()));
    }
    v
}

/// What the session holds and every program needs (a subset of the table).
/// The session's variables; `run` is its runtime directory (0700, the person's: a path that does
/// not exist is not passed on).
fn session(world: &Path, run: &Path) -> Vec<(String, String)> {
    [
        ("HOME", "/".to_owned()),
        ("USER", "person".into()),
        ("LANG", "de_DE.UTF-8".into()),
        ("LC_TIME", "C".into()),
        ("XDG_RUNTIME_DIR", run.display().to_string()),
        ("XDG_CURRENT_DESKTOP", "Hyprland".into()),
        ("WAYLAND_DISPLAY", "wayland-1".into()),
        ("HYPRLAND_INSTANCE_SIGNATURE", "abc_123".into()),
        ("XDG_DATA_DIRS", format!("{}:/usr/share", world.display())),
        ("PATH", format!("{}:/usr/bin", world.display())),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

#[test]
#[allow(clippy::disallowed_methods, clippy::print_stdout)] // re-runs this test binary; the figure
fn a_hostile_environment_reaches_no_program() {
    let scratch = tempfile::tempdir().unwrap();
    let s = scratch.path();
    // A directory anyone may write to, as the first client of issue 33 item 8 put in PATH.
    let world = s.join("world");
    std::fs::create_dir(&world).unwrap();
    set_mode(&world, 0o777);
    let helper = world.join("archgate-h33-helper");
    std::fs::write(
        &helper,
        format!("#!/bin/sh\ntouch {}\n", s.join("helper-ran").display()),
    )
    .unwrap();
    set_mode(&helper, 0o755);
    let bus_exec = s.join("bus-exec");
    std::fs::write(
        &bus_exec,
        format!("#!/bin/sh\ntouch {}\n", s.join("bus-exec-ran").display()),
    )
    .unwrap();
    set_mode(&bus_exec, 0o755);
    std::fs::write(
        s.join("evil.sh"),
        format!("touch {}\n", s.join("bash-env-ran").display()),
    )
    .unwrap();

    let run = s.join("run");
    std::fs::create_dir(&run).unwrap();
    set_mode(&run, 0o700);
    let session = session(&world, &run);
    let hostile = hostile(s, &world);
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "environment::env_child_prints_what_a_program_sees",
            "--nocapture",
            "--test-threads=1",
        ])
        .env_clear()
        .envs(session.iter().map(|(k, v)| (k, v)))
        .envs(hostile.iter().map(|(k, v)| (k, v)))
        .env(CHILD, s)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let between = |a: &str, b: &str| {
        let start = text
            .find(a)
            .unwrap_or_else(|| panic!("no {a} printed: {text} {:?}", out.stderr));
        text[start + a.len()..start + text[start..].find(b).unwrap()].to_owned()
    };
    let dump = between("<<ENV\n", "ENV>>");
    let seen: Vec<(String, String)> = dump
        .split('\0')
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (k, v) = l.split_once('=').expect("KEY=VALUE");
            (k.to_owned(), v.to_owned())
        })
        .collect();
    let outside: Vec<&String> = seen
        .iter()
        .map(|(k, _)| k)
        .filter(|k| archgate_exec::env::row(k).is_none())
        .collect();
    println!(
        "variables outside the allowlist reaching a program: {}",
        outside.len()
    );
    assert!(outside.is_empty(), "{outside:?} reached `env`: {seen:?}");
    let get = |k: &str| {
        seen.iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    };
    for (k, _) in &hostile {
        assert_eq!(get(k), None, "{k} reached the program");
    }
    for (_, secret) in &hostile {
        assert!(!seen.iter().any(|(_, v)| v == secret), "{secret} leaked");
    }
    for (k, v) in &session {
        if k == "PATH" || k == "XDG_DATA_DIRS" {
            continue;
        }
        let want = if k == "LANG" { "C.UTF-8" } else { v.as_str() };
        assert_eq!(get(k), Some(want), "{k} did not pass: {seen:?}");
    }
    // Directory lists keep their trusted directories only.
    assert_eq!(get("PATH"), Some("/usr/bin"), "{seen:?}");
    assert_eq!(get("XDG_DATA_DIRS"), Some("/usr/share"), "{seen:?}");

    let bash = between("<<BASH\n", "BASH>>");
    assert!(s.join("bash-ran").exists(), "bash did not run: {bash}");
    for canary in ["bash-env-ran", "func-ran", "helper-ran", "bus-exec-ran"] {
        assert!(
            !s.join(canary).exists(),
            "{canary}: hostile code ran in an approved program ({bash})"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spec_may_set_only_the_tables_names() {
    for bad in ["BAD=KEY", "BASH_ENV", "PATH", "LD_PRELOAD", "GITHUB_TOKEN"] {
        let err = permit()
            .run(CommandSpec::new("env").env(bad, "x"))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), "spawn_failed", "{bad}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cleared_spec_gets_only_what_it_names_and_a_trusted_path() {
    let out = permit()
        .run(CommandSpec::new("env").clear_env().env("HOME", "/"))
        .await
        .unwrap();
    let text = out.stdout_lossy();
    let mut keys: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, _)| k))
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "HOME",
            "PATH",
            "PULSE_CLIENTCONFIG",
            "PYTHONNOUSERSITE",
            "PYTHONSAFEPATH"
        ],
        "{text}"
    ); // sorted
    let path = text
        .lines()
        .find_map(|l| l.strip_prefix("PATH="))
        .expect("a PATH");
    let dirs: Vec<&str> = path.split(':').collect();
    assert!(dirs.contains(&"/usr/bin"), "{path}");
}

/// Attack 25 F4: a Python program archgate starts never runs the person's user-site `.pth`
/// files (they run `import` lines before the program's first): `PYTHONNOUSERSITE=1` is set
/// whatever the session has, and Python itself says user site is off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_program_never_loads_the_persons_user_site() {
    let out = permit()
        .run(CommandSpec::new("python3").args([
            "-c",
            "import site, sys; print(site.ENABLE_USER_SITE, sys.flags.no_user_site)",
        ]))
        .await
        .unwrap();
    assert_eq!(
        out.stdout_lossy().trim(),
        "False 1",
        "{}",
        out.stderr_lossy()
    );
}

/// Attack 26 F7: libpulse reads the person's `client.conf` and, when no server answers, starts
/// the `daemon-binary` it names; every program archgate starts gets an empty one instead,
/// whatever the session says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pulseaudio_client_never_reads_the_persons_client_conf() {
    let out = permit()
        .run(
            CommandSpec::new("sh")
                .args(["-c", "printf %s \"$PULSE_CLIENTCONFIG\""])
                .env("PULSE_CLIENTCONFIG", "/home/p/.config/pulse/client.conf"),
        )
        .await
        .unwrap();
    assert_eq!(out.stdout_lossy(), "/dev/null", "{}", out.stderr_lossy());
}

/// Attack 33 F6's neighbour: a Python script archgate runs never imports a module dropped beside
/// it (Omarchy's `bin/` is the person's, so the agent's to write): `PYTHONSAFEPATH=1` keeps the
/// script's own directory off the front of its import path, and `json` is the standard
/// library's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_script_never_imports_a_module_planted_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("status.py");
    std::fs::write(&script, "import json\nprint(json.__file__)\n").unwrap();
    std::fs::write(dir.path().join("json.py"), "print('PLANTED')\n").unwrap();
    let out = permit()
        .run(CommandSpec::new("python3").arg(script.to_str().unwrap()))
        .await
        .unwrap();
    let text = out.stdout_lossy();
    assert!(!text.contains("PLANTED"), "{text}");
    assert!(
        text.trim().starts_with("/usr/lib/python3"),
        "the standard library's json: {text} {}",
        out.stderr_lossy()
    );
}
