//! A unit's name as systemd completes it (`systemd.unit(5)`: a name without a known unit type
//! means a service).

/// The unit types systemd knows (`systemd.unit(5)`).
pub(crate) const SUFFIXES: [&str; 11] = [
    "service",
    "socket",
    "device",
    "mount",
    "automount",
    "swap",
    "target",
    "path",
    "timer",
    "slice",
    "scope",
];

/// A name as systemd completes it: without a unit type, `.service` is meant.
pub fn complete_name(name: &str) -> String {
    match name.rsplit_once('.') {
        Some((_, t)) if SUFFIXES.contains(&t) => name.to_owned(),
        _ => format!("{name}.service"),
    }
}
