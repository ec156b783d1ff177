//! `archgate audit PATH|PACKAGE [--json]`: the PKGBUILD audit for people, same engine as the tools.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::out;

pub async fn run(config: Option<PathBuf>, target: &str, json: bool) -> anyhow::Result<ExitCode> {
    let path = Path::new(target);
    let report = if path.exists() {
        let input = archgate_aur::load_path(path).map_err(|e| anyhow::anyhow!("{e}"))?;
        archgate_aur::audit(&input)
    } else {
        if target.contains('/') {
            anyhow::bail!("{target}: no such file or directory (and not an AUR package name)");
        }
        let (cfg, paths) = crate::app::config_and_paths(config)?;
        let client = archgate_aur::AurClient::new(archgate_aur::AurConfig {
            base_url: cfg.arch.aur_url.trim_end_matches('/').to_owned(),
            timeout: cfg.arch.http_timeout,
            cache_dir: Some(paths.cache_dir.join("aur")),
            cache_ttl: cfg.arch.aur_cache_ttl,
            ..Default::default()
        })
        .map_err(|e| anyhow::anyhow!("{e}"))?;
        let audited = archgate_aur::audit_package(&client, &ForPerson, target)
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        super::note(archgate_aur::AUR_NOTICE);
        audited.report
    };
    if json {
        out(serde_json::to_string_pretty(&report.to_json())?);
    } else {
        out(report.to_text());
    }
    Ok(match report.verdict {
        archgate_aur::Verdict::Ok => ExitCode::SUCCESS,
        archgate_aur::Verdict::Review => ExitCode::from(1),
        archgate_aur::Verdict::Dangerous => ExitCode::from(3),
    })
}

/// `archgate audit PACKAGE` is the person's own command: its `git` runs for the person, under
/// the executor's rules (trusted program, allowlisted environment), not under a tool's permit.
struct ForPerson;

impl archgate_aur::RunGit for ForPerson {
    fn run_git(
        &self,
        spec: archgate_exec::CommandSpec,
    ) -> std::pin::Pin<
        Box<
            dyn std::future::Future<
                    Output = Result<archgate_exec::Output, archgate_exec::ExecError>,
                > + Send
                + '_,
        >,
    > {
        Box::pin(archgate_exec::run_for_person(spec))
    }
}
