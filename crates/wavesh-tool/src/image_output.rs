//! OUT-4: a stdout that is exactly one `data:image/...;base64,...` URL becomes an image
//! the model can see, scaled so neither side exceeds 2000 px.

use std::io::Cursor;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::Serialize;
use wavesh_exec::OutputFile;

/// Output files larger than this are never read whole for an image (OUT-4).
pub const MAX_IMAGE_OUTPUT_BYTES: u64 = 20 * 1024 * 1024;
/// Neither side of an image shown to the model exceeds this (OUT-4).
pub const MAX_IMAGE_SIDE: u32 = 2000;
/// The most memory decoding one image may take (PROC-4): a 4096×4096 RGBA image. A
/// larger one (a decompression bomb: a small file that claims 40000×40000 pixels) is
/// refused from its header, before any pixel is decoded, and shown as text.
pub const MAX_DECODED_BYTES: u64 = 64 * 1024 * 1024;
/// The longest side a decoder is allowed to accept at all (PROC-4).
pub const MAX_DECODED_SIDE: u32 = 16_384;

/// The decoder limits of PROC-4, for the header read and for decoding alike.
fn limits() -> image::Limits {
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_DECODED_SIDE);
    limits.max_image_height = Some(MAX_DECODED_SIDE);
    limits.max_alloc = Some(MAX_DECODED_BYTES);
    limits
}

fn reader(raw: &[u8], format: image::ImageFormat) -> image::ImageReader<Cursor<&[u8]>> {
    let mut reader = image::ImageReader::with_format(Cursor::new(raw), format);
    reader.limits(limits());
    reader
}

/// Decodes within [`limits`]; `None` for a broken image or one past a limit.
fn decode(raw: &[u8], format: image::ImageFormat) -> Option<image::DynamicImage> {
    reader(raw, format).decode().ok()
}

/// An image block for the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ImageBlock {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub media_type: String,
    /// The image, base64.
    pub data: String,
    /// Its size after scaling.
    pub width: u32,
    /// Its size after scaling.
    pub height: u32,
}

/// The image in `output`, if its whole stdout (trimmed) is one image data URL that
/// decodes. `None` means: show it as text.
pub fn image_from_output(output: &OutputFile) -> Option<ImageBlock> {
    let len = output.len().ok()?;
    if !(22..=MAX_IMAGE_OUTPUT_BYTES).contains(&len) {
        return None;
    }
    // Cheap check before reading everything: the URL prefix.
    let head = output.read_head(64).ok()?;
    if !String::from_utf8_lossy(&head)
        .trim_start()
        .starts_with("data:image/")
    {
        return None;
    }
    let bytes = output.read_head(len).ok()?;
    let text = std::str::from_utf8(&bytes).ok()?.trim();
    image_from_data_url(text)
}

/// Decodes and, if needed, scales a data URL.
pub fn image_from_data_url(url: &str) -> Option<ImageBlock> {
    let rest = url.strip_prefix("data:")?;
    let (media_type, payload) = rest.split_once(";base64,")?;
    if !matches!(
        media_type,
        "image/png" | "image/jpeg" | "image/gif" | "image/webp"
    ) {
        return None;
    }
    if payload.chars().any(char::is_whitespace) {
        // One URL, nothing else: embedded whitespace means it is not exactly a data URL.
        return None;
    }
    let raw = STANDARD.decode(payload).ok()?;
    let format = image::guess_format(&raw).ok()?;
    let (width, height) = reader(&raw, format).into_dimensions().ok()?;
    if u64::from(width) * u64::from(height) * 4 > MAX_DECODED_BYTES {
        tracing::debug!(
            width,
            height,
            "an image past the decoding limit is shown as text"
        );
        return None;
    }
    if width <= MAX_IMAGE_SIDE && height <= MAX_IMAGE_SIDE {
        // Decode once to make sure the data is a real image, not just a header.
        decode(&raw, format)?;
        return Some(ImageBlock {
            media_type: media_type.to_owned(),
            data: payload.to_owned(),
            width,
            height,
        });
    }
    // Too large to show as it is, and it could not be scaled: text, never an image past
    // OUT-4's 2000 px.
    scale(&raw, format)
}

fn scale(raw: &[u8], format: image::ImageFormat) -> Option<ImageBlock> {
    let decoded = decode(raw, format)?;
    let scaled = decoded.resize(
        MAX_IMAGE_SIDE,
        MAX_IMAGE_SIDE,
        image::imageops::FilterType::Triangle,
    );
    let mut png = Vec::new();
    scaled
        .write_to(&mut Cursor::new(&mut png), image::ImageFormat::Png)
        .ok()?;
    Some(ImageBlock {
        media_type: "image/png".to_owned(),
        data: STANDARD.encode(&png),
        width: scaled.width(),
        height: scaled.height(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(width: u32, height: u32) -> Vec<u8> {
        let image = image::RgbImage::from_fn(width, height, |x, y| {
            image::Rgb([(x % 256) as u8, (y % 256) as u8, 128])
        });
        let mut bytes = Vec::new();
        image::DynamicImage::ImageRgb8(image)
            .write_to(&mut Cursor::new(&mut bytes), image::ImageFormat::Png)
            .unwrap();
        bytes
    }

    #[test]
    fn out_4_small_image_is_kept_as_is() {
        let url = format!("data:image/png;base64,{}", STANDARD.encode(png(40, 30)));
        let block = image_from_data_url(&url).unwrap();
        assert_eq!(
            (block.width, block.height, block.media_type.as_str()),
            (40, 30, "image/png")
        );
    }

    #[test]
    fn out_4_large_image_is_scaled_to_2000() {
        let url = format!("data:image/png;base64,{}", STANDARD.encode(png(4000, 3000)));
        let block = image_from_data_url(&url).unwrap();
        assert_eq!((block.width, block.height), (2000, 1500));
    }

    /// A PNG whose header claims `width`×`height` with the smallest possible body: one
    /// zlib stream of zero rows, so it is a few hundred bytes (a decompression bomb's
    /// header, or a truncated giant).
    fn giant_png_header(width: u32, height: u32) -> Vec<u8> {
        fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
            out.extend_from_slice(&(data.len() as u32).to_be_bytes());
            let mut crc = crc32(kind);
            crc = crc32_update(crc, data);
            out.extend_from_slice(kind);
            out.extend_from_slice(data);
            out.extend_from_slice(&(!crc).to_be_bytes());
        }
        fn crc32(bytes: &[u8]) -> u32 {
            crc32_update(0xffff_ffff, bytes)
        }
        fn crc32_update(mut crc: u32, bytes: &[u8]) -> u32 {
            for byte in bytes {
                crc ^= u32::from(*byte);
                for _ in 0..8 {
                    crc = if crc & 1 != 0 {
                        (crc >> 1) ^ 0xedb8_8320
                    } else {
                        crc >> 1
                    };
                }
            }
            crc
        }
        let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
        let mut ihdr = Vec::new();
        ihdr.extend_from_slice(&width.to_be_bytes());
        ihdr.extend_from_slice(&height.to_be_bytes());
        ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
        chunk(&mut out, b"IHDR", &ihdr);
        // An empty zlib stream: header, one empty stored block, Adler-32 of nothing.
        chunk(
            &mut out,
            b"IDAT",
            &[0x78, 0x01, 0x01, 0x00, 0x00, 0xff, 0xff, 0, 0, 0, 1],
        );
        chunk(&mut out, b"IEND", &[]);
        out
    }

    /// PROC-4: images past the decoding limits come back as text, whatever their header
    /// claims, and never unscaled.
    #[test]
    fn proc_4_image_bombs_are_text_in_bounded_time() {
        for (width, height) in [
            (40_000, 40_000),
            (16_000, 16_000),
            (100_000, 10),
            (5000, 5000),
        ] {
            let url = format!(
                "data:image/png;base64,{}",
                STANDARD.encode(giant_png_header(width, height))
            );
            // Refused from the header: a decode of the claimed pixels would need
            // gigabytes (bench/image-bomb.py measures time and memory end to end).
            assert!(image_from_data_url(&url).is_none(), "{width}x{height}");
        }
    }

    #[test]
    fn out_4_corrupt_or_foreign_payloads_are_text() {
        assert!(image_from_data_url("data:image/png;base64,not-base64!!").is_none());
        assert!(
            image_from_data_url(&format!(
                "data:image/png;base64,{}",
                STANDARD.encode(b"plain bytes")
            ))
            .is_none()
        );
        assert!(
            image_from_data_url(&format!("data:text/plain;base64,{}", STANDARD.encode(b"x")))
                .is_none()
        );
        let mut truncated = png(50, 50);
        truncated.truncate(60);
        assert!(
            image_from_data_url(&format!(
                "data:image/png;base64,{}",
                STANDARD.encode(&truncated)
            ))
            .is_none()
        );
    }
}
