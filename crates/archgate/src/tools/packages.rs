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
    PacmanConf {
        name: "pacman_conf",
        title: "pacman configuration",
        open_world: false,
        args: NoArgs,
        description: "The machine's pacman.conf with its Include files: repositories in order, servers, \
                  architecture, DBPath, RootDir, IgnorePkg/IgnoreGroup and options.",
    } | svc,
    cx,
    _a | svc
        .pacman(&cx.config)
        .conf()
        .await
        .map(|c| (*c).clone())
        .map_err(domain_err)
);

read_tool!(
    PkgSearch {
        name: "pkg_search",
        title: "Search official packages",
        open_world: true,
        args: SearchArgs,
        description: "Search the official repositories like `pacman -Ss` (name, description, provides, \
                  groups), best matches first, with an installed marker. Use it before suggesting a \
                  package, and before the AUR.",
    } | svc,
    cx,
    a | svc.pacman(&cx.config).search(&a).await.map_err(domain_err)
);

read_tool!(
    PkgInfo {
        name: "pkg_info",
        title: "Package details",
        open_world: true,
        args: InfoArgs,
        description: "Everything about one package, from the sync and local databases: version, \
                  dependencies, optional dependencies with reasons, provides, conflicts, sizes, \
                  packager, dates; for installed packages also install reason, required-by and \
                  optional-for.",
    } | svc,
    cx,
    a | svc.pacman(&cx.config).info(&a).await.map_err(domain_err)
);

read_tool!(
    PkgFiles {
        name: "pkg_files",
        title: "Files of a package",
        open_world: false,
        args: FilesArgs,
        description: "The files a package installs (from the files database when present, else the local \
                  database).",
    } | svc,
    cx,
    a | svc.pacman(&cx.config).files(&a).await.map_err(domain_err)
);

read_tool!(
    PkgOwner {
        name: "pkg_owner",
        title: "Which package owns a file",
        open_world: false,
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
        args: DepsArgs,
        description: "A package's dependency tree (or, with reverse, what needs it), resolved through \
                  provides so you see which package satisfies each dependency.",
    } | svc,
    cx,
    a | svc.pacman(&cx.config).deps(&a).await.map_err(domain_err)
);

read_tool!(
    PkgList {
        name: "pkg_list",
        title: "List installed packages",
        open_world: false,
        args: ListArgs,
        description: "Installed packages by kind: explicit, deps, orphans (unneeded dependencies), \
                  foreign (not in any repository: AUR or local builds), upgradable.",
    } | svc,
    cx,
    a | svc.pacman(&cx.config).list(&a).await.map_err(domain_err)
);

read_tool!(
    PkgUpdates {
        name: "pkg_updates",
        title: "Pending updates",
        open_world: true,
        args: NoArgs,
        description: "Pending official updates, checked against freshly downloaded databases in a \
                  temporary copy (the real ones are never touched), and the command the person runs \
                  to apply them. Says so when a refresh was impossible.",
    } | svc,
    cx,
    _a | svc.pacman(&cx.config).updates().await.map_err(domain_err)
);

read_tool!(
    PacmanLog {
        name: "pacman_log",
        title: "pacman's log",
        open_world: false,
        args: LogArgs,
        description: "Recent transactions from pacman's log: what was installed, upgraded or removed and \
                  when, optionally for one package, one action or since a time. Use it when something \
                  broke after an update.",
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
        args: InstallPlanArgs,
        description: "What installing packages would do — targets, dependencies pulled in, conflicts, \
                  download and installed size — and the exact command for the person to run. \
                  archgate never installs or elevates privilege itself.",
    } | svc,
    cx,
    a | svc
        .pacman(&cx.config)
        .install_plan(&a)
        .await
        .map_err(domain_err)
);

pub fn register(c: &mut Catalogue, svc: &Arc<Services>) {
    c.add(PacmanConf(svc.clone()));
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
