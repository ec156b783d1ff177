//! Themes resolved against installed theme directories, set through a fixture
//! `omarchy-theme-set` that moves the `current/theme` symlink as Omarchy's does.

use archgate_desktop::{BackgroundAction, Desktop, DesktopConfig, DesktopEnv, ThemeAction};

use crate::common::{empty_permit, permit_with, script};

struct Fixture {
    dir: tempfile::TempDir,
    desktop: Desktop,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let omarchy = dir.path().join("omarchy");
    for t in ["tokyo-night", "catppuccin-latte"] {
        std::fs::create_dir_all(omarchy.join("themes").join(t)).unwrap();
    }
    std::fs::create_dir_all(home.join(".config/omarchy/themes/my-own")).unwrap();
    std::fs::write(home.join(".config/omarchy/themes/not-a-dir"), "").unwrap();
    std::fs::create_dir_all(home.join(".config/omarchy/current")).unwrap();
    std::os::unix::fs::symlink(
        omarchy.join("themes/tokyo-night"),
        home.join(".config/omarchy/current/theme"),
    )
    .unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    script(
        &bin,
        "omarchy-theme-set",
        r#"for d in "$HOME/.config/omarchy/themes/$1" "$OMARCHY_PATH/themes/$1"; do
  if [ -d "$d" ]; then ln -sfn "$d" "$HOME/.config/omarchy/current/theme"; exit 0; fi
done
echo "no theme $1" >&2; exit 1"#,
    );
    let desktop = Desktop::new(
        DesktopEnv::from_vars([
            ("HOME", home.to_str().unwrap()),
            ("OMARCHY_PATH", omarchy.to_str().unwrap()),
        ]),
        DesktopConfig::default(),
    );
    Fixture { dir, desktop }
}

#[tokio::test]
async fn list_current_and_set() {
    let f = fixture();
    let permit = permit_with(&f.dir.path().join("bin"));
    let listed = f.desktop.theme(&permit, &ThemeAction::List).await.unwrap();
    assert_eq!(
        listed.themes,
        vec!["catppuccin-latte", "my-own", "tokyo-night"]
    );
    assert_eq!(listed.current.as_deref(), Some("tokyo-night"));
    // Matched as Omarchy matches: lowercased, spaces to dashes.
    let set = f
        .desktop
        .theme(
            &permit,
            &ThemeAction::Set {
                name: "Catppuccin Latte".into(),
            },
        )
        .await
        .expect("set");
    assert_eq!(set.current.as_deref(), Some("catppuccin-latte"));
    let current = f
        .desktop
        .theme(&permit, &ThemeAction::Current)
        .await
        .unwrap();
    assert_eq!(current.current.as_deref(), Some("catppuccin-latte"));
}

#[tokio::test]
async fn unknown_themes_are_refused_before_anything_runs() {
    let f = fixture();
    // A permit that can run nothing: resolution must refuse first.
    let permit = empty_permit(f.dir.path());
    let err = f
        .desktop
        .theme(
            &permit,
            &ThemeAction::Set {
                name: "tokyo".into(),
            },
        )
        .await
        .expect_err("no such theme");
    assert_eq!(err.kind(), "not_found");
    assert!(err.to_string().contains("tokyo-night"), "{err}");
    for bad in ["../../etc", ""] {
        let err = f.desktop.resolve_theme(bad).expect_err(bad);
        assert_eq!(err.kind(), "invalid_argument");
    }
    // A real theme with the program missing: not_available naming what to install.
    let err = f
        .desktop
        .theme(
            &permit,
            &ThemeAction::Set {
                name: "my-own".into(),
            },
        )
        .await
        .expect_err("no omarchy-theme-set");
    assert_eq!(err.kind(), "not_available");
}

#[test]
fn background_paths_are_checked() {
    let f = fixture();
    let img = f.dir.path().join("wall.png");
    std::fs::write(&img, b"\x89PNG").unwrap();
    assert_eq!(
        f.desktop.resolve_background(img.to_str().unwrap()).unwrap(),
        img
    );
    let txt = f.dir.path().join("notes.txt");
    std::fs::write(&txt, "x").unwrap();
    for (p, kind) in [
        ("relative.png", "invalid_argument"),
        (txt.to_str().unwrap(), "invalid_argument"),
        ("/nonexistent/wall.png", "not_found"),
    ] {
        assert_eq!(
            f.desktop.resolve_background(p).unwrap_err().kind(),
            kind,
            "{p}"
        );
    }
    let _ = BackgroundAction::Next;
}

/// A theme's preview image is the file Omarchy ships in the theme's directory (`thumbnail.jpg`,
/// or an older theme's `preview.png`); the person's own copy of a theme comes first.
#[test]
fn a_themes_preview_is_its_own_thumbnail() {
    let f = fixture();
    let omarchy = f.dir.path().join("omarchy/themes");
    std::fs::write(omarchy.join("tokyo-night/thumbnail.jpg"), b"jpg").unwrap();
    std::fs::write(omarchy.join("catppuccin-latte/preview.png"), b"png").unwrap();
    assert_eq!(
        f.desktop.theme_preview("tokyo-night"),
        Some(omarchy.join("tokyo-night/thumbnail.jpg"))
    );
    assert_eq!(
        f.desktop.theme_preview("catppuccin-latte"),
        Some(omarchy.join("catppuccin-latte/preview.png"))
    );
    assert_eq!(f.desktop.theme_preview("my-own"), None, "none shipped");
    for bad in ["", "../omarchy/themes/tokyo-night", ".hidden"] {
        assert_eq!(f.desktop.theme_preview(bad), None, "{bad}");
    }
}

/// Omarchy 4's `bin/omarchy-theme-set` records the theme in `~/.local/state/omarchy/current/`
/// (`theme.name`, written with `$HOME/.local/state` as is), not under `~/.config`: that record is
/// the current theme, ahead of an older Omarchy's `~/.config/omarchy/current/theme` link.
#[tokio::test]
async fn omarchy_4s_record_in_the_state_directory_is_the_current_theme() {
    let f = fixture();
    let state = f.dir.path().join("home/.local/state/omarchy/current");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("theme.name"), "catppuccin-latte\n").unwrap();
    let permit = empty_permit(f.dir.path());
    let current = f
        .desktop
        .theme(&permit, &ThemeAction::Current)
        .await
        .unwrap();
    assert_eq!(current.current.as_deref(), Some("catppuccin-latte"));
    std::fs::write(state.join("theme.name"), "").unwrap();
    let current = f
        .desktop
        .theme(&permit, &ThemeAction::Current)
        .await
        .unwrap();
    assert_eq!(
        current.current.as_deref(),
        Some("tokyo-night"),
        "an empty record falls back to the older place"
    );
}

/// Attack 6 F5: `system_status` (archgate's own words) showed the current theme's name as stored,
/// and a theme installed from any repository is named after it. The desktop's facts name the
/// theme only when Omarchy ships it; the person's own themes are the `theme` tool's (outside
/// text there).
#[tokio::test]
async fn the_facts_name_only_a_theme_omarchy_ships() {
    let f = fixture();
    assert!(f.desktop.is_omarchys_own_theme("tokyo-night"));
    assert!(!f.desktop.is_omarchys_own_theme("my-own"));
    assert!(
        !f.desktop
            .is_omarchys_own_theme("../omarchy/themes/tokyo-night")
    );
    assert_eq!(
        f.desktop.desktop_facts().await.theme.as_deref(),
        Some("tokyo-night")
    );
    let state = f.dir.path().join("home/.local/state/omarchy/current");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("theme.name"), "my-own\n").unwrap();
    assert_eq!(f.desktop.desktop_facts().await.theme, None);
}
