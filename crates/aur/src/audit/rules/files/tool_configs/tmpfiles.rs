//! `tmpfiles.d` lines read as systemd-tmpfiles reads them — which files a line creates, opens,
//! links or hands set-id bits, and whether that file is one that keeps accounts and root apart —
//! with the rule's shared scale (`worse`) and the files and directories that hold grants.

use super::super::super::Ctx;
use super::super::written::mentions_own;
use crate::audit::names::basename;
use crate::audit::report::Severity;

pub(super) fn worse(
    a: Option<(Severity, String)>,
    b: (Severity, String),
) -> Option<(Severity, String)> {
    match a {
        Some(x) if x.0 >= b.0 => Some(x),
        _ => Some(b),
    }
}

/// Files whose mode, owner, content or existence is what keeps accounts and root apart.
fn guarded(path: &str) -> bool {
    let p = path.trim_end_matches('/');
    const FILES: &[&str] = &[
        "/etc/shadow",
        "/etc/gshadow",
        "/etc/passwd",
        "/etc/group",
        "/etc/sudoers",
        "/etc/doas.conf",
        "/etc/ld.so.preload",
        "/etc/ld.so.conf",
        "/etc/environment",
        "/etc/profile",
        "/etc/bash.bashrc",
        "/etc/pacman.conf",
        "/etc/crontab",
        "/etc/fstab",
        "/root",
        "/home",
        "/etc",
        "/usr",
        "/boot",
        "/",
    ];
    const TREES: &[&str] = &[
        "/etc/sudoers.d/",
        "/etc/polkit-1/",
        "/usr/share/polkit-1/",
        "/etc/pam.d/",
        "/usr/lib/pam.d/",
        "/etc/security/",
        "/etc/ld.so.conf.d/",
        "/etc/profile.d/",
        "/etc/systemd/",
        "/usr/lib/systemd/",
        "/etc/cron",
        "/var/spool/cron",
        "/etc/pacman.d/",
        "/usr/share/libalpm/",
        "/etc/udev/",
        "/usr/lib/udev/",
        "/etc/ssh/",
        "/root/",
        "/home/",
        "/usr/bin/",
        "/usr/sbin/",
        "/usr/local/bin/",
        "/usr/local/sbin/",
        "/bin/",
        "/sbin/",
        "/usr/lib/tmpfiles.d/",
        "/etc/tmpfiles.d/",
        "/etc/xdg/autostart/",
        "/boot/",
        "/dev/mem",
        "/dev/kmem",
        "/dev/port",
        "/dev/sd",
        "/dev/nvme",
    ];
    FILES.contains(&p)
        || TREES
            .iter()
            .any(|t| p.starts_with(t) || format!("{p}/") == *t)
}

/// Directories that only hold grants: a new file there is a new grant, even if nothing was
/// there before.
fn grant_dir(p: &str) -> bool {
    [
        "/etc/sudoers.d/",
        "/etc/polkit-1/rules.d/",
        "/usr/share/polkit-1/rules.d/",
        "/usr/share/polkit-1/actions/",
        "/etc/ld.so.preload",
        "/etc/profile.d/",
        "/etc/pam.d/",
        "/etc/security/",
        "/etc/systemd/system/",
        "/etc/cron.d/",
        "/etc/doas.conf",
    ]
    .iter()
    .any(|d| p.starts_with(d))
}

pub(super) fn tmpfiles(ctx: &Ctx, t: &str) -> Option<(Severity, String)> {
    let mut worst = None;
    for line in t.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        let (Some(ty), Some(path)) = (f.first(), f.get(1)) else {
            continue;
        };
        let kind = ty.trim_end_matches(['!', '-', '=', '~', '^', '+', '$', '?']);
        let plus = ty.contains('+');
        let mode = f.get(2).copied().unwrap_or("-");
        let user = f.get(3).copied().unwrap_or("-");
        let arg = f.get(6..).map(|a| a.join(" ")).unwrap_or_default();
        let bits = super::super::argv::octal(mode.trim_start_matches(['~', ':']));
        let setid = bits.is_some_and(|m| m & 0o6000 != 0);
        // A mode that lets others than the owner write, or others read a secret file.
        let secret = matches!(
            path.trim_end_matches('/'),
            "/etc/shadow" | "/etc/gshadow" | "/etc/sudoers" | "/root"
        ) || path.starts_with("/etc/sudoers.d")
            || path.starts_with("/etc/ssh/ssh_host");
        let opens = bits.is_some_and(|m| m & 0o022 != 0 || (secret && m & 0o004 != 0));
        let owner_given = !matches!(user, "-" | "root" | "0" | "");
        let own = mentions_own(ctx, path);
        let g = guarded(path);
        let mut put = |sev: Severity, why: String| {
            worst = worse(
                worst.take(),
                (sev, format!("a tmpfiles.d line `{line}` {why}")),
            );
        };
        match kind {
            // Mode, owner and ACL changes of an existing file.
            "z" | "Z" | "m" | "a" | "A" => {
                if g && (opens || owner_given || matches!(kind, "a" | "A")) {
                    put(
                        Severity::Critical,
                        format!(
                            "that makes systemd-tmpfiles (root, right after install and at every boot) open {path}, a file that keeps accounts and root apart, to others"
                        ),
                    );
                } else if setid {
                    setid_line(&mut put, path, mode, user, own);
                }
            }
            // Content written, copied or linked into place.
            "w" | "f" | "L" | "C" => {
                let replaces = plus || kind == "w";
                let from_writable = ["/tmp", "/home", "/var/tmp", "/dev/shm", "/run/user"]
                    .iter()
                    .any(|d| arg.starts_with(d));
                if kind == "f" && !plus {
                    // Created empty (or with its argument) only when absent.
                    if grant_dir(path) && !arg.is_empty() {
                        put(
                            Severity::High,
                            format!("that writes a new file into {path}"),
                        );
                    }
                } else if from_writable && (g || grant_dir(path)) {
                    put(
                        Severity::Critical,
                        format!(
                            "that {} {path} from a place any user can write",
                            if kind == "L" { "links" } else { "copies" }
                        ),
                    );
                } else if grant_dir(path) && (replaces || kind == "L") {
                    put(
                        Severity::Critical,
                        format!(
                            "that puts a file into {path} (root's tool adds a grant or start-up file there at every boot)"
                        ),
                    );
                } else if g && replaces {
                    put(
                        Severity::Critical,
                        format!("that replaces {path}, a file that keeps accounts and root apart"),
                    );
                } else if g || grant_dir(path) {
                    // `C /etc/pam.d/sshd`: the package's own default (`/usr/share/factory`),
                    // copied only where nothing is: the same as shipping it there.
                    let sev = if path.starts_with("/etc/sudoers")
                        || path.contains("/polkit-1/rules.d/")
                    {
                        Severity::Medium
                    } else {
                        Severity::Low
                    };
                    put(
                        sev,
                        format!(
                            "that creates {path} from the package's default if it is missing; check the default is the usual one"
                        ),
                    );
                } else if setid {
                    setid_line(&mut put, path, mode, user, own);
                }
            }
            // Removal and cleanup.
            "r" | "R" | "e" | "x" | "X" | "D" => {
                let tree = matches!(
                    path.trim_end_matches('/'),
                    "/home"
                        | "/root"
                        | "/etc"
                        | "/usr"
                        | "/boot"
                        | "/var"
                        | "/"
                        | "/var/lib"
                        | "/opt"
                        | "/srv"
                ) || path.starts_with("/home/")
                    || path.starts_with("/root/");
                if (tree || (g && kind != "e" && kind != "x" && kind != "X"))
                    && kind != "x"
                    && kind != "X"
                {
                    put(
                        Severity::Critical,
                        format!(
                            "that makes systemd-tmpfiles (root, at every boot) delete or empty {path}"
                        ),
                    );
                }
            }
            "h" | "H" => {
                if g && !own {
                    put(
                        Severity::Medium,
                        format!("that changes the file attributes of {path}"),
                    );
                }
            }
            _ => {
                if setid && matches!(kind, "f" | "F") {
                    setid_line(&mut put, path, mode, user, own);
                } else if opens && g && !matches!(kind, "d" | "v" | "q" | "Q" | "p") {
                    put(
                        Severity::Critical,
                        format!("that makes {path} writable by others"),
                    );
                }
            }
        }
    }
    worst
}

/// A tmpfiles.d line that sets a set-id bit: what `chmod` would do to the installed file, as
/// root, after every boot. On a program that runs anything it is root for anyone; a set-user-id
/// root program is worth review (the modes rule's rating for the package's own); a set-group-id
/// to an ordinary group (`utmp`, `postdrop`) only shown.
fn setid_line(
    put: &mut impl FnMut(Severity, String),
    path: &str,
    mode: &str,
    user: &str,
    own: bool,
) {
    let bits = super::super::argv::octal(mode.trim_start_matches(['~', ':'])).unwrap_or(0);
    let name = basename(path);
    if crate::audit::names::RUNS_ANYTHING.contains(&name) || name.starts_with("python") {
        put(
            Severity::Critical,
            format!(
                "that sets a set-id mode ({mode}) on {path}, a program that runs whatever it is told: root for anyone"
            ),
        );
    } else if bits & 0o4000 != 0 && matches!(user, "-" | "root" | "0") {
        put(
            if own { Severity::Low } else { Severity::Medium },
            format!(
                "that makes {path} set-user-id root ({mode}): it runs as root for anyone; check it is the package's own program and needs it"
            ),
        );
    } else {
        put(
            Severity::Low,
            format!(
                "that sets a set-id mode ({mode}) on {path}; check it is the package's own program"
            ),
        );
    }
}
