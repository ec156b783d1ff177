//! Pictures that answer a question at a glance, as data a channel draws itself: nothing here is
//! an image from elsewhere, and nothing a page draws from it loads anything.
//!
//! A screenshot's question carries its screens as the compositor lays them out and the area the
//! capture takes; the approval page draws them as a small map with the area outlined.

use serde::Serialize;

/// At most this many screens are carried (a map of more says nothing more).
pub const MAX_SCREENS: usize = 16;

/// A rectangle in the compositor's layout, in logical pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Area {
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
}

/// One screen (a monitor, an output) and where it is in the layout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Screen {
    /// The connector's name as the compositor reports it (`HEADLESS-1`, `DP-1`).
    pub name: String,
    #[serde(flatten)]
    pub area: Area,
}

/// What a question can show as a picture.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Picture {
    /// The screens, and the area a capture takes: `None` is every screen.
    Screens {
        screens: Vec<Screen>,
        area: Option<Area>,
    },
}

impl Picture {
    /// A map of `screens` (the first [`MAX_SCREENS`]) with `area` outlined; `None` without a
    /// screen to draw.
    pub fn screens(screens: Vec<Screen>, area: Option<Area>) -> Option<Picture> {
        if screens.is_empty() {
            return None;
        }
        Some(Picture::Screens {
            screens: screens.into_iter().take(MAX_SCREENS).collect(),
            area,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(name: &str, x: i32) -> Screen {
        Screen {
            name: name.to_owned(),
            area: Area {
                x,
                y: 0,
                width: 100,
                height: 50,
            },
        }
    }

    #[test]
    fn a_map_needs_a_screen_and_carries_a_bounded_number() {
        assert_eq!(Picture::screens(Vec::new(), None), None);
        let many = (0..40).map(|i| screen("S", i * 100)).collect();
        let Some(Picture::Screens { screens, .. }) = Picture::screens(many, None) else {
            panic!("a map");
        };
        assert_eq!(screens.len(), MAX_SCREENS);
    }

    #[test]
    fn a_screen_is_its_name_and_its_place_in_the_layout() {
        let p = Picture::screens(
            vec![screen("HEADLESS-1", 0)],
            Some(Area {
                x: 10,
                y: 5,
                width: 20,
                height: 10,
            }),
        )
        .unwrap();
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            serde_json::json!({"kind": "screens",
                "screens": [{"name": "HEADLESS-1", "x": 0, "y": 0, "width": 100, "height": 50}],
                "area": {"x": 10, "y": 5, "width": 20, "height": 10}})
        );
    }
}
