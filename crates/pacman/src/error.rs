//! Typed errors of the pacman crate, each with a stable snake_case `kind()` code.

use std::path::PathBuf;

/// What is wrong inside one database entry (`desc`/`files`) or archive.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EntryProblem {
    /// The entry is not UTF-8 text.
    #[error("not UTF-8 text")]
    NotUtf8,
    /// A required section (`%NAME%`, `%VERSION%`) is absent or empty.
    #[error("missing section %{0}%")]
    MissingSection(&'static str),
    /// A numeric section holds something that is not a number.
    #[error("section %{section}% is not a number: {value:?}")]
    NotANumber {
        /// Section keyword.
        section: &'static str,
        /// The offending value (truncated).
        value: String,
    },
    /// A line outside any `%SECTION%`.
    #[error("line {line} is outside any section")]
    StrayLine {
        /// 1-based line number.
        line: usize,
    },
    /// The entry is larger than the per-entry cap.
    #[error("entry larger than {limit} bytes")]
    TooLarge {
        /// The cap in bytes.
        limit: u64,
    },
}

/// What is wrong on one line of pacman.conf.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfProblem {
    /// A line longer than pacman reads as one (it would read the rest as another line).
    #[error("a line longer than {0} bytes, which pacman would read as two")]
    LineTooLong(usize),
    /// An empty `[]` section name.
    #[error("empty section name")]
    EmptySectionName,
    /// A directive before any section.
    #[error("directive outside any section")]
    OutsideSection,
    /// A directive that needs a value has none.
    #[error("directive {0} needs a value")]
    MissingValue(String),
    /// `Include` nested too deep (probably a loop).
    #[error("Include nested deeper than {0} levels")]
    IncludeTooDeep(usize),
    /// A repository section has an invalid name.
    #[error("invalid repository name {0:?}")]
    BadRepoName(String),
    /// Bytes that are not UTF-8: pacman compares names byte by byte, and two names that differ
    /// only there would read as one here.
    #[error("bytes that are not UTF-8 text")]
    NotUtf8,
    /// An `Include` glob whose files depend on the locale's character type (`?` is one byte in
    /// C, one character in UTF-8): which pacman reads is not known for certain.
    #[error(
        "the Include pattern {pattern:?} matches {file:?} in one locale and not in another (`?` is a byte in C, a character in UTF-8)"
    )]
    GlobByLocale { pattern: String, file: String },
    /// An `Include` pattern archgate does not expand as pacman's `glob(3)` does (a bracket
    /// expression, a backslash, a wildcard in a directory's name).
    #[error(
        "the Include pattern {0:?} has a bracket expression, a backslash or a wildcard in a directory, which archgate does not expand as pacman's glob(3) does"
    )]
    GlobNotJudged(String),
}

/// What is wrong inside a package's `mtree` file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MtreeProblem {
    /// The text is not UTF-8.
    #[error("not UTF-8 text")]
    NotUtf8,
    /// The first line is not `#mtree`.
    #[error("no #mtree header")]
    NoHeader,
    /// A `/command` other than `/set` and `/unset`.
    #[error("unknown command {0:?}")]
    UnknownCommand(String),
    /// An entry relative to a current directory (packages only hold full `./` paths).
    #[error("relative entry {0:?} (packages hold full ./ paths)")]
    RelativeEntry(String),
    /// A `type=` mtree(5) does not define.
    #[error("unknown type {0:?}")]
    UnknownType(String),
    /// A number keyword that is not a number.
    #[error("{keyword}= is not a number: {value:?}")]
    BadNumber {
        /// The keyword.
        keyword: &'static str,
        /// The offending value (cut).
        value: String,
    },
    /// A digest of the wrong length or not hex.
    #[error("{keyword}= is not a digest: {value:?}")]
    BadDigest {
        /// The keyword.
        keyword: &'static str,
        /// The offending value (cut).
        value: String,
    },
    /// A name with a broken `\` escape or not UTF-8 once decoded.
    #[error("bad escape in {0:?}")]
    BadEscape(String),
}

/// Every failure of this crate.
#[derive(Debug, thiserror::Error)]
pub enum PacmanError {
    /// pacman.conf (or a file it includes) cannot be read.
    #[error("cannot read pacman configuration {path}: {source}")]
    ConfUnreadable {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// pacman.conf has a line pacman would reject.
    #[error("{path}:{line}: {problem}")]
    ConfMalformed {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        problem: ConfProblem,
    },
    /// A repository's database file does not exist (pacman -Sy was never run for it).
    #[error("database of repository {repo} is missing: {path}")]
    DbMissing {
        /// Repository name (`local` for the local database).
        repo: String,
        /// Where it was expected.
        path: PathBuf,
    },
    /// A database file or directory could not be read.
    #[error("cannot read database {path}: {source}")]
    DbUnreadable {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The archive ends early or its compression stream is broken.
    #[error("database archive {path} is truncated or damaged: {source}")]
    DbTruncated {
        /// The archive.
        path: PathBuf,
        /// What the decoder said.
        #[source]
        source: std::io::Error,
    },
    /// An entry inside a database cannot be understood.
    #[error("database {path}, entry {entry}: {problem}")]
    DbCorrupt {
        /// The archive or directory.
        path: PathBuf,
        /// The entry (e.g. `zlib-1.3-1/desc`).
        entry: String,
        /// What is wrong.
        problem: EntryProblem,
    },
    /// The archive uses a compression this crate does not read (xz, bzip2, …).
    #[error("database {path} uses an unsupported compression ({format})")]
    UnsupportedCompression {
        /// The archive.
        path: PathBuf,
        /// The detected format.
        format: &'static str,
    },
    /// A file is larger than the configured cap.
    #[error("{what} is larger than {limit} bytes")]
    TooLarge {
        /// The file or URL.
        what: String,
        /// The cap.
        limit: u64,
    },
    /// A repository name that pacman.conf does not define.
    #[error("unknown repository {repo}; configured: {known:?}")]
    UnknownRepo {
        /// The name asked for.
        repo: String,
        /// The repositories pacman.conf defines, in order.
        known: Vec<String>,
    },
    /// No package by that name (near misses attached).
    #[error("no package named {name}")]
    PackageNotFound {
        /// The name asked for.
        name: String,
        /// Similar names, best first.
        near: Vec<String>,
    },
    /// An argument is not acceptable.
    #[error("invalid {argument}: {problem}")]
    InvalidArgument {
        /// Argument name.
        argument: &'static str,
        /// Why.
        problem: String,
    },
    /// A search term is not a valid regular expression.
    #[error("invalid regular expression {pattern:?}: {source}")]
    InvalidRegex {
        /// The term.
        pattern: String,
        /// The regex error.
        #[source]
        source: Box<regex::Error>,
    },
    /// The pacman log cannot be read.
    #[error("cannot read pacman log {path}: {source}")]
    LogUnreadable {
        /// The log file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The package files list needs a `.files` database that is not there.
    #[error("no file list for {name}: not installed and no .files database (pacman -Fy)")]
    FilesUnavailable {
        /// The package.
        name: String,
    },
    /// The archlinux.org packages API failed.
    #[error(transparent)]
    Remote(#[from] crate::http::HttpError),
    /// No pacman databases on this machine, and the archlinux.org packages API (the fallback)
    /// did not answer either.
    #[error("{}, and the archlinux.org packages API did not answer: {source}", no_local(conf_path, db_path.as_deref()))]
    NoDatabases {
        /// The pacman.conf looked at.
        conf_path: PathBuf,
        /// Its `DBPath`, when the file could be read.
        db_path: Option<PathBuf>,
        /// Why the remote API failed (boxed: it would make every `PacmanError` larger).
        #[source]
        source: Box<crate::http::HttpError>,
    },
    /// pacman.conf names no repository: nothing to look for updates in.
    #[error(
        "{path} configures no repository (no [core], [extra], … section): there is nothing to compare the installed packages with"
    )]
    NoRepositories {
        /// The pacman.conf read.
        path: PathBuf,
    },
    /// An installed package has no `mtree` file in the local database.
    #[error(
        "no mtree file {path}: its files cannot be checked (reinstalling the package restores it)"
    )]
    MtreeMissing {
        /// Where it was expected.
        path: PathBuf,
    },
    /// A package's `mtree` file is not a readable gzip stream.
    #[error("mtree file {path} is damaged: {source}")]
    MtreeDamaged {
        /// The file.
        path: PathBuf,
        /// What the decoder said.
        #[source]
        source: std::io::Error,
    },
    /// A package's `mtree` file has a line this crate cannot read.
    #[error("{path}:{line}: {problem}")]
    MtreeMalformed {
        /// The file.
        path: PathBuf,
        /// 1-based line number of the decompressed text (0: the whole text).
        line: usize,
        /// What is wrong.
        problem: MtreeProblem,
    },
    /// A package cache directory cannot be listed.
    #[error("cannot read package cache {path}: {source}")]
    CacheUnreadable {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Background work could not finish (the runtime is shutting down).
    #[error("background task failed: {0}")]
    Task(String),
}

/// The local fact when pacman's databases are missing.
fn no_local(conf: &std::path::Path, db: Option<&std::path::Path>) -> String {
    match db {
        Some(db) => format!(
            "this machine has no pacman sync databases (DBPath {}, from {})",
            db.display(),
            conf.display()
        ),
        None => format!("this machine has no pacman.conf ({})", conf.display()),
    }
}

impl PacmanError {
    /// What to do about this error, when there is something more precise to say than its kind.
    pub fn next_step(&self) -> Option<&'static str> {
        match self {
            PacmanError::NoDatabases { .. } => Some(
                "on Arch Linux the person downloads the sync databases with `sudo pacman -Sy`; \
                 elsewhere pkg_search and pkg_info need archlinux.org: check the network \
                 (`archgate doctor` shows what this machine has and reaches)",
            ),
            PacmanError::NoRepositories { .. } => Some(
                "tell the person: pacman.conf needs its repository sections (see `archgate doctor`); \
                 on Arch Linux the default /etc/pacman.conf has them",
            ),
            PacmanError::FilesUnavailable { .. } => Some(
                "the person can download the files databases with `sudo pacman -Fy`; \
                 pkg_files answers for installed packages meanwhile",
            ),
            _ => None,
        }
    }

    /// A stable snake_case code for agents and the audit log.
    pub fn kind(&self) -> &'static str {
        match self {
            PacmanError::ConfUnreadable { source, .. }
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                "not_found"
            }
            PacmanError::ConfUnreadable { .. } => "unreadable",
            PacmanError::ConfMalformed { .. } => "malformed",
            PacmanError::DbMissing { .. } => "db_missing",
            PacmanError::DbUnreadable { .. } => "unreadable",
            PacmanError::DbTruncated { .. } => "truncated",
            PacmanError::DbCorrupt { .. } => "malformed",
            PacmanError::UnsupportedCompression { .. } => "not_supported",
            PacmanError::TooLarge { .. } => "too_large",
            PacmanError::UnknownRepo { .. } => "unknown_repo",
            PacmanError::PackageNotFound { .. } => "not_found",
            PacmanError::InvalidArgument { .. } | PacmanError::InvalidRegex { .. } => {
                "invalid_argument"
            }
            PacmanError::LogUnreadable { .. } => "unreadable",
            PacmanError::FilesUnavailable { .. } => "not_available",
            PacmanError::Remote(e) => e.kind(),
            PacmanError::NoDatabases { source, .. } => source.kind(),
            PacmanError::NoRepositories { .. } => "not_available",
            PacmanError::MtreeMissing { .. } => "not_found",
            PacmanError::MtreeDamaged { .. } | PacmanError::MtreeMalformed { .. } => "malformed",
            PacmanError::CacheUnreadable { .. } => "unreadable",
            PacmanError::Task(_) => "internal",
        }
    }
}
