//! An attacker's attempts against the real binary, one topic a module: blind spots of the
//! gate, bounds on what a client may send, escapes from the sandbox of a launched program,
//! failing closed, the log's flush, argument injection, login, spellings of denied targets,
//! withdrawn approvals; and issue 33's classes: yeses that are never automatic, secrets in
//! read answers, flags through unreadable usages, plugin routes, a checker out of reach read as
//! absent.

mod automatic;
mod blind;
mod bounds;
mod escapes;
mod failclosed;
mod flags;
mod flush;
mod injection;
mod login;
mod plugins;
mod secrets;
mod spellings;
mod unreachable;
mod withdraw;
