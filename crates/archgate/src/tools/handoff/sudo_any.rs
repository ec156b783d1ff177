//! Will `sudo` ask the person's password for *any* command? For an Omarchy route's script,
//! which runs sudo itself with commands archgate does not see: read from sudo's listing,
//! `sudo -n -k -l`, run in the C locale (its words are judged: attack 5b F9).
//!
//! - sudo answers "a password is required" (exit 1): listing needs a password, which with
//!   sudo's default `listpw=any` means no entry of the person's is `NOPASSWD`;
//! - sudo lists the entries (exit 0): any entry that is `NOPASSWD`, or `!authenticate` among the
//!   defaults, refuses the script's hand-off, saying why (a script may run any command);
//! - a listing without its English header, or anything else: could not tell, refused.
//!
//! The listing does not show every way sudo may skip the password (a command's own
//! `Defaults!CMD !authenticate`, `listpw=always` with a `NOPASSWD` entry: attack 5b F3), so the
//! script's hand-off also probes, with `sudo.rs`'s probe, pacman (`pacman -V`) and every program
//! the script and the scripts it calls give `sudo` by name (`ScriptFacts::sudo_programs`; attack
//! 7 F6). A program named through a variable (`sudo "$cmd"`) cannot be asked about; SECURITY.md
//! says so. The fixed hand-offs use `sudo.rs`'s probe of their exact command alone.

use super::sudo::Asks;

/// Judges `sudo -n -k -l`'s exit status and output for the programs a route's script gives
/// sudo, when every one is named (`Some`, by
/// the absolute paths sudo runs): a `NOPASSWD` entry for another command leaves them asking —
/// Omarchy 4's own `%wheel … NOPASSWD: /usr/bin/tzupdate, /usr/bin/timedatectl set-timezone *`
/// would otherwise refuse every route on a real Omarchy install. With a program it cannot name
/// (`sudo "$cmd"`, `None`), any `NOPASSWD` entry refuses.
pub fn judge_for(
    exit: Option<i32>,
    stdout: &str,
    stderr: &str,
    programs: Option<&[String]>,
) -> Asks {
    match exit {
        Some(0) if !stdout.contains("may run the following commands") => Asks::Unknown(
            "sudo's listing is not one archgate can read (is the C locale missing?)".into(),
        ),
        Some(0) => match programs {
            None => judge_listing(stdout, ""),
            Some(list) => list
                .iter()
                .map(|p| judge_listing(stdout, p))
                .find(|a| *a != Asks::Yes)
                .unwrap_or(Asks::Yes),
        },
        Some(1) if stderr.contains("a password is required") => Asks::Yes,
        _ => Asks::Unknown(
            format!("{} {}", stderr.trim(), stdout.trim())
                .trim()
                .chars()
                .take(400)
                .collect(),
        ),
    }
}

/// Reads a listing: its `Matching Defaults` block and the entries after "may run the following
/// commands". Any `NOPASSWD` command spec that could match `program` (ALL, the path itself, a
/// pattern or a directory) means sudo would not ask.
pub fn judge_listing(listing: &str, program: &str) -> Asks {
    let mut in_defaults = false;
    let mut in_entries = false;
    for line in listing.lines() {
        let t = line.trim();
        if t.starts_with("Matching Defaults entries") {
            in_defaults = true;
            in_entries = false;
            continue;
        }
        if t.contains("may run the following commands") {
            in_defaults = false;
            in_entries = true;
            continue;
        }
        if t.is_empty() {
            continue;
        }
        if in_defaults
            && t.split(',')
                .any(|d| d.trim() == "!authenticate" || d.trim().starts_with("!authenticate"))
        {
            return Asks::No("sudo's defaults say `!authenticate`: no password is asked".into());
        }
        if !in_entries && let Some(reason) = deciding_default(t) {
            return Asks::Unknown(reason);
        }
        if in_entries && let Some(reason) = entry_skips_password(t, program) {
            return Asks::No(reason);
        }
    }
    Asks::Yes
}

/// The defaults of a listing (the lines before its entries) that decide *whose* password sudo
/// asks or *which* PAM stack asks it (attack 16 F3, F3b; class: *sudo's decision predicted from
/// a query that stops before the part that decides*): `pam_service` other than `sudo` (archgate
/// judges `/etc/pam.d/sudo`), and `rootpw`, `targetpw`, `runaspw` (another account's password,
/// whose status the person cannot read: root's may be empty). sudo shows them only when it lists
/// without a password; otherwise they cannot be known (SECURITY.md says so).
pub fn deciding_defaults(listing: &str) -> Option<String> {
    listing
        .lines()
        .take_while(|l| !l.contains("may run the following commands"))
        .find_map(|l| deciding_default(l.trim()))
}

fn deciding_default(line: &str) -> Option<String> {
    line.split([',', ' ', '\t']).map(str::trim).find_map(|d| {
        let decides = matches!(d, "rootpw" | "targetpw" | "runaspw")
            || d.strip_prefix("pam_service=")
                .is_some_and(|v| v.trim_matches('"') != "sudo");
        decides.then(|| {
            format!(
                "sudo's defaults say `{d}`: sudo then asks another account's password or through \
                 another PAM service than the one archgate can judge"
            )
        })
    })
}

/// One entry line, `(runas) TAG: cmd, cmd, TAG: cmd`: tags carry forward along the line, as in
/// sudoers. The entry names the command without a password when a `NOPASSWD` spec could match.
fn entry_skips_password(entry: &str, program: &str) -> Option<String> {
    let rest = match entry.strip_prefix('(') {
        Some(r) => r.split_once(')').map(|(_, r)| r).unwrap_or(r),
        None => entry,
    };
    let mut nopasswd = false;
    for spec in rest.split(',') {
        let mut spec = spec.trim();
        // Leading tags: `NOPASSWD: SETENV: /usr/bin/x`.
        while let Some((tag, after)) = spec.split_once(':') {
            let tag = tag.trim();
            if tag.is_empty() || !tag.bytes().all(|b| b.is_ascii_uppercase() || b == b'_') {
                break;
            }
            match tag {
                "NOPASSWD" => nopasswd = true,
                "PASSWD" => nopasswd = false,
                _ => {}
            }
            spec = after.trim();
        }
        if nopasswd && could_match(spec, program) {
            return Some(format!(
                "the person's sudo rule `{}` runs it without a password",
                entry.trim()
            ));
        }
    }
    None
}

/// Whether a command spec could match `program`: `ALL`, the same file (with or without
/// arguments), a directory holding it, or any pattern (judged as a match: unsure means no). An
/// empty `program` is any command (a route's script may run sudo with any): every spec matches.
///
/// Class (attack 13 F1): *sudo's decision predicted by a textual comparison sudo does not make*.
/// sudo matches a command by its base name and then by the file itself (device and inode, links
/// followed), so `/bin/pacman`, `/usr/sbin/pacman` or `/usr/bin/./pacman` on a merged-/usr system
/// is the rule for `/usr/bin/pacman`: judged the same way here, by [`same_program`].
fn could_match(spec: &str, program: &str) -> bool {
    let cmd = spec.split_whitespace().next().unwrap_or("");
    let cmd = cmd.strip_prefix('!').unwrap_or(cmd);
    program.is_empty()
        || cmd == "ALL"
        || same_program(cmd, program)
        || cmd.contains(['*', '?', '['])
        || (cmd.ends_with('/') && in_directory(cmd, program))
        || cmd.starts_with("sha") // a digest-qualified command: judged as a match
        || !cmd.starts_with('/')
}

/// Whether a directory entry (`/bin/`) holds `program` for sudo: the program's base name in that
/// directory is the same file (on a merged-/usr system `/bin/` holds `/usr/bin/pacman`).
fn in_directory(dir: &str, program: &str) -> bool {
    let Some(base) = std::path::Path::new(program).file_name() else {
        return true;
    };
    // sudo looks the name up in the directory: nothing there (only root could put it there)
    // is no match.
    let there = std::path::Path::new(dir).join(base);
    there.exists() && same_program(&there.to_string_lossy(), program)
}

/// Whether sudo would take the entry's command `cmd` for `program`, as sudo decides it: the same
/// base name, and the same file by device and inode (links followed). A name whose file cannot be
/// looked at (either side) counts as the same: unsure means no password is asked.
fn same_program(cmd: &str, program: &str) -> bool {
    use std::os::unix::fs::MetadataExt;
    let base = |p: &str| {
        std::path::Path::new(p)
            .file_name()
            .map(std::ffi::OsStr::to_owned)
    };
    if cmd == program {
        return true;
    }
    if base(cmd).is_none() || base(cmd) != base(program) {
        return false;
    }
    match (std::fs::metadata(cmd), std::fs::metadata(program)) {
        (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// For any command (`None`: a script may run sudo with any).
    fn judge_any(exit: Option<i32>, stdout: &str, stderr: &str) -> Asks {
        judge_for(exit, stdout, stderr, None)
    }

    // Shapes as Debian 12's sudo 1.9.13 prints them (run here with a test user, 2026-12-05).
    const NOPASSWD_PACMAN: &str = "Matching Defaults entries for tester on vm:
    env_reset, mail_badpass,
    secure_path=/usr/local/sbin\\:/usr/local/bin\\:/usr/sbin\\:/usr/bin\\:/sbin\\:/bin,
    use_pty

User tester may run the following commands on vm:
    (root) NOPASSWD: /usr/bin/pacman
";

    #[test]
    fn a_password_required_to_list_means_sudo_will_ask() {
        assert_eq!(
            judge_any(Some(1), "", "sudo: a password is required\n"),
            Asks::Yes
        );
    }

    #[test]
    fn a_nopasswd_rule_for_the_program_or_all_refuses() {
        assert!(matches!(
            judge_any(Some(0), NOPASSWD_PACMAN, ""),
            Asks::No(_)
        ));
        let all = NOPASSWD_PACMAN.replace("NOPASSWD: /usr/bin/pacman", "NOPASSWD: ALL");
        assert!(matches!(
            judge_listing(&all, "/usr/bin/pacman"),
            Asks::No(_)
        ));
        let glob = NOPASSWD_PACMAN.replace("/usr/bin/pacman", "/usr/bin/*");
        assert!(matches!(
            judge_listing(&glob, "/usr/bin/pacman"),
            Asks::No(_)
        ));
        let dir = NOPASSWD_PACMAN.replace("/usr/bin/pacman", "/usr/bin/");
        assert!(matches!(
            judge_listing(&dir, "/usr/bin/pacman"),
            Asks::No(_)
        ));
        let alias = NOPASSWD_PACMAN.replace("/usr/bin/pacman", "PKGS");
        assert!(matches!(
            judge_listing(&alias, "/usr/bin/pacman"),
            Asks::No(_)
        ));
    }

    #[test]
    fn a_nopasswd_rule_for_another_program_still_asks() {
        let other = NOPASSWD_PACMAN.replace(
            "(root) NOPASSWD: /usr/bin/pacman",
            "(root) NOPASSWD: /usr/bin/systemctl\n    (ALL : ALL) ALL",
        );
        assert_eq!(judge_listing(&other, "/usr/bin/pacman"), Asks::Yes);
        // Tags carry along a line until another tag resets them.
        let mixed = NOPASSWD_PACMAN.replace(
            "(root) NOPASSWD: /usr/bin/pacman",
            "(root) NOPASSWD: /usr/bin/systemctl, PASSWD: /usr/bin/pacman",
        );
        assert_eq!(judge_listing(&mixed, "/usr/bin/pacman"), Asks::Yes);
        let carried = NOPASSWD_PACMAN.replace(
            "(root) NOPASSWD: /usr/bin/pacman",
            "(root) NOPASSWD: /usr/bin/systemctl, /usr/bin/pacman -S *",
        );
        assert!(matches!(
            judge_listing(&carried, "/usr/bin/pacman"),
            Asks::No(_)
        ));
    }

    /// Attack 13 F1: on a merged-/usr system `/bin/pacman` is sudo's rule for `/usr/bin/pacman`
    /// (same base name, same file); the string comparison judged it "another command".
    #[test]
    fn a_nopasswd_entry_is_judged_by_the_file_it_names_not_its_spelling() {
        // Spellings of this machine's own sh, whatever /bin is here (a link or a directory
        // holding the same file): the same file by device and inode.
        let sh = "/usr/bin/sh";
        for other in ["/usr/bin/./sh", "/usr/bin//sh", "/bin/sh"] {
            let same = std::fs::metadata(other).ok().map(|m| {
                use std::os::unix::fs::MetadataExt;
                (m.dev(), m.ino())
            }) == std::fs::metadata(sh).ok().map(|m| {
                use std::os::unix::fs::MetadataExt;
                (m.dev(), m.ino())
            });
            let entry = NOPASSWD_PACMAN.replace("/usr/bin/pacman", &format!("{other} -c *"));
            let judged = judge_listing(&entry, sh);
            assert_eq!(matches!(judged, Asks::No(_)), same, "{other}: {judged:?}");
        }
        // A directory entry holds the program when the program's name there is the same file.
        let bin = NOPASSWD_PACMAN.replace("/usr/bin/pacman", "/bin/");
        let same_dir = std::fs::metadata("/bin/sh").is_ok_and(|m| {
            use std::os::unix::fs::MetadataExt;
            std::fs::metadata(sh).is_ok_and(|n| (m.dev(), m.ino()) == (n.dev(), n.ino()))
        });
        assert_eq!(matches!(judge_listing(&bin, sh), Asks::No(_)), same_dir);
        let etc = NOPASSWD_PACMAN.replace("/usr/bin/pacman", "/etc/");
        assert_eq!(judge_listing(&etc, sh), Asks::Yes);
        // A file that cannot be looked at, with the same base name: counted as the same.
        let gone = NOPASSWD_PACMAN.replace("/usr/bin/pacman", "/nonexistent/bin/sh");
        assert!(matches!(judge_listing(&gone, sh), Asks::No(_)));
        // Another base name is another command for sudo, whatever the file.
        let other = NOPASSWD_PACMAN.replace("/usr/bin/pacman", "/usr/bin/env");
        assert_eq!(judge_listing(&other, sh), Asks::Yes);
    }

    #[test]
    fn for_any_command_every_nopasswd_entry_refuses() {
        // A route's script may run sudo with any program: a rule for another one counts too.
        let other = NOPASSWD_PACMAN.replace("/usr/bin/pacman", "/usr/bin/systemctl");
        assert!(matches!(judge_listing(&other, ""), Asks::No(_)));
        assert_eq!(
            judge_listing(&other.replace("NOPASSWD: ", ""), ""),
            Asks::Yes
        );
    }

    #[test]
    fn for_a_scripts_named_programs_only_their_own_nopasswd_entries_refuse() {
        // Omarchy 4's packaged rule, in the shape sudo lists it.
        let omarchy = "Matching Defaults entries for tester on vm:
    env_reset

User tester may run the following commands on vm:
    (ALL) ALL
    (root) NOPASSWD: /usr/bin/tzupdate, /usr/bin/timedatectl set-timezone *
";
        let pacman = ["/usr/bin/pacman".to_owned()];
        assert_eq!(judge_for(Some(0), omarchy, "", Some(&pacman)), Asks::Yes);
        let timedatectl = [
            "/usr/bin/pacman".to_owned(),
            "/usr/bin/timedatectl".to_owned(),
        ];
        assert!(matches!(
            judge_for(Some(0), omarchy, "", Some(&timedatectl)),
            Asks::No(why) if why.contains("timedatectl")
        ));
        // A program the script names through a variable: any NOPASSWD entry refuses.
        assert!(matches!(judge_for(Some(0), omarchy, "", None), Asks::No(_)));
    }

    #[test]
    fn no_authenticate_in_defaults_refuses() {
        let d = NOPASSWD_PACMAN
            .replace("use_pty", "use_pty, !authenticate")
            .replace("NOPASSWD: /usr/bin/pacman", "/usr/bin/systemctl");
        assert!(matches!(judge_listing(&d, "/usr/bin/pacman"), Asks::No(_)));
    }

    /// Attack 5b F9: a listing in another language (its header untranslated here) is not read
    /// as "no entry skips the password".
    #[test]
    fn a_listing_without_its_header_is_not_known() {
        let de = NOPASSWD_PACMAN.replace(
            "User tester may run the following commands on vm:",
            "Der Benutzer tester darf die folgenden Befehle auf vm ausführen:",
        );
        assert!(matches!(judge_any(Some(0), &de, ""), Asks::Unknown(_)));
    }

    #[test]
    fn anything_else_is_not_known_and_says_sudos_words() {
        match judge_any(None, "", "") {
            Asks::Unknown(_) => {}
            other => panic!("{other:?}"),
        }
        match judge_any(Some(1), "", "sudo: unable to resolve host") {
            Asks::Unknown(w) => assert!(w.contains("unable to resolve host")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn defaults_that_change_whose_password_or_which_pam_stack_are_not_judged() {
        // Attack 16 F3/F3b: `pam_service`, `rootpw`, `targetpw`, `runaspw` in the listing's
        // defaults, global or per-command (as sudo 1.9.13 prints them when it lists without a
        // password, e.g. under `listpw=never`).
        for (line, named) in [
            ("    use_pty, pam_service=chfn", "pam_service=chfn"),
            ("    env_reset, rootpw", "rootpw"),
            ("    targetpw, use_pty", "targetpw"),
            ("    runaspw", "runaspw"),
        ] {
            let listing = NOPASSWD_PACMAN
                .replace("    use_pty\n", &format!("{line}\n"))
                .replace("NOPASSWD: ", "");
            assert!(
                deciding_defaults(&listing).is_some_and(|w| w.contains(named)),
                "{line}"
            );
            assert!(
                matches!(judge_any(Some(0), &listing, ""), Asks::Unknown(w) if w.contains(named)),
                "{line}"
            );
        }
        let command_specific = format!(
            "{}\nRunas and Command-specific defaults for tester:\n    Defaults!/usr/bin/pacman rootpw\n",
            NOPASSWD_PACMAN.split("\nUser ").next().unwrap()
        );
        assert!(deciding_defaults(&command_specific).is_some());
        // `!rootpw`, sudo's own service name, and the defaults of a usual listing decide nothing.
        let usual =
            NOPASSWD_PACMAN.replace("    use_pty\n", "    !rootpw, pam_service=sudo, use_pty\n");
        assert_eq!(deciding_defaults(&usual), None);
    }
}
