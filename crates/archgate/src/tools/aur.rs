//! The AUR: search, info with trust signals, the package's files, and the audit — of a package,
//! of an update's diff, and of every pending AUR update at once. Every answer reminds that AUR
//! packages are user-made and unreviewed.

use archgate_aur::AuditInput;
use archgate_aur::args::{DiffArgs, InfoArgs, PackageArgs, SearchArgs};
use archgate_core::gate::Catalogue;
use archgate_pacman::args::ListArgs;
use archgate_pacman::list::ListFilter;
use std::sync::Arc;

use super::packages::NoArgs;
use super::{Services, domain_err, read_tool};

read_tool!(
    AurSearch {
        name: "aur_search",
        title: "Search the AUR",
        open_world: true,
        args: SearchArgs,
        description: "Search the AUR (by name and description, or by maintainer, depends, provides, \
                  keywords …). Only after pkg_search found nothing official.",
    } | svc,
    cx,
    a | svc
        .aur(&cx.config)?
        .search(&a.query, a.by.unwrap_or_default())
        .await
        .map_err(domain_err)
);

read_tool!(
    AurInfo {
        name: "aur_info",
        title: "AUR package details",
        open_world: true,
        args: InfoArgs,
        description: "Details and trust signals of AUR packages: votes, popularity, maintainer or \
                  orphaned, co-maintainers, first submitted, last modified, out-of-date.",
    } | svc,
    cx,
    a | svc
        .aur(&cx.config)?
        .info(&a.names)
        .await
        .map_err(domain_err)
);

read_tool!(
    AurPkgbuild {
        name: "aur_pkgbuild",
        title: "AUR package files",
        open_world: true,
        args: PackageArgs,
        description: "The PKGBUILD, .SRCINFO and install scripts of an AUR package, as text.",
    } | svc,
    cx,
    a | svc
        .aur(&cx.config)?
        .package_files(&a.name)
        .await
        .map_err(domain_err)
);

read_tool!(
    AurAudit {
        name: "aur_audit",
        title: "Audit an AUR package",
        open_world: true,
        args: PackageArgs,
        description: "Before anyone builds an AUR package: fetch it, audit its PKGBUILD and install \
                  scripts statically (never executed), and add trust and history signals. Ends in a \
                  verdict: ok, review or dangerous, with the reasons.",
    } | svc,
    cx,
    a | archgate_aur::audit_package(&svc.aur(&cx.config)?, &a.name)
        .await
        .map_err(domain_err)
);

read_tool!(
    AurDiff {
        name: "aur_diff",
        title: "What an AUR update changes",
        open_world: true,
        args: DiffArgs,
        description: "The change between two versions of an AUR package, and an audit of what the change \
                  adds (new install scripts, new sources, rewritten maintainer lines). Use it before \
                  updating.",
    } | svc,
    cx,
    a | archgate_aur::diff(
        &svc.aur(&cx.config)?,
        &a.name,
        a.from.as_deref(),
        a.to.as_deref()
    )
    .await
    .map_err(domain_err)
);

read_tool!(
    AurReviewUpdates {
        name: "aur_review_updates",
        title: "Review pending AUR updates",
        open_world: true,
        args: NoArgs,
        description: "For every installed foreign package with a newer AUR version: the diff since the \
                  installed version and its audit, most dangerous first — so the person decides \
                  before their AUR helper updates anything.",
    } | svc,
    cx,
    _a | {
        let installed = svc
            .pacman(&cx.config)
            .list(&ListArgs {
                filter: ListFilter::Foreign,
            })
            .await
            .map_err(domain_err)?;
        let pairs: Vec<(String, String)> = installed
            .packages
            .into_iter()
            .map(|p| (p.name, p.version))
            .collect();
        archgate_aur::review_updates(&svc.aur(&cx.config)?, &pairs)
            .await
            .map_err(domain_err)
    }
);

read_tool!(
    PkgbuildAudit {
        name: "pkgbuild_audit",
        title: "Audit a PKGBUILD",
        open_world: false,
        args: AuditInput,
        description: "Audit PKGBUILD text (and install scripts, .SRCINFO) statically: a real bash parser, \
                  never executed; findings with line, column, severity and why, and a verdict.",
    } | _svc,
    _cx,
    a | Ok::<_, archgate_core::tool::ToolError>(archgate_aur::audit(&a))
);

pub fn register(c: &mut Catalogue, svc: &Arc<Services>) {
    c.add(AurSearch(svc.clone()));
    c.add(AurInfo(svc.clone()));
    c.add(AurPkgbuild(svc.clone()));
    c.add(AurAudit(svc.clone()));
    c.add(AurDiff(svc.clone()));
    c.add(AurReviewUpdates(svc.clone()));
    c.add(PkgbuildAudit(svc.clone()));
}
