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
    // Wrappers in front of an elevator (issue 16.11): any position after them.
    env_pkexec: ["env", "pkexec", "gparted"] => Some("pkexec");
    nice_sudo: ["nice", "-n", "10", "sudo", "id"] => Some("sudo");
    nohup_su: ["nohup", "su", "-c", "id"] => Some("su");
    setsid_doas: ["setsid", "-f", "doas", "id"] => Some("doas");
    stdbuf_run0: ["stdbuf", "-oL", "run0", "id"] => Some("run0");
    timeout_pkexec: ["timeout", "5", "/usr/bin/pkexec", "id"] => Some("pkexec");
    time_sudo: ["time", "sudo", "id"] => Some("sudo");
    xargs_su: ["xargs", "-I{}", "su", "{}"] => Some("su");
    chained_wrappers: ["env", "-i", "nice", "nohup", "setsid", "timeout", "9", "kdesu", "x"] => Some("kdesu");
    exe_spelling: ["sudo.exe", "id"] => Some("sudo");
    real_spelling: ["/usr/lib/sudo.real", "id"] => Some("sudo");
    script_spelling: ["./su.sh"] => Some("su");
    upper_exe: ["C:/Windows/SUDO.EXE"] => Some("sudo");
    local_bin_doas: ["/usr/local/bin/doas", "sh"] => Some("doas");
    // The longer list.
    lxqt_sudo: ["lxqt-sudo", "pcmanfm-qt"] => Some("lxqt-sudo");
    lxsudo: ["lxsudo", "x"] => Some("lxsudo");
    su_to_root: ["su-to-root", "-X", "-c", "synaptic"] => Some("su-to-root");
    gksu: ["gksu", "gedit"] => Some("gksu");
    beesu: ["beesu", "x"] => Some("beesu");
    kdesudo: ["kdesudo", "x"] => Some("kdesudo");
    xdg_su: ["xdg-su", "-c", "x"] => Some("xdg-su");
    gnomesu: ["gnomesu", "x"] => Some("gnomesu");
    sux: ["sux", "-"] => Some("sux");
    sg_group: ["sg", "wheel", "-c", "id"] => Some("sg");
    newgrp: ["newgrp", "wheel"] => Some("newgrp");
    runuser: ["runuser", "-u", "root", "id"] => Some("runuser");
    gosu: ["gosu", "root", "id"] => Some("gosu");
    host_spawn: ["host-spawn", "id"] => Some("host-spawn");
    distrobox_host_exec: ["distrobox-host-exec", "id"] => Some("distrobox-host-exec");
    systemd_run_uid: ["systemd-run", "--uid=0", "id"] => Some("systemd-run --uid");
    systemd_run_uid_apart: ["systemd-run", "--user", "--uid", "0", "id"] => Some("systemd-run --uid");
    systemd_run_p_user: ["systemd-run", "--user", "-p", "User=root", "id"] => Some("systemd-run --uid");
    systemd_run_p_joined: ["systemd-run", "--user", "-pUser=root", "id"] => Some("systemd-run --uid");
    systemd_run_property_user: ["systemd-run", "--user", "--property=User=root", "id"] => Some("systemd-run --uid");
    systemd_run_property_group: ["systemd-run", "--user", "--property", "Group=wheel", "id"] => Some("systemd-run --uid");
    systemd_run_system_manager: ["systemd-run", "-t", "bash"] => Some("systemd-run (system manager)");
    systemd_run_absolute: ["/usr/bin/systemd-run", "--pty", "bash"] => Some("systemd-run (system manager)");
    systemd_run_machine: ["systemd-run", "--user", "-M", "root@.host", "bash"] => Some("systemd-run --machine");
    systemd_run_after_env: ["env", "systemd-run", "--uid=root", "x"] => Some("systemd-run --uid");
    machinectl_shell: ["machinectl", "shell", "root@.host"] => Some("machinectl shell");
    machinectl_shell_after_option: ["machinectl", "-q", "shell"] => Some("machinectl shell");
    machinectl_login: ["machinectl", "login"] => Some("machinectl shell");
    flatpak_spawn_host: ["flatpak-spawn", "--host", "bash"] => Some("flatpak-spawn --host");
    flatpak_spawn_host_later: ["flatpak-spawn", "--env=A=b", "--host", "id"] => Some("flatpak-spawn --host");
    busctl_systemd1: ["busctl", "call", "org.freedesktop.systemd1", "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager", "StartUnit", "ss", "x.service", "replace"] => Some("org.freedesktop.systemd1");
    busctl_transient: ["busctl", "call", "org.freedesktop.systemd1", "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager", "StartTransientUnit"] => Some("StartTransientUnit");
    gdbus_systemd1: ["gdbus", "call", "--system", "--dest", "org.freedesktop.systemd1", "--object-path", "/org/freedesktop/systemd1", "--method", "org.freedesktop.systemd1.Manager.RestartUnit"] => Some("org.freedesktop.systemd1");
    dbus_send_systemd1: ["dbus-send", "--system", "--print-reply", "--dest=org.freedesktop.systemd1", "/org/freedesktop/systemd1"] => Some("org.freedesktop.systemd1");
    qdbus_machine1: ["qdbus", "--system", "org.freedesktop.machine1"] => Some("org.freedesktop.systemd1");
    transient_unit_anywhere: ["python3", "-c", "bus.StartTransientUnit(...)"] => Some("StartTransientUnit");
    // Package helpers that elevate as their purpose (attack 5a F8, 5b F6), in the forms that
    // install, upgrade or remove.
    yay_install: ["yay", "-S", "--noconfirm", "--needed", "x"] => Some("yay");
    yay_bare_is_a_full_upgrade: ["yay"] => Some("yay");
    yay_sysupgrade_aur: ["yay", "-Sua", "--noconfirm"] => Some("yay");
    yay_search_then_install: ["yay", "firefox"] => Some("yay");
    paru_install: ["/usr/bin/paru", "-S", "x"] => Some("paru");
    pikaur_install: ["pikaur", "-S", "x"] => Some("pikaur");
    trizen_install: ["trizen", "-S", "x"] => Some("trizen");
    aura_aur_install: ["aura", "-A", "x"] => Some("aura");
    pamac_build: ["pamac", "build", "x"] => Some("pamac");
    yay_in_a_shell_line: ["bash", "-c", "xargs yay -S --noconfirm"] => Some("yay");
    makepkg_si: ["makepkg", "-si", "--noconfirm"] => Some("makepkg -s/-i/-r");
    makepkg_s: ["makepkg", "-s", "--skipchecksums"] => Some("makepkg -s/-i/-r");
    makepkg_install_long: ["makepkg", "--install"] => Some("makepkg -s/-i/-r");
    // Their forms that only ask, and a word that is no helper's.
    yay_by_its_path: ["/usr/bin/yay", "-S", "x"] => Some("yay");
    paru_built_here: ["./paru", "-S", "x"] => Some("paru");
    a_helpers_project_page_runs_nothing: ["xdg-open", "https://github.com/Jguer/yay"] => None;
    a_helpers_documentation_runs_nothing: ["less", "/usr/share/doc/paru"] => None;
    yay_query: ["yay", "-Qi", "x"] => None;
    yay_sync_info: ["yay", "-Siia", "x"] => None;
    yay_search: ["yay", "-Ss", "x"] => None;
    yay_list: ["yay", "-Slqa"] => None;
    yay_get_pkgbuild: ["yay", "-Gpa", "x"] => None;
    paru_version: ["paru", "--version"] => None;
    pamac_search: ["pamac", "search", "x"] => None;
    asusctl_aura_is_a_keyboard_light: ["asusctl", "aura", "effect", "static"] => None;
    makepkg_builds_only: ["makepkg", "--printsrcinfo"] => None;
    makepkg_clean_build: ["makepkg", "-C", "-f"] => None;
    // Near misses that stay allowed.
    subl_is_an_editor: ["subl", "notes.txt"] => None;
    sudoku_with_args: ["sudoku", "--level", "3"] => None;
    sugar: ["sugar", "sushi", "sgml", "usage"] => None;
    systemd_run_user_scope: ["systemd-run", "--user", "--scope", "firefox"] => None;
    machinectl_list: ["machinectl", "list"] => None;
    flatpak_spawn_sandboxed: ["flatpak-spawn", "--sandbox", "x"] => None;
    flatpak_run: ["flatpak", "run", "org.mozilla.firefox"] => None;
    busctl_user_notifications: ["busctl", "--user", "call", "org.freedesktop.Notifications", "/org/freedesktop/Notifications"] => None;
    gdbus_introspect_login1: ["gdbus", "introspect", "--system", "--dest", "org.freedesktop.login1"] => None;
    systemd_units_elsewhere: ["journalctl", "--user", "-u", "user@1000.service"] => None;
    // Blunt on purpose: a word naming systemd-run counts wherever it stands (errs the safe way).
    systemd_run_named_anywhere: ["journalctl", "-u", "systemd-run", "user"] => Some("systemd-run --uid");
    shell_route: ["toggle", "shell", "host", "user"] => None;
    exe_suffix_alone: [".exe", "sudo-like"] => None;
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
