//! `grep {pattern, path?, glob?, ignoreCase?, literal?, context?, limit?}`: searches file
//! contents in-process with ripgrep's crates (`ignore` walks in parallel honouring
//! `.gitignore`/`.ignore`, hidden files included, `.git` skipped; `grep-searcher` with a
//! `grep-regex` matcher searches), then prints pi's format: `path:line: text` for matches,
//! `path-line- text` for context, one block per match, lines capped at 500 characters, the
//! whole output capped at 50 KB, and pi's notices.
//!
//! The matcher adds an inner-literal line search (see [`matcher`]).
//!
//! Files are reported in path order, lines in file order. When the match limit stops the
//! search early, which matches were found first depends on thread timing, as with ripgrep.

mod matcher;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::{WalkBuilder, WalkState};
use pi_agent::{Tool, ToolFuture, ToolInvocation, ToolOutput};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::ToolContext;
use crate::paths::relative_display;
use crate::support::{execute_blocking, object_schema, whole};
use crate::truncate::{DEFAULT_MAX_BYTES, GREP_MAX_LINE_CHARS, Limits, format_size, truncate_head};
use matcher::LineMatcher;

const DESCRIPTION: &str = "Search file contents for a pattern. Returns matching lines with file paths and line numbers. Respects .gitignore. Output is truncated to 100 matches or 50KB (whichever is hit first). Long lines are truncated to 500 chars.";
const DEFAULT_LIMIT: i64 = 100;

/// The tool's parameters, the same for every session.
static SCHEMA: std::sync::LazyLock<Value> = std::sync::LazyLock::new(|| {
    object_schema(
        json!({
            "pattern": {"type": "string", "description": "Search pattern (regex or literal string)"},
            "path": {"type": "string", "description": "Directory or file to search (default: current directory)"},
            "glob": {"type": "string", "description": "Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'"},
            "ignoreCase": {"type": "boolean", "description": "Case-insensitive search (default: false)"},
            "literal": {"type": "boolean", "description": "Treat pattern as literal string instead of regex (default: false)"},
            "context": {"type": "number", "description": "Number of lines to show before and after each match (default: 0)"},
            "limit": {"type": "number", "description": "Maximum number of matches to return (default: 100)"},
        }),
        &["pattern"],
    )
});

/// The `grep` tool.
pub struct GrepTool {
    context: Arc<ToolContext>,
}

#[derive(Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct GrepArgs {
    pattern: String,
    path: Option<String>,
    glob: Option<String>,
    ignore_case: Option<bool>,
    literal: Option<bool>,
    context: Option<f64>,
    limit: Option<f64>,
}

/// One searched file's matches and the lines around them.
#[derive(Debug, Default)]
struct FileHits {
    path: PathBuf,
    matches: Vec<u64>,
    // Match and context lines by number, without line terminators.
    lines: BTreeMap<u64, Vec<u8>>,
    // Every context line of every match is in `lines` (the search was not cut short).
    complete: bool,
}

impl GrepTool {
    /// `grep` for the session of `context`.
    pub fn new(context: Arc<ToolContext>) -> GrepTool {
        GrepTool { context }
    }
}

impl Tool for GrepTool {
    fn name(&self) -> &str {
        "grep"
    }
    fn label(&self) -> &str {
        "Grep"
    }
    fn description(&self) -> &str {
        DESCRIPTION
    }
    fn parameters(&self) -> &Value {
        &SCHEMA
    }
    /// pi 0.73.1's line for it in the system prompt.
    fn prompt_snippet(&self) -> Option<&str> {
        Some("Search file contents for patterns (respects .gitignore)")
    }
    fn execute(self: Arc<Self>, invocation: ToolInvocation) -> ToolFuture {
        execute_blocking("grep", self.context.clone(), invocation, grep)
    }
}

/// Runs one search (blocking).
fn grep(context: &ToolContext, args: &GrepArgs, cancel: &CancellationToken) -> ToolOutput {
    let root = match context.place(args.path.as_deref().unwrap_or(".")) {
        Ok(root) => root,
        Err(error) => return ToolOutput::error(error),
    };
    let Ok(metadata) = std::fs::metadata(&root) else {
        return ToolOutput::error(format!("Path not found: {}", root.display()));
    };
    let (ignore_case, literal) = (
        args.ignore_case.unwrap_or(false),
        args.literal.unwrap_or(false),
    );
    let matcher = match RegexMatcherBuilder::new()
        .case_insensitive(ignore_case)
        .fixed_strings(literal)
        .line_terminator(Some(b'\n'))
        .build(&args.pattern)
    {
        Ok(regex) => LineMatcher::new(regex, &args.pattern, !ignore_case && !literal),
        Err(error) => return ToolOutput::error(error.to_string()),
    };
    let context_lines = whole(args.context).unwrap_or(0).max(0) as u64;
    let limit = whole(args.limit).unwrap_or(DEFAULT_LIMIT).max(1) as usize;
    let search = Search {
        matcher,
        context_lines,
        limit,
        found: Arc::new(AtomicUsize::new(0)),
        cancel: cancel.clone(),
    };
    let mut files = if metadata.is_dir() {
        match search.walk(&root, args.glob.as_deref()) {
            Ok(files) => files,
            Err(message) => return ToolOutput::error(message),
        }
    } else {
        search
            .file(&root, BinaryDetection::convert(0))
            .into_iter()
            .collect()
    };
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let display_name = |path: &Path| {
        if metadata.is_dir() {
            relative_display(path, &root)
        } else {
            path.file_name().map_or_else(
                || path.display().to_string(),
                |name| name.to_string_lossy().into_owned(),
            )
        }
    };
    format_hits(&mut files, context_lines, limit, display_name)
}

/// What every worker shares.
#[derive(Clone)]
struct Search {
    matcher: LineMatcher,
    context_lines: u64,
    limit: usize,
    // Matches found by all workers.
    found: Arc<AtomicUsize>,
    cancel: CancellationToken,
}

impl Search {
    fn searcher(&self, binary: BinaryDetection) -> Searcher {
        SearcherBuilder::new()
            .line_number(true)
            .before_context(self.context_lines as usize)
            .after_context(self.context_lines as usize)
            .binary_detection(binary)
            .build()
    }

    /// Searches the files under `root` in parallel.
    fn walk(&self, root: &Path, glob: Option<&str>) -> Result<Vec<FileHits>, String> {
        let mut builder = WalkBuilder::new(root);
        builder
            .hidden(false)
            .git_ignore(true)
            .git_global(false)
            .git_exclude(true)
            .require_git(false)
            .ignore(true)
            .parents(true)
            .filter_entry(|entry| entry.file_name() != ".git")
            .threads(
                std::thread::available_parallelism()
                    .map_or(2, |n| n.get())
                    .min(8),
            );
        if let Some(glob) = glob {
            let mut overrides = ignore::overrides::OverrideBuilder::new(root);
            overrides
                .add(glob)
                .map_err(|error| format!("Invalid glob {glob:?}: {error}"))?;
            builder.overrides(
                overrides
                    .build()
                    .map_err(|error| format!("Invalid glob {glob:?}: {error}"))?,
            );
        }
        let results: Mutex<Vec<FileHits>> = Mutex::new(Vec::new());
        builder.build_parallel().run(|| {
            let search = self.clone();
            let results = &results;
            let mut searcher = search.searcher(BinaryDetection::quit(0));
            Box::new(move |entry| {
                if search.cancel.is_cancelled()
                    || search.found.load(Ordering::Relaxed) >= search.limit
                {
                    return WalkState::Quit;
                }
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if !entry.file_type().is_some_and(|kind| kind.is_file()) {
                    return WalkState::Continue;
                }
                if let Some(hits) = search.search_with(&mut searcher, entry.path()) {
                    results
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .push(hits);
                }
                WalkState::Continue
            })
        });
        Ok(results
            .into_inner()
            .unwrap_or_else(|poisoned| poisoned.into_inner()))
    }

    /// Searches one file.
    fn file(&self, path: &Path, binary: BinaryDetection) -> Option<FileHits> {
        let mut searcher = self.searcher(binary);
        self.search_with(&mut searcher, path)
    }

    fn search_with(&self, searcher: &mut Searcher, path: &Path) -> Option<FileHits> {
        let mut sink = HitSink {
            hits: FileHits {
                path: path.to_path_buf(),
                ..FileHits::default()
            },
            search: self,
            stopped: false,
        };
        // Unreadable files are skipped, as ripgrep skips them (it only warns).
        let _ = searcher.search_path(&self.matcher, path, &mut sink);
        sink.hits.complete = !sink.stopped;
        (!sink.hits.matches.is_empty()).then_some(sink.hits)
    }
}

/// Collects one file's matches and context lines; stops at the global limit.
struct HitSink<'s> {
    hits: FileHits,
    search: &'s Search,
    // The sink ended the search before the end of the file.
    stopped: bool,
}

impl Sink for HitSink<'_> {
    type Error = std::io::Error;

    fn matched(
        &mut self,
        _searcher: &Searcher,
        found: &SinkMatch<'_>,
    ) -> Result<bool, Self::Error> {
        if self.search.cancel.is_cancelled() {
            self.stopped = true;
            return Ok(false);
        }
        let taken = self.search.found.fetch_add(1, Ordering::Relaxed);
        if taken >= self.search.limit {
            self.stopped = true;
            return Ok(false);
        }
        let number = found.line_number().unwrap_or(0);
        self.hits.matches.push(number);
        self.hits
            .lines
            .insert(number, trim_terminator(found.bytes()).to_vec());
        let go_on = taken + 1 < self.search.limit || self.search.context_lines > 0;
        self.stopped |= !go_on;
        Ok(go_on)
    }

    fn context(
        &mut self,
        _searcher: &Searcher,
        line: &SinkContext<'_>,
    ) -> Result<bool, Self::Error> {
        if let Some(number) = line.line_number() {
            self.hits
                .lines
                .insert(number, trim_terminator(line.bytes()).to_vec());
        }
        // After the limit, keep going only to collect the last match's trailing context.
        let collecting = self.search.found.load(Ordering::Relaxed) < self.search.limit
            || self.hits.matches.last().is_some_and(|last| {
                line.line_number()
                    .is_some_and(|n| n < last + self.search.context_lines)
            });
        let go_on = collecting && !self.search.cancel.is_cancelled();
        self.stopped |= !go_on;
        Ok(go_on)
    }
}

fn trim_terminator(bytes: &[u8]) -> &[u8] {
    bytes.strip_suffix(b"\n").unwrap_or(bytes)
}

/// pi's output: a block per match, the byte cap, the notices.
fn format_hits(
    files: &mut [FileHits],
    context_lines: u64,
    limit: usize,
    display_name: impl Fn(&Path) -> String,
) -> ToolOutput {
    let mut out: Vec<String> = Vec::new();
    let mut shown = 0usize;
    let mut lines_truncated = false;
    let total: usize = files.iter().map(|file| file.matches.len()).sum();
    'files: for file in files.iter_mut() {
        let name = display_name(&file.path);
        let matches = file.matches.clone();
        for number in matches {
            if shown == limit {
                break 'files;
            }
            shown += 1;
            let first = number.saturating_sub(context_lines).max(1);
            for current in first..=number + context_lines {
                let Some(bytes) = line_of(file, current) else {
                    continue;
                };
                let text: String = String::from_utf8_lossy(&bytes).replace('\r', "");
                let (text, cut) = cap_line(&text);
                lines_truncated |= cut;
                let separator = if current == number { ':' } else { '-' };
                out.push(format!("{name}{separator}{current}{separator} {text}"));
            }
        }
    }
    if shown == 0 {
        return ToolOutput::text("No matches found");
    }
    let raw = out.join("\n");
    let truncation = truncate_head(&raw, Limits::BYTES_ONLY);
    let mut text = truncation.content.clone();
    let mut details = serde_json::Map::new();
    let mut notices = Vec::new();
    if total >= limit {
        notices.push(format!(
            "{limit} matches limit reached. Use limit={} for more, or refine pattern",
            limit * 2
        ));
        details.insert("matchLimitReached".into(), json!(limit));
    }
    if truncation.truncated {
        notices.push(format!(
            "{} limit reached",
            format_size(DEFAULT_MAX_BYTES as u64)
        ));
        details.insert("truncation".into(), truncation.to_json());
    }
    if lines_truncated {
        notices.push(format!(
            "Some lines truncated to {GREP_MAX_LINE_CHARS} chars. Use read tool to see full lines"
        ));
        details.insert("linesTruncated".into(), json!(true));
    }
    if !notices.is_empty() {
        text.push_str(&format!("\n\n[{}]", notices.join(". ")));
    }
    ToolOutput::text(text).with_details(Value::Object(details))
}

/// Line `number` of `file`: from the search, or, for context the search stopped before
/// reaching, from the file itself (read once).
fn line_of(file: &mut FileHits, number: u64) -> Option<Vec<u8>> {
    if let Some(bytes) = file.lines.get(&number) {
        return Some(bytes.clone());
    }
    if file.complete {
        return None;
    }
    file.complete = true;
    let content = std::fs::read(&file.path).ok()?;
    let lines = content.strip_suffix(b"\n").unwrap_or(&content);
    for (index, line) in lines.split(|byte| *byte == b'\n').enumerate() {
        file.lines
            .entry(index as u64 + 1)
            .or_insert_with(|| line.to_vec());
    }
    file.lines.get(&number).cloned()
}

/// Caps a line at 500 characters (pi's `truncateLine`).
fn cap_line(text: &str) -> (String, bool) {
    match text.char_indices().nth(GREP_MAX_LINE_CHARS) {
        None => (text.to_owned(), false),
        Some((cut, _)) => (format!("{}... [truncated]", &text[..cut]), true),
    }
}
