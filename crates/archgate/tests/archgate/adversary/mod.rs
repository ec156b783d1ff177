//! An attacker's attempts against the real binary, one topic a module: blind spots of the
//! gate, bounds on what a client may send, escapes from the sandbox of a launched program,
//! failing closed, the log's flush, argument injection, login, spellings of denied targets,
//! unauthenticated bytes read or held, withdrawn approvals.

mod blind;
mod bounds;
mod escapes;
mod failclosed;
mod flush;
mod injection;
mod login;
mod spellings;
mod unauthenticated;
mod withdraw;
