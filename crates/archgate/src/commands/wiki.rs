//! `archgate wiki index [--from DIR]`: builds or updates the offline ArchWiki index, with progress.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use super::out;
use crate::cli::WikiAction;

pub async fn run(config: Option<PathBuf>, action: WikiAction) -> anyhow::Result<ExitCode> {
    let (cfg, paths) = crate::app::config_and_paths(config)?;
    match action {
        WikiAction::Index { from } => {
            let from = from.unwrap_or(cfg.wiki.docs_dir.clone());
            if !from.is_dir() {
                anyhow::bail!(
                    "{} is not a directory: install arch-wiki-docs (pacman -S arch-wiki-docs) or pass --from DIR",
                    from.display()
                );
            }
            paths.prepare(nix::unistd::getuid().as_raw())?;
            let index = paths.wiki_index_dir();
            let report = tokio::task::spawn_blocking(move || {
                let mut last = std::time::Instant::now() - std::time::Duration::from_secs(1);
                archgate_wiki::build_index(
                    &from,
                    &index,
                    &mut |p: &archgate_wiki::IndexProgress| {
                        // A progress bar on stderr, redrawn at most ten times a second.
                        if last.elapsed().as_millis() >= 100 || p.done == p.total {
                            last = std::time::Instant::now();
                            let width = 30;
                            let filled = (p.done * width)
                                .checked_div(p.total)
                                .unwrap_or(width)
                                .min(width);
                            eprint!(
                                "\r{:<10} [{}{}] {}/{}   ",
                                format!("{:?}", p.phase).to_lowercase(),
                                "#".repeat(filled),
                                " ".repeat(width - filled),
                                p.done,
                                p.total
                            );
                            let _ = std::io::stderr().flush();
                        }
                    },
                )
            })
            .await??;
            super::note("");
            out(serde_json::to_string_pretty(&report)?);
        }
    }
    Ok(ExitCode::SUCCESS)
}
