//! The upkeep tools through the real binary and its gate (issue 22 items 4–10): `[arch]`'s
//! packages_url and security_url point at local stand-ins serving the real JSON shapes with our
//! records; pacman's world is written here; the keyring is a real GnuPG home read by the `gpg`
//! the gate approved. Outputs stay out of the activity log.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::support::{Env, StdioServer};

/// Serves `routes` (path prefix → body); anything else is 404.
fn serve(routes: Vec<(&'static str, String)>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 4096];
            let n = stream.read(&mut buf).unwrap_or(0);
            let req = String::from_utf8_lossy(&buf[..n]).to_string();
            let path = req.split_whitespace().nth(1).unwrap_or("").to_owned();
            let (status, body) = routes
                .iter()
                .find(|(p, _)| path.starts_with(p))
                .map(|(_, b)| ("200 OK", b.clone()))
                .unwrap_or(("404 Not Found", String::new()));
            let _ = stream.write_all(
                format!(
                    "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                )
                .as_bytes(),
            );
        }
    });
    port
}

/// A pacman world: [core] from a mirrorlist, a local database with `vuln-lib 1.0-1` and
/// `archlinux-keyring 20250101-1`, core's database holding a newer keyring, and `gpg_dir`.
fn world(dir: &Path, gpg_dir: &Path) -> std::path::PathBuf {
    let db = dir.join("db");
    for (name, ver) in [("vuln-lib", "1.0-1"), ("archlinux-keyring", "20250101-1")] {
        let d = db.join("local").join(format!("{name}-{ver}"));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join("desc"),
            format!("%NAME%\n{name}\n\n%VERSION%\n{ver}\n\n%ARCH%\nany\n\n"),
        )
        .unwrap();
    }
    let stage = dir.join("stage/archlinux-keyring-20251120-1");
    std::fs::create_dir_all(&stage).unwrap();
    std::fs::write(
        stage.join("desc"),
        "%FILENAME%\narchlinux-keyring-20251120-1-any.pkg.tar.zst\n\n%NAME%\narchlinux-keyring\n\n\
         %VERSION%\n20251120-1\n\n%ARCH%\nany\n\n",
    )
    .unwrap();
    std::fs::create_dir_all(db.join("sync")).unwrap();
    assert!(
        Command::new("tar")
            .arg("-czf")
            .arg(db.join("sync/core.db"))
            .arg("-C")
            .arg(dir.join("stage"))
            .arg("archlinux-keyring-20251120-1")
            .status()
            .unwrap()
            .success()
    );
    // The database predates the mirror's last sync below.
    let f = std::fs::File::options()
        .write(true)
        .open(db.join("sync/core.db"))
        .unwrap();
    f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_764_000_000))
        .unwrap();
    std::fs::write(
        dir.join("mirrorlist"),
        "Server = https://m.example/archlinux/$repo/os/$arch\n",
    )
    .unwrap();
    let conf = dir.join("pacman.conf");
    std::fs::write(
        &conf,
        format!(
            "[options]\nDBPath = {}\nGPGDir = {}\nArchitecture = x86_64\n\n[core]\nInclude = {}\n",
            db.display(),
            gpg_dir.display(),
            dir.join("mirrorlist").display()
        ),
    )
    .unwrap();
    conf
}

fn call(s: &mut StdioServer, id: u64, check: &str) -> Value {
    let r = s.request(
        id,
        "tools/call",
        json!({"name": "upkeep", "arguments": {"check": check}}),
    );
    assert_ne!(r["result"]["isError"], true, "{check}: {r}");
    r["result"]["structuredContent"].clone()
}

#[test]
fn upkeep_tools_answer_through_the_gate_from_the_configured_services() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    // A real GnuPG home with one key expiring in 5 days.
    let gpg_home = dir.path().join("gnupg");
    std::fs::create_dir(&gpg_home).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&gpg_home, std::fs::Permissions::from_mode(0o700)).unwrap();
    let out = Command::new("gpg")
        .arg("--homedir")
        .arg(&gpg_home)
        .args(["--batch", "--pinentry-mode", "loopback", "--passphrase", ""])
        .args([
            "--quick-gen-key",
            "Soon <soon@example.invalid>",
            "ed25519",
            "sign",
            "5d",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = Command::new("gpgconf")
        .arg("--homedir")
        .arg(&gpg_home)
        .args(["--kill", "gpg-agent"])
        .status();
    let conf = world(dir.path(), &gpg_home);

    // Shapes: archweb's /mirrors/status/json/ and the security tracker's /all.json (see
    // crates/pacman/tests/pacman/upkeep.rs for where each field set comes from).
    let status = r#"{"cutoff": 86400, "last_check": "2026-11-30T12:00:00Z", "num_checks": 24,
        "check_frequency": 300, "version": 3, "urls": [{"url": "https://m.example/archlinux/",
        "protocol": "https", "last_sync": "2026-11-30T11:00:00Z", "completion_pct": 1.0,
        "delay": 600, "duration_avg": 0.2, "duration_stddev": 0.1, "score": 0.9, "active": true,
        "country": "France", "country_code": "FR", "isos": true, "ipv4": true, "ipv6": true,
        "details": "https://archlinux.org/mirrors/m.example/9/"}]}"#;
    let avgs = r#"[{"name": "AVG-777", "packages": ["vuln-lib"], "status": "Fixed",
        "severity": "Critical", "type": "arbitrary code execution", "affected": "1.0-1",
        "fixed": "1.0-2", "ticket": null, "issues": ["CVE-2026-7777"], "advisories": ["ASA-202611-1"]}]"#;
    let packages = serve(vec![("/mirrors/status/json/", status.to_owned())]);
    let tracker = serve(vec![("/all.json", avgs.to_owned())]);
    env.write_config(&format!(
        "[arch]\npacman_conf = \"{}\"\npackages_url = \"http://127.0.0.1:{packages}\"\n\
         security_url = \"http://127.0.0.1:{tracker}\"\n",
        conf.display()
    ));

    let mut s = StdioServer::initialized(&env);
    let list = s.request(2, "tools/list", json!({}));
    let names: Vec<String> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    let spec = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "upkeep")
        .expect("upkeep listed");
    assert_eq!(spec["annotations"]["readOnlyHint"], true, "{spec}");

    let m = call(&mut s, 3, "mirrors");
    assert_eq!(
        m["servers"][0]["url"], "https://m.example/archlinux/core/os/x86_64",
        "{m}"
    );
    assert_eq!(
        m["servers"][0]["mirror"]["last_sync"], "2026-11-30T11:00:00Z",
        "{m}"
    );
    assert_eq!(m["databases"][0]["older_than_mirror"], true, "{m}");
    assert!(
        m["commands"]
            .as_array()
            .unwrap()
            .contains(&json!("sudo pacman -Syu")),
        "{m}"
    );

    let a = call(&mut s, 4, "advisories");
    assert_eq!(a["affected"][0]["package"], "vuln-lib", "{a}");
    assert_eq!(a["affected"][0]["severity"], "Critical");
    assert_eq!(
        a["affected"][0]["groups"][0]["cves"],
        json!(["CVE-2026-7777"])
    );
    assert_eq!(
        a["affected"][0]["groups"][0]["url"],
        format!("http://127.0.0.1:{tracker}/AVG-777")
    );

    let k = call(&mut s, 5, "keyring");
    assert_eq!(k["package"]["installed"], "20250101-1", "{k}");
    assert_eq!(k["package"]["available"], "20251120-1");
    assert_eq!(k["keys"]["readable"], true, "{k}");
    assert_eq!(
        k["keys"]["expiring"].as_array().map(Vec::len),
        Some(1),
        "{k}"
    );
    assert!(
        k["commands"][0]
            .as_str()
            .unwrap()
            .starts_with("sudo pacman -Sy archlinux-keyring")
    );

    let r = call(&mut s, 6, "restart");
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert_eq!(r["kernel"]["running"], release.trim());
    let snaps = call(&mut s, 7, "snapshots");
    assert!(snaps["root_fs"].is_string(), "{snaps}");

    // The prompt proposes a snapshot first, and every tool it names exists.
    let p = s.request(
        8,
        "prompts/get",
        json!({"name": "safe_system_update", "arguments": {}}),
    );
    let text = p["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{p}"))
        .to_owned();
    assert!(
        text.contains("`upkeep` check `snapshots`") && text.contains("\"snapshot_snapper\""),
        "{text}"
    );
    for word in text.split('`').skip(1).step_by(2) {
        let snake = !word.is_empty() && word.chars().all(|c| c.is_ascii_lowercase() || c == '_');
        if snake && (word.contains('_') || word == "upkeep") {
            assert!(
                names.iter().any(|n| n == word) || word == "before_upgrade",
                "the prompt names `{word}`, which is no tool"
            );
        }
    }
    let (_status, _) = s.close();

    // Each call recorded once; none of what the tools answered reached the log.
    let records = env.audit();
    let log = std::fs::read_to_string(env.state_dir().join("activity.jsonl")).unwrap();
    let upkeep: Vec<&Value> = records.iter().filter(|r| r["tool"] == "upkeep").collect();
    assert_eq!(upkeep.len(), 5, "{records:?}");
    // What ran is what was approved: only the keyring check ran a program, the gpg listing.
    let gpg: Vec<&&Value> = upkeep
        .iter()
        .filter(|r| r["target"].as_str().is_some_and(|t| t.contains("gpg")))
        .collect();
    assert_eq!(gpg.len(), 1, "{upkeep:?}");
    let target = gpg[0]["target"].as_str().unwrap();
    assert!(
        target.contains("--list-keys") && target.contains(&gpg_home.display().to_string()),
        "{target}"
    );
    for secret in ["CVE-2026-7777", "m.example", "soon@example.invalid"] {
        assert!(!log.contains(secret), "{secret} reached the activity log");
    }
}

#[test]
fn offline_the_upkeep_tools_say_they_could_not_look() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let conf = world(dir.path(), &dir.path().join("no-gnupg"));
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    env.write_config(&format!(
        "[arch]\npacman_conf = \"{}\"\npackages_url = \"http://127.0.0.1:{closed}\"\n\
         security_url = \"http://127.0.0.1:{closed}\"\n",
        conf.display()
    ));
    let out = env.run(&["call", "upkeep", r#"{"check": "advisories"}"#]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["isError"], true);
    assert!(v.to_string().contains("could_not_reach"), "{v}");

    // mirrors still answers what it knows locally, and says the status could not be read.
    let out = env.run(&["call", "upkeep", r#"{"check": "mirrors"}"#]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = &v["structuredContent"];
    assert_eq!(m["status"]["error"]["kind"], "could_not_reach", "{m}");
    assert_eq!(
        m["servers"][0]["url"],
        "https://m.example/archlinux/core/os/x86_64"
    );
    assert!(m["databases"][0]["older_than_mirror"].is_null(), "{m}");

    // A keyring home that is not there: not readable, said, with the command; no gpg ran.
    let out = env.run(&["call", "upkeep", r#"{"check": "keyring"}"#]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let k = &v["structuredContent"];
    assert_eq!(k["keys"]["readable"], false, "{v}");
    assert!(
        k["commands"]
            .as_array()
            .unwrap()
            .contains(&json!("sudo pacman-key --list-keys"))
    );
}
