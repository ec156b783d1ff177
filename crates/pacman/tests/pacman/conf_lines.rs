//! pacman.conf read line by line as pacman reads it, `pacman-conf` the oracle (attack 22 F5;
//! class: *a parser that re-implements another program's and differs on input that program
//! accepts*): archgate cut every line at its first `#`, kept the last `RootDir`, and took
//! `[core] # c` for a section — pacman does none of these, and root's
//! `HookDir = /etc/pacman.d/hooks/ # see ~/hooks/` gave pacman the person's hook directory.

use std::process::Command;

use archgate_pacman::conf::PacmanConf;
use archgate_pacman::error::{ConfProblem, PacmanError};

/// `pacman-conf --config FILE ARGS…`, one value a line.
fn pacman_conf(file: &std::path::Path, args: &[&str]) -> Vec<String> {
    let out = Command::new("pacman-conf")
        .arg("--config")
        .arg(file)
        .args(args)
        .output()
        .unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Every repository's servers as `pacman-conf --repo NAME Server` lists them.
fn servers_as_pacman_conf_says(c: &PacmanConf, file: &std::path::Path) {
    for r in &c.repos {
        assert_eq!(
            r.servers,
            pacman_conf(file, &["--repo", &r.name, "Server"]),
            "{}",
            r.name
        );
    }
}

#[test]
fn comments_repeated_options_and_bracket_lines_are_read_as_pacman_conf_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pacman.conf");
    // Our own configuration, in pacman.conf(5)'s shape.
    std::fs::write(
        &file,
        "# a comment\n[options]\n  # an indented comment\n\
         HookDir = /etc/pacman.d/hooks/ # see also /home/alice/hooks/\n\
         RootDir = /srv/first\nRootDir = /srv/second\nDBPath = /srv/db1/\nDBPath = /srv/db2/\n\
         LogFile = /srv/l1.log\nLogFile = /srv/l2.log\nGPGDir = /srv/g1/\nGPGDir = /srv/g2/\n\
         XferCommand = /usr/bin/curl -o %o %u\nXferCommand = /usr/bin/wget -O %o %u # two\n\
         Architecture = x86_64\n\
         [custom]\nServer = file:///srv/repo # the local one\n",
    )
    .unwrap();
    let c = PacmanConf::load(&file).unwrap();
    let hook_dirs: Vec<String> = c
        .hook_dirs
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    assert_eq!(hook_dirs, pacman_conf(&file, &["HookDir"]));
    assert!(
        hook_dirs.contains(&"/home/alice/hooks/".to_owned()),
        "{hook_dirs:?}"
    );
    assert_eq!(
        vec![c.root_dir.display().to_string()],
        pacman_conf(&file, &["RootDir"])
    );
    assert_eq!(
        vec![c.db_path.display().to_string()],
        pacman_conf(&file, &["DBPath"])
    );
    assert_eq!(
        vec![c.log_file.display().to_string()],
        pacman_conf(&file, &["LogFile"])
    );
    assert_eq!(
        vec![c.gpg_dir.unwrap().display().to_string()],
        pacman_conf(&file, &["GPGDir"])
    );
    assert_eq!(
        vec![c.xfer_command.unwrap()],
        pacman_conf(&file, &["XferCommand"])
    );
    assert_eq!(
        c.repos[0].servers,
        pacman_conf(&file, &["--repo", "custom", "Server"])
    );

    // `[custom] # c` is no section to pacman: a directive (unknown) of the section before.
    std::fs::write(
        &file,
        "[options]\nArchitecture = x86_64\n[custom] # c\nServer = https://a.invalid/$repo\n",
    )
    .unwrap();
    let c = PacmanConf::load(&file).unwrap();
    assert!(c.repos.is_empty(), "{:?}", c.repos);
    assert!(pacman_conf(&file, &["--repo-list"]).is_empty());
    assert!(c.options.contains_key("[custom] # c"), "{:?}", c.options);
}

#[test]
fn siglevel_lines_add_up_and_a_line_pacman_would_split_is_refused() {
    let text = "[options]\nSigLevel = Never\nSigLevel = Required\n[custom]\nSigLevel = Optional\nSigLevel = PackageRequired\nServer = https://a.invalid/\n";
    let c = PacmanConf::parse(std::path::Path::new("/x/pacman.conf"), text).unwrap();
    assert_eq!(c.sig_level, ["Never", "Required"]);
    assert_eq!(c.repos[0].sig_level, ["Optional", "PackageRequired"]);
    let long = format!("[options]\nHookDir = /etc/{}/\n", "a".repeat(5000));
    assert!(matches!(
        PacmanConf::parse(std::path::Path::new("/x/pacman.conf"), &long),
        Err(PacmanError::ConfMalformed {
            line: 2,
            problem: ConfProblem::LineTooLong(_),
            ..
        })
    ));
}

/// Attack 24 F5: the section an included file ends in goes on in the including file, as pacman
/// reads it (a `Server` after the `Include` belongs to the included file's last repository).
#[test]
fn the_section_an_included_file_ends_in_goes_on_after_the_include() {
    let dir = tempfile::tempdir().unwrap();
    let inc = dir.path().join("inc.conf");
    std::fs::write(
        &inc,
        "[other]\nSigLevel = Never\nServer = https://o.invalid/\n",
    )
    .unwrap();
    let file = dir.path().join("pacman.conf");
    std::fs::write(
        &file,
        format!(
            "[options]\nArchitecture = x86_64\n[core]\nInclude = {}\nServer = http://127.0.0.1/x\n",
            inc.display()
        ),
    )
    .unwrap();
    let c = PacmanConf::load(&file).unwrap();
    servers_as_pacman_conf_says(&c, &file);
    let other = c.repos.iter().find(|r| r.name == "other").unwrap();
    assert!(other.servers.contains(&"http://127.0.0.1/x".to_owned()));
}

/// Attack 25 F6: pacman trims only ASCII space (`strtrim`, C's `isspace`): `[testrepo` + a
/// no-break space + `]` is another repository to pacman, and to archgate.
#[test]
fn only_ascii_space_is_trimmed_as_pacman_trims_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pacman.conf");
    std::fs::write(
        &file,
        "[options]\nArchitecture = x86_64\n[testrepo]\nServer = https://a.invalid/\n[testrepo\u{a0}]\nServer = http://127.0.0.1/x\n",
    )
    .unwrap();
    let c = PacmanConf::load(&file).unwrap();
    let names: Vec<&str> = c.repos.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert_eq!(pacman_conf(&file, &["--repo-list"]).len(), 2);
    servers_as_pacman_conf_says(&c, &file);
}
