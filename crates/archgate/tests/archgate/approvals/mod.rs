//! Approvals end to end, with the real binary: the CLI over the control socket, the person's
//! answers and the deadline, a client that goes away, a foreign user, desktop notifications on a
//! real session bus with mako, and Omarchy's own notification daemon played in its shape. (The approval page is tested in real Chromium: tests/page/.)

mod cli;
mod cli_person;
mod first_run;
mod notifications;
mod omarchy_mako;
mod omarchy_shell;
mod task_owners;
mod task_restart;
mod task_revoked;
mod tasks;
