//! The audit subsystem's records, judged by their fields, not by their record names (attack 14
//! F1: sudo's own `USER_CMD … cmd=<hex>` and the kernel's printk of EXECVE by number,
//! `audit: type=1309 … a3="-pS3cret"`, came back whole while `EXECVE`/`PROCTITLE` by name were
//! withheld; class: *command lines carry secrets*, judged by the spelling of known records).
//!
//! An audit record is a message that reached journald through its audit transport
//! (`_TRANSPORT=audit`: `USER_CMD pid=… msg='cwd="/home/alice" cmd=6D79… exe=…'`), the kernel's
//! printk of one when no auditd runs (`audit: type=1123 audit(1765000000.123:456): pid=… cmd=…`),
//! or auditd's own line (`type=EXECVE msg=audit(…): argc=3 a0=…`). In any of them, whatever the
//! type's name or number:
//! - `cmd=` (libaudit's `audit_log_user_command`: the whole command line, hex when it has spaces),
//!   `proctitle=` (the process title: its command line) and `data=` (TTY records, 1319/1124:
//!   what was typed) have their value withheld;
//! - `a1=`, `a2=`, … (EXECVE's arguments, also split as `a2[0]=` after `a2_len=`) are
//!   withheld, from the first one to the last, as one, and with them `argc=`'s count (attack 16:
//!   a count and a length are the arguments' too); `a0=` (the program) stays.
//!
//! Shapes: the kernel's `audit_log_execve_info` and `audit_log_proctitle`, libaudit's
//! `audit_log_user_command` and `audit_log_user_message`; our own text in them.

use super::cut::WITHHELD;

/// Whether a message is an audit record (see the module doc).
pub(crate) fn is_record(transport: &str, message: &str) -> bool {
    transport == "audit"
        || message.starts_with("audit: type=")
        || message.starts_with("type=") && message.contains("msg=audit(")
}

/// A field whose value is withheld, by its name.
enum Field {
    /// `cmd=`, `proctitle=`, `data=`: the value alone.
    Value,
    /// `aN=` or `aN[i]=`, N ≥ 1: an argument.
    Argument,
}

/// The field named at `rest`'s start, and the length of its name with the `=`.
fn field(rest: &str) -> Option<(Field, usize)> {
    for name in ["cmd=", "proctitle=", "data="] {
        if rest.starts_with(name) {
            return Some((Field::Value, name.len()));
        }
    }
    let digits = rest.strip_prefix('a')?;
    let n = digits.bytes().take_while(u8::is_ascii_digit).count();
    if n == 0 || &digits[..n] == "0" {
        return None;
    }
    let mut after = &digits[n..];
    // `aN_len=`: the length of an argument the kernel split, as much the argument's as its text.
    if let Some(len) = after.strip_prefix("_len") {
        after = len;
    } else if let Some(idx) = after.strip_prefix('[') {
        let m = idx.bytes().take_while(u8::is_ascii_digit).count();
        after = idx[m..].strip_prefix(']')?;
    }
    after
        .starts_with('=')
        .then(|| (Field::Argument, rest.len() - after.len() + 1))
}

/// The end of the value starting at `rest`: a quoted value to its closing quote, any other to
/// the next space or `'` (the end of a userspace record's `msg='…'`).
fn value_len(rest: &str) -> usize {
    if let Some(q) = rest.strip_prefix('"') {
        return q.find('"').map_or(rest.len(), |e| e + 2);
    }
    rest.find([' ', '\'']).unwrap_or(rest.len())
}

/// `message` with the fields of the module doc withheld; `None` when it has none.
pub(crate) fn withhold(message: &str) -> Option<String> {
    let mut out = String::with_capacity(message.len());
    let mut args: Option<(usize, usize)> = None;
    let mut argc: Option<(usize, usize, bool)> = None;
    let mut spans: Vec<(usize, usize, bool)> = Vec::new();
    let mut i = 0;
    while i < message.len() {
        let starts = i == 0 || message[..i].ends_with([' ', '\'', ':']);
        if starts && message[i..].starts_with("argc=") {
            let v = i + "argc=".len();
            argc = Some((v, v + value_len(&message[v..]), false));
        }
        let Some((kind, name)) = starts.then(|| field(&message[i..])).flatten() else {
            i += message[i..].chars().next().map_or(1, char::len_utf8);
            continue;
        };
        let v = i + name;
        let end = v + value_len(&message[v..]);
        match kind {
            Field::Value => spans.push((v, end, false)),
            Field::Argument => {
                args = Some((args.map_or(i, |(s, _)| s), end));
            }
        }
        i = end.max(i + 1);
    }
    if let Some((s, e)) = args {
        spans.push((s, e, true));
        // How many arguments there are is theirs too, when there are any withheld.
        if let Some(v) = argc {
            spans.push(v);
        }
    }
    if spans.is_empty() {
        return None;
    }
    spans.sort_unstable();
    let mut at = 0;
    for (s, e, _) in spans {
        if s < at {
            continue;
        }
        out.push_str(&message[at..s]);
        out.push_str(WITHHELD);
        at = e;
    }
    out.push_str(&message[at..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "S3cret";

    #[test]
    fn every_spelling_of_a_command_line_in_an_audit_record_is_withheld() {
        // The kernel's printk of EXECVE, by number.
        let execve = format!(
            "audit: type=1309 audit(1765000000.124:457): argc=4 a0=\"mysql\" a1=\"-u\" a2=\"root\" a3=\"-p{SECRET}\""
        );
        assert!(is_record("kernel", &execve));
        assert_eq!(
            withhold(&execve).unwrap(),
            format!(
                "audit: type=1309 audit(1765000000.124:457): argc={WITHHELD} a0=\"mysql\" {WITHHELD}"
            )
        );
        // sudo's USER_CMD through journald's audit transport, and as the kernel prints it.
        let hex = "6D7973716C202D7053336372657421";
        let user_cmd = format!(
            "USER_CMD pid=5397 uid=1000 auid=1000 ses=2 msg='cwd=\"/home/alice\" cmd={hex} exe=\"/usr/bin/sudo\" terminal=pts/1 res=success'"
        );
        assert!(is_record("audit", &user_cmd));
        assert!(!is_record("syslog", &user_cmd));
        assert_eq!(
            withhold(&user_cmd).unwrap(),
            format!(
                "USER_CMD pid=5397 uid=1000 auid=1000 ses=2 msg='cwd=\"/home/alice\" cmd={WITHHELD} exe=\"/usr/bin/sudo\" terminal=pts/1 res=success'"
            )
        );
        let printk =
            format!("audit: type=1123 audit(1765000000.123:456): pid=5397 msg='cmd={hex}'");
        assert!(!withhold(&printk).unwrap().contains(hex));
        // PROCTITLE by number, a long argument split, a TTY record, auditd's own line.
        for line in [
            format!("audit: type=1327 audit(1.2:3): proctitle=\"mysql -p{SECRET}\""),
            format!(
                "audit: type=1309 audit(1.2:3): argc=2 a0=\"x\" a1_len=9000 a1[0]=\"{SECRET}\" a1[1]=\"{SECRET}\""
            ),
            format!("audit: type=1124 audit(1.2:3): pid=9 msg='data=\"{SECRET}\"'"),
            format!("type=EXECVE msg=audit(1.2:3): argc=2 a0=\"mysql\" a1=\"-p{SECRET}\""),
        ] {
            assert!(is_record("", &line), "{line}");
            let got = withhold(&line).unwrap();
            assert!(!got.contains(SECRET) && got.contains(WITHHELD), "{got}");
            assert!(!got.contains("argc=2") && !got.contains("9000"), "{got}");
        }
        // The program, a record without a command line, and look-alikes inside words stay.
        assert_eq!(
            withhold("audit: type=1309 audit(1.2:3): argc=1 a0=\"id\""),
            None
        );
        assert_eq!(
            withhold("SERVICE_START pid=1 msg='unit=sshd comm=\"systemd\" res=success'"),
            None
        );
        assert_eq!(withhold("xcmd=1 ba1=2 a0=3 a=4 a1x=5"), None);
    }
}
