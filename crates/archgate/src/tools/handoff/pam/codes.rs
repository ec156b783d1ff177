//! PAM's return codes and the actions a control gives them, as libpam reads a control
//! (`required`, `requisite`, `sufficient`, `optional`, or `[value=action ...]`; pam.conf(5),
//! `libpam/pam_tokens.h`, `pam_handlers.c`).

/// How many return codes libpam knows (`_PAM_RETURN_VALUES`).
pub const CODES: usize = 30;

pub const SUCCESS: usize = 0;
pub const PERM_DENIED: usize = 6;
pub const AUTH_ERR: usize = 7;
pub const NEW_AUTHTOK_REQD: usize = 12;
pub const IGNORE: usize = 25;

/// The codes' names in a `[value=action]` control, in libpam's numbering.
const NAMES: [&str; CODES] = [
    "success",
    "open_err",
    "symbol_err",
    "service_err",
    "system_err",
    "buf_err",
    "perm_denied",
    "auth_err",
    "cred_insufficient",
    "authinfo_unavail",
    "user_unknown",
    "maxtries",
    "new_authtok_reqd",
    "acct_expired",
    "session_err",
    "cred_unavail",
    "cred_expired",
    "cred_err",
    "no_module_data",
    "conv_err",
    "authtok_err",
    "authtok_recover_err",
    "authtok_lock_busy",
    "authtok_disable_aging",
    "try_again",
    "ignore",
    "abort",
    "authtok_expired",
    "module_unknown",
    "bad_item",
];

/// What the stack does with a module's return code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    Ignore,
    Ok,
    Done,
    Bad,
    Die,
    Reset,
    /// Skip this many following modules.
    Jump(u32),
}

/// Return-code names some libpam versions know and others do not (Linux-PAM added them after
/// the 30 above): a control naming one is read differently by different versions.
const VERSIONED: [&str; 2] = ["conv_again", "incomplete"];

/// The actions, in `_pam_token_actions`' order (matched as prefixes, as libpam does).
const ACTIONS: [(&str, Action); 6] = [
    ("ignore", Action::Ignore),
    ("ok", Action::Ok),
    ("done", Action::Done),
    ("bad", Action::Bad),
    ("die", Action::Die),
    ("reset", Action::Reset),
];

/// The actions of a control token, as the tokenizer hands it over (a `[...]` control without
/// its brackets), exactly as `pam_handlers.c` and `_pam_parse_control` read it: the four
/// keywords in any case; anything else as `value=action` pairs, case-sensitive, names and
/// actions matched as prefixes, blanks allowed around `=`, a later `default` filling only what
/// is still unset; any error makes every code `bad`. `Err` only where libpam's versions differ
/// (`conv_again`, `incomplete`) or its C would overflow (a jump past `i32::MAX`).
pub fn control_actions(control: &str) -> Result<[Action; CODES], String> {
    let mut actions: [Option<Action>; CODES] = [None; CODES];
    let default = match control.to_ascii_lowercase().as_str() {
        "required" => {
            keep_going(&mut actions);
            actions[IGNORE] = Some(Action::Ignore);
            Action::Bad
        }
        "requisite" => {
            keep_going(&mut actions);
            actions[IGNORE] = Some(Action::Ignore);
            Action::Die
        }
        "optional" => {
            keep_going(&mut actions);
            Action::Ignore
        }
        "sufficient" => {
            actions[SUCCESS] = Some(Action::Done);
            actions[NEW_AUTHTOK_REQD] = Some(Action::Done);
            Action::Ignore
        }
        _ => {
            if parse_control(control, &mut actions)?.is_err() {
                // libpam's parse error: "treat everything as bad".
                return Ok([Action::Bad; CODES]);
            }
            // "by default the default is to treat as failure".
            Action::Bad
        }
    };
    Ok(actions.map(|a| a.unwrap_or(default)))
}

/// `_pam_parse_control`: `Ok(Err(()))` is libpam's parse error.
fn parse_control(
    control: &str,
    actions: &mut [Option<Action>; CODES],
) -> Result<Result<(), ()>, String> {
    let is_space = |c: char| matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r');
    let mut rest = control;
    loop {
        rest = rest.trim_start_matches(is_space);
        if rest.is_empty() {
            return Ok(Ok(()));
        }
        if let Some(v) = VERSIONED.iter().find(|v| rest.starts_with(*v)) {
            return Err(format!(
                "`{v}` in `{control}` is a return code only some libpam versions know"
            ));
        }
        let code = match NAMES.iter().position(|n| rest.starts_with(n)) {
            Some(code) => {
                rest = &rest[NAMES[code].len()..];
                Some(code)
            }
            None => match rest.strip_prefix("default") {
                Some(r) => {
                    rest = r;
                    None
                }
                None => return Ok(Err(())),
            },
        };
        if rest.is_empty() {
            return Ok(Err(()));
        }
        rest = rest.trim_start_matches(is_space);
        let Some(r) = rest.strip_prefix('=') else {
            return Ok(Err(()));
        };
        rest = r.trim_start_matches(is_space);
        if rest.is_empty() {
            return Ok(Err(()));
        }
        let action = if let Some((word, action)) = ACTIONS.iter().find(|(w, _)| rest.starts_with(w))
        {
            rest = &rest[word.len()..];
            *action
        } else {
            let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            if digits == 0 {
                return Ok(Err(()));
            }
            let n: u64 = rest[..digits]
                .parse()
                .ok()
                .filter(|n| *n <= i32::MAX as u64)
                .ok_or_else(|| format!("the jump in `{control}` is past what libpam can count"))?;
            rest = &rest[digits..];
            if n == 0 {
                return Ok(Err(()));
            }
            Action::Jump(n as u32)
        };
        match code {
            Some(code) => actions[code] = Some(action),
            None => {
                for a in actions.iter_mut().filter(|a| a.is_none()) {
                    *a = Some(action);
                }
            }
        }
    }
}

/// `success` and `new_authtok_reqd` go on (`ok`), as for required, requisite and optional.
fn keep_going(actions: &mut [Option<Action>; CODES]) {
    actions[SUCCESS] = Some(Action::Ok);
    actions[NEW_AUTHTOK_REQD] = Some(Action::Ok);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_read_as_libpam_reads_them() {
        let sufficient = control_actions("sufficient").unwrap();
        assert_eq!(sufficient[SUCCESS], Action::Done);
        assert_eq!(sufficient[AUTH_ERR], Action::Ignore);
        let required = control_actions("Required").unwrap();
        assert_eq!(required[SUCCESS], Action::Ok);
        assert_eq!(required[IGNORE], Action::Ignore);
        assert_eq!(required[AUTH_ERR], Action::Bad);
        // Controls arrive as the tokenizer hands them over: a `[...]` without its brackets.
        let bracket = control_actions("success=2 default=ignore").unwrap();
        assert_eq!(bracket[SUCCESS], Action::Jump(2));
        assert_eq!(bracket[PERM_DENIED], Action::Ignore);
        // No default: every unnamed code is bad.
        let bare = control_actions("success=ok").unwrap();
        assert_eq!(bare[AUTH_ERR], Action::Bad);
        // Blanks around `=`, and a pair right after an action with no blank between.
        let spaced = control_actions("success = ok\tdefault=ignore").unwrap();
        assert_eq!(
            (spaced[SUCCESS], spaced[AUTH_ERR]),
            (Action::Ok, Action::Ignore)
        );
        let glued = control_actions("success=okdefault=ignore").unwrap();
        assert_eq!(
            (glued[SUCCESS], glued[AUTH_ERR]),
            (Action::Ok, Action::Ignore)
        );
        // A parse error makes every code bad, whatever came before it: unknown actions and
        // names, upper case (names are case-sensitive), a zero jump, a bare keyword.
        for broken in [
            "success=maybe",
            "sucess=ok",
            "SUCCESS=done",
            "success=0",
            "success=done default",
            "mandatory",
        ] {
            assert_eq!(
                control_actions(broken).unwrap(),
                [Action::Bad; CODES],
                "{broken}"
            );
        }
        // Return codes only some versions know, and jumps C cannot count: not guessed.
        assert!(control_actions("conv_again=done").is_err());
        assert!(control_actions("success=99999999999").is_err());
    }

    #[test]
    fn the_first_default_in_a_control_is_the_one_libpam_keeps() {
        // Attack 16 F1.3: `_pam_set_default_control` fills only codes still unset, so a second
        // `default=` changes nothing; a named code after a default still overrides it.
        let twice = control_actions("default=ignore default=bad").unwrap();
        assert_eq!(twice[AUTH_ERR], Action::Ignore);
        let named_after = control_actions("default=ignore success=done").unwrap();
        assert_eq!(
            (named_after[SUCCESS], named_after[AUTH_ERR]),
            (Action::Done, Action::Ignore)
        );
    }
}
