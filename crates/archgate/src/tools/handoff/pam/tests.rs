//! sudo's PAM stacks as distributions and people write them. The shapes are those of Debian 12's
//! `/etc/pam.d/sudo` + `common-auth` (pam-auth-update's layout, as on this project's CI
//! machine), Arch's `pambase` `system-auth` with `sudo` including it, Omarchy's fingerprint and
//! FIDO2 lines (`auth sufficient pam_fprintd.so` / `pam_u2f.so cue` put first in
//! `/etc/pam.d/sudo`), and the passwordless recipes the attack used (`pam_wheel.so trust`). Our
//! own text, in those files' format (pam.conf(5)).

use super::config::{self, fixtures::Tree};
use super::sudo_asks_for;
use crate::tools::handoff::sudo::Asks;

const DEBIAN_SUDO: &str = "#%PAM-1.0\n\n# Set up user limits from /etc/security/limits.conf.\nsession    required   pam_limits.so\n\n@include common-auth\n@include common-account\n@include common-session-noninteractive\n";
const DEBIAN_COMMON_AUTH: &str = "# here are the per-package modules (the \"Primary\" block)\nauth\t[success=1 default=ignore]\tpam_unix.so nullok\n# here's the fallback if no module succeeds\nauth\trequisite\t\t\tpam_deny.so\n# prime the stack with a positive return value if there isn't one already;\nauth\trequired\t\t\tpam_permit.so\n# and here are more per-package modules (the \"Additional\" block)\nauth\toptional\t\t\tpam_cap.so \n";
const ARCH_SUDO: &str = "#%PAM-1.0\nauth\t\tinclude\t\tsystem-auth\naccount\t\tinclude\t\tsystem-auth\nsession\t\tinclude\t\tsystem-auth\n";
const ARCH_SYSTEM_AUTH: &str = "#%PAM-1.0\n\nauth       required                    pam_faillock.so      preauth\n# Optionally use requisite above if you do not want to prompt for the password\n# on locked accounts.\n-auth      [success=2 default=ignore]  pam_systemd_home.so\nauth       [success=1 default=bad]     pam_unix.so          try_first_pass nullok\nauth       [default=die]               pam_faillock.so      authfail\nauth       optional                    pam_permit.so\nauth       required                    pam_env.so\nauth       required                    pam_faillock.so      authsucc\n\naccount    required                    pam_unix.so\npassword   required                    pam_unix.so          try_first_pass nullok shadow\nsession    required                    pam_unix.so\n";

const DEBIAN_REST: [(&str, &str); 2] = [
    (
        "common-account",
        "account\t[success=1 new_authtok_reqd=done default=ignore]\tpam_unix.so\naccount\trequisite\t\t\tpam_deny.so\naccount\trequired\t\t\tpam_permit.so\n",
    ),
    (
        "common-session-noninteractive",
        "session\t[default=1]\t\t\tpam_permit.so\nsession\trequisite\t\t\tpam_deny.so\nsession\trequired\t\t\tpam_permit.so\nsession\trequired\tpam_unix.so\n",
    ),
];

/// Debian's tree with `common_auth` as its `common-auth`, and `sudo` as sudo's file.
fn debian(sudo: &str, common_auth: &str) -> Asks {
    let mut files = vec![("sudo", sudo), ("common-auth", common_auth)];
    files.extend(DEBIAN_REST);
    judged(&files)
}

fn judged(files: &[(&str, &str)]) -> Asks {
    sudo_asks_for(&Tree::new(files), "sudo")
}

fn judged_with_root_only(files: &[(&str, &str)], root_only: &[&str]) -> Asks {
    sudo_asks_for(&Tree::with_root_only(files, root_only), "sudo")
}

fn refused_naming(asks: Asks, module: &str) {
    match asks {
        Asks::No(why) => assert!(why.contains(module), "{why}"),
        other => panic!("expected a refusal naming {module}, got {other:?}"),
    }
}

#[test]
fn the_distributions_own_stacks_ask() {
    assert_eq!(debian(DEBIAN_SUDO, DEBIAN_COMMON_AUTH), Asks::Yes);
    assert_eq!(
        judged(&[("sudo", ARCH_SUDO), ("system-auth", ARCH_SYSTEM_AUTH)]),
        Asks::Yes
    );
}

#[test]
fn a_finger_or_a_key_first_still_asks_for_the_person() {
    // Omarchy's fingerprint and FIDO2 set-ups put their line first in sudo's file; Omarchy's
    // FIDO2 key list is `/etc/fido2/fido2`, root's.
    for first in [
        "auth sufficient pam_fprintd.so\n",
        "auth sufficient pam_u2f.so cue authfile=/etc/fido2/fido2\n",
    ] {
        let sudo = format!("{first}{ARCH_SUDO}");
        assert_eq!(
            judged_with_root_only(
                &[("sudo", &sudo), ("system-auth", ARCH_SYSTEM_AUTH)],
                &["/etc/fido2/fido2"]
            ),
            Asks::Yes,
            "{first}"
        );
    }
}

#[test]
fn a_module_that_grants_without_a_credential_is_named_and_refused() {
    // The attack's recipe: wheel members pass with no password.
    let sudo = format!("auth sufficient pam_wheel.so trust use_uid\n{ARCH_SUDO}");
    refused_naming(
        judged(&[("sudo", &sudo), ("system-auth", ARCH_SYSTEM_AUTH)]),
        "pam_wheel trust use_uid (/etc/pam.d/sudo:1)",
    );
    // The same condition by another module, and a module archgate does not know (an ssh
    // agent's key is reachable by the agent's own shell).
    for line in [
        "auth sufficient pam_succeed_if.so user ingroup wheel\n",
        "auth sufficient pam_ssh_agent_auth.so file=~/.ssh/authorized_keys\n",
        "auth sufficient pam_permit.so\n",
    ] {
        let sudo = format!("{line}@include common-auth\n");
        let module = line
            .split_whitespace()
            .nth(2)
            .unwrap()
            .trim_end_matches(".so");
        refused_naming(debian(&sudo, DEBIAN_COMMON_AUTH), module);
    }
    // pam_wheel without `trust` only narrows who may try: it grants nothing.
    let narrowing = format!("auth required pam_wheel.so use_uid\n{ARCH_SUDO}");
    assert_eq!(
        judged(&[("sudo", &narrowing), ("system-auth", ARCH_SYSTEM_AUTH)]),
        Asks::Yes
    );
}

#[test]
fn a_jump_over_the_fallback_is_followed() {
    // Debian's layout with the password replaced by a group test: success jumps past pam_deny
    // to pam_permit.
    let common = "auth [success=1 default=ignore] pam_succeed_if.so user ingroup sudo\nauth requisite pam_deny.so\nauth required pam_permit.so\n";
    refused_naming(debian(DEBIAN_SUDO, common), "pam_succeed_if");
}

#[test]
fn done_in_a_substack_ends_only_the_substack() {
    // `sufficient` success inside a substack returns to the caller, whose password line still
    // decides; the same lines included (not a substack) end the whole stack.
    let inner = "auth sufficient pam_permit.so\n";
    let sub = "auth substack inner\nauth required pam_unix.so\n";
    assert_eq!(judged(&[("sudo", sub), ("inner", inner)]), Asks::Yes);
    let inc = "auth include inner\nauth required pam_unix.so\n";
    refused_naming(judged(&[("sudo", inc), ("inner", inner)]), "pam_permit");
}

#[test]
fn without_sudos_own_lines_other_decides() {
    // A `sudo` file with no auth line, or none at all: libpam runs `other`'s auth stack.
    let other = "auth required pam_permit.so\n";
    refused_naming(
        judged(&[
            ("sudo", "session required pam_limits.so\n"),
            ("other", other),
        ]),
        "pam_permit",
    );
    refused_naming(judged(&[("other", other)]), "pam_permit");
    assert_eq!(
        judged(&[("other", "auth required pam_deny.so\n")]),
        Asks::Yes
    );
}

#[test]
fn what_cannot_be_read_is_not_trusted() {
    // A return code only some libpam versions know.
    assert!(matches!(
        judged(&[("sudo", "auth [conv_again=done] pam_unix.so\n")]),
        Asks::Unknown(why) if why.contains("/etc/pam.d/sudo:1")
    ));
    // An include that names no file: not a stack archgate can vouch for.
    assert!(matches!(
        judged(&[("sudo", "auth include missing\nauth required pam_unix.so\n")]),
        Asks::Unknown(why) if why.contains("`missing`")
    ));
}

#[test]
fn this_machines_sudo_stack_is_read() {
    // The real files, as sudo's libpam reads them (root's all the way on any machine sudo is
    // installed on): they parse into a chain (whatever it decides here).
    if std::path::Path::new("/etc/pam.d/sudo").exists() {
        let chain = config::auth_chain(&config::System, "sudo");
        assert!(matches!(&chain, Ok(Some(c)) if !c.is_empty()), "{chain:?}");
    }
}

/// Attack 16 F1 (class: *a parser that re-implements libpam's and differs on input libpam
/// accepts*): each file is one libpam reads as a way through with no password, spelled so that
/// a reader that differs from libpam sees a password line. The spellings are the attack's,
/// reproduced with real sudo 1.9.13 and Linux-PAM 1.5.2; libpam's rules are restated in
/// `lines.rs` and `codes.rs`.
#[test]
fn files_are_read_as_libpams_line_assembler_and_tokenizer_read_them() {
    let cases: [(&str, &str); 6] = [
        // A `\` followed by a blank still joins the next line: pam_unix's line becomes
        // pam_permit's arguments.
        (
            "auth optional pam_permit.so \\ \nauth required pam_unix.so\n",
            "pam_permit",
        ),
        // A `#` ends the logical line even after a `\`: pam_permit's line stands alone.
        (
            "auth optional pam_env.so \\#\nauth sufficient pam_permit.so\nauth required pam_unix.so\n",
            "pam_permit",
        ),
        // The first `default=` of a control is the one libpam keeps.
        (
            "auth required pam_permit.so\nauth [default=ignore default=bad] pam_unix.so\n",
            "pam_permit",
        ),
        // A line of an unknown type is a failing `auth` entry, counted by jumps.
        (
            "auth [success=1 default=2] pam_succeed_if.so user = alice\naut required pam_deny.so\nauth sufficient pam_permit.so\nauth requisite pam_deny.so\nauth required pam_unix.so\n",
            "pam_permit",
        ),
        // A bracketed argument loses its brackets: pam_wheel is handed `trust`.
        (
            "auth sufficient pam_wheel.so [trust] use_uid group=wheel\nauth required pam_unix.so\n",
            "pam_wheel trust use_uid group=wheel",
        ),
        // CRLF: the `\r` is part of the line; a `\` before it does not continue the line.
        (
            "auth optional pam_env.so \\\r\nauth sufficient pam_permit.so x\r\nauth required pam_unix.so nullok\r\n",
            "pam_permit",
        ),
    ];
    for (sudo, module) in cases {
        match judged(&[("sudo", sudo)]) {
            Asks::No(why) => assert!(why.contains(module), "{sudo:?}: {why}"),
            other => panic!("{sudo:?}: expected a refusal naming {module}, got {other:?}"),
        }
    }
}

#[test]
fn libpams_other_spellings_are_read_as_libpam_reads_them() {
    // `[required]` is the keyword; `\]` inside brackets is a `]`; a `[...]` type is a type.
    assert_eq!(
        judged(&[("sudo", "[auth] [required] pam_unix.so\n")]),
        Asks::Yes
    );
    // An upper-case name in a bracket is libpam's parse error: every code `bad`, so the line
    // fails the stack whatever it returns (archgate once read it as `sufficient`).
    assert_eq!(
        judged(&[(
            "sudo",
            "auth [SUCCESS=done] pam_permit.so\nauth required pam_unix.so\n",
        )]),
        Asks::Yes
    );
    // A blank CRLF line is a line (`\r`): an unknown type, a failing entry a jump counts.
    refused_naming(
        judged(&[(
            "sudo",
            "auth [success=1 default=ignore] pam_succeed_if.so user = alice\n\r\nauth sufficient pam_permit.so\nauth required pam_unix.so\n",
        )]),
        "pam_permit",
    );
    // A module outside the system's module directories is whatever that file is.
    refused_naming(
        judged(&[(
            "sudo",
            "auth sufficient /home/alice/pam_deny.so\nauth required pam_unix.so\n",
        )]),
        "/home/alice/pam_deny.so",
    );
}

#[test]
fn what_libpam_itself_reads_unpredictably_is_refused() {
    let long = format!("auth required pam_unix.so {}\n", "x".repeat(1100));
    for sudo in [
        // Longer than older libpam's line buffer.
        long.as_str(),
        // The file ends inside a continued line: libpam aborts with part of it installed.
        "auth required pam_unix.so \\",
        // A NUL byte: C's string ends there.
        "auth required pam_unix.so\0 x\n",
        // A directive only some builds know.
        "-@include common-auth\nauth required pam_unix.so\n",
        // A continued line followed by a comment (or blank) line: older libpam joined past it,
        // current libpam ends the line there.
        "auth optional pam_env.so \\\n# note\nauth sufficient pam_permit.so\nauth required pam_unix.so\n",
        "auth optional pam_env.so \\\n\nauth sufficient pam_permit.so\nauth required pam_unix.so\n",
    ] {
        assert!(
            matches!(judged(&[("sudo", sudo)]), Asks::Unknown(_)),
            "{sudo:?}"
        );
    }
}

/// Attack 16 F2 (class: *"this module asks" decided by its name while its arguments decide*).
#[test]
fn a_key_or_code_module_whose_arguments_let_it_through_is_refused() {
    let root = ["/etc/fido2/fido2", "/etc/yubikey_mappings"];
    for (line, why) in [
        (
            "auth sufficient pam_u2f.so cue alwaysok authfile=/etc/fido2/fido2",
            "alwaysok",
        ),
        (
            "auth sufficient pam_u2f.so nouserok authfile=/etc/fido2/fido2",
            "nouserok",
        ),
        (
            "auth sufficient pam_u2f.so userpresence=0 authfile=/etc/fido2/fido2",
            "userpresence=0",
        ),
        (
            "auth sufficient pam_u2f.so presentation authfile=/etc/fido2/fido2",
            "presentation",
        ),
        (
            "auth sufficient pam_yubico.so alwaysok authfile=/etc/yubikey_mappings",
            "alwaysok",
        ),
        (
            "auth sufficient pam_oath.so alwaysok usersfile=/etc/users.oath",
            "alwaysok",
        ),
        (
            "auth sufficient pam_google_authenticator.so secret=/etc/fido2/fido2 grace_period=60",
            "grace_period",
        ),
        // Attack 20 F3/F4: numbers as pam_u2f's `sscanf("%d")` reads them, and an argument
        // given twice (the module keeps the last; archgate judged the first).
        (
            "auth sufficient pam_u2f.so userpresence=+0 authfile=/etc/fido2/fido2",
            "userpresence=+0",
        ),
        (
            "auth sufficient pam_u2f.so userpresence=4294967296 authfile=/etc/fido2/fido2",
            "userpresence=4294967296",
        ),
        (
            "auth sufficient pam_u2f.so [userpresence= 0] authfile=/etc/fido2/fido2",
            "userpresence= 0",
        ),
        (
            "auth sufficient pam_u2f.so authfile=/etc/fido2/fido2 authfile=/home/alice/keys",
            "`authfile` is given more than once",
        ),
        (
            "auth sufficient pam_google_authenticator.so secret=/etc/fido2/fido2 secret=${HOME}/.google_authenticator",
            "`secret` is given more than once",
        ),
        (
            "auth sufficient pam_google_authenticator.so secret=/etc/fido2/fido2 grace_period=+0",
            "grace_period",
        ),
    ] {
        let sudo = format!("{line}\nauth required pam_unix.so\n");
        match judged_with_root_only(&[("sudo", &sudo)], &root) {
            Asks::No(w) => assert!(w.contains(why), "{line}: {w}"),
            other => panic!("{line}: {other:?}"),
        }
    }
    // The same modules with their secrets root's alone ask.
    for line in [
        "auth sufficient pam_yubico.so id=16 authfile=/etc/yubikey_mappings",
        "auth sufficient pam_oath.so usersfile=/etc/users.oath window=20",
        "auth sufficient pam_google_authenticator.so user=root secret=/var/lib/ga/${USER}",
        "auth sufficient pam_userdb.so db=/etc/vsftpd_login crypt=crypt",
    ] {
        let sudo = format!("{line}\nauth required pam_unix.so\n");
        assert_eq!(
            judged_with_root_only(
                &[("sudo", &sudo)],
                &[
                    "/etc/yubikey_mappings",
                    "/etc/users.oath",
                    "/var/lib/ga/alice",
                    "/etc/vsftpd_login.db"
                ]
            ),
            Asks::Yes,
            "{line}"
        );
    }
}

/// Attack 16 F6 (class: *a credential the person's own user account can read or write is no
/// credential against the agent*).
#[test]
fn a_secret_or_key_list_within_the_persons_reach_is_no_credential() {
    for (line, named) in [
        // google-authenticator's default `~/.google_authenticator`, and spelled out.
        (
            "auth sufficient pam_google_authenticator.so",
            "pam_google_authenticator",
        ),
        (
            "auth sufficient pam_google_authenticator.so secret=${HOME}/.ga",
            "${HOME}/.ga",
        ),
        (
            "auth sufficient pam_google_authenticator.so secret=~/.ga",
            "~/.ga",
        ),
        // A secret root owns but others can read.
        (
            "auth sufficient pam_oath.so usersfile=/etc/users.oath",
            "/etc/users.oath",
        ),
        // pam_u2f's default key list, `~/.config/Yubico/u2f_keys`, and pam_yubico's.
        ("auth sufficient pam_u2f.so cue", "pam_u2f"),
        ("auth sufficient pam_yubico.so id=16", "pam_yubico"),
        (
            "auth sufficient pam_yubico.so mode=challenge-response",
            "challenge",
        ),
        (
            "auth sufficient pam_userdb.so db=/home/alice/db",
            "/home/alice/db",
        ),
        (
            "auth sufficient pam_p11.so /usr/lib/opensc-pkcs11.so",
            "pam_p11",
        ),
        // A face in front of the camera is no one's deliberate act.
        ("auth sufficient pam_howdy.so", "pam_howdy"),
        // pam_pkcs11's mappers may read the home (attack 21 F3): judged as one archgate cannot
        // vouch for.
        ("auth sufficient pam_pkcs11.so", "pam_pkcs11"),
    ] {
        let sudo = format!("{line}\nauth required pam_unix.so\n");
        refused_naming(judged(&[("sudo", &sudo)]), named);
    }
}
