//! How a caller reached the gate: every audit record names it beside the client's name, so two
//! callers of one name stay apart in the log (issue 33; `adversary/transport.rs`).

/// The way a call came in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// `/mcp` with a bearer token: the client the token names.
    Http,
    /// The daemon's bridge socket: a stdio client's bridge, named by its hello (a same-user
    /// door: the name proves nothing).
    Bridge,
    /// A stdio client served in its own process (no daemon, or `--in-process`).
    Stdio,
    /// The person's own command line (`archgate call`, `policy explain`).
    Cli,
}

impl Transport {
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Http => "http",
            Transport::Bridge => "bridge",
            Transport::Stdio => "stdio",
            Transport::Cli => "cli",
        }
    }
}

impl std::fmt::Display for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
