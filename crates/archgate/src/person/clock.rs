//! Times as the person reads them: the local time of their machine (TZ, else /etc/localtime;
//! UTC when neither says) and the time left before a question is declined.

use jiff::Timestamp;
use jiff::tz::TimeZone;

/// `unix` seconds as the person's local date and time with its zone ("2026-12-05 22:45:30 CET");
/// `None` outside the representable range.
pub fn local(unix: i64) -> Option<String> {
    Some(zoned(unix)?.strftime("%Y-%m-%d %H:%M:%S %Z").to_string())
}

/// An RFC 3339 time stamp (the audit record's) in the person's local time; the stamp as it was
/// when it does not parse.
pub fn local_of_rfc3339(stamp: &str) -> String {
    stamp
        .parse::<Timestamp>()
        .ok()
        .and_then(|t| local(t.as_second()))
        .unwrap_or_else(|| stamp.to_owned())
}

/// `unix` seconds as the local time of day ("22:45:30").
pub fn time_of_day(unix: i64) -> Option<String> {
    Some(zoned(unix)?.strftime("%H:%M:%S").to_string())
}

fn zoned(unix: i64) -> Option<jiff::Zoned> {
    let t = Timestamp::from_second(unix).ok()?;
    // A broken TZ or zone file is read as UTC, said in the result's zone name.
    let tz = TimeZone::try_system().unwrap_or(TimeZone::UTC);
    Some(t.to_zoned(tz))
}

/// Seconds left as minutes and seconds: "1:32", "0:05", "12:00".
pub fn left(secs: u64) -> String {
    format!("{}:{:02}", secs / 60, secs % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_left_reads_as_minutes_and_seconds() {
        assert_eq!(left(92), "1:32");
        assert_eq!(left(5), "0:05");
        assert_eq!(left(720), "12:00");
    }

    #[test]
    fn a_stamp_that_does_not_parse_is_shown_as_it_was() {
        assert_eq!(local_of_rfc3339("not a time"), "not a time");
    }
}
