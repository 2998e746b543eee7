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
    let reader = image::ImageReader::with_format(Cursor::new(&raw), format);
    let (width, height) = reader.into_dimensions().ok()?;
    if width <= MAX_IMAGE_SIDE && height <= MAX_IMAGE_SIDE {
        // Decode once to make sure the data is a real image, not just a header.
        image::load_from_memory_with_format(&raw, format).ok()?;
        return Some(ImageBlock {
            media_type: media_type.to_owned(),
            data: payload.to_owned(),
            width,
            height,
        });
    }
    match scale(&raw, format) {
        Some(block) => Some(block),
        // The header is valid but scaling failed: the original is used (OUT-4).
        None => Some(ImageBlock {
            media_type: media_type.to_owned(),
            data: payload.to_owned(),
            width,
            height,
        }),
    }
}

fn scale(raw: &[u8], format: image::ImageFormat) -> Option<ImageBlock> {
    let decoded = image::load_from_memory_with_format(raw, format).ok()?;
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
