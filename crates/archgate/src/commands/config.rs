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
            // As the daemon reads it: a file another user could write is never applied
            // (`guard::read_guarded`, inside `load`), and an entry that cannot be applied keeps
            // the whole file from applying.
            let loaded = archgate_core::config::load(&file);
            let env = archgate_core::paths::PathEnv::from_process();
            let kept_at = crate::app::last_good_path(&env, &file).ok().map(|p| {
                archgate_core::config::guard::read_last_good(&p, env.uid)
                    .map(|k| k.map(|k| (p, k.1)))
            });
            // A copy that is there but cannot be used stops the daemon from starting.
            if let Some(Err(why)) = &kept_at
                && (!loaded.exists || !loaded.applies)
            {
                for p in &loaded.problems {
                    out(format!("{}:{p}", file.display()));
                }
                out(format!(
                    "{}: {}, and the last good copy cannot be used ({why}): archgate refuses to start until one is fixed",
                    file.display(),
                    if loaded.exists {
                        "not applied"
                    } else {
                        "missing"
                    }
                ));
                return Ok(ExitCode::from(1));
            }
            let kept = kept_at.and_then(Result::ok).flatten();
            if !loaded.exists {
                if let Some((p, at)) = kept {
                    out(format!(
                        "{}: missing, but a config applied here before: archgate runs on the last good copy from {} ({}); for defaults, leave an empty file",
                        file.display(),
                        archgate_core::config::guard::utc(at),
                        p.display()
                    ));
                    return Ok(ExitCode::from(1));
                }
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
            if !loaded.applies {
                out(match kept {
                    Some((_, at)) => format!(
                        "the file is not applied: archgate runs on the last good copy from {} until it is fixed",
                        archgate_core::config::guard::utc(at)
                    ),
                    None => "the file is not applied, and there is no last good copy: archgate refuses to start until it is fixed".to_owned(),
                });
            }
            return Ok(ExitCode::from(1));
        }
    }
    Ok(ExitCode::SUCCESS)
}
