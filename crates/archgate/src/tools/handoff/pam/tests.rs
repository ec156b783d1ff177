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
    // Omarchy's fingerprint and FIDO2 set-ups put their line first in sudo's file.
    for first in [
        "auth sufficient pam_fprintd.so\n",
        "auth sufficient pam_u2f.so cue origin=pam://hostname\n",
    ] {
        let sudo = format!("{first}{ARCH_SUDO}");
        assert_eq!(
            judged(&[("sudo", &sudo), ("system-auth", ARCH_SYSTEM_AUTH)]),
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
    assert!(matches!(
        judged(&[("sudo", "auth [success=maybe] pam_unix.so\n")]),
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
