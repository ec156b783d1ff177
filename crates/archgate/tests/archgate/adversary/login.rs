//! Attack 4 of issue 16 (part of `hostile.rs`): the page login on a command line. `archgate ui`
//! handed the one-time link to the browser opener as an argument, and another local user reading
//! `/proc/PID/cmdline` redeemed it first. Here a second uid (`nobody`, through setpriv) watches
//! every command line on the machine while `archgate ui` opens the page, and tries to read what
//! the opener was given: it must learn no token, and the person's login must still work once.

use crate::support::*;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The attacker: for `secs` seconds, every command line of every process, and — for any
/// argument that is a readable file — its contents. One JSON object on stdout.
const WATCHER: &str = r#"
import json, os, sys, time
end = time.time() + float(sys.argv[1])
seen, reads = set(), {}
while time.time() < end:
    for pid in os.listdir('/proc'):
        if not pid.isdigit():
            continue
        try:
            with open('/proc/%s/cmdline' % pid, 'rb') as f:
                argv = [a.decode('utf-8', 'replace') for a in f.read().split(b'\0') if a]
        except OSError:
            continue
        if not argv:
            continue
        seen.add(' '.join(argv))
        for a in argv[1:]:
            if a.startswith('/') and a not in reads and a.endswith('.html'):
                try:
                    with open(a) as f:
                        reads[a] = f.read()
                except OSError as e:
                    reads[a] = 'error: %s' % e.strerror
    time.sleep(0.005)
print(json.dumps({'cmdlines': sorted(seen), 'reads': reads}))
"#;

fn opener(bin: &Path, log: &Path) {
    let script = format!(
        "#!/bin/sh\nPATH=/usr/bin:/bin\nprintf '%s\\n' \"$@\" > {log}.tmp && mv {log}.tmp {log}\nsleep 3\n",
        log = log.display()
    );
    let p = bin.join("xdg-open");
    std::fs::write(&p, script).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn a_second_user_reading_proc_learns_no_login_and_the_persons_login_works_once() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("SKIPPED: needs root (it watches as `nobody`); CI runs it as root");
        return;
    }
    let env0 = Env::with_config("");
    let bin = env0.path("scratch/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let args_log = env0.path("scratch/xdg-open.args");
    opener(&bin, &args_log);
    env0.write_config(&format!(
        "[approval]\npage = true\npage_port = 0\nnotifications = false\n\
         [exec]\nsearch_dirs = [\"{}\"]\nrequire_root_owned = false\n",
        bin.display()
    ));
    let env = env0;
    let _d = HttpServer::start(&env);
    let port = page_port(&env);
    // Only the login file's own mode stands between `nobody` and it: every directory on the
    // way may be traversed.
    for d in [
        env.root.path().to_path_buf(),
        env.path("runtime"),
        env.path("runtime/archgate"),
    ] {
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o711)).unwrap();
    }

    let watcher = Command::new("setpriv")
        .args([
            "--reuid=nobody",
            "--regid=nogroup",
            "--clear-groups",
            "/usr/bin/python3",
            "-c",
            WATCHER,
            "6",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("setpriv python3");
    std::thread::sleep(Duration::from_millis(500));
    let out = env.run(&["ui"]);
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    eprintln!("archgate ui said: {said}");
    let given: Vec<String> = wait_for("the opener's arguments", || {
        let t = std::fs::read_to_string(&args_log).ok()?;
        Some(t.lines().map(str::to_owned).collect())
    });
    let watched = watcher.wait_with_output().unwrap();
    assert!(watched.status.success(), "{watched:?}");
    let watched: serde_json::Value = serde_json::from_slice(&watched.stdout).unwrap();

    // The opener got one argument: the login file, inside the runtime directory, 0600.
    assert_eq!(given.len(), 1, "{given:?}");
    let file = PathBuf::from(&given[0]);
    assert!(file.starts_with(env.path("runtime/archgate")), "{given:?}");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let html = std::fs::read_to_string(&file).unwrap();
    let token: String = html
        .split("/login?t=")
        .nth(1)
        .expect("the file forwards to the login")
        .chars()
        .take_while(|c| c.is_ascii_hexdigit())
        .collect();
    assert_eq!(token.len(), 64);

    // What the second user saw: the opener's command line (the watcher works) without a token,
    // and the file refused.
    let cmdlines: Vec<&str> = watched["cmdlines"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c.as_str())
        .collect();
    assert!(
        cmdlines
            .iter()
            .any(|c| c.contains("xdg-open") && c.contains(&given[0])),
        "the watcher never saw the opener: {cmdlines:?}"
    );
    for c in &cmdlines {
        assert!(!c.contains(&token), "a command line carried the token: {c}");
        assert!(
            !c.contains("/login?t="),
            "a command line carried a login link: {c}"
        );
    }
    let read = watched["reads"][&given[0]].as_str().unwrap_or("");
    assert!(
        read.starts_with("error"),
        "the second user read the login file: {read:.80}"
    );
    assert!(
        !said.contains(&token),
        "archgate ui printed the token: {said}"
    );

    // The person's browser (a file:// page arrives cross-site) logs in once; the file goes.
    let login = format!("/login?t={token}");
    fn browser(path: &str) -> Request<'_> {
        Request::get(path)
            .header("Sec-Fetch-Site", "cross-site")
            .header("Sec-Fetch-Mode", "navigate")
            .header("Sec-Fetch-Dest", "document")
    }
    let r = send(port, &browser(&login));
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(
        r.text().contains("url=/"),
        "a same-origin hop onward: {}",
        r.text()
    );
    let cookie = r
        .header("set-cookie")
        .expect("a session cookie")
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    assert!(!file.exists(), "the used login file is removed");
    let state = send(
        port,
        &Request::get("/api/state").header("Cookie", cookie.clone()),
    );
    assert_eq!(state.status, 200, "{}", state.text());
    assert_eq!(send(port, &browser(&login)).status, 401, "works once");
    // Another site may navigate to the login, but nothing else of the page answers it.
    let foreign = send(
        port,
        &browser("/api/state").header("Cookie", cookie.clone()),
    );
    assert_eq!(foreign.status, 403, "{}", foreign.text());

    // `--print` shows a short code for the page's form, never a link; it works once.
    let out = env.run(&["ui", "--print"]);
    let printed = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{printed}");
    assert!(!printed.contains("/login?t="), "{printed}");
    let code = printed
        .split("type the code ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no code: {printed}"))
        .to_owned();
    let post = |code: &str| {
        send(
            port,
            &Request::post("/login", format!("code={code}"))
                .header("Content-Type", "application/x-www-form-urlencoded"),
        )
    };
    let form = send(port, &Request::get("/login"));
    assert_eq!(form.status, 200);
    assert!(
        form.text().contains("<form method=\"post\""),
        "{}",
        form.text()
    );
    let r = post(&code.to_lowercase());
    assert_eq!(r.status, 303, "{}", r.text());
    assert!(r.header("set-cookie").is_some());
    assert_eq!(post(&code).status, 401, "a code works once");
}
