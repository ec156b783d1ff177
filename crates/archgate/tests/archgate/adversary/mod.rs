//! An attacker's attempts against the real binary, one topic a module: blind spots of the
//! gate, bounds on what a client may send, configuration failing closed, escapes from the sandbox
//! of a launched program, the environment programs get, how a bridge finds its daemon, failing
//! closed, the log's flush, argument injection, login, pinning of approved files, spellings of
//! denied targets, outcomes said as unknown, withdrawn approvals.

mod blind;
mod bounds;
mod config;
mod environment;
mod escapes;
mod failclosed;
mod finding;
mod flush;
mod injection;
mod login;
mod pinning;
mod spellings;
mod unknown;
mod withdraw;
