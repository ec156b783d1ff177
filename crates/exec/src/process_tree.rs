//! A process's ancestry, read from the kernel's process tree (`/proc/PID/stat`): whether a
//! process descends from another. Used where who is asking matters and the environment cannot
//! say (a program can drop any variable): the control socket's `cli_from_program` channel, and
//! a hand-off claimed only from the terminal archgate opened. A process that re-parents itself
//! away (a double fork) is not seen: this distinguishes, it does not prove.

/// Parents followed before giving up (a chain is rarely more than a dozen deep).
const MAX_DEPTH: usize = 64;

/// The parent of `pid`, from `/proc/PID/stat` (the field after the command's closing paren).
pub fn parent(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Whether `pid` is a descendant of `ancestor` (not `ancestor` itself).
pub fn descends_from(pid: u32, ancestor: u32) -> bool {
    let mut cur = pid;
    for _ in 0..MAX_DEPTH {
        match parent(cur) {
            Some(p) if p == ancestor => return cur != ancestor,
            Some(0) | None => return false,
            Some(p) if p == cur => return false,
            Some(p) => cur = p,
        }
    }
    false
}
