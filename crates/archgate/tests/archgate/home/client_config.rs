//! `archgate client-config`: the HTTP line names the port the running server really listens on
//! (`serve --http --port N`, read from its state in the runtime dir), and the stdio and HTTP
//! lines use different names so a client can have both.

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
    assert_eq!(
        http.trim(),
        format!(
            "claude mcp add --transport http archgate-http http://127.0.0.1:{}/mcp --header \"Authorization: Bearer {token}\"",
            server.port
        )
    );
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
            let top = v.as_object().unwrap().values().next().unwrap();
            top.as_object().unwrap().keys().cloned().collect()
        };
        assert_eq!(names(&s), ["archgate"], "{kind}: {s}");
        assert_eq!(names(&h), ["archgate-http"], "{kind}: {h}");
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
