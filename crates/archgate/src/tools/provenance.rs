//! Where each tool's answer's text comes from, one line per tool: the table that holds every
//! tool's `ToolSpec::provenance` (issue 31). A tool added to the catalogue without a line here
//! fails the test, so whoever adds one decides, in the open, whether its answer carries text
//! archgate did not write (see `archgate_core::provenance` for the line drawn).

use archgate_core::provenance::{Provenance, Source};

use Provenance::{ArchgateOnly as Own, Untrusted};

/// Every tool, its provenance, and why.
const TABLE: &[(&str, Provenance)] = &[
    ("system_status", Own),                         // numbers and unit names
    ("hardware", Untrusted(Source::DeviceStrings)), // USB/PCI strings devices report
    ("network", Untrusted(Source::NetworkNames)),   // Wi-Fi names anyone broadcasts
    ("processes", Untrusted(Source::ProcessCommandLines)), // any user's command lines
    ("journal", Untrusted(Source::Journal)),        // messages any program wrote
    ("units", Untrusted(Source::Units)),            // descriptions, last log lines
    ("boots", Own),                                 // ids and times
    ("pacman_conf", Own),                           // the person's own config
    ("pkg_search", Untrusted(Source::PackageDescriptions)), // any repository's descriptions
    ("pkg_info", Untrusted(Source::PackageDescriptions)), // foreign packages: the AUR's
    ("pkg_files", Untrusted(Source::PackageContents)), // paths a packager chose: any words
    ("pkg_owner", Own),                             // a package name (makepkg's grammar)
    ("pkg_deps", Untrusted(Source::PackageContents)), // dependency strings as written
    ("pkg_list", Own),                              // names and versions
    ("pkg_updates", Own),                           // names and versions
    ("pacman_log", Untrusted(Source::PacmanLog)),   // install scripts' output
    ("pkg_install_plan", Untrusted(Source::PackageContents)), // unresolved dependency strings as written
    ("pkg_verify", Untrusted(Source::PackageContents)),       // the packages' paths
    ("pkg_pacnew", Untrusted(Source::Pacnew)),                // the diffs' text
    ("pkg_cache", Own),                                       // files and sizes
    ("aur_search", Untrusted(Source::AurSearch)),             // the AUR's descriptions
    ("aur_info", Untrusted(Source::AurDetails)),              // the AUR's metadata
    ("aur_pkgbuild", Untrusted(Source::AurFiles)),            // the package's files
    ("aur_audit", Untrusted(Source::AurAudit)),               // findings quote the files
    ("aur_diff", Untrusted(Source::AurDiff)),                 // the diff's text
    ("aur_review_updates", Untrusted(Source::AurUpdates)),    // diffs of every update
    ("pkgbuild_audit", Untrusted(Source::PkgbuildAuditInput)), // findings quote the input
    ("wiki_search", Untrusted(Source::WikiSearch)),           // snippets anyone edited
    ("wiki_page", Untrusted(Source::WikiPage)),               // a page anyone edited
    ("arch_news", Untrusted(Source::ArchNews)),               // text from the network
    ("upkeep", Untrusted(Source::ArchWeb)),                   // advisories, mirrors, keys
    ("desktop_state", Untrusted(Source::WindowTitles)),       // web pages' titles
    ("omarchy_search", Untrusted(Source::OmarchySummaries)),  // Omarchy's scripts' text
    ("omarchy_run", Untrusted(Source::OmarchyOutput)), // a route's output: any program's words
    ("shell_targets", Own),                            // method names and signatures
    ("shell_call", Untrusted(Source::ShellAnswers)),   // a shell method's answer: a plugin's words
    ("theme", Untrusted(Source::FileNames)),           // names of themes cloned from anywhere
    ("background", Untrusted(Source::FileNames)),      // file names others chose
    ("audio", Untrusted(Source::DeviceStrings)),       // Bluetooth devices' names
    ("brightness", Own),                               // numbers
    ("media", Untrusted(Source::MediaTitles)),         // what is playing: any title
    ("toggle", Untrusted(Source::OmarchyOutput)),      // an Omarchy route's output
    ("launch", Own),                                   // how the launch went
    ("screenshot", Untrusted(Source::Screen)),         // an image of anything shown
    ("screen_text", Untrusted(Source::Screen)),        // any text shown
    ("clipboard_read", Untrusted(Source::Clipboard)),  // anything copied
    ("clipboard_write", Own),                          // nothing read
    ("notify", Own),                                   // nothing read
    ("handoff", Untrusted(Source::PacmanLog)),         // the output's tail: packages' scripts
    ("osd", Own),                                      // nothing read
    ("archgate_policy", Own),                          // the person's policy
    ("archgate_activity", Own),                        // this client's own records
];

#[test]
fn every_tool_says_where_its_text_comes_from() {
    let dir = tempfile::tempdir().unwrap();
    let env = archgate_core::paths::PathEnv {
        home: Some(dir.path().to_owned()),
        uid: nix::unistd::getuid().as_raw(),
        ..Default::default()
    };
    let paths = archgate_core::paths::Paths::resolve(&env, None, &Default::default()).unwrap();
    let config = archgate_core::config::load_str("").config;
    let c = super::catalogue(&paths, &config);
    let mut listed: Vec<&str> = c.all().map(|t| t.spec().name).collect();
    listed.extend(["archgate_policy", "archgate_activity"]);
    listed.sort_unstable();
    let mut table: Vec<&str> = TABLE.iter().map(|(n, _)| *n).collect();
    table.sort_unstable();
    assert_eq!(listed, table, "one line per tool, no more, no less");
    for (name, want) in TABLE {
        let got = c.get(name).unwrap().spec().provenance;
        assert_eq!(got, *want, "{name}");
    }
}
