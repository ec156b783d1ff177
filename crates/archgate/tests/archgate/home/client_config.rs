//! `archgate client-config`: the HTTP line names the port the running server really listens on
//! (`serve --http --port N`, read from its state in the runtime dir), and the stdio and HTTP
//! lines use different names so a client can have both; the HTTP line carries no token (it
//! names the token file, read when the client connects).

use crate::support::HttpServer;
use crate::support::{Env, stdout, text};

#[test]
fn the_http_line_names_the_running_servers_port_and_the_names_differ() {
    let env = Env::hermetic();
    let configured = std::fs::read_to_string(env.config_file()).unwrap();
    let configured: u16 = configured
        .trim()
        .rsplit(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let mut server = HttpServer::start(&env);
    assert_ne!(server.port, configured, "port 0 picks another one");

    let out = env.run(&["client-config", "claude-code", "--http"]);
    assert!(out.status.success(), "{}", text(&out));
    let http = stdout(&out);
    let token = env.token();
    // The line to paste holds no token (shell history): it names the token file, which the
    // client's header helper reads when it connects.
    assert!(
        http.starts_with("claude mcp add-json archgate-http "),
        "{http}"
    );
    assert!(
        !http.contains(&token),
        "the token in a pasted command: {http}"
    );
    assert!(
        http.contains(&format!("127.0.0.1:{}/mcp", server.port)),
        "{http}"
    );
    // Run as pasted, with a `claude` that records what it is given: no token in its arguments
    // either; the helper it keeps, run by a shell, prints the header with the token.
    let bin = env.path("scratch/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let claude = bin.join("claude");
    std::fs::write(
        &claude,
        "#!/bin/sh\nfor a; do printf '%s\\0' \"$a\"; done\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).unwrap();
    let ran = std::process::Command::new("sh")
        .args(["-c", &http])
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .output()
        .unwrap();
    assert!(ran.status.success(), "{ran:?}");
    let argv: Vec<String> = String::from_utf8(ran.stdout)
        .unwrap()
        .split('\0')
        .filter(|a| !a.is_empty())
        .map(str::to_owned)
        .collect();
    assert!(!argv.iter().any(|a| a.contains(&token)), "{argv:?}");
    let added: serde_json::Value = serde_json::from_str(&argv[3]).unwrap();
    let helper = std::process::Command::new("sh")
        .args(["-c", added["headersHelper"].as_str().unwrap()])
        .output()
        .unwrap();
    let headers: serde_json::Value = serde_json::from_slice(&helper.stdout).unwrap();
    assert_eq!(headers["Authorization"], format!("Bearer {token}"));
    let out = env.run(&["client-config", "claude-code"]);
    let stdio = stdout(&out);
    assert!(
        stdio.starts_with("claude mcp add archgate -- /")
            && stdio.trim().ends_with(" serve --client claude-code"),
        "{stdio}"
    );
    for kind in ["cursor", "vscode", "claude-desktop"] {
        let h: serde_json::Value =
            serde_json::from_slice(&env.run(&["client-config", kind, "--http"]).stdout).unwrap();
        let s: serde_json::Value =
            serde_json::from_slice(&env.run(&["client-config", kind]).stdout).unwrap();
        let names = |v: &serde_json::Value| -> Vec<String> {
            let top = v.get("mcpServers").or_else(|| v.get("servers")).unwrap();
            top.as_object().unwrap().keys().cloned().collect()
        };
        assert_eq!(names(&s), ["archgate"], "{kind}: {s}");
        assert_eq!(names(&h), ["archgate-http"], "{kind}: {h}");
        // No block puts the token among a program's arguments (`/proc/PID/cmdline`).
        let entry = &h.get("mcpServers").or_else(|| h.get("servers")).unwrap()["archgate-http"];
        assert!(!entry["args"].to_string().contains(&token), "{kind}: {h}");
        if kind != "claude-desktop" {
            assert!(
                h.to_string()
                    .contains(&format!("127.0.0.1:{}/mcp", server.port)),
                "{kind}: {h}"
            );
        }
    }

    // Once it has stopped, the configured port is what a new server would take.
    crate::support::terminate(&mut server.child);
    let out = env.run(&["client-config", "claude-code", "--http"]);
    assert!(
        stdout(&out).contains(&format!("http://127.0.0.1:{configured}/mcp")),
        "{}",
        text(&out)
    );
}
