//! Omarchy themes and backgrounds, resolved against what is installed before anything runs.
//!
//! Themes live in `~/.config/omarchy/themes/NAME` (the person's) and `$OMARCHY_PATH/themes/NAME`
//! (Omarchy's). A name is matched as `omarchy-theme-set` matches it: lowercased, spaces to
//! dashes. The current theme is the `~/.config/omarchy/current/theme` symlink's target (or
//! `current/theme.name` in releases that write one).

use std::path::{Path, PathBuf};

use archgate_exec::Permit;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::compositor::Compositor;
use crate::desktop::Desktop;
use crate::error::{DesktopError, Result};
use crate::programs::{self, Program};

/// What to do with themes.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum ThemeAction {
    /// List installed themes.
    List,
    /// The current theme.
    Current,
    /// Switch theme.
    Set {
        /// Theme name as listed (case and spaces are forgiven).
        name: String,
    },
}

/// The answer of a theme action.
#[derive(Debug, Clone, Serialize)]
pub struct ThemeReport {
    /// Installed themes (for `list`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub themes: Vec<String>,
    /// The current theme (for `current`, and after `set`).
    pub current: Option<String>,
}

/// What to do with the background.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum BackgroundAction {
    /// The next background of the current theme.
    Next,
    /// A specific image file.
    Set {
        /// Absolute path of a PNG, JPEG or WebP image.
        path: String,
    },
}

/// Normalizes a theme name as Omarchy does: markup dropped, lowercased, spaces to dashes.
pub fn normalize_theme_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut in_tag = false;
    for c in name.trim().chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if in_tag => {}
            ' ' => out.push('-'),
            c => out.extend(c.to_lowercase()),
        }
    }
    out
}

fn list_dir(dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        // A theme is a directory (or a symlink to one).
        if path.is_dir()
            && let Some(name) = path.file_name().and_then(|n| n.to_str())
            && !name.starts_with('.')
        {
            out.push(name.to_owned());
        }
    }
}

impl Desktop {
    fn theme_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = Vec::new();
        if let Some(c) = self.env.config_home() {
            dirs.push(c.join("omarchy").join("themes"));
        }
        if let Some(o) = &self.env.omarchy_path {
            dirs.push(o.join("themes"));
        }
        dirs.extend(self.config.extra_theme_dirs.iter().cloned());
        dirs
    }

    /// The preview image of an installed theme, as Omarchy ships one in the theme's directory
    /// (`thumbnail.jpg`, or `preview.png` in older themes); the first directory holding the
    /// theme decides.
    pub fn theme_preview(&self, name: &str) -> Option<PathBuf> {
        if name.is_empty() || name.contains('/') || name.starts_with('.') {
            return None;
        }
        let dir = self
            .theme_dirs()
            .into_iter()
            .map(|d| d.join(name))
            .find(|d| d.is_dir())?;
        ["thumbnail.jpg", "preview.png"]
            .iter()
            .map(|f| dir.join(f))
            .find(|p| p.is_file())
    }

    /// Installed theme names, sorted, without duplicates.
    pub fn themes(&self) -> Vec<String> {
        let mut names = Vec::new();
        for d in self.theme_dirs() {
            list_dir(&d, &mut names);
        }
        names.sort();
        names.dedup();
        names
    }

    /// The current theme, if Omarchy records one: Omarchy 4 writes it under
    /// `~/.local/state/omarchy/current/` (`theme.name`, and `theme`, the copied theme — its
    /// `bin/omarchy-theme-set` uses `$HOME/.local/state` as written, not `$XDG_STATE_HOME`);
    /// Omarchy 3 kept it under `~/.config/omarchy/current/` (`theme.name`, or `theme` as a link).
    pub fn current_theme(&self) -> Option<String> {
        let places = [
            self.env
                .home
                .as_ref()
                .map(|h| h.join(".local/state/omarchy/current")),
            self.env
                .config_home()
                .map(|c| c.join("omarchy").join("current")),
        ];
        places.into_iter().flatten().find_map(|current| {
            if let Ok(name) = std::fs::read_to_string(current.join("theme.name")) {
                let name = name.trim();
                if !name.is_empty() {
                    return Some(name.to_owned());
                }
            }
            let target = std::fs::read_link(current.join("theme")).ok()?;
            target
                .file_name()
                .and_then(|n| n.to_str())
                .map(str::to_owned)
        })
    }

    /// Whether `name` is a theme Omarchy itself ships (`$OMARCHY_PATH/themes/NAME`) and not one
    /// of the person's (`~/.config/omarchy/themes/NAME`, installed from any repository).
    pub fn is_omarchys_own_theme(&self, name: &str) -> bool {
        if name.is_empty() || name.contains('/') || name.starts_with('.') {
            return false;
        }
        let shipped = self
            .env
            .omarchy_path
            .as_ref()
            .is_some_and(|o| o.join("themes").join(name).is_dir());
        let persons = self
            .env
            .config_home()
            .is_some_and(|c| c.join("omarchy/themes").join(name).exists());
        shipped && !persons
    }

    /// Resolves a theme name against the installed themes (`not_found` with near names).
    pub fn resolve_theme(&self, name: &str) -> Result<String> {
        let want = normalize_theme_name(name);
        let themes = self.themes();
        if want.is_empty() || want.contains('/') {
            return Err(DesktopError::invalid("name", "not a theme name"));
        }
        if let Some(t) = themes.iter().find(|t| normalize_theme_name(t) == want) {
            return Ok(t.clone());
        }
        let stem: String = want.chars().take(3).collect();
        Err(DesktopError::NotFound {
            what: "theme",
            near: themes
                .iter()
                .filter(|t| t.contains(&stem) || want.contains(t.as_str()))
                .cloned()
                .collect(),
            name: name.to_owned(),
        })
    }

    /// `theme`: list, current, or set (via `omarchy-theme-set NAME` after resolving the name).
    pub async fn theme(&self, permit: &Permit, action: &ThemeAction) -> Result<ThemeReport> {
        match action {
            ThemeAction::List => Ok(ThemeReport {
                themes: self.themes(),
                current: self.current_theme(),
            }),
            ThemeAction::Current => Ok(ThemeReport {
                themes: Vec::new(),
                current: self.current_theme(),
            }),
            ThemeAction::Set { name } => {
                let theme = self.resolve_theme(name)?;
                let spec = Program::OmarchyThemeSet
                    .spec(&self.env)
                    .arg(theme)
                    .timeout(self.config.program_timeout);
                programs::run_ok(permit, Program::OmarchyThemeSet, spec).await?;
                Ok(ThemeReport {
                    themes: Vec::new(),
                    current: self.current_theme(),
                })
            }
        }
    }

    /// Checks a background image path: absolute, an existing regular file with an image
    /// extension. Returns the canonical path.
    pub fn resolve_background(&self, path: &str) -> Result<PathBuf> {
        let p = Path::new(path);
        if !p.is_absolute() {
            return Err(DesktopError::invalid("path", "must be absolute"));
        }
        let canon = std::fs::canonicalize(p).map_err(|_| DesktopError::NotFound {
            what: "image",
            name: path.to_owned(),
            near: Vec::new(),
        })?;
        let ext = canon
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        if !matches!(ext.as_deref(), Some("png" | "jpg" | "jpeg" | "webp")) {
            return Err(DesktopError::invalid(
                "path",
                "not a PNG, JPEG or WebP image",
            ));
        }
        if !canon.is_file() {
            return Err(DesktopError::invalid("path", "not a regular file"));
        }
        Ok(canon)
    }

    /// What `background` will do, resolved: Omarchy's `theme bg next` / `theme bg set PATH`
    /// route when the registry (read through `probe`) has it, else (for `set` on Sway) the
    /// compositor command `output * bg PATH fill`.
    pub async fn background_plan(
        &self,
        probe: &Permit,
        action: &BackgroundAction,
    ) -> Result<BackgroundPlan> {
        match action {
            BackgroundAction::Next => Ok(BackgroundPlan::Route(Box::new(
                self.resolve_route(probe, "theme bg next", &[]).await?,
            ))),
            BackgroundAction::Set { path } => {
                let image = self.resolve_background(path)?;
                let image_s = image
                    .to_str()
                    .ok_or_else(|| DesktopError::invalid("path", "not UTF-8"))?
                    .to_owned();
                if let Ok(reg) = self.omarchy_registry(probe).await
                    && reg.get("theme bg set").is_some()
                {
                    let call = self
                        .resolve_route(probe, "theme bg set", &[image_s])
                        .await?;
                    return Ok(BackgroundPlan::Route(Box::new(call)));
                }
                match self.compositor()? {
                    Compositor::Sway(_) => {
                        let quoted = image_s.replace('\\', "\\\\").replace('"', "\\\"");
                        Ok(BackgroundPlan::Sway(format!(
                            "output * bg \"{quoted}\" fill"
                        )))
                    }
                    Compositor::Hyprland(_) => Err(DesktopError::NotAvailable {
                        what: "a background-set command",
                        package: "omarchy (https://omarchy.org)",
                        why: "Omarchy's registry offers no `theme bg set` route".to_owned(),
                    }),
                }
            }
        }
    }

    /// `background`: does what [`Desktop::background_plan`] resolved, and says what ran.
    pub async fn background(&self, permit: &Permit, plan: &BackgroundPlan) -> Result<String> {
        match plan {
            BackgroundPlan::Route(call) => {
                let out = self.run_route(permit, call).await?;
                if !out.success {
                    return Err(DesktopError::CommandFailed {
                        command: out.command,
                        code: out.exit_code,
                        stderr: out.stderr,
                    });
                }
                Ok(out.command)
            }
            BackgroundPlan::Sway(cmd) => match self.compositor()? {
                Compositor::Sway(s) => {
                    s.run_command(cmd).await?;
                    Ok(cmd.clone())
                }
                Compositor::Hyprland(_) => Err(DesktopError::invalid(
                    "background",
                    "the compositor changed since the call was resolved",
                )),
            },
        }
    }
}

/// What `background` resolved to.
#[derive(Debug, Clone)]
pub enum BackgroundPlan {
    /// An Omarchy route.
    Route(Box<crate::omarchy::RouteCall>),
    /// A Sway command (over its IPC socket; no program runs).
    Sway(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_normalize_like_omarchy() {
        assert_eq!(normalize_theme_name("Tokyo Night"), "tokyo-night");
        assert_eq!(
            normalize_theme_name("  <b>Catppuccin</b> Latte "),
            "catppuccin-latte"
        );
        assert_eq!(normalize_theme_name("rose-pine"), "rose-pine");
    }
}
