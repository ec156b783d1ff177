//! The image handling the screen operations need: PNG dimensions from the header, binary PPM
//! decoding and the OCR preprocessing (grayscale, invert when dark, 2× upscale) written as binary
//! PGM, which tesseract reads directly — and, through the `image` crate (no codec of our own),
//! [`encode_for_agent`]: a capture made to fit the output limit as JPEG, quality stepped down
//! first and the scale only after, so a photo-like 2560×1440 screen still reaches the agent with
//! its long side at 1024 px or more.

use std::io::Cursor;

use image::codecs::jpeg::JpegEncoder;
use image::imageops::FilterType;
use image::{DynamicImage, ImageFormat, RgbImage};

use crate::error::{DesktopError, Result};

/// JPEG qualities tried, best first, before the image is made smaller.
pub const JPEG_QUALITIES: [u8; 5] = [85, 75, 62, 50, 40];
/// The long side the encoder keeps while only the quality steps down; below it the scale goes
/// down too (what vision models still read well).
pub const MIN_LONG_SIDE: u32 = 1024;
/// The smallest long side ever sent; an image that does not fit even so is `too_large`.
const FLOOR_LONG_SIDE: u32 = 256;

/// An image ready for the agent.
#[derive(Debug, Clone)]
pub struct Encoded {
    /// The encoded bytes.
    pub bytes: Vec<u8>,
    /// Their MIME type.
    pub mime: &'static str,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// The JPEG quality used.
    pub quality: u8,
}

/// Decodes a PNG capture, scales it so its long side is at most `max_side`, and encodes it as
/// JPEG within `max_bytes`: each quality of [`JPEG_QUALITIES`] in turn, then (only if none fits)
/// smaller scales, never below [`MIN_LONG_SIDE`] while a smaller quality could still do, and never
/// below 256 px. Transparency is dropped (a screen has none).
pub fn encode_for_agent(png: &[u8], max_side: u32, max_bytes: usize) -> Result<Encoded> {
    let decoded = image::load_from_memory_with_format(png, ImageFormat::Png).map_err(|e| {
        DesktopError::malformed("grim", format!("the capture does not decode: {e}"))
    })?;
    let mut rgb: RgbImage = decoded.into_rgb8();
    let max_side = max_side.max(16);
    if rgb.width().max(rgb.height()) > max_side {
        rgb = shrink(&rgb, max_side);
    }
    loop {
        let mut smallest = usize::MAX;
        for q in JPEG_QUALITIES {
            let bytes = jpeg(&rgb, q)?;
            if bytes.len() <= max_bytes {
                return Ok(Encoded {
                    bytes,
                    mime: "image/jpeg",
                    width: rgb.width(),
                    height: rgb.height(),
                    quality: q,
                });
            }
            smallest = smallest.min(bytes.len());
        }
        let long = rgb.width().max(rgb.height());
        if long <= FLOOR_LONG_SIDE {
            return Err(DesktopError::TooLarge {
                what: "screenshot",
                limit: max_bytes,
            });
        }
        // Bytes go roughly with the pixel count: aim a little under the limit, by at most half
        // and at least a tenth per step.
        let ratio = (max_bytes as f64 / smallest as f64).sqrt() * 0.95;
        let mut next = (f64::from(long) * ratio.clamp(0.5, 0.9)) as u32;
        if long > MIN_LONG_SIDE {
            // Try the readable size before anything smaller.
            next = next.max(MIN_LONG_SIDE);
        }
        rgb = shrink(&rgb, next.max(FLOOR_LONG_SIDE));
    }
}

fn shrink(img: &RgbImage, long_side: u32) -> RgbImage {
    let (w, h) = (img.width(), img.height());
    let long = w.max(h).max(1);
    let f = f64::from(long_side) / f64::from(long);
    let nw = ((f64::from(w) * f).round() as u32).max(1);
    let nh = ((f64::from(h) * f).round() as u32).max(1);
    image::imageops::resize(img, nw, nh, FilterType::Triangle)
}

fn jpeg(img: &RgbImage, quality: u8) -> Result<Vec<u8>> {
    let mut out = Cursor::new(Vec::with_capacity(256 * 1024));
    DynamicImage::ImageRgb8(img.clone())
        .write_with_encoder(JpegEncoder::new_with_quality(&mut out, quality))
        .map_err(|e| DesktopError::malformed("jpeg encoder", e))?;
    Ok(out.into_inner())
}

/// Width and height from a PNG's IHDR chunk.
pub fn png_dimensions(png: &[u8]) -> Result<(u32, u32)> {
    const SIG: &[u8; 8] = b"\x89PNG\r\n\x1a\n";
    if png.len() < 24 || &png[..8] != SIG || &png[12..16] != b"IHDR" {
        return Err(DesktopError::malformed("grim", "output is not a PNG"));
    }
    let w = u32::from_be_bytes([png[16], png[17], png[18], png[19]]);
    let h = u32::from_be_bytes([png[20], png[21], png[22], png[23]]);
    Ok((w, h))
}

/// An 8-bit grayscale image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gray {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// Row-major luma, one byte per pixel.
    pub pixels: Vec<u8>,
}

fn ppm_token<'a>(data: &'a [u8], pos: &mut usize) -> Option<&'a [u8]> {
    loop {
        while *pos < data.len() && data[*pos].is_ascii_whitespace() {
            *pos += 1;
        }
        if *pos < data.len() && data[*pos] == b'#' {
            while *pos < data.len() && data[*pos] != b'\n' {
                *pos += 1;
            }
            continue;
        }
        break;
    }
    let start = *pos;
    while *pos < data.len() && !data[*pos].is_ascii_whitespace() {
        *pos += 1;
    }
    (start < *pos).then(|| &data[start..*pos])
}

/// Decodes a binary PPM (`P6`, maxval ≤ 255) into grayscale (Rec. 601 luma).
pub fn ppm_to_gray(data: &[u8]) -> Result<Gray> {
    let bad = |d: &str| DesktopError::malformed("grim (ppm)", d);
    let mut pos = 0;
    if ppm_token(data, &mut pos) != Some(b"P6") {
        return Err(bad("not a binary PPM"));
    }
    let mut num = |what: &str| -> Result<usize> {
        ppm_token(data, &mut pos)
            .and_then(|t| std::str::from_utf8(t).ok())
            .and_then(|t| t.parse::<usize>().ok())
            .ok_or_else(|| bad(what))
    };
    let width = num("width")?;
    let height = num("height")?;
    let maxval = num("maxval")?;
    if maxval == 0 || maxval > 255 {
        return Err(bad("only 8-bit PPM is supported"));
    }
    // Exactly one whitespace byte separates the header from the pixels.
    let body = data.get(pos + 1..).ok_or_else(|| bad("no pixel data"))?;
    let n = width
        .checked_mul(height)
        .filter(|n| n.checked_mul(3).is_some())
        .ok_or_else(|| bad("dimensions overflow"))?;
    if body.len() < n * 3 {
        return Err(bad("truncated pixel data"));
    }
    let pixels = body[..n * 3]
        .chunks_exact(3)
        .map(|p| {
            let l = (299 * u32::from(p[0]) + 587 * u32::from(p[1]) + 114 * u32::from(p[2])) / 1000;
            (l * 255 / maxval as u32).min(255) as u8
        })
        .collect();
    Ok(Gray {
        width,
        height,
        pixels,
    })
}

impl Gray {
    /// Mean brightness, 0–255.
    pub fn mean(&self) -> f64 {
        if self.pixels.is_empty() {
            return 0.0;
        }
        self.pixels.iter().map(|&p| u64::from(p)).sum::<u64>() as f64 / self.pixels.len() as f64
    }

    /// Inverts every pixel.
    pub fn invert(&mut self) {
        for p in &mut self.pixels {
            *p = 255 - *p;
        }
    }

    /// Doubles width and height (each pixel becomes a 2×2 block).
    pub fn upscale2(&self) -> Gray {
        let (w, h) = (self.width * 2, self.height * 2);
        let mut out = Vec::with_capacity(w * h);
        for row in self.pixels.chunks_exact(self.width.max(1)) {
            let doubled: Vec<u8> = row.iter().flat_map(|&p| [p, p]).collect();
            out.extend_from_slice(&doubled);
            out.extend_from_slice(&doubled);
        }
        Gray {
            width: w,
            height: h,
            pixels: out,
        }
    }

    /// Encodes as binary PGM (`P5`).
    pub fn to_pgm(&self) -> Vec<u8> {
        let mut out = format!("P5\n{} {}\n255\n", self.width, self.height).into_bytes();
        out.extend_from_slice(&self.pixels);
        out
    }
}

/// OCR preprocessing: grayscale, inverted when the mean is dark (tesseract reads dark text on a
/// light ground best), upscaled 2× when small enough that the result stays modest.
pub fn prepare_for_ocr(mut gray: Gray) -> Gray {
    if gray.mean() < 128.0 {
        gray.invert();
    }
    if gray.width * gray.height <= 2_500_000 {
        gray.upscale2()
    } else {
        gray
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A photo-like picture: gradients with noise (an xorshift, so the test is repeatable).
    fn photo_png(w: u32, h: u32) -> Vec<u8> {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let img = RgbImage::from_fn(w, h, |x, y| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let n = (seed % 96) as u32;
            image::Rgb([
                ((x * 255 / w + n) % 256) as u8,
                ((y * 255 / h + n / 2) % 256) as u8,
                (((x + y) * 128 / (w + h) + n) % 256) as u8,
            ])
        });
        let mut out = Cursor::new(Vec::new());
        img.write_to(&mut out, ImageFormat::Png).unwrap();
        out.into_inner()
    }

    #[test]
    fn a_photo_fits_the_limit_and_stays_readable() {
        let png = photo_png(1600, 900);
        assert!(png.len() > 1_000_000, "a noisy PNG is large: {}", png.len());
        let e = encode_for_agent(&png, 1568, 190_000).expect("fits");
        assert!(e.bytes.len() <= 190_000, "{}", e.bytes.len());
        assert_eq!(e.mime, "image/jpeg");
        assert!(
            e.width.max(e.height) >= MIN_LONG_SIDE,
            "{}x{}",
            e.width,
            e.height
        );
        assert!(e.width.max(e.height) <= 1568);
        let back = image::load_from_memory_with_format(&e.bytes, ImageFormat::Jpeg).unwrap();
        assert_eq!((back.width(), back.height()), (e.width, e.height));
        // The aspect ratio is kept.
        assert!((f64::from(e.width) / f64::from(e.height) - 16.0 / 9.0).abs() < 0.01);
    }

    #[test]
    fn a_tight_limit_steps_the_scale_down_and_an_impossible_one_is_too_large() {
        let png = photo_png(1280, 720);
        let e = encode_for_agent(&png, 1568, 30_000).expect("fits smaller");
        assert!(e.bytes.len() <= 30_000);
        assert!(e.width < 1280, "only a smaller scale fits: {}", e.width);
        let err = encode_for_agent(&png, 1568, 500).unwrap_err();
        assert_eq!(err.kind(), "too_large");
        let err = encode_for_agent(b"not a png", 1568, 100_000).unwrap_err();
        assert_eq!(err.kind(), "malformed");
    }

    #[test]
    fn ppm_decodes_with_comments_and_inverts_dark_images() {
        let mut ppm = b"P6\n# a comment\n2 1\n255\n".to_vec();
        ppm.extend_from_slice(&[0, 0, 0, 255, 255, 255]);
        let g = ppm_to_gray(&ppm).expect("decodes");
        assert_eq!((g.width, g.height), (2, 1));
        assert_eq!(g.pixels, vec![0, 255]);
        let dark = Gray {
            width: 2,
            height: 1,
            pixels: vec![10, 200],
        };
        let p = prepare_for_ocr(dark);
        assert_eq!((p.width, p.height), (4, 2));
        assert_eq!(p.pixels, vec![245, 245, 55, 55, 245, 245, 55, 55]);
        assert!(p.to_pgm().starts_with(b"P5\n4 2\n255\n"));
    }

    #[test]
    fn garbage_is_malformed_not_a_panic() {
        for bad in [
            &b""[..],
            b"P6",
            b"P6 99999999999 2 255\n",
            b"P6 2 2 255\n\0\0",
            b"\x89PNG",
        ] {
            assert!(ppm_to_gray(bad).is_err());
            assert!(png_dimensions(bad).is_err());
        }
    }
}
