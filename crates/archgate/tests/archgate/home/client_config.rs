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
    // Stand-ins that print what a real program would be given: its arguments, NUL-separated,
    // then `--env--` and the value of $ARCHGATE_AUTH.
    use std::os::unix::fs::PermissionsExt;
    for name in ["claude", "npx"] {
        let p = bin.join(name);
        std::fs::write(
            &p,
            "#!/bin/sh\nfor a; do printf '%s\\0' \"$a\"; done\nprintf -- '--env--%s' \"$ARCHGATE_AUTH\"\n",
        )
        .unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let given = |program: &str, args: &[&str]| -> (Vec<String>, String) {
        let ran = std::process::Command::new(program)
            .args(args)
            .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
            .output()
            .unwrap();
        assert!(ran.status.success(), "{ran:?}");
        let ran = String::from_utf8(ran.stdout).unwrap();
        let (argv, auth) = ran.split_once("--env--").unwrap();
        let argv = argv
            .split('\0')
            .filter(|a| !a.is_empty())
            .map(str::to_owned)
            .collect();
        (argv, auth.to_owned())
    };
    let (argv, _) = given("sh", &["-c", &http]);
    assert!(!argv.iter().any(|a| a.contains(&token)), "{argv:?}");
    let added: serde_json::Value = serde_json::from_str(&argv[3]).unwrap();
    let helper = std::process::Command::new("sh")
        .args(["-c", added["headersHelper"].as_str().unwrap()])
        .output()
        .unwrap();
    let headers: serde_json::Value = serde_json::from_slice(&helper.stdout).unwrap();
    assert_eq!(headers["Authorization"], format!("Bearer {token}"));
    // Claude Desktop's entry, started as Claude Desktop would: the token reaches `mcp-remote`
    // in its environment, never among its arguments, and the entry itself holds none.
    let out = env.run(&["client-config", "claude-desktop", "--http"]);
    let desktop: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!desktop.to_string().contains(&token), "{desktop}");
    let entry = &desktop["mcpServers"]["archgate-http"];
    let args: Vec<&str> = entry["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let (argv, auth) = given(entry["command"].as_str().unwrap(), &args);
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    assert_eq!(
        argv,
        [
            "-y",
            "mcp-remote",
            url.as_str(),
            "--header",
            "Authorization:${ARCHGATE_AUTH}"
        ]
    );
    assert_eq!(auth, format!("Bearer {token}"));
    // VS Code's asks for the token once (its secret storage): none in the block.
    let out = env.run(&["client-config", "vscode", "--http"]);
    assert!(!stdout(&out).contains(&token), "{}", stdout(&out));
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
