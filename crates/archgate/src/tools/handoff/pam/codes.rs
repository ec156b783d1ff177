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

/// The actions of a control token.
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
        other => {
            let Some(inner) = other.strip_prefix('[').and_then(|s| s.strip_suffix(']')) else {
                return Err(format!("`{control}` is not a control libpam knows"));
            };
            // An unset `default` leaves every unnamed code `bad`, as libpam does.
            let mut default = Action::Bad;
            for pair in inner.split_whitespace() {
                let (value, action) = pair
                    .split_once('=')
                    .ok_or_else(|| format!("`{pair}` in `{control}` is not value=action"))?;
                let action = parse_action(action)
                    .ok_or_else(|| format!("`{action}` in `{control}` is not an action"))?;
                if value == "default" {
                    default = action;
                } else {
                    let code = NAMES
                        .iter()
                        .position(|n| *n == value)
                        .ok_or_else(|| format!("`{value}` in `{control}` is not a return code"))?;
                    actions[code] = Some(action);
                }
            }
            default
        }
    };
    Ok(actions.map(|a| a.unwrap_or(default)))
}

/// `success` and `new_authtok_reqd` go on (`ok`), as for required, requisite and optional.
fn keep_going(actions: &mut [Option<Action>; CODES]) {
    actions[SUCCESS] = Some(Action::Ok);
    actions[NEW_AUTHTOK_REQD] = Some(Action::Ok);
}

fn parse_action(word: &str) -> Option<Action> {
    Some(match word {
        "ignore" => Action::Ignore,
        "ok" => Action::Ok,
        "done" => Action::Done,
        "bad" => Action::Bad,
        "die" => Action::Die,
        "reset" => Action::Reset,
        n => match n.parse::<u32>() {
            Ok(0) | Err(_) => return None,
            Ok(n) => Action::Jump(n),
        },
    })
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
        let bracket = control_actions("[success=2 default=ignore]").unwrap();
        assert_eq!(bracket[SUCCESS], Action::Jump(2));
        assert_eq!(bracket[PERM_DENIED], Action::Ignore);
        // No default: every unnamed code is bad.
        let bare = control_actions("[success=ok]").unwrap();
        assert_eq!(bare[AUTH_ERR], Action::Bad);
        assert!(control_actions("[success=maybe]").is_err());
        assert!(control_actions("[sucess=ok]").is_err());
        assert!(control_actions("mandatory").is_err());
    }
}
