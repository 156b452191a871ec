//! oh-my-pi's structural tools over `pi-ast`: `ast_grep` (search code by shape) and
//! `ast_edit` (rewrite by shape: a preview first, then the same call with `apply` writes it,
//! under the daemon's path locks and the session's sandbox, and only over the files as they
//! were previewed).

use std::path::PathBuf;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use pi_agent::{Tool, ToolFuture, ToolInvocation, ToolOutput};
use pi_ast::{EditPlan, Lang, Limits};
use pi_tools::ToolContext;
use serde_json::{Value, json};

/// The search tool.
pub const AST_GREP: &str = "ast_grep";
/// The rewrite tool.
pub const AST_EDIT: &str = "ast_edit";
/// Both, by name.
pub const TOOLS: [&str; 2] = [AST_GREP, AST_EDIT];

fn languages() -> String {
    Lang::all()
        .iter()
        .map(|lang| lang.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The parts both tools share: the language and the paths of a call.
fn scope(context: &ToolContext, arguments: &Value) -> Result<(Option<Lang>, Vec<PathBuf>), String> {
    let lang = match arguments["lang"]
        .as_str()
        .filter(|lang| !lang.trim().is_empty())
    {
        Some(name) => Some(name.parse::<Lang>().map_err(|error| error.to_string())?),
        None => None,
    };
    let paths = match arguments["path"]
        .as_str()
        .filter(|path| !path.trim().is_empty())
    {
        Some(path) => vec![context.resolve(path)],
        None => Vec::new(),
    };
    Ok((lang, paths))
}

/// `ast_grep {pattern, lang?, path?}`.
pub struct AstGrepTool {
    context: Arc<ToolContext>,
}

impl AstGrepTool {
    /// The tool of the session of `context`.
    pub fn new(context: Arc<ToolContext>) -> AstGrepTool {
        AstGrepTool { context }
    }
}

static GREP_PARAMETERS: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Code with meta-variables: $X matches one node, $$$ARGS any number (e.g. `$A.unwrap()`, `console.log($$$)`)"},
            "lang": {"type": "string", "description": format!("The language ({}); default: each file's, by extension", languages())},
            "path": {"type": "string", "description": "A file or directory to search (default: the working directory; .gitignore is respected)"}
        },
        "required": ["pattern"]
    })
});

impl Tool for AstGrepTool {
    fn name(&self) -> &str {
        AST_GREP
    }

    fn label(&self) -> &str {
        "AST grep"
    }

    fn description(&self) -> &str {
        "Search code by its syntax tree (ast-grep patterns): the pattern is code where $X \
         matches any one node and $$$X any number of them, so it finds calls, expressions and \
         statements whatever their formatting. Results are file:line:column with the match and \
         what each meta-variable captured."
    }

    fn parameters(&self) -> &Value {
        &GREP_PARAMETERS
    }

    fn prompt_snippet(&self) -> Option<&str> {
        Some("Search code by syntax-tree pattern (ast-grep: $X, $$$ARGS)")
    }

    fn execute(self: Arc<Self>, invocation: ToolInvocation) -> ToolFuture {
        Box::pin(async move {
            let (lang, paths) = match scope(&self.context, &invocation.arguments) {
                Ok(scope) => scope,
                Err(error) => return ToolOutput::error(error),
            };
            let pattern = invocation.arguments["pattern"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let root = self.context.cwd.clone();
            let search = tokio::task::spawn_blocking(move || {
                pi_ast::search(&root, &paths, &pattern, lang, &Limits::default())
            });
            let report = tokio::select! {
                () = invocation.cancel.cancelled() => return ToolOutput::error("Operation aborted"),
                report = search => report,
            };
            match report {
                Ok(Ok(report)) => {
                    let details = json!({
                        "matches": report.matches.len(),
                        "filesSearched": report.files_searched,
                        "truncated": report.truncated,
                    });
                    ToolOutput::text(report.to_text()).with_details(details)
                }
                Ok(Err(error)) => ToolOutput::error(error.to_string()),
                Err(error) => ToolOutput::error(format!("the search failed: {error}")),
            }
        })
    }
}

/// `ast_edit {pattern, rewrite, lang?, path?, apply?}`.
pub struct AstEditTool {
    context: Arc<ToolContext>,
    // The latest preview, with the arguments that made it. A sync mutex, never held across
    // an await.
    previewed: Mutex<Option<(Value, EditPlan)>>,
}

impl AstEditTool {
    /// The tool of the session of `context`.
    pub fn new(context: Arc<ToolContext>) -> AstEditTool {
        AstEditTool {
            context,
            previewed: Mutex::new(None),
        }
    }
}

static EDIT_PARAMETERS: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Code with meta-variables, as for ast_grep"},
            "rewrite": {"type": "string", "description": "What each match becomes; may use the pattern's meta-variables ($A, $$$ARGS)"},
            "lang": {"type": "string", "description": format!("The language ({}); default: each file's, by extension", languages())},
            "path": {"type": "string", "description": "A file or directory (default: the working directory)"},
            "apply": {"type": "boolean", "description": "false (default): preview the diff; true: write the preview made with the same arguments"}
        },
        "required": ["pattern", "rewrite"]
    })
});

/// The arguments that make a preview (all but `apply`).
fn preview_key(arguments: &Value) -> Value {
    json!({
        "pattern": arguments["pattern"],
        "rewrite": arguments["rewrite"],
        "lang": arguments["lang"],
        "path": arguments["path"],
    })
}

impl Tool for AstEditTool {
    fn name(&self) -> &str {
        AST_EDIT
    }

    fn label(&self) -> &str {
        "AST edit"
    }

    fn description(&self) -> &str {
        "Rewrite code by its syntax tree: every match of an ast-grep pattern becomes `rewrite` \
         (which may use the pattern's meta-variables). First call it without `apply` to see the \
         diff; then call it again with the same arguments and `apply: true` to write exactly \
         that (refused for a file changed since the preview)."
    }

    fn parameters(&self) -> &Value {
        &EDIT_PARAMETERS
    }

    fn prompt_snippet(&self) -> Option<&str> {
        Some("Rewrite code by syntax-tree pattern (preview, then apply)")
    }

    fn execute(self: Arc<Self>, invocation: ToolInvocation) -> ToolFuture {
        Box::pin(async move {
            let arguments = &invocation.arguments;
            let key = preview_key(arguments);
            if arguments["apply"].as_bool().unwrap_or(false) {
                return self.apply(&key).await;
            }
            let (lang, paths) = match scope(&self.context, arguments) {
                Ok(scope) => scope,
                Err(error) => return ToolOutput::error(error),
            };
            let pattern = arguments["pattern"].as_str().unwrap_or_default().to_owned();
            let replacement = arguments["rewrite"].as_str().unwrap_or_default().to_owned();
            let root = self.context.cwd.clone();
            let preview = tokio::task::spawn_blocking(move || {
                pi_ast::rewrite(
                    &root,
                    &paths,
                    &pattern,
                    &replacement,
                    lang,
                    &Limits::default(),
                )
            });
            let plan = tokio::select! {
                () = invocation.cancel.cancelled() => return ToolOutput::error("Operation aborted"),
                plan = preview => plan,
            };
            let plan = match plan {
                Ok(Ok(plan)) => plan,
                Ok(Err(error)) => return ToolOutput::error(error.to_string()),
                Err(error) => return ToolOutput::error(format!("the preview failed: {error}")),
            };
            let mut text = plan.to_text();
            if !plan.files.is_empty() {
                text.push_str(
                    "\n\nNothing is written yet: call ast_edit again with the same arguments and \
                     apply: true to write this.",
                );
            }
            let details = json!({
                "files": plan.files.len(),
                "replacements": plan.replacements(),
                "applied": false,
            });
            *self
                .previewed
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some((key, plan));
            ToolOutput::text(text).with_details(details)
        })
    }
}

impl AstEditTool {
    async fn apply(&self, key: &Value) -> ToolOutput {
        let plan = {
            let previewed = self
                .previewed
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            match previewed.as_ref() {
                Some((made_with, plan)) if made_with == key => plan.clone(),
                _ => {
                    return ToolOutput::error(
                        "Nothing previewed with these arguments: call ast_edit without apply \
                         first, check the diff, then call it again with the same arguments and \
                         apply: true.",
                    );
                }
            }
        };
        if plan.files.is_empty() {
            return ToolOutput::error("The preview changed nothing; there is nothing to write.");
        }
        for file in &plan.files {
            if let Err(error) = self.context.check_write(file.absolute_path()) {
                return ToolOutput::error(error);
            }
        }
        // Every file under its lock (in path order, as the locks' users take them), then all
        // or nothing.
        let mut paths: Vec<PathBuf> = plan
            .files
            .iter()
            .map(|file| file.absolute_path().to_path_buf())
            .collect();
        paths.sort();
        let mut guards = Vec::with_capacity(paths.len());
        for path in &paths {
            guards.push(self.context.locks.lock(path).await);
        }
        let applied = tokio::task::spawn_blocking(move || pi_ast::apply(&plan)).await;
        drop(guards);
        match applied {
            Ok(Ok(applied)) => {
                *self
                    .previewed
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = None;
                let details = json!({
                    "files": applied.files.len(),
                    "replacements": applied.replacements(),
                    "applied": true,
                });
                ToolOutput::text(applied.to_text()).with_details(details)
            }
            Ok(Err(error)) => ToolOutput::error(error.to_string()),
            Err(error) => ToolOutput::error(format!("writing failed: {error}")),
        }
    }
}
