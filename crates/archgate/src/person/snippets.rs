//! The exact configuration a person pastes into an MCP client to connect it to archgate: over
//! stdio (the client starts `archgate serve --client NAME`) or over HTTP (a URL and a bearer token).
//! The bearer token is never inside a command the person pastes nor in any program's arguments
//! (see `Token` and `snippet`).
//!
//! One definition behind `archgate client-config`, `archgate clients add` and the approval
//! page's "add client", so the three never disagree.

use serde_json::json;
use std::path::Path;

use crate::cli::ClientKind;

/// How the client reaches archgate.
pub enum Connect<'a> {
    /// The client starts this executable with `serve`.
    Stdio { exe: &'a str },
    /// The client connects to `url` (`http://127.0.0.1:PORT/mcp`) with this bearer token.
    Http { url: &'a str, token: Token<'a> },
}

/// Where an HTTP client's bearer token comes from. Whichever it is, the token never appears in
/// a command the person pastes (shell history) nor in a program's arguments (`/proc/PID/cmdline`,
/// readable by every local user): a command reads the token file when it runs, or the token
/// goes into the client's own config file, in a field that is not a command line.
pub enum Token<'a> {
    /// The default client's token, kept in this private file (`state/token`, 0600).
    File { path: &'a Path, token: &'a str },
    /// A client added later: its token is shown once (archgate keeps only its hash).
    Shown(&'a str),
}

impl Token<'_> {
    fn value(&self) -> &str {
        match self {
            Token::File { token, .. } => token,
            Token::Shown(t) => t,
        }
    }
}

/// The variable `mcp-remote` reads the header from (it expands `${NAME}` in `--header` from its
/// own environment), so the token is never one of its arguments.
const AUTH_VAR: &str = "ARCHGATE_AUTH";
/// VS Code's input that asks for the token once and keeps it in its secret storage.
const VSCODE_INPUT: &str = "archgate-token";

/// `s` quoted for a POSIX shell: one word, nothing in it expanded.
pub fn sh_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+:=@%,".contains(&b))
    {
        return s.to_owned();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// A shell command that prints `{"Authorization": "Bearer TOKEN"}`, reading the token from
/// `path` when it runs (`printf` is a shell builtin: the token is no program's argument).
pub fn header_json_command(path: &Path) -> String {
    format!(
        "printf '{{\"Authorization\": \"Bearer %s\"}}' \"$(cat {})\"",
        sh_quote(&path.display().to_string())
    )
}

/// The name each connection is added under: different for stdio and HTTP, so a client can have
/// both (`claude mcp add` refuses a name twice).
pub const STDIO_NAME: &str = "archgate";
pub const HTTP_NAME: &str = "archgate-http";

/// The port the running HTTP archgate of this runtime dir listens on (its `state.json`, while
/// its process lives), else `configured`: `serve --http --port N` may differ from config.
pub fn served_port(paths: &archgate_core::paths::Paths, configured: u16) -> u16 {
    crate::server::state_file::read(&paths.state_json())
        .filter(|s| s.live_daemon())
        .and_then(|s| s.port)
        .filter(|p| *p != 0)
        .unwrap_or(configured)
}

/// The MCP URL of an HTTP server on this port.
pub fn mcp_url(port: u16) -> String {
    format!("http://127.0.0.1:{port}/mcp")
}

/// The snippet: a command line (Claude Code with the token file), or a block for the client's
/// own config file (every other case). Each client kind takes its header as follows:
/// - Claude Code: `claude mcp add-json` with a `headersHelper`, a command Claude Code runs when
///   it connects, which reads the token file; for a shown token, a `.mcp.json` block instead.
/// - Claude Desktop: `mcp-remote` (it has no HTTP transport of its own) with the header taken
///   from its environment; with the token file, a `sh -c` that reads the file into that
///   variable when it starts, so the config holds no token at all.
/// - Cursor: the header in `mcp.json` (it cannot read a file; the block goes into the file).
/// - VS Code: an input that asks for the token once and keeps it in VS Code's secret storage.
pub fn snippet(kind: ClientKind, connect: &Connect<'_>) -> String {
    let pretty = |v: serde_json::Value| serde_json::to_string_pretty(&v).unwrap_or_default();
    match connect {
        // The client's own name: the daemon serves it under `[clients.NAME]`, with its budget.
        Connect::Stdio { exe } => match kind {
            ClientKind::ClaudeCode => format!(
                "claude mcp add {STDIO_NAME} -- {exe} serve --client {}",
                kind.names().0
            ),
            ClientKind::ClaudeDesktop | ClientKind::Cursor => pretty(
                json!({"mcpServers": {STDIO_NAME: {"command": exe, "args": ["serve", "--client", kind.names().0]}}}),
            ),
            ClientKind::Vscode => pretty(
                json!({"servers": {STDIO_NAME: {"type": "stdio", "command": exe, "args": ["serve", "--client", kind.names().0]}}}),
            ),
        },
        Connect::Http { url, token } => {
            let auth = format!("Bearer {}", token.value());
            match (kind, token) {
                (ClientKind::ClaudeCode, Token::File { path, .. }) => {
                    let server = json!({"type": "http", "url": url,
                        "headersHelper": header_json_command(path)});
                    format!(
                        "claude mcp add-json {HTTP_NAME} {}",
                        sh_quote(&server.to_string())
                    )
                }
                (ClientKind::ClaudeCode, Token::Shown(_)) => {
                    pretty(json!({"mcpServers": {HTTP_NAME: {
                        "type": "http", "url": url, "headers": {"Authorization": auth}
                    }}}))
                }
                (ClientKind::ClaudeDesktop, Token::File { path, .. }) => {
                    let script = format!(
                        "export {AUTH_VAR}=\"Bearer $(cat {})\"; exec npx -y mcp-remote {} --header {}",
                        sh_quote(&path.display().to_string()),
                        sh_quote(url),
                        sh_quote(&format!("Authorization:${{{AUTH_VAR}}}")),
                    );
                    pretty(
                        json!({"mcpServers": {HTTP_NAME: {"command": "sh", "args": ["-c", script]}}}),
                    )
                }
                (ClientKind::ClaudeDesktop, Token::Shown(_)) => {
                    pretty(json!({"mcpServers": {HTTP_NAME: {
                        "command": "npx",
                        "args": ["-y", "mcp-remote", url, "--header", format!("Authorization:${{{AUTH_VAR}}}")],
                        "env": {AUTH_VAR: auth}
                    }}}))
                }
                (ClientKind::Cursor, _) => pretty(
                    json!({"mcpServers": {HTTP_NAME: {"url": url, "headers": {"Authorization": auth}}}}),
                ),
                (ClientKind::Vscode, token) => {
                    let from = match token {
                        Token::File { path, .. } => {
                            format!("archgate's token (the contents of {})", path.display())
                        }
                        Token::Shown(_) => "archgate's token for this client".to_owned(),
                    };
                    pretty(json!({
                        "inputs": [{"type": "promptString", "id": VSCODE_INPUT,
                                    "description": from, "password": true}],
                        "servers": {HTTP_NAME: {"type": "http", "url": url, "headers":
                            {"Authorization": format!("Bearer ${{input:{VSCODE_INPUT}}}")}}}
                    }))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    /// The snippets as text (run by a real shell with recording stand-ins for `claude` and `npx`
    /// in `tests/archgate/home/client_config.rs`, through the binary).
    #[test]
    fn no_printed_command_and_no_programs_arguments_carry_the_token() {
        let file = Path::new("/home/it's me/.local/state/archgate/token");
        let url = "http://127.0.0.1:9/mcp";
        let c = Connect::Http {
            url,
            token: Token::File {
                path: file,
                token: TOKEN,
            },
        };
        let line = snippet(ClientKind::ClaudeCode, &c);
        assert!(
            line.starts_with("claude mcp add-json archgate-http '"),
            "{line}"
        );
        assert!(!line.contains(TOKEN), "{line}");
        let desktop = snippet(ClientKind::ClaudeDesktop, &c);
        assert!(!desktop.contains(TOKEN), "{desktop}");
        let v: serde_json::Value = serde_json::from_str(&desktop).unwrap();
        assert_eq!(v["mcpServers"][HTTP_NAME]["command"], "sh");
        let vscode = snippet(ClientKind::Vscode, &c);
        assert!(!vscode.contains(TOKEN), "{vscode}");
        let v: serde_json::Value = serde_json::from_str(&vscode).unwrap();
        assert_eq!(v["inputs"][0]["password"], true);
        assert_eq!(
            v["servers"][HTTP_NAME]["headers"]["Authorization"],
            "Bearer ${input:archgate-token}"
        );
        // Cursor cannot read a file: the token goes into its config file, in the header.
        let v: serde_json::Value = serde_json::from_str(&snippet(ClientKind::Cursor, &c)).unwrap();
        assert_eq!(
            v["mcpServers"][HTTP_NAME]["headers"]["Authorization"],
            format!("Bearer {TOKEN}")
        );
        // A token shown once: config blocks, none a command line, none with the token among a
        // program's arguments.
        let shown = Connect::Http {
            url,
            token: Token::Shown(TOKEN),
        };
        for kind in ClientKind::ALL {
            let s = snippet(kind, &shown);
            let v: serde_json::Value =
                serde_json::from_str(&s).unwrap_or_else(|e| panic!("{e}: {s}"));
            let server = v
                .get("mcpServers")
                .or_else(|| v.get("servers"))
                .map(|m| &m[HTTP_NAME])
                .unwrap();
            assert!(server["url"] == url || server["args"][2] == url, "{s}");
            assert!(
                !server["args"].to_string().contains(TOKEN),
                "{kind:?}: the token among a program's arguments: {s}"
            );
        }
    }

    #[test]
    fn the_header_helper_reads_the_file_when_it_runs() {
        let h = header_json_command(Path::new("/home/it's me/token"));
        assert_eq!(
            h,
            r#"printf '{"Authorization": "Bearer %s"}' "$(cat '/home/it'\''s me/token')""#
        );
    }

    #[test]
    fn both_connections_have_their_own_names_and_clap_spells_each_kind() {
        let c = Connect::Http {
            url: "http://127.0.0.1:9/mcp",
            token: Token::Shown("abc"),
        };
        let stdio = Connect::Stdio {
            exe: "/usr/bin/archgate",
        };
        for kind in ClientKind::ALL {
            let (a, b) = (snippet(kind, &stdio), snippet(kind, &c));
            assert!(a.contains(STDIO_NAME) && !a.contains(HTTP_NAME), "{a}");
            assert!(b.contains(HTTP_NAME), "{b}");
        }
        for kind in ClientKind::ALL {
            let clap_name = clap::ValueEnum::to_possible_value(&kind).unwrap();
            assert_eq!(
                kind.names().0,
                clap_name.get_name(),
                "the spelling clap accepts"
            );
        }
    }

    #[test]
    fn shell_quoting_keeps_one_word() {
        assert_eq!(sh_quote("/home/me/token"), "/home/me/token");
        assert_eq!(sh_quote("it's $HOME"), r"'it'\''s $HOME'");
        assert_eq!(sh_quote(""), "''");
    }
}
