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
    String::from_utf8_lossy(&out.stdout)
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

/// Attack 26 F4: pacman expands `Include` with `glob(3)`, whose `*` never matches a leading `.`:
/// a root `.local.conf` saying `SigLevel = Required` convinced archgate while pacman used
/// `Never`. And a glob matching nothing is read as its own path, which pacman cannot read.
#[test]
fn an_include_glob_skips_hidden_files_and_one_matching_nothing_is_unreadable_as_to_pacman() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("d");
    std::fs::create_dir(&d).unwrap();
    let file = dir.path().join("pacman.conf");
    std::fs::write(
        &file,
        format!(
            "[options]\nArchitecture = x86_64\nSigLevel = Never\nInclude = {}/*.conf\n[testrepo]\nServer = http://127.0.0.1:8080/\n",
            d.display()
        ),
    )
    .unwrap();
    // Nothing matches: pacman refuses the file, and so does archgate.
    assert!(pacman_conf(&file, &["SigLevel"]).is_empty());
    assert!(matches!(
        PacmanConf::load(&file),
        Err(PacmanError::ConfUnreadable { .. })
    ));
    std::fs::write(d.join(".local.conf"), "[options]\nSigLevel = Required\n").unwrap();
    assert!(
        pacman_conf(&file, &["SigLevel"]).is_empty(),
        "a hidden file matched"
    );
    assert!(PacmanConf::load(&file).is_err());
    std::fs::write(d.join("x.conf"), "# mirrors\n").unwrap();
    let c = PacmanConf::load(&file).unwrap();
    assert_eq!(
        pacman_conf(&file, &["SigLevel"]),
        ["PackageNever", "DatabaseNever"]
    );
    assert_eq!(c.sig_level, ["Never"]);
    assert!(
        !c.files.iter().any(|f| f.ends_with(".local.conf")),
        "{:?}",
        c.files
    );
    // A pattern that names hidden files reads them, as glob(3) does.
    std::fs::write(
        &file,
        format!(
            "[options]\nArchitecture = x86_64\nSigLevel = Never\nInclude = {}/.*.conf\n",
            d.display()
        ),
    )
    .unwrap();
    assert_eq!(
        pacman_conf(&file, &["SigLevel"]),
        [
            "PackageRequired",
            "PackageTrustedOnly",
            "DatabaseRequired",
            "DatabaseTrustedOnly"
        ]
    );
    assert_eq!(
        PacmanConf::load(&file).unwrap().sig_level,
        ["Never", "Required"]
    );
}

/// Attack 26 F5: a repository named by two sections. pacman registers the first and reports an
/// error for the second (its `SigLevel` and servers reach no database); archgate merged both,
/// read `Never Required` as Required, and handed off a sync from an unsigned loopback server.
#[test]
fn a_repository_named_twice_is_the_first_section_alone_and_said_to_be_twice() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pacman.conf");
    std::fs::write(
        &file,
        "[options]\nArchitecture = x86_64\n[testrepo]\nSigLevel = Never\nServer = http://127.0.0.1:8080/\n[other]\nServer = https://o.invalid/\n[testrepo]\nSigLevel = Required\nServer = https://example.org/\n[last]\nServer = https://l.invalid/\n",
    )
    .unwrap();
    let c = PacmanConf::load(&file).unwrap();
    let testrepo = c.repo("testrepo").unwrap();
    assert_eq!(testrepo.sig_level, ["Never"]);
    assert_eq!(
        pacman_conf(&file, &["--repo", "testrepo", "SigLevel"]),
        ["PackageNever", "DatabaseNever"]
    );
    servers_as_pacman_conf_says(&c, &file);
    assert_eq!(c.duplicate_repos, ["testrepo"]);
    let names: Vec<&str> = c.repos.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["testrepo", "other", "last"]);
}

/// Attack 26 F10: pacman trims with C's `isspace`, which takes a vertical tab for space:
/// `SigLevel = Never` and a vertical tab is `Never` to pacman. And it takes a section's name
/// as written between the brackets (`[testrepo ]` is another repository: refused here).
#[test]
fn a_vertical_tab_is_space_as_c_isspace_says_and_a_bracketed_name_is_not_trimmed() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pacman.conf");
    std::fs::write(
        &file,
        "[options]\nArchitecture = x86_64\nSigLevel = Never\u{b}\n[testrepo]\nServer = http://127.0.0.1:8080/\n",
    )
    .unwrap();
    assert_eq!(
        pacman_conf(&file, &["SigLevel"]),
        ["PackageNever", "DatabaseNever"]
    );
    assert_eq!(PacmanConf::load(&file).unwrap().sig_level, ["Never"]);
    std::fs::write(
        &file,
        "[options]\nArchitecture = x86_64\n[testrepo ]\nSigLevel = Never\nServer = http://127.0.0.1:8080/\n[testrepo]\nServer = https://a.invalid/\n",
    )
    .unwrap();
    assert_eq!(
        pacman_conf(&file, &["--repo-list"]),
        ["testrepo ", "testrepo"]
    );
    assert!(matches!(
        PacmanConf::load(&file),
        Err(PacmanError::ConfMalformed {
            line: 3,
            problem: ConfProblem::BadRepoName(_),
            ..
        })
    ));
}

/// Attack 26 F11: pacman compares names byte by byte; `[r\xff]` and `[r\xfe]` were one
/// repository here once each invalid byte became U+FFFD. A file that is not UTF-8 is refused.
#[test]
fn a_file_that_is_not_utf8_is_refused_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pacman.conf");
    std::fs::write(
        &file,
        b"[options]\nArchitecture = x86_64\n[r\xff]\nSigLevel = Never\nServer = http://127.0.0.1:8080/\n[r\xfe]\nSigLevel = Required\nServer = http://127.0.0.1:8080/\n",
    )
    .unwrap();
    assert_eq!(pacman_conf(&file, &["--repo-list"]).len(), 2);
    assert!(matches!(
        PacmanConf::load(&file),
        Err(PacmanError::ConfMalformed {
            line: 3,
            problem: ConfProblem::NotUtf8,
            ..
        })
    ));
}

/// Attack 27 F7: pacman's line is a C string, ended by a NUL byte: `SigLevel = Never` NUL
/// `Required` is `Never` to pacman (and `pacman-conf`).
#[test]
fn a_nul_byte_ends_the_line_as_it_does_for_pacman() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pacman.conf");
    std::fs::write(
        &file,
        b"[options]\nArchitecture = x86_64\nSigLevel = Never\0 Required\n[testrepo]\nServer = http://127.0.0.1:8080/\n",
    )
    .unwrap();
    assert_eq!(
        pacman_conf(&file, &["SigLevel"]),
        ["PackageNever", "DatabaseNever"]
    );
    assert_eq!(PacmanConf::load(&file).unwrap().sig_level, ["Never"]);
}
