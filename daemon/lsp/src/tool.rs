//! The model's `lsp` tool (oh-my-pi's action set) and diagnostics after `write` / `edit`.
//!
//! Positions are a 1-based `line` plus a `symbol` on it (`name#2` for its second occurrence):
//! models count columns badly. Results are compact and stable: paths relative to the
//! session's directory, `path:line:column` with the line's code.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use pi_agent::{Tool, ToolFuture, ToolInvocation, ToolOutput};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{LspError, LspPool, LspServer, path_to_uri, uri_to_path};

/// How long `write` waits for fresh diagnostics.
const WRITE_WAIT: Duration = Duration::from_millis(500);
/// How long the `diagnostics` action waits for a file's diagnostics.
const DIAGNOSTICS_WAIT: Duration = Duration::from_secs(5);
/// How long no new diagnostics must arrive before code actions take the published ones as
/// complete.
const PUBLISH_PAUSE: Duration = Duration::from_millis(300);
/// How long position actions wait for the project to load.
const LOAD_WAIT: Duration = Duration::from_secs(15);
/// Locations shown at most.
const MAX_LOCATIONS: usize = 50;
/// Files a glob's `diagnostics` checks at most.
const MAX_GLOB_FILES: usize = 50;

const DESCRIPTION: &str = "Code intelligence from language servers (shared with the user's other sessions). Actions: diagnostics (errors and warnings of `file`, of the files matching a glob like `src/**/*.py`, or of every file the servers checked when `file` is omitted), definition, type_definition, implementation, references, hover (`file` + 1-based `line` + `symbol`, a name on that line, `name#2` for its second occurrence), symbols (`file`'s outline, or with `query` and no file the workspace's symbols), rename (`file` + `line` + `symbol` + `new_name`; applies the edit to every file and returns the diff, `apply: false` only previews), code_actions (`file` + `line` (+ `symbol`): lists the fixes and refactorings there, numbered; with `index` or `title` applies one and returns the diff), status (the running servers).";

/// The `lsp` tool of one session.
pub struct LspTool {
    pool: Arc<LspPool>,
    session_id: String,
    cwd: PathBuf,
    env: std::sync::Arc<BTreeMap<String, String>>,
    // Where the session's edits may go (its sandbox).
    gate: pi_tools::WriteGate,
    schema: Value,
}

#[derive(Deserialize)]
struct Args {
    action: String,
    file: Option<String>,
    line: Option<f64>,
    symbol: Option<String>,
    query: Option<String>,
    new_name: Option<String>,
    apply: Option<bool>,
    index: Option<f64>,
    title: Option<String>,
}

impl LspTool {
    /// The tool for session `session_id` in `cwd` with `env`, whose edits `gate` admits.
    pub fn new(
        pool: Arc<LspPool>,
        session_id: String,
        cwd: PathBuf,
        env: std::sync::Arc<BTreeMap<String, String>>,
        gate: pi_tools::WriteGate,
    ) -> LspTool {
        let schema = json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["diagnostics", "definition", "type_definition",
                    "implementation", "references", "hover", "symbols", "rename", "code_actions", "status"],
                    "description": "What to do"},
                "file": {"type": "string", "description": "The file (relative or absolute)"},
                "line": {"type": "number", "description": "1-based line of the symbol"},
                "symbol": {"type": "string", "description": "The name on that line (name#N: its Nth occurrence)"},
                "query": {"type": "string", "description": "Workspace symbol search text"},
                "new_name": {"type": "string", "description": "rename: the new name"},
                "apply": {"type": "boolean", "description": "rename, code_actions: write the files (default true)"},
                "index": {"type": "number", "description": "code_actions: apply the action with this number (from the list)"},
                "title": {"type": "string", "description": "code_actions: apply the action with this title"},
            },
            "required": ["action"],
        });
        LspTool {
            pool,
            session_id,
            cwd,
            env,
            gate,
            schema,
        }
    }

    fn resolve(&self, file: &str) -> PathBuf {
        let path = Path::new(file);
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            pi_paths::lexical::normalize(&self.cwd.join(path))
        }
    }

    fn shown(&self, path: &Path) -> String {
        path.strip_prefix(&self.cwd)
            .map(|relative| relative.display().to_string())
            .unwrap_or_else(|_| path.display().to_string())
    }

    async fn run(&self, args: Args) -> Result<String, LspError> {
        match args.action.as_str() {
            "status" => Ok(self.status()),
            "diagnostics" => self.diagnostics(args.file.as_deref()).await,
            "symbols" => {
                self.symbols(args.file.as_deref(), args.query.as_deref())
                    .await
            }
            "definition" | "type_definition" | "implementation" | "references" | "hover"
            | "rename" | "code_actions" => self.at_position(&args).await,
            other => Err(LspError::Call(format!(
                "unknown action \"{other}\"; use diagnostics, definition, type_definition, \
                 implementation, references, hover, symbols, rename, code_actions or status"
            ))),
        }
    }

    fn status(&self) -> String {
        let mine: Vec<String> = self
            .pool
            .list()
            .into_iter()
            .filter(|server| server.sessions.contains(&self.session_id))
            .map(|server| {
                format!(
                    "{} {} {}{} ({} open files)",
                    server.name,
                    server.root.display(),
                    server.state,
                    server
                        .pid
                        .map(|pid| format!(" pid {pid}"))
                        .unwrap_or_default(),
                    server.open_files
                )
            })
            .collect();
        if mine.is_empty() {
            "No language server runs for this session yet; one starts when an action names a \
             file."
                .to_owned()
        } else {
            mine.join("\n")
        }
    }

    async fn server(&self, path: &Path) -> Result<Arc<LspServer>, LspError> {
        self.pool
            .server_for(&self.session_id, path, &self.cwd, &self.env)
            .await
    }

    async fn diagnostics(&self, file: Option<&str>) -> Result<String, LspError> {
        match file.filter(|file| *file != "*") {
            Some(pattern) if pattern.contains(['*', '?', '[', '{']) => {
                self.diagnostics_of_glob(pattern).await
            }
            Some(file) => {
                let path = self.resolve(file);
                let server = self.server(&path).await?;
                let items = current_diagnostics(&server, &path, DIAGNOSTICS_WAIT).await?;
                let text = format_diagnostics(&self.shown(&path), &items, 4);
                Ok(if text.is_empty() {
                    format!("{}: no errors or warnings", self.shown(&path))
                } else {
                    text
                })
            }
            None => {
                let mut text = String::new();
                for server in self.pool.servers_of(&self.session_id) {
                    for (path, published) in server.all_published() {
                        text.push_str(&format_diagnostics(&self.shown(&path), &published.items, 4));
                    }
                }
                Ok(if text.is_empty() {
                    "No errors or warnings in the files the language servers checked.".to_owned()
                } else {
                    text
                })
            }
        }
    }

    /// Diagnostics of the files under the session's directory matching `pattern` (at most
    /// [`MAX_GLOB_FILES`] of those a server is installed for; `.gitignore` respected).
    async fn diagnostics_of_glob(&self, pattern: &str) -> Result<String, LspError> {
        let glob = globset::Glob::new(pattern)
            .map_err(|error| LspError::Call(format!("`{pattern}` is not a valid glob: {error}")))?
            .compile_matcher();
        let cwd = self.cwd.clone();
        let files: Vec<PathBuf> = tokio::task::spawn_blocking(move || {
            ignore::WalkBuilder::new(&cwd)
                .build()
                .filter_map(Result::ok)
                .filter(|entry| entry.file_type().is_some_and(|kind| kind.is_file()))
                .map(ignore::DirEntry::into_path)
                .filter(|path| {
                    path.strip_prefix(&cwd)
                        .is_ok_and(|relative| glob.is_match(relative))
                })
                .take(MAX_GLOB_FILES * 4)
                .collect()
        })
        .await
        .map_err(|error| LspError::Spawner(error.to_string()))?;
        let deadline = tokio::time::Instant::now() + DIAGNOSTICS_WAIT;
        let mut text = String::new();
        let mut checked = 0;
        for path in files {
            if checked == MAX_GLOB_FILES {
                break;
            }
            let Ok(server) = self.server(&path).await else {
                continue;
            };
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let Ok(items) = current_diagnostics(&server, &path, left).await else {
                continue;
            };
            checked += 1;
            text.push_str(&format_diagnostics(&self.shown(&path), &items, 4));
        }
        Ok(match (checked, text.is_empty()) {
            (0, _) => format!("No file matching `{pattern}` has a language server."),
            (n, true) => format!("{n} file(s) matching `{pattern}`: no errors or warnings"),
            (n, false) => format!("{n} file(s) matching `{pattern}`:\n{text}"),
        })
    }

    async fn symbols(&self, file: Option<&str>, query: Option<&str>) -> Result<String, LspError> {
        match (file.filter(|file| *file != "*"), query) {
            (Some(file), _) => {
                let path = self.resolve(file);
                let server = self.server(&path).await?;
                server.sync(&path).await?;
                let result = server
                    .request(
                        "textDocument/documentSymbol",
                        json!({"textDocument": {"uri": path_to_uri(&path)}}),
                    )
                    .await?;
                let mut lines = Vec::new();
                outline(&result, 0, &mut lines, query);
                Ok(if lines.is_empty() {
                    format!("{}: no symbols", self.shown(&path))
                } else {
                    lines.join("\n")
                })
            }
            (None, Some(query)) => {
                let servers = self.pool.servers_of(&self.session_id);
                if servers.is_empty() {
                    return Err(LspError::Call(
                        "no language server runs for this session yet: name a `file` (any file \
                         of the project) so one starts"
                            .to_owned(),
                    ));
                }
                let mut lines = Vec::new();
                for server in servers {
                    server.settled(LOAD_WAIT).await;
                    let result = server
                        .request("workspace/symbol", json!({"query": query}))
                        .await?;
                    for symbol in result.as_array().into_iter().flatten().take(200) {
                        let location = &symbol["location"];
                        let place = location["uri"]
                            .as_str()
                            .and_then(uri_to_path)
                            .map(|path| {
                                let line = location["range"]["start"]["line"].as_u64();
                                match line {
                                    Some(line) => format!("{}:{}", self.shown(&path), line + 1),
                                    None => self.shown(&path),
                                }
                            })
                            .unwrap_or_default();
                        lines.push(format!(
                            "{} {} {place}",
                            symbol_kind(symbol["kind"].as_u64().unwrap_or(0)),
                            symbol["name"].as_str().unwrap_or_default()
                        ));
                    }
                }
                Ok(if lines.is_empty() {
                    format!("No symbols match \"{query}\".")
                } else {
                    lines.join("\n")
                })
            }
            (None, None) => Err(LspError::Call(
                "symbols needs a `file` (its outline) or a `query` (workspace)".to_owned(),
            )),
        }
    }

    async fn at_position(&self, args: &Args) -> Result<String, LspError> {
        let action = args.action.as_str();
        let file = args
            .file
            .as_deref()
            .ok_or_else(|| LspError::Call(format!("{action} needs `file`, `line` and `symbol`")))?;
        let line = args
            .line
            .filter(|line| line.fract() == 0.0 && *line >= 1.0)
            .ok_or_else(|| LspError::Call(format!("{action} needs `line`, a line number from 1")))?
            as usize;
        let path = self.resolve(file);
        let server = self.server(&path).await?;
        let (after, opened) = server.sync_opening(&path).await?;
        if opened {
            // Just opened: the server answers from a half-loaded project until it has
            // checked the file (its first diagnostics say it has).
            server.diagnostics_after(&path, after, LOAD_WAIT).await;
        }
        let text = server.text_of(&path).ok_or_else(|| {
            // Ended meanwhile (it crashed, or stopped reading its input): say that.
            if server.connection().is_none() {
                return server.not_running();
            }
            LspError::Call(format!(
                "{} is not open in {}",
                self.shown(&path),
                server.name
            ))
        })?;
        let position = position(&text, line, args.symbol.as_deref(), server.utf8())
            .map_err(|problem| LspError::Call(format!("{}: {problem}", self.shown(&path))))?;
        server.settled(LOAD_WAIT).await;
        let document = json!({"textDocument": {"uri": path_to_uri(&path)}, "position": position});
        match action {
            "hover" => {
                let result = server.request("textDocument/hover", document).await?;
                let text = hover_text(&result["contents"]);
                Ok(if text.trim().is_empty() {
                    "No information at that position.".to_owned()
                } else {
                    text
                })
            }
            "rename" => {
                let new_name = args
                    .new_name
                    .as_deref()
                    .filter(|name| !name.is_empty())
                    .ok_or_else(|| LspError::Call("rename needs `new_name`".to_owned()))?;
                let mut params = document;
                params["newName"] = json!(new_name);
                let edit = server.request("textDocument/rename", params).await?;
                if edit.is_null() {
                    return Err(LspError::Answer(
                        "the language server cannot rename at that position".to_owned(),
                    ));
                }
                self.rename(&edit, args.apply.unwrap_or(true)).await
            }
            "code_actions" => self.code_actions(&server, &path, &text, line, args).await,
            _ => {
                let method = match action {
                    "definition" => "textDocument/definition",
                    "type_definition" => "textDocument/typeDefinition",
                    "implementation" => "textDocument/implementation",
                    _ => "textDocument/references",
                };
                let mut params = document;
                if action == "references" {
                    params["context"] = json!({"includeDeclaration": true});
                }
                let result = server.request(method, params).await?;
                let locations = locations(&result);
                if locations.is_empty() {
                    return Ok(format!("No {} found.", action.replace('_', " ")));
                }
                Ok(self.format_locations(&locations, server.utf8()))
            }
        }
    }

    async fn code_actions(
        &self,
        server: &Arc<LspServer>,
        path: &Path,
        text: &str,
        line: usize,
        args: &Args,
    ) -> Result<String, LspError> {
        // The line (or the symbol on it), with the diagnostics there: quick fixes need them.
        let start = position(text, line, args.symbol.as_deref(), server.utf8())?;
        let end = match args.symbol.as_deref().filter(|symbol| !symbol.is_empty()) {
            Some(symbol) => {
                let name = symbol.rsplit_once('#').map_or(symbol, |(name, _)| name);
                let width = if server.utf8() {
                    name.len()
                } else {
                    name.encode_utf16().count()
                };
                json!({"line": line - 1, "character": start["character"].as_u64().unwrap_or(0) + width as u64})
            }
            None => {
                let code = text.split('\n').nth(line - 1).unwrap_or_default();
                let code = code.strip_suffix('\r').unwrap_or(code);
                let width = if server.utf8() {
                    code.len()
                } else {
                    code.encode_utf16().count()
                };
                json!({"line": line - 1, "character": width})
            }
        };
        // A server may publish a file's diagnostics in steps (syntax, then semantics, then
        // suggestions, as typescript-language-server does) and quick fixes need the last one:
        // wait until publishing pauses for a moment (bounded).
        let deadline = tokio::time::Instant::now() + DIAGNOSTICS_WAIT;
        while let Some(seq) = server.published(path).map(|published| published.seq) {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero()
                || server
                    .published_after(path, seq, PUBLISH_PAUSE.min(left))
                    .await
                    .is_none()
            {
                break;
            }
        }
        let diagnostics: Vec<Value> = server
            .published(path)
            .map(|published| published.items)
            .unwrap_or_default()
            .into_iter()
            .filter(|item| {
                let from = item["range"]["start"]["line"].as_u64().unwrap_or(0);
                let to = item["range"]["end"]["line"].as_u64().unwrap_or(from);
                (from..=to).contains(&((line - 1) as u64))
            })
            .collect();
        // Fixes and refactorings, then the file's source actions (organize imports, fix all),
        // which servers give only when asked for.
        let mut actions: Vec<Value> = Vec::new();
        for only in [None, Some(json!(["source"]))] {
            let mut context = json!({"diagnostics": diagnostics, "triggerKind": 1});
            if let Some(only) = only {
                context["only"] = only;
            }
            let result = server
                .request(
                    "textDocument/codeAction",
                    json!({"textDocument": {"uri": path_to_uri(path)},
                        "range": {"start": start, "end": end}, "context": context}),
                )
                .await?;
            for action in result.as_array().into_iter().flatten() {
                let seen = actions.iter().any(|known| {
                    known["title"] == action["title"] && known["kind"] == action["kind"]
                });
                if action.get("disabled").is_none() && !seen {
                    actions.push(action.clone());
                }
            }
        }
        let chosen = match (args.index, args.title.as_deref()) {
            (None, None) => {
                if actions.is_empty() {
                    return Ok(format!("No code actions at {}:{line}.", self.shown(path)));
                }
                let lines: Vec<String> = actions
                    .iter()
                    .enumerate()
                    .map(|(at, action)| {
                        let kind = action["kind"]
                            .as_str()
                            .map(|kind| format!(" ({kind})"))
                            .unwrap_or_default();
                        let preferred = if action["isPreferred"] == true {
                            " [preferred]"
                        } else {
                            ""
                        };
                        format!(
                            "{}. {}{kind}{preferred}",
                            at + 1,
                            action["title"].as_str().unwrap_or_default()
                        )
                    })
                    .collect();
                return Ok(format!(
                    "{}\nApply one with `index` (or `title`).",
                    lines.join("\n")
                ));
            }
            (Some(index), _) => {
                let at = (index.fract() == 0.0 && index >= 1.0)
                    .then_some(index as usize - 1)
                    .filter(|at| *at < actions.len())
                    .ok_or_else(|| {
                        LspError::Call(format!(
                            "there is no code action {index} here ({} found); list them without \
                             `index`",
                            actions.len()
                        ))
                    })?;
                actions[at].clone()
            }
            (None, Some(title)) => actions
                .iter()
                .find(|action| action["title"].as_str() == Some(title))
                .or_else(|| {
                    let wanted = title.to_lowercase();
                    actions.iter().find(|action| {
                        action["title"]
                            .as_str()
                            .is_some_and(|found| found.to_lowercase().contains(&wanted))
                    })
                })
                .cloned()
                .ok_or_else(|| {
                    LspError::Call(format!(
                        "no code action here is titled \"{title}\"; list them without `title`"
                    ))
                })?,
        };
        self.apply_action(server, chosen, args.apply.unwrap_or(true))
            .await
    }

    /// Applies a code action: its edit, then its command (whose edits the server sends back
    /// through `workspace/applyEdit`).
    async fn apply_action(
        &self,
        server: &Arc<LspServer>,
        mut action: Value,
        apply: bool,
    ) -> Result<String, LspError> {
        let title = action["title"].as_str().unwrap_or_default().to_owned();
        // A bare `Command`.
        if action["command"].is_string() {
            action = json!({"title": title, "command": action});
        }
        if action.get("edit").is_none()
            && action.get("command").is_none()
            && server.offers_nested("codeActionProvider", "resolveProvider")
        {
            action = server.request("codeAction/resolve", action).await?;
        }
        let mut changes = Vec::new();
        if let Some(edit) = action.get("edit") {
            changes = if apply {
                self.pool.apply_edit(edit, &self.gate).await?
            } else {
                preview_edit(edit, &self.pool).await?
            };
        }
        let mut unseen = "";
        if let Some(command) = action.get("command").filter(|command| command.is_object()) {
            if !apply {
                if action.get("edit").is_none() {
                    return Err(LspError::Call(format!(
                        "\"{title}\" runs a command in the language server, so it cannot be \
                         previewed; apply it or leave it"
                    )));
                }
                unseen = " (applying it also runs a command in the language server, which a \
                          preview cannot show)";
            } else {
                server.record_edits(self.gate.clone());
                let executed = server
                    .request(
                        "workspace/executeCommand",
                        json!({"command": command["command"], "arguments": command.get("arguments")
                        .cloned().unwrap_or_else(|| json!([]))}),
                    )
                    .await;
                changes.extend(server.recorded_edits());
                executed?;
            }
        }
        changes.retain(|(_, before, after)| before != after);
        if changes.is_empty() {
            return Ok(format!("Applied \"{title}\"; it changed no file."));
        }
        let verb = if apply {
            "Applied"
        } else {
            "Would apply (not applied)"
        };
        Ok(format!(
            "{verb} \"{title}\" to {} file(s){unseen}.\n{}",
            changes.len(),
            self.diffs(&changes)
        ))
    }

    fn diffs(&self, changes: &[(PathBuf, String, String)]) -> String {
        let mut text = String::new();
        for (path, before, after) in changes {
            let shown = self.shown(path);
            let diff = similar::TextDiff::from_lines(before, after)
                .unified_diff()
                .context_radius(2)
                .header(&shown, &shown)
                .to_string();
            text.push_str(&diff);
        }
        text
    }

    async fn rename(&self, edit: &Value, apply: bool) -> Result<String, LspError> {
        let changes: Vec<(PathBuf, String, String)> = if apply {
            self.pool.apply_edit(edit, &self.gate).await?
        } else {
            preview_edit(edit, &self.pool).await?
        };
        let text = self.diffs(&changes);
        let summary = format!(
            "{} {} file(s).",
            if apply {
                "Renamed in"
            } else {
                "Would rename in (not applied)"
            },
            changes.len()
        );
        Ok(format!("{summary}\n{text}"))
    }

    fn format_locations(&self, locations: &[(PathBuf, u64, u64)], utf8: bool) -> String {
        let mut files: BTreeMap<PathBuf, Vec<String>> = BTreeMap::new();
        let mut lines = Vec::new();
        for (path, line, character) in locations.iter().take(MAX_LOCATIONS) {
            let source = files.entry(path.clone()).or_insert_with(|| {
                std::fs::read_to_string(path)
                    .map(|text| text.lines().map(str::to_owned).collect())
                    .unwrap_or_default()
            });
            let code = source
                .get(*line as usize)
                .map(|code| code.trim())
                .unwrap_or("");
            let column = source
                .get(*line as usize)
                .map_or(*character as usize + 1, |code| {
                    char_column(code, *character as usize, utf8) + 1
                });
            lines.push(format!(
                "{}:{}:{column}  {code}",
                self.shown(path),
                line + 1
            ));
        }
        if locations.len() > MAX_LOCATIONS {
            lines.push(format!("… and {} more", locations.len() - MAX_LOCATIONS));
        }
        lines.join("\n")
    }
}

impl Tool for LspTool {
    fn name(&self) -> &str {
        "lsp"
    }

    fn label(&self) -> &str {
        "LSP"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> &Value {
        &self.schema
    }

    fn prompt_snippet(&self) -> Option<&str> {
        pi_agent::tool::first_line(self.description())
    }

    fn execute(self: Arc<Self>, invocation: ToolInvocation) -> ToolFuture {
        Box::pin(async move {
            let args: Args = match serde_json::from_value(invocation.arguments.clone()) {
                Ok(args) => args,
                Err(error) => {
                    return ToolOutput::error(format!("invalid arguments for lsp: {error}"));
                }
            };
            tokio::select! {
                () = invocation.cancel.cancelled() => ToolOutput::error("Operation aborted"),
                result = self.run(args) => match result {
                    Ok(text) => ToolOutput::text(text),
                    Err(error) => ToolOutput::error(error.to_string()),
                },
            }
        })
    }
}

/// The diagnostics of `path` as the server sees it now: after sending its text when it
/// changed (or opening it), waiting up to `wait` for a check newer than the last change of
/// any file; diagnostics already newer than that answer at once.
async fn current_diagnostics(
    server: &LspServer,
    path: &Path,
    wait: Duration,
) -> Result<Vec<Value>, LspError> {
    let after = server.sync(path).await?;
    // Published after the last text any file sent: nothing newer can come.
    if let Some(published) = server.published(path)
        && published.seq > server.last_sent()
    {
        return Ok(published.items);
    }
    server.settled(LOAD_WAIT).await;
    Ok(match server.diagnostics_after(path, after, wait).await {
        Some(items) => items,
        None => server.published(path).map(|p| p.items).unwrap_or_default(),
    })
}

/// The LSP position of `symbol` (or the line's first non-blank) on 1-based `line` of `text`.
fn position(text: &str, line: usize, symbol: Option<&str>, utf8: bool) -> Result<Value, LspError> {
    let code = text.split('\n').nth(line - 1).ok_or_else(|| {
        LspError::Call(format!(
            "there is no line {line} (the file has {} lines)",
            text.lines().count()
        ))
    })?;
    let code = code.strip_suffix('\r').unwrap_or(code);
    let byte = match symbol.filter(|symbol| !symbol.is_empty()) {
        None => code.len() - code.trim_start().len(),
        Some(symbol) => {
            let (name, nth) = match symbol.rsplit_once('#') {
                Some((name, n)) if n.parse::<usize>().is_ok_and(|n| n >= 1) && !name.is_empty() => {
                    (name, n.parse::<usize>().unwrap_or(1))
                }
                _ => (symbol, 1),
            };
            let find = |haystack: &str, needle: &str| -> Option<usize> {
                haystack
                    .match_indices(needle)
                    .nth(nth - 1)
                    .map(|(at, _)| at)
            };
            find(code, name)
                .or_else(|| {
                    let lower = code.to_lowercase();
                    (lower.len() == code.len())
                        .then(|| find(&lower, &name.to_lowercase()))
                        .flatten()
                })
                .ok_or_else(|| {
                    LspError::Call(format!(
                        "\"{symbol}\" is not on line {line}: {}",
                        code.trim()
                    ))
                })?
        }
    };
    let character = if utf8 {
        byte
    } else {
        code[..byte].encode_utf16().count()
    };
    Ok(json!({"line": line - 1, "character": character}))
}

/// A position's character (UTF-8 bytes or UTF-16 units) as a character index in `code`.
fn char_column(code: &str, character: usize, utf8: bool) -> usize {
    if utf8 {
        return code
            .char_indices()
            .take_while(|(at, _)| *at < character)
            .count();
    }
    let mut units = 0;
    let mut chars = 0;
    for c in code.chars() {
        if units >= character {
            break;
        }
        units += c.len_utf16();
        chars += 1;
    }
    chars
}

/// The byte offset in `text` of an LSP position.
fn offset(text: &str, position: &Value, utf8: bool) -> Result<usize, LspError> {
    let answer = |what: &str| LspError::Answer(what.to_owned());
    let line = position["line"]
        .as_u64()
        .ok_or_else(|| answer("an edit has no line"))? as usize;
    let character = position["character"]
        .as_u64()
        .ok_or_else(|| answer("an edit has no character"))? as usize;
    let mut start = 0;
    for _ in 0..line {
        match text[start..].find('\n') {
            Some(end) => start += end + 1,
            None => return Ok(text.len()),
        }
    }
    let end = text[start..]
        .find('\n')
        .map_or(text.len(), |end| start + end);
    let code = &text[start..end];
    let mut units = 0;
    for (at, c) in code.char_indices() {
        if units >= character {
            return Ok(start + at);
        }
        units += if utf8 { c.len_utf8() } else { c.len_utf16() };
    }
    Ok(end)
}

/// `text` with LSP `edits` applied (positions in UTF-8 bytes or UTF-16 units).
pub fn apply_text_edits(text: &str, edits: &[Value], utf8: bool) -> Result<String, LspError> {
    let mut spans: Vec<(usize, usize, &str)> = Vec::with_capacity(edits.len());
    for edit in edits {
        let start = offset(text, &edit["range"]["start"], utf8)?;
        let end = offset(text, &edit["range"]["end"], utf8)?;
        if end < start {
            return Err(LspError::Answer("an edit ends before it starts".to_owned()));
        }
        spans.push((start, end, edit["newText"].as_str().unwrap_or_default()));
    }
    // Back to front, so earlier offsets stay valid; same start: in the given order.
    spans.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
    let mut result = text.to_owned();
    let mut limit = usize::MAX;
    for (start, end, new_text) in spans {
        if end > limit {
            return Err(LspError::Answer(
                "the language server sent overlapping edits".to_owned(),
            ));
        }
        result.replace_range(start..end, new_text);
        limit = start;
    }
    Ok(result)
}

/// Per file, (path, text now, text after `edit`), without writing anything.
async fn preview_edit(
    edit: &Value,
    pool: &LspPool,
) -> Result<Vec<(PathBuf, String, String)>, LspError> {
    let mut per_file: BTreeMap<PathBuf, Vec<Value>> = BTreeMap::new();
    for (uri, edits) in edit["changes"].as_object().into_iter().flatten() {
        if let Some(path) = uri_to_path(uri) {
            per_file
                .entry(path)
                .or_default()
                .extend(edits.as_array().cloned().unwrap_or_default());
        }
    }
    for change in edit["documentChanges"].as_array().into_iter().flatten() {
        if let Some(path) = change["textDocument"]["uri"].as_str().and_then(uri_to_path) {
            per_file
                .entry(path)
                .or_default()
                .extend(change["edits"].as_array().cloned().unwrap_or_default());
        }
    }
    let mut previews = Vec::new();
    for (path, edits) in per_file {
        let before = tokio::fs::read_to_string(&path)
            .await
            .map_err(|source| LspError::Read {
                path: path.clone(),
                source,
            })?;
        let utf8 = pool
            .servers_with(&path)
            .first()
            .is_some_and(|server| server.utf8());
        let after = apply_text_edits(&before, &edits, utf8)?;
        previews.push((path, before, after));
    }
    Ok(previews)
}

/// Locations of a definition / references answer: (path, 0-based line, character).
fn locations(result: &Value) -> Vec<(PathBuf, u64, u64)> {
    let items: Vec<&Value> = match result {
        Value::Array(items) => items.iter().collect(),
        Value::Null => Vec::new(),
        single => vec![single],
    };
    let mut found: Vec<(PathBuf, u64, u64)> = items
        .into_iter()
        .filter_map(|item| {
            let (uri, range) = match item.get("targetUri") {
                Some(uri) => (
                    uri,
                    item.get("targetSelectionRange")
                        .or(item.get("targetRange"))?,
                ),
                None => (item.get("uri")?, item.get("range")?),
            };
            Some((
                uri_to_path(uri.as_str()?)?,
                range["start"]["line"].as_u64()?,
                range["start"]["character"].as_u64()?,
            ))
        })
        .collect();
    found.sort();
    found.dedup();
    found
}

/// Hover contents as text.
fn hover_text(contents: &Value) -> String {
    match contents {
        Value::String(text) => text.clone(),
        Value::Array(items) => items
            .iter()
            .map(hover_text)
            .filter(|text| !text.is_empty())
            .collect::<Vec<_>>()
            .join("\n\n"),
        Value::Object(map) => map
            .get("value")
            .and_then(Value::as_str)
            .map(|value| match map.get("language").and_then(Value::as_str) {
                Some(language) => format!("```{language}\n{value}\n```"),
                None => value.to_owned(),
            })
            .unwrap_or_default(),
        _ => String::new(),
    }
}

/// A document symbol tree as indented lines.
fn outline(symbols: &Value, depth: usize, lines: &mut Vec<String>, query: Option<&str>) {
    for symbol in symbols.as_array().into_iter().flatten() {
        let name = symbol["name"].as_str().unwrap_or_default();
        let range = symbol
            .get("selectionRange")
            .or(symbol.get("range"))
            .or(symbol
                .get("location")
                .and_then(|location| location.get("range")));
        let line = range
            .and_then(|range| range["start"]["line"].as_u64())
            .map_or(String::new(), |line| format!(" :{}", line + 1));
        let matches = query.is_none_or(|query| name.to_lowercase().contains(&query.to_lowercase()));
        if matches {
            lines.push(format!(
                "{}{} {name}{line}",
                "  ".repeat(depth),
                symbol_kind(symbol["kind"].as_u64().unwrap_or(0))
            ));
        }
        if let Some(children) = symbol.get("children") {
            outline(children, depth + 1, lines, query);
        }
    }
}

/// An LSP `SymbolKind` as a word.
fn symbol_kind(kind: u64) -> &'static str {
    match kind {
        1 => "file",
        2 => "module",
        3 => "namespace",
        4 => "package",
        5 => "class",
        6 => "method",
        7 => "property",
        8 => "field",
        9 => "constructor",
        10 => "enum",
        11 => "interface",
        12 => "function",
        13 => "variable",
        14 => "constant",
        22 => "enum-member",
        23 => "struct",
        26 => "type-parameter",
        _ => "symbol",
    }
}

/// Errors and warnings (severity ≤ `max_severity`; 1 error … 4 hint) of one file, a line
/// each: `path:line:column severity: message (source)`.
pub fn format_diagnostics(shown: &str, items: &[Value], max_severity: u64) -> String {
    let mut sorted: Vec<&Value> = items
        .iter()
        .filter(|item| item["severity"].as_u64().unwrap_or(1) <= max_severity)
        .collect();
    sorted.sort_by_key(|item| {
        (
            item["severity"].as_u64().unwrap_or(1),
            item["range"]["start"]["line"].as_u64().unwrap_or(0),
            item["range"]["start"]["character"].as_u64().unwrap_or(0),
        )
    });
    let mut text = String::new();
    for item in sorted {
        let severity = match item["severity"].as_u64().unwrap_or(1) {
            1 => "error",
            2 => "warning",
            3 => "info",
            _ => "hint",
        };
        let _ = writeln!(
            text,
            "{shown}:{}:{} {severity}: {}{}",
            item["range"]["start"]["line"].as_u64().unwrap_or(0) + 1,
            item["range"]["start"]["character"].as_u64().unwrap_or(0) + 1,
            item["message"]
                .as_str()
                .unwrap_or_default()
                .replace('\n', " "),
            item["source"]
                .as_str()
                .map(|source| format!(" ({source})"))
                .unwrap_or_default()
        );
    }
    text
}

/// Tells the language servers about files a session's `write` and `edit` changed, and hands
/// back new errors and warnings (after `write`; after `edit` too when asked).
#[derive(Debug)]
pub struct LspFiles {
    /// The pool.
    pub pool: Arc<LspPool>,
    /// The session.
    pub session_id: String,
    /// Its directory.
    pub cwd: PathBuf,
    /// Its environment.
    pub env: std::sync::Arc<BTreeMap<String, String>>,
}

impl pi_tools::FileObserver for LspFiles {
    fn changed<'a>(
        &'a self,
        path: &'a Path,
        by: pi_tools::ChangedBy,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Option<String>> + Send + 'a>> {
        Box::pin(async move {
            // Every server that has the file open hears of the change, whoever asked.
            for server in self.pool.servers_with(path) {
                let _ = server.sync(path).await;
            }
            let (on_write, on_edit) = self.pool.diagnostics_settings(&self.cwd);
            let wanted = match by {
                pi_tools::ChangedBy::Write => on_write,
                pi_tools::ChangedBy::Edit => on_edit,
            };
            if !wanted {
                return None;
            }
            let server = self
                .pool
                .server_for(&self.session_id, path, &self.cwd, &self.env)
                .await
                .ok()?;
            let after = server.sync(path).await.ok()?;
            let shown = path
                .strip_prefix(&self.cwd)
                .map(|relative| relative.display().to_string())
                .unwrap_or_else(|_| path.display().to_string());
            let Some(published) = server.published_after(path, after, WRITE_WAIT).await else {
                // Too slow: whatever comes goes into the next tool result.
                self.pool
                    .expect_late(&self.session_id, &server, path, after, String::new());
                return None;
            };
            let text = format_diagnostics(&shown, &published.items, 2);
            // A server may publish again (a fuller check): that goes into the next result.
            self.pool
                .expect_late(&self.session_id, &server, path, published.seq, text.clone());
            (!text.is_empty()).then(|| {
                format!(
                    "Language server {} reports:\n{}",
                    server.name,
                    text.trim_end()
                )
            })
        })
    }
}

/// Around a session's tool (a [`pi_agent::ToolLayer`]): its results also carry diagnostics
/// that arrived late for files the session changed; after `bash`, the language servers hear
/// of the files it changed.
pub struct WithLspNotes {
    /// The pool.
    pub pool: Arc<LspPool>,
    /// The session.
    pub session_id: String,
    /// Its directory.
    pub cwd: PathBuf,
}

impl pi_agent::ToolLayer for WithLspNotes {
    fn call(self: Arc<Self>, inner: Arc<dyn Tool>, invocation: ToolInvocation) -> ToolFuture {
        Box::pin(async move {
            let bash = inner.name() == "bash";
            let mut output = inner.execute(invocation).await;
            if bash {
                self.pool.after_commands(&self.session_id).await;
            }
            if let Some(note) = self.pool.late_notes(&self.session_id, &self.cwd) {
                pi_tools::append_note(&mut output, &note);
            }
            output
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_come_from_a_symbol_on_the_line() {
        let text = "x = 1\nresult = add(add, 2)\n";
        assert_eq!(
            position(text, 2, Some("add"), false).unwrap(),
            json!({"line": 1, "character": 9})
        );
        assert_eq!(
            position(text, 2, Some("add#2"), false).unwrap(),
            json!({"line": 1, "character": 13})
        );
        assert_eq!(
            position(text, 2, None, false).unwrap(),
            json!({"line": 1, "character": 0})
        );
        assert_eq!(
            position(text, 2, Some("nope"), false)
                .unwrap_err()
                .to_string(),
            "\"nope\" is not on line 2: result = add(add, 2)"
        );
        assert_eq!(
            position(text, 9, Some("x"), false).unwrap_err().to_string(),
            "there is no line 9 (the file has 2 lines)"
        );
        // UTF-16 units vs UTF-8 bytes.
        assert_eq!(
            position("é = f()\n", 1, Some("f"), false).unwrap(),
            json!({"line": 0, "character": 4})
        );
        assert_eq!(
            position("é = f()\n", 1, Some("f"), true).unwrap(),
            json!({"line": 0, "character": 5})
        );
    }

    #[test]
    fn edits_apply_back_to_front() {
        let text = "def add(a, b):\n    return a + b\n\nprint(add(1, 2))\n";
        let edit = |line: u64, from: u64, to: u64, new: &str| {
            json!({"range": {"start": {"line": line, "character": from},
                "end": {"line": line, "character": to}}, "newText": new})
        };
        let edits = [edit(0, 4, 7, "plus"), edit(3, 6, 9, "plus")];
        assert_eq!(
            apply_text_edits(text, &edits, false).unwrap(),
            "def plus(a, b):\n    return a + b\n\nprint(plus(1, 2))\n"
        );
        assert_eq!(
            apply_text_edits("é + x\n", &[edit(0, 4, 5, "y")], false).unwrap(),
            "é + y\n"
        );
        assert!(
            apply_text_edits(text, &[edit(0, 0, 5, "a"), edit(0, 3, 8, "b")], false)
                .unwrap_err()
                .to_string()
                .contains("overlapping")
        );
    }

    #[test]
    fn diagnostics_read_as_lines() {
        let items = [
            json!({"range": {"start": {"line": 4, "character": 2}}, "severity": 2, "message": "unused", "source": "Pyright"}),
            json!({"range": {"start": {"line": 1, "character": 0}}, "severity": 1, "message": "bad\ntype"}),
            json!({"range": {"start": {"line": 0, "character": 0}}, "severity": 4, "message": "hint"}),
        ];
        assert_eq!(
            format_diagnostics("a.py", &items, 2),
            "a.py:2:1 error: bad type\na.py:5:3 warning: unused (Pyright)\n"
        );
    }
}
