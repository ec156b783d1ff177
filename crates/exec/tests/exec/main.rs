//! Integration tests of archgate-exec against real programs and real process groups (the one
//! test binary of this crate).
//!
//! The programs under test are ordinary binaries in /usr/bin. Where a test needs a program that
//! misbehaves (forks helpers that ignore SIGTERM, writes a lot), it runs `/usr/bin/sh -c SCRIPT`:
//! that is an argv given to an allowed binary, which is exactly what archgate permits.

mod environment;
mod groups;
mod output;
mod permit;
mod person;
mod pinning;
mod search;
mod support;
mod tidy;
mod trust;
