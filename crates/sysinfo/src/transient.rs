//! What systemd's unit properties and transient unit files hold of a command line, withheld by
//! the rule `journal` withholds it by (attack 14 F3: `units`, a read tool, answered a
//! `systemd-run`/`run0` unit's Description — by default the command line it runs — and its
//! transient unit file, `ExecStart=` with every argument and `Environment=` from `-E`, the very
//! text `journal` withheld from `Started run-u42.service - …`; class: *command lines carry
//! secrets*, closed at the source for every read tool that answers unit text: `units`' lists
//! and status, `system_status`'s failed units).
//!
//! - A unit's description keeps its first word and has the rest withheld when the unit is
//!   named `run-*` (systemd-run's and run0's own names), the description is a command line
//!   (begins with `/` — systemd-run writes the program's resolved path first —, `[`,
//!   `[run0] …`, or a quote — systemd quotes a program whose path holds a space or a shell
//!   character, attack 19 F1), or the unit is transient (systemd's `Transient=yes`, asked for) and the
//!   description does not begin with a capital: systemd's and logind's own transient units
//!   (`init.scope` "System and Service Manager", `session-2.scope` "Session 2 of User alice") keep
//!   theirs, a `systemd-run --unit=backup mysql …` whose program was not resolved does not.
//! - A transient unit's files (its FragmentPath, under `…/systemd/transient/`, and drop-ins):
//!   `Description=` as above, every `Exec…=` keeps its program, and `Environment=`,
//!   `SetCredential=`, `SetCredentialEncrypted=` values are withheld whole. systemd writes these
//!   files itself (`# This is a transient unit file, created programmatically via the systemd
//!   API.`), from another user's `run0` command for the system manager, world-readable.

#[cfg(test)]
use crate::journal::cut::WITHHELD;
use crate::journal::cut::{ENV_WITHHELD, keep_program};

/// Whether a unit's description is to be cut (see the module doc).
pub(crate) fn command_like(unit: &str, transient: bool, description: &str) -> bool {
    unit.starts_with("run-")
        || quoted_or_path(description)
        || transient && !description.starts_with(|c: char| c.is_ascii_uppercase())
}

/// Whether a description begins as only a command line does: a path (systemd-run writes the
/// program's resolved path first), `[run0] …`, or a program systemd quoted
/// (`quote_command_line` wraps an argument holding a space or any of `"\`$*?['()<>|&;!` in
/// `"…"`: `"/home/alice/My Scripts/backup" --password=…`; `$'…'` and `'…'` in other shells'
/// spellings).
pub(crate) fn quoted_or_path(description: &str) -> bool {
    description.starts_with(['/', '[', '"', '\'']) || description.starts_with("$'")
}

/// A unit's description as an answer shows it.
pub(crate) fn description(unit: &str, transient: bool, description: &str) -> String {
    if command_like(unit, transient, description) {
        keep_program(description, 0, description.len())
    } else {
        description.to_owned()
    }
}

/// Whether a unit file is one systemd wrote for a transient unit.
pub(crate) fn is_transient_file(path: &str) -> bool {
    path.contains("/systemd/transient/")
}

/// A transient unit file's text as an answer shows it (see the module doc).
pub(crate) fn unit_file(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        let shown = match body.split_once('=') {
            Some((key, value)) if !value.is_empty() => {
                let key = key.trim();
                if key == "Description" {
                    Some(format!("{key}={}", description("", true, value)))
                } else if key.starts_with("Exec") {
                    Some(format!("{key}={}", keep_program(value, 0, value.len())))
                } else if matches!(
                    key,
                    "Environment" | "SetCredential" | "SetCredentialEncrypted"
                ) {
                    Some(format!("{key}={ENV_WITHHELD}"))
                } else {
                    None
                }
            }
            _ => None,
        };
        match shown {
            Some(s) => {
                out.push_str(&s);
                if line.ends_with('\n') {
                    out.push('\n');
                }
            }
            None => out.push_str(line),
        }
    }
    out
}

/// The arguments of the `systemctl show` that tells which of `names` are transient.
pub(crate) fn show_args(names: &[&str]) -> Vec<String> {
    let mut a = vec![
        "show".to_owned(),
        "--property=Id,Transient".to_owned(),
        "--".to_owned(),
    ];
    a.extend(names.iter().map(|n| (*n).to_owned()));
    a
}

/// The transient units' names in `systemctl show --property=Id,Transient` output (one block of
/// `Key=value` lines per unit, blocks separated by an empty line). Output cut by the cap
/// (`truncated`) has lost blocks: then every one of `names` counts as transient (attack 16: a
/// unit missing from the answer is not known to be anything else).
pub(crate) fn transient_ids(
    text: &str,
    truncated: bool,
    names: &[&str],
) -> std::collections::HashSet<String> {
    if truncated {
        return names.iter().map(|n| (*n).to_owned()).collect();
    }
    text.split("\n\n")
        .filter(|block| block.lines().any(|l| l == "Transient=yes"))
        .filter_map(|block| block.lines().find_map(|l| l.strip_prefix("Id=")))
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The file systemd writes for `systemd-run --user -E PGPASSWORD=… /usr/bin/pg_dump
    /// --dbname=…` (systemd's `unit_write_setting` shapes; our own text).
    const FILE: &str = "# This is a transient unit file, created programmatically via the systemd API. Do not edit.\n\
[Unit]\n\
Description=/usr/bin/pg_dump --dbname=postgresql://app:S3cret@db/app\n\
\n\
[Service]\n\
Environment=\"PGPASSWORD=S3cret\" \"B=c d\"\n\
SetCredential=token:S3cret\n\
ExecStart=\n\
ExecStart=\"/usr/bin/pg_dump\" \"--dbname=postgresql://app:S3cret@db/app\"\n\
ExecStopPost=-/bin/sh -c 'echo S3cret'\n\
Type=simple\n";

    #[test]
    fn a_transient_unit_file_keeps_its_programs_and_withholds_the_rest() {
        let shown = unit_file(FILE);
        assert!(!shown.contains("S3cret"), "{shown}");
        for kept in [
            "# This is a transient unit file",
            "[Service]\n",
            "Description=/usr/bin/pg_dump [arguments withheld",
            "ExecStart=\n",
            "ExecStart=\"/usr/bin/pg_dump\" [arguments withheld",
            "ExecStopPost=-/bin/sh [arguments withheld",
            "Environment=[variables withheld",
            "SetCredential=[variables withheld",
            "Type=simple\n",
        ] {
            assert!(shown.contains(kept), "{kept}: {shown}");
        }
        let plain = "[Service]\nType=simple\nExecStart=/bin/true\n";
        assert_eq!(unit_file(plain), plain);
    }

    #[test]
    fn a_description_that_is_a_command_line_keeps_its_program() {
        let d = "/usr/bin/pg_dump --dbname=postgresql://app:S3cret@db/app";
        assert_eq!(
            description("run-u42.service", false, d),
            format!("/usr/bin/pg_dump {WITHHELD}")
        );
        assert_eq!(
            description("backup.service", true, "mysql -u root -pS3cret"),
            format!("mysql {WITHHELD}")
        );
        assert_eq!(
            description("x.service", false, "[run0] mysql -pS3cret"),
            format!("[run0] {WITHHELD}")
        );
        // systemd's quoting of a program path with a space or a shell character (attack 19
        // F1), whether or not the unit is known transient.
        let q = "\"/home/alice/My Scripts/backup\" --password=S3cret";
        assert_eq!(
            description("backup.service", false, q),
            format!("\"/home/alice/My Scripts/backup\" {WITHHELD}")
        );
        assert_eq!(
            description("app-Hyprland-chromium-4f2a1b3c.scope", true, "chromium"),
            "chromium"
        );
        assert_eq!(
            description("sshd.service", false, "OpenSSH Daemon"),
            "OpenSSH Daemon"
        );
        // systemd's and logind's own transient units keep their descriptions.
        for (unit, d) in [
            ("init.scope", "System and Service Manager"),
            ("session-2.scope", "Session 2 of User alice"),
        ] {
            assert_eq!(description(unit, true, d), d);
        }
        assert_eq!(
            description("backup.service", false, "mysql -u root -pS3cret"),
            "mysql -u root -pS3cret",
            "not transient: the person's own description"
        );
        assert!(is_transient_file(
            "/run/user/1000/systemd/transient/run-u42.service"
        ));
        assert!(!is_transient_file("/etc/systemd/system/sshd.service"));
    }

    #[test]
    fn systemctl_show_says_which_units_are_transient() {
        let text = "Id=run-u42.service\nTransient=yes\n\nId=sshd.service\nTransient=no\n\nTransient=yes\nId=backup.service\n";
        let names = [
            "run-u42.service",
            "sshd.service",
            "backup.service",
            "x.scope",
        ];
        let got = transient_ids(text, false, &names);
        assert_eq!(got.len(), 2);
        assert!(got.contains("run-u42.service") && got.contains("backup.service"));
        // An answer cut by the output cap has lost blocks: every unit asked of counts.
        let cut = transient_ids("Id=sshd.service\nTransient=no\n", true, &names);
        assert_eq!(cut.len(), names.len());
        assert_eq!(
            show_args(&["a"]),
            ["show", "--property=Id,Transient", "--", "a"]
        );
    }
}
