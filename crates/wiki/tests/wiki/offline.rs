//! The offline index over the fixture corpus: search quality, pages, sections, paging,
//! languages, and incremental rebuilds.

use std::path::Path;

use archgate_wiki::{
    IndexPhase, IndexProgress, OfflineWiki, SectionArg, Source, WikiError, WikiPageArgs,
    build_index,
};

use super::{copy_tree, fixtures};

fn build(src: &Path, index: &Path) -> (archgate_wiki::IndexReport, Vec<IndexProgress>) {
    let mut seen = Vec::new();
    let report = build_index(src, index, &mut |p| seen.push(p.clone())).unwrap();
    (report, seen)
}

/// A corpus copy and its index in one temporary directory.
fn corpus_index() -> (tempfile::TempDir, OfflineWiki) {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("html");
    copy_tree(&fixtures().join("corpus"), &src);
    build(&src, &dir.path().join("index"));
    let wiki = OfflineWiki::open(&dir.path().join("index")).unwrap();
    (dir, wiki)
}

/// Each query with the page that must be among its first three hits.
const QUERIES: &[(&str, &str)] = &[
    ("install packages with pacman", "Pacman"),
    ("systemctl enable a service unit", "Systemd"),
    ("connect to wifi with nmcli", "NetworkManager"),
    ("wayland compositor xwayland", "Wayland"),
    ("hyprland window rules", "Hyprland"),
    ("i3 compatible tiling compositor", "Sway"),
    ("pulseaudio replacement audio server", "PipeWire"),
    ("grub-mkconfig", "GRUB"),
    ("bootctl loader entries", "Systemd-boot"),
    ("initramfs hooks", "Mkinitcpio"),
    ("build a package from a PKGBUILD", "Makepkg"),
    ("yay paru", "AUR helpers"),
    ("sshd_config disable password login", "OpenSSH"),
    ("firewall allow port", "Uncomplicated Firewall"),
    ("emoji fonts fontconfig", "Fonts"),
    ("pair headphones bluetoothctl", "Bluetooth"),
    ("X server xorg.conf keyboard layout", "Xorg"),
    ("proprietary nvidia driver modeset", "NVIDIA"),
    ("laptop lid suspend battery", "Power management"),
    ("zram swap file", "Swap"),
    ("mount partitions by UUID at boot", "Fstab"),
    ("locale-gen LANG", "Locale"),
    ("add a user to a group", "Users and groups"),
    ("visudo wheel", "Sudo"),
    ("cron replacement OnCalendar", "Systemd/Timers"),
    ("journalctl logs of previous boot", "Systemd/Journal"),
    ("containers docker daemon", "Docker"),
    ("pip virtual environment", "Python"),
    ("cargo rustup toolchain", "Rust"),
    ("git config user email", "Git"),
    ("reflector mirrorlist", "Mirrors"),
    ("pacstrap chroot", "Installation guide"),
];

#[test]
fn every_query_finds_its_page_in_the_top_three() {
    let (_dir, wiki) = corpus_index();
    assert!(QUERIES.len() >= 20);
    let mut misses = Vec::new();
    for (query, want) in QUERIES {
        let r = wiki.search(query, 3).unwrap();
        assert_eq!(r.origin.source, Source::Offline);
        let titles: Vec<&str> = r.hits.iter().map(|h| h.title.as_str()).collect();
        if !titles.contains(want) {
            misses.push(format!("{query:?} → {titles:?}, wanted {want:?}"));
        }
    }
    assert!(
        misses.is_empty(),
        "queries that missed:\n{}",
        misses.join("\n")
    );
}

#[test]
fn search_hits_have_snippets_uris_and_the_exact_title_first() {
    let (_dir, wiki) = corpus_index();
    let r = wiki.search("swap", 5).unwrap();
    assert_eq!(r.hits[0].title, "Swap");
    assert_eq!(r.hits[0].uri, "archwiki://page/Swap");
    let r = wiki.search("hibernate", 5).unwrap();
    let hit = r
        .hits
        .iter()
        .find(|h| h.title == "Power management")
        .unwrap();
    assert!(
        hit.snippet.to_lowercase().contains("hibernat"),
        "snippet: {}",
        hit.snippet
    );
    assert!(wiki.search("qwertyuiopasdf", 5).unwrap().hits.is_empty());
    // Query syntax in an agent's words is not an error.
    assert!(wiki.search("title:(grub OR \"", 5).is_ok());
    // The Spanish page is not in English results, and is found in its language.
    assert!(wiki.search("paquetes", 5).unwrap().hits.is_empty());
    let es = wiki.search_lang("paquetes", 5, Some("es")).unwrap();
    assert_eq!(es.hits[0].title, "Pacman (Español)");
}

#[test]
fn page_sections_toc_and_paging() {
    let (_dir, wiki) = corpus_index();
    let args = |title: &str| WikiPageArgs {
        title: title.into(),
        ..Default::default()
    };
    let p = wiki
        .page(&WikiPageArgs {
            toc: Some(true),
            ..args("pacman")
        })
        .unwrap();
    assert_eq!(p.title, "Pacman");
    assert_eq!((p.page, p.pages, p.next_page), (1, 1, None));
    assert_eq!(p.origin.source, Source::Offline);
    let golden = std::fs::read_to_string(fixtures().join("golden/pacman.md")).unwrap();
    assert_eq!(p.markdown, golden, "offline pages use the same converter");
    let toc = p.toc.unwrap();
    let names: Vec<&str> = toc.iter().map(|e| e.title.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "(lead)",
            "Usage",
            "Installing packages",
            "Removing packages",
            "Upgrading the system",
            "Querying the database",
            "Configuration",
            "Cleaning the package cache"
        ]
    );

    let s = wiki
        .page(&WikiPageArgs {
            section: Some(SectionArg::Name("querying the database".into())),
            ..args("Pacman")
        })
        .unwrap();
    assert!(s.markdown.starts_with("## Querying the database"));
    assert!(
        s.markdown
            .contains("| `-Qo /path` | which package owns a file |")
    );
    assert!(!s.markdown.contains("## Configuration"));
    assert_eq!(s.section.unwrap().index, 5);
    let s = wiki
        .page(&WikiPageArgs {
            section: Some(SectionArg::Index(1)),
            ..args("Pacman")
        })
        .unwrap();
    assert!(
        s.markdown.contains("### Removing packages"),
        "a section includes its subsections"
    );

    match wiki.page(&WikiPageArgs {
        section: Some(SectionArg::Name("Nope".into())),
        ..args("Pacman")
    }) {
        Err(e @ WikiError::NoSuchSection { .. }) => {
            assert_eq!(e.kind(), "not_found");
            let WikiError::NoSuchSection { available, .. } = e else {
                unreachable!()
            };
            assert!(available.contains(&"6 Configuration".to_owned()));
        }
        other => panic!("expected NoSuchSection, got {other:?}"),
    }

    // Long pages come in pages that together are the whole page.
    let small = wiki_with_page_bytes(1024);
    let first = small.1.page(&args("Pacman")).unwrap();
    assert!(first.pages > 1, "pages: {}", first.pages);
    assert_eq!(first.next_page, Some(2));
    let mut all = first.markdown.clone();
    for n in 2..=first.pages {
        let p = small
            .1
            .page(&WikiPageArgs {
                page: Some(n),
                ..args("Pacman")
            })
            .unwrap();
        assert_eq!(p.page, n);
        assert_eq!(p.next_page, (n < first.pages).then_some(n + 1));
        assert!(p.markdown.len() <= 1024 + 8);
        all.push_str(&p.markdown);
    }
    assert_eq!(all.replace("```\n```\n", ""), golden);
    let past = small.1.page(&WikiPageArgs {
        page: Some(first.pages + 1),
        ..args("Pacman")
    });
    assert_eq!(past.unwrap_err().kind(), "invalid_argument");
}

fn wiki_with_page_bytes(n: usize) -> (tempfile::TempDir, OfflineWiki) {
    let (dir, _) = corpus_index();
    let wiki = OfflineWiki::open(&dir.path().join("index"))
        .unwrap()
        .with_page_bytes(n);
    (dir, wiki)
}

#[test]
fn missing_pages_languages_and_uri_titles() {
    let (_dir, wiki) = corpus_index();
    match wiki.page(&WikiPageArgs {
        title: "Pacmann".into(),
        ..Default::default()
    }) {
        Err(WikiError::NotFound { title, suggestions }) => {
            assert_eq!(title, "Pacmann");
            let _ = suggestions;
        }
        other => panic!("expected NotFound, got {other:?}"),
    }
    let es = wiki
        .page(&WikiPageArgs {
            title: "Pacman".into(),
            lang: Some("es".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(es.title, "Pacman (Español)");
    assert_eq!(es.lang, "es");
    assert!(es.markdown.contains("gestor de paquetes"));
    let sub = wiki
        .page(&WikiPageArgs {
            title: "archwiki://page/Systemd/Timers".into(),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(sub.title, "Systemd/Timers");
    assert!(sub.markdown.contains("OnCalendar=daily"));
    let spaced = wiki
        .page(&WikiPageArgs {
            title: "power_management".into(),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(spaced.title, "Power management");
}

#[test]
fn open_without_an_index_is_no_index() {
    let dir = tempfile::tempdir().unwrap();
    let err = OfflineWiki::open(dir.path()).unwrap_err();
    assert_eq!(err.kind(), "no_index");
    let empty = tempfile::tempdir().unwrap();
    let err = build_index(empty.path(), &dir.path().join("i"), &mut |_| {}).unwrap_err();
    assert_eq!(err.kind(), "no_index");
}

#[test]
fn incremental_rebuild_reindexes_changed_pages_and_drops_removed_ones() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("html");
    let index = dir.path().join("index");
    copy_tree(&fixtures().join("corpus"), &src);
    let (first, progress) = build(&src, &index);
    assert!(first.full_rebuild);
    assert_eq!(first.added, 35);
    assert_eq!(first.pages, 35);
    assert_eq!(progress.first().unwrap().phase, IndexPhase::Scanning);
    assert_eq!(progress.last().unwrap().phase, IndexPhase::Done);
    let last_indexing = progress
        .iter()
        .rfind(|p| p.phase == IndexPhase::Indexing)
        .unwrap();
    assert_eq!((last_indexing.done, last_indexing.total), (35, 35));

    // Nothing changed: nothing re-read.
    let (again, _) = build(&src, &index);
    assert_eq!(
        (again.added, again.updated, again.removed, again.unchanged),
        (0, 0, 0, 35)
    );
    assert!(!again.full_rebuild);

    // Change one page, remove one, touch one without changing it.
    let docker = src.join("en/Docker.html");
    let html = std::fs::read_to_string(&docker).unwrap();
    std::fs::write(
        &docker,
        html.replace(
            "isolated from the host",
            "isolated from the host, see also zeppelinquartz",
        ),
    )
    .unwrap();
    std::fs::remove_file(src.join("en/Git.html")).unwrap();
    let rust = src.join("en/Rust.html");
    let body = std::fs::read(&rust).unwrap();
    std::fs::remove_file(&rust).unwrap();
    std::fs::write(&rust, body).unwrap();

    let (third, _) = build(&src, &index);
    assert_eq!(
        (third.added, third.updated, third.removed, third.unchanged),
        (0, 1, 1, 33)
    );
    assert_eq!(third.pages, 34);
    let wiki = OfflineWiki::open(&index).unwrap();
    assert_eq!(wiki.page_count(), 34);
    let hits = wiki.search("zeppelinquartz", 5).unwrap().hits;
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].title, "Docker");
    let err = wiki
        .page(&WikiPageArgs {
            title: "Git".into(),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(err.kind(), "not_found");
    assert!(
        wiki.search("git config user email", 5)
            .unwrap()
            .hits
            .iter()
            .all(|h| h.title != "Git")
    );
    // Docker is in the index once, not twice.
    let docker_hits = wiki.search("docker", 10).unwrap().hits;
    assert_eq!(
        docker_hits.iter().filter(|h| h.title == "Docker").count(),
        1
    );
}
