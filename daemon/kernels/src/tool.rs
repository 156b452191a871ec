//! The `python` tool: runs a cell in the session's persistent kernel (see the pool) and
//! returns its text output with `bash`'s tail truncation (the rest in an artifact), its
//! images as images the model sees, and what happened to the kernel.

use std::sync::Arc;
use std::time::Duration;

use pi_agent::{Tool, ToolFuture, ToolInvocation, ToolOutput};
use pi_llm::{ImageContent, UserContent};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{KernelPlace, KernelPool};

const DESCRIPTION: &str = "Run Python code in a persistent Jupyter kernel (ipykernel) for this session: variables, imports and loaded data stay between calls. Uses the project's .venv if it has one, else python3. Returns stdout/stderr, the value of the last expression, errors with a trimmed traceback, and images the code displays (IPython.display). Output is truncated to the last 2000 lines or 50KB; the full output is saved as an artifact. `timeout` (seconds) interrupts a long cell; `reset: true` starts a fresh kernel first.";

/// The `python` tool of one session.
pub struct PythonTool {
    pool: Arc<KernelPool>,
    place: KernelPlace,
    artifacts: pi_tools::SessionArtifacts,
    schema: Value,
}

#[derive(Deserialize)]
struct PythonArgs {
    code: String,
    timeout: Option<f64>,
    reset: Option<bool>,
}

impl PythonTool {
    /// The tool of the session at `place`.
    pub fn new(
        pool: Arc<KernelPool>,
        place: KernelPlace,
        artifacts: pi_tools::SessionArtifacts,
    ) -> PythonTool {
        let schema = json!({
            "type": "object",
            "properties": {
                "code": {"type": "string", "description": "Python code to run (a cell)"},
                "timeout": {"type": "number", "description": "Interrupt the cell after this many seconds (optional)"},
                "reset": {"type": "boolean", "description": "Start a fresh kernel first (all state is lost)"},
            },
            "required": ["code"],
        });
        PythonTool {
            pool,
            place,
            artifacts,
            schema,
        }
    }
}

impl Tool for PythonTool {
    fn name(&self) -> &str {
        "python"
    }

    fn label(&self) -> &str {
        "Python"
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
            let args: PythonArgs = match serde_json::from_value(invocation.arguments.clone()) {
                Ok(args) => args,
                Err(error) => {
                    return ToolOutput::error(format!("invalid arguments for python: {error}"));
                }
            };
            let timeout = args
                .timeout
                .filter(|seconds| seconds.is_finite() && *seconds > 0.0)
                .map(Duration::from_secs_f64);
            let mut window =
                pi_tools::output::OutputWindow::new(&self.artifacts, pi_tools::OutputStyle::Raw);
            let progress = invocation.progress.clone();
            let mut on_output = move |snapshot: pi_tools::output::TailSnapshot| {
                progress.update(ToolOutput::text(snapshot.truncation.content.clone()));
            };
            let ran = self
                .pool
                .execute(
                    &self.place,
                    &args.code,
                    args.reset == Some(true),
                    timeout,
                    &invocation.cancel,
                    super::TextSink {
                        window: &mut window,
                        on_output: &mut on_output,
                    },
                )
                .await;
            let cell = match ran {
                Ok(cell) => cell,
                Err(error) => return ToolOutput::error(error.to_string()),
            };
            let snapshot = match window.finish().await {
                Ok(snapshot) => snapshot,
                Err(error) => {
                    return ToolOutput::error(format!("cannot keep the cell's output: {error}"));
                }
            };
            let (mut text, details) = pi_tools::render_tail(&snapshot);
            if snapshot.truncation.content.is_empty() && !cell.images.is_empty() {
                text.clear();
            }
            if let Some(reason) = &cell.restarted {
                text = format!(
                    "[New kernel: {reason}, so variables and imports from earlier cells are gone.]\n{text}"
                );
            }
            if let Some(stopped) = &cell.stopped {
                text.push_str(&format!("\n\n[The cell stopped: {stopped}.]"));
            }
            let mut content = Vec::new();
            if !text.is_empty() {
                content.push(UserContent::text(text));
            }
            content.extend(cell.images.iter().map(|png| {
                UserContent::Image(ImageContent {
                    data: png.clone(),
                    mime_type: "image/png".to_owned(),
                })
            }));
            ToolOutput {
                content,
                details,
                is_error: cell.error.is_some() || cell.stopped.is_some(),
                terminate: false,
            }
        })
    }
}
