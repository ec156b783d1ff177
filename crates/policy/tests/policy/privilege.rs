//! `elevates_privilege`: every elevating form is found, near misses are not.

use archgate_policy::elevates_privilege;

macro_rules! elevates {
    ($($name:ident: [$($w:expr),* $(,)?] => $which:expr;)*) => {$(
        #[test]
        fn $name() {
            let words: Vec<String> = vec![$($w.to_string()),*];
            assert_eq!(elevates_privilege(&words), $which, "{words:?}");
        }
    )*};
}

elevates! {
    bare_sudo: ["sudo", "pacman", "-Syu"] => Some("sudo");
    absolute_sudo: ["/usr/bin/sudo", "ls"] => Some("sudo");
    nixos_wrapper_sudo: ["/run/wrappers/bin/sudo", "ls"] => Some("sudo");
    env_sudo: ["env", "sudo", "ls"] => Some("sudo");
    env_assignment_then_sudo: ["env", "LANG=C", "sudo", "ls"] => Some("sudo");
    assignment_and_sudo_in_one_word: ["VAR=x sudo ls"] => Some("sudo");
    sudo_last_in_argument_list: ["xargs", "-0", "--", "sudo"] => Some("sudo");
    find_exec_sudo: ["find", ".", "-exec", "sudo", "rm", "{}", ";"] => Some("sudo");
    option_equals_sudo: ["flatpak-spawn", "--exec=sudo"] => Some("sudo");
    option_equals_path_sudo: ["tool", "--wrapper=/usr/bin/sudo"] => Some("sudo");
    shell_string_after_semicolon: ["sh", "-c", "ls; sudo rm -rf /"] => Some("sudo");
    shell_string_after_and: ["sh", "-c", "true&&sudo id"] => Some("sudo");
    shell_string_after_pipe: ["sh", "-c", "yes|sudo tee /etc/x"] => Some("sudo");
    command_substitution: ["echo", "$(sudo id)"] => Some("sudo");
    backticks: ["echo", "`sudo id`"] => Some("sudo");
    quoted_word: ["bash", "-c", "'sudo' id"] => Some("sudo");
    quotes_inside_word: ["bash", "-c", "su''do id"] => Some("sudo");
    backslash_inside_word: ["bash", "-c", "s\\udo id"] => Some("sudo");
    ifs_trick: ["bash", "-c", "sudo${IFS}id"] => Some("sudo");
    newline_separated: ["sh", "-c", "ls\nsudo id"] => Some("sudo");
    path_list_entry: ["env", "PATH=/x:/usr/bin/sudo"] => Some("sudo");
    history_bang: ["bash", "-c", "!sudo"] => Some("sudo");
    upper_case: ["SUDO", "ls"] => Some("sudo");
    sudo_rs: ["sudo-rs", "ls"] => Some("sudo-rs");
    sudoedit: ["sudoedit", "/etc/fstab"] => Some("sudoedit");
    visudo: ["visudo"] => Some("visudo");
    pkexec: ["pkexec", "gparted"] => Some("pkexec");
    absolute_pkexec: ["/usr/bin/pkexec", "x"] => Some("pkexec");
    doas: ["doas", "pacman", "-S", "x"] => Some("doas");
    su: ["su", "-c", "id"] => Some("su");
    su_root_login: ["/bin/su", "-"] => Some("su");
    run0: ["run0", "systemctl", "restart", "x"] => Some("run0");
    kdesu: ["kdesu", "dolphin"] => Some("kdesu");
    gksudo: ["gksudo", "x"] => Some("gksudo");
    in_a_route: ["system", "sudo"] => Some("sudo");
    plain_command: ["hyprctl", "dispatch", "workspace", "2"] => None;
    sudoku_is_a_game: ["sudoku"] => None;
    pseudo_is_a_word: ["echo", "pseudo"] => None;
    sudoers_is_a_file_name: ["cat", "/etc/sudoers"] => None;
    subst: ["subst", "summary", "sus"] => None;
    themes: ["omarchy-theme-set", "tokyo-night"] => None;
    empty: [] => None;
    empty_words: ["", " ", "=", "/"] => None;
}

#[test]
fn reports_the_first_elevator_found() {
    assert_eq!(
        elevates_privilege(&["doas", "sudo"]),
        Some("doas"),
        "the first word that elevates is named"
    );
}

#[test]
fn strange_input_never_panics() {
    let weird = [
        "\u{0}",
        "/",
        "//sudo/",
        "\u{202e}odus",
        "ſudo",
        "sudo\u{0}",
        "'\"\\",
        "🦀 sudo 🦀",
        "a=b=c=d",
    ];
    for w in weird {
        let _ = elevates_privilege(&[w]);
    }
    // Found even between emoji; a trailing slash is a directory, not the program.
    assert_eq!(elevates_privilege(&["🦀 sudo 🦀"]), Some("sudo"));
    assert_eq!(elevates_privilege(&["//sudo/"]), None);
}
