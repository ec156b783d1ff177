//! Loading a package from disk for `archgate audit PATH`: a directory with a PKGBUILD, or a
//! PKGBUILD file (its directory is searched for .SRCINFO, `*.install` and `*.hook`).

use std::path::{Path, PathBuf};

use crate::audit::{AuditInput, MAX_INPUT_BYTES, ScriptFile};

/// Why a local package could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    #[error("no PKGBUILD at {path}")]
    NotFound { path: PathBuf },
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is larger than {limit} bytes")]
    TooLarge { path: PathBuf, limit: usize },
}

impl LocalError {
    /// Stable snake_case code.
    pub fn kind(&self) -> &'static str {
        match self {
            LocalError::NotFound { .. } => "not_found",
            LocalError::Io { .. } => "io_error",
            LocalError::TooLarge { .. } => "too_large",
        }
    }
}

fn read_capped(path: &Path) -> Result<String, LocalError> {
    let meta = std::fs::metadata(path).map_err(|source| LocalError::Io {
        path: path.to_owned(),
        source,
    })?;
    if meta.len() > (4 * MAX_INPUT_BYTES) as u64 {
        return Err(LocalError::TooLarge {
            path: path.to_owned(),
            limit: 4 * MAX_INPUT_BYTES,
        });
    }
    let bytes = std::fs::read(path).map_err(|source| LocalError::Io {
        path: path.to_owned(),
        source,
    })?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Loads a PKGBUILD (a file, or a directory containing one) with its .SRCINFO, install
/// scripts (`*.install`, dot-named ones too) and ALPM hooks (`*.hook`) from the same directory.
pub fn load_path(path: &Path) -> Result<AuditInput, LocalError> {
    let (dir, pkgbuild) = if path.is_dir() {
        (path.to_owned(), path.join("PKGBUILD"))
    } else {
        (
            path.parent()
                .map_or_else(|| PathBuf::from("."), Path::to_owned),
            path.to_owned(),
        )
    };
    if !pkgbuild.is_file() {
        return Err(LocalError::NotFound { path: pkgbuild });
    }
    let mut input = AuditInput::new(read_capped(&pkgbuild)?);
    let srcinfo = dir.join(".SRCINFO");
    if srcinfo.is_file() {
        input.srcinfo = Some(read_capped(&srcinfo)?);
    }
    let entries = std::fs::read_dir(&dir).map_err(|source| LocalError::Io {
        path: dir.clone(),
        source,
    })?;
    let mut names: Vec<(String, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            (n.ends_with(".install") || n.ends_with(".hook")).then(|| (n, e.path()))
        })
        .collect();
    names.sort();
    for (name, p) in names.into_iter().take(64) {
        input.install_scripts.push(ScriptFile {
            name,
            content: read_capped(&p)?,
        });
    }
    Ok(input)
}
