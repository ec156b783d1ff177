//! Whether an `auth` chain can end in success when nobody types a password: every way the chain
//! can run is walked with libpam's own rules for combining results (`_pam_dispatch_aux`:
//! impressions, `done`/`die` ending a (sub)stack, jumps, `reset`), each module returning any
//! code it could return for a person who gives no credential. A module that asks for one
//! (a password, a fingerprint, a key's touch) never succeeds then, unless its arguments or a
//! secret within the person's reach let it (`args.rs`); a module that decides from
//! what it can see alone (`pam_permit`, `pam_wheel trust`, `pam_succeed_if`, one archgate does
//! not know) may.

use std::collections::HashSet;

use super::codes::{AUTH_ERR, Action, CODES, IGNORE, PERM_DENIED, SUCCESS};
use super::config::{Entry, What};

/// Modules that succeed only when the person gives a credential or is present: a password
/// (pam_unix, pam_unix2, pam_systemd_home, pam_userdb, and the network directories' sss, ldap,
/// krb5, winbind), a one-time code (google_authenticator, oath), a token or smart card (u2f,
/// yubico, p11), a finger on the reader (fprintd) — each also judged by its arguments and
/// where its secret lives (`args.rs`). Not howdy: a face in front of the camera is no one's
/// deliberate act (attack 16 F6). Not pam_pkcs11: its mappers, chosen in its own
/// `/etc/pam_pkcs11/pam_pkcs11.conf`, may match a card against files in the home
/// (`~/.ssh/authorized_keys` for the openssh mapper) — archgate does not read that file, so it
/// may grant (attack 21 F3).
const ASKS: [&str; 14] = [
    "pam_unix",
    "pam_unix2",
    "pam_systemd_home",
    "pam_userdb",
    "pam_sss",
    "pam_ldap",
    "pam_krb5",
    "pam_winbind",
    "pam_google_authenticator",
    "pam_oath",
    "pam_u2f",
    "pam_yubico",
    "pam_p11",
    "pam_fprintd",
];

/// The codes a module may return to a person who types no password.
fn outcomes(name: &str, args: &[String]) -> Vec<usize> {
    let all = 0..CODES;
    match name {
        // pam_deny fails every authentication; pam_permit grants every one.
        "pam_deny" => vec![AUTH_ERR],
        "pam_permit" => vec![SUCCESS],
        // pam_wheel grants only with `trust`; without it, membership is "ignore" and anything
        // else a refusal.
        "pam_wheel" if !args.iter().any(|a| a == "trust") => {
            all.filter(|c| *c != SUCCESS).collect()
        }
        // pam_unix answers a password or its absence, never "ignore" (`pam_unix_auth.c`).
        "pam_unix" | "pam_unix2" => all.filter(|c| *c != SUCCESS && *c != IGNORE).collect(),
        n if ASKS.contains(&n) => all.filter(|c| *c != SUCCESS).collect(),
        _ => all.collect(),
    }
}

/// The state libpam carries along a chain.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Impression {
    Undef,
    Positive,
    Negative,
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct State {
    impression: Impression,
    success: bool,
    /// The (impression, success) saved on entering each substack level, for `reset`.
    saved: Vec<(Impression, bool)>,
}

/// The entries whose success lets the chain end in success with no credential given, in the
/// order they ran on one such way; `None` when there is no such way.
pub fn grants_without_credential(chain: &[Entry]) -> Option<Vec<usize>> {
    let levels = chain.iter().map(|e| e.level).max().unwrap_or(0) + 1;
    let start = State {
        impression: Impression::Undef,
        // libpam starts from PAM_MUST_FAIL_CODE.
        success: false,
        saved: vec![(Impression::Undef, false); levels],
    };
    let mut seen = HashSet::new();
    walk(chain, 0, 0, start, Vec::new(), &mut seen)
}

fn walk(
    chain: &[Entry],
    mut i: usize,
    mut prev_level: usize,
    mut st: State,
    mut granted: Vec<usize>,
    seen: &mut HashSet<(usize, usize, State)>,
) -> Option<Vec<usize>> {
    loop {
        let Some(entry) = chain.get(i) else {
            return (st.impression == Impression::Positive && st.success).then_some(granted);
        };
        if !seen.insert((i, prev_level, st.clone())) {
            return None;
        }
        let level = entry.level;
        if prev_level < level {
            st.saved[level] = (st.impression, st.success);
        }
        let choices: Vec<(usize, Action)> = match &entry.what {
            What::Substack => {
                prev_level = level;
                i += 1;
                continue;
            }
            What::MustFail { actions } => vec![(PERM_DENIED, actions[PERM_DENIED])],
            What::Module {
                name,
                args,
                actions,
                open,
            } => {
                let mut distinct = Vec::new();
                let mut kinds = HashSet::new();
                // A module whose arguments or secret let it through may return anything.
                let codes = match open {
                    Some(_) => (0..CODES).collect(),
                    None => outcomes(name, args),
                };
                for code in codes {
                    if kinds.insert((code == SUCCESS, actions[code])) {
                        distinct.push((code, actions[code]));
                    }
                }
                distinct
            }
        };
        // Every choice but the last is walked on its own; the last goes on in this loop.
        let (last, others) = choices.split_last()?;
        for &(code, action) in others {
            let mut g = granted.clone();
            if code == SUCCESS {
                g.push(i);
            }
            let (next, st2) = step(chain, i, level, st.clone(), code, action);
            if let Some(found) = walk(chain, next, level, st2, g, seen) {
                return Some(found);
            }
        }
        let (code, action) = *last;
        if code == SUCCESS {
            granted.push(i);
        }
        (i, st) = step(chain, i, level, st, code, action);
        prev_level = level;
    }
}

/// One module's result applied as `_pam_dispatch_aux` applies it; the index of the next entry.
fn step(
    chain: &[Entry],
    i: usize,
    level: usize,
    mut st: State,
    code: usize,
    action: Action,
) -> (usize, State) {
    let decided = |i: usize| {
        // A decision skips the rest of this (sub)stack.
        let mut j = i;
        while chain.get(j + 1).is_some_and(|e| e.level >= level) {
            j += 1;
        }
        j + 1
    };
    match action {
        Action::Reset => {
            (st.impression, st.success) = st.saved[level];
            (i + 1, st)
        }
        Action::Ok | Action::Done => {
            if st.impression == Impression::Undef
                || (st.impression == Impression::Positive && st.success)
            {
                st.impression = Impression::Positive;
                st.success = code == SUCCESS;
            }
            if st.impression == Impression::Positive && action == Action::Done {
                (decided(i), st)
            } else {
                (i + 1, st)
            }
        }
        Action::Bad | Action::Die => {
            if st.impression != Impression::Negative {
                st.impression = Impression::Negative;
                st.success = false;
            }
            if action == Action::Die {
                (decided(i), st)
            } else {
                (i + 1, st)
            }
        }
        Action::Ignore => (i + 1, st),
        Action::Jump(n) => {
            let mut j = i;
            let mut left = n;
            while left > 0 && chain.get(j + 1).is_some_and(|e| e.level >= level) {
                j += 1;
                while chain.get(j + 1).is_some_and(|e| e.level > level) {
                    j += 1;
                }
                left -= 1;
            }
            if left > 0 {
                // A jump past the end: libpam's "bad jump in stack" fails the chain.
                st.impression = Impression::Negative;
                st.success = false;
            }
            (j + 1, st)
        }
    }
}
