//! Command lines withheld from journal messages. `journal` is a read tool: it runs without a
//! question, so its answer must not carry what may hold another program's secrets, as
//! `processes` command lines do not (SECURITY.md, "Secrets stay out of read-only answers").
//! The tools that run a command as another user log its whole command line, and a password given
//! as an argument with it (attack 5a F9: `sudo mysql -pS3cret` came back from
//! `journal {"grep": "COMMAND="}` unasked):
//! - sudo: `alice : TTY=pts/1 ; PWD=/home/alice ; USER=root ; COMMAND=/usr/bin/mysql -p…`
//!   (`sudoers(5)`, "Log format": `COMMAND=` is the last field);
//! - pkexec: `alice: Executing command [USER=root] [TTY=…] [CWD=…] [COMMAND=/usr/bin/x args]`;
//! - doas: `alice ran command /usr/bin/x args as root from /home/alice`;
//! - run0 (systemd-run): `Running as unit: run-u12.service; invocation ID: …` names no
//!   command; nothing to withhold.
//!
//! The class is *a command line logged by any program that records another's*, not a list of
//! elevation tools (attack 10 F3: polkitd's and systemd's lines gave back what pkexec's had
//! withheld). So also, by writer and by the shape it writes:
//! - polkitd, for every authorisation (pkexec's included) and agent registration:
//!   `… for unix-process:5397:2186455 [pkexec /usr/bin/tee --token=…] (owned by unix-user:alice)`
//!   and `… (system bus name :1.77 [/usr/bin/agent --x], object path …)` — the subject's command
//!   line in brackets (polkit's `polkitbackendinteractiveauthority.c` log formats);
//! - systemd (PID 1 and the user manager), whose unit lines carry the unit's description —
//!   `Started run-u42.service - /usr/bin/mysql -pS3cret.` — and a `systemd-run`/`run0` unit's
//!   description is, by default, the command line it runs: withheld for transient `run-*`
//!   units and for any description that is a command line (begins with `/` or `[`);
//! - cron (`CROND`, `crond`, `cron`): `(alice) CMD (/usr/bin/backup --password=…)`;
//! - the audit records (journald's `_TRANSPORT=audit`, the kernel's `audit: type=NNNN` printk,
//!   auditd's `type=… msg=audit(…)`), by their fields whatever the record's name or number
//!   (`audit.rs`): `EXECVE argc=3 a0="mysql" a1=…` keeps `a0`; `cmd=` (sudo's `USER_CMD`),
//!   `proctitle=` and `data=` are withheld whole;
//! - the same events as JSON, whoever writes them — sudo with `Defaults log_format=json`
//!   (sudoers(5)) logs `@cee:{"sudo":{"accept":{"command":…,"runargv":["mysql","-p…"],
//!   "runenv":[…]}}}`, with no `COMMAND=`: every `…argv` array keeps its first element and every
//!   environment list (`…env`, `env_add`) is withheld; JSON that does not parse but names an
//!   `argv` is withheld whole after its opening.
//!
//! Which programs' lines are judged, and that every other shape of theirs is withheld whole, is
//! `writers.rs` (attack 16: each program was recognised by one shape while it writes others).
//!
//! The program stays (what ran is the useful part); its arguments are withheld, and so are the
//! variables sudo logs as set for the command (`ENV=NAME=value …`). A `grep` is matched by
//! archgate on the message as shown (`grep.rs`), so a pattern can never test a withheld
//! argument: not by the entries found, nor by the page's `next`, fill or note (attack 14 F4).

use super::writers::{Origin, Writer, judge};
pub use crate::journal::cut::{ENV_WITHHELD, WITHHELD};

/// An entry's message with what this module, the audit records' rule (`audit.rs`) and the
/// writers of command lines' rule (`writers.rs`) withhold; `None` when nothing was.
pub fn withhold_entry(o: &Origin, message: &str) -> Option<String> {
    if super::audit::is_record(o.transport, message) {
        return super::audit::withhold(message);
    }
    if let Some(shown) = json_command_line(message) {
        return Some(shown);
    }
    match Writer::of(o) {
        Some(w) => judge(w, o, message),
        None => audit(message),
    }
}

/// `message` as an entry whose identifier (and command name) is `ident` shows it; `None` when
/// nothing was withheld.
#[cfg(test)]
pub fn withhold(ident: &str, message: &str) -> Option<String> {
    withhold_entry(
        &Origin {
            ident,
            comm: ident,
            ..Origin::default()
        },
        message,
    )
}

/// A JSON event (after `@cee:`, or the whole message) carrying a command line: its `…argv`
/// arrays cut to their program, its environment lists withheld (see the module doc).
fn json_command_line(message: &str) -> Option<String> {
    let at = match message.find("@cee:") {
        Some(i) => i + "@cee:".len(),
        None if message.trim_start().starts_with('{') => 0,
        None => return None,
    };
    if !message[at..].contains("argv") && !message[at..].contains("env") {
        return None;
    }
    let Ok(mut v) = serde_json::from_str::<serde_json::Value>(message[at..].trim()) else {
        return message[at..]
            .contains("argv")
            .then(|| format!("{}{WITHHELD}", &message[..at]));
    };
    fn walk(v: &mut serde_json::Value) -> bool {
        use serde_json::Value;
        let mut changed = false;
        match v {
            Value::Object(map) => {
                for (k, val) in map.iter_mut() {
                    let key = k.to_ascii_lowercase();
                    if key.ends_with("argv") && val.is_array() {
                        let first = val.get(0).cloned().unwrap_or(Value::Null);
                        let more = val.as_array().is_some_and(|a| a.len() > 1);
                        *val = if more {
                            Value::Array(vec![first, Value::String(WITHHELD.into())])
                        } else {
                            Value::Array(vec![first])
                        };
                        changed |= more;
                    } else if (key.ends_with("env") || key == "env_add")
                        && (val.is_array() || val.is_object() || val.is_string())
                    {
                        *val = Value::String(ENV_WITHHELD.into());
                        changed = true;
                    } else {
                        changed |= walk(val);
                    }
                }
            }
            Value::Array(items) => {
                for i in items {
                    changed |= walk(i);
                }
            }
            _ => {}
        }
        changed
    }
    walk(&mut v).then(|| format!("{}{v}", &message[..at]))
}

/// The audit records by their record names, whatever the transport said (`audit.rs` judges
/// their fields).
fn audit(message: &str) -> Option<String> {
    if !(message.contains("EXECVE ") || message.contains("proctitle=")) {
        return None;
    }
    super::audit::withhold(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tools_logged_command_line_keeps_its_program_only() {
        let sudo = "alice : TTY=pts/1 ; PWD=/home/alice ; USER=root ; COMMAND=/usr/bin/mysql -u root -pS3cret -e DROP";
        let got = withhold("sudo", sudo).unwrap();
        assert_eq!(
            got,
            format!(
                "alice : TTY=pts/1 ; PWD=/home/alice ; USER=root ; COMMAND=/usr/bin/mysql {WITHHELD}"
            )
        );
        let pk = "alice: Executing command [USER=root] [TTY=unknown] [CWD=/home/alice] [COMMAND=/usr/bin/tee /etc/x --token=abc]";
        assert_eq!(
            withhold("pkexec", pk).unwrap(),
            format!(
                "alice: Executing command [USER=root] [TTY=unknown] [CWD=/home/alice] [COMMAND=/usr/bin/tee {WITHHELD}]"
            )
        );
        let doas =
            "alice ran command /usr/bin/curl -u bob:hunter2 https://x as root from /home/alice";
        assert_eq!(
            withhold("doas", doas).unwrap(),
            format!("alice ran command /usr/bin/curl {WITHHELD} as root from /home/alice")
        );
        // A program alone has nothing withheld; other idents and other sudo lines are untouched.
        assert_eq!(
            withhold("sudo", "alice : USER=root ; COMMAND=/usr/bin/id").unwrap(),
            "alice : USER=root ; COMMAND=/usr/bin/id"
        );
        assert_eq!(
            withhold(
                "sudo",
                "pam_unix(sudo:session): session opened for user root(uid=0) by alice(uid=1000)"
            ),
            None
        );
        assert_eq!(withhold("sshd", sudo), None);
    }

    #[test]
    fn sudo_s_variables_for_the_command_are_withheld_too() {
        let line = "alice : TTY=pts/1 ; PWD=/home/alice ; USER=root ; ENV=MYSQL_PWD=S3cret A=b c ; COMMAND=/usr/bin/mysql -e x";
        let got = withhold("sudo", line).unwrap();
        assert_eq!(
            got,
            format!(
                "alice : TTY=pts/1 ; PWD=/home/alice ; USER=root ; ENV={ENV_WITHHELD} ; COMMAND=/usr/bin/mysql {WITHHELD}"
            )
        );
        assert!(!got.contains("S3cret"));
    }

    /// Attack 10 F3: the programs that log another's command line, each in its shape.
    #[test]
    fn every_writer_of_anothers_command_line_keeps_its_program_only() {
        let pk = "Operator of unix-session:2 successfully authenticated as unix-user:root to gain TEMPORARY authorization for action org.freedesktop.policykit.exec for unix-process:5397:2186455 [pkexec /usr/bin/tee --x=[a] --token=S3cret] (owned by unix-user:alice)";
        assert_eq!(
            withhold("polkitd", pk).unwrap(),
            format!(
                "Operator of unix-session:2 successfully authenticated as unix-user:root to gain TEMPORARY authorization for action org.freedesktop.policykit.exec for unix-process:5397:2186455 [pkexec {WITHHELD}] (owned by unix-user:alice)"
            )
        );
        let agent = "Registered Authentication Agent for unix-session:2 (system bus name :1.77 [/usr/bin/agent --key=S3cret], object path /org/x, locale C)";
        assert!(!withhold("polkitd", agent).unwrap().contains("S3cret"));
        assert_eq!(
            withhold(
                "polkitd",
                "Loading rules from directory /etc/polkit-1/rules.d"
            ),
            None
        );
        assert_eq!(
            withhold(
                "systemd",
                "Started run-u42.service - /usr/bin/mysql -pS3cret."
            )
            .unwrap(),
            format!("Started run-u42.service - /usr/bin/mysql {WITHHELD}.")
        );
        assert!(
            !withhold(
                "systemd",
                "Starting run-r9.service - [run0] sh -c 'x S3cret'..."
            )
            .unwrap()
            .contains("S3cret")
        );
        assert_eq!(
            withhold(
                "systemd",
                "Started user@1000.service - User Manager for UID 1000."
            ),
            None
        );
        assert_eq!(
            withhold("CROND", "(root) CMD (/usr/bin/backup --password=S3cret)").unwrap(),
            format!("(root) CMD (/usr/bin/backup {WITHHELD})")
        );
        assert_eq!(
            withhold("", "EXECVE argc=2 a0=\"mysql\" a1=\"-pS3cret\"").unwrap(),
            format!("EXECVE argc={WITHHELD} a0=\"mysql\" {WITHHELD}")
        );
        assert_eq!(
            withhold("", "PROCTITLE proctitle=6D7973716C202D70").unwrap(),
            format!("PROCTITLE proctitle={WITHHELD}")
        );
        assert_eq!(withhold("", "an ordinary line"), None);
    }

    /// sudo's JSON log format (`Defaults log_format=json`): the same command line, no
    /// `COMMAND=` (attack 10, F3 continued).
    #[test]
    fn a_json_logged_command_line_keeps_its_program_only() {
        let line = r#"@cee:{"sudo":{"accept":{"command":"/usr/bin/mysql","runargv":["mysql","-u","root","-pS3cret"],"runenv":["MYSQL_PWD=S3cret"],"runuser":"root"}}}"#;
        let got = withhold("sudo", line).unwrap();
        assert!(!got.contains("S3cret"), "{got}");
        assert!(
            got.starts_with("@cee:{") && got.contains(r#""runargv":["mysql","#),
            "{got}"
        );
        assert!(
            got.contains(WITHHELD) && got.contains(ENV_WITHHELD),
            "{got}"
        );
        // Not JSON after all, but naming an argv: withheld whole after its opening.
        let broken = r#"@cee:{"sudo":{"runargv":["mysql","-pS3cret""#;
        assert_eq!(
            withhold("sudo", broken).unwrap(),
            format!("@cee:{WITHHELD}")
        );
        // JSON without a command line is left as it is.
        assert_eq!(withhold("app", r#"{"level":"info","msg":"hi"}"#), None);
    }
}
