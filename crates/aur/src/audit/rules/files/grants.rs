//! Privilege grants a package ships or a scriptlet writes (attack 31 F15; class: *a grant judged
//! in one place and not its twins*): polkit rules and actions, sudo rules, doas, PAM. Each is
//! read for what it grants and to whom, on the path as the kernel resolves it; when the audit
//! cannot see the text (a file of the upstream tarball) the place itself is rated and the why
//! says so.

use super::super::{Ctx, Sink};
use super::written::{Written, mentions_own};
use crate::audit::names::{self, basename};
use crate::audit::report::Severity;

const ID: &str = "AUR-GRANT";

pub(super) fn judge(ctx: &Ctx, w: &Written, sink: &mut Sink) {
    let p = w.path.as_str();
    let under = |d: &str| {
        p.strip_prefix(d)
            .is_some_and(|r| !r.is_empty() && !r.contains('/'))
    };
    let (sev, why) = if under("/etc/polkit-1/rules.d/") || under("/usr/share/polkit-1/rules.d/") {
        polkit_rules(ctx, w)
    } else if under("/usr/share/polkit-1/actions/") || under("/etc/polkit-1/actions/") {
        match polkit_action(ctx, w) {
            Some(x) => x,
            None => return,
        }
    } else if (p.starts_with("/etc/polkit-1/localauthority/")
        || p.starts_with("/var/lib/polkit-1/localauthority/"))
        && p.ends_with(".pkla")
    {
        pkla(w)
    } else if p == "/etc/ssh/sshd_config" || under("/etc/ssh/sshd_config.d/") {
        match sshd(ctx, w) {
            Some(x) => x,
            None => return,
        }
    } else if p == "/etc/sudoers" || under("/etc/sudoers.d/") {
        sudoers(ctx, w)
    } else if p == "/etc/doas.conf" || p == "/usr/etc/doas.conf" {
        doas(ctx, w)
    } else if under("/etc/pam.d/") || under("/usr/lib/pam.d/") || p.starts_with("/etc/security/") {
        match pam(ctx, w) {
            Some(x) => x,
            None => return,
        }
    } else {
        return;
    };
    let place = if w.in_pkg {
        "ships"
    } else {
        "writes, from a script that runs as root,"
    };
    w.report(sink, ID, sev, place, &why);
}

const NOT_VISIBLE: &str = "the audit cannot see its text (it comes from the upstream sources, not the PKGBUILD or a file of the package's repository), so read it yourself";

/// String literals of a JavaScript or XML text.
fn literals(t: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for q in ['"', '\''] {
        let mut parts = t.split(q);
        parts.next();
        while let Some(s) = parts.next() {
            out.push(s);
            parts.next();
        }
    }
    out
}

/// polkit actions that are root by another name: running any program as root, starting any
/// unit, installing any package, making accounts, a shell in a container.
const ROOT_ACTIONS: &[&str] = &[
    "org.freedesktop.policykit.exec",
    "org.freedesktop.systemd1.manage-units",
    "org.freedesktop.systemd1.manage-unit-files",
    "org.freedesktop.packagekit.package-install",
    "org.freedesktop.packagekit.package-install-untrusted",
    "org.freedesktop.accounts.user-administration",
    "org.freedesktop.machine1.shell",
    "org.freedesktop.machine1.host-shell",
];

fn polkit_rules(ctx: &Ctx, w: &Written) -> (Severity, String) {
    let Some(t) = &w.text else {
        return (
            Severity::Medium,
            format!(
                "a polkit rule, which can let any local user do what otherwise needs an administrator's password; {NOT_VISIBLE}"
            ),
        );
    };
    let grants = t.contains("Result.YES") || t.contains("Result.AUTH_SELF");
    if !grants {
        return (
            Severity::Low,
            "a polkit rule that grants nothing without authentication (it only asks for a password or refuses); check it is the package's own".into(),
        );
    }
    // A rule that answers YES where nothing on the way looks at which action is asked answers
    // every action the same — whether or not the action is tested elsewhere in the file.
    if unguarded_yes(t) {
        return (
            Severity::Critical,
            "a polkit rule that answers YES (or the caller's own password) without looking at which action is asked: every polkit action — `pkexec` of any program as root, any unit, any package — without the administrator's password".into(),
        );
    }
    let lits = literals(t);
    let root_like = lits.iter().any(|l| {
        l.len() >= 4
            && ROOT_ACTIONS
                .iter()
                .any(|a| a == l || (l.ends_with('.') && a.starts_with(l)))
    });
    if root_like {
        return (
            Severity::Critical,
            "a polkit rule that answers YES for an action that is root by another name (`pkexec` of any program, managing any systemd unit, installing packages, making accounts): root without the administrator's password".into(),
        );
    }
    let actions: Vec<&&str> = lits
        .iter()
        .filter(|l| l.contains('.') && !l.contains(' ') && l.len() >= 6)
        .collect();
    if !actions.is_empty() && actions.iter().all(|a| mentions_own(ctx, a)) {
        return (
            Severity::Low,
            "a polkit rule that allows the package's own actions without a password; check who it allows them to".into(),
        );
    }
    (
        Severity::Medium,
        format!(
            "a polkit rule that allows actions of other programs ({}) without the administrator's password; check who it allows them to and that they need it",
            actions
                .iter()
                .take(3)
                .map(|a| **a)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    )
}

/// Programs that run, read or write whatever they are told: root through any of them is root
/// for anything (GTFOBins' common names).
/// A `Result.YES`/`AUTH_SELF*` reached with no test of the action on its way: none of the
/// blocks around it, nor its own statement (`if (…) return …;`, `a.id == … ? … : …`), mentions
/// the action's id or a dotted action name. Read by braces and statement ends; strings and
/// comments are not skipped, which only makes a guard look present.
fn unguarded_yes(t: &str) -> bool {
    let b = t.as_bytes();
    let mut blocks: Vec<usize> = Vec::new();
    let mut headers: Vec<String> = Vec::new();
    let mut stmt_start = 0;
    let guard = |h: &str| {
        h.contains(".id") || h.contains("lookup(") || literals(h).iter().any(|l| l.contains('.'))
    };
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'{' => {
                headers.push(t[stmt_start..i].to_owned());
                blocks.push(i);
                stmt_start = i + 1;
            }
            b'}' => {
                blocks.pop();
                headers.pop();
                stmt_start = i + 1;
            }
            b';' => stmt_start = i + 1,
            _ => {}
        }
        for key in ["Result.YES", "Result.AUTH_SELF"] {
            if b[i..].starts_with(key.as_bytes()) {
                let own = &t[stmt_start..i];
                if !guard(own) && !headers.iter().any(|h| guard(h)) {
                    return true;
                }
            }
        }
        i += 1;
    }
    false
}

fn polkit_action(ctx: &Ctx, w: &Written) -> Option<(Severity, String)> {
    let t = w.text.as_ref()?;
    let compact: String = t.split_whitespace().collect::<Vec<_>>().join("");
    let yes = ["allow_any", "allow_inactive", "allow_active"]
        .iter()
        .any(|k| compact.contains(&format!("<{k}>yes</{k}>")));
    if !yes {
        return None;
    }
    let marker = "org.freedesktop.policykit.exec.path\">";
    let paths: Vec<&str> = compact
        .split(marker)
        .skip(1)
        .filter_map(|r| r.split('<').next())
        .collect();
    let writable = |p: &str| {
        [
            "/tmp/",
            "/var/tmp/",
            "/dev/shm/",
            "/home/",
            "/root/",
            "/run/user/",
        ]
        .iter()
        .any(|d| p.starts_with(d))
    };
    let shell = paths.iter().find(|p| {
        let b = basename(p);
        names::RUNS_ANYTHING.contains(&b) || b.starts_with("python") || writable(p)
    });
    if let Some(p) = shell {
        return Some((
            Severity::Critical,
            format!(
                "a polkit action that lets `pkexec` run {p} as root with no password (allow_* = yes): a shell, interpreter or program that runs whatever it is told, or one anyone can replace — root for any local user"
            ),
        ));
    }
    let foreign = paths.iter().find(|p| !mentions_own(ctx, p));
    Some(match foreign {
        Some(p) => (
            Severity::Medium,
            format!("a polkit action that lets `pkexec` run {p}, not a program named for the package, as root with no password (allow_* = yes); check what that program does with its arguments"),
        ),
        None => (
            Severity::Low,
            "a polkit action allowed without the administrator's password (allow_* = yes); check it only runs the package's own helper".into(),
        ),
    })
}

fn everyone(who: &str) -> bool {
    let w = who.trim_start_matches(['%', '+', ':']);
    matches!(
        w.to_ascii_lowercase().as_str(),
        "all" | "users" | "staff" | "nobody" | "everyone"
    ) || w.starts_with('#')
}

fn sudoers(ctx: &Ctx, w: &Written) -> (Severity, String) {
    let Some(t) = &w.text else {
        // The place is rated by the persistence rule (medium in the package, critical on the
        // live system); here only what the text says.
        return (
            Severity::Low,
            format!("sudo rules (who may run what as root); {NOT_VISIBLE}"),
        );
    };
    let mut worst: Option<(Severity, String)> = None;
    for line in t.lines().map(str::trim) {
        if line.is_empty()
            || line.starts_with('#') && !line.starts_with("#include")
            || line.starts_with("Defaults")
            || line.ends_with("_Alias")
            || line.contains("_Alias ")
        {
            continue;
        }
        if line.starts_with("#include") || line.starts_with("@include") {
            // The stock `@includedir /etc/sudoers.d`; rules read from a place anyone can write
            // are anyone's rules.
            let from = line.split_whitespace().nth(1).unwrap_or("");
            if ["/tmp", "/var/tmp", "/dev/shm", "/home", "/run/user"]
                .iter()
                .any(|d| from.starts_with(d))
            {
                let s = (
                    Severity::Critical,
                    format!("sudo rules read from a place any user can write (`{line}`)"),
                );
                if worst.as_ref().is_none_or(|(v, _)| *v < s.0) {
                    worst = Some(s);
                }
            }
            continue;
        }
        let Some((who, rest)) = line.split_once(char::is_whitespace) else {
            continue;
        };
        let cmds = rest.rsplit(':').next().unwrap_or(rest);
        let cmds = cmds.rsplit(')').next().unwrap_or(cmds);
        let nopasswd = rest.contains("NOPASSWD");
        let all_cmds = cmds.split(',').any(|c| c.trim() == "ALL");
        let whos: Vec<&str> = who.split(',').collect();
        // Root granting root to itself, and the administrators' groups asked for their
        // password (the stock `%wheel ALL=(ALL:ALL) ALL`), grant nothing new.
        let admin = |u: &str| {
            matches!(
                u.trim_start_matches('%').to_ascii_lowercase().as_str(),
                "root" | "wheel" | "sudo" | "admin"
            )
        };
        if whos.iter().all(|u| u.eq_ignore_ascii_case("root")) {
            continue;
        }
        let foreign = whos
            .iter()
            .any(|u| everyone(u) || !(admin(u) || mentions_own(ctx, u)));
        let admins_only = whos.iter().all(|u| admin(u));
        let s = if foreign && (nopasswd || all_cmds) {
            (
                Severity::Critical,
                format!(
                    "sudo rules that let {who} run {} as root{}: `{line}` — a grant to accounts that are neither the administrators nor the package's own",
                    if all_cmds { "any command" } else { "commands" },
                    if nopasswd { " without a password" } else { "" }
                ),
            )
        } else if nopasswd && all_cmds {
            (
                Severity::Critical,
                format!(
                    "sudo rules that let {who} run every command as root without a password: `{line}` — root without the password, for anything that runs as those accounts"
                ),
            )
        } else if admins_only && !nopasswd {
            (
                Severity::Low,
                format!("sudo rules for the administrators, with their password: `{line}`"),
            )
        } else if foreign || admins_only {
            (
                Severity::Medium,
                format!(
                    "sudo rules that let {who} run named commands as root{}: `{line}`; check the commands are narrow and take no input that does more",
                    if nopasswd { " without a password" } else { "" }
                ),
            )
        } else {
            (
                Severity::Low,
                format!(
                    "sudo rules for the package's own account {who}, for named commands: `{line}`; check they are the package's own and narrow"
                ),
            )
        };
        if worst.as_ref().is_none_or(|(v, _)| *v < s.0) {
            worst = Some(s);
        }
    }
    worst.unwrap_or((
        Severity::Low,
        "a sudo rules file that grants nothing (only comments or defaults)".into(),
    ))
}

fn doas(ctx: &Ctx, w: &Written) -> (Severity, String) {
    let Some(t) = &w.text else {
        return (
            Severity::Medium,
            format!("doas rules (who may run what as root); {NOT_VISIBLE}"),
        );
    };
    for line in t.lines().map(str::trim) {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.first() != Some(&"permit") {
            continue;
        }
        let who = words
            .iter()
            .skip(1)
            .find(|x| {
                !matches!(**x, "nopass" | "persist" | "keepenv" | "nolog")
                    && !x.starts_with("setenv")
            })
            .copied()
            .unwrap_or("");
        let restricted = words.contains(&"cmd");
        if (everyone(who) || !mentions_own(ctx, who)) && (words.contains(&"nopass") || !restricted)
        {
            return (
                Severity::Critical,
                format!(
                    "doas rules that let {who} run {} as root: `{line}`",
                    if restricted {
                        "a command without a password"
                    } else {
                        "anything"
                    }
                ),
            );
        }
    }
    (
        Severity::Medium,
        "doas rules; check who they let run what as root".into(),
    )
}

/// Modules that check who the user is (a password, a key, a fingerprint, another service).
const CHECKING: &[&str] = &[
    "pam_unix",
    "pam_systemd_home",
    "pam_fprintd",
    "pam_u2f",
    "pam_sss",
    "pam_ldap",
    "pam_krb5",
    "pam_google_authenticator",
    "pam_oath",
    "pam_pkcs11",
    "pam_faillock",
    "pam_securetty",
    "pam_rootok",
    "pam_wheel",
    "pam_nologin",
    "pam_deny",
    "pam_access",
    "pam_succeed_if",
    "pam_tally2",
    "pam_userdb",
    "pam_winbind",
    "pam_p11",
    "pam_howdy",
    "pam_kwallet5",
    "pam_gnome_keyring",
    "pam_yubico",
    "pam_ssh",
];

/// The packages that own the system's shared PAM services on Arch (their file lists): the
/// service's name (a trailing `*` matches a prefix) and the owner's name (a prefix: `sudo-rs`,
/// `pambase-turnstile` are the same files' makers).
const PAM_OWNERS: &[(&str, &str)] = &[
    ("system-*", "pambase"),
    ("other", "pambase"),
    ("sudo*", "sudo"),
    ("su", "util-linux"),
    ("su-l", "util-linux"),
    ("runuser*", "util-linux"),
    ("login", "util-linux"),
    ("remote", "util-linux"),
    ("chfn", "util-linux"),
    ("chsh", "util-linux"),
    ("passwd", "shadow"),
    ("chpasswd", "shadow"),
    ("newusers", "shadow"),
    ("groupmems", "shadow"),
    ("sshd", "openssh"),
    ("polkit-1", "polkit"),
    ("systemd-user", "systemd"),
    ("doas", "opendoas"),
];

/// The service is the package's own: named for it, or one of the shared services and the
/// package is (a build of) the package that owns it.
fn own_service(ctx: &Ctx, service: &str) -> bool {
    mentions_own(ctx, service)
        || PAM_OWNERS.iter().any(|(s, owner)| {
            let named = match s.strip_suffix('*') {
                Some(p) => service.starts_with(p),
                None => service == *s,
            };
            named
                && ctx
                    .pkgnames
                    .iter()
                    .any(|n| n.to_ascii_lowercase().starts_with(owner))
        })
}

fn pam(ctx: &Ctx, w: &Written) -> Option<(Severity, String)> {
    let service = basename(&w.path);
    let own = own_service(ctx, service);
    let Some(t) = &w.text else {
        // Arch's own packages ship their services' PAM files from their upstream sources; the
        // place alone, in the package, is worth showing, not a verdict.
        return Some((
            Severity::Low,
            format!(
                "PAM configuration ({service}), which decides how its logins check passwords; {NOT_VISIBLE}"
            ),
        ));
    };
    let lines: Vec<String> = t
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(str::to_owned)
        .collect();
    let auth: Vec<&String> = lines
        .iter()
        .filter(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|f| f.trim_start_matches('-') == "auth")
        })
        .collect();
    let checked = auth.iter().any(|l| {
        let l = l.to_ascii_lowercase();
        CHECKING.iter().any(|m| l.contains(m))
            || matches!(l.split_whitespace().nth(1), Some("include" | "substack"))
    });
    for line in &lines {
        let l = line.to_ascii_lowercase();
        if l.contains("ld_preload") || l.contains("ld_library_path") {
            return Some((
                Severity::Critical,
                format!("sets a library path for every program of a login (`{line}`)"),
            ));
        }
        let is_auth = auth.contains(&line);
        let control = l.split_whitespace().nth(1).unwrap_or("");
        // pam_permit decides the stack only when it is enough by itself (`sufficient`, a
        // `[success=done]` jump) or nothing else in the stack checks anyone.
        let decides = control == "sufficient"
            || control.contains("success=done")
            || control.contains("default=done")
            || (matches!(control, "required" | "requisite") && !checked);
        if !own && is_auth && l.contains("pam_permit.so") && decides {
            return Some((
                Severity::Critical,
                format!(
                    "accepts anyone without a password for {service}, a service that is not the package's own (`{line}`)"
                ),
            ));
        }
        if l.contains("pam_exec.so") && !mentions_own(ctx, &l) {
            return Some((
                Severity::High,
                format!("runs a program on every authentication through pam_exec (`{line}`)"),
            ));
        }
    }
    Some((
        Severity::Low,
        "PAM configuration; check it is the package's own service's".into(),
    ))
}

/// polkit's older `.pkla` files (localauthority): `Identity`, `Action`, `Result*=yes`.
fn pkla(w: &Written) -> (Severity, String) {
    let Some(t) = &w.text else {
        return (
            Severity::Medium,
            format!(
                "a polkit authorization file, which can let any local user do what otherwise needs an administrator's password; {NOT_VISIBLE}"
            ),
        );
    };
    let yes = t.lines().any(|l| {
        let l = l.replace(' ', "");
        (l.starts_with("ResultAny=")
            || l.starts_with("ResultInactive=")
            || l.starts_with("ResultActive="))
            && (l.ends_with("=yes") || l.ends_with("=auth_self") || l.ends_with("=auth_self_keep"))
    });
    let value = |k: &str| {
        t.lines()
            .find_map(|l| {
                l.trim()
                    .strip_prefix(k)
                    .map(|v| v.trim_start_matches([' ', '=']).to_owned())
            })
            .unwrap_or_default()
    };
    let actions = value("Action");
    let identity = value("Identity");
    let every_action = actions.split(';').any(|a| {
        a.trim() == "*"
            || a.trim().ends_with(".*")
                && ROOT_ACTIONS
                    .iter()
                    .any(|r| r.starts_with(a.trim().trim_end_matches('*')))
    });
    let root_like = actions.split(';').any(|a| ROOT_ACTIONS.contains(&a.trim()));
    if yes && (every_action || root_like) {
        return (
            Severity::Critical,
            format!(
                "a polkit authorization that says yes to {identity} for `{actions}`: root without the administrator's password"
            ),
        );
    }
    if yes {
        return (
            Severity::Medium,
            format!(
                "a polkit authorization that says yes to {identity} for `{actions}` without the administrator's password; check who and what"
            ),
        );
    }
    (
        Severity::Low,
        "a polkit authorization file that grants nothing without a password".into(),
    )
}

/// sshd's configuration: who may log in over the network, and with what.
fn sshd(ctx: &Ctx, w: &Written) -> Option<(Severity, String)> {
    let t = w.text.as_ref()?;
    let mut worst: Option<(Severity, String)> = None;
    for line in t.lines().map(str::trim) {
        let mut f = line.split_whitespace();
        let (Some(k), v) = (f.next(), f.collect::<Vec<_>>().join(" ")) else {
            continue;
        };
        let k = k.to_ascii_lowercase();
        let lv = v.to_ascii_lowercase();
        let s = match k.as_str() {
            "permitemptypasswords" if lv == "yes" => (
                Severity::Critical,
                format!(
                    "sshd configuration that lets accounts with no password log in over the network (`{line}`)"
                ),
            ),
            "authorizedkeysfile" | "authorizedprincipalsfile" | "trustedusercakeys"
                if v.split_whitespace().any(|p| {
                    ["/tmp", "/var/tmp", "/dev/shm", "/run/user"]
                        .iter()
                        .any(|d| p.starts_with(d))
                }) =>
            {
                (
                    Severity::Critical,
                    format!(
                        "sshd configuration that reads login keys from a place any user can write (`{line}`)"
                    ),
                )
            }
            "authorizedkeyscommand" | "authorizedprincipalscommand" if !mentions_own(ctx, &v) => (
                Severity::High,
                format!("sshd configuration that asks a program which keys may log in (`{line}`)"),
            ),
            "permitrootlogin" if lv == "yes" => (
                Severity::Medium,
                format!(
                    "sshd configuration that lets root log in over the network with a password (`{line}`)"
                ),
            ),
            _ => continue,
        };
        if worst.as_ref().is_none_or(|(v, _)| *v < s.0) {
            worst = Some(s);
        }
    }
    worst
}
