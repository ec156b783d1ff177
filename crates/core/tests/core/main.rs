//! Integration tests of archgate-core (the one test binary of this crate): the gate end to end
//! inside one process, and tidy checks on the workspace's source.

mod config;
mod gate;
mod tidy;
