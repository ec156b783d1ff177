//! Integration tests of archgate-desktop, one binary: a fake Hyprland socket serving several
//! releases' JSON, Omarchy's registry and Quickshell IPC from snapshot files, and a real headless
//! Sway desktop (started once by `scripts/desktop-session.sh`, shared through its lock file).

mod common;
mod hyprland;
mod omarchy;
mod photo;
mod quickshell;
mod session;
mod theme;
