//! Each spelling a fresh-eyes round ran the agent's file with (attack 25 F1, attack 26 F1, F2),
//! and the lines of Omarchy 4's own that are not the person's code. Lines are our own text in
//! the shape of Omarchy 4's scripts (basecamp/omarchy at 2c8639ff) and of the attack's rig.

use super::*;

/// The files each site names (`None`: one the script names when it runs).
fn files(line: &str) -> Vec<Option<String>> {
    sites(line).into_iter().map(|s| s.file).collect()
}

fn named(line: &str) -> Vec<String> {
    files(line).into_iter().flatten().collect()
}

const LOGIN: [&str; 3] = [".bash_profile", ".bash_login", ".profile"];

#[test]
fn a_login_or_interactive_shell_reads_the_persons_start_up_files_however_it_is_spelt() {
    // Omarchy 4's omarchy-system-sleep-monitor (attack 25 F1).
    assert_eq!(
        named(r#"exec systemd-inhibit --what=sleep bash -lc "$monitor_command | tail""#),
        LOGIN
    );
    assert_eq!(named("bash --login -c true"), LOGIN);
    assert_eq!(named("/bin/bash -i"), [".bashrc"]);
    assert_eq!(named("sh -l -c x"), [".profile"]);
    // Attack 26 F2: option arguments, quotes, $BASH, exec's argv0.
    for line in [
        r#"bash -O extglob -lc "echo hi""#,
        r#"bash -o pipefail -l -c "echo hi""#,
        r#"ba""sh -lc "echo hi""#,
        r#""$BASH" -lc "echo hi""#,
        r#""${BASH}" -lc "echo hi""#,
        r#"\bash -lc "echo hi""#,
        r#"exec -l bash -c "echo hi""#,
        r#"exec -a -bash bash -c "echo hi""#,
        r#"exec -a -sh /usr/bin/bash -c "echo hi""#,
        "rbash -l -c x",
    ] {
        assert_eq!(named(line), LOGIN, "{line}");
    }
    // zsh, fish and csh read the home's files for every shell.
    assert_eq!(named(r#"zsh -c "echo hi""#), [".zshenv"]);
    assert_eq!(named(r#"fish -c "echo hi""#), [".config/fish/config.fish"]);
    assert_eq!(named("csh -c x"), [".cshrc"]);
    assert_eq!(files(r#""$SHELL" -c x"#), [None]);
    // Not a start-up file: a command string's words, a script's own arguments, a plain shell.
    assert!(files(r#"bash -c "echo -l""#).is_empty());
    assert!(files("bash script.sh -l").is_empty());
    assert!(files(r#"bash -c 'source "$1"' bash /usr/share/x.sh"#).len() == 1);
    assert!(files("sh -c 'exit 0'").is_empty());
    assert!(files("exec -a omarchy-x bash -c true").is_empty());
}

#[test]
fn an_rcfile_bash_env_or_a_script_of_the_persons_is_the_file_that_runs() {
    assert_eq!(
        named(r#"bash --rcfile ~/.config/x.sh -i -c "echo hi""#),
        [".config/x.sh"]
    );
    assert_eq!(
        named(r#"BASH_ENV=~/.bashrc bash -c "echo hi""#),
        [".bashrc"]
    );
    assert_eq!(files("export ENV=$XDG_CONFIG_HOME/sh/rc"), [None]);
    assert_eq!(
        named("bash ~/.config/omarchy/x.sh"),
        [".config/omarchy/x.sh"]
    );
    assert_eq!(
        named(r#"python3 "$HOME/.local/bin/tool.py" --x"#),
        [".local/bin/tool.py"]
    );
    assert_eq!(files(r#"lua "$script""#), [None]);
    // Code given inline, or a program of the system's: not the person's file.
    assert!(files(r#"python3 - "$file" "$id" <<'PY'"#).is_empty());
    assert!(files(r#"perl -MEncode=decode -e 'print 1' "$1""#).is_empty());
    assert!(files("python3 /usr/share/omarchy/x.py").is_empty());
}

#[test]
fn a_source_of_a_file_under_the_home_or_one_a_variable_names_is_the_persons() {
    for (line, want) in [
        (
            "[[ -f ~/.config/user-dirs.dirs ]] && source ~/.config/user-dirs.dirs",
            vec![Some(".config/user-dirs.dirs".to_owned())],
        ),
        (
            r#"    source "$HOME/.bashrc""#,
            vec![Some(".bashrc".to_owned())],
        ),
        (
            r#"source "$HOME"/.config/omarchy/x.sh"#,
            vec![Some(".config/omarchy/x.sh".to_owned())],
        ),
        (
            r#". "${HOME}/.config/omarchy/x.sh""#,
            vec![Some(".config/omarchy/x.sh".to_owned())],
        ),
        (r#"f=$HOME/.config/omarchy/x.sh; source "$f""#, vec![None]),
        (
            r#". "${XDG_CONFIG_HOME:-$HOME/.config}/omarchy/x.sh""#,
            vec![None],
        ),
        (r#"eval "$(cat ~/.config/omarchy/x.sh)""#, vec![None]),
        (r#"eval "$(opam env)""#, vec![None]),
        ("eval exec setsid $LAUNCH_COMMAND", vec![None]),
    ] {
        assert_eq!(files(line), want, "{line}");
    }
    // Omarchy's own files, and `.` that is not a command (jq's, find's).
    for line in [
        "source omarchy-restart-gum",
        r#"source "$OMARCHY_INSTALL/helpers/logging.sh""#,
        r#"source "$OMARCHY_PATH/default/bash/rc""#,
        r#"jq 'if type == "object" then . else {} end'"#,
        "find . -name '*.conf'",
        r#"hyprctl eval "hl.config({ cursor = { invisible = false } })""#,
    ] {
        assert!(files(line).is_empty(), "{line}");
    }
}

/// Attack 26 F1: Omarchy 4's omarchy-menu-keybindings feeds Lua a here-document whose code runs
/// the person's `~/.config/hypr/hyprland.lua` (with the whole standard library).
#[test]
fn code_in_another_language_that_loads_a_file_at_run_time_is_the_persons() {
    for line in [
        r#"local ok, err = pcall(dofile, os.getenv("HOME") .. "/.config/hypr/hyprland.lua")"#,
        r#"lua -e "dofile(os.getenv([[HOME]])..[[/.config/x.lua]])""#,
        "local f = loadfile(path)",
        "runpy.run_path(p)",
        "exec(open(path).read())",
    ] {
        assert_eq!(files(line), [None], "{line}");
    }
    assert!(files("my_dofile_helper x").is_empty());
}

/// Attack 27 F1: code from standard input, from a process, from a variable or a command's
/// output; an option's file of code; a path variable an interpreter loads from.
#[test]
fn code_a_line_feeds_a_shell_or_an_interpreter_from_the_home_is_the_persons() {
    for line in [
        "cat ~/.config/omarchy/x.sh | bash",
        "bash -s < ~/.config/omarchy/x.sh",
        "source <(cat ~/.config/omarchy/x.sh)",
        "source /dev/stdin < ~/.config/omarchy/x.sh",
        "eval \"`cat ~/.config/omarchy/x.sh`\"",
        "eval \"$c\"",
        "eval \"$h post-update\"",
        "bash <<EOF2",
        r#"bash -c "$(cat ~/.config/omarchy/x.sh)""#,
        r#"sh -c "$(<~/.config/omarchy/x.sh)""#,
        r"find ~/.config/omarchy -name 'x.sh' -exec bash {} \;",
        r#"python3 -c "import sys,os; sys.path.insert(0, os.path.expanduser('~/.config/omarchy')); import xpy""#,
        r#"python3 -c "exec( open(os.path.expanduser('~/.config/omarchy/x.py')).read())""#,
        r#"perl -e 'do "$ENV{HOME}/.config/omarchy/x.pl"; push @INC, 1'"#,
    ] {
        assert!(!files(line).is_empty(), "{line}");
    }
    for (line, file) in [
        (
            "PYTHONPATH=$HOME/.config/omarchy python3 -c 'import xpy'",
            ".config/omarchy",
        ),
        (
            "awk -f ~/.config/omarchy/x.awk /dev/null",
            ".config/omarchy/x.awk",
        ),
        (
            "echo a | sed -f ~/.config/omarchy/x.sed",
            ".config/omarchy/x.sed",
        ),
        (
            "perl -I ~/.config/omarchy/lib -MEvil -e 1",
            ".config/omarchy/lib",
        ),
        (
            r#"perl -I"$HOME/.config/omarchy/lib" -e "use Evil""#,
            ".config/omarchy/lib",
        ),
    ] {
        assert!(
            named(line).contains(&file.to_owned()),
            "{line}: {:?}",
            files(line)
        );
    }
    // Code the script itself gives: not the person's.
    for line in [
        "bash -c 'exit 0'",
        r#"awk -v x="$y" '{ print $1 }' file"#,
        "sed -i 's/a/b/' /etc/x",
        "perl -pe 's/x/y/'",
    ] {
        assert!(files(line).is_empty(), "{line}: {:?}", files(line));
    }
}
