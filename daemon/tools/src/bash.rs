//! `bash {command, timeout?}`: runs a command through the session's shell (see [`crate::exec`])
//! and reports its merged output with pi's tail truncation and notices. Output past the limits
//! is kept whole as an artifact (`artifact://ID`). A non-zero exit, a timeout and an abort are
//! errors that still carry the output.

use std::sync::Arc;
use std::time::Duration;

use pi_agent::{Tool, ToolFuture, ToolInvocation, ToolOutput};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::ToolContext;
use crate::exec::{ExecEnd, ExecPlace, ExecRequest, OutputStyle, run};
use crate::output::TailSnapshot;
use crate::support::{object_schema, parse_args};
use crate::truncate::{DEFAULT_MAX_BYTES, TruncatedBy, format_size};

const DESCRIPTION: &str = "Execute a bash command in the current working directory. Returns stdout and stderr. Output is truncated to last 2000 lines or 50KB (whichever is hit first). If truncated, full output is saved as an artifact (artifact://ID) that the read tool can open. Optionally provide a timeout in seconds.";

/// The tool's parameters, the same for every session.
static SCHEMA: std::sync::LazyLock<Value> = std::sync::LazyLock::new(|| {
    object_schema(
        json!({
            "command": {"type": "string", "description": "Bash command to execute"},
            "timeout": {"type": "number", "description": "Timeout in seconds (optional, no default timeout)"},
        }),
        &["command"],
    )
});

/// The `bash` tool.
pub struct BashTool {
    context: Arc<ToolContext>,
}

#[derive(Deserialize)]
struct BashArgs {
    command: String,
    timeout: Option<f64>,
}

impl BashTool {
    /// `bash` for the session of `context`.
    pub fn new(context: Arc<ToolContext>) -> BashTool {
        BashTool { context }
    }
}

impl Tool for BashTool {
    fn name(&self) -> &str {
        "bash"
    }
    fn label(&self) -> &str {
        "Bash"
    }
    fn description(&self) -> &str {
        DESCRIPTION
    }
    fn parameters(&self) -> &Value {
        &SCHEMA
    }
    /// pi 0.73.1's line for it in the system prompt.
    fn prompt_snippet(&self) -> Option<&str> {
        Some("Execute bash commands (ls, grep, find, etc.)")
    }
    fn execute(self: Arc<Self>, invocation: ToolInvocation) -> ToolFuture {
        Box::pin(async move {
            let args: BashArgs = match parse_args("bash", &invocation.arguments) {
                Ok(args) => args,
                Err(output) => return output,
            };
            let timeout_seconds = args
                .timeout
                .filter(|seconds| seconds.is_finite() && *seconds > 0.0);
            let command = match &self.context.places {
                Some(places) => places.expand(&args.command),
                None => args.command,
            };
            let request = ExecRequest {
                command,
                timeout: timeout_seconds.map(Duration::from_secs_f64),
                style: OutputStyle::Raw,
            };
            let context = &self.context;
            let place = ExecPlace {
                cwd: &context.cwd,
                env: &context.env,
                shell: &context.shell,
                artifacts: &context.artifacts,
                sandbox: context.sandbox.as_ref(),
                spawner: &context.spawner,
            };
            // pi's updates: an empty one as the command starts, then the raw tail so far with
            // `{}` or the truncation details (no `(no output)`, no notice).
            let progress = invocation.progress.clone();
            progress.update(ToolOutput {
                content: Vec::new(),
                details: Value::Null,
                is_error: false,
                terminate: false,
            });
            let mut on_progress = move |snapshot: TailSnapshot| {
                let truncation = &snapshot.truncation;
                let details = if truncation.truncated {
                    truncation_details(&snapshot)
                } else {
                    json!({})
                };
                progress.update(ToolOutput::text(truncation.content.clone()).with_details(details));
            };
            let result = match run(place, &request, &invocation.cancel, &mut on_progress).await {
                Ok(result) => result,
                Err(error) => return ToolOutput::error(error.to_string()),
            };
            let (mut text, details) = render(&result.output);
            // pi: the status after the output; an abort or timeout with no output is the status
            // alone, an exit code follows `(no output)`.
            let mut append_status = |status: String, keep_empty_notice: bool| {
                if result.output.truncation.content.is_empty() && !keep_empty_notice {
                    text = status;
                } else {
                    text.push_str(&format!("\n\n{status}"));
                }
            };
            let is_error = match result.end {
                ExecEnd::Exited(0) | ExecEnd::Signaled => false,
                ExecEnd::Exited(code) => {
                    append_status(format!("Command exited with code {code}"), true);
                    true
                }
                ExecEnd::TimedOut => {
                    let seconds = timeout_seconds.unwrap_or_default();
                    append_status(format!("Command timed out after {seconds} seconds"), false);
                    true
                }
                ExecEnd::Aborted => {
                    append_status("Command aborted".to_owned(), false);
                    true
                }
            };
            if let Some(sandbox) = &context.sandbox
                && matches!(result.end, ExecEnd::Exited(code) if code != 0)
                && crate::sandbox::looks_denied(&result.output.truncation.content)
            {
                text.push_str(&format!(
                    "\n\n[Blocked by the sandbox? {}. If the command needs more, ask the user to change the `sandbox` setting.]",
                    sandbox.describe(&context.cwd)
                ));
            }
            ToolOutput {
                content: vec![pi_llm::UserContent::text(text)],
                details,
                is_error,
                terminate: false,
            }
        })
    }
}

/// The text and details pi shows for output `snapshot`: the tail (or `(no output)`), and when
/// truncated a notice naming the artifact with the full output.
pub fn render(snapshot: &TailSnapshot) -> (String, Value) {
    let truncation = &snapshot.truncation;
    let mut text = if truncation.content.is_empty() {
        "(no output)".to_owned()
    } else {
        truncation.content.clone()
    };
    if !truncation.truncated {
        return (text, json!({}));
    }
    let full = snapshot
        .artifact_reference()
        .unwrap_or_else(|| "(not stored)".to_owned());
    let end = truncation.total_lines;
    let start = end + 1 - truncation.output_lines.min(end);
    let notice = if truncation.last_line_partial {
        format!(
            "[Showing last {} of line {end} (line is {}). Full output: {full}]",
            format_size(truncation.output_bytes),
            format_size(snapshot.last_line_bytes)
        )
    } else {
        match truncation.truncated_by {
            Some(TruncatedBy::Lines) | None => {
                format!("[Showing lines {start}-{end} of {end}. Full output: {full}]")
            }
            Some(TruncatedBy::Bytes) => format!(
                "[Showing lines {start}-{end} of {end} ({} limit). Full output: {full}]",
                format_size(DEFAULT_MAX_BYTES as u64)
            ),
        }
    };
    text.push_str(&format!("\n\n{notice}"));
    (text, truncation_details(snapshot))
}

/// pi's details of truncated output: the truncation and where the full output is.
fn truncation_details(snapshot: &TailSnapshot) -> Value {
    json!({
        "truncation": snapshot.truncation.to_json(),
        "fullOutputPath": snapshot.artifact_reference(),
    })
}
