//! The little image handling the screen operations need, without an image library: PNG
//! dimensions from the header, binary PPM decoding, and the OCR preprocessing (grayscale,
//! invert when dark, 2× upscale) written as binary PGM, which tesseract reads directly.

use crate::error::{DesktopError, Result};

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
