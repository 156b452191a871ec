//! `find {pattern, path?, limit?}`: files and directories whose name (or, for a pattern with a
//! `/`, whose path relative to the search directory) matches a glob. Walks with `ignore`
//! (`.gitignore` and `.ignore` respected, hidden entries included, `.git` skipped) in sorted
//! order, so results are deterministic; prints one relative path per line with `/` separators,
//! directories ending in `/`, with pi's limits and notices.

use std::sync::Arc;

use globset::GlobBuilder;
use ignore::WalkBuilder;
use pi_agent::{Tool, ToolFuture, ToolInvocation, ToolOutput};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::ToolContext;
use crate::paths::relative_display;
use crate::support::{execute_blocking, object_schema, whole};
use crate::truncate::{DEFAULT_MAX_BYTES, Limits, format_size, truncate_head};

const DESCRIPTION: &str = "Search for files by glob pattern. Returns matching file paths relative to the search directory. Respects .gitignore. Output is truncated to 1000 results or 50KB (whichever is hit first).";
const DEFAULT_LIMIT: i64 = 1000;

/// The tool's parameters, the same for every session.
static SCHEMA: std::sync::LazyLock<Value> = std::sync::LazyLock::new(|| {
    object_schema(
        json!({
            "pattern": {"type": "string", "description": "Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'"},
            "path": {"type": "string", "description": "Directory to search in (default: current directory)"},
            "limit": {"type": "number", "description": "Maximum number of results (default: 1000)"},
        }),
        &["pattern"],
    )
});

/// The `find` tool.
pub struct FindTool {
    context: Arc<ToolContext>,
}

#[derive(Deserialize)]
struct FindArgs {
    pattern: String,
    path: Option<String>,
    limit: Option<f64>,
}

impl FindTool {
    /// `find` for the session of `context`.
    pub fn new(context: Arc<ToolContext>) -> FindTool {
        FindTool { context }
    }
}

impl Tool for FindTool {
    fn name(&self) -> &str {
        "find"
    }
    fn label(&self) -> &str {
        "Find"
    }
    fn description(&self) -> &str {
        DESCRIPTION
    }
    fn parameters(&self) -> &Value {
        &SCHEMA
    }
    /// pi 0.73.1's line for it in the system prompt.
    fn prompt_snippet(&self) -> Option<&str> {
        Some("Find files by glob pattern (respects .gitignore)")
    }
    fn execute(self: Arc<Self>, invocation: ToolInvocation) -> ToolFuture {
        execute_blocking("find", self.context.clone(), invocation, find)
    }
}

fn find(context: &ToolContext, args: &FindArgs, cancel: &CancellationToken) -> ToolOutput {
    let root = match context.place(args.path.as_deref().unwrap_or(".")) {
        Ok(root) => root,
        Err(error) => return ToolOutput::error(error),
    };
    match std::fs::metadata(&root) {
        Err(_) => return ToolOutput::error(format!("Path not found: {}", root.display())),
        Ok(metadata) if !metadata.is_dir() => {
            return ToolOutput::error(format!("Not a directory: {}", root.display()));
        }
        Ok(_) => {}
    }
    let whole_path = args.pattern.contains('/');
    let glob = match GlobBuilder::new(args.pattern.trim_start_matches("./"))
        .literal_separator(true)
        .build()
    {
        Ok(glob) => glob.compile_matcher(),
        Err(error) => return ToolOutput::error(format!("Invalid glob pattern: {error}")),
    };
    let limit = whole(args.limit).unwrap_or(DEFAULT_LIMIT).max(1) as usize;
    let mut found: Vec<String> = Vec::new();
    let walk = WalkBuilder::new(&root)
        .hidden(false)
        .git_ignore(true)
        .git_global(false)
        .git_exclude(true)
        .require_git(false)
        .ignore(true)
        .parents(true)
        .filter_entry(|entry| entry.file_name() != ".git")
        .sort_by_file_name(|a, b| a.cmp(b))
        .build();
    for entry in walk {
        if cancel.is_cancelled() || found.len() >= limit {
            break;
        }
        let Ok(entry) = entry else { continue };
        if entry.depth() == 0 {
            continue;
        }
        let relative = relative_display(entry.path(), &root);
        let subject = if whole_path {
            relative.as_str()
        } else {
            relative.rsplit('/').next().unwrap_or_default()
        };
        if !glob.is_match(subject) {
            continue;
        }
        let is_dir = entry.file_type().is_some_and(|kind| kind.is_dir());
        found.push(if is_dir {
            format!("{relative}/")
        } else {
            relative
        });
    }
    if found.is_empty() {
        return ToolOutput::text("No files found matching pattern");
    }
    let raw = found.join("\n");
    let truncation = truncate_head(&raw, Limits::BYTES_ONLY);
    let mut text = truncation.content.clone();
    let mut details = serde_json::Map::new();
    let mut notices = Vec::new();
    if found.len() >= limit {
        notices.push(format!(
            "{limit} results limit reached. Use limit={} for more, or refine pattern",
            limit * 2
        ));
        details.insert("resultLimitReached".into(), json!(limit));
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
