//! [`OutputWindow`]: a command's output as it streams in — counted in full, its tail kept in
//! memory, and written to an artifact from the first byte once it outgrows the truncation
//! limits — and [`sanitize`], which cleans output for user shell commands.
//!
//! Invariant: after the spill, the in-memory window keeps more than `max_bytes` of the most
//! recent output, so tail truncation of the window equals tail truncation of the whole output.

use tokio::io::AsyncWriteExt as _;

use crate::artifacts::{ARTIFACT_SCHEME, ArtifactError, SessionArtifacts};
use crate::truncate::{Limits, Truncation, truncate_tail};

/// How the collected output is turned into text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputStyle {
    /// UTF-8 (lossy), as the program wrote it (the `bash` tool).
    Raw,
    /// ANSI escapes, control and format characters and `\r` removed (user shell commands).
    Sanitized,
}

/// The output so far: its truncated tail (with whole-output totals) and, when it was
/// truncated, the artifact holding all of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TailSnapshot {
    /// Tail truncation of the output; `content` is the text to show.
    pub truncation: Truncation,
    /// The artifact with the full output, once the output is larger than the limits.
    pub artifact_id: Option<String>,
    /// Bytes of the output's last line (after its last newline).
    pub last_line_bytes: u64,
}

impl TailSnapshot {
    /// `artifact://ID` of the full output, if stored.
    pub fn artifact_reference(&self) -> Option<String> {
        self.artifact_id
            .as_ref()
            .map(|id| format!("{ARTIFACT_SCHEME}{id}"))
    }
}

/// Collects one command's output.
pub struct OutputWindow<'a> {
    artifacts: &'a SessionArtifacts,
    style: OutputStyle,
    limits: Limits,
    // Invariant: the whole output until `spill` is set; after, its most recent part, between
    // 2 × and 4 × `limits.max_bytes` long once that much was written.
    window: Vec<u8>,
    total_bytes: u64,
    newlines: u64,
    last_line_bytes: u64,
    // The artifact receiving every byte, once the output outgrew the limits.
    spill: Option<(String, tokio::fs::File)>,
}

impl<'a> OutputWindow<'a> {
    /// An empty window with pi's default limits.
    pub fn new(artifacts: &'a SessionArtifacts, style: OutputStyle) -> OutputWindow<'a> {
        OutputWindow {
            artifacts,
            style,
            limits: Limits::DEFAULT,
            window: Vec::new(),
            total_bytes: 0,
            newlines: 0,
            last_line_bytes: 0,
            spill: None,
        }
    }

    /// Adds a chunk of output.
    pub async fn push(&mut self, chunk: &[u8]) -> Result<(), ArtifactError> {
        self.total_bytes += chunk.len() as u64;
        self.newlines += memchr::memchr_iter(b'\n', chunk).count() as u64;
        self.last_line_bytes = match memchr::memrchr(b'\n', chunk) {
            Some(index) => (chunk.len() - index - 1) as u64,
            None => self.last_line_bytes + chunk.len() as u64,
        };
        let over_limits = self.total_bytes > self.limits.max_bytes as u64
            || self.newlines + 1 > self.limits.max_lines as u64;
        if self.spill.is_none() && over_limits {
            let (id, file) = self.artifacts.create("bash")?;
            let mut file = tokio::fs::File::from_std(file);
            write(&mut file, &id, self.artifacts, &self.window).await?;
            self.spill = Some((id, file));
        }
        if let Some((id, file)) = &mut self.spill {
            write(file, id, self.artifacts, chunk).await?;
            let keep = 2 * self.limits.max_bytes;
            if self.window.len() + chunk.len() > 4 * self.limits.max_bytes {
                if chunk.len() >= keep {
                    self.window.clear();
                    self.window.extend_from_slice(&chunk[chunk.len() - keep..]);
                    return Ok(());
                }
                let drop_count = self.window.len() + chunk.len() - keep;
                self.window.drain(..drop_count);
            }
        }
        self.window.extend_from_slice(chunk);
        Ok(())
    }

    /// The output so far.
    pub fn snapshot(&self) -> TailSnapshot {
        let text = String::from_utf8_lossy(&self.window);
        let text = match self.style {
            OutputStyle::Raw => text,
            OutputStyle::Sanitized => sanitize(&text).into(),
        };
        let mut truncation = truncate_tail(&text, self.limits);
        if self.spill.is_some() {
            // The window is only the tail; report the whole output's size.
            truncation.total_lines = self.newlines + 1;
            truncation.total_bytes = self.total_bytes;
            truncation.truncated = true;
            if truncation.truncated_by.is_none() {
                truncation.truncated_by = Some(crate::truncate::TruncatedBy::Bytes);
            }
        }
        TailSnapshot {
            truncation,
            artifact_id: self.spill.as_ref().map(|(id, _)| id.clone()),
            last_line_bytes: self.last_line_bytes,
        }
    }

    /// Flushes the artifact and returns the final output.
    pub async fn finish(mut self) -> Result<TailSnapshot, ArtifactError> {
        if let Some((id, file)) = &mut self.spill {
            file.flush()
                .await
                .map_err(|source| io_error(self.artifacts, id, source))?;
        }
        Ok(self.snapshot())
    }
}

async fn write(
    file: &mut tokio::fs::File,
    id: &str,
    artifacts: &SessionArtifacts,
    bytes: &[u8],
) -> Result<(), ArtifactError> {
    file.write_all(bytes)
        .await
        .map_err(|source| io_error(artifacts, id, source))
}

fn io_error(artifacts: &SessionArtifacts, id: &str, source: std::io::Error) -> ArtifactError {
    ArtifactError::Io {
        action: "write",
        path: artifacts.dir().join(id),
        source,
    }
}

/// Removes ANSI escape sequences, `\r`, control characters other than `\n` and `\t`, and
/// invisible format characters (zero-width spaces, bidi controls, BOMs).
pub fn sanitize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            match chars.next() {
                // CSI: parameters and intermediates up to a final byte in @..~.
                Some('[') => {
                    for next in chars.by_ref() {
                        if ('@'..='~').contains(&next) {
                            break;
                        }
                    }
                }
                // OSC, DCS, SOS, PM, APC: up to BEL or ST (ESC \).
                Some(']' | 'P' | 'X' | '^' | '_') => {
                    while let Some(next) = chars.next() {
                        if next == '\u{7}' {
                            break;
                        }
                        if next == '\u{1b}' && chars.peek() == Some(&'\\') {
                            chars.next();
                            break;
                        }
                    }
                }
                // Two-character escapes (charset selection and the like).
                Some(_) | None => {}
            }
            continue;
        }
        let keep = match c {
            '\n' | '\t' => true,
            '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => false,
            '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}'
            | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}' => false,
            _ => true,
        };
        if keep {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitize_strips_escapes_and_controls() {
        let cases = [
            ("\u{1b}[1;31mred\u{1b}[0m\r\n", "red\n"),
            ("\u{1b}]0;title\u{7}text", "text"),
            ("a\u{200b}b\u{0}c\td", "abc\td"),
        ];
        for (input, expect) in cases {
            assert_eq!(sanitize(input), expect, "{input:?}");
        }
    }
}
