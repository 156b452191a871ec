//! `@file` arguments and piped stdin, turned into the first message as pi does (§2.3).
//!
//! Each `@path` (with `~` expanded, relative to the current directory) becomes text prefixed
//! to the first message: `<file name="ABS">\nCONTENT\n</file>\n` for text files, and
//! `<file name="ABS"></file>\n` plus an attached image for JPEG, PNG, GIF and WebP files
//! (recognised by their first bytes, not their names). Empty files are skipped; a missing file
//! is an error. Unlike pi, images are sent as they are, not resized.

use std::io::{IsTerminal as _, Read as _};
use std::path::{Path, PathBuf};

use base64::Engine as _;
use pi_protocol::v1::message::ImageContent;

use crate::error::CliError;

/// What the first message gets from `@file` arguments.
#[derive(Debug, Default, PartialEq)]
pub struct Attachments {
    /// Text to put before the first message.
    pub text: String,
    /// Images to attach to the first message.
    pub images: Vec<ImageContent>,
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
        let name = path.display();
        match image_mime_type(&bytes) {
            Some(mime_type) => {
                attachments
                    .text
                    .push_str(&format!("<file name=\"{name}\"></file>\n"));
                attachments.images.push(ImageContent {
                    data: base64::engine::general_purpose::STANDARD.encode(&bytes),
                    mime_type: mime_type.to_owned(),
                });
            }
            None => {
                let content = String::from_utf8_lossy(&bytes);
                attachments
                    .text
                    .push_str(&format!("<file name=\"{name}\">\n{content}\n</file>\n"));
            }
        }
    }
    Ok(attachments)
}

/// The messages to send, as pi builds them: piped stdin, then the `@file` text, then the
/// first message, joined as they are (pi adds no separator), make the first prompt, with the
/// files' images; each further message is a prompt of its own.
pub fn first_messages(
    stdin: Option<String>,
    attachments: Attachments,
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

/// The image type of `bytes` by magic number: JPEG, PNG, GIF or WebP.
fn image_mime_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_image_files_become_text_and_images() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "alpha").unwrap();
        std::fs::write(dir.path().join("empty.txt"), "").unwrap();
        std::fs::write(dir.path().join("pic.bin"), b"\x89PNG\r\n\x1a\nrest").unwrap();
        let files = ["a.txt", "empty.txt", "pic.bin"].map(str::to_owned);
        let attachments = read_files(&files, dir.path()).unwrap();
        let root = dir.path().display();
        assert_eq!(
            attachments.text,
            format!(
                "<file name=\"{root}/a.txt\">\nalpha\n</file>\n<file name=\"{root}/pic.bin\"></file>\n"
            )
        );
        assert_eq!(attachments.images.len(), 1);
        assert_eq!(attachments.images[0].mime_type, "image/png");
        assert_eq!(attachments.images[0].data, "iVBORw0KGgpyZXN0");
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
        let attachments = Attachments {
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
            first_messages(Some("only".to_owned()), Attachments::default(), &[]),
            vec![("only".to_owned(), Vec::new())]
        );
    }
}
