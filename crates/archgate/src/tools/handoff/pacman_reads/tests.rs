//! What pacman reads as root, judged: the downloader, hooks and their programs, every directory, the GnuPG files, the options archgate does not know (`pacman_reads.rs`).

use super::*;
use std::os::unix::fs::PermissionsExt;

/// A directory of someone else than root: the test's own (a normal user), or handed to nobody
/// when the test runs as root — the person's, in the shape of `~/bin` with their download helper.
fn persons_dir() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let helper = d.path().join("fetch.sh");
    std::fs::write(&helper, "#!/bin/sh\nexec /usr/bin/curl -o \"$2\" \"$1\"\n").unwrap();
    std::fs::set_permissions(&helper, std::fs::Permissions::from_mode(0o755)).unwrap();
    if nix::unistd::geteuid().is_root() {
        let nobody = Some(nix::unistd::Uid::from_raw(65534));
        for p in [d.path().to_owned(), helper] {
            nix::unistd::chown(&p, nobody, None).unwrap();
        }
    }
    d
}

fn conf(text: &str) -> PacmanConf {
    PacmanConf::parse(Path::new(DEFAULT_CONF), text).unwrap()
}

/// Attack 13 F3: `XferCommand` naming the person's download helper — the agent added a line to
/// it and the handed-off `pacman -Syu` ran it as root.
#[test]
fn a_downloader_the_person_can_write_is_never_run_as_root() {
    let d = persons_dir();
    let helper = d.path().join("fetch.sh").display().to_string();
    for cmd in [
        format!("{helper} %u %o"),
        // Through root's shell: the path in its words counts as much as the program.
        format!("/usr/bin/sh -c '{helper} %u %o'"),
        format!("/usr/bin/env {helper} %u %o"),
    ] {
        let e = judge_command(&cmd, None).unwrap_err();
        assert!(e.contains(d.path().to_str().unwrap()), "{cmd}: {e}");
        let c = conf(&format!("[options]\nXferCommand = {cmd}\n"));
        let e = judge_settings(&c, 4242).unwrap_err();
        assert!(e.contains("XferCommand"), "{e}");
    }
    // A program found by name (pacman does not search for it), or quoting that does not close.
    for cmd in ["curl -o %o %u", "/usr/bin/env 'x %u"] {
        assert!(judge_command(cmd, None).is_err(), "{cmd}");
    }
    // Root's program with pacman's placeholders and a device is fine.
    judge_command("/usr/bin/env true %u %o 2>/dev/null", None).unwrap();
}

/// alpm-hooks(5): a hook's `Exec` runs as root, chrooted into `RootDir`; a hook file the person
/// owns, or one whose program is theirs, refuses.
#[test]
fn a_hooks_program_or_file_the_person_can_write_refuses() {
    let hook = "[Trigger]\nOperation = Upgrade\nType = Package\nTarget = *\n\n[Action]\n\
                Description = Telling the person\nWhen = PostTransaction\nExec = /usr/bin/sh -c 'X'\n";
    assert_eq!(hook_execs(hook), ["/usr/bin/sh -c 'X'"]);
    let d = persons_dir();
    let helper = d.path().join("fetch.sh").display().to_string();
    // Under RootDir `/` the program is the path itself; under another root, inside it.
    let exec = hook_execs(&hook.replace('X', &helper)).remove(0);
    assert!(
        judge_command(&exec, Some(Path::new("/"))).is_err(),
        "{exec}"
    );
    judge_command("/usr/bin/true", Some(Path::new("/"))).unwrap();
    let e = judge_command("/fetch.sh", Some(d.path())).unwrap_err();
    assert!(e.contains(d.path().to_str().unwrap()), "{e}");
    // A hook file in a hook directory: the person's file refuses, a link to /dev/null masks.
    std::fs::write(d.path().join("zz.hook"), hook.replace('X', "/usr/bin/true")).unwrap();
    std::os::unix::fs::symlink("/dev/null", d.path().join("masked.hook")).unwrap();
    let c = conf(&format!("[options]\nHookDir = {}\n", d.path().display()));
    let e = hooks(&c).unwrap_err();
    assert!(e.contains("zz.hook"), "{e}");
    std::fs::remove_file(d.path().join("zz.hook")).unwrap();
    assert!(!hooks(&c).unwrap().iter().any(|h| h.starts_with(d.path())));
}

/// pacman's defaults are directories it reads too, and libalpm's own hooks live under RootDir.
#[test]
fn every_directory_pacman_reads_is_judged_its_defaults_included() {
    let c = conf(
        "[options]\nRootDir = /mnt\nSigLevel = Required\n\n[custom]\nCacheServer = file:///srv/cache/$repo\nServer = https://a.invalid/$repo\n",
    );
    let mut dirs = directories(&c);
    dirs.extend(servers::on_this_machine(&c).unwrap());
    for want in [
        "/mnt",
        "/mnt/var/lib/pacman/",
        "/mnt/var/log",
        "/var/cache/pacman/pkg/",
        "/mnt/usr/share/libalpm/hooks/",
        DEFAULT_HOOK_DIR,
        DEFAULT_GPG_DIR,
        "/srv/cache/custom",
    ] {
        assert!(dirs.contains(&PathBuf::from(want)), "{want}: {dirs:?}");
    }
    // In the shape of aurutils' local repository (its documented `[custom]` section).
    let c = conf("[custom]\nSigLevel = Optional TrustAll\nServer = file:///home/alice/repo\n");
    assert_eq!(
        servers::on_this_machine(&c).unwrap(),
        [PathBuf::from("/home/alice/repo")]
    );
}

/// Attack 22 F4: a repository on a loopback address whose packages need no signature refuses
/// (the agent can hold its port); one whose packages must be signed, by its own `SigLevel`, the
/// global one or pacman's default, is accepted.
/// Attack 31 F6: a one-slash `file:` server with a later `://` in its path, as `Server` or
/// `CacheServer`, is no remote host: the configuration refuses (the directory is not placed).
#[test]
fn a_file_server_with_a_later_scheme_in_its_path_is_no_remote_host() {
    for line in [
        "Server = file:/home/alice/repo/http://192.0.2.7",
        "CacheServer = FILE:/home/alice/repo/ftp://192.0.2.9\nServer = https://192.0.2.8/$repo",
    ] {
        let c = conf(&format!(
            "[options]\nSigLevel = Required DatabaseOptional\n\n[custom]\n{line}\n"
        ));
        let why = servers::on_this_machine(&c).unwrap_err();
        assert!(why.contains("scheme://"), "{line}: {why}");
    }
}

#[test]
fn a_loopback_repository_whose_packages_need_no_signature_refuses() {
    let c = conf("[custom]\nSigLevel = Optional TrustAll\nServer = http://127.0.0.1:8080/$repo\n");
    let why = judge_settings(&c, 4242).unwrap_err();
    assert!(why.contains("a server on this machine"), "{why}");
    let c = conf(
        "[options]\nSigLevel = Never\n\n[custom]\nCacheServer = http://localhost:9129/repo/custom\n",
    );
    assert!(servers::on_this_machine(&c).is_err());
    // pacman's own default is Optional (attack 28 F2): no SigLevel anywhere signs nothing.
    let c = conf("[custom]\nServer = http://127.0.0.1:9129/repo/$repo\n");
    assert!(servers::on_this_machine(&c).is_err());
    for signed in [
        "[options]\nSigLevel = Required DatabaseOptional\n\n[custom]\nServer = http://127.0.0.1:9129/repo/$repo\n",
        "[options]\nSigLevel = Required DatabaseOptional\n\n[custom]\nServer = http://localhost/$repo\n",
        "[custom]\nSigLevel = PackageRequired\nServer = http://[::1]/$repo\n",
    ] {
        assert_eq!(
            servers::on_this_machine(&conf(signed)),
            Ok(vec![]),
            "{signed}"
        );
    }
}

/// An option or repository directive archgate does not know fails closed; pacman 7's
/// `DownloadUser` never names the person.
#[test]
fn an_option_archgate_does_not_judge_refuses_and_downloads_are_never_the_persons() {
    let c = conf("[options]\nColor\nParallelDownloads = 5\nILoveCandy\n");
    judge_settings(&c, 4242).unwrap();
    let c = conf("[options]\nPostDownloadCommand = /home/alice/x\n");
    let e = judge_settings(&c, 4242).unwrap_err();
    assert!(e.contains("PostDownloadCommand"), "{e}");
    let c = conf("[core]\nServer = https://a.invalid/$repo\nMirrorScript = /home/alice/x\n");
    let e = judge_settings(&c, 4242).unwrap_err();
    assert!(e.contains("MirrorScript"), "{e}");
    // root is the one user every system has: judged as the person, then as another.
    let c = conf("[options]\nDownloadUser = root\n");
    let e = judge_settings(&c, 0).unwrap_err();
    assert!(e.contains("DownloadUser"), "{e}");
    assert!(download_user(&["root".into()], 4242).is_ok());
}

#[test]
fn words_split_as_pacman_splits_them() {
    assert_eq!(
        split_words(r#"/bin/sh -c 'a "b" c' "d e" f\ g"#).unwrap(),
        ["/bin/sh", "-c", "a \"b\" c", "d e", "f g"]
    );
    assert!(split_words("'open").is_none());
}

/// A file of the person's in pacman's GnuPG directory (its `gpg-agent.conf` names the pinentry
/// gpg runs) is the agent's to write.
#[test]
fn a_file_of_the_persons_in_pacmans_gnupg_directory_refuses() {
    let d = persons_dir();
    let c = conf(&format!("[options]\nGPGDir = {}\n", d.path().display()));
    let e = gnupg_files(&c).unwrap_err();
    assert!(e.contains("fetch.sh"), "{e}");
    let empty = tempfile::tempdir().unwrap();
    let c = conf(&format!("[options]\nGPGDir = {}\n", empty.path().display()));
    gnupg_files(&c).unwrap();
}

/// Attack 22 F5: root's `HookDir = DIR # see also ~/hooks/` is four hook directories to pacman,
/// the person's and relative words among them; a relative directory pacman would take from the
/// directory it starts in. Both refuse.
#[test]
fn words_after_an_inline_hash_and_relative_directories_refuse() {
    let c = conf("[options]\nHookDir = /etc/pacman.d/hooks/ # see also /home/alice/hooks/\n");
    let why = judge_settings(&c, 4242).unwrap_err();
    assert!(
        why.contains("relative path") || why.contains("/home/alice"),
        "{why}"
    );
    let c = conf("[options]\nCacheDir = pkg/\n");
    let why = judge_settings(&c, 4242).unwrap_err();
    assert!(why.contains("`pkg/` is a relative path"), "{why}");
}

/// Attack 22 F2: the paths judged are the ones written, so a word that makes the shell look
/// elsewhere refuses — a change of directory, a glob or expansion in a path, a relative path in
/// `XferCommand`; a hook's relative path is judged from `/`, where pacman runs it. Real
/// commands in the shape of Arch's own (pacman.conf(5)'s curl and wget lines; texinfo's hook's
/// `while read` loop) still pass.
#[test]
fn a_word_that_makes_roots_shell_look_elsewhere_refuses() {
    for cmd in [
        "/usr/bin/sh -c 'cd /srv && /usr/bin/sh alice/x.sh %o %u'",
        "/usr/bin/sh -c '/usr/bin/sh /home/alic?/x.sh %o %u'",
        "/usr/bin/sh -c '/usr/bin/sh $HOME/x.sh %o %u'",
        "/usr/bin/sh -c '/usr/bin/sh ~/x.sh %o %u'",
        "/usr/bin/sh -c '/usr/bin/sh ./x.sh %o %u'",
        "/usr/bin/sh -c 'pushd /srv; /usr/bin/sh x/y.sh'",
    ] {
        assert!(judge_command(cmd, None).is_err(), "{cmd}");
    }
    let d = persons_dir();
    let rel = d.path().strip_prefix("/").unwrap().join("x.sh");
    let hook = format!("/usr/bin/sh -c '/usr/bin/sh {}'", rel.display());
    let e = judge_command(&hook, Some(Path::new("/"))).unwrap_err();
    assert!(e.contains(d.path().to_str().unwrap()), "{e}");
    judge_command("/usr/bin/curl -L -C - -f -o %o %u", None).unwrap();
    judge_command("/usr/bin/wget --passive-ftp -c -O %o %u", None).unwrap();
    judge_command(
        "/usr/bin/sh -c 'while read -r f; do install-info \"$f\" /usr/share/info/dir 2> /dev/null; done'",
        Some(Path::new("/")),
    )
    .unwrap();
}

/// Attack 26 F5: `[testrepo]` twice, the first `SigLevel = Never` with a loopback server, the
/// second `Required`; pacman syncs from the first alone and reports the second as an error.
#[test]
fn a_repository_named_twice_refuses() {
    let c = conf(
        "[options]\nArchitecture = x86_64\n[testrepo]\nSigLevel = Never\nServer = http://127.0.0.1:8080/\n\
         [testrepo]\nSigLevel = Required\nServer = https://example.org/\n",
    );
    let e = judge_settings(&c, 4242).unwrap_err();
    assert!(
        e.contains("[testrepo] is named by more than one section"),
        "{e}"
    );
    let once = conf(
        "[options]\nArchitecture = x86_64\nSigLevel = Required\n[testrepo]\nServer = https://example.org/\n",
    );
    judge_settings(&once, 4242).unwrap();
}

/// Attack 26 F6: a name that `/etc/hosts` does not hold can still lead home through the
/// system's resolver (Arch's `myhostname` answers the machine's own name and
/// `localhost.localdomain`). For a repository whose packages need no signature a name is asked
/// of the resolver: one that leads here, or one it cannot answer, refuses; a signed repository
/// is never looked up.
#[test]
fn an_unsigned_repository_by_a_name_is_placed_by_the_resolver() {
    let unsigned = |host: &str| {
        conf(&format!(
            "[custom]\nSigLevel = Optional TrustAll\nServer = http://{host}:8080/$repo\n"
        ))
    };
    let here = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let here = here.trim();
    let resolves = |h: &str| std::net::ToSocketAddrs::to_socket_addrs(&(h, 80)).is_ok();
    for host in ["localhost.localdomain", here, "archgate-26-f6.invalid"] {
        let e = servers::on_this_machine(&unsigned(host)).unwrap_err();
        if resolves(host) {
            assert!(
                e.contains("to this machine") || e.contains("on this machine"),
                "{host}: {e}"
            );
        } else {
            assert!(e.contains("could not tell where"), "{host}: {e}");
        }
    }
    let signed = conf(
        "[options]\nSigLevel = Required\n[custom]\nServer = http://archgate-26-f6.invalid:8080/$repo\n",
    );
    assert_eq!(servers::on_this_machine(&signed), Ok(vec![]));
}

/// Attack 29 F8 (A): a local repository in a directory root's alone whose files are the
/// person's (what `sudo mv ~/repo/* /srv/repo/` leaves): the agent rewrote `testrepo.db` and the
/// package in place and root installed its package. Every file there is judged now, not only the
/// directory.
#[test]
fn a_local_repositorys_files_are_judged_not_only_its_directory() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    for f in ["testrepo.db.tar.gz", "pathtest-2-1-any.pkg.tar.zst"] {
        std::fs::write(repo.join(f), "x").unwrap();
    }
    std::os::unix::fs::symlink("testrepo.db.tar.gz", repo.join("testrepo.db")).unwrap();
    let root = nix::unistd::geteuid().is_root();
    let c = conf(&format!(
        "[options]\n[testrepo]\nSigLevel = Optional TrustAll\nServer = file://{}\n",
        repo.display()
    ));
    if root {
        // Root's directory, root's files: nothing of the person's in it.
        repository_files(&repo).unwrap();
        // The package file handed to the person (nobody here).
        nix::unistd::chown(
            &repo.join("pathtest-2-1-any.pkg.tar.zst"),
            Some(nix::unistd::Uid::from_raw(65534)),
            None,
        )
        .unwrap();
    }
    // Not root's alone (as a normal user, none of them is).
    let e = repository_files(&repo).unwrap_err();
    assert!(e.contains("pathtest-2-1-any.pkg.tar.zst") || !root, "{e}");
    let e = judge_settings(&c, 4242).unwrap_err();
    assert!(e.contains("pathtest-2-1-any.pkg.tar.zst") || !root, "{e}");
    if root {
        // The database through its link: the link's target is what pacman reads.
        std::fs::remove_file(repo.join("pathtest-2-1-any.pkg.tar.zst")).unwrap();
        nix::unistd::chown(
            &repo.join("testrepo.db.tar.gz"),
            Some(nix::unistd::Uid::from_raw(65534)),
            None,
        )
        .unwrap();
        let e = repository_files(&repo).unwrap_err();
        assert!(e.contains("testrepo.db"), "{e}");
        // A file only the group may write is not root's alone either.
        nix::unistd::chown(
            &repo.join("testrepo.db.tar.gz"),
            Some(nix::unistd::Uid::from_raw(0)),
            None,
        )
        .unwrap();
        // Root's again, but the same file another uid owned: a descriptor it opened then can
        // still write it (attack 33 F2, F3: `once_open.rs`) — refused until it is replaced.
        let e = repository_files(&repo).unwrap_err();
        assert!(e.contains("was writable by another user"), "{e}");
        let db = repo.join("testrepo.db.tar.gz");
        let copy = repo.join("testrepo.db.tar.gz.new");
        std::fs::copy(&db, &copy).unwrap();
        std::fs::rename(&copy, &db).unwrap();
        repository_files(&repo).unwrap();
        std::fs::set_permissions(
            repo.join("testrepo.db.tar.gz"),
            std::fs::Permissions::from_mode(0o664),
        )
        .unwrap();
        assert!(repository_files(&repo).is_err());
    }
}

/// Attack 29 F8's class, its other member in pacman's configuration: the database directory's
/// contents. An installed package's `install` file in the local database is run by pacman as
/// root when the package is removed, and the sync databases decide what `-S` installs: a
/// person's file or directory there refuses.
#[test]
fn pacmans_database_is_judged_to_its_files() {
    let d = tempfile::tempdir().unwrap();
    let pkg = d.path().join("local/foo-1-1");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::create_dir_all(d.path().join("sync")).unwrap();
    std::fs::write(d.path().join("local/ALPM_DB_VERSION"), "9\n").unwrap();
    std::fs::write(d.path().join("sync/core.db"), "x").unwrap();
    std::fs::write(pkg.join("desc"), "%NAME%\nfoo\n").unwrap();
    std::fs::write(pkg.join("install"), "pre_remove() { :; }\n").unwrap();
    if nix::unistd::geteuid().is_root() {
        database_tree(d.path(), 0, 4242).unwrap();
        let c = conf(&format!("[options]\nDBPath = {}/\n", d.path().display()));
        judge_settings(&c, 4242).unwrap();
        let nobody = Some(nix::unistd::Uid::from_raw(65534));
        // The install file the person's (the agent's to rewrite before a removal).
        nix::unistd::chown(&pkg.join("install"), nobody, None).unwrap();
        let e = judge_settings(&c, 4242).unwrap_err();
        assert!(
            e.contains("foo-1-1/install") && e.contains("owned by uid 65534"),
            "{e}"
        );
        nix::unistd::chown(
            &pkg.join("install"),
            Some(nix::unistd::Uid::from_raw(0)),
            None,
        )
        .unwrap();
        // A package's directory the person's: they could put any file there.
        nix::unistd::chown(&pkg, nobody, None).unwrap();
        assert!(
            database_tree(d.path(), 0, 4242)
                .unwrap_err()
                .contains("foo-1-1")
        );
        nix::unistd::chown(&pkg, Some(nix::unistd::Uid::from_raw(0)), None).unwrap();
        // A sync database writable by others.
        std::fs::set_permissions(
            d.path().join("sync/core.db"),
            std::fs::Permissions::from_mode(0o666),
        )
        .unwrap();
        assert!(
            database_tree(d.path(), 0, 4242)
                .unwrap_err()
                .contains("core.db")
        );
        std::fs::set_permissions(
            d.path().join("sync/core.db"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        // pacman 7's download directory of its DownloadUser is not the person's: passed over.
        let dl = d.path().join("sync/download-AbC123");
        std::fs::create_dir(&dl).unwrap();
        nix::unistd::chown(&dl, nobody, None).unwrap();
        database_tree(d.path(), 0, 4242).unwrap();
    } else {
        // Every file here is the test's own, not root's.
        assert!(database_tree(d.path(), 0, 4242).is_err());
    }
}
