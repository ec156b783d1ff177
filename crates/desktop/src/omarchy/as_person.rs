//! Files a route's script changes as the person, which its `sudo` steps may then take as root's
//! input: a handed-off route does none.
//!
//! Class (attack 11 F3; attack 5b's *an input that decides what runs as root comes from a place
//! the person's uid can write*): Omarchy 4's `plymouth set` stages a theme in a `mktemp -d`
//! directory of the person's and then `sudo cp -a "$staging_dir/."` into root's theme
//! directory — the agent, same uid, put a link there, and two hand-offs later root wrote
//! `/etc/pam.d/sudo` through it. The fixed operations take only root's files; a script cannot be
//! checked step by step, so a route whose script (or a script it calls) creates, downloads or
//! changes a file *without* `sudo` — `mktemp`, `cp`, `curl -o`, `git clone`, `sed -i`, a `>`
//! redirection — is not handed off. The person can still run it in their own terminal.

/// Programs whose running, as the person, leaves a file root could read next.
const PREPARERS: &[&str] = &[
    "mktemp", "touch", "cp", "mv", "ln", "mkdir", "install", "tee", "truncate", "dd", "curl",
    "wget", "git", "tar", "bsdtar", "unzip", "rsync", "chmod", "chown", "patch", "magick",
    "convert",
];

/// How `line` changes a file as the person (not after `sudo` on the line), if it does: the
/// program, or the redirection's target.
pub fn changes_as_person(line: &str) -> Option<String> {
    let words = super::words::words(line);
    let mut after_sudo = false;
    for (i, w) in words.iter().enumerate() {
        let name = w.rsplit('/').next().unwrap_or(w);
        if name == "sudo" {
            after_sudo = true;
            continue;
        }
        if after_sudo {
            continue;
        }
        if PREPARERS.contains(&name) {
            return Some(name.to_owned());
        }
        if name == "sed" && words[i + 1..].iter().any(|a| a.starts_with("-i")) {
            return Some("sed -i".to_owned());
        }
    }
    // A redirection into a file (not `/dev/…`, not another descriptor), outside `sudo tee`.
    let mut rest = line;
    while let Some(at) = rest.find('>') {
        let before = &rest[..at];
        rest = rest[at + 1..].trim_start_matches('>');
        if before.ends_with(['2', '&', '-', '=']) && rest.starts_with('&') {
            continue;
        }
        let target = rest.trim_start();
        if target.starts_with('&') || target.starts_with("/dev/") || target.is_empty() {
            continue;
        }
        // `a > b` inside `[[ … ]]` or `(( … ))` compares.
        if before.contains("[[") || before.contains("((") {
            continue;
        }
        let target: String = target
            .chars()
            .take_while(|c| !c.is_whitespace() && *c != ';')
            .collect();
        return Some(format!("> {target}"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::changes_as_person;

    #[test]
    fn a_file_made_or_changed_as_the_person_is_named_and_sudos_own_steps_are_not() {
        // Shapes of Omarchy 4's lines (bin/omarchy-plymouth-set, omarchy-refresh-pacman,
        // omarchy-pkg-add): our own text.
        for (line, what) in [
            (r#"staging_dir=$(mktemp -d)"#, "mktemp"),
            (r#"cp -a "$theme/." "$staging_dir/""#, "cp"),
            (r#"curl -fsSL "$url" -o "$tmp/x""#, "curl"),
            (r#"sed -i "s/a/b/" "$file""#, "sed -i"),
            (
                r#"echo "$value" > "$HOME/.config/x""#,
                "> \"$HOME/.config/x\"",
            ),
        ] {
            assert_eq!(changes_as_person(line).as_deref(), Some(what), "{line}");
        }
        for line in [
            r#"sudo cp -a "$staging_dir/." /usr/share/plymouth/themes/omarchy/"#,
            r#"echo "written" | sudo tee /etc/x >/dev/null"#,
            r#"sudo pacman -S --noconfirm --needed "$@" || exit 1"#,
            r#"echo "failed" >&2"#,
            r#"command -v foo 2>/dev/null"#,
            r#"if [[ $a > $b ]]; then"#,
        ] {
            assert_eq!(changes_as_person(line), None, "{line}");
        }
    }
}
