//! Whether PAM, not only sudoers, makes sudo ask the person (attack 11 F4; class: *sudo's
//! decision predicted from a query that stops before the part that decides*). `sudo -n` answers
//! "a password is required" from sudoers alone; PAM's `auth` stack then decides, and a line such
//! as `auth sufficient pam_wheel.so trust` lets sudo through with no password at all — the
//! agent's Enter would then run the command as root. So the hand-off reads sudo's PAM stack as
//! libpam builds it (`config.rs`) and walks every way it can run (`dispatch.rs`): if any ends in
//! success while nobody gives a credential, the hand-off is refused and the person is told which
//! line does it.

mod args;
mod codes;
mod config;
mod dispatch;
mod lines;
#[cfg(test)]
mod tests;

use super::sudo::Asks;

/// The PAM service sudo authenticates with (sudo's default `pam_service`).
const SERVICE: &str = "sudo";

/// sudo's PAM stack on this machine, judged.
pub fn will_pam_ask() -> Asks {
    sudo_asks_for(&config::System, SERVICE)
}

fn sudo_asks_for(files: &dyn config::Files, service: &str) -> Asks {
    let chain = match config::auth_chain(files, service) {
        Ok(Some(chain)) => chain,
        // With no stack libpam fails every authentication: sudo cannot be passed without
        // a password (nor with one; sudo will say so).
        Ok(None) => return Asks::Yes,
        Err(why) => {
            return Asks::Unknown(format!(
                "sudo's PAM settings cannot be judged: {why}; whoever can change them decides \
                 whether sudo asks for your password"
            ));
        }
    };
    match dispatch::grants_without_credential(&chain) {
        None => Asks::Yes,
        Some(granted) => {
            let lines: Vec<String> = granted
                .iter()
                .filter_map(|&i| chain.get(i))
                .filter_map(|e| match &e.what {
                    config::What::Module {
                        name, args, open, ..
                    } => {
                        let args = if args.is_empty() {
                            String::new()
                        } else {
                            format!(" {}", args.join(" "))
                        };
                        let why = open.as_ref().map(|w| format!(": {w}")).unwrap_or_default();
                        Some(format!("{name}{args} ({}){why}", e.at))
                    }
                    _ => None,
                })
                .collect();
            Asks::No(format!(
                "PAM can let sudo through without your password: {} may succeed without asking \
                 for any credential, so a keystroke alone would run the command as root. \
                 Run the command yourself, or make sudo's PAM stack ask",
                if lines.is_empty() {
                    "the stack".to_owned()
                } else {
                    lines.join(", then ")
                }
            ))
        }
    }
}
