//! `read {path, offset?, limit?}`: a text file's lines (raw, no line numbers) with pi's limits
//! and continuation notices, an image as image content, or an artifact (`artifact://ID`).
//!
//! The file is streamed once: lines before `offset` are only counted, the selected lines are
//! kept up to just past the byte limit, and the rest is only counted, so reading deep into a
//! large file costs one pass of newline counting and no more memory than the output.

use std::fs::File;
use std::io::Read as _;
use std::path::Path;
use std::sync::Arc;

use pi_agent::{Tool, ToolFuture, ToolInvocation, ToolOutput};
use pi_llm::{ImageContent, UserContent};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::ToolContext;
use crate::artifacts::parse_reference;
use crate::support::{execute_blocking, fs_error, object_schema, whole};
use crate::truncate::{DEFAULT_MAX_BYTES, Limits, TruncatedBy, format_size, truncate_head};
use pi_image::{prepare, sniff};

const DESCRIPTION: &str = "Read the contents of a file. Supports text files and images (jpg, png, gif, webp). Images are sent as attachments. For text files, output is truncated to 2000 lines or 50KB (whichever is hit first). Use offset/limit for large files. When you need the full file, continue with offset until complete. Also reads stored command output given as artifact://ID.";
/// What a read of a file's rest takes at a time: few calls for a big file, and little held
/// while a thousand sessions read at once (one buffer per call).
const CHUNK: usize = 64 * 1024;

/// The `read` tool.
pub struct ReadTool {
    context: Arc<ToolContext>,
    schema: Value,
    description: String,
}

#[derive(Deserialize)]
struct ReadArgs {
    path: String,
    offset: Option<f64>,
    limit: Option<f64>,
}

/// Why a read failed; the text is what the model reads.
#[derive(Debug, thiserror::Error)]
enum ReadError {
    /// The model should read from a smaller offset.
    #[error("Offset {offset} is beyond end of file ({total} lines total)")]
    OffsetBeyondEnd { offset: i64, total: u64 },
    /// The model should list the directory instead.
    #[error("Cannot read {0}: it is a directory. Use the ls tool to list its contents.")]
    Directory(String),
    /// Devices, FIFOs and sockets could block or never end; the model should use bash.
    #[error("Cannot read {0}: it is not a regular file. Use bash to inspect it.")]
    Special(String),
    /// The model should inspect the file with shell tools.
    #[error(
        "Cannot read {path}: it is a binary file ({kind}, {size}). Use bash to inspect it, e.g. `file '{path}'`, `xxd '{path}' | head -50` or `strings '{path}' | head -50`."
    )]
    Binary {
        path: String,
        kind: &'static str,
        size: String,
    },
    /// The file system refused; the text is Node-style (`ENOENT: ...`).
    #[error("{0}")]
    Fs(String),
    /// The artifact reference is unknown.
    #[error("{0}")]
    Artifact(#[from] crate::artifacts::ArtifactError),
}

impl ReadTool {
    /// `read` for the session of `context`.
    pub fn new(context: Arc<ToolContext>) -> ReadTool {
        let (description, path_description) = match &context.uris {
            Some(reader) => (
                format!("{DESCRIPTION} {}", reader.describe()),
                format!(
                    "Path to the file to read (relative or absolute), artifact://ID, or {}",
                    reader.path_hint()
                ),
            ),
            None => (
                DESCRIPTION.to_owned(),
                "Path to the file to read (relative or absolute), or artifact://ID".to_owned(),
            ),
        };
        let schema = object_schema(
            json!({
                "path": {"type": "string", "description": path_description},
                "offset": {"type": "number", "description": "Line number to start reading from (1-indexed)"},
                "limit": {"type": "number", "description": "Maximum number of lines to read"},
            }),
            &["path"],
        );
        ReadTool {
            context,
            schema,
            description,
        }
    }
}

impl Tool for ReadTool {
    fn name(&self) -> &str {
        "read"
    }
    fn label(&self) -> &str {
        "Read"
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    /// pi 0.73.1's line for it in the system prompt.
    fn prompt_snippet(&self) -> Option<&str> {
        Some("Read file contents")
    }
    fn prompt_guidelines(&self) -> &[String] {
        &READ_GUIDELINES
    }
    fn execute(self: Arc<Self>, invocation: ToolInvocation) -> ToolFuture {
        if let Some(reader) = self.context.uris.clone()
            && let Some(path) = invocation.arguments["path"].as_str()
            && reader.handles(path)
        {
            return Box::pin(async move {
                let args: ReadArgs = match crate::support::parse_args("read", &invocation.arguments)
                {
                    Ok(args) => args,
                    Err(output) => return output,
                };
                let contents = tokio::select! {
                    () = invocation.cancel.cancelled() => {
                        return ToolOutput::error("Operation aborted");
                    }
                    contents = reader.read(&args.path) => contents,
                };
                match contents {
                    Ok(contents) => read_contents(&args, contents)
                        .unwrap_or_else(|error| ToolOutput::error(error.to_string())),
                    Err(error) => ToolOutput::error(error),
                }
            });
        }
        execute_blocking(
            "read",
            self.context.clone(),
            invocation,
            |context, args, _cancel| {
                read(context, args).unwrap_or_else(|error| ToolOutput::error(error.to_string()))
            },
        )
    }
}

fn read(context: &ToolContext, args: &ReadArgs) -> Result<ToolOutput, ReadError> {
    let (path, is_artifact) = match parse_reference(&args.path) {
        Some(id) => (context.artifacts.path(id)?, true),
        None => match context
            .places
            .as_ref()
            .and_then(|places| places.place(&args.path))
        {
            Some(place) => (place.map_err(ReadError::Fs)?, false),
            None => (
                crate::paths::resolve_for_read(&args.path, &context.cwd, context.home()),
                false,
            ),
        },
    };
    let metadata =
        std::fs::metadata(&path).map_err(|e| ReadError::Fs(fs_error(&e, "access", &path)))?;
    if metadata.is_dir() {
        return Err(ReadError::Directory(path.display().to_string()));
    }
    if !metadata.is_file() {
        return Err(ReadError::Special(path.display().to_string()));
    }
    let mut file = File::open(&path).map_err(|e| ReadError::Fs(fs_error(&e, "open", &path)))?;
    let mut head = vec![0u8; 8192];
    let head_len =
        read_full(&mut file, &mut head).map_err(|e| ReadError::Fs(fs_error(&e, "read", &path)))?;
    head.truncate(head_len);
    if !is_artifact {
        if let Some(kind) = sniff(&head) {
            return read_image(&path, kind, &head, &mut file, context.resize_images);
        }
        if let Some(kind) = binary_kind(&head) {
            return Err(ReadError::Binary {
                path: path.display().to_string(),
                kind,
                size: format_size(metadata.len()),
            });
        }
    }
    select_lines(args, &head, &mut file, &path)
}

/// The lines `args` selects of a text whose first bytes are `head` and whose rest `rest`
/// streams, with pi's limits and notices (`path` names it in errors).
fn select_lines(
    args: &ReadArgs,
    head: &[u8],
    rest: &mut dyn std::io::Read,
    path: &Path,
) -> Result<ToolOutput, ReadError> {
    let start = whole(args.offset).map_or(0, |offset| (offset - 1).max(0) as u64);
    let count = whole(args.limit).map(|limit| limit.max(0) as u64);
    let mut scan = LineScan::new(start, count, DEFAULT_MAX_BYTES + 8);
    scan.feed(head);
    let mut buffer = vec![0u8; CHUNK];
    loop {
        let n = rest
            .read(&mut buffer)
            .map_err(|e| ReadError::Fs(fs_error(&e, "read", path)))?;
        if n == 0 {
            break;
        }
        scan.feed(&buffer[..n]);
    }
    let total_lines = scan.newlines + 1;
    if start >= total_lines {
        return Err(ReadError::OffsetBeyondEnd {
            offset: whole(args.offset).unwrap_or(0),
            total: total_lines,
        });
    }
    let text = String::from_utf8_lossy(&scan.stored);
    let mut truncation = truncate_head(&text, Limits::DEFAULT);
    truncation.total_lines = scan.selected_newlines + 1;
    truncation.total_bytes = scan.selected_bytes;
    let first_display = start + 1;
    let display_path = &args.path;
    let (text, details) = if truncation.first_line_exceeds_limit {
        let size = format_size(scan.first_line_bytes);
        let limit = format_size(DEFAULT_MAX_BYTES as u64);
        let text = format!(
            "[Line {first_display} is {size}, exceeds {limit} limit. Use bash: sed -n '{first_display}p' {display_path} | head -c {DEFAULT_MAX_BYTES}]"
        );
        (text, json!({"truncation": truncation.to_json()}))
    } else if truncation.truncated {
        let end_display = first_display + truncation.output_lines - 1;
        let next = end_display + 1;
        let notice = match truncation.truncated_by {
            Some(TruncatedBy::Bytes) => format!(
                "[Showing lines {first_display}-{end_display} of {total_lines} ({} limit). Use offset={next} to continue.]",
                format_size(DEFAULT_MAX_BYTES as u64)
            ),
            Some(TruncatedBy::Lines) | None => format!(
                "[Showing lines {first_display}-{end_display} of {total_lines}. Use offset={next} to continue.]"
            ),
        };
        let text = format!("{}\n\n{notice}", truncation.content);
        (text, json!({"truncation": truncation.to_json()}))
    } else {
        let selected = count.map(|count| (start + count).min(total_lines) - start);
        match selected {
            Some(selected) if start + selected < total_lines => {
                let remaining = total_lines - (start + selected);
                let next = start + selected + 1;
                let text = format!(
                    "{}\n\n[{remaining} more lines in file. Use offset={next} to continue.]",
                    truncation.content
                );
                (text, json!({}))
            }
            Some(_) | None => (truncation.content.clone(), json!({})),
        }
    };
    Ok(ToolOutput::text(text).with_details(details))
}

/// What a URI reader returned, as `read` shows it: texts joined and paged like a file's
/// lines, an image as image content, other binary data described.
fn read_contents(
    args: &ReadArgs,
    contents: Vec<crate::UriContent>,
) -> Result<ToolOutput, ReadError> {
    let mut texts = Vec::new();
    let mut images = Vec::new();
    let mut preface = String::new();
    for content in contents {
        match content {
            crate::UriContent::Text(text) => texts.push(text),
            crate::UriContent::Preface(text) => preface.push_str(&text),
            crate::UriContent::Blob { base64, mime_type } if mime_type.starts_with("image/") => {
                images.push(UserContent::Image(ImageContent {
                    data: base64,
                    mime_type,
                }));
            }
            crate::UriContent::Blob { base64, mime_type } => texts.push(format!(
                "[binary content: {} of {mime_type}]",
                format_size((base64.len() * 3 / 4) as u64)
            )),
        }
    }
    if texts.is_empty() && !images.is_empty() {
        let mut content = vec![UserContent::text(format!("Read {}", args.path))];
        content.extend(images);
        return Ok(ToolOutput {
            content,
            details: json!({}),
            is_error: false,
            terminate: false,
        });
    }
    let text = texts.join("\n");
    let mut output = select_lines(
        args,
        text.as_bytes(),
        &mut std::io::empty(),
        Path::new(&args.path),
    )?;
    if !preface.is_empty()
        && let Some(UserContent::Text(first)) = output.content.first_mut()
    {
        first.text.insert_str(0, &preface);
    }
    output.content.extend(images);
    Ok(output)
}

fn read_image(
    path: &Path,
    kind: pi_image::ImageKind,
    head: &[u8],
    file: &mut File,
    resize: bool,
) -> Result<ToolOutput, ReadError> {
    let mut bytes = head.to_vec();
    file.read_to_end(&mut bytes)
        .map_err(|e| ReadError::Fs(fs_error(&e, "read", path)))?;
    let prepared = if resize {
        prepare(&bytes, kind)
    } else {
        Ok(pi_image::as_is(&bytes, kind))
    };
    match prepared {
        Ok(image) => {
            let mut text = format!("Read image file [{}]", image.mime);
            if let Some(note) = &image.note {
                text.push('\n');
                text.push_str(note);
            }
            Ok(ToolOutput {
                content: vec![
                    UserContent::text(text),
                    UserContent::Image(ImageContent {
                        data: image.data,
                        mime_type: image.mime.to_owned(),
                    }),
                ],
                details: json!({}),
                is_error: false,
                terminate: false,
            })
        }
        Err(error) => Err(ReadError::Fs(format!(
            "Cannot read image {}: {error}",
            path.display()
        ))),
    }
}

/// Reads until `buffer` is full or the file ends; returns how much was read.
fn read_full(file: &mut File, buffer: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match file.read(&mut buffer[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

/// A name for a binary file's type, if the head looks binary (a known signature or a NUL).
fn binary_kind(head: &[u8]) -> Option<&'static str> {
    let signatures: [(&[u8], &'static str); 8] = [
        (b"%PDF", "PDF document"),
        (b"PK\x03\x04", "zip archive"),
        (b"\x7fELF", "ELF executable"),
        (b"\x1f\x8b", "gzip data"),
        (b"BZh", "bzip2 data"),
        (b"\xfd7zXZ\x00", "xz data"),
        (b"SQLite format 3\x00", "SQLite database"),
        (b"\x00asm", "WebAssembly module"),
    ];
    signatures
        .iter()
        .find(|(magic, _)| head.starts_with(magic))
        .map(|(_, kind)| *kind)
        .or_else(|| memchr::memchr(0, head).map(|_| "unknown type"))
}

/// One pass over a file: counts all lines, and keeps the selected lines (from line `start`,
/// at most `count` of them) up to `cap` bytes while counting their full size.
struct LineScan {
    start: u64,
    count: Option<u64>,
    cap: usize,
    phase: Phase,
    // Newlines seen in the whole file so far.
    newlines: u64,
    // Newlines seen since the selection began, including the one that ends it.
    selection_newlines_seen: u64,
    selected_newlines: u64,
    selected_bytes: u64,
    first_line_bytes: u64,
    first_line_open: bool,
    stored: Vec<u8>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Skip,
    Select,
    Rest,
}

impl LineScan {
    fn new(start: u64, count: Option<u64>, cap: usize) -> LineScan {
        LineScan {
            start,
            count,
            cap,
            phase: if start == 0 {
                Phase::Select
            } else {
                Phase::Skip
            },
            newlines: 0,
            selection_newlines_seen: 0,
            selected_newlines: 0,
            selected_bytes: 0,
            first_line_bytes: 0,
            first_line_open: true,
            stored: Vec::new(),
        }
    }

    fn feed(&mut self, chunk: &[u8]) {
        let mut pos = 0;
        while pos < chunk.len() {
            match self.phase {
                Phase::Skip => {
                    let (found, next) = advance(&chunk[pos..], self.start - self.newlines);
                    self.newlines += found;
                    pos += next;
                    if self.newlines == self.start {
                        self.phase = Phase::Select;
                    }
                }
                Phase::Select => {
                    let remaining = match self.count {
                        Some(count) => count.saturating_sub(self.selection_newlines_seen),
                        None => u64::MAX,
                    };
                    if remaining == 0 {
                        self.phase = Phase::Rest;
                        continue;
                    }
                    let rest = &chunk[pos..];
                    let (found, next) = advance(rest, remaining);
                    let ends_selection = found == remaining;
                    let region = &rest[..if ends_selection { next - 1 } else { next }];
                    let room = self.cap.saturating_sub(self.stored.len());
                    self.stored
                        .extend_from_slice(&region[..room.min(region.len())]);
                    if self.first_line_open {
                        match memchr::memchr(b'\n', region) {
                            Some(index) => {
                                self.first_line_bytes += index as u64;
                                self.first_line_open = false;
                            }
                            None => self.first_line_bytes += region.len() as u64,
                        }
                    }
                    self.selected_bytes += region.len() as u64;
                    self.newlines += found;
                    self.selection_newlines_seen += found;
                    if ends_selection {
                        self.selected_newlines += found - 1;
                        self.first_line_open = false;
                        self.phase = Phase::Rest;
                    } else {
                        self.selected_newlines += found;
                    }
                    pos += next;
                }
                Phase::Rest => {
                    self.newlines += memchr::memchr_iter(b'\n', &chunk[pos..]).count() as u64;
                    pos = chunk.len();
                }
            }
        }
    }
}

/// Finds up to `wanted` newlines in `bytes`; returns how many were found and the position
/// after the last one found (or the end when fewer were found).
fn advance(bytes: &[u8], wanted: u64) -> (u64, usize) {
    let mut found = 0;
    for index in memchr::memchr_iter(b'\n', bytes) {
        found += 1;
        if found == wanted {
            return (found, index + 1);
        }
    }
    (found, bytes.len())
}

/// pi 0.73.1's guidelines for this tool in the system prompt.
static READ_GUIDELINES: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
    vec!["Use read to examine files instead of cat or sed.".to_owned()]
});

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, start: u64, count: Option<u64>, expect: (&str, u64, u64, u64)) {
        for chunk_size in [1, 3, 1024] {
            let mut scan = LineScan::new(start, count, 64);
            for chunk in text.as_bytes().chunks(chunk_size) {
                scan.feed(chunk);
            }
            let got = (
                String::from_utf8_lossy(&scan.stored).into_owned(),
                scan.newlines + 1,
                scan.selected_newlines + 1,
                scan.selected_bytes,
            );
            assert_eq!(
                (got.0.as_str(), got.1, got.2, got.3),
                expect,
                "{text:?} start {start} count {count:?} chunks of {chunk_size}"
            );
        }
    }

    #[test]
    fn line_scan_selects_like_split_slice_join() {
        check("a\nb\nc\n", 0, None, ("a\nb\nc\n", 4, 4, 6));
        check("a\nb\nc\n", 1, None, ("b\nc\n", 4, 3, 4));
        check("a\nb\nc\n", 1, Some(1), ("b", 4, 1, 1));
        check("a\nb\nc", 2, Some(5), ("c", 3, 1, 1));
        check("a\nbb\nc", 0, Some(0), ("", 3, 1, 0));
        check("one", 0, None, ("one", 1, 1, 3));
    }
}
