//! The AUR: search, info with trust signals, the package's files, and the audit — of a package,
//! of an update's diff, and of every pending AUR update at once. Every answer reminds that AUR
//! packages are user-made and unreviewed.

use archgate_aur::args::{AuditArgs, DiffArgs, InfoArgs, PackageArgs, SearchArgs};
use archgate_aur::{AuditInput, Shadowed};
use archgate_core::gate::Catalogue;
use archgate_core::tool::CallCx;
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
        provenance: archgate_core::provenance::Provenance::Untrusted(
            archgate_core::provenance::Source::AurSearch
        ),
        args: SearchArgs,
        description: "Search the AUR, only after pkg_search found nothing official.",
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
        provenance: archgate_core::provenance::Provenance::Untrusted(
            archgate_core::provenance::Source::AurDetails
        ),
        args: InfoArgs,
        description: "AUR packages' details and trust signals: votes, popularity, maintainer, dates, out-of-date.",
    } | svc,
    cx,
    a | {
        let mut info = svc
            .aur(&cx.config)?
            .info(&a.names)
            .await
            .map_err(domain_err)?;
        let names: Vec<&str> = info.packages.iter().map(|p| p.name.as_str()).collect();
        let shadowed = shadowed(svc, cx, &names).await;
        info.note_shadowing(&shadowed);
        Ok::<_, archgate_core::tool::ToolError>(info)
    }
);

read_tool!(
    AurPkgbuild {
        name: "aur_pkgbuild",
        title: "AUR package files",
        open_world: true,
        provenance: archgate_core::provenance::Provenance::Untrusted(
            archgate_core::provenance::Source::AurFiles
        ),
        args: PackageArgs,
        description: "The PKGBUILD, .SRCINFO and install scripts of an AUR package, as text.",
    } | svc,
    cx,
    a,
    permit
        | svc
            .aur(&cx.config)?
            .package_files(permit, &a.name)
            .await
            .map_err(domain_err)
);

read_tool!(
    AurAudit {
        name: "aur_audit",
        title: "Audit an AUR package",
        open_world: true,
        provenance: archgate_core::provenance::Provenance::Untrusted(
            archgate_core::provenance::Source::AurAudit
        ),
        args: AuditArgs,
        description: "Before building an AUR package: a static audit of its files at one commit, trust \
                  signals, a verdict (ok, review, dangerous) and the commands that build that commit.",
    } | svc,
    cx,
    a,
    permit | {
        let mut audit = archgate_aur::audit_package_at(
            &svc.aur(&cx.config)?,
            permit,
            &a.name,
            a.commit.as_deref(),
        )
        .await
        .map_err(domain_err)?;
        for s in shadowed(svc, cx, &[audit.package.name.as_str()]).await {
            audit.note_shadowing(&s);
        }
        Ok::<_, archgate_core::tool::ToolError>(audit)
    }
);

/// The official packages (in the sync databases) named like these AUR packages. A machine
/// without readable sync databases knows of none, and the AUR's answer stands as it is.
async fn shadowed(svc: &Services, cx: &CallCx, names: &[&str]) -> Vec<Shadowed> {
    let snapshot = match svc.pacman(&cx.config).snapshot().await {
        Ok(s) => s,
        Err(e) => {
            tracing::debug!(error = %e, "no sync databases to compare AUR names with");
            return Vec::new();
        }
    };
    names
        .iter()
        .filter_map(|&name| {
            snapshot.repos.iter().find_map(|r| {
                r.get(name).map(|p| Shadowed {
                    name: name.to_owned(),
                    repo: r.name.clone(),
                    version: p.version.clone(),
                })
            })
        })
        .collect()
}

read_tool!(
    AurDiff {
        name: "aur_diff",
        title: "What an AUR update changes",
        open_world: true,
        provenance: archgate_core::provenance::Provenance::Untrusted(
            archgate_core::provenance::Source::AurDiff
        ),
        args: DiffArgs,
        description: "The diff between two versions of an AUR package, an audit of what it adds, and the \
                  commands that build the newer commit. Use before updating.",
    } | svc,
    cx,
    a,
    permit
        | archgate_aur::diff(
            &svc.aur(&cx.config)?,
            permit,
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
        provenance: archgate_core::provenance::Provenance::Untrusted(
            archgate_core::provenance::Source::AurUpdates
        ),
        args: NoArgs,
        description: "Every installed AUR package with a newer version: its diff and audit, most dangerous \
                  first, and how to build the commit read. Before any AUR helper updates.",
    } | svc,
    cx,
    _a,
    permit | {
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
        archgate_aur::review_updates(&svc.aur(&cx.config)?, permit, &pairs)
            .await
            .map_err(domain_err)
    }
);

read_tool!(
    PkgbuildAudit {
        name: "pkgbuild_audit",
        title: "Audit a PKGBUILD",
        open_world: false,
        provenance: archgate_core::provenance::Provenance::Untrusted(
            archgate_core::provenance::Source::PkgbuildAuditInput
        ),
        args: AuditInput,
        description: "Audit PKGBUILD text (and install scripts) with a bash parser, never run: findings with \
                  line, severity and why, and a verdict.",
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
