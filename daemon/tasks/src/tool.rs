//! The model's side of subagents: `task` (oh-my-pi's v18 shape), `delegate_to_subagents`
//! (pi-subagents' shape, for prompts written for it), the children's hidden `submit_result`,
//! and `agent://<session id>` for `read` (a child's transcript).

use std::sync::Arc;
use std::time::Duration;

use pi_agent::{Tool, ToolFuture, ToolInvocation, ToolOutput};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{TaskManager, TaskSpec};
use pi_session::ToolEnvironment;

/// Which shape a task tool takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `task {context, tasks: [{name?, agent?, task, outputSchema?, isolated?, resume?, cwd?,
    /// timeout?}]}`.
    Task,
    /// `delegate_to_subagents {tasks: [{name, prompt, cwd?, profile?, timeout?, resume?}],
    /// profile?}`.
    Delegate,
}

/// A session's `task` (or `delegate_to_subagents`) tool.
pub struct TaskTool {
    manager: Arc<TaskManager>,
    environment: ToolEnvironment,
    shape: Shape,
    description: String,
    schema: Value,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaskArgs {
    #[serde(default)]
    context: String,
    tasks: Vec<TaskItem>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaskItem {
    name: Option<String>,
    agent: Option<String>,
    task: String,
    output_schema: Option<Value>,
    #[serde(default)]
    isolated: bool,
    resume: Option<String>,
    cwd: Option<String>,
    timeout: Option<f64>,
}

#[derive(Deserialize)]
struct DelegateArgs {
    tasks: Vec<DelegateItem>,
    profile: Option<String>,
}

#[derive(Deserialize)]
struct DelegateItem {
    name: Option<String>,
    prompt: String,
    cwd: Option<String>,
    profile: Option<String>,
    timeout: Option<f64>,
    resume: Option<String>,
}

impl TaskTool {
    /// The tool for the session of `environment`.
    pub fn new(manager: Arc<TaskManager>, environment: ToolEnvironment, shape: Shape) -> TaskTool {
        let (agents, _) = super::agents::discover(&super::agents::search_dirs(
            &environment.cwd,
            manager.roots().config_dir.as_deref(),
            manager.roots().pi_agent_dir.as_deref(),
        ));
        let listed: Vec<String> = agents
            .values()
            .map(|agent| format!("- {}: {}", agent.name, agent.description))
            .collect();
        let timeout = json!({"type": "number", "description": "Seconds the subagent may stay idle (time inside a tool call does not count)"});
        let resume = json!({"type": "string", "description": "Session id of an earlier subagent of this session: the task goes to it, with its history"});
        let cwd =
            json!({"type": "string", "description": "Its working directory, relative to yours"});
        let (description, schema) = match shape {
            Shape::Task => (
                format!(
                    "Delegate work to subagents: each task runs as its own agent session (in \
                     parallel), without your conversation, and reports back. Give the shared \
                     background in `context` and one self-contained assignment per task. A task \
                     with `outputSchema` (JSON Schema) returns data matching it. The result \
                     names each child's session; read its whole transcript with read \
                     agent://<session id>, or continue it with `resume`. Agents:\n{}",
                    listed.join("\n")
                ),
                json!({
                    "type": "object",
                    "properties": {
                        "context": {"type": "string", "description": "Background every task gets"},
                        "tasks": {"type": "array", "items": {
                            "type": "object",
                            "properties": {
                                "name": {"type": "string", "description": "Short unique name"},
                                "agent": {"type": "string", "description": "Agent to run (default task)"},
                                "task": {"type": "string", "description": "The assignment"},
                                "outputSchema": {"type": "object", "description": "JSON Schema the result must match"},
                                "isolated": {"type": "boolean", "description": "Run in its own git worktree"},
                                "resume": resume,
                                "cwd": cwd,
                                "timeout": timeout,
                            },
                            "required": ["task"],
                        }},
                    },
                    "required": ["context", "tasks"],
                }),
            ),
            Shape::Delegate => (
                format!(
                    "Delegate tasks to subagents running in parallel; each gets its prompt \
                     (not your conversation) and returns its final answer. Profiles:\n{}",
                    listed.join("\n")
                ),
                json!({
                    "type": "object",
                    "properties": {
                        "tasks": {"type": "array", "items": {
                            "type": "object",
                            "properties": {
                                "name": {"type": "string", "description": "Short unique name"},
                                "prompt": {"type": "string", "description": "The subagent's task"},
                                "cwd": cwd,
                                "profile": {"type": "string", "description": "Profile (agent) to use"},
                                "timeout": timeout,
                                "resume": resume,
                            },
                            "required": ["prompt"],
                        }},
                        "profile": {"type": "string", "description": "Default profile for every task"},
                    },
                    "required": ["tasks"],
                }),
            ),
        };
        TaskTool {
            manager,
            environment,
            shape,
            description,
            schema,
        }
    }

    fn specs(&self, arguments: &Value) -> Result<(String, Vec<TaskSpec>), super::TaskError> {
        let seconds = |timeout: Option<f64>| {
            timeout
                .filter(|seconds| seconds.is_finite() && *seconds > 0.0)
                // A week at most: beyond that it means "no limit" anyway.
                .map(|seconds| Duration::from_secs_f64(seconds.min(7.0 * 86_400.0)))
        };
        match self.shape {
            Shape::Task => {
                let args: TaskArgs =
                    serde_json::from_value(arguments.clone()).map_err(|error| {
                        super::TaskError::Call(format!("invalid arguments for task: {error}"))
                    })?;
                let specs = args
                    .tasks
                    .into_iter()
                    .map(|item| TaskSpec {
                        name: item.name,
                        agent: item.agent,
                        task: item.task,
                        output_schema: item.output_schema.filter(|schema| !schema.is_null()),
                        isolated: item.isolated,
                        resume: item.resume,
                        cwd: item.cwd,
                        timeout: seconds(item.timeout),
                    })
                    .collect();
                Ok((args.context, specs))
            }
            Shape::Delegate => {
                let args: DelegateArgs =
                    serde_json::from_value(arguments.clone()).map_err(|error| {
                        super::TaskError::Call(format!(
                            "invalid arguments for delegate_to_subagents: {error}"
                        ))
                    })?;
                let specs = args
                    .tasks
                    .into_iter()
                    .map(|item| TaskSpec {
                        name: item.name,
                        agent: item.profile.or_else(|| args.profile.clone()),
                        task: item.prompt,
                        output_schema: None,
                        isolated: false,
                        resume: item.resume,
                        cwd: item.cwd,
                        timeout: seconds(item.timeout),
                    })
                    .collect();
                Ok((String::new(), specs))
            }
        }
    }
}

impl Tool for TaskTool {
    fn name(&self) -> &str {
        match self.shape {
            Shape::Task => "task",
            Shape::Delegate => "delegate_to_subagents",
        }
    }

    fn label(&self) -> &str {
        match self.shape {
            Shape::Task => "Task",
            Shape::Delegate => "Delegate",
        }
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> &Value {
        &self.schema
    }

    fn prompt_snippet(&self) -> Option<&str> {
        pi_agent::tool::first_line(self.description())
    }

    fn execute(self: Arc<Self>, invocation: ToolInvocation) -> ToolFuture {
        Box::pin(async move {
            let (context, specs) = match self.specs(&invocation.arguments) {
                Ok(parsed) => parsed,
                Err(error) => return ToolOutput::error(error.to_string()),
            };
            match self
                .manager
                .run_batch(
                    &self.environment,
                    &context,
                    specs,
                    invocation.cancel.clone(),
                    invocation.progress.clone(),
                )
                .await
            {
                Ok((outcomes, problems)) => super::render(&outcomes, &problems),
                Err(error) => ToolOutput::error(error.to_string()),
            }
        })
    }
}

/// A child's `submit_result`: its result, checked against the task's output schema.
pub struct SubmitResultTool {
    manager: Arc<TaskManager>,
    session_id: String,
    schema: Value,
}

impl SubmitResultTool {
    /// The tool of child `session_id` (its schema, when its slot is registered already).
    pub fn new(manager: Arc<TaskManager>, session_id: String) -> SubmitResultTool {
        let data = manager
            .slot(&session_id)
            .and_then(|slot| slot.schema.clone())
            .unwrap_or_else(|| json!({"description": "Your result"}));
        SubmitResultTool {
            manager,
            session_id,
            schema: json!({
                "type": "object",
                "properties": {
                    "data": data,
                    "error": {"type": "string", "description": "Why you could not do the task (instead of data)"},
                },
            }),
        }
    }
}

impl Tool for SubmitResultTool {
    fn name(&self) -> &str {
        "submit_result"
    }

    fn label(&self) -> &str {
        "Submit result"
    }

    fn description(&self) -> &str {
        "Finish your task: give your result as `data` (matching the output schema when one was \
         given), or `error` saying why you could not do it. Call it once, at the end."
    }

    fn parameters(&self) -> &Value {
        &self.schema
    }

    fn prompt_snippet(&self) -> Option<&str> {
        pi_agent::tool::first_line(self.description())
    }

    fn execute(self: Arc<Self>, invocation: ToolInvocation) -> ToolFuture {
        Box::pin(async move {
            let Some(slot) = self.manager.slot(&self.session_id) else {
                return ToolOutput::error(
                    "submit_result is for a subagent while its task runs; no task is waiting \
                     for this session's result",
                );
            };
            let arguments = &invocation.arguments;
            let result = match (arguments.get("data"), arguments.get("error")) {
                (_, Some(Value::String(error))) if !error.trim().is_empty() => Err(error.clone()),
                (Some(data), _) if !data.is_null() => match &slot.schema {
                    Some(schema) => {
                        match pi_agent::validate::validate_arguments("submit_result", schema, data)
                        {
                            Ok(data) => Ok(data),
                            Err(problems) => {
                                return ToolOutput::error(format!(
                                    "The result does not match the output schema; fix it and \
                                     call submit_result again.\n{problems}"
                                ));
                            }
                        }
                    }
                    None => Ok(data.clone()),
                },
                _ => {
                    return ToolOutput::error(
                        "submit_result needs `data` (your result) or `error` (why you could not \
                         do the task)",
                    );
                }
            };
            let accepted = if result.is_ok() {
                "Result submitted. You are done: end your turn."
            } else {
                "Error reported. You are done: end your turn."
            };
            *slot
                .result
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(result);
            ToolOutput::text(accepted)
        })
    }
}

/// `read agent://<session id>`: a subagent's transcript.
#[derive(Debug)]
pub struct AgentTranscripts {
    /// The daemon's sessions (from the reading session's environment).
    pub sessions: pi_session::SessionsWeak,
}

impl pi_tools::UriReader for AgentTranscripts {
    fn scheme(&self) -> &str {
        "agent://"
    }

    fn describe(&self) -> String {
        "Also reads a subagent's transcript given as agent://<session id>.".to_owned()
    }

    fn path_hint(&self) -> String {
        "agent://<session id> (a subagent's transcript)".to_owned()
    }

    fn read<'a>(&'a self, uri: &'a str) -> pi_tools::UriFuture<'a> {
        Box::pin(async move {
            let id = uri.trim_start_matches("agent://").trim_end_matches('/');
            let sessions = self
                .sessions
                .upgrade()
                .ok_or_else(|| "the daemon is stopping".to_owned())?;
            let (row, entries) = sessions
                .all_entries(id)
                .await
                .map_err(|error| format!("cannot read {uri}: {error}"))?;
            if row.task_name.is_none() {
                return Err(format!("{uri} is not a subagent's session"));
            }
            Ok(vec![pi_tools::UriContent::Text(transcript(
                &format!("Subagent {}", row.task_name.as_deref().unwrap_or_default()),
                &entries,
            ))])
        })
    }
}

/// A session's messages as concise Markdown under the heading `title` (a subagent's for
/// `agent://`, any session's for `history://`).
pub fn transcript(title: &str, entries: &[String]) -> String {
    let mut text = format!("# {title}\n");
    for entry in entries {
        let Ok(entry) = serde_json::from_str::<Value>(entry) else {
            continue;
        };
        if entry["type"] != "message" {
            continue;
        }
        let message = &entry["message"];
        let role = message["role"].as_str().unwrap_or_default();
        let heading = match role {
            "user" => "User".to_owned(),
            "assistant" => "Assistant".to_owned(),
            "toolResult" => format!(
                "Tool result ({}{})",
                message["toolName"].as_str().unwrap_or_default(),
                if message["isError"] == true {
                    ", error"
                } else {
                    ""
                }
            ),
            other => other.to_owned(),
        };
        text.push_str(&format!("\n## {heading}\n"));
        let blocks = match &message["content"] {
            Value::String(text) => vec![json!({"type": "text", "text": text})],
            Value::Array(blocks) => blocks.clone(),
            _ => Vec::new(),
        };
        for block in blocks {
            match block["type"].as_str() {
                Some("text") => {
                    text.push_str(block["text"].as_str().unwrap_or_default());
                    text.push('\n');
                }
                Some("toolCall") => text.push_str(&format!(
                    "→ {} {}\n",
                    block["name"].as_str().unwrap_or_default(),
                    block["arguments"]
                )),
                Some("image") => text.push_str("[image]\n"),
                _ => {}
            }
        }
    }
    text
}
