//! pi's file-operation tracking: which files the summarized conversation read and modified,
//! from the `read`, `write` and `edit` tool calls of assistant messages (their raw `path`
//! argument), accumulated across compactions and branch summaries through their `details`.
//!
//! The lists are appended to every summary as `<read-files>` / `<modified-files>` blocks and
//! stored in the entry's `details {readFiles, modifiedFiles}`.

use std::cmp::Ordering;
use std::collections::HashSet;

use pi_agent::AgentMessage;
use pi_llm::AssistantContent;
use serde_json::{Value, json};

/// Files seen in tool calls, by operation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileOperations {
    /// Paths passed to `read`.
    pub read: HashSet<String>,
    /// Paths passed to `write`.
    pub written: HashSet<String>,
    /// Paths passed to `edit` (and modified files carried over from earlier summaries).
    pub edited: HashSet<String>,
}

/// The lists stored in `details` and appended to a summary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileLists {
    /// Files read but not modified, sorted.
    pub read_files: Vec<String>,
    /// Files written or edited, sorted.
    pub modified_files: Vec<String>,
}

impl FileOperations {
    /// Adds the `read`/`write`/`edit` calls of an assistant message (pi's
    /// `extractFileOpsFromMessage`); other messages and tools are ignored.
    pub fn add_message(&mut self, message: &AgentMessage) {
        let AgentMessage::Assistant(assistant) = message else {
            return;
        };
        for block in &assistant.content {
            let AssistantContent::ToolCall(call) = block else {
                continue;
            };
            let Some(path) = call.arguments.get("path").and_then(Value::as_str) else {
                continue;
            };
            if path.is_empty() {
                continue;
            }
            let set = match call.name.as_str() {
                "read" => &mut self.read,
                "write" => &mut self.written,
                "edit" => &mut self.edited,
                _ => continue,
            };
            if !set.contains(path) {
                set.insert(path.to_owned());
            }
        }
    }

    /// Carries over the lists of an earlier summary: read files stay read, modified files
    /// count as edited.
    pub fn add_lists(&mut self, lists: &FileLists) {
        self.read.extend(lists.read_files.iter().cloned());
        self.edited.extend(lists.modified_files.iter().cloned());
    }

    /// pi's `computeFileLists`: modified = edited ∪ written; read = read − modified; both
    /// sorted by UTF-16 code units, as JavaScript's `sort()`.
    pub fn lists(&self) -> FileLists {
        let mut modified_files: Vec<String> = self.edited.union(&self.written).cloned().collect();
        modified_files.sort_by(|a, b| js_order(a, b));
        let mut read_files: Vec<String> = self
            .read
            .iter()
            .filter(|path| !self.edited.contains(*path) && !self.written.contains(*path))
            .cloned()
            .collect();
        read_files.sort_by(|a, b| js_order(a, b));
        FileLists {
            read_files,
            modified_files,
        }
    }
}

impl FileLists {
    /// pi's `formatFileOperations`: nothing when both lists are empty, else a blank line and
    /// the non-empty blocks separated by a blank line.
    pub fn format(&self) -> String {
        let mut sections = Vec::new();
        if !self.read_files.is_empty() {
            sections.push(format!(
                "<read-files>\n{}\n</read-files>",
                self.read_files.join("\n")
            ));
        }
        if !self.modified_files.is_empty() {
            sections.push(format!(
                "<modified-files>\n{}\n</modified-files>",
                self.modified_files.join("\n")
            ));
        }
        if sections.is_empty() {
            return String::new();
        }
        format!("\n\n{}", sections.join("\n\n"))
    }

    /// The entry's `details`: `{readFiles, modifiedFiles}`.
    pub fn to_details(&self) -> Value {
        json!({"readFiles": self.read_files, "modifiedFiles": self.modified_files})
    }

    /// Reads an entry's `details` leniently, as pi does: each list is used when it is an
    /// array; non-string items are skipped.
    pub fn from_details(details: &Value) -> FileLists {
        let list = |key: &str| -> Vec<String> {
            details
                .get(key)
                .and_then(Value::as_array)
                .map(|items| {
                    items
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default()
        };
        FileLists {
            read_files: list("readFiles"),
            modified_files: list("modifiedFiles"),
        }
    }
}

fn js_order(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}
