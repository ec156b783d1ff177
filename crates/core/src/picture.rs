//! Pictures that answer a question at a glance, as data a channel draws itself: nothing here is
//! an image from elsewhere, and nothing a page draws from it loads anything.
//!
//! A screenshot's question carries its screens as the compositor lays them out and the area the
//! capture takes; the approval page draws them as a small map with the area outlined. A new
//! background's question carries the image file, a theme's its preview image (Omarchy's
//! `thumbnail.jpg` or `preview.png` in the theme's directory): the page shows it from its own
//! origin, only when the file is a PNG, JPEG or WebP of at most [`MAX_IMAGE_BYTES`]. A file the
//! call writes with contents archgate knows (the hand-off's `.pacnew` adopt) carries the change
//! as a diff (`crate::diff`).

use serde::Serialize;

/// The largest image file a page shows.
pub const MAX_IMAGE_BYTES: u64 = 8 * 1024 * 1024;

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
    /// An image file on this machine, shown as it is now: `what` says what it is ("the new
    /// background", "the theme's preview").
    Image {
        what: &'static str,
        #[serde(skip)]
        path: std::path::PathBuf,
    },
    /// A file the call writes with contents archgate knows: the change, bounded and escaped
    /// (`crate::diff`).
    Diff(crate::diff::FileDiff),
}

/// The MIME type of an image the page may show, from its first bytes (never its name): PNG,
/// JPEG or WebP, else `None`.
pub fn image_type(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if head.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("image/jpeg")
    } else if head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// The bytes of an image file and their MIME type, for a page: refused when it is not a regular
/// file, is larger than [`MAX_IMAGE_BYTES`], or is not a PNG, JPEG or WebP by its bytes.
pub fn read_image(path: &std::path::Path) -> Option<(Vec<u8>, &'static str)> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    // Non-blocking: a path swapped for a named pipe is opened at once and refused below as not
    // a regular file, instead of holding a thread until someone writes (attack 4).
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let meta = f.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_IMAGE_BYTES {
        return None;
    }
    let mut data = Vec::new();
    f.take(MAX_IMAGE_BYTES + 1).read_to_end(&mut data).ok()?;
    if data.len() as u64 > MAX_IMAGE_BYTES {
        return None;
    }
    let mime = image_type(&data)?;
    Some((data, mime))
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
mod fifo_tests {
    /// A named pipe where an image was is refused at once, not waited on.
    #[test]
    fn a_named_pipe_is_refused_without_waiting() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("bg.png");
        nix::unistd::mkfifo(&p, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        assert!(super::read_image(&p).is_none());
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
    fn an_image_is_known_by_its_bytes_not_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let png = dir.path().join("a.txt");
        std::fs::write(&png, b"\x89PNG\r\n\x1a\n rest").unwrap();
        assert_eq!(read_image(&png).unwrap().1, "image/png");
        let fake = dir.path().join("b.png");
        std::fs::write(&fake, b"<svg onload=alert(1)>").unwrap();
        assert_eq!(read_image(&fake), None);
        let webp = [b"RIFF".as_slice(), &[0; 4], b"WEBPVP8 "].concat();
        assert_eq!(image_type(&webp), Some("image/webp"));
        assert_eq!(image_type(&[0xff, 0xd8, 0xff, 0xe0]), Some("image/jpeg"));
        assert_eq!(read_image(dir.path()), None, "a directory");
        let big = dir.path().join("big.png");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_IMAGE_BYTES + 1).unwrap();
        assert_eq!(read_image(&big), None, "too large");
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
