//! Elevation a hand-off's asking `sudo` would not see: a line of a route's script that reaches
//! root other than by running `sudo` found through its search path.
//!
//! A route's script is handed off only with archgate's asking `sudo` first on its search path
//! (`archgate::tools::handoff::asking_sudo`): every `sudo` it runs by name asks the person's
//! password and keeps none, so nothing the script runs afterwards — the person's hooks, their
//! configuration, both the agent's to write — finds a credential to use (attack 8 F3, F4).
//! Class: *a way to root that does not pass the asking sudo*. A script that runs
//! `/usr/bin/sudo` by its path, `command -p sudo`, `pkexec`, `run0`, `su`, `doas` (any
//! elevating program of [`archgate_policy::elevates_privilege`] other than `sudo` by name), or
//! sets a search path of its own that puts another directory before the one it was given,
//! would elevate past it — or leave a credential behind it — so its route is not handed off.

/// How `line` elevates past a `sudo` found by name, if it does: the program or the assignment.
pub fn past_sudo(line: &str) -> Option<String> {
    let words = super::words::words(line);
    // `sudo` by name goes through the search path (the asking sudo); every other elevation,
    // `/usr/bin/sudo` included, does not.
    let others: Vec<&str> = words.iter().copied().filter(|w| *w != "sudo").collect();
    if let Some(e) = archgate_policy::elevates_privilege(&others) {
        return Some(e.to_owned());
    }
    if words
        .windows(2)
        .any(|w| w[0] == "command" && w[1].starts_with('-') && w[1].contains('p'))
    {
        return Some("command -p (the default search path)".to_owned());
    }
    own_search_path(line)
}

/// How `line` reaches the person's home other than through `$HOME` (which a handed-off
/// route's script gets as a directory no one but root can make: `archgate_exec::env::NO_HOME`),
/// if it does: `/home/…`, the user database (`getent passwd`, `~$USER`), or a command run as
/// the person with their home (`sudo -u`, `-H`, `-i`, `-s`, `--login`). Class: *code or
/// configuration of the person's uid run in the terminal where the person types their
/// password* (attack 11 F2: the agent's hook printed the asking sudo's line and asked the
/// password for its own command).
pub fn reaches_home(line: &str) -> Option<String> {
    if line.contains("/home/") {
        return Some("/home/".to_owned());
    }
    if line.contains("getent passwd") {
        return Some("getent passwd".to_owned());
    }
    if line.contains("~$") || line.contains("~\"") {
        return Some("~$USER".to_owned());
    }
    let words = super::words::words(line);
    for (i, w) in words.iter().enumerate() {
        if w.rsplit('/').next() != Some("sudo") {
            continue;
        }
        for a in words[i + 1..].iter().take_while(|a| a.starts_with('-')) {
            let as_person = ["-u", "-H", "-i", "-s", "--user", "--login", "--shell"].contains(a)
                || (!a.starts_with("--") && a.len() > 2 && a[1..].contains(['u', 'H', 'i', 's']));
            if as_person {
                return Some(format!("sudo {a}"));
            }
        }
    }
    None
}

/// A `PATH=` assignment whose value does not keep the given search path first: every element
/// before `$PATH` must be Omarchy's own `bin/` (`"$OMARCHY_PATH/bin:$PATH"`, as Omarchy 4's
/// setup scripts write it); a value without `$PATH` replaces it.
fn own_search_path(line: &str) -> Option<String> {
    let mut rest = line;
    while let Some(at) = rest.find("PATH=") {
        let before = &rest[..at];
        let after = &rest[at + "PATH=".len()..];
        rest = after;
        // `PATH=` itself, not `MANPATH=` or `$PATH=`.
        if before
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '{')
        {
            continue;
        }
        let value: String = after
            .chars()
            .take_while(|c| !c.is_whitespace() && *c != ';')
            .filter(|c| *c != '"' && *c != '\'')
            .collect();
        let elements: Vec<&str> = value.split(':').collect();
        let given = elements
            .iter()
            .position(|e| *e == "$PATH" || *e == "${PATH}");
        let kept_first = given.is_some_and(|i| {
            elements[..i]
                .iter()
                .all(|e| *e == "$OMARCHY_PATH/bin" || *e == "${OMARCHY_PATH}/bin")
        });
        if !kept_first {
            return Some(format!(
                "PATH={}",
                value.chars().take(80).collect::<String>()
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::past_sudo;

    #[test]
    fn sudo_by_name_passes_and_every_other_way_to_root_is_named() {
        // Shapes of Omarchy 4's lines (bin/omarchy-pkg-add, omarchy-dns, omarchy-dev-install-ydoo,
        // omarchy-setup-system): our own text.
        for line in [
            r#"sudo pacman -S --noconfirm --needed "$@""#,
            r#"echo x | sudo tee /etc/x.conf >/dev/null"#,
            r#"sudo -u root -- systemctl restart x"#,
            r#"export PATH="$OMARCHY_PATH/bin:$PATH""#,
            r#"MANPATH=/x man sudo"#,
        ] {
            assert_eq!(past_sudo(line), None, "{line}");
        }
        for (line, what) in [
            (r#"/usr/bin/sudo pacman -Syu"#, "sudo"),
            (r#"exec pkexec "$(self_path)" "$@""#, "pkexec"),
            (r#"run0 systemctl restart x"#, "run0"),
            (r#"command -p sudo tee /etc/x"#, "command -p"),
            (r#"export PATH="/usr/bin:$PATH""#, "PATH=/usr/bin"),
            (
                r#"PATH=/usr/local/bin:/usr/bin sudo true"#,
                "PATH=/usr/local/bin",
            ),
            (r#"export PATH="$HOME/bin:$PATH""#, "PATH=$HOME/bin"),
        ] {
            let got = past_sudo(line).unwrap_or_default();
            assert!(got.contains(what), "{line}: {got:?}");
        }
    }

    #[test]
    fn the_persons_home_reached_past_home_is_named() {
        use super::reaches_home;
        // Shapes of Omarchy 4's lines (bin/omarchy-upgrade-to-quattro, omarchy-setup-system):
        // our own text.
        for (line, what) in [
            (r#"sudo -u "$target_user" -H "$@""#, "sudo -u"),
            (r#"cp x /home/$USER/.config/y"#, "/home/"),
            (
                r#"home=$(getent passwd "$USER" | cut -d: -f6)"#,
                "getent passwd",
            ),
            (r#"eval echo ~$USER"#, "~$USER"),
            (r#"sudo -iu root true"#, "sudo -iu"),
        ] {
            assert_eq!(reaches_home(line).as_deref(), Some(what), "{line}");
        }
        for line in [
            r#"sudo pacman -S --noconfirm "$@""#,
            r#"sudo -k -- tee /etc/x"#,
            r#"cp "$HOME/.config/x" /tmp/y"#,
        ] {
            assert_eq!(reaches_home(line), None, "{line}");
        }
    }
}
