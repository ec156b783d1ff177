//! The keys read only when archgate starts: the listeners bound, the channels started, the log
//! opened, the directories chosen and the desktop session read at start keep what they were given
//! until the next start, whatever a reload says. One table: the diff a reload reports, the keys
//! `/health` and `archgate status` name as waiting for a restart, and the test that holds
//! `archgate config example` marking each one "(restart)".

use super::Config;

/// A key read only at start, and how to tell that it changed.
pub struct StartOnly {
    /// As written in config.toml: `section.key`.
    pub key: &'static str,
    changed: fn(&Config, &Config) -> bool,
}

macro_rules! start_only {
    ($($key:literal => $($field:ident).+;)*) => {
        &[$(StartOnly { key: $key, changed: |a, b| a.$($field).+ != b.$($field).+ },)*]
    };
}

/// Every key read only at start. Where each is read: `[paths]` by `Paths` at start; the HTTP
/// listeners' port and connection limits in `server/http.rs` and the page when they bind (the
/// bridge and control sockets read the timeouts live); the log level when logging starts; the
/// page and notification channels in `channels/mod.rs`; the audit writer in `App::open`;
/// Omarchy's place for the desktop session in `tools::session_env`.
pub static START_ONLY: &[StartOnly] = start_only! {
    "paths.state_dir" => paths.state_dir;
    "paths.runtime_dir" => paths.runtime_dir;
    "paths.cache_dir" => paths.cache_dir;
    "server.port" => server.port;
    "server.log" => server.log;
    "server.header_timeout_s" => server.header_timeout;
    "server.idle_timeout_s" => server.idle_timeout;
    "server.max_connections" => server.max_connections;
    "server.max_connections_per_peer" => server.max_connections_per_peer;
    "approval.page" => approval.page;
    "approval.notifications" => approval.notifications;
    "approval.page_port" => approval.page_port;
    "audit.max_bytes" => audit.max_bytes;
    "audit.keep" => audit.keep;
    "audit.queue" => audit.queue;
    "desktop.omarchy_path" => desktop.omarchy_path;
};

/// The start-only keys whose value differs between `started` and `now`, in table order.
pub fn restart_needed(started: &Config, now: &Config) -> Vec<&'static str> {
    START_ONLY
        .iter()
        .filter(|k| (k.changed)(started, now))
        .map(|k| k.key)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each start-only key is marked "(restart)" in `archgate config example`: on its own line,
    /// or in the comment lines right above it, or (for `[paths]`, whose keys are all comments)
    /// in its section's comments.
    #[test]
    fn every_start_only_key_is_marked_restart_in_the_example() {
        let lines: Vec<&str> = super::super::EXAMPLE.lines().collect();
        for k in START_ONLY {
            let (section, key) = k.key.split_once('.').unwrap();
            let start = lines
                .iter()
                .position(|l| l.trim() == format!("[{section}]"))
                .unwrap_or_else(|| panic!("no [{section}] in the example"));
            let end = lines[start + 1..]
                .iter()
                .position(|l| l.starts_with('['))
                .map_or(lines.len(), |i| start + 1 + i);
            let body = &lines[start + 1..end];
            let at = body
                .iter()
                .position(|l| {
                    let l = l.trim_start_matches('#').trim_start();
                    l.starts_with(&format!("{key} ")) || l.starts_with(&format!("{key}="))
                })
                .unwrap_or_else(|| panic!("{} is not in the example", k.key));
            let mut marked = body[at].contains("(restart");
            let mut i = at;
            while !marked && i > 0 && body[i - 1].trim_start().starts_with('#') {
                i -= 1;
                marked = body[i].contains("(restart");
            }
            if section == "paths" {
                marked |= body.iter().take(at).any(|l| l.contains("(restart"));
            }
            assert!(marked, "{} is read only at start: mark it (restart)", k.key);
        }
    }

    #[test]
    fn a_changed_start_only_key_is_named_and_others_are_not() {
        let a = Config::default();
        let mut b = a.clone();
        b.approval.timeout = std::time::Duration::from_secs(77);
        assert!(restart_needed(&a, &b).is_empty());
        b.approval.page = !a.approval.page;
        b.server.port = a.server.port + 1;
        b.paths.state_dir = Some("/elsewhere".into());
        assert_eq!(
            restart_needed(&a, &b),
            ["paths.state_dir", "server.port", "approval.page"]
        );
    }
}
