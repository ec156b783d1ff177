//! Persistence locations: where a written file comes back after every boot or login.

use crate::audit::names::basename;
use crate::audit::report::Severity;

pub(super) const SYSTEM_COMMANDS: &[&str] = &[
    "ls",
    "cd",
    "cp",
    "mv",
    "rm",
    "cat",
    "sudo",
    "su",
    "ssh",
    "scp",
    "git",
    "gpg",
    "pacman",
    "yay",
    "paru",
    "makepkg",
    "curl",
    "wget",
    "bash",
    "sh",
    "zsh",
    "fish",
    "python",
    "python3",
    "node",
    "npm",
    "passwd",
    "doas",
    "pkexec",
    "systemctl",
    "ps",
    "top",
    "grep",
    "find",
    "vim",
    "nvim",
    "code",
    "firefox",
    "chromium",
    "kitty",
    "alacritty",
    "hyprctl",
    "swaymsg",
    "omarchy",
];

/// Persistence locations: (what, severity) — also checked inside `$pkgdir` where relevant.
pub(super) fn persistence(p: &str) -> Option<(&'static str, Severity)> {
    let (in_pkg, rest) = match p.strip_prefix("$pkgdir") {
        Some(r) => (true, r),
        None => (false, p),
    };
    let l = rest.to_ascii_lowercase();
    let home = l.starts_with("$home")
        || l.starts_with("/home/")
        || l.starts_with("/root")
        || l.starts_with("${home");
    if l.contains("/etc/ld.so.preload") {
        return Some((
            "/etc/ld.so.preload, which injects a library into every program",
            Severity::Critical,
        ));
    }
    if l.contains("/systemd/")
        && (l.contains(".wants/") || l.contains(".requires/") || l.ends_with(".wants"))
    {
        return Some((
            "a systemd .wants link, which enables a unit without asking",
            Severity::High,
        ));
    }
    if in_pkg {
        if l.starts_with("/home/") || l.starts_with("/root") {
            return Some((
                "a user's home directory inside the package",
                Severity::Medium,
            ));
        }
        if l.starts_with("/etc/sudoers.d") {
            // In pacman's file list, owned and removed with the package: worth reading.
            return Some(("sudo rules", Severity::Medium));
        }
        if l.starts_with("/etc/cron") || l.starts_with("/var/spool/cron") {
            return Some(("a cron job", Severity::Medium));
        }
        return None;
    }
    let rules: &[(&str, &str, Severity)] = &[
        ("/etc/systemd/", "a systemd unit directory", Severity::High),
        (
            "/usr/lib/systemd/",
            "a systemd unit directory",
            Severity::High,
        ),
        ("/lib/systemd/", "a systemd unit directory", Severity::High),
        (
            ".config/systemd/user",
            "a user systemd unit",
            Severity::High,
        ),
        ("/etc/cron", "a cron job", Severity::High),
        ("/var/spool/cron", "a cron job", Severity::High),
        ("/etc/anacrontab", "a cron job", Severity::High),
        (".config/autostart", "desktop autostart", Severity::High),
        ("/etc/xdg/autostart", "desktop autostart", Severity::High),
        (".bashrc", "a shell startup file", Severity::High),
        (".bash_profile", "a shell startup file", Severity::High),
        (".bash_login", "a shell startup file", Severity::High),
        (".profile", "a shell startup file", Severity::High),
        (".zshrc", "a shell startup file", Severity::High),
        (".zprofile", "a shell startup file", Severity::High),
        (".zshenv", "a shell startup file", Severity::High),
        (".zlogin", "a shell startup file", Severity::High),
        ("config.fish", "a shell startup file", Severity::High),
        (".xinitrc", "an X session startup file", Severity::High),
        (".xprofile", "an X session startup file", Severity::High),
        (
            "/etc/profile",
            "a system-wide shell startup file",
            Severity::High,
        ),
        (
            "/etc/bash.bashrc",
            "a system-wide shell startup file",
            Severity::High,
        ),
        (
            "/etc/zsh/",
            "a system-wide shell startup file",
            Severity::High,
        ),
        ("/etc/environment", "the system environment", Severity::High),
        (
            ".config/hypr/",
            "the Hyprland config (exec-once runs at login)",
            Severity::High,
        ),
        (
            ".config/sway/",
            "the Sway config (exec runs at login)",
            Severity::High,
        ),
        (".config/i3/", "the i3 config", Severity::High),
        ("/etc/pam.d/", "PAM authentication", Severity::High),
        ("/etc/sudoers", "sudo rules", Severity::Critical),
        ("/etc/udev/rules.d", "udev rules", Severity::High),
        ("/etc/pacman.d/hooks", "an ALPM hook", Severity::High),
        ("/usr/share/libalpm/hooks", "an ALPM hook", Severity::High),
        ("/etc/pacman.conf", "pacman's configuration", Severity::High),
    ];
    // The template new accounts are made from: `useradd -m` copies it into accounts created
    // later, so its start-up files run in no existing session.
    let skel = l.starts_with("/etc/skel/");
    // A start-up file's name in a system directory (`/etc/xdg/.bashrc`, `/usr/share/x/.profile`)
    // is read by no shell: only homes (and the template for them) hold them.
    let system_dir = !skel && (l.starts_with("/etc/") || l.starts_with("/usr/"));
    // Dot-file names (`.profile`) match a whole file name, not part of one (`x.profiles`).
    let hit = |m: &str| {
        if m.starts_with('.') && !m.contains('/') {
            !system_dir && basename(&l) == m
        } else {
            l.contains(m)
        }
    };
    if let Some((_, what, sev)) = rules.iter().find(|(m, _, _)| hit(m)) {
        if skel {
            return Some((
                "the template new accounts are made from (/etc/skel): it runs in accounts created later, not in any existing one; check the text is the package's own and harmless",
                (*sev).min(Severity::Medium),
            ));
        }
        return Some((what, *sev));
    }
    if home && l.contains("/.local/bin/") {
        let prog = basename(&l);
        return Some(if SYSTEM_COMMANDS.contains(&prog) {
            (
                "~/.local/bin with the name of a system command, which shadows it",
                Severity::High,
            )
        } else {
            ("~/.local/bin", Severity::Medium)
        });
    }
    None
}
