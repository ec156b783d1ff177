//! Keeping an Arch system healthy after "it broke after the update": mirrors and database
//! freshness, the keyring, reboot and restarts, security advisories, snapshots and AUR helpers.
//! All read-only; where something needs doing, the answer carries the exact command for the
//! person (archgate runs none of them). The network ones (mirror status, security tracker, AUR)
//! go through `[arch]`'s base URLs, timeout and cache; offline, a cached copy or the failure
//! itself is the answer, never an empty list.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use archgate_core::config::Config;
use archgate_core::exec::{CommandSpec, Permit};
use archgate_core::gate::Catalogue;
use archgate_core::policy::Tier;
use archgate_core::tool::{
    Action, CallCx, ErrorKind, Plan, Probe, Resolved, Tool, ToolError, ToolOutput, ToolSpec,
};
use archgate_pacman::http::HttpError;
use archgate_pacman::netjson::{self, NetSettings};
use archgate_pacman::{advisories, keyring, mirrors};
use futures::future::BoxFuture;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Services, domain_err};

fn net(svc: &Services, config: &Config) -> NetSettings {
    NetSettings {
        timeout: config.arch.http_timeout,
        cache_dir: Some(svc.paths.cache_dir.join("upkeep")),
        ttl: config.arch.cache_ttl,
        ..NetSettings::default()
    }
}

fn net_err(e: HttpError) -> ToolError {
    domain_err(e)
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ToolError::new(ErrorKind::Internal, e.to_string()))
}

/// The mirror status URL under `[arch] packages_url`.
pub fn mirror_status_url(config: &Config) -> String {
    format!(
        "{}{}",
        config.arch.packages_url.trim_end_matches('/'),
        mirrors::STATUS_PATH
    )
}

async fn mirrors_check(svc: &Services, cx: &CallCx) -> Result<serde_json::Value, ToolError> {
    let conf = svc.pacman(&cx.config).conf().await.map_err(domain_err)?;
    let url = mirror_status_url(&cx.config);
    let status = netjson::get_json::<mirrors::StatusDoc>(
        &net(svc, &cx.config),
        &url,
        "mirror-status.json",
        mirrors::WHAT,
    )
    .await
    .and_then(|(doc, origin)| Ok((mirrors::MirrorStatus::from_doc(doc, &url)?, origin)));
    json(mirrors::report(&conf, &url, status))
}

async fn advisories_check(svc: &Services, cx: &CallCx) -> Result<serde_json::Value, ToolError> {
    let snap = svc
        .pacman(&cx.config)
        .snapshot()
        .await
        .map_err(domain_err)?;
    let base = cx.config.arch.security_url.trim_end_matches('/').to_owned();
    let url = format!("{base}/all.json");
    let (avgs, origin) = netjson::get_json::<Vec<advisories::Avg>>(
        &net(svc, &cx.config),
        &url,
        "security-all.json",
        advisories::WHAT,
    )
    .await
    .map_err(net_err)?;
    json(advisories::report(&snap.local, &avgs, &base, &url, origin))
}

async fn aur_helpers_check(svc: &Services, cx: &CallCx) -> Result<serde_json::Value, ToolError> {
    let paths = archgate_aur::helpers::HelperPaths {
        root: PathBuf::from("/"),
        config_home: svc.paths.config_dir.parent().map(Path::to_path_buf),
    };
    let helpers = blocking(move || archgate_aur::helpers::helpers(&paths)).await?;
    let installed = svc
        .pacman(&cx.config)
        .list(&archgate_pacman::args::ListArgs {
            filter: archgate_pacman::list::ListFilter::Foreign,
        })
        .await
        .map_err(domain_err)?;
    let pairs: Vec<(String, String)> = installed
        .packages
        .into_iter()
        .map(|p| (p.name, p.version))
        .collect();
    let pending = match svc.aur(&cx.config) {
        Ok(c) => archgate_aur::helpers::pending(&c, &pairs)
            .await
            .map_err(domain_err),
        Err(e) => Err(e),
    };
    let mut v = serde_json::json!({ "helpers": helpers });
    match pending {
        Ok(p) => {
            if !p.updates.is_empty() {
                v["next"] =
                    "call aur_review_updates before the person runs the helper's command".into();
            }
            v["pending"] = serde_json::to_value(p).unwrap_or_default();
        }
        Err(e) => v["pending_error"] = serde_json::to_value(e).unwrap_or_default(),
    }
    Ok(v)
}

fn json(v: impl serde::Serialize) -> Result<serde_json::Value, ToolError> {
    serde_json::to_value(v).map_err(|e| ToolError::new(ErrorKind::Internal, e.to_string()))
}

/// Which check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    Mirrors,
    Keyring,
    Restart,
    Advisories,
    Snapshots,
    Aur,
}

impl Check {
    fn word(self) -> &'static str {
        match self {
            Check::Mirrors => "mirrors",
            Check::Keyring => "keyring",
            Check::Restart => "restart",
            Check::Advisories => "advisories",
            Check::Snapshots => "snapshots",
            Check::Aur => "aur",
        }
    }
}

/// Arguments of `upkeep`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpkeepArgs {
    // No doc comment: the enum says it all, and tools/list has a budget.
    pub check: Check,
}

/// `upkeep`: one tool, one check per call. For `keyring`, resolution finds pacman's GnuPG home
/// and, when the person can read it, the exact `gpg` command that lists its keys — what the
/// action shows and the permit is bound to; the other checks run no program but read files and
/// the configured services.
pub struct Upkeep(pub Arc<Services>);

/// What `Upkeep::execute` takes.
pub struct UpkeepRun {
    check: Check,
    /// For `keyring`: the home and the gpg command (or why the home is not readable).
    keyring: Option<(PathBuf, Result<CommandSpec, String>)>,
}

// The description names every check: an agent choosing tools reads descriptions first (issue 36).
read_spec!(static SPEC = "upkeep", "Upkeep", open_world: true, provenance: archgate_core::provenance::Provenance::Untrusted(archgate_core::provenance::Source::ArchWeb),
    "Upgrade health, one check: mirrors (sync age), keyring (expiring keys), restart (old \
     kernel, services on deleted libraries), advisories (security tracker), snapshots (before \
     upgrading), aur (paru/yay); with the person's commands.");

impl Tool for Upkeep {
    type Args = UpkeepArgs;
    type Run = UpkeepRun;

    fn spec(&self) -> &'static ToolSpec {
        &SPEC
    }

    fn plan(&self, args: &UpkeepArgs) -> Plan {
        Plan::with_tier(&SPEC, Tier::Read, &[args.check.word()])
    }

    fn resolve<'a>(
        &'a self,
        cx: &'a CallCx,
        _probe: &'a Probe,
        plan: &'a Plan,
        args: UpkeepArgs,
    ) -> BoxFuture<'a, Result<Resolved<UpkeepRun>, ToolError>> {
        Box::pin(async move {
            let mut action = Action::from_plan(plan);
            let keyring = if args.check == Check::Keyring {
                let conf = self.0.pacman(&cx.config).conf().await.map_err(domain_err)?;
                let dir = keyring::gpg_dir(&conf);
                let check = dir.clone();
                let gpg = blocking(move || keyring::readable(&check))
                    .await?
                    .map(|()| {
                        CommandSpec::new("gpg")
                            .args(keyring::gpg_args(&dir))
                            .timeout(Duration::from_secs(30))
                    });
                if let Ok(spec) = &gpg {
                    action.commands = vec![spec.clone()];
                }
                Some((dir, gpg))
            } else {
                None
            };
            Ok(Resolved {
                action,
                run: UpkeepRun {
                    check: args.check,
                    keyring,
                },
            })
        })
    }

    fn execute<'a>(
        &'a self,
        cx: &'a CallCx,
        permit: Permit,
        run: UpkeepRun,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let svc = &*self.0;
            let v = match run.check {
                Check::Mirrors => mirrors_check(svc, cx).await?,
                Check::Advisories => advisories_check(svc, cx).await?,
                Check::Aur => aur_helpers_check(svc, cx).await?,
                Check::Restart => json(
                    blocking(|| archgate_sysinfo::restart::restart_needed(Path::new("/"))).await?,
                )?,
                Check::Snapshots => json(
                    blocking(|| archgate_sysinfo::snapshots::snapshots(Path::new("/"))).await?,
                )?,
                Check::Keyring => {
                    let (dir, gpg) = run.keyring.ok_or_else(|| {
                        ToolError::new(ErrorKind::Internal, "keyring was not resolved")
                    })?;
                    keyring_check(svc, cx, &permit, &dir, gpg).await?
                }
            };
            Ok(ToolOutput::json(v))
        })
    }
}

async fn keyring_check(
    svc: &Services,
    cx: &CallCx,
    permit: &Permit,
    dir: &Path,
    gpg: Result<CommandSpec, String>,
) -> Result<serde_json::Value, ToolError> {
    let snap = svc
        .pacman(&cx.config)
        .snapshot()
        .await
        .map_err(domain_err)?;
    let package = keyring::package_state(&snap);
    let keys = match gpg {
        Err(why) => Err(why),
        Ok(spec) => match permit.run(spec).await {
            Err(e) => Err(e.to_string()),
            Ok(out) if !out.success() => {
                let err = out.stderr_lossy();
                let line = err
                    .lines()
                    .rfind(|l| !l.trim().is_empty())
                    .unwrap_or("gpg failed")
                    .chars()
                    .take(300)
                    .collect::<String>();
                Err(line)
            }
            Ok(out) => {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_secs() as i64)
                    .unwrap_or(0);
                Ok(keyring::parse_keys(&out.stdout_lossy(), now))
            }
        },
    };
    json(keyring::report(package, dir, keys))
}

pub fn register(c: &mut Catalogue, svc: &Arc<Services>) {
    c.add(Upkeep(svc.clone()));
}
