//! `edit {path, edits: [{oldText, newText}]}` (and the legacy `{path, oldText, newText}`):
//! exact text replacement with pi's rules. Every edit is matched against the original content;
//! each must match exactly once; overlapping edits are rejected; nothing is written unless all
//! edits apply. When any edit only matches after pi's fuzzy normalization, all are matched in
//! that space — but only the matched ranges of the original are rewritten, so the rest of the
//! file (line endings, BOM, whitespace, other Unicode) stays byte-identical.
//!
//! The whole read-modify-write holds the path's [`crate::PathLocks`] lock.

mod diff;
mod matching;

use std::sync::Arc;

use pi_agent::{ABORTED, Tool, ToolFuture, ToolInvocation, ToolOutput};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::ToolContext;
use crate::support::{blocking_to_completion, fs_error, object_schema, parse_args};
use crate::write::write_atomically;
use diff::{EditDiff, Replacement};
use matching::{View, normalize_fuzzy, normalize_line_feeds, occurrences};

/// pi 0.73.1's words, so that a model sees the same tool in pi and pid.
const DESCRIPTION: &str = "Edit a single file using exact text replacement. Every edits[].oldText must match a unique, non-overlapping region of the original file. If two changes affect the same block or nearby lines, merge them into one edit instead of emitting overlapping edits. Do not include large unchanged regions just to connect distant changes.";
const BOM: &str = "\u{feff}";
/// Most line numbers an ambiguity error lists.
const MAX_LISTED_LINES: usize = 10;

/// The tool's parameters, the same for every session.
/// pi 0.73.1's schema, key for key (a legacy single `oldText`/`newText` is still accepted, as
/// pi accepts it, without being offered).
static SCHEMA: std::sync::LazyLock<Value> = std::sync::LazyLock::new(|| {
    let edit_item = json!({
        "type": "object",
        "required": ["oldText", "newText"],
        "properties": {
            "oldText": {"type": "string", "description": "Exact text for one targeted replacement. It must be unique in the original file and must not overlap with any other edits[].oldText in the same call."},
            "newText": {"type": "string", "description": "Replacement text for this targeted edit."},
        },
        "additionalProperties": false,
    });
    let mut schema = object_schema(
        json!({
            "path": {"type": "string", "description": "Path to the file to edit (relative or absolute)"},
            "edits": {
                "type": "array",
                "items": edit_item,
                "description": "One or more targeted replacements. Each edit is matched against the original file, not incrementally. Do not include overlapping or nested edits. If two changes touch the same block or nearby lines, merge them into one edit instead.",
            },
        }),
        &["path", "edits"],
    );
    schema["additionalProperties"] = json!(false);
    schema
});

/// The `edit` tool.
pub struct EditTool {
    context: Arc<ToolContext>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct EditArgs {
    path: String,
    edits: Option<Value>,
    old_text: Option<String>,
    new_text: Option<String>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct OneEdit {
    old_text: String,
    new_text: String,
}

/// Why an edit was refused; the text is what the model reads. `index` is the edit's position
/// in `edits`; with a single edit the texts are pi's single-replacement ones.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
enum EditError {
    /// The model should send at least one replacement.
    #[error("Edit tool input is invalid. edits must contain at least one replacement.")]
    NoEdits,
    /// The arguments do not have the expected shape; the model should resend them.
    #[error("Edit tool input is invalid. {0}")]
    Invalid(String),
    /// The model should check the path.
    #[error("File not found: {0}")]
    FileNotFound(String),
    /// The model should use `write` for non-UTF-8 files (or not edit them).
    #[error("Cannot edit {0}: it is not a UTF-8 text file.")]
    NotText(String),
    /// The model should give the text to replace.
    #[error("{}", if *single { format!("oldText must not be empty in {path}.") } else { format!("edits[{index}].oldText must not be empty in {path}.") })]
    EmptyOldText {
        single: bool,
        index: usize,
        path: String,
    },
    /// The model should re-read the file and copy the text exactly.
    #[error("{}", if *single { format!("Could not find the exact text in {path}. The old text must match exactly including all whitespace and newlines.") } else { format!("Could not find edits[{index}] in {path}. The oldText must match exactly including all whitespace and newlines.") })]
    NotFound {
        single: bool,
        index: usize,
        path: String,
    },
    /// The model should add surrounding lines until the text is unique.
    #[error("{}", if *single { format!("Found {count} occurrences of the text in {path} (lines {lines}). The text must be unique. Please provide more context to make it unique.") } else { format!("Found {count} occurrences of edits[{index}] in {path} (lines {lines}). Each oldText must be unique. Please provide more context to make it unique.") })]
    Ambiguous {
        single: bool,
        index: usize,
        path: String,
        count: usize,
        lines: String,
    },
    /// The model should merge the two edits.
    #[error(
        "edits[{first}] and edits[{second}] overlap in {path}. Merge them into one edit or target disjoint regions."
    )]
    Overlap {
        first: usize,
        second: usize,
        path: String,
    },
    /// The replacement changes nothing; the model should check what it meant to change.
    #[error(
        "No changes made to {0}. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected."
    )]
    NoChange(String),
}

/// A planned change: the new file and what to report.
#[derive(Debug)]
struct Planned {
    bytes: Vec<u8>,
    diff: EditDiff,
    blocks: usize,
}

impl EditTool {
    /// `edit` for the session of `context`.
    pub fn new(context: Arc<ToolContext>) -> EditTool {
        EditTool { context }
    }
}

impl Tool for EditTool {
    fn name(&self) -> &str {
        "edit"
    }
    fn label(&self) -> &str {
        "Edit"
    }
    fn description(&self) -> &str {
        DESCRIPTION
    }
    fn parameters(&self) -> &Value {
        &SCHEMA
    }
    /// pi 0.73.1's line for it in the system prompt.
    /// pi's `prepareEditArguments`: `edits` sent as a JSON string is parsed, and a legacy
    /// single `oldText`/`newText` joins `edits`.
    fn prepare_arguments(&self, arguments: Value) -> Value {
        let Value::Object(mut args) = arguments else {
            return arguments;
        };
        if let Some(Value::String(text)) = args.get("edits")
            && let Ok(parsed @ Value::Array(_)) = serde_json::from_str::<Value>(text)
        {
            args.insert("edits".to_owned(), parsed);
        }
        if !(args.get("oldText").is_some_and(Value::is_string)
            && args.get("newText").is_some_and(Value::is_string))
        {
            return Value::Object(args);
        }
        let old_text = args.shift_remove("oldText").unwrap_or_default();
        let new_text = args.shift_remove("newText").unwrap_or_default();
        let mut edits = match args.shift_remove("edits") {
            Some(Value::Array(edits)) => edits,
            _ => Vec::new(),
        };
        edits.push(json!({"oldText": old_text, "newText": new_text}));
        args.insert("edits".to_owned(), Value::Array(edits));
        Value::Object(args)
    }
    fn prompt_snippet(&self) -> Option<&str> {
        Some(
            "Make precise file edits with exact text replacement, including multiple disjoint edits in one call",
        )
    }
    fn prompt_guidelines(&self) -> &[String] {
        &EDIT_GUIDELINES
    }
    fn execute(self: Arc<Self>, invocation: ToolInvocation) -> ToolFuture {
        Box::pin(async move {
            let args: EditArgs = match parse_args("edit", &invocation.arguments) {
                Ok(args) => args,
                Err(output) => return output,
            };
            let edits = match collect_edits(&args) {
                Ok(edits) => edits,
                Err(error) => return ToolOutput::error(error.to_string()),
            };
            let path = match self.context.place(&args.path) {
                Ok(path) => path,
                Err(error) => return ToolOutput::error(error),
            };
            if let Err(refused) = self.context.check_write(&path) {
                return ToolOutput::error(refused);
            }
            let guard = tokio::select! {
                biased;
                () = invocation.cancel.cancelled() => return ToolOutput::error(ABORTED),
                guard = self.context.locks.lock(&path) => guard,
            };
            let display_path = args.path.clone();
            let changed = path.clone();
            let work = move || {
                let _guard = guard;
                let original = match std::fs::read(&path) {
                    Ok(bytes) => bytes,
                    Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                        return ToolOutput::error(
                            EditError::FileNotFound(display_path).to_string(),
                        );
                    }
                    Err(error) => return ToolOutput::error(fs_error(&error, "open", &path)),
                };
                let planned = match plan(&original, &edits, &display_path) {
                    Ok(planned) => planned,
                    Err(error) => return ToolOutput::error(error.to_string()),
                };
                if let Err(error) = write_atomically(&path, &planned.bytes) {
                    return ToolOutput::error(fs_error(&error, "open", &path));
                }
                ToolOutput::text(format!(
                    "Successfully replaced {} block(s) in {display_path}.",
                    planned.blocks
                ))
                .with_details(json!({
                    "diff": planned.diff.display,
                    "firstChangedLine": planned.diff.first_changed_line,
                }))
            };
            match blocking_to_completion(work).await {
                Ok(mut output) => {
                    if !output.is_error
                        && let Some(files) = &self.context.files
                        && let Some(note) = files.changed(&changed, crate::ChangedBy::Edit).await
                    {
                        crate::append_note(&mut output, &note);
                    }
                    output
                }
                Err(output) => output,
            }
        })
    }
}

/// pi's `prepareArguments`: `edits` as an array, a JSON string or one object, plus the legacy
/// top-level `oldText`/`newText`.
fn collect_edits(args: &EditArgs) -> Result<Vec<OneEdit>, EditError> {
    let mut edits: Vec<OneEdit> = match &args.edits {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(text)) => {
            parse_edits(&serde_json::from_str(text).map_err(|error| {
                EditError::Invalid(format!("edits is not valid JSON: {error}"))
            })?)?
        }
        Some(other) => parse_edits(other)?,
    };
    match (&args.old_text, &args.new_text) {
        (Some(old_text), Some(new_text)) => edits.push(OneEdit {
            old_text: old_text.clone(),
            new_text: new_text.clone(),
        }),
        (Some(_), None) => {
            return Err(EditError::Invalid(
                "newText is required with oldText.".into(),
            ));
        }
        (None, Some(_)) => {
            return Err(EditError::Invalid(
                "oldText is required with newText.".into(),
            ));
        }
        (None, None) => {}
    }
    if edits.is_empty() {
        return Err(EditError::NoEdits);
    }
    Ok(edits)
}

fn parse_edits(value: &Value) -> Result<Vec<OneEdit>, EditError> {
    let items = match value {
        Value::Array(items) => items.clone(),
        Value::Object(_) => vec![value.clone()],
        _ => {
            return Err(EditError::Invalid(
                "edits must be an array of {oldText, newText}.".into(),
            ));
        }
    };
    items
        .into_iter()
        .enumerate()
        .map(|(index, item)| {
            serde_json::from_value(item)
                .map_err(|error| EditError::Invalid(format!("edits[{index}]: {error}.")))
        })
        .collect()
}

/// Applies `edits` to `original` (all or nothing).
fn plan(original: &[u8], edits: &[OneEdit], path: &str) -> Result<Planned, EditError> {
    let text = std::str::from_utf8(original).map_err(|_| EditError::NotText(path.to_owned()))?;
    let (bom, body) = match text.strip_prefix(BOM) {
        Some(body) => (BOM, body),
        None => ("", text),
    };
    let crlf = uses_crlf(body);
    let single = edits.len() == 1;
    let needles: Vec<(String, String)> = edits
        .iter()
        .map(|edit| {
            (
                normalize_line_feeds(&edit.old_text),
                normalize_line_feeds(&edit.new_text),
            )
        })
        .collect();
    for (index, (old_text, _)) in needles.iter().enumerate() {
        if old_text.is_empty() {
            return Err(EditError::EmptyOldText {
                single,
                index,
                path: path.to_owned(),
            });
        }
    }
    let exact = View::line_feeds(body);
    let all_exact = needles.iter().all(|(old_text, _)| {
        memchr::memmem::find(exact.text.as_bytes(), old_text.as_bytes()).is_some()
    });
    let (view, patterns): (View<'_>, Vec<String>) = if all_exact {
        (
            exact,
            needles
                .iter()
                .map(|(old_text, _)| old_text.clone())
                .collect(),
        )
    } else {
        (
            View::fuzzy(body),
            needles
                .iter()
                .map(|(old_text, _)| normalize_fuzzy(old_text))
                .collect(),
        )
    };
    let mut replacements: Vec<(usize, Replacement)> = Vec::with_capacity(edits.len());
    for (index, pattern) in patterns.iter().enumerate() {
        let found = occurrences(&view.text, pattern);
        let ranges: Vec<(usize, usize)> = found
            .iter()
            .map(|&start| view.original_range(start, start + pattern.len()))
            .collect();
        match ranges[..] {
            [] => {
                return Err(EditError::NotFound {
                    single,
                    index,
                    path: path.to_owned(),
                });
            }
            [(start, end)] => {
                let new_text = &needles[index].1;
                let text = if crlf {
                    new_text.replace('\n', "\r\n")
                } else {
                    new_text.clone()
                };
                replacements.push((index, Replacement { start, end, text }));
            }
            _ => {
                return Err(EditError::Ambiguous {
                    single,
                    index,
                    path: path.to_owned(),
                    count: ranges.len(),
                    lines: line_list(body, &ranges),
                });
            }
        }
    }
    replacements.sort_by_key(|(_, replacement)| replacement.start);
    for pair in replacements.windows(2) {
        let [(first_index, first), (second_index, second)] = pair else {
            continue;
        };
        if second.start < first.end {
            return Err(EditError::Overlap {
                first: *first_index.min(second_index),
                second: *first_index.max(second_index),
                path: path.to_owned(),
            });
        }
    }
    let replacements: Vec<Replacement> = replacements.into_iter().map(|(_, r)| r).collect();
    if replacements.iter().all(|r| body[r.start..r.end] == r.text) {
        return Err(EditError::NoChange(path.to_owned()));
    }
    let added: usize = replacements.iter().map(|r| r.text.len()).sum();
    let mut bytes = Vec::with_capacity(original.len() + added);
    bytes.extend_from_slice(bom.as_bytes());
    let mut copied = 0;
    for replacement in &replacements {
        bytes.extend_from_slice(&body.as_bytes()[copied..replacement.start]);
        bytes.extend_from_slice(replacement.text.as_bytes());
        copied = replacement.end;
    }
    bytes.extend_from_slice(&body.as_bytes()[copied..]);
    let diff = diff::diff(body, &replacements);
    Ok(Planned {
        bytes,
        diff,
        blocks: replacements.len(),
    })
}

/// pi's `detectLineEnding`: CRLF when the first newline is preceded by `\r`.
fn uses_crlf(text: &str) -> bool {
    memchr::memchr(b'\n', text.as_bytes())
        .is_some_and(|index| index > 0 && text.as_bytes()[index - 1] == b'\r')
}

/// `3, 10, 42` — the 1-based lines where `ranges` start, at most [`MAX_LISTED_LINES`].
fn line_list(text: &str, ranges: &[(usize, usize)]) -> String {
    let mut lines = Vec::new();
    let (mut line, mut counted) = (1usize, 0usize);
    for &(start, _) in ranges.iter().take(MAX_LISTED_LINES) {
        line += memchr::memchr_iter(b'\n', &text.as_bytes()[counted..start]).count();
        counted = start;
        lines.push(line.to_string());
    }
    if ranges.len() > MAX_LISTED_LINES {
        lines.push("…".to_owned());
    }
    lines.join(", ")
}

/// pi 0.73.1's guidelines for this tool in the system prompt.
static EDIT_GUIDELINES: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
    vec![
        "Use edit for precise changes (edits[].oldText must match exactly)".to_owned(),
        "When changing multiple separate locations in one file, use one edit call with multiple entries in edits[] instead of multiple edit calls".to_owned(),
        "Each edits[].oldText is matched against the original file, not after earlier edits are applied. Do not emit overlapping or nested edits. Merge nearby changes into one edit.".to_owned(),
        "Keep edits[].oldText as small as possible while still being unique in the file. Do not pad with large unchanged regions.".to_owned(),
    ]
});

#[cfg(test)]
mod tests;
