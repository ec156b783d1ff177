//! The command line, defined once: parsing, `--help`, completions and the man page derive from it.

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "archgate",
    version,
    about = "The MCP server Arch Linux users trust with their desktop",
    long_about = "archgate lets AI agents (Claude Code, Claude Desktop, Cursor, any MCP client) read Arch \
                  knowledge and work on an Omarchy/Hyprland or Sway desktop, while every call passes one gate: \
                  policy, resolution, the person's approval, execution, audit."
)]
pub struct Cli {
    /// Config file (default: $XDG_CONFIG_HOME/archgate/config.toml).
    #[arg(long, global = true, env = "ARCHGATE_CONFIG")]
    pub config: Option<PathBuf>,
    /// Log level on stderr: error, warn, info, debug, trace.
    #[arg(long, global = true, env = "ARCHGATE_LOG")]
    pub log: Option<String>,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve MCP over stdio (default) or streamable HTTP on 127.0.0.1.
    Serve {
        /// Serve streamable HTTP at http://127.0.0.1:PORT/mcp instead of stdio.
        #[arg(long)]
        http: bool,
        /// Port for --http (0 picks a free one). Default: server.port in config, else 8765.
        #[arg(long, requires = "http")]
        port: Option<u16>,
        /// The client this stdio server speaks for (its grant is `[clients.NAME]`); `local` when
        /// none is given. A running daemon serves it through its bridge socket.
        #[arg(long, conflicts_with = "http")]
        client: Option<String>,
        /// Serve stdio in this process even when a daemon runs (its own broker and budgets).
        #[arg(long, conflicts_with = "http")]
        in_process: bool,
        /// Started by a stdio bridge: a new session, logs to the state directory.
        #[arg(long, hide = true, requires = "http")]
        detached: bool,
    },
    /// List the tools with their tier and schema.
    Tools {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Print the Markdown reference (TOOLS.md is generated from this).
        #[arg(long, conflicts_with = "json")]
        markdown: bool,
    },
    /// Run one tool exactly as an MCP call would (same checks, same audit); prints JSON.
    Call {
        /// Tool name.
        tool: String,
        /// Arguments as a JSON object.
        #[arg(default_value = "{}")]
        args: String,
    },
    /// What this machine has, and what a missing piece disables.
    Doctor,
    /// Print the MCP client configuration for a client.
    ClientConfig {
        client: ClientKind,
        /// Connect over HTTP (with the token) instead of stdio.
        #[arg(long)]
        http: bool,
    },
    /// Inspect the configuration.
    Config {
        #[command(subcommand)]
        action: ConfigAction,
    },
    /// Explain policy decisions.
    Policy {
        #[command(subcommand)]
        action: PolicyAction,
    },
    /// Read the activity (audit) log.
    Log {
        /// Keep printing new records.
        #[arg(long)]
        follow: bool,
        /// Only this tool.
        #[arg(long)]
        tool: Option<String>,
        /// Only records at or after this time (RFC 3339, or a duration like 10m, 2h, 1d).
        #[arg(long)]
        since: Option<String>,
        /// Print raw JSON lines.
        #[arg(long)]
        json: bool,
    },
    /// Manage HTTP clients and their grants.
    Clients {
        #[command(subcommand)]
        action: ClientsAction,
    },
    /// Tell a running archgate to re-read its config now.
    Reload,
    /// List the calls waiting for your approval, from every running archgate.
    Approvals {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run a waiting hand-off (a privileged command an agent prepared) in this terminal: it
    /// shows the exact command, waits for Enter, and sudo asks your password.
    Handoff { id: String },
    /// The helper a hand-off's terminal runs (`archgate handoff` is the person's own spelling).
    #[command(hide = true)]
    HandoffRun { id: String },
    /// Print one waiting call whole: client, tool, route, tier, the exact command, every
    /// argument, the deadline. ID may be a unique prefix of the id.
    Show {
        id: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Approve a waiting call by its id or a unique prefix of it (see `archgate approvals`).
    /// Without an id, with one call waiting, shows it and asks [y/N/a] on your terminal.
    Approve {
        id: Option<String>,
        /// Also create a standing rule that approves identical calls (24 h, 20 uses a day).
        #[arg(long)]
        always: bool,
    },
    /// Deny a waiting call by its id or a unique prefix of it.
    Deny { id: String },
    /// Developer mode: approve every call except destructive and blocked ones, for a bounded time
    /// (at most 8 h).
    DevMode {
        #[command(subcommand)]
        action: DevModeAction,
    },
    /// Standing rules created with "Always…" or `approve --always`.
    Rules {
        #[command(subcommand)]
        action: RulesAction,
    },
    /// Open the approval page in the browser, logged in once through a private login file (the
    /// login never appears on a command line).
    Ui {
        /// Print the login file's path instead of opening a browser.
        #[arg(long)]
        print: bool,
    },
    /// Audit a PKGBUILD statically (never executed): a directory with a PKGBUILD, a PKGBUILD
    /// file, or an AUR package name. Exit status 0 ok, 1 review, 3 dangerous.
    Audit {
        /// A directory, a PKGBUILD file, or an AUR package name.
        target: String,
        /// Print `{"verdict","max_severity","findings":[…]}`.
        #[arg(long)]
        json: bool,
    },
    /// The offline ArchWiki.
    Wiki {
        #[command(subcommand)]
        action: WikiAction,
    },
    /// Is archgate serving, and what waits for you (from /health, else state.json). Exit 0 when
    /// serving, 3 when not.
    Status {
        /// Print the JSON a Waybar custom module reads (text, tooltip, class, alt); exit 0.
        #[arg(long, conflicts_with = "json")]
        waybar: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Ask the archgate on this port (default: the one in state.json, then server.port).
        #[arg(long)]
        port: Option<u16>,
    },
    /// archgate as a systemd user service, for desktops without the Omarchy plugin.
    Service {
        #[command(subcommand)]
        action: ServiceAction,
    },
    /// First run: a policy preset, the plugin or a service, and the commands for your clients.
    Setup(SetupArgs),
    /// Print shell completions.
    Completions { shell: clap_complete::Shell },
    /// Print the man page (roff).
    Man,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ClientKind {
    ClaudeCode,
    ClaudeDesktop,
    Cursor,
    Vscode,
}

impl ClientKind {
    /// Every client kind, in the order they are offered.
    pub const ALL: [ClientKind; 4] = [
        ClientKind::ClaudeCode,
        ClientKind::ClaudeDesktop,
        ClientKind::Cursor,
        ClientKind::Vscode,
    ];

    /// The name on the command line (`claude-code`) and for people (`Claude Code`).
    pub fn names(self) -> (&'static str, &'static str) {
        match self {
            ClientKind::ClaudeCode => ("claude-code", "Claude Code"),
            ClientKind::ClaudeDesktop => ("claude-desktop", "Claude Desktop"),
            ClientKind::Cursor => ("cursor", "Cursor"),
            ClientKind::Vscode => ("vscode", "VS Code"),
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum WikiAction {
    /// Build or update the offline index from arch-wiki-docs HTML (incremental).
    Index {
        /// HTML directory (default: wiki.docs_dir in config, /usr/share/doc/arch-wiki/html).
        #[arg(long)]
        from: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum ConfigAction {
    /// Print problems with line numbers; exit non-zero when there are any.
    Check,
    /// Print the config file's path.
    Path,
    /// Print a commented config with every key and its default.
    Example,
}

#[derive(Debug, Subcommand)]
pub enum PolicyAction {
    /// Print what the gate would decide for a call of TOOL with ARGS (JSON, default `{}`): the
    /// canonical route, the exact command, the tier, the rule that decided, and whether a
    /// standing rule or developer mode would approve it. Nothing runs but read-only look-ups.
    /// E.g. `archgate policy explain omarchy_run '{"route":"theme set","args":["nord"]}'`.
    Explain {
        tool: String,
        /// The call's arguments as JSON.
        #[arg(default_value = "{}")]
        args: String,
        /// The client to decide for.
        #[arg(long, default_value = "local")]
        client: String,
    },
    /// Acknowledge a route held at ask under an allow prefix.
    Ack { route: String },
}

#[derive(Debug, Subcommand)]
pub enum DevModeAction {
    /// Turn it on in every running archgate.
    On {
        /// How long: 30m, 2h, 1h30m (at most 8h).
        #[arg(long = "for", value_name = "DURATION", default_value = "1h")]
        duration: String,
    },
    /// Turn it off in every running archgate.
    Off,
    /// Show whether it is on, and until when.
    Status,
}

#[derive(Debug, Subcommand)]
pub enum RulesAction {
    /// List the standing rules in force.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Revoke one rule by its id.
    Revoke { id: String },
    /// Revoke every rule at once.
    RevokeAll,
    /// Whether a rule keeps approving an act call of a session that just read text archgate did
    /// not write (`after_untrusted`). `on` widens what runs without a question: it is confirmed
    /// through polkit where `approval.presence` applies, as "Always" is.
    AfterUntrusted { id: String, on: OnOff },
}

/// A switch's two positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

#[derive(Debug, Subcommand)]
pub enum ClientsAction {
    /// Add a client; prints its token once and the client-config snippet.
    Add {
        name: String,
        #[arg(long, default_value = "read-only")]
        preset: String,
        /// Only these tools (comma-separated).
        #[arg(long, value_delimiter = ',')]
        tools: Option<Vec<String>>,
    },
    /// List clients.
    List,
    /// Revoke a client's token.
    Revoke { name: String },
    /// Rename a client.
    Rename { from: String, to: String },
}

pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}

#[derive(Debug, Subcommand)]
pub enum ServiceAction {
    /// Write ~/.config/systemd/user/archgate.service, import the session's variables into the
    /// user manager, enable and start it.
    Install {
        /// Only write the unit; print the systemctl commands instead of running them.
        #[arg(long)]
        write_only: bool,
    },
    /// Stop and disable the service and remove the user unit.
    Uninstall,
    /// The unit, whether it is enabled and active, and whether archgate answers.
    Status,
    /// Print the unit (the Arch package installs this text).
    Print {
        /// The binary the unit runs (default: this one).
        #[arg(long, value_name = "PATH")]
        exec: Option<PathBuf>,
    },
}

/// How archgate runs on this desktop (`archgate setup`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunMode {
    Plugin,
    Service,
    Stdio,
}

#[derive(Debug, clap::Args)]
pub struct SetupArgs {
    /// A client to connect (repeatable): claude-code, claude-desktop, cursor, vscode.
    #[arg(long, value_enum)]
    pub client: Vec<ClientKind>,
    /// What agents may use: read-only, desktop or full (written only into a new config.toml).
    #[arg(long, value_parser = ["read-only", "desktop", "full"])]
    pub preset: Option<String>,
    /// Run archgate as a systemd user service.
    #[arg(long, group = "mode")]
    pub service: bool,
    /// Run archgate from the Omarchy plugin (copied into ~/.config/omarchy/plugins).
    #[arg(long, group = "mode")]
    pub plugin: bool,
    /// Let each client start archgate over stdio (no daemon).
    #[arg(long, group = "mode")]
    pub stdio: bool,
    /// Where the plugin's files are (default: /usr/share/archgate/plugin).
    #[arg(long, value_name = "DIR")]
    pub plugin_dir: Option<PathBuf>,
    /// With --service: only write the unit, run no systemctl.
    #[arg(long)]
    pub write_only: bool,
    /// Ask nothing: defaults for every answer not given (preset read-only, stdio, no clients,
    /// no test question).
    #[arg(long, short)]
    pub yes: bool,
    /// End with one harmless test question (always asked on a terminal without --yes).
    #[arg(long)]
    pub test_question: bool,
}

impl SetupArgs {
    pub fn mode(&self) -> Option<RunMode> {
        match (self.plugin, self.service, self.stdio) {
            (true, _, _) => Some(RunMode::Plugin),
            (_, true, _) => Some(RunMode::Service),
            (_, _, true) => Some(RunMode::Stdio),
            _ => None,
        }
    }
}
