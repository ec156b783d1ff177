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
    Action, CallCx, Plan, Probe, Resolved, Tool, ToolError, ToolOutput, ToolSpec,
};
use archgate_pacman::netjson::{self, NetError, NetSettings};
use archgate_pacman::{advisories, keyring, mirrors};
use futures::future::BoxFuture;

use super::packages::NoArgs;
use super::{Services, domain_err, next_for, read_tool};

fn net(svc: &Services, config: &Config) -> NetSettings {
    NetSettings {
        timeout: config.arch.http_timeout,
        cache_dir: Some(svc.paths.cache_dir.join("upkeep")),
        ttl: config.arch.cache_ttl,
        ..NetSettings::default()
    }
}

fn net_err(e: NetError) -> ToolError {
    let kind = e.kind();
    ToolError::new(kind, e.to_string()).next(next_for(kind))
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ToolError::new("internal", e.to_string()))
}

/// The mirror status URL under `[arch] packages_url`.
pub fn mirror_status_url(config: &Config) -> String {
    format!(
        "{}{}",
        config.arch.packages_url.trim_end_matches('/'),
        mirrors::STATUS_PATH
    )
}

read_tool!(
    Mirrors {
        name: "mirrors",
        title: "Mirrors and database freshness",
        open_world: true,
        args: NoArgs,
        description: "Servers in use (pacman.conf, mirrorlist), each mirror's last sync from archlinux.org's status, and sync databases older than the mirror.",
    } | svc,
    cx,
    _a | {
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
        Ok::<_, ToolError>(mirrors::report(&conf, &url, status))
    }
);

read_tool!(
    Advisories {
        name: "advisories",
        title: "Security advisories",
        open_world: true,
        args: NoArgs,
        description: "Installed packages with open Arch security tracker advisories (like arch-audit): severity, CVEs, fixed version.",
    } | svc,
    cx,
    _a | {
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
        Ok::<_, ToolError>(advisories::report(&snap.local, &avgs, &base, &url, origin))
    }
);

read_tool!(
    RestartNeeded {
        name: "restart_needed",
        title: "Reboot or restarts needed",
        open_world: false,
        args: NoArgs,
        description: "After an upgrade: running kernel vs /usr/lib/modules, and processes still using deleted libraries, by systemd unit.",
    } | _svc,
    _cx,
    _a | blocking(|| archgate_sysinfo::restart::restart_needed(Path::new("/"))).await
);

read_tool!(
    Snapshots {
        name: "snapshots",
        title: "Snapshots",
        open_world: false,
        args: NoArgs,
        description: "snapper, Timeshift or btrfs: recent snapshots and the command that takes one before upgrading.",
    } | _svc,
    _cx,
    _a | blocking(|| archgate_sysinfo::snapshots::snapshots(Path::new("/"))).await
);

read_tool!(
    AurHelpers {
        name: "aur_helpers",
        title: "AUR helpers",
        open_world: true,
        args: NoArgs,
        description: "paru/yay: installed, their config, and the AUR updates they would build (review with aur_review_updates first).",
    } | svc,
    cx,
    _a | {
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
                let next = if p.updates.is_empty() {
                    None
                } else {
                    Some("call aur_review_updates before the person runs the helper's command")
                };
                v["pending"] = serde_json::to_value(p).unwrap_or_default();
                if let Some(n) = next {
                    v["next"] = n.into();
                }
            }
            Err(e) => v["pending_error"] = serde_json::to_value(e).unwrap_or_default(),
        }
        Ok::<_, ToolError>(v)
    }
);

/// `keyring`: resolution finds pacman's GnuPG home and, when the person can read it, the exact
/// `gpg` command that lists its keys — what the action shows and the permit is bound to.
pub struct Keyring(pub Arc<Services>);

/// What `Keyring::execute` takes: the home and the gpg command (absent: not readable, why).
pub struct KeyringRun {
    dir: PathBuf,
    gpg: Result<CommandSpec, String>,
}

static KEYRING_SPEC: ToolSpec = ToolSpec {
    name: "keyring",
    title: "pacman keyring",
    description: "Installed archlinux-keyring vs the repositories', and keys in pacman's keyring expired or expiring within 30 days.",
    tier: Tier::Read,
    read_only: true,
    destructive: false,
    idempotent: true,
    open_world: false,
    private_args: &[],
};

impl Tool for Keyring {
    type Args = NoArgs;
    type Run = KeyringRun;

    fn spec(&self) -> &'static ToolSpec {
        &KEYRING_SPEC
    }

    fn resolve<'a>(
        &'a self,
        cx: &'a CallCx,
        _probe: &'a Probe,
        plan: &'a Plan,
        _args: NoArgs,
    ) -> BoxFuture<'a, Result<Resolved<KeyringRun>, ToolError>> {
        Box::pin(async move {
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
            let mut action = Action::from_plan(plan);
            if let Ok(spec) = &gpg {
                action.commands = vec![spec.clone()];
            }
            Ok(Resolved {
                action,
                run: KeyringRun { dir, gpg },
            })
        })
    }

    fn execute<'a>(
        &'a self,
        cx: &'a CallCx,
        permit: Permit,
        run: KeyringRun,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let snap = self
                .0
                .pacman(&cx.config)
                .snapshot()
                .await
                .map_err(domain_err)?;
            let package = keyring::package_state(&snap);
            let keys = match run.gpg {
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
            Ok(ToolOutput::json(keyring::report(package, &run.dir, keys)))
        })
    }
}

pub fn register(c: &mut Catalogue, svc: &Arc<Services>) {
    c.add(Mirrors(svc.clone()));
    c.add(Keyring(svc.clone()));
    c.add(RestartNeeded(svc.clone()));
    c.add(Advisories(svc.clone()));
    c.add(Snapshots(svc.clone()));
    c.add(AurHelpers(svc.clone()));
}
