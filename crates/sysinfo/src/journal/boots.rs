//! The boots the journal holds (`journalctl --list-boots -o json`): what the `boots` tool counts
//! errors in, and what a journal query's boot out of range is told.

use archgate_exec::Permit;
use serde::Serialize;
use serde_json::Value;

use crate::diag::{self, DiagError, DiagOptions};

/// One boot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Boot {
    /// 0 the current (last) boot, -1 the one before, …; what the journal tool's `boot` takes.
    pub index: i64,
    pub id: String,
    /// Its first and last entries (RFC 3339, UTC).
    pub first: String,
    pub last: String,
    /// Entries of priority `err` or worse in it.
    pub errors: usize,
    /// `errors` stopped counting at `boots::ERRORS_COUNTED`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub errors_capped: bool,
}

/// Every boot the journal holds, oldest first, without counts.
pub(crate) async fn list_boots(
    permit: &Permit,
    opts: &DiagOptions,
    user: bool,
) -> Result<Vec<Boot>, DiagError> {
    let mut args = super::source_args(&opts.journal, user);
    args.extend(["--list-boots".into(), "--output=json".into()]);
    let (command, out) = diag::run(permit, "journalctl", &args, opts).await?;
    if !out.success() {
        return Err(diag::failure(command, &out));
    }
    let text = out.stdout_lossy();
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let rows: Vec<Value> = serde_json::from_str(text.trim()).map_err(|e| DiagError::Malformed {
        command: command.clone(),
        what: e.to_string(),
    })?;
    Ok(rows
        .iter()
        .filter_map(|r| {
            let t = |k: &str| r.get(k).and_then(Value::as_u64).and_then(diag::iso_time);
            Some(Boot {
                index: r.get("index")?.as_i64()?,
                id: r.get("boot_id")?.as_str()?.to_owned(),
                first: t("first_entry")?,
                last: t("last_entry")?,
                errors: 0,
                errors_capped: false,
            })
        })
        .collect())
}
