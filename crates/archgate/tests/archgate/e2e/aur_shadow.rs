//! An AUR package named like an official package is warned about (issue 36): `aur_info` through
//! the real binary, the AUR's RPC served by a local stand-in (the RPC v5 `multiinfo` shape, our
//! records), the sync databases written here as pacman's `.db` (a tar of `NAME-VER/desc`).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::support::Env;

/// The RPC's answer for `names` among `vim` and `aur-only-tool`.
fn rpc_info(query: &str) -> String {
    let results: Vec<serde_json::Value> = ["vim", "aur-only-tool"]
        .iter()
        .filter(|n| query.contains(&format!("arg%5B%5D={n}")) || query.contains(&format!("arg[]={n}")))
        .map(|n| {
            json!({
                "ID": 1, "Name": n, "PackageBaseID": 1, "PackageBase": n, "Version": "9.1-1",
                "Description": format!("{n} from the AUR"), "URL": null,
                "NumVotes": 3, "Popularity": 0.1, "OutOfDate": null, "Maintainer": "someone",
                "Submitter": "someone", "FirstSubmitted": 1_600_000_000,
                "LastModified": 1_700_000_000, "URLPath": format!("/cgit/aur.git/snapshot/{n}.tar.gz"),
                "Depends": [], "MakeDepends": [], "License": ["MIT"], "Keywords": [], "CoMaintainers": []
            })
        })
        .collect();
    json!({"resultcount": results.len(), "results": results, "type": "multiinfo", "version": 5})
        .to_string()
}

fn fake_aur() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 8192];
            let n = stream.read(&mut buf).unwrap_or(0);
            let req = String::from_utf8_lossy(&buf[..n]).to_string();
            let target = req.split_whitespace().nth(1).unwrap_or("").to_owned();
            let body = rpc_info(&target);
            let _ = stream.write_all(
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                )
                .as_bytes(),
            );
        }
    });
    port
}

/// pacman's world: [extra] holding `vim 9.1.1000-1`.
fn sync_world(dir: &Path) -> std::path::PathBuf {
    let db = dir.join("db");
    std::fs::create_dir_all(db.join("local")).unwrap();
    let stage = dir.join("stage/vim-9.1.1000-1");
    std::fs::create_dir_all(&stage).unwrap();
    std::fs::write(
        stage.join("desc"),
        "%FILENAME%\nvim-9.1.1000-1-x86_64.pkg.tar.zst\n\n%NAME%\nvim\n\n%VERSION%\n9.1.1000-1\n\n\
         %DESC%\nVi Improved\n\n%ARCH%\nx86_64\n\n",
    )
    .unwrap();
    std::fs::create_dir_all(db.join("sync")).unwrap();
    assert!(
        Command::new("tar")
            .arg("-czf")
            .arg(db.join("sync/extra.db"))
            .arg("-C")
            .arg(dir.join("stage"))
            .arg("vim-9.1.1000-1")
            .status()
            .unwrap()
            .success()
    );
    let conf = dir.join("pacman.conf");
    std::fs::write(
        &conf,
        format!(
            "[options]\nDBPath = {}/\nArchitecture = x86_64\n\n[extra]\nServer = https://m.example/$repo/os/$arch\n",
            db.display()
        ),
    )
    .unwrap();
    conf
}

#[test]
fn aur_info_warns_when_an_aur_package_shadows_an_official_one() {
    let dir = tempfile::tempdir().unwrap();
    let conf = sync_world(dir.path());
    let port = fake_aur();
    let env = Env::with_config(&format!(
        "[arch]\npacman_conf = \"{}\"\naur_url = \"http://127.0.0.1:{port}\"\nhttp_timeout_s = 5\n",
        conf.display()
    ));
    let (v, out) = env.call("aur_info", &json!({"names": ["vim", "aur-only-tool"]}));
    assert!(
        out.status.success(),
        "{v}; {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = &v["structuredContent"];
    assert_eq!(s["packages"].as_array().unwrap().len(), 2, "{s}");
    let warnings = s["warnings"].as_array().expect("warnings");
    assert_eq!(warnings.len(), 1, "{s}");
    let w = warnings[0].as_str().unwrap();
    assert!(
        w.starts_with("vim shadows the official package extra/vim 9.1.1000-1"),
        "{w}"
    );
    assert!(!w.contains("aur-only-tool"), "{w}");
}
