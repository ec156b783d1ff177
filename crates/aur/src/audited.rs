//! What `aur_audit` remembers of an audit (`CACHE/audited/PKGBASE.json`), for
//! `aur_review_updates` to say that a package moved on since it was audited. Written and read
//! only as archgate's own cache file (`archgate_exec::own_file`, attack 14 F8).

use serde::Serialize;

use crate::client::AurClient;

/// What `aur_audit` remembers of an audit, for `aur_review_updates` to compare with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct AuditRecord {
    pub package_base: String,
    pub commit: String,
    pub verdict: String,
    /// Unix seconds.
    pub audited_at: i64,
}

fn record_path(client: &AurClient, pkgbase: &str) -> Option<std::path::PathBuf> {
    let dir = client.config().cache_dir.as_ref()?;
    crate::client::valid_name(pkgbase).then(|| dir.join("audited").join(format!("{pkgbase}.json")))
}

pub(crate) async fn remember(client: &AurClient, rec: &AuditRecord) {
    let Some(p) = record_path(client, &rec.package_base) else {
        return;
    };
    let Ok(body) = serde_json::to_vec(rec) else {
        return;
    };
    // Only into a cache directory judged at this write, under an unpredictable temporary name
    // created `O_EXCL|O_NOFOLLOW` (attack 14 F8: `PKG.tmp-PID` was followed as a link).
    let shown = p.display().to_string();
    let written = tokio::task::spawn_blocking(move || {
        archgate_exec::own_file::write_private_file_creating(&p, &body)
    })
    .await
    .unwrap_or_else(|e| Err(std::io::Error::other(e.to_string())));
    if let Err(e) = written {
        tracing::warn!(error = %e, path = %shown, "cannot record the audited commit");
    }
}

/// The commit `aur_audit` last audited for a package base, if it was recorded.
pub async fn last_audit(client: &AurClient, pkgbase: &str) -> Option<AuditRecord> {
    let p = record_path(client, pkgbase)?;
    // Only archgate's own record: one planted where the cache lost trust is no record.
    let body = tokio::task::spawn_blocking(move || archgate_exec::own_file::read_own_file(&p))
        .await
        .ok()?
        .ok()??;
    serde_json::from_slice(&body).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn client(cache: &std::path::Path) -> AurClient {
        AurClient::new(crate::client::AurConfig {
            cache_dir: Some(cache.to_owned()),
            ..Default::default()
        })
        .unwrap()
    }

    /// Class: a file written at a path judged once, or at a predictable name, follows whatever
    /// is there at write time. A link at the old temporary name (`PKG.tmp-PID`) is not
    /// followed; after the cache lost trust and its directory was swapped, nothing is written
    /// there and a record planted there is not read as archgate's.
    #[tokio::test]
    async fn audited_records_follow_no_planted_link_and_no_swapped_directory() {
        let t = tempfile::tempdir().unwrap();
        std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let home = t.path().join("cache");
        let audited = home.join("aur/audited");
        std::fs::create_dir_all(&audited).unwrap();
        let victim = t.path().join("bashrc");
        std::fs::write(&victim, "mine\n").unwrap();
        let pid = std::process::id();
        std::os::unix::fs::symlink(&victim, audited.join(format!("foo.tmp-{pid}"))).unwrap();
        let c = client(&home.join("aur"));
        let rec = AuditRecord {
            package_base: "foo".into(),
            commit: "a".repeat(40),
            verdict: "ok".into(),
            audited_at: 1,
        };
        remember(&c, &rec).await;
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine\n");
        assert_eq!(last_audit(&c, "foo").await, Some(rec.clone()));

        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o777)).unwrap();
        std::fs::rename(home.join("aur"), home.join("moved")).unwrap();
        std::fs::create_dir_all(&audited).unwrap();
        std::fs::write(audited.join("foo.json"), serde_json::to_vec(&rec).unwrap()).unwrap();
        std::os::unix::fs::symlink(&victim, audited.join("bar.json")).unwrap();
        std::os::unix::fs::symlink(&victim, audited.join(format!("bar.tmp-{pid}"))).unwrap();
        assert_eq!(
            last_audit(&c, "foo").await,
            None,
            "a planted record is no record"
        );
        remember(
            &c,
            &AuditRecord {
                package_base: "bar".into(),
                ..rec
            },
        )
        .await;
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine\n");
        assert_eq!(std::fs::read_dir(&audited).unwrap().count(), 3);
        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
}
