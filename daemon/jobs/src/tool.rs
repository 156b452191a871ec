//! The model's side of the process pool: `bash` with `background: true` (and `tty: true`)
//! starts a job (`BackgroundBash`, a wrapper around pi's `bash` that adds the two arguments);
//! the `job` tool lists jobs, reads their new output, waits for them, writes to their stdin
//! and kills them. Sessions get both when their tools name `job`.

use std::sync::Arc;
use std::time::Duration;

use pi_agent::{Tool, ToolFuture, ToolInvocation, ToolOutput};
use pi_tools::ToolContext;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{JobError, JobPool, JobRequest};

const JOB_DESCRIPTION: &str = "Manage background jobs started with bash `background: true`. \
Actions: `list` (this session's jobs); `output` (new output since the last read, or from byte \
`offset`; with `waitFor`, wait up to `timeout` seconds (default 10) for that text to appear); \
`wait` (until the job ends, up to `timeout` seconds, default 30; returns its new output too); \
`write` (send `input` to its stdin or terminal, e.g. \"2+3\\n\"; `close: true` then closes stdin); \
`kill` (the job and everything it started).";

/// The longest a `wait` or `output` waits.
const MAX_WAIT: Duration = Duration::from_secs(600);

/// `bash` plus `background` and `tty` (a [`pi_agent::ToolLayer`] around pi's `bash`, which
/// runs everything in the foreground).
pub struct BackgroundBash {
    /// The pool.
    pub pool: Arc<JobPool>,
    /// The session's tool context (directory, environment, shell, sandbox, artifacts).
    pub context: Arc<ToolContext>,
    schema: Value,
    description: String,
}

impl BackgroundBash {
    /// `inner` (pi's `bash`) with `background` and `tty`.
    pub fn layered(
        inner: Arc<dyn Tool>,
        pool: Arc<JobPool>,
        context: Arc<ToolContext>,
    ) -> Arc<dyn Tool> {
        let mut schema = inner.parameters().clone();
        if let Some(properties) = schema["properties"].as_object_mut() {
            properties.insert(
                "background".to_owned(),
                json!({"type": "boolean", "description": "Run in the background and return a job id at once (a dev server, a watcher, a long build); manage it with the job tool"}),
            );
            properties.insert(
                "tty".to_owned(),
                json!({"type": "boolean", "description": "With background: run under a terminal (for interactive programs such as python3 -i, bc, REPLs)"}),
            );
        }
        let description = format!(
            "{} With `background: true` the command runs as a job: the call returns its id at once, and the job tool reads its output, writes to its stdin, waits for or kills it.",
            inner.description()
        );
        pi_agent::layered(
            inner,
            BackgroundBash {
                pool,
                context,
                schema,
                description,
            },
        )
    }
}

impl pi_agent::ToolLayer for BackgroundBash {
    fn description<'a>(&'a self, _inner: &'a dyn Tool) -> &'a str {
        &self.description
    }

    fn parameters<'a>(&'a self, _inner: &'a dyn Tool) -> &'a Value {
        &self.schema
    }

    fn call(self: Arc<Self>, inner: Arc<dyn Tool>, invocation: ToolInvocation) -> ToolFuture {
        if invocation.arguments["background"] != Value::Bool(true) {
            return inner.execute(invocation);
        }
        Box::pin(async move {
            let Some(command) = invocation.arguments["command"].as_str() else {
                return ToolOutput::error("invalid arguments for bash: `command` must be a string");
            };
            let context = &self.context;
            let place = pi_tools::ExecPlace {
                cwd: &context.cwd,
                env: &context.env,
                shell: &context.shell,
                artifacts: &context.artifacts,
                sandbox: context.sandbox.as_ref(),
                spawner: &context.spawner,
            };
            let spec = match pi_tools::exec::shell_spec(place, command) {
                Ok(spec) => spec,
                Err(error) => return ToolOutput::error(error.to_string()),
            };
            let tty = invocation.arguments["tty"] == Value::Bool(true);
            let started = self
                .pool
                .start(JobRequest {
                    session_id: context.session_id.clone(),
                    command: command.to_owned(),
                    program: spec.program,
                    args: spec.args,
                    cwd: spec.cwd,
                    env: spec.env,
                    tty,
                    artifacts: context.artifacts.clone(),
                })
                .await;
            match started {
                Ok(job) => ToolOutput::text(format!(
                    "Started job {id}{pid} in the background{terminal}: `{command}`\nIts output goes to artifact://{id}. Use the job tool with id {id}: `output` (new output; `waitFor` waits for a text), `wait`, `write` (stdin), `kill`.",
                    id = job.id,
                    pid = job.pid.map(|pid| format!(" (pid {pid})")).unwrap_or_default(),
                    terminal = if tty { " under a terminal" } else { "" },
                ))
                .with_details(json!({"jobId": job.id})),
                Err(error) => ToolOutput::error(error.to_string()),
            }
        })
    }
}

/// The `job` tool of one session.
pub struct JobTool {
    /// The pool.
    pub pool: Arc<JobPool>,
    /// The session.
    pub session_id: String,
    schema: Value,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct JobArgs {
    action: String,
    id: Option<String>,
    input: Option<String>,
    offset: Option<u64>,
    wait_for: Option<String>,
    timeout: Option<f64>,
    close: Option<bool>,
}

impl JobTool {
    /// The tool for `session_id`.
    pub fn new(pool: Arc<JobPool>, session_id: String) -> JobTool {
        let schema = json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["list", "output", "wait", "write", "kill"], "description": "What to do"},
                "id": {"type": "string", "description": "The job's id (all actions but list)"},
                "input": {"type": "string", "description": "write: what to send (include \\n to press Enter)"},
                "close": {"type": "boolean", "description": "write: close stdin afterwards (end of input)"},
                "offset": {"type": "number", "description": "output: read from this byte instead of from the last read"},
                "waitFor": {"type": "string", "description": "output: wait until the new output contains this text"},
                "timeout": {"type": "number", "description": "output/wait: the most seconds to wait"},
            },
            "required": ["action"],
        });
        JobTool {
            pool,
            session_id,
            schema,
        }
    }

    async fn run(&self, args: JobArgs) -> Result<String, JobError> {
        let id = || {
            args.id
                .as_deref()
                .ok_or_else(|| JobError::Call(format!("`{}` needs the job's `id`", args.action)))
        };
        let timeout = |default: u64| {
            args.timeout
                .filter(|seconds| seconds.is_finite() && *seconds >= 0.0)
                .map_or(Duration::from_secs(default), Duration::from_secs_f64)
                .min(MAX_WAIT)
        };
        match args.action.as_str() {
            "list" => {
                let jobs = self.pool.list(Some(&self.session_id)).await?;
                if jobs.is_empty() {
                    return Ok("No background jobs in this session.".to_owned());
                }
                Ok(jobs
                    .iter()
                    .map(|job| {
                        let state = match (job.state.as_str(), job.exit_code) {
                            ("exited", Some(code)) => format!("exited with code {code}"),
                            ("running", _) => match job.pid {
                                Some(pid) => format!("running (pid {pid})"),
                                None => "running".to_owned(),
                            },
                            ("lost", _) => "lost (the daemon restarted while it ran)".to_owned(),
                            (other, _) => other.to_owned(),
                        };
                        format!(
                            "{}  {state}  {} of output  `{}`",
                            job.id,
                            pi_tools::truncate::format_size(job.output_bytes),
                            job.command
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n"))
            }
            "output" => {
                let id = id()?;
                let wait = if args.wait_for.is_some() {
                    timeout(10)
                } else {
                    Duration::ZERO
                };
                let (output, found) = self
                    .pool
                    .output(
                        &self.session_id,
                        id,
                        args.offset,
                        args.wait_for.as_deref(),
                        wait,
                    )
                    .await?;
                let mut text = render_output(id, &output);
                if let Some(needle) = &args.wait_for
                    && !found
                {
                    text.push_str(&format!(
                        "\n[`{needle}` did not appear within {} s]",
                        wait.as_secs_f64()
                    ));
                }
                text.push_str(&format!("\n[{}]", self.status(id).await?));
                Ok(text)
            }
            "wait" => {
                let id = id()?;
                let limit = timeout(30);
                let end = self.pool.wait(&self.session_id, id, limit).await?;
                let (output, _) = self
                    .pool
                    .output(&self.session_id, id, None, None, Duration::ZERO)
                    .await?;
                let status = match end {
                    Some(_) => self.status(id).await?,
                    None => format!("job {id} is still running after {} s", limit.as_secs_f64()),
                };
                Ok(format!("{}\n[{status}]", render_output(id, &output)))
            }
            "write" => {
                let id = id()?;
                let input = args.input.as_deref().ok_or_else(|| {
                    JobError::Call("`write` needs the `input` to send".to_owned())
                })?;
                let written = self.pool.write(&self.session_id, id, input).await?;
                if args.close == Some(true) {
                    self.pool.close_stdin(&self.session_id, id).await?;
                    return Ok(format!(
                        "Wrote {written} bytes to job {id} and closed its stdin."
                    ));
                }
                Ok(format!(
                    "Wrote {written} bytes to job {id}. Read its answer with `output` (`waitFor` waits for a text)."
                ))
            }
            "kill" => {
                let id = id()?;
                if self.pool.kill(&self.session_id, id).await? {
                    Ok(format!("Killed job {id} and everything it started."))
                } else {
                    Ok(format!(
                        "Job {id} had already ended: {}.",
                        self.status(id).await?
                    ))
                }
            }
            other => Err(JobError::Call(format!(
                "unknown action {other:?}; use list, output, wait, write or kill"
            ))),
        }
    }

    /// One line on job `id`'s state.
    async fn status(&self, id: &str) -> Result<String, JobError> {
        let jobs = self.pool.list(Some(&self.session_id)).await?;
        let job = jobs
            .iter()
            .find(|job| job.id == id)
            .ok_or_else(|| super::no_such_job(id))?;
        Ok(match (job.state.as_str(), job.exit_code) {
            ("exited", Some(code)) => format!("job {id} exited with code {code}"),
            ("killed", _) => format!("job {id} was killed"),
            ("lost", _) => {
                format!("job {id} was lost: the daemon restarted while it ran, so it was stopped")
            }
            _ => format!("job {id} is running"),
        })
    }
}

fn render_output(id: &str, output: &super::JobOutput) -> String {
    let mut text = String::new();
    if output.skipped > 0 {
        text.push_str(&format!(
            "[{} of earlier output skipped; all of it: artifact://{id}]\n",
            pi_tools::truncate::format_size(output.skipped)
        ));
    }
    if output.text.is_empty() {
        text.push_str("(no new output)");
    } else {
        text.push_str(output.text.trim_end_matches('\n'));
    }
    text
}

impl Tool for JobTool {
    fn name(&self) -> &str {
        "job"
    }

    fn label(&self) -> &str {
        "Job"
    }

    fn description(&self) -> &str {
        JOB_DESCRIPTION
    }

    fn parameters(&self) -> &Value {
        &self.schema
    }

    fn prompt_snippet(&self) -> Option<&str> {
        pi_agent::tool::first_line(self.description())
    }

    fn execute(self: Arc<Self>, invocation: ToolInvocation) -> ToolFuture {
        Box::pin(async move {
            let args: JobArgs = match serde_json::from_value(invocation.arguments.clone()) {
                Ok(args) => args,
                Err(error) => {
                    return ToolOutput::error(format!("invalid arguments for job: {error}"));
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
