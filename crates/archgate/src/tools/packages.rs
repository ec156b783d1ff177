//! Official packages from pacman's own databases: search, info, files, owners, dependencies,
//! lists, pending updates, the log, and install plans (answered with the command for the person).

use archgate_core::gate::Catalogue;
use archgate_pacman::args::{
    DepsArgs, FilesArgs, InfoArgs, InstallPlanArgs, ListArgs, LogArgs, OwnerArgs, SearchArgs,
};
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;

use super::{Services, domain_err, read_tool};

/// No arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

read_tool!(
    PkgSearch {
        name: "pkg_search",
        title: "Search official packages",
        open_world: true,
        provenance: archgate_core::provenance::Provenance::Untrusted(
            archgate_core::provenance::Source::PackageDescriptions
        ),
        args: SearchArgs,
        description: "Search official packages like `pacman -Ss`, best first, installed ones marked. Use before the AUR.",
    } | svc,
    cx,
    a | svc.pacman(&cx.config).search(&a).await.map_err(domain_err)
);

read_tool!(
    PkgInfo {
        name: "pkg_info",
        title: "Package details",
        open_world: true,
        provenance: archgate_core::provenance::Provenance::Untrusted(
            archgate_core::provenance::Source::PackageDescriptions
        ),
        args: InfoArgs,
        description: "One package like `pacman -Si`/`-Qi`: versions, dependencies (optional ones with \
                  reasons), sizes, dates, install reason, required-by.",
    } | svc,
    cx,
    a | svc.pacman(&cx.config).info(&a).await.map_err(domain_err)
);

read_tool!(
    PkgFiles {
        name: "pkg_files",
        title: "Files of a package",
        open_world: false,
        provenance: archgate_core::provenance::Provenance::Untrusted(
            archgate_core::provenance::Source::PackageContents
        ),
        args: FilesArgs,
        description: "The files a package installs (files database, else the local one).",
    } | svc,
    cx,
    a | svc.pacman(&cx.config).files(&a).await.map_err(domain_err)
);

read_tool!(
    PkgOwner {
        name: "pkg_owner",
        title: "Which package owns a file",
        open_world: false,
        provenance: archgate_core::provenance::Provenance::ArchgateOnly,
        args: OwnerArgs,
        description: "The installed package that owns a path, like `pacman -Qo`.",
    } | svc,
    cx,
    a | svc.pacman(&cx.config).owner(&a).await.map_err(domain_err)
);

read_tool!(
    PkgDeps {
        name: "pkg_deps",
        title: "Dependency tree",
        open_world: false,
        provenance: archgate_core::provenance::Provenance::Untrusted(
            archgate_core::provenance::Source::PackageContents
        ),
        args: DepsArgs,
        description: "A package's dependency tree (or reverse: what needs it), resolved through provides.",
    } | svc,
    cx,
    a | svc.pacman(&cx.config).deps(&a).await.map_err(domain_err)
);

read_tool!(
    PkgList {
        name: "pkg_list",
        title: "List installed packages",
        open_world: false,
        provenance: archgate_core::provenance::Provenance::ArchgateOnly,
        args: ListArgs,
        description: "Installed packages: explicit, deps, orphans, foreign (AUR or local builds) or upgradable.",
    } | svc,
    cx,
    a | svc.pacman(&cx.config).list(&a).await.map_err(domain_err)
);

read_tool!(
    PkgUpdates {
        name: "pkg_updates",
        title: "Pending updates",
        open_world: true,
        provenance: archgate_core::provenance::Provenance::ArchgateOnly,
        args: NoArgs,
        description: "Pending official updates against fresh databases (a temporary copy), and the command \
                  for the person (or `handoff` it).",
    } | svc,
    cx,
    _a | svc.pacman(&cx.config).updates().await.map_err(domain_err)
);

read_tool!(
    PacmanLog {
        name: "pacman_log",
        title: "pacman's log",
        open_world: false,
        provenance: archgate_core::provenance::Provenance::Untrusted(
            archgate_core::provenance::Source::PacmanLog
        ),
        args: LogArgs,
        description: "Recent transactions from pacman's log. Use it when something broke after an update.",
    } | svc,
    cx,
    a | svc
        .pacman(&cx.config)
        .pacman_log(&a)
        .await
        .map_err(domain_err)
);

read_tool!(
    PkgInstallPlan {
        name: "pkg_install_plan",
        title: "Plan an install",
        open_world: false,
        provenance: archgate_core::provenance::Provenance::Untrusted(
            archgate_core::provenance::Source::PackageContents
        ),
        args: InstallPlanArgs,
        description: "What installing packages would pull in, conflict with and cost, and the command for \
                  the person (or `handoff` it): archgate never installs.",
    } | svc,
    cx,
    a | svc
        .pacman(&cx.config)
        .install_plan(&a)
        .await
        .map_err(domain_err)
);

pub fn register(c: &mut Catalogue, svc: &Arc<Services>) {
    c.add(PkgSearch(svc.clone()));
    c.add(PkgInfo(svc.clone()));
    c.add(PkgFiles(svc.clone()));
    c.add(PkgOwner(svc.clone()));
    c.add(PkgDeps(svc.clone()));
    c.add(PkgList(svc.clone()));
    c.add(PkgUpdates(svc.clone()));
    c.add(PacmanLog(svc.clone()));
    c.add(PkgInstallPlan(svc.clone()));
}
