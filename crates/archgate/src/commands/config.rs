//! `archgate config check|path|example`.

use std::path::PathBuf;
use std::process::ExitCode;

use super::out;
use crate::cli::ConfigAction;

pub fn run(config: Option<PathBuf>, action: ConfigAction) -> anyhow::Result<ExitCode> {
    let file = crate::app::config_path(config)?;
    match action {
        ConfigAction::Path => out(file.display()),
        ConfigAction::Example => out(archgate_core::config::EXAMPLE),
        ConfigAction::Check => {
            let loaded = archgate_core::config::load(&file);
            if !loaded.exists {
                out(format!(
                    "{}: no file; archgate runs on defaults (`archgate config example` prints one)",
                    file.display()
                ));
                return Ok(ExitCode::SUCCESS);
            }
            if loaded.problems.is_empty() {
                out(format!("{}: ok", file.display()));
                return Ok(ExitCode::SUCCESS);
            }
            for p in &loaded.problems {
                out(format!("{}:{p}", file.display()));
            }
            if !loaded.parsed {
                out(
                    "the file does not parse: archgate runs on defaults (or keeps the last good config) until it does",
                );
            }
            return Ok(ExitCode::from(1));
        }
    }
    Ok(ExitCode::SUCCESS)
}
