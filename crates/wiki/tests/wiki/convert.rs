//! Golden tests of the HTML → Markdown conversion: each input's Markdown is compared exactly
//! with a committed file (`UPDATE_GOLDENS=1` rewrites them, to be reviewed before committing).

use archgate_wiki::{clean_html, page_markdown};

use super::fixtures;

fn golden(name: &str, input: &std::path::Path) -> String {
    let html = std::fs::read_to_string(input).unwrap();
    let md = page_markdown(&html);
    let path = fixtures().join("golden").join(format!("{name}.md"));
    if std::env::var_os("UPDATE_GOLDENS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &md).unwrap();
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "golden {} missing ({e}); run with UPDATE_GOLDENS=1",
            path.display()
        )
    });
    assert_eq!(md, want, "Markdown of {name} differs from its golden file");
    md
}

#[test]
fn golden_pacman_page_has_fences_tables_boxes_and_links() {
    let md = golden("pacman", &fixtures().join("corpus/en/Pacman.html"));
    assert!(md.contains("```\n# pacman -Syu\n```"), "code fenced");
    assert!(md.contains("| Option | Meaning |"), "table header kept");
    assert!(
        md.contains("> **Warning:** Never remove packages"),
        "warning box"
    );
    assert!(md.contains("> **Note:** Partial upgrades"), "note box");
    assert!(
        md.contains("(archwiki://page/System_maintenance)"),
        "internal link"
    );
    assert!(
        md.contains("(archwiki://page/Systemd/Timers)"),
        "subpage link"
    );
    assert!(!md.contains("Pacman-contrib]("), "red link is plain text");
    assert!(
        !md.contains("[edit]") && !md.contains("action=edit"),
        "edit links stripped"
    );
    assert!(!md.contains("Contents"), "TOC stripped");
    assert!(!md.contains("Main page"), "navbox stripped");
    assert!(!md.contains("Retrieved from"), "footer stripped");
}

#[test]
fn golden_systemd_boot_page() {
    golden(
        "systemd-boot",
        &fixtures().join("corpus/en/Systemd-boot.html"),
    );
}

#[test]
fn golden_parse_api_fragment_with_legacy_markup() {
    let md = golden(
        "parse-fragment",
        &fixtures().join("parse/legacy-markup.html"),
    );
    assert!(
        md.contains("```\n$ ls -l /etc/fstab\n```"),
        "syntaxhighlight pre fenced"
    );
    assert!(md.contains("## Old style heading"), "mw-headline heading");
    assert!(!md.contains("thumbnail.png"), "images dropped");
    assert!(md.contains("[the tips](archwiki://page/Pacman/Tips_and_tricks#Cleaning_the_cache)"));
}

#[test]
fn clean_html_reports_title_headings_and_text() {
    let html = std::fs::read_to_string(fixtures().join("corpus/en/GRUB.html")).unwrap();
    let page = clean_html(&html);
    assert_eq!(page.title.as_deref(), Some("GRUB"));
    assert_eq!(
        page.headings,
        vec![
            "Installation",
            "UEFI systems",
            "BIOS systems",
            "Generating the configuration",
            "Dual booting"
        ]
    );
    assert!(page.text.contains("grub-mkconfig -o /boot/grub/grub.cfg"));
    assert!(!page.text.contains("Contents"));
    assert!(!page.text.contains("document.documentElement"));
}
