//! Images for models (`read`'s, and the ones clients attach): recognizing PNG, JPEG, GIF and
//! WebP by their magic numbers, and fitting an image to what models accept (pi's
//! `resizeImage`): at most 2000×2000 pixels and 4.5 MB of base64. Images within the limits
//! are passed through byte for byte; larger ones are decoded (EXIF orientation applied), scaled, and re-encoded as the smaller of PNG and JPEG
//! (quality 80), then at falling JPEG qualities and scales until they fit.

use std::io::Cursor;

use base64::Engine as _;
use image::{DynamicImage, ImageDecoder as _, ImageReader, imageops::FilterType};

/// Largest width or height sent to a model.
pub const MAX_DIMENSION: u32 = 2000;
/// Largest base64 payload sent to a model.
pub const MAX_BASE64_BYTES: usize = 4_718_592;

/// The image formats `read` returns as images.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageKind {
    /// PNG.
    Png,
    /// JPEG.
    Jpeg,
    /// GIF.
    Gif,
    /// WebP.
    Webp,
}

impl ImageKind {
    /// The MIME type.
    pub fn mime(self) -> &'static str {
        match self {
            ImageKind::Png => "image/png",
            ImageKind::Jpeg => "image/jpeg",
            ImageKind::Gif => "image/gif",
            ImageKind::Webp => "image/webp",
        }
    }
}

/// An image ready for the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreparedImage {
    /// Base64 of the encoded image.
    pub data: String,
    /// Its MIME type.
    pub mime: &'static str,
    /// pi's dimension note when the image was scaled.
    pub note: Option<String>,
}

/// The image could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    /// The file is not a decodable image of its kind; the model should treat it as binary.
    #[error("cannot decode the image: {0}")]
    Decode(#[from] image::ImageError),
    /// Even the smallest encoding is over the size limit.
    #[error("the image is too large to send even after downscaling")]
    TooLarge,
}

/// The image kind of a file starting with `head`, if any.
pub fn sniff(head: &[u8]) -> Option<ImageKind> {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some(ImageKind::Png)
    } else if head.starts_with(&[0xff, 0xd8, 0xff]) {
        Some(ImageKind::Jpeg)
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some(ImageKind::Gif)
    } else if head.len() >= 12 && &head[0..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        Some(ImageKind::Webp)
    } else {
        None
    }
}

/// `bytes` (an image of `kind`) as they are: what `images.autoResize: false` sends.
pub fn as_is(bytes: &[u8], kind: ImageKind) -> PreparedImage {
    PreparedImage {
        data: base64::engine::general_purpose::STANDARD.encode(bytes),
        mime: kind.mime(),
        note: None,
    }
}

/// Fits `bytes` (an image of `kind`) to the limits.
pub fn prepare(bytes: &[u8], kind: ImageKind) -> Result<PreparedImage, ImageError> {
    let reader = ImageReader::with_format(Cursor::new(bytes), format_of(kind));
    let mut decoder = reader.into_decoder()?;
    let (width, height) = decoder.dimensions();
    let base64_len = bytes.len().div_ceil(3) * 4;
    if width <= MAX_DIMENSION && height <= MAX_DIMENSION && base64_len <= MAX_BASE64_BYTES {
        return Ok(PreparedImage {
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
            mime: kind.mime(),
            note: None,
        });
    }
    let orientation = decoder.orientation()?;
    let mut original = DynamicImage::from_decoder(decoder)?;
    original.apply_orientation(orientation);
    let (width, height) = (original.width(), original.height());
    let fit = (MAX_DIMENSION as f64 / width as f64)
        .min(MAX_DIMENSION as f64 / height as f64)
        .min(1.0);
    let scaled = |factor: f64| {
        let target_width = ((width as f64 * fit * factor).round() as u32).max(1);
        let target_height = ((height as f64 * fit * factor).round() as u32).max(1);
        if (target_width, target_height) == (width, height) {
            original.clone()
        } else {
            original.resize_exact(target_width, target_height, FilterType::CatmullRom)
        }
    };
    let fitted = scaled(1.0);
    let png = encode(&fitted, None)?;
    let jpeg = encode(&fitted, Some(80))?;
    let (best, mime) = if png.len() <= jpeg.len() {
        (png, "image/png")
    } else {
        (jpeg, "image/jpeg")
    };
    let note = |image: &DynamicImage| {
        format!(
            "[Image: original {width}x{height}, displayed at {}x{}. Multiply coordinates by {:.2} to map to original image.]",
            image.width(),
            image.height(),
            width as f64 / image.width() as f64
        )
    };
    if best.len().div_ceil(3) * 4 <= MAX_BASE64_BYTES {
        return Ok(PreparedImage {
            data: base64::engine::general_purpose::STANDARD.encode(&best),
            mime,
            note: Some(note(&fitted)),
        });
    }
    for factor in [1.0, 0.75, 0.5, 0.35, 0.25] {
        let candidate = scaled(factor);
        for quality in [85, 70, 55, 40] {
            let encoded = encode(&candidate, Some(quality))?;
            if encoded.len().div_ceil(3) * 4 <= MAX_BASE64_BYTES {
                return Ok(PreparedImage {
                    data: base64::engine::general_purpose::STANDARD.encode(&encoded),
                    mime: "image/jpeg",
                    note: Some(note(&candidate)),
                });
            }
        }
    }
    Err(ImageError::TooLarge)
}

/// PNG (`quality` `None`) or JPEG at `quality`.
fn format_of(kind: ImageKind) -> image::ImageFormat {
    match kind {
        ImageKind::Png => image::ImageFormat::Png,
        ImageKind::Jpeg => image::ImageFormat::Jpeg,
        ImageKind::Gif => image::ImageFormat::Gif,
        ImageKind::Webp => image::ImageFormat::WebP,
    }
}

/// Width and height of `bytes` (an image of `kind`), read from its header only.
pub fn dimensions(bytes: &[u8], kind: ImageKind) -> Option<(u32, u32)> {
    let reader = ImageReader::with_format(Cursor::new(bytes), format_of(kind));
    reader.into_dimensions().ok()
}

/// `bytes` (an image of `kind`) as PNG: as they are when they are PNG, else decoded and
/// encoded again (what terminals showing only PNG need).
pub fn to_png(bytes: &[u8], kind: ImageKind) -> Result<Vec<u8>, ImageError> {
    if kind == ImageKind::Png {
        return Ok(bytes.to_vec());
    }
    let image = ImageReader::with_format(Cursor::new(bytes), format_of(kind)).decode()?;
    encode(&image, None)
}

/// `bytes` (an image of `kind`) as a sixel sequence (DEC's terminal graphics) `width` x
/// `height` pixels: scaled to that size, at most 256 colours (NeuQuant), run-length encoded.
pub fn sixel(bytes: &[u8], kind: ImageKind, width: u32, height: u32) -> Result<String, ImageError> {
    let image = ImageReader::with_format(Cursor::new(bytes), format_of(kind)).decode()?;
    let scaled = image
        .resize_exact(width.max(1), height.max(1), FilterType::Triangle)
        .to_rgba8();
    Ok(encode_sixel(&scaled))
}

/// The sixel sequence of an RGBA image (transparent pixels left as the background).
fn encode_sixel(image: &image::RgbaImage) -> String {
    use std::fmt::Write as _;
    let (width, height) = image.dimensions();
    let pixels = image.as_raw();
    let quant = color_quant::NeuQuant::new(10, 256, pixels);
    let palette = quant.color_map_rgb();
    let colors = palette.len() / 3;
    // Each pixel's palette index; `None` where it is transparent.
    let indexed: Vec<Option<usize>> = pixels
        .chunks_exact(4)
        .map(|pixel| (pixel[3] >= 128).then(|| quant.index_of(pixel)))
        .collect();
    let mut out = String::with_capacity((width * height) as usize / 2);
    // DCS q, 1:1 pixels, the size, then the palette in percent.
    let _ = write!(out, "\x1bP0;1;0q\"1;1;{width};{height}");
    for (index, rgb) in palette.chunks_exact(3).enumerate() {
        let percent = |value: u8| u32::from(value) * 100 / 255;
        let _ = write!(
            out,
            "#{index};2;{};{};{}",
            percent(rgb[0]),
            percent(rgb[1]),
            percent(rgb[2])
        );
    }
    for band in 0..height.div_ceil(6) {
        let mut first = true;
        for color in 0..colors {
            // This colour's sixels across the band: bit n is row band*6+n.
            let bits: Vec<u8> = (0..width)
                .map(|x| {
                    (0..6).fold(0u8, |bits, row| {
                        let y = band * 6 + row;
                        let hit = y < height && indexed[(y * width + x) as usize] == Some(color);
                        bits | (u8::from(hit) << row)
                    })
                })
                .collect();
            if bits.iter().all(|&bits| bits == 0) {
                continue;
            }
            if !first {
                out.push('$');
            }
            first = false;
            let _ = write!(out, "#{color}");
            let mut x = 0;
            while x < bits.len() {
                let run = bits[x..].iter().take_while(|&&b| b == bits[x]).count();
                let sixel = char::from(63 + bits[x]);
                if run > 3 {
                    let _ = write!(out, "!{run}{sixel}");
                } else {
                    out.extend(std::iter::repeat_n(sixel, run));
                }
                x += run;
            }
        }
        out.push('-');
    }
    out.push_str("\x1b\\");
    out
}

fn encode(image: &DynamicImage, quality: Option<u8>) -> Result<Vec<u8>, ImageError> {
    let mut out = Cursor::new(Vec::new());
    match quality {
        None => image.write_to(&mut out, image::ImageFormat::Png)?,
        Some(quality) => {
            let encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality);
            image.to_rgb8().write_with_encoder(encoder)?;
        }
    }
    Ok(out.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixel_bands_hold_each_colours_columns() {
        // 2x6: a red column and a blue one, one band high.
        let image = image::RgbaImage::from_fn(2, 6, |x, _| {
            if x == 0 {
                image::Rgba([255, 0, 0, 255])
            } else {
                image::Rgba([0, 0, 255, 255])
            }
        });
        let sixel = encode_sixel(&image);
        assert!(sixel.starts_with("\x1bP0;1;0q\"1;1;2;6#0;2;"), "{sixel:?}");
        assert!(sixel.ends_with("-\x1b\\"), "{sixel:?}");
        // Each colour: its column full (`~`: all six rows), the other empty (`?`).
        assert!(sixel.contains("~?"), "{sixel:?}");
        assert!(sixel.contains("?~"), "{sixel:?}");
        assert_eq!(
            sixel.matches('$').count(),
            1,
            "two colours in the band: {sixel:?}"
        );
        // A run of the same sixel is counted.
        let wide = image::RgbaImage::from_pixel(10, 6, image::Rgba([0, 128, 0, 255]));
        assert!(encode_sixel(&wide).contains("!10~"));
        // Transparent pixels draw nothing.
        let clear = image::RgbaImage::from_pixel(3, 6, image::Rgba([0, 0, 0, 0]));
        let sixel = encode_sixel(&clear);
        // Every `#` is a palette entry (`#n;2;…`), none selects a colour to draw.
        for (at, _) in sixel.match_indices('#') {
            let after: String = sixel[at + 1..]
                .chars()
                .skip_while(char::is_ascii_digit)
                .take(1)
                .collect();
            assert_eq!(after, ";", "{sixel:?}");
        }
        assert!(sixel.ends_with("-\x1b\\"), "{sixel:?}");
    }
}
