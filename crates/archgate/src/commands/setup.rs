//! `archgate setup`: a first run for a person — a policy preset, how archgate runs (the Omarchy
//! plugin, a systemd user service, or started by each client over stdio), the exact commands
//! that connect each MCP client (over HTTP, each a named client of its own), then what it found
//! and what an approval looks like, and one test question (`setup_teach.rs`).
//!
//! Interactive on a terminal; for scripts every answer has a flag and `--yes` takes the defaults
//! for the rest. The config file is written only when none exists: a person's edits are never
//! overwritten.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::out;
use crate::cli::{ClientKind, RunMode, SetupArgs};

/// The plugin's id in its manifest: its directory under `~/.config/omarchy/plugins/`.
pub const PLUGIN_ID: &str = "archgate.mcp";
/// Where the Arch package installs the plugin.
pub const PACKAGED_PLUGIN: &str = "/usr/share/archgate/plugin";

const PRESETS: [&str; 3] = ["read-only", "desktop", "full"];
const DEFAULT_PRESET: &str = "read-only";

pub async fn run(config: Option<PathBuf>, args: SetupArgs) -> anyhow::Result<ExitCode> {
    let ask = !args.yes && std::io::stdin().is_terminal();
    let mut code = ExitCode::SUCCESS;

    // 1. The policy preset, written into a new config file.
    let preset = match args.preset.clone() {
        Some(p) => p,
        None if ask => choose(
            "Which tools may agents use? read-only (look, never change), desktop (also change the desktop: theme, volume, windows), full (also destructive tools)",
            &PRESETS,
            DEFAULT_PRESET,
        )?,
        None => DEFAULT_PRESET.to_owned(),
    };
    if !PRESETS.contains(&preset.as_str()) {
        anyhow::bail!("{preset:?} is not a preset (read-only, desktop, full)");
    }
    let file = crate::app::config_path(config.clone())?;
    write_config(&file, &preset)?;

    // 2. How archgate runs.
    let mode = match args.mode() {
        Some(m) => m,
        None if ask => {
            let m = choose(
                "How should archgate run? plugin (Omarchy starts it with the shell and shows it in the bar), service (a systemd user service), stdio (each MCP client starts its own)",
                &["plugin", "service", "stdio"],
                "stdio",
            )?;
            match m.as_str() {
                "plugin" => RunMode::Plugin,
                "service" => RunMode::Service,
                _ => RunMode::Stdio,
            }
        }
        None => RunMode::Stdio,
    };
    match mode {
        RunMode::Plugin => {
            if !install_plugin(args.plugin_dir.as_deref())? {
                code = ExitCode::from(1);
            }
        }
        RunMode::Service => {
            out("");
            out("== systemd user service");
            let c = super::service::install(config.clone(), args.write_only).await?;
            if c != ExitCode::SUCCESS {
                code = c;
            }
        }
        RunMode::Stdio => {
            out("");
            out("== archgate runs over stdio: each MCP client starts `archgate serve` itself");
        }
    }

    // 3. The clients, each with the exact command or snippet.
    let clients = if !args.client.is_empty() {
        args.client.clone()
    } else if ask {
        choose_clients()?
    } else {
        Vec::new()
    };
    let http = !matches!(mode, RunMode::Stdio);
    for c in &clients {
        out("");
        out(format!("== {}", client_title(*c)));
        out(client_hint(*c, http));
        if http {
            // A client of its own, named after the agent: not the first-run `default`.
            super::setup_teach::connect_named(config.clone(), *c, &preset).await?;
        } else {
            super::client_config::run(config.clone(), *c, http)?;
        }
    }
    if clients.is_empty() {
        out("");
        out(
            "Connect a client later: archgate client-config claude-code|claude-desktop|cursor|vscode [--http]",
        );
    }

    // 4. What this desktop has and what an approval will look like; then one test question.
    let found = super::setup_teach::detect(config.clone());
    let timeout_s = crate::app::config_and_paths(config.clone())
        .map(|(c, _)| c.approval.timeout.as_secs())
        .unwrap_or(0);
    super::setup_teach::explain(&found, timeout_s);
    if ask || args.test_question {
        if !super::setup_teach::test_question(config).await? {
            code = ExitCode::from(1);
        }
    } else {
        out("");
        out("Try a test question any time: archgate setup --test-question (nothing runs)");
    }
    Ok(code)
}

/// Writes `archgate config example` plus the preset for `local` (stdio) and `default` (the HTTP
/// token), only when no config exists. The result is checked to parse without problems first.
fn write_config(file: &Path, preset: &str) -> anyhow::Result<()> {
    out("== policy");
    if file.exists() {
        out(format!(
            "{} exists and stays as it is; to use the {preset} preset set `preset = \"{preset}\"` under [clients.local] and [clients.default]",
            file.display()
        ));
        return Ok(());
    }
    let text = config_text(preset);
    let loaded = archgate_core::config::load_str(&text);
    if !loaded.problems.is_empty() {
        anyhow::bail!(
            "the config setup would write has problems (a bug): {:?}",
            loaded
                .problems
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
        );
    }
    // Into the config directory judged now, never through a link at `config.toml`'s name
    // (`exists()` says no for a dangling one): class *a file written at a path judged once, or
    // at a predictable name, follows whatever is there at write time*.
    archgate_core::paths::write_private_file_creating(file, text.as_bytes())?;
    out(format!(
        "wrote {} with the {preset} preset for every client (edit it any time; it applies without a restart)",
        file.display()
    ));
    Ok(())
}

pub fn config_text(preset: &str) -> String {
    format!(
        "{}\n# Written by `archgate setup`: what every client may use until you change it here or\n# give an HTTP client its own grant (`archgate clients add NAME --preset ...`).\n# `local` is the client that starts archgate over stdio, `default` the HTTP token.\n[clients.local]\npreset = \"{preset}\"\n\n[clients.default]\npreset = \"{preset}\"\n",
        archgate_core::config::EXAMPLE.trim_end()
    )
}

/// Copies the plugin into Omarchy's plugin directory (nothing runs); false when it cannot.
fn install_plugin(from: Option<&Path>) -> anyhow::Result<bool> {
    out("");
    out("== Omarchy plugin");
    let source = match from {
        Some(p) => p.to_owned(),
        None => PathBuf::from(PACKAGED_PLUGIN),
    };
    if !source.join("manifest.json").is_file() {
        out(format!(
            "no plugin at {} (the archgate package installs it there); from a checkout: archgate setup --plugin --plugin-dir ./plugin",
            source.display()
        ));
        return Ok(false);
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .ok_or_else(|| anyhow::anyhow!("HOME is not set"))?;
    // Omarchy reads plugins from this literal path (it does not follow XDG_CONFIG_HOME).
    let target = home.join(".config/omarchy/plugins").join(PLUGIN_ID);
    if target.exists() {
        out(format!(
            "{} exists; left as it is (remove it first to reinstall)",
            target.display()
        ));
    } else {
        copy_tree(&source, &target)?;
        out(format!(
            "copied {} to {}",
            source.display(),
            target.display()
        ));
    }
    out("enable it (the shell picks it up; the bar widget goes to the right section):");
    out("  omarchy-shell shell rescanPlugins");
    out(format!("  omarchy plugin enable {PLUGIN_ID}"));
    out(format!(
        "then: omarchy-shell {PLUGIN_ID} status   (the plugin starts `archgate serve --http`)"
    ));
    Ok(true)
}

/// Copies regular files and directories; a symlink is refused (Omarchy refuses plugins with
/// any). Each file is written into its directory judged then (`paths::OwnDir`), never through
/// a link at its name, with its mode less any group or other write.
fn copy_tree(from: &Path, to: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let own = archgate_core::paths::OwnDir::create(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let dest = to.join(entry.file_name());
        if kind.is_symlink() {
            anyhow::bail!(
                "{} is a symbolic link; Omarchy refuses plugins that contain one",
                entry.path().display()
            );
        } else if kind.is_dir() {
            copy_tree(&entry.path(), &dest)?;
        } else if kind.is_file() {
            let mode = entry.metadata()?.permissions().mode();
            own.write_mode(&entry.file_name(), &std::fs::read(entry.path())?, mode)?;
        }
    }
    Ok(())
}

fn client_title(c: ClientKind) -> &'static str {
    match c {
        ClientKind::ClaudeCode => "Claude Code",
        ClientKind::ClaudeDesktop => "Claude Desktop",
        ClientKind::Cursor => "Cursor",
        ClientKind::Vscode => "VS Code",
    }
}

fn client_hint(c: ClientKind, http: bool) -> String {
    let how = match c {
        ClientKind::ClaudeCode => "run this command:",
        ClientKind::ClaudeDesktop => "merge this into ~/.config/Claude/claude_desktop_config.json:",
        ClientKind::Cursor => "merge this into ~/.cursor/mcp.json:",
        ClientKind::Vscode => "merge this into .vscode/mcp.json (or the user mcp.json):",
    };
    if http {
        format!("{how} (it holds your bearer token: keep it private)")
    } else {
        how.to_owned()
    }
}

fn prompt(question: &str) -> anyhow::Result<String> {
    let mut stdout = std::io::stdout().lock();
    write!(stdout, "{question} ")?;
    stdout.flush()?;
    let mut line = String::new();
    if std::io::stdin().lock().read_line(&mut line)? == 0 {
        anyhow::bail!("no answer (end of input)");
    }
    Ok(line.trim().to_owned())
}

fn choose(question: &str, options: &[&str], default: &str) -> anyhow::Result<String> {
    loop {
        let a = prompt(&format!(
            "{question}\n[{}] (default {default}):",
            options.join("/")
        ))?;
        if a.is_empty() {
            return Ok(default.to_owned());
        }
        if let Some(o) = options.iter().find(|o| o.eq_ignore_ascii_case(&a)) {
            return Ok((*o).to_owned());
        }
        out(format!("please answer one of: {}", options.join(", ")));
    }
}

fn choose_clients() -> anyhow::Result<Vec<ClientKind>> {
    use clap::ValueEnum;
    loop {
        let a = prompt(
            "Which MCP clients should connect? Any of claude-code, claude-desktop, cursor, vscode, comma-separated (empty: none):",
        )?;
        let mut picked = Vec::new();
        let mut bad = None;
        for word in a.split([',', ' ']).filter(|w| !w.is_empty()) {
            match ClientKind::from_str(word, true) {
                Ok(c) => {
                    let name = format!("{c:?}");
                    if !picked.iter().any(|p: &ClientKind| format!("{p:?}") == name) {
                        picked.push(c);
                    }
                }
                Err(_) => bad = Some(word.to_owned()),
            }
        }
        match bad {
            None => return Ok(picked),
            Some(w) => out(format!(
                "{w:?} is not one of claude-code, claude-desktop, cursor, vscode"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_gives_a_config_without_problems() {
        for p in PRESETS {
            let loaded = archgate_core::config::load_str(&config_text(p));
            assert!(loaded.problems.is_empty(), "{p}: {:?}", loaded.problems);
            assert_eq!(
                loaded.config.clients["local"].preset.map(|p| p.as_str()),
                Some(p)
            );
            assert_eq!(
                loaded.config.clients["default"].preset.map(|p| p.as_str()),
                Some(p)
            );
        }
    }
}
