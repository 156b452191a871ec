//! `@file` arguments and piped stdin, turned into the first message as pi does (§2.3).
//!
//! Each `@path` (with `~` expanded, relative to the current directory) becomes text prefixed
//! to the first message: `<file name="ABS">\nCONTENT\n</file>\n` for text files, and for
//! JPEG, PNG, GIF and WebP files (recognised by their first bytes, not their names) an
//! attached image with `<file name="ABS"></file>\n`. As pi, with `images.autoResize` (the
//! default) an image is fitted to 2000x2000 pixels and 4.5 MB first, the tag then holding
//! pi's dimension note, and one that cannot be fitted is left out with pi's
//! `[Image omitted: …]` in its tag. Empty files are skipped; a missing file is an error.

use std::io::{IsTerminal as _, Read as _};
use std::path::{Path, PathBuf};

use pi_image::ImageKind;
use pi_protocol::v1::message::ImageContent;

use crate::error::CliError;

/// The `@file` arguments read, in order, before their images are fitted ([`Attachments::finish`]).
#[derive(Debug, Default, PartialEq)]
pub struct Attachments {
    files: Vec<Attached>,
}

#[derive(Debug, PartialEq)]
enum Attached {
    /// A text file: its tag with the content.
    Text(String),
    /// An image file: its path as shown, its bytes and kind.
    Image {
        name: String,
        bytes: Vec<u8>,
        kind: ImageKind,
    },
}

/// What the first message gets from `@file` arguments.
#[derive(Debug, Default, PartialEq)]
pub struct Attachment {
    /// Text to put before the first message.
    pub text: String,
    /// Images to attach to the first message.
    pub images: Vec<ImageContent>,
}

impl Attachments {
    /// Whether an image is among the files (whose fitting depends on `images.autoResize`).
    pub fn has_images(&self) -> bool {
        self.files
            .iter()
            .any(|file| matches!(file, Attached::Image { .. }))
    }

    /// The text and images, each image fitted to what models accept when `resize` (pi's
    /// `images.autoResize`).
    pub fn finish(self, resize: bool) -> Attachment {
        let mut attachment = Attachment::default();
        for file in self.files {
            match file {
                Attached::Text(text) => attachment.text.push_str(&text),
                Attached::Image { name, bytes, kind } => {
                    let prepared = if resize {
                        pi_image::prepare(&bytes, kind)
                    } else {
                        Ok(pi_image::as_is(&bytes, kind))
                    };
                    match prepared {
                        Ok(image) => {
                            let note = image.note.unwrap_or_default();
                            attachment
                                .text
                                .push_str(&format!("<file name=\"{name}\">{note}</file>\n"));
                            attachment.images.push(ImageContent {
                                data: image.data,
                                mime_type: image.mime.to_owned(),
                            });
                        }
                        Err(_) => attachment.text.push_str(&format!(
                            "<file name=\"{name}\">[Image omitted: could not be resized below \
                             the inline image size limit.]</file>\n"
                        )),
                    }
                }
            }
        }
        attachment
    }
}

/// Reads every `@file` argument (given without the `@`), in order.
pub fn read_files(paths: &[String], cwd: &Path) -> Result<Attachments, CliError> {
    let mut attachments = Attachments::default();
    for argument in paths {
        let path = resolve(argument, cwd);
        let bytes = std::fs::read(&path).map_err(|error| match error.kind() {
            std::io::ErrorKind::NotFound => {
                CliError::failed(format!("File not found: {}", path.display()))
            }
            _ => CliError::failed(format!("cannot read {}: {error}", path.display())),
        })?;
        if bytes.is_empty() {
            continue;
        }
        let name = path.display().to_string();
        match pi_image::sniff(&bytes) {
            Some(kind) => attachments
                .files
                .push(Attached::Image { name, bytes, kind }),
            None => {
                let content = String::from_utf8_lossy(&bytes);
                attachments.files.push(Attached::Text(format!(
                    "<file name=\"{name}\">\n{content}\n</file>\n"
                )));
            }
        }
    }
    Ok(attachments)
}

/// Whether images attached to prompts are fitted (`images.autoResize` of `cwd`'s settings;
/// pi's default when the daemon cannot say).
pub async fn resize_setting(client: &pi_client::Client, cwd: &Path) -> bool {
    crate::daemon_client::settings_of(client, cwd)
        .await
        .is_none_or(|settings| settings.images.auto_resize)
}

/// The messages to send, as pi builds them: piped stdin, then the `@file` text, then the
/// first message, joined as they are (pi adds no separator), make the first prompt, with the
/// files' images; each further message is a prompt of its own.
pub fn first_messages(
    stdin: Option<String>,
    attachments: Attachment,
    messages: &[String],
) -> Vec<(String, Vec<ImageContent>)> {
    let mut first = String::new();
    let mut any = false;
    if let Some(stdin) = stdin {
        first.push_str(&stdin);
        any = true;
    }
    if !attachments.text.is_empty() {
        first.push_str(&attachments.text);
        any = true;
    }
    let mut rest = messages.iter();
    if let Some(message) = rest.next() {
        first.push_str(message);
        any = true;
    }
    if !any && attachments.images.is_empty() {
        return Vec::new();
    }
    std::iter::once((first, attachments.images))
        .chain(rest.map(|message| (message.clone(), Vec::new())))
        .collect()
}

/// pi's positional arguments: the `@file`s read (relative to the current directory) and the
/// messages, in order.
pub fn split_inputs(inputs: &[String]) -> Result<(Attachments, Vec<String>), CliError> {
    let (files, messages): (Vec<String>, Vec<String>) = inputs
        .iter()
        .cloned()
        .partition(|input| input.starts_with('@'));
    let files: Vec<String> = files.into_iter().map(|file| file[1..].to_owned()).collect();
    Ok((read_files(&files, &std::env::current_dir()?)?, messages))
}

/// Piped stdin, trimmed; `None` on a terminal or when empty.
pub fn read_piped_stdin() -> Result<Option<String>, CliError> {
    let mut stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Ok(None);
    }
    let mut text = String::new();
    stdin
        .read_to_string(&mut text)
        .map_err(|error| CliError::failed(format!("cannot read stdin: {error}")))?;
    let text = text.trim();
    Ok((!text.is_empty()).then(|| text.to_owned()))
}

/// `argument` as an absolute path (`~` expanded, relative to `cwd`).
pub fn absolute(argument: &str, cwd: &Path) -> String {
    resolve(argument, cwd).display().to_string()
}

/// `~`, `~/rest`, absolute, or relative to `cwd`.
fn resolve(argument: &str, cwd: &Path) -> PathBuf {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let path = match (argument, &home) {
        ("~", Some(home)) => home.clone(),
        (text, Some(home)) if text.starts_with("~/") => home.join(&text[2..]),
        (text, _) => PathBuf::from(text),
    };
    if path.is_absolute() {
        path
    } else {
        cwd.join(path)
    }
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;

    use super::*;

    /// A PNG of `width` x `height` pixels.
    fn png(width: u32, height: u32) -> Vec<u8> {
        let image = image::RgbImage::from_fn(width, height, |x, y| {
            image::Rgb([(x % 251) as u8, (y % 241) as u8, ((x + y) % 239) as u8])
        });
        let mut out = std::io::Cursor::new(Vec::new());
        image.write_to(&mut out, image::ImageFormat::Png).unwrap();
        out.into_inner()
    }

    #[test]
    fn text_and_image_files_become_text_and_images() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "alpha").unwrap();
        std::fs::write(dir.path().join("empty.txt"), "").unwrap();
        let small = png(4, 3);
        std::fs::write(dir.path().join("pic.bin"), &small).unwrap();
        let files = ["a.txt", "empty.txt", "pic.bin"].map(str::to_owned);
        let attachment = read_files(&files, dir.path()).unwrap().finish(true);
        let root = dir.path().display();
        assert_eq!(
            attachment.text,
            format!(
                "<file name=\"{root}/a.txt\">\nalpha\n</file>\n<file name=\"{root}/pic.bin\"></file>\n"
            )
        );
        assert_eq!(attachment.images.len(), 1);
        assert_eq!(attachment.images[0].mime_type, "image/png");
        // Within the limits: byte for byte.
        assert_eq!(
            attachment.images[0].data,
            base64::engine::general_purpose::STANDARD.encode(&small)
        );
    }

    #[test]
    fn large_images_are_fitted_with_pis_note_unless_auto_resize_is_off() {
        let dir = tempfile::tempdir().unwrap();
        let large = png(3000, 1500);
        std::fs::write(dir.path().join("wide.png"), &large).unwrap();
        let files = ["wide.png".to_owned()];
        let root = dir.path().display();

        let fitted = read_files(&files, dir.path()).unwrap().finish(true);
        assert_eq!(
            fitted.text,
            format!(
                "<file name=\"{root}/wide.png\">[Image: original 3000x1500, displayed at \
                 2000x1000. Multiply coordinates by 1.50 to map to original image.]</file>\n"
            )
        );
        let data = base64::engine::general_purpose::STANDARD
            .decode(&fitted.images[0].data)
            .unwrap();
        let decoded = image::load_from_memory(&data).unwrap();
        assert_eq!((decoded.width(), decoded.height()), (2000, 1000));

        let as_is = read_files(&files, dir.path()).unwrap().finish(false);
        assert_eq!(
            as_is.text,
            format!("<file name=\"{root}/wide.png\"></file>\n")
        );
        assert_eq!(
            as_is.images[0].data,
            base64::engine::general_purpose::STANDARD.encode(&large)
        );
    }

    #[test]
    fn an_image_that_cannot_be_decoded_is_left_out_with_pis_words() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("broken.png"), b"\x89PNG\r\n\x1a\nrest").unwrap();
        let attachments = read_files(&["broken.png".to_owned()], dir.path()).unwrap();
        assert!(attachments.has_images());
        let attachment = attachments.finish(true);
        assert!(attachment.images.is_empty());
        assert_eq!(
            attachment.text,
            format!(
                "<file name=\"{}/broken.png\">[Image omitted: could not be resized below the \
                 inline image size limit.]</file>\n",
                dir.path().display()
            )
        );
    }

    #[test]
    fn a_missing_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let error = read_files(&["nope.txt".to_owned()], dir.path()).unwrap_err();
        assert_eq!(
            error.message(),
            format!("File not found: {}/nope.txt", dir.path().display())
        );
    }

    #[test]
    fn stdin_then_files_go_before_the_first_message_only_joined_as_pi_joins_them() {
        let attachments = Attachment {
            text: "<file name=\"/f\">\nx\n</file>\n".to_owned(),
            images: vec![ImageContent {
                data: "AA==".to_owned(),
                mime_type: "image/png".to_owned(),
            }],
        };
        let messages = first_messages(
            Some("piped".to_owned()),
            attachments,
            &["first".to_owned(), "second".to_owned()],
        );
        assert_eq!(messages.len(), 2);
        assert_eq!(messages[0].0, "piped<file name=\"/f\">\nx\n</file>\nfirst");
        assert_eq!(messages[0].1.len(), 1);
        assert_eq!(messages[1], ("second".to_owned(), Vec::new()));
        assert_eq!(
            first_messages(Some("only".to_owned()), Attachment::default(), &[]),
            vec![("only".to_owned(), Vec::new())]
        );
    }
}
