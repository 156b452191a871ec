//! `ls {path?, limit?}`: a directory's entries (dotfiles included) sorted case-insensitively,
//! directories (symlinks followed) ending in `/`, with pi's limits and notices. Entries that
//! cannot be stat'ed are skipped.

use std::sync::Arc;

use pi_agent::{Tool, ToolFuture, ToolInvocation, ToolOutput};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::ToolContext;
use crate::support::{execute_blocking, object_schema, whole};
use crate::truncate::{DEFAULT_MAX_BYTES, Limits, format_size, truncate_head};

const DESCRIPTION: &str = "List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories. Includes dotfiles. Output is truncated to 500 entries or 50KB (whichever is hit first).";
const DEFAULT_LIMIT: i64 = 500;

/// The tool's parameters, the same for every session.
static SCHEMA: std::sync::LazyLock<Value> = std::sync::LazyLock::new(|| {
    object_schema(
        json!({
            "path": {"type": "string", "description": "Directory to list (default: current directory)"},
            "limit": {"type": "number", "description": "Maximum number of entries to return (default: 500)"},
        }),
        &[],
    )
});

/// The `ls` tool.
pub struct LsTool {
    context: Arc<ToolContext>,
}

#[derive(Deserialize)]
struct LsArgs {
    path: Option<String>,
    limit: Option<f64>,
}

impl LsTool {
    /// `ls` for the session of `context`.
    pub fn new(context: Arc<ToolContext>) -> LsTool {
        LsTool { context }
    }
}

impl Tool for LsTool {
    fn name(&self) -> &str {
        "ls"
    }
    fn label(&self) -> &str {
        "List"
    }
    fn description(&self) -> &str {
        DESCRIPTION
    }
    fn parameters(&self) -> &Value {
        &SCHEMA
    }
    /// pi 0.73.1's line for it in the system prompt.
    fn prompt_snippet(&self) -> Option<&str> {
        Some("List directory contents")
    }
    fn execute(self: Arc<Self>, invocation: ToolInvocation) -> ToolFuture {
        execute_blocking(
            "ls",
            self.context.clone(),
            invocation,
            |context, args, _cancel| list(context, args),
        )
    }
}

fn list(context: &ToolContext, args: &LsArgs) -> ToolOutput {
    let dir = match context.place(args.path.as_deref().unwrap_or(".")) {
        Ok(dir) => dir,
        Err(error) => return ToolOutput::error(error),
    };
    match std::fs::metadata(&dir) {
        Err(_) => return ToolOutput::error(format!("Path not found: {}", dir.display())),
        Ok(metadata) if !metadata.is_dir() => {
            return ToolOutput::error(format!("Not a directory: {}", dir.display()));
        }
        Ok(_) => {}
    }
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(error) => return ToolOutput::error(format!("Cannot read directory: {error}")),
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort_by(|a, b| {
        a.to_lowercase()
            .cmp(&b.to_lowercase())
            .then_with(|| a.cmp(b))
    });
    let limit = whole(args.limit).unwrap_or(DEFAULT_LIMIT).max(1) as usize;
    let mut results: Vec<String> = Vec::new();
    let mut limit_reached = false;
    for name in names {
        if results.len() >= limit {
            limit_reached = true;
            break;
        }
        let Ok(metadata) = std::fs::metadata(dir.join(&name)) else {
            continue;
        };
        results.push(if metadata.is_dir() {
            format!("{name}/")
        } else {
            name
        });
    }
    if results.is_empty() {
        return ToolOutput::text("(empty directory)");
    }
    let raw = results.join("\n");
    let truncation = truncate_head(&raw, Limits::BYTES_ONLY);
    let mut text = truncation.content.clone();
    let mut details = serde_json::Map::new();
    let mut notices = Vec::new();
    if limit_reached {
        notices.push(format!(
            "{limit} entries limit reached. Use limit={} for more",
            limit * 2
        ));
        details.insert("entryLimitReached".into(), json!(limit));
    }
    if truncation.truncated {
        notices.push(format!(
            "{} limit reached",
            format_size(DEFAULT_MAX_BYTES as u64)
        ));
        details.insert("truncation".into(), truncation.to_json());
    }
    if !notices.is_empty() {
        text.push_str(&format!("\n\n[{}]", notices.join(". ")));
    }
    ToolOutput::text(text).with_details(Value::Object(details))
}
