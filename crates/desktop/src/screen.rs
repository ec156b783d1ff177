//! Screenshots (grim, scaled to a maximum size, then encoded to fit the output limit — see
//! [`image::encode_for_agent`]) and screen text (grim + preprocessing + tesseract). Images pass
//! through a private temporary directory (in `XDG_RUNTIME_DIR` when set), deleted at once: they
//! are larger than the executor's output cap, and never reach a log.

use std::path::Path;

use archgate_exec::Permit;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::compositor::{DesktopState, Rect};
use crate::desktop::Desktop;
use crate::error::{DesktopError, Result};
use crate::image;
use crate::programs::{self, Program};

/// What to capture. Its schema (below) is one flat object rather than schemars' four tagged
/// variants: the same inputs, in half the tokens of the tool list; serde still refuses a field
/// that does not belong to the kind.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum CaptureTarget {
    /// Every output, as laid out.
    Output,
    /// One monitor.
    Monitor {
        /// Monitor (output) name, e.g. `DP-1`, as `desktop_state` lists it.
        name: String,
    },
    /// One window.
    Window {
        /// Window id, as `desktop_state` lists it.
        id: String,
    },
    /// A rectangle in layout coordinates (logical pixels).
    Region {
        /// Left edge.
        x: i32,
        /// Top edge.
        y: i32,
        /// Width, at least 1.
        width: u32,
        /// Height, at least 1.
        height: u32,
    },
}

impl JsonSchema for CaptureTarget {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "CaptureTarget".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let int = |d: &str| serde_json::json!({"type": "integer", "description": d});
        schemars::json_schema!({
            "type": "object",
            "properties": {
                "kind": {"type": "string", "enum": ["output", "monitor", "window", "region"]},
                "name": {"type": "string", "description": "Monitor name, as desktop_state lists it."},
                "id": {"type": "string", "description": "Window id, as desktop_state lists it."},
                "x": int("Left edge."),
                "y": int("Top edge."),
                "width": int("At least 1."),
                "height": int("At least 1.")
            },
            "required": ["kind"]
        })
    }
}

/// A screenshot. `data` is image content for the agent; it is never serialized into records.
#[derive(Debug, Clone, Serialize)]
pub struct Screenshot {
    /// The encoded image.
    #[serde(skip)]
    pub data: Vec<u8>,
    /// Its MIME type (`image/jpeg`).
    pub mime: &'static str,
    /// Its size in bytes.
    pub bytes: usize,
    /// The JPEG quality it was encoded with.
    pub quality: u8,
    /// Image width in pixels.
    pub width: u32,
    /// Image height in pixels.
    pub height: u32,
    /// The real size of what was captured, in screen pixels (logical size × the output's scale),
    /// when the compositor said.
    pub real_width: Option<u32>,
    /// See `real_width`.
    pub real_height: Option<u32>,
    /// Image pixels per logical pixel.
    pub scale: f64,
    /// Image pixels per real screen pixel (1.0: full resolution), when the real size is known.
    pub scale_of_real: Option<f64>,
    /// What was captured, in words.
    pub target: String,
}

/// Bytes of the output limit left for the structured part of a screenshot's answer.
const STRUCTURED_RESERVE: usize = 2048;

/// The most image bytes that fit `max_output_bytes` once base64-encoded (4 bytes per 3), with the
/// structured part of the answer counted too.
pub fn image_budget(max_output_bytes: usize) -> usize {
    max_output_bytes.saturating_sub(STRUCTURED_RESERVE + 4) / 4 * 3
}

/// Text read from the screen.
#[derive(Debug, Clone, Serialize)]
pub struct ScreenText {
    /// The text tesseract read (trimmed).
    pub text: String,
    /// What was read, in words.
    pub target: String,
}

/// A capture target resolved against live state: grim's arguments and the logical size.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedCapture {
    /// Arguments for grim selecting the area (`-o NAME` or `-g "X,Y WxH"`, or none).
    pub grim_args: Vec<String>,
    /// Logical size of the area, when known.
    pub logical: Option<(u32, u32)>,
    /// The natural scale of the area (its monitor's scale, or the largest).
    pub scale: f64,
    /// What it is, in words.
    pub description: String,
}

const MAX_SIDE: u32 = 16_384;

fn geometry(r: &Rect) -> String {
    format!("{},{} {}x{}", r.x, r.y, r.width, r.height)
}

fn bounding(state: &DesktopState) -> Option<(u32, u32)> {
    let ms = &state.monitors;
    let x0 = ms.iter().map(|m| m.logical.x).min()?;
    let y0 = ms.iter().map(|m| m.logical.y).min()?;
    let x1 = ms
        .iter()
        .map(|m| m.logical.x + m.logical.width as i32)
        .max()?;
    let y1 = ms
        .iter()
        .map(|m| m.logical.y + m.logical.height as i32)
        .max()?;
    Some(((x1 - x0).max(0) as u32, (y1 - y0).max(0) as u32))
}

/// Resolves a target against the state (which may be unavailable for `output` and `region`).
pub fn resolve_capture(
    target: &CaptureTarget,
    state: Option<&DesktopState>,
) -> Result<ResolvedCapture> {
    let max_scale = state.map_or(1.0, DesktopState::max_scale);
    let need_state = || {
        state.ok_or_else(|| DesktopError::NotAvailable {
            what: "a compositor (Hyprland or Sway)",
            package: "hyprland",
            why: "monitors and windows are known only through the compositor".to_owned(),
        })
    };
    match target {
        CaptureTarget::Output => Ok(ResolvedCapture {
            grim_args: Vec::new(),
            logical: state.and_then(bounding),
            scale: max_scale,
            description: "all outputs".to_owned(),
        }),
        CaptureTarget::Monitor { name } => {
            let st = need_state()?;
            let m = st.monitor(name).ok_or_else(|| DesktopError::NotFound {
                what: "monitor",
                name: name.clone(),
                near: st.monitors.iter().map(|m| m.name.clone()).collect(),
            })?;
            Ok(ResolvedCapture {
                grim_args: vec!["-o".to_owned(), m.name.clone()],
                logical: Some((m.logical.width, m.logical.height)),
                scale: m.scale,
                description: format!("monitor {}", m.name),
            })
        }
        CaptureTarget::Window { id } => {
            let st = need_state()?;
            let w = st.window(id).ok_or_else(|| DesktopError::NotFound {
                what: "window",
                name: id.clone(),
                near: st
                    .windows
                    .iter()
                    // By class, never by title: this error reaches the agent before anyone is
                    // asked, and a title may carry a command line (attack 3, F11).
                    .map(|w| format!("{} ({})", w.id, w.class.as_deref().unwrap_or("no class")))
                    .take(10)
                    .collect(),
            })?;
            if w.geometry.width == 0 || w.geometry.height == 0 {
                return Err(DesktopError::invalid(
                    "window",
                    format!("window {} has no visible area", w.id),
                ));
            }
            Ok(ResolvedCapture {
                grim_args: vec!["-g".to_owned(), geometry(&w.geometry)],
                logical: Some((w.geometry.width, w.geometry.height)),
                scale: max_scale,
                description: format!("window {} ({})", w.id, w.title),
            })
        }
        CaptureTarget::Region {
            x,
            y,
            width,
            height,
        } => {
            if *width == 0 || *height == 0 || *width > MAX_SIDE || *height > MAX_SIDE {
                return Err(DesktopError::invalid(
                    "region",
                    format!("width and height must be between 1 and {MAX_SIDE}"),
                ));
            }
            let r = Rect {
                x: *x,
                y: *y,
                width: *width,
                height: *height,
            };
            Ok(ResolvedCapture {
                grim_args: vec!["-g".to_owned(), geometry(&r)],
                logical: Some((*width, *height)),
                scale: max_scale,
                description: format!("region {}", geometry(&r)),
            })
        }
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The grim scale that keeps the longer side within `max_dim` (never above the natural scale).
pub fn scale_for(logical: Option<(u32, u32)>, natural: f64, max_dim: u32) -> f64 {
    let natural = if natural.is_finite() && natural > 0.0 {
        natural
    } else {
        1.0
    };
    match logical {
        Some((w, h)) if w.max(h) > 0 => {
            let fit = f64::from(max_dim) / f64::from(w.max(h));
            // Three decimals, rounded down, so rounding never pushes a side past the limit.
            ((natural.min(fit)) * 1000.0).floor().max(1.0) / 1000.0
        }
        _ => natural,
    }
}

async fn read_capped(path: &Path, cap: usize) -> Result<Vec<u8>> {
    let meta = tokio::fs::metadata(path)
        .await
        .map_err(|source| DesktopError::Io {
            what: "reading the capture",
            path: path.to_owned(),
            source,
        })?;
    if meta.len() > cap as u64 {
        return Err(DesktopError::TooLarge {
            what: "screenshot",
            limit: cap,
        });
    }
    tokio::fs::read(path)
        .await
        .map_err(|source| DesktopError::Io {
            what: "reading the capture",
            path: path.to_owned(),
            source,
        })
}

/// A private (0700) directory for one capture, removed when dropped: under `XDG_RUNTIME_DIR`
/// (memory-backed, the person's own) when there is one, else the system temporary directory.
fn temp_dir(runtime: Option<&Path>) -> Result<tempfile::TempDir> {
    let base = runtime
        .filter(|d| d.is_dir())
        .map_or_else(std::env::temp_dir, Path::to_path_buf);
    tempfile::Builder::new()
        .prefix("archgate-screen-")
        .tempdir_in(&base)
        .map_err(|source| DesktopError::Io {
            what: "creating a private temporary directory",
            path: base,
            source,
        })
}

fn path_arg(p: &Path) -> Result<String> {
    p.to_str()
        .map(str::to_owned)
        .ok_or_else(|| DesktopError::invalid("path", "temporary path is not UTF-8"))
}

impl Desktop {
    async fn resolve_live(&self, target: &CaptureTarget) -> Result<ResolvedCapture> {
        let state = match self.desktop_state().await {
            Ok(s) => Some(s),
            Err(e) if matches!(target, CaptureTarget::Output | CaptureTarget::Region { .. }) => {
                tracing::debug!(error = %e, "capturing without compositor state");
                None
            }
            Err(e) => return Err(e),
        };
        resolve_capture(target, state.as_ref())
    }

    /// `screenshot` within the default output limit (256 KiB); see [`Self::screenshot_within`].
    pub async fn screenshot(
        &self,
        permit: &Permit,
        target: &CaptureTarget,
        max_dim: u32,
    ) -> Result<Screenshot> {
        self.screenshot_within(permit, target, max_dim, 256 * 1024)
            .await
    }

    /// `screenshot`: the target captured by grim at the scale that keeps the long side within
    /// `max_dim` (never above the output's own resolution), then encoded as JPEG so that, in
    /// base64, the answer fits `max_output_bytes`: quality steps down first, the scale only after
    /// (see [`image::encode_for_agent`]). The real size and the scales are reported.
    pub async fn screenshot_within(
        &self,
        permit: &Permit,
        target: &CaptureTarget,
        max_dim: u32,
        max_output_bytes: usize,
    ) -> Result<Screenshot> {
        if max_dim < 16 {
            return Err(DesktopError::invalid(
                "max_dim",
                "must be at least 16 pixels",
            ));
        }
        let resolved = self.resolve_live(target).await?;
        let scale = scale_for(resolved.logical, resolved.scale, max_dim);
        let dir = temp_dir(self.env.xdg_runtime_dir.as_deref())?;
        let file = dir.path().join("shot.png");
        let spec = Program::Grim
            .spec(&self.env)
            .args(["-l", "1", "-s", &format!("{scale}")])
            .args(resolved.grim_args.iter().cloned())
            .arg(path_arg(&file)?)
            .timeout(self.config.program_timeout);
        programs::run_ok(permit, Program::Grim, spec).await?;
        let png = read_capped(&file, self.config.max_image_bytes).await?;
        drop(dir);
        let (captured_w, _) = image::png_dimensions(&png)?;
        let budget = image_budget(max_output_bytes);
        let encoded =
            tokio::task::spawn_blocking(move || image::encode_for_agent(&png, max_dim, budget))
                .await
                .map_err(|e| DesktopError::malformed("jpeg encoder", e))??;
        // grim's scale, times what the encoder took off.
        let shrink = f64::from(encoded.width) / f64::from(captured_w.max(1));
        let scale = round3(scale * shrink);
        let real = resolved.logical.map(|(w, h)| {
            let n = if resolved.scale.is_finite() && resolved.scale > 0.0 {
                resolved.scale
            } else {
                1.0
            };
            (
                (f64::from(w) * n).round() as u32,
                (f64::from(h) * n).round() as u32,
            )
        });
        Ok(Screenshot {
            bytes: encoded.bytes.len(),
            mime: encoded.mime,
            quality: encoded.quality,
            width: encoded.width,
            height: encoded.height,
            real_width: real.map(|r| r.0),
            real_height: real.map(|r| r.1),
            scale,
            scale_of_real: real
                .map(|(rw, _)| round3(f64::from(encoded.width) / f64::from(rw.max(1)))),
            target: resolved.description,
            data: encoded.bytes,
        })
    }

    /// `screen_text`: the text on the target, read by tesseract after preprocessing (grayscale,
    /// inverted when dark, 2× upscale). OCR works best on a region or a window.
    pub async fn screen_text(&self, permit: &Permit, target: &CaptureTarget) -> Result<ScreenText> {
        let resolved = self.resolve_live(target).await?;
        let dir = temp_dir(self.env.xdg_runtime_dir.as_deref())?;
        let ppm = dir.path().join("shot.ppm");
        let spec = Program::Grim
            .spec(&self.env)
            .args(["-t", "ppm"])
            .args(resolved.grim_args.iter().cloned())
            .arg(path_arg(&ppm)?)
            .timeout(self.config.program_timeout);
        programs::run_ok(permit, Program::Grim, spec).await?;
        let raw = read_capped(&ppm, self.config.max_image_bytes).await?;
        let gray = image::prepare_for_ocr(image::ppm_to_gray(&raw)?);
        drop(raw);
        let pgm = dir.path().join("ocr.pgm");
        tokio::fs::write(&pgm, gray.to_pgm())
            .await
            .map_err(|source| DesktopError::Io {
                what: "writing the OCR input",
                path: pgm.clone(),
                source,
            })?;
        drop(gray);
        let spec = Program::Tesseract
            .spec(&self.env)
            .arg(path_arg(&pgm)?)
            .args(["stdout", "--psm", "6", "-l", "eng"])
            .timeout(self.config.program_timeout);
        let out = programs::run_ok(permit, Program::Tesseract, spec).await?;
        Ok(ScreenText {
            text: out.stdout_lossy().trim().to_owned(),
            target: resolved.description,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_keeps_the_longer_side_within_the_limit() {
        assert_eq!(scale_for(Some((1280, 720)), 1.0, 2000), 1.0);
        let s = scale_for(Some((1280, 720)), 1.0, 640);
        assert_eq!(s, 0.5);
        let s = scale_for(Some((3000, 1000)), 2.0, 1000);
        assert!((3000.0 * s).round() <= 1000.0, "{s}");
        assert_eq!(scale_for(None, 1.5, 100), 1.5);
    }

    #[test]
    fn region_bounds_are_checked() {
        let zero = CaptureTarget::Region {
            x: 0,
            y: 0,
            width: 0,
            height: 5,
        };
        assert_eq!(
            resolve_capture(&zero, None).unwrap_err().kind(),
            "invalid_argument"
        );
        let ok = CaptureTarget::Region {
            x: -5,
            y: 10,
            width: 20,
            height: 30,
        };
        let r = resolve_capture(&ok, None).expect("resolves");
        assert_eq!(r.grim_args, vec!["-g", "-5,10 20x30"]);
        let mon = CaptureTarget::Monitor {
            name: "DP-1".into(),
        };
        assert_eq!(
            resolve_capture(&mon, None).unwrap_err().kind(),
            "not_available"
        );
    }

    #[test]
    fn an_unknown_window_is_answered_without_titles() {
        use crate::compositor::{CompositorKind, Focus, Window};
        let st = DesktopState {
            compositor: CompositorKind::Sway,
            monitors: vec![],
            workspaces: vec![],
            windows: vec![Window {
                id: "7".into(),
                class: Some("foot".into()),
                title: "mysql -pSECRET".into(),
                workspace: None,
                geometry: Rect::default(),
                floating: false,
                fullscreen: false,
                focused: false,
                pid: None,
            }],
            focus: Focus::default(),
        };
        let t = CaptureTarget::Window { id: "8".into() };
        let e = resolve_capture(&t, Some(&st)).unwrap_err().to_string();
        assert!(e.contains("7 (foot)") && !e.contains("SECRET"), "{e}");
    }

    #[test]
    fn capture_target_json_is_strict() {
        let t: CaptureTarget =
            serde_json::from_str(r#"{"kind":"window","id":"12"}"#).expect("parses");
        assert_eq!(t, CaptureTarget::Window { id: "12".into() });
        assert!(
            serde_json::from_str::<CaptureTarget>(r#"{"kind":"window","id":"1","x":2}"#).is_err()
        );
        assert!(serde_json::from_str::<CaptureTarget>(r#"{"kind":"screen"}"#).is_err());
    }
}
