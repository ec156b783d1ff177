//! An attacker's attempts against the real binary, one topic a module: blind spots of the
//! gate, bounds on what a client may send, escapes from the sandbox of a launched program,
//! the environment programs get, how a bridge finds its daemon, failing closed, the log's
//! flush, argument injection, login, spellings of denied targets, withdrawn approvals.

mod blind;
mod bounds;
mod environment;
mod escapes;
mod failclosed;
mod finding;
mod flush;
mod injection;
mod login;
mod spellings;
mod withdraw;
