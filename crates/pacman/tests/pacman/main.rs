//! Integration tests of archgate-pacman against the real pacman tools (one test binary).
//!
//! These tests spawn processes: real `pacman`, `vercmp` and the fixture script are the oracle
//! archgate's answers are compared with. Only tests may do that outside crates/exec.
#![allow(clippy::disallowed_methods)]

mod cache;
mod errors;
mod health_world;
mod integrity;
mod moved;
mod oracle;
mod pacnew;
mod remote;
mod support;
mod updates;
mod upkeep;
mod vercmp_table;
