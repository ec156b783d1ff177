//! Downloads that are only read, never run: documents, images, licences and data tables.

use crate::audit::names::basename;

/// A file nothing executes: a document, a licence or an image (by its name).
pub(super) fn inert(local: &str) -> bool {
    let l = local.to_ascii_lowercase();
    let b = basename(&l);
    [
        ".html", ".htm", ".txt", ".md", ".rst", ".pdf", ".png", ".jpg", ".jpeg", ".svg", ".ico",
        ".gif", ".webp", ".xpm",
    ]
    .iter()
    .any(|e| b.ends_with(e))
        || data_table(b)
        || ["license", "licence", "copying", "eula"]
            .iter()
            .any(|n| b.starts_with(n))
}

/// A data table (`emoji.json`, `.csv`, `.tsv`) is read, never run — except the manifests a
/// build tool obeys (`package.json`'s scripts run under npm, `composer.json`'s under composer).
fn data_table(b: &str) -> bool {
    const MANIFESTS: &[&str] = &[
        "package.json",
        "package-lock.json",
        "composer.json",
        "deno.json",
        "bower.json",
        "manifest.json",
    ];
    [".json", ".csv", ".tsv"].iter().any(|e| b.ends_with(e)) && !MANIFESTS.contains(&b)
}
