//! Loading a package from disk for `archgate audit PATH`: a directory with a PKGBUILD, or a
//! PKGBUILD file (its directory is searched for .SRCINFO and the files the PKGBUILD names).

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

/// Loads a PKGBUILD (a file, or a directory containing one) with its .SRCINFO and every file
/// of the same directory the PKGBUILD names (`install=` under any name, local sources, helpers
/// it runs), plus `*.install` (dot-named ones too) and `*.hook` files.
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
    let available: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let wanted = crate::audit::files_to_read(&input.pkgbuild, &available);
    for name in wanted.into_iter().take(64) {
        let p = dir.join(&name);
        let scriptish = name.ends_with(".install") || name.ends_with(".hook");
        let content = match read_capped(&p) {
            Ok(c) => c,
            // Other files are read when they can be; install scripts and hooks must be.
            Err(e) if scriptish => return Err(e),
            Err(_) => continue,
        };
        if content.contains('\0') && !scriptish {
            continue;
        }
        input.install_scripts.push(ScriptFile { name, content });
    }
    Ok(input)
}
