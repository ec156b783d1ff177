//! An attacker's attempts against the real binary, one topic a module: blind spots of the
//! gate, bounds on what a client may send, configuration failing closed, escapes from the sandbox
//! of a launched program, the environment programs get, how a bridge finds its daemon, failing
//! closed, the log's flush, argument injection, login, pinning of approved files, spellings of
//! denied targets, outcomes said as unknown, programs that die with their archgate, withdrawn approvals, changes that lower protection, another uid's connection flood; and issue 33's other classes:
//! yeses that are never automatic, secrets in read answers, flags through unreadable usages,
//! plugin routes, a checker out of reach read as absent, unauthenticated bytes read or held;
//! and attack 3's: routes whose values run as code, scripts judged by what they say of themselves;
//! and attack 5's: values that steer a script's destructive step, routes that forward to another
//! route, routes that install code, package helpers that elevate; and attack 10's: archgate's own
//! state trusted by its path, absence from a bounded window of the log read as absence; and attack
//! 14's: a signal derived from the withheld text; and attack 15's: a route reached through `launch`
//! (its script by name or through a desktop entry) skips the route's judgement.

mod agent_name;
mod automatic;
mod blind;
mod bounded_window;
mod bounds;
mod budget_rename;
mod called_helper;
mod claimed_name;
mod config;
mod daemon_env;
mod environment;
mod escapes;
mod failclosed;
mod finding;
mod flags;
mod flood;
mod flush;
mod forwarded;
mod helpers;
mod injection;
mod installs;
mod launch_door;
mod login;
mod lowering;
mod once_open;
mod orphans;
mod page_login;
mod picked;
mod pinning;
mod planted_helper;
mod plugins;
mod relayed;
mod routed;
mod secrets;
mod selfdescribed;
mod spellings;
mod squatter;
mod stand_in_daemon;
mod state_chain;
mod steered;
mod stopped_midway;
mod told_script;
mod transport;
mod tree_doors;
mod unauthenticated;
mod unknown;
mod unreachable;
mod unsaid_widest;
mod url_handler;
mod value_reach;
mod values;
mod withdraw;
mod withdraw_rotated;
mod withheld_signal;
