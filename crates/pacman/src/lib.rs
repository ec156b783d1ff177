//! Arch Linux packages for archgate: pacman.conf, the sync and local databases, the pacman log,
//! pending updates and install plans — read in pure Rust, without libalpm, root or processes.
//!
//! Entry point: [`PacmanDb`], a cheap-to-clone handle whose async methods back the tools
//! `pacman_conf`, `pkg_search`, `pkg_info`, `pkg_files`, `pkg_owner`, `pkg_deps`, `pkg_list`,
//! `pkg_updates`, `pacman_log`, `pkg_install_plan`, `pkg_verify`, `pkg_pacnew` and `pkg_cache`. The pure functions in each module work
//! on a [`Snapshot`] and are what tests and benchmarks call directly.
//!
//! Nothing here elevates privilege: installing is answered with a plan and the exact
//! `sudo pacman …` command for the person to run.

#![forbid(unsafe_code)]

pub mod advisories;
pub mod ala;
pub mod archive;
pub mod args;
pub mod cache;
pub mod conf;
pub mod db;
pub mod deps;
pub mod desc;
mod entry_file;
pub mod error;
pub mod files;
pub mod handle;
pub mod http;
pub mod info;
pub mod integrity;
pub mod keyring;
pub mod list;
pub mod log;
pub mod mirrors;
pub mod mtree;
pub mod netjson;
pub mod pacnew;
pub mod pkg_file;
pub mod plan;
pub mod remote;
pub mod search;
pub mod updates;
pub mod version;

pub use conf::{PacmanConf, RepoConf};
pub use db::{LocalDb, Snapshot, SyncRepo};
pub use error::{ConfProblem, EntryProblem, MtreeProblem, PacmanError};
pub use handle::{PacmanDb, PacmanSettings};
pub use version::vercmp;
