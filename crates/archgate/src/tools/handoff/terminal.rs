//! Opening a terminal on the person's desktop for a hand-off: a terminal archgate knows how to
//! give a command to (foot, Alacritty, kitty, Ghostty), root's alone, started by archgate itself
//! with none of the person's config:
//!
//! 1. **the compositor's configured terminal**: Sway's `$term` (`set $term foot` in the config
//!    Sway loaded, read over its IPC socket, `GET_CONFIG`), or Hyprland's `$terminal` (`$terminal
//!    = kitty` in `~/.config/hypr/hyprland.conf`, as Hyprland's own example config names it),
//!    when it is one word naming a known terminal;
//! 2. `foot`.
//!
//! Not a launcher (Omarchy's `omarchy-launch-terminal`, `xdg-terminal-exec`): it starts the
//! terminal the person's files choose, reading the person's config — which sets the environment
//! of what it runs (foot's `[environment]`: `LD_PRELOAD` into the helper that takes the
//! password) — and Omarchy's runs it under `setsid`, away from the process a claim is checked
//! against. For the same reason each known terminal gets its no-config flag.
//!
//! `$TERMINAL` is not read: archgate's environment is its client's, and a value there would
//! choose the program that shows the person the command. Every program is found and checked in
//! the trusted directories like any other. The terminal runs `ARCHGATE handoff-run ID` —
//! archgate's own binary, by its path — and nothing of the command: the helper takes the
//! prepared command from this process over the control socket. The environment is the allowlist
//! of `archgate_exec::env::TABLE`.

use archgate_core::exec::{CommandSpec, Executor, Permit};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What the answer says when there is no desktop to open a terminal on.
pub const NO_DESKTOP: &str =
    "no desktop session here (neither WAYLAND_DISPLAY nor DISPLAY is set for archgate)";

/// The terminal tried when the compositor names none archgate knows.
pub const TERMINALS: &[&str] = &["foot"];

/// Terminals a compositor's config may name, and how each is given a title and a command.
const KNOWN: &[(&str, Style)] = &[
    ("foot", Style::TitleEq),
    ("alacritty", Style::TitleArgDashE),
    ("kitty", Style::TitleArg),
    ("ghostty", Style::TitleEqDashE),
];

/// The window title every hand-off terminal has.
pub const TITLE: &str = "archgate hand-off";

/// How long the compositor is given to say its config.
const ASK_COMPOSITOR: Duration = Duration::from_secs(3);

/// How a terminal takes its title and command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    /// `--title=T CMD…` (foot, xdg-terminal-exec, Omarchy's launcher).
    TitleEq,
    /// `--title T -e CMD…` (Alacritty).
    TitleArgDashE,
    /// `--title T CMD…` (kitty).
    TitleArg,
    /// `--title=T -e CMD…` (Ghostty).
    TitleEqDashE,
}

/// The desktop a terminal can be opened on.
#[derive(Debug, Clone)]
pub struct Desktop {
    pub wayland_display: Option<String>,
    pub display: Option<String>,
    pub xdg_runtime_dir: Option<PathBuf>,
    /// Sway's IPC socket, when Sway runs the session.
    pub swaysock: Option<PathBuf>,
    /// Hyprland's config file, when Hyprland runs the session.
    pub hyprland_conf: Option<PathBuf>,
}

/// The person's desktop as this process sees it, if any: its environment completed from the
/// runtime directory (`DesktopEnv::from_process`, as `doctor` and the desktop tools see it).
pub fn desktop() -> Option<Desktop> {
    let env = archgate_desktop::DesktopEnv::from_process();
    let hyprland_conf = env
        .hyprland_instance_signature
        .as_ref()
        .and_then(|_| env.config_home())
        .map(|c| c.join("hypr/hyprland.conf"));
    let d = Desktop {
        hyprland_conf,
        wayland_display: env.wayland_display.filter(|v| !v.is_empty()),
        display: std::env::var("DISPLAY").ok().filter(|v| !v.is_empty()),
        xdg_runtime_dir: env.xdg_runtime_dir,
        swaysock: env.swaysock,
    };
    (d.wayland_display.is_some() || d.display.is_some()).then_some(d)
}

/// The terminal a hand-off opens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Terminal {
    /// The program, as it is found in the trusted directories.
    pub program: String,
    /// Where the choice came from, for `doctor` and the answer.
    pub how: String,
    style: Style,
}

impl Terminal {
    /// The terminal's argv for hand-off `id`: no user config (it could set the helper's
    /// environment), its title, then `ARCHGATE handoff-run ID`.
    pub fn argv(&self, archgate: &str, id: &str) -> Vec<String> {
        let mut v = vec![self.program.clone()];
        let base = self.program.rsplit('/').next().unwrap_or(&self.program);
        v.extend(no_user_config(base).iter().map(|a| (*a).to_owned()));
        match self.style {
            Style::TitleEq => v.push(format!("--title={TITLE}")),
            Style::TitleEqDashE => v.extend([format!("--title={TITLE}"), "-e".into()]),
            Style::TitleArg => v.extend(["--title".into(), TITLE.into()]),
            Style::TitleArgDashE => v.extend(["--title".into(), TITLE.into(), "-e".into()]),
        }
        v.extend([archgate.to_owned(), "handoff-run".to_owned(), id.to_owned()]);
        v
    }
}

/// The one-word program Sway's config names as `$term` (the last `set $term …` wins, as in
/// Sway), when it is a terminal archgate knows.
pub fn sway_term(config: &str) -> Option<&str> {
    let mut term = None;
    for line in config.lines() {
        let mut w = line.split_whitespace();
        if w.next() == Some("set") && w.next() == Some("$term") {
            let value: Vec<&str> = w.collect();
            term = match value.as_slice() {
                [one] => Some(*one),
                _ => None,
            };
        }
    }
    term.filter(|t| known(t).is_some())
}

/// The one-word program Hyprland's config names as `$terminal` (`$terminal = kitty`; the last
/// wins), when it is a terminal archgate knows.
pub fn hyprland_term(config: &str) -> Option<&str> {
    let mut term = None;
    for line in config.lines() {
        let line = line.split('#').next().unwrap_or("");
        if let Some((name, value)) = line.split_once('=')
            && name.trim() == "$terminal"
        {
            let value: Vec<&str> = value.split_whitespace().collect();
            term = match value.as_slice() {
                [one] => Some(*one),
                _ => None,
            };
        }
    }
    term.filter(|t| known(t).is_some())
}

/// The flags that make a known terminal read no configuration of the person's (each
/// terminal's own documented way).
fn no_user_config(program: &str) -> &'static [&'static str] {
    match program {
        "foot" => &["--config=/dev/null"],
        "alacritty" => &["--config-file", "/dev/null"],
        "kitty" => &["--config", "NONE"],
        "ghostty" => &["--config-default-files=false"],
        _ => &[],
    }
}

fn known(program: &str) -> Option<Style> {
    let base = program.rsplit('/').next().unwrap_or(program);
    KNOWN.iter().find(|(n, _)| *n == base).map(|(_, s)| *s)
}

/// Which terminal would open here, if any, given what the compositor's config names
/// (`configured`, e.g. Sway's `$term`). For `doctor` too.
pub fn choose(exec: &Executor, configured: Option<&str>) -> Option<Terminal> {
    let found = |p: &str| exec.resolve_program(p).is_ok();
    let pick = |program: &str, how: &str, style: Style| Terminal {
        program: program.to_owned(),
        how: how.to_owned(),
        style,
    };
    // Not a launcher (Omarchy's `omarchy-launch-terminal`, `xdg-terminal-exec`): it starts the
    // terminal the person's own files name, with the person's own config — which sets the
    // environment of the program it runs (foot's `[environment]`: `LD_PRELOAD` into the helper
    // that takes the password) — and `setsid` re-parents it away from the process a claim is
    // checked against. A terminal archgate knows is started itself, without user config.
    if let Some(t) = configured
        && let Some(style) = known(t)
        && found(t)
    {
        return Some(pick(
            t,
            "the compositor's configured terminal ($term)",
            style,
        ));
    }
    found("foot").then(|| pick("foot", "foot", Style::TitleEq))
}

/// The compositor's configured terminal: Sway's `$term`, asked over its socket, or Hyprland's
/// `$terminal`, read from its config file (at most 1 MiB); nothing for another compositor.
pub async fn configured(desk: &Desktop) -> Option<String> {
    if let Some(sock) = &desk.swaysock {
        let client = archgate_desktop::SwayClient::at(sock, ASK_COMPOSITOR);
        let config = client.config().await.ok()?;
        return sway_term(&config).map(str::to_owned);
    }
    let conf = desk.hyprland_conf.as_ref()?;
    if std::fs::metadata(conf).ok()?.len() > 1 << 20 {
        return None;
    }
    let text = std::fs::read_to_string(conf).ok()?;
    hyprland_term(&text).map(str::to_owned)
}

/// The terminal a hand-off would open on `desk` (for `doctor` too): chosen as above among
/// root's programs in root's directories alone (`pinned.rs`: the terminal takes the person's
/// password, attack 5b F1), named by its absolute path.
pub async fn which(desk: &Desktop) -> Option<Terminal> {
    let configured = configured(desk).await;
    let exec = super::pinned::executor();
    let mut term = choose(&exec, configured.as_deref())?;
    term.program = super::pinned::program(&term.program)
        .ok()?
        .to_string_lossy()
        .into_owned();
    Some(term)
}

/// Where archgate's package installs the fontconfig file of the hand-off's terminal
/// (`packaging/handoff/fonts.conf`).
pub const FONTS: &str = "/usr/lib/archgate/fonts.conf";

/// [`FONTS`] when root owns it all the way, or why not. The terminal gets it as
/// `FONTCONFIG_FILE`, so the command the person approves is drawn with fonts and rules from
/// root's files alone — never `~/.config/fontconfig`, `~/.local/share/fonts` or a per-user
/// cache, which any program of the person's can write (attack 22 F3: an agent's font drew `S`
/// as `R` in the terminal's text). Without it no terminal opens.
pub fn fonts() -> Result<PathBuf, String> {
    super::pinned::root_file(Path::new(FONTS)).map_err(|e| {
        format!(
            "archgate's fonts.conf for the hand-off's terminal is not usable ({e}): without it the \
             terminal would draw the command with fonts from your home, which an agent can write; \
             archgate's package installs it (or: sudo install -Dm644 packaging/handoff/fonts.conf {FONTS})"
        )
    })
}

/// Opens the terminal; its pid, or the reason when it cannot.
pub async fn open(permit: &Permit, desk: &Desktop, id: &str) -> Result<u32, String> {
    let Some(term) = which(desk).await else {
        return Err(format!(
            "no terminal to open here ({} not installed where root alone can write: {}; and the compositor names none there)",
            TERMINALS.join(", "),
            super::pinned::DIRS.join(", ")
        ));
    };
    let me = std::env::current_exe().map_err(|e| format!("archgate's own path is unknown: {e}"))?;
    // The helper shows the command and hands over to sudo: root's alone, like sudo (F1).
    super::pinned::root_file(&me).map_err(|e| {
        format!("archgate itself is not root's alone, so the helper in the terminal could be anyone's: {e}")
    })?;
    // The person reads the command in this terminal: its fonts are root's alone (attack 22 F3).
    let fonts = fonts()?;
    let mut argv = term.argv(&me.to_string_lossy(), id).into_iter();
    // The terminal's `PATH` holds root's directories only: what the terminal starts itself — a
    // notification or URL command — is root's program (attack 24 F3: the person's `notify-send`,
    // a direct child of the terminal, kept a control connection and exec'd the real helper under
    // it).
    let mut spec = CommandSpec::new(argv.next().unwrap_or_default())
        .args(argv)
        .root_path_only();
    spec = spec.env("FONTCONFIG_FILE", fonts.to_string_lossy());
    if let Some(w) = &desk.wayland_display {
        spec = spec.env("WAYLAND_DISPLAY", w);
    }
    if let Some(d) = &desk.display {
        spec = spec.env("DISPLAY", d);
    }
    if let Some(r) = &desk.xdg_runtime_dir {
        spec = spec.env("XDG_RUNTIME_DIR", r.to_string_lossy());
    }
    permit
        .spawn_detached(spec)
        .map_err(|e| format!("the terminal did not start: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use archgate_core::exec::ExecConfig;

    /// A directory of trusted programs: each an empty executable file.
    fn programs(names: &[&str]) -> (tempfile::TempDir, Executor) {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        for n in names {
            let p = dir.path().join(n);
            std::fs::write(&p, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let exec = Executor::new(ExecConfig {
            search_dirs: vec![dir.path().to_owned()],
            require_root_owned: false,
            ..ExecConfig::default()
        });
        (dir, exec)
    }

    #[test]
    fn the_terminal_runs_the_helper_with_the_id_and_nothing_of_the_command() {
        let (_d, exec) = programs(&["foot"]);
        let t = choose(&exec, None).unwrap();
        assert_eq!(
            t.argv("/usr/bin/archgate", "abc-1-2"),
            [
                "foot",
                "--config=/dev/null",
                "--title=archgate hand-off",
                "/usr/bin/archgate",
                "handoff-run",
                "abc-1-2"
            ]
        );
    }

    /// A launcher starts the terminal the person's files name, with the person's config, and
    /// re-parents it (`setsid`): never the hand-off's terminal, even where it is installed.
    #[test]
    fn a_launcher_is_never_the_hand_offs_terminal() {
        // Omarchy 4's `bin/omarchy-launch-terminal` ([command...]) opens the default terminal.
        let (_d, exec) = programs(&["omarchy-launch-terminal", "xdg-terminal-exec", "foot"]);
        let t = choose(&exec, None).unwrap();
        assert_eq!(t.program, "foot");
        let (_d, exec) = programs(&["omarchy-launch-terminal", "xdg-terminal-exec"]);
        assert_eq!(choose(&exec, None), None);
    }

    /// Each known terminal reads no user config: foot's `[environment]`, alacritty's `[env]`,
    /// kitty's `env` would set the helper's environment (`LD_PRELOAD`).
    #[test]
    fn every_known_terminal_starts_without_the_persons_config() {
        for (name, flags) in [
            ("foot", vec!["--config=/dev/null"]),
            ("alacritty", vec!["--config-file", "/dev/null"]),
            ("kitty", vec!["--config", "NONE"]),
            ("ghostty", vec!["--config-default-files=false"]),
        ] {
            let (_d, exec) = programs(&[name]);
            let t = choose(&exec, Some(name)).unwrap();
            let argv = t.argv("/a", "1");
            assert_eq!(argv[1..=flags.len()], flags[..], "{argv:?}");
        }
    }

    #[test]
    fn sways_configured_term_is_used_when_it_names_a_known_terminal() {
        // The shape of Sway's own default config (`/etc/sway/config`: `set $term foot`), and a
        // person's that changed it.
        let config = "# Your preferred terminal emulator\nset $term foot\nset $mod Mod4\n\
                      bindsym $mod+Return exec $term\nset $term alacritty\n";
        assert_eq!(sway_term(config), Some("alacritty"));
        let (_d, exec) = programs(&["alacritty", "foot"]);
        let t = choose(&exec, sway_term(config)).unwrap();
        assert_eq!(t.program, "alacritty");
        assert!(t.how.contains("$term"), "{t:?}");
        assert_eq!(
            t.argv("/a", "1"),
            [
                "alacritty",
                "--config-file",
                "/dev/null",
                "--title",
                "archgate hand-off",
                "-e",
                "/a",
                "handoff-run",
                "1"
            ]
        );
        // More than a program (a command line), or a program archgate does not know: not used.
        assert_eq!(sway_term("set $term foot -e tmux\n"), None);
        assert_eq!(sway_term("set $term xterm\n"), None);
        let (_d, exec) = programs(&["foot"]);
        assert_eq!(
            choose(&exec, Some("alacritty")).unwrap().program,
            "foot",
            "a configured terminal that is not installed falls back"
        );
    }

    #[test]
    fn hyprlands_configured_terminal_is_used_when_it_names_a_known_terminal() {
        // The shape of Hyprland's example config (`hyprland.conf`: `$terminal = kitty`, then
        // `bind = $mainMod, Q, exec, $terminal`).
        let config = "# See https://wiki.hypr.land/Configuring/Keywords/\n$terminal = kitty\n\
                      $fileManager = dolphin\nbind = $mainMod, Q, exec, $terminal\n";
        assert_eq!(hyprland_term(config), Some("kitty"));
        let (_d, exec) = programs(&["kitty", "foot"]);
        let t = choose(&exec, hyprland_term(config)).unwrap();
        assert_eq!(
            t.argv("/a", "1"),
            [
                "kitty",
                "--config",
                "NONE",
                "--title",
                "archgate hand-off",
                "/a",
                "handoff-run",
                "1"
            ]
        );
        // Omarchy 3's `$terminal = uwsm app -- xdg-terminal-exec`: a command line, not used
        // (Omarchy's launcher or xdg-terminal-exec is found first there).
        assert_eq!(
            hyprland_term("$terminal = uwsm app -- xdg-terminal-exec\n"),
            None
        );
        assert_eq!(hyprland_term("$terminal=ghostty # mine\n"), Some("ghostty"));
    }
}
