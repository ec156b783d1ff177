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
            let mut loaded = archgate_core::config::load(&file);
            // Whoever may write it decides what it says: such a file is never applied.
            let uid = nix::unistd::getuid().as_raw();
            if let Some(why) = archgate_core::config::guard::unsafe_owner(&file, uid)
                && loaded.exists
            {
                loaded.parsed = false;
                loaded.problems.insert(
                    0,
                    archgate_core::config::Problem {
                        line: None,
                        key: None,
                        message: why,
                        fatal_to_file: true,
                    },
                );
            }
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
                    "the file is not applied: archgate runs on the last config that parsed (and refuses to start without one) until it is fixed",
                );
            }
            return Ok(ExitCode::from(1));
        }
    }
    Ok(ExitCode::SUCCESS)
}
