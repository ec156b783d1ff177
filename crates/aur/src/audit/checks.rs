//! What a reviewer should check for each finding: one sentence per finding id, beside the
//! finding's own `why` (why this occurrence matters). Every id the rules emit has its line here
//! (held by the unit test below, which reads the rules' source).

/// The reviewer's check for finding `id`.
pub fn for_id(id: &str) -> &'static str {
    match id {
        "AUR-AUDIT-TRUNCATED" => {
            "Read the part the audit did not reach yourself, or audit a smaller file."
        }
        "AUR-AUR-PUSH" => {
            "A package never publishes to the AUR; find what credentials it uses and where it pushes, and do not build it."
        }
        "AUR-BACKGROUND" => {
            "See what the background process runs and whether it outlives the build or install."
        }
        "AUR-CAPABILITY" => {
            "Check which program gets the capabilities, whether it is the package's own, and why it needs each one."
        }
        "AUR-DECODE" => "Decode the text yourself and read what it becomes before building.",
        "AUR-DEPENDS-PKGMGR" => {
            "Check why a package needs a language package manager at run time and what it installs with it."
        }
        "AUR-DIFF-CREDITS-REWRITTEN" => {
            "Compare the maintainer lines with the AUR page's history; a takeover often rewrites them."
        }
        "AUR-DIFF-DEPENDS-PKGMGR" => {
            "Check why this update adds a package manager dependency and what runs it."
        }
        "AUR-DIFF-INSTALL-NEW" => {
            "Read the new install script whole: it runs as root on every install or upgrade."
        }
        "AUR-DIFF-INSTALL-RENAMED" => {
            "Read the renamed install script whole and compare it with the old one."
        }
        "AUR-DIFF-MAINTAINER-CHANGED" => {
            "Check who the new maintainer is and read everything the first update from them changes."
        }
        "AUR-DIFF-URL-CHANGED" => {
            "Check the new address belongs to the same project (its site or repository links to it)."
        }
        "AUR-ENCODED-BLOB" => "Decode the string and check it is data (a key, an icon), not code.",
        "AUR-EVAL" => {
            "Find where every part of the evaluated text comes from; only text written in the file is safe."
        }
        "AUR-EXEC-BUNDLED" => {
            "Check the binary comes from the project itself with a pinned checksum, and what running it does."
        }
        "AUR-EXEC-DECODED" => {
            "Decode the hidden text and read it; honest packages do not hide what they run."
        }
        "AUR-EXEC-DOWNLOADED" => {
            "Find what is downloaded and run, whether its checksum is pinned, and with whose rights it runs."
        }
        "AUR-EXEC-OBFUSCATED" => "Work out what the disguised command really is before building.",
        "AUR-EXEC-REMOTE" => {
            "Whatever the server sends runs unchecked: do not build until the download is a pinned source."
        }
        "AUR-EXEC-STDIN" => "Find what produces the text piped into the interpreter.",
        "AUR-ACCOUNT" => {
            "Do not install: read which account, which password or group, and why a package would change it."
        }
        "AUR-ENDS-SESSION" => {
            "Do not install: nothing an install needs ends the session or stops the machine."
        }
        "AUR-FORK-BOMB" => "Do not build or install: this only exhausts the machine.",
        "AUR-GIT-PUSH" => {
            "Check where it pushes and with which credentials; building a package never needs to push."
        }
        "AUR-HOOK" => {
            "Read the hook's Exec line and its triggers: it runs as root on every matching transaction."
        }
        "AUR-INSTALL-AS-USER" => "Check which account the code runs as and what it does there.",
        "AUR-INSTALL-DEPS-NAME" => {
            "Read the script: a *-deps install script is how recent AUR hijacks installed their payload."
        }
        "AUR-INSTALL-HIDDEN" => {
            "Read the hidden install script whole; a dot-named file is easy to miss on the AUR page."
        }
        "AUR-INSTALL-MISSING" => {
            "Fetch the whole package: the install script the PKGBUILD names was not read."
        }
        "AUR-INSTALL-NETWORK" => {
            "Check what the install script fetches and runs as root; the package itself should carry it."
        }
        "AUR-INSTALL-SCRIPT" => {
            "Read the install script: it runs as root when the package is installed, upgraded or removed."
        }
        "AUR-NET-DEVTCP" => "Find the address it connects to and what it sends or receives.",
        "AUR-NETWORK-BUILD" => {
            "Check what is downloaded while building and whether it is pinned; sources belong in source=()."
        }
        "AUR-NETWORK-GLOBAL" => {
            "This runs whenever the PKGBUILD is read (even by an AUR helper): check what it contacts and sends."
        }
        "AUR-NETWORK-PACKAGE" => {
            "Check what package() downloads and why it is not a pinned source."
        }
        "AUR-OBFUSCATION" => "Read what the disguised word resolves to and where it runs.",
        "AUR-PARSE-ERROR" => "Read the part the parser could not follow yourself.",
        "AUR-GRANT" => {
            "Read the file: who it lets do what as root, and whether they are the package's own account and helper."
        }
        "AUR-ROOT-CONFIG" => {
            "Read each line: which file root's tool acts on or which program it runs, and that it is the package's own."
        }
        "AUR-PERSISTENCE" => {
            "Check what starts at boot or login afterwards, and that it is the package's own file or unit."
        }
        "AUR-PKGMGR-GLOBAL" => {
            "Check what the package manager installs while the PKGBUILD is only read."
        }
        "AUR-PKGMGR-INSTALL" => {
            "Check what the install script installs as root with a language package manager, and from where."
        }
        "AUR-PKGMGR-PACKAGE" => {
            "Check what the package manager fetches in package() and whether versions are locked."
        }
        "AUR-PKGMGR-UNDECLARED" => {
            "Check why the build uses a package manager it does not declare in makedepends."
        }
        "AUR-RESOURCE-EXHAUSTION" => {
            "Check the loop or write ends; this looks built to fill the disk or memory."
        }
        "AUR-SECRETS" => {
            "A package has no reason to touch keys, profiles or tokens: find what reads them and where they go."
        }
        "AUR-SETUID" => {
            "Check which program gets the bit, whether it is the package's own, and that it needs root rights."
        }
        "AUR-SHADOWS-OFFICIAL" => {
            "Check you meant this AUR package and not the official one of the same name."
        }
        "AUR-SOURCE-FOREIGN" => {
            "Check the source's owner is related to the project and why it is needed."
        }
        "AUR-SOURCE-FOREIGN-EXEC" => {
            "Check the repository whose code the build runs: who owns it, and whether it is pinned to a commit."
        }
        "AUR-SOURCE-INSECURE" => {
            "Check the file has a pinned checksum or a signature; plain HTTP can be altered in transit."
        }
        "AUR-SOURCE-SKIP" => {
            "Check why the checksum cannot be pinned and whether a signature is checked instead."
        }
        "AUR-SRCINFO-MISMATCH" => {
            "Read the PKGBUILD, not the AUR page: .SRCINFO does not show what the PKGBUILD does here."
        }
        "AUR-SSH" => "Check why the package uses SSH and with whose keys.",
        "AUR-SUDO" => "Building never needs root: find what the elevated command does.",
        "AUR-URL-DYNDNS" => {
            "Check who runs the host; dynamic DNS names are cheap to set up and throw away."
        }
        "AUR-URL-ONION" => "Check why a package contacts a Tor hidden service.",
        "AUR-URL-PASTE" => {
            "Paste sites change without notice: check what is fetched from it and pin it."
        }
        "AUR-URL-RAW-IP" => "Check who owns the address; projects publish under a name they own.",
        "AUR-URL-SHORTENER" => "Expand the short link and check where it really leads.",
        "AUR-URL-WEBHOOK" => "Check what is sent to the webhook; this is how stolen data leaves.",
        "AUR-VERSION-CODE" => {
            "Do not install it: pacman pastes the version unquoted into the shell line that runs the install script as root."
        }
        "AUR-WORLD-WRITABLE" => {
            "Check who may then change the file or directory, and whether root later runs what it holds."
        }
        "AUR-DELETE-SYSTEM" => {
            "Check what the deletion reaches: a whole system directory or every home is everything on the machine, not one package's files."
        }
        "AUR-WRITE-HOME" => {
            "Check what is written into a home directory and why the package cannot ship it instead."
        }
        "AUR-REWRITES-BUILDFILE" => {
            "Do not build it: compare the install script or PKGBUILD makepkg will read after the build with the one you read — the audit judged the text as committed."
        }
        "AUR-WRITE-SYSTEM" => {
            "Check what is changed on the live system; a build writes only into $srcdir and $pkgdir."
        }
        _ => "Read the code at this line and decide what it does on your system.",
    }
}

#[cfg(test)]
mod tests {
    use super::for_id;

    /// Every `"AUR-…"` id written in the audit's source has its own check.
    #[test]
    fn every_finding_id_has_a_reviewer_check() {
        let generic = for_id("");
        // The package as `cargo test` names it now (a binary reused from another clone's build
        // would otherwise read that clone's sources).
        let dir = std::env::var_os("CARGO_MANIFEST_DIR")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")))
            .join("src");
        let mut files = vec![dir];
        let mut ids = Vec::new();
        while let Some(p) = files.pop() {
            if p.is_dir() {
                for e in std::fs::read_dir(&p).expect("src readable").flatten() {
                    files.push(e.path());
                }
            } else if p.extension().is_some_and(|e| e == "rs") && !p.ends_with("checks.rs") {
                let text = std::fs::read_to_string(&p).expect("source readable");
                for part in text.split("\"AUR-").skip(1) {
                    if let Some(end) = part.find('"') {
                        ids.push(format!("AUR-{}", &part[..end]));
                    }
                }
            }
        }
        assert!(ids.len() > 40, "{ids:?}");
        for id in ids {
            assert_ne!(for_id(&id), generic, "{id} has no reviewer check");
        }
    }
}
