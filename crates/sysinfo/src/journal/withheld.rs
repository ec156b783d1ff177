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
//! The program stays (what ran is the useful part); its arguments are withheld, and so are the
//! variables sudo logs as set for the command (`ENV=NAME=value …`). A `grep` is journalctl's, on
//! the whole message, so an entry whose message was changed is left out of a grep's answer
//! altogether: any rule about keeping it would let a pattern (`S3c|arguments withheld`) test a
//! withheld argument a character at a time.

/// What replaces withheld arguments.
pub const WITHHELD: &str = "[arguments withheld: a command line may hold secrets]";

/// What replaces the variables sudo logs as set for the command.
pub const ENV_WITHHELD: &str = "[variables withheld: they may hold secrets]";

/// The page's note when a grep's answer left such entries out.
pub const LEFT_OUT_OF_GREP: &str = "entries of logged command lines (sudo, pkexec, doas) are left out of a grep's answer, since a pattern could test their withheld arguments; ask without grep to see them";

/// `message` with the arguments of a logged command line withheld, when `ident` is a tool
/// that logs them; `None` when nothing was withheld.
pub fn withhold(ident: &str, message: &str) -> Option<String> {
    match ident {
        "sudo" | "sudo-rs" => {
            let at = message.find("COMMAND=")? + "COMMAND=".len();
            let shown = keep_program(message, at, message.len());
            Some(without_env(&shown))
        }
        "pkexec" => {
            let at = message.find("[COMMAND=")? + "[COMMAND=".len();
            let end = message[at..].rfind(']').map_or(message.len(), |e| at + e);
            Some(keep_program(message, at, end))
        }
        "doas" => {
            let at = message.find(" ran command ")? + " ran command ".len();
            let end = message[at..]
                .rfind(" as ")
                .map_or(message.len(), |e| at + e);
            Some(keep_program(message, at, end))
        }
        _ => None,
    }
}

/// A sudo line with its `ENV=` field (the variables set for the command, before `COMMAND=`)
/// withheld whole: a value may hold spaces, so the field is not split.
fn without_env(message: &str) -> String {
    let Some(at) = message.find(" ; ENV=").map(|i| i + " ; ENV=".len()) else {
        return message.to_owned();
    };
    let end = message[at..].find(" ; ").map_or(message.len(), |e| at + e);
    format!("{}{ENV_WITHHELD}{}", &message[..at], &message[end..])
}

/// `message` with `[at, end)`, a command line, cut to its first word and the withheld note.
fn keep_program(message: &str, at: usize, end: usize) -> String {
    let line = &message[at..end];
    let program = line.split_whitespace().next().unwrap_or("");
    let rest = line[line.find(program).map_or(0, |i| i + program.len())..].trim();
    let mut out = String::with_capacity(message.len());
    out.push_str(&message[..at]);
    out.push_str(program);
    if !rest.is_empty() {
        out.push(' ');
        out.push_str(WITHHELD);
    }
    out.push_str(&message[end..]);
    out
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
            withhold("sudo", "pam_unix(sudo:session): session opened"),
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
}
