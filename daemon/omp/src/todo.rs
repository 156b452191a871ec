//! The `todo` tool: one operation per call on the session's todo list (oh-my-pi v18's
//! shape). The session applies it (so parallel calls apply one after the other) and the
//! result's details record the whole list, which is how the list is read back from the
//! branch after a restart or a navigation.

use std::sync::{Arc, LazyLock};

use pi_agent::{Tool, ToolFuture, ToolInvocation, ToolOutput};
use pi_session::SessionsWeak;
use pi_session::todos::{self, TodoChange};
use serde_json::{Value, json};

/// The tool's name.
pub const NAME: &str = todos::TODO_TOOL;

/// The `todo` tool of one session.
pub struct TodoTool {
    sessions: SessionsWeak,
    session_id: String,
}

impl TodoTool {
    /// The tool of session `session_id`.
    pub fn new(sessions: SessionsWeak, session_id: String) -> TodoTool {
        TodoTool {
            sessions,
            session_id,
        }
    }
}

static PARAMETERS: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "type": "object",
        "properties": {
            "op": {
                "type": "string",
                "enum": ["init", "append", "start", "done", "drop", "block", "unblock", "rm", "view"],
                "description": "init: replace the list with `phases`; append: add `tasks` to `phase` (new or existing; default the last); start: begin `task`; done: finish `task` (default: the one in progress); drop: abandon `task`; block: mark `task` blocked by `blocker`; unblock: make `task` pending again; rm: remove `task`; view: show the list"
            },
            "phases": {
                "type": "array",
                "description": "For init: the phases in order, each with its tasks",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "tasks": {"type": "array", "items": {"type": "string"}}
                    },
                    "required": ["name", "tasks"]
                }
            },
            "phase": {"type": "string", "description": "For append: the phase's name"},
            "tasks": {"type": "array", "items": {"type": "string"}, "description": "For append: the new tasks"},
            "task": {"type": "string", "description": "The task's id (t1, t2, …) or its exact text"},
            "blocker": {"type": "string", "description": "For block: what the task waits for"}
        },
        "required": ["op"]
    })
});

const DESCRIPTION: &str = "Keep a todo list for multi-step work: phases of tasks, each \
pending, in_progress, completed, abandoned or blocked. Exactly one task is in progress; \
finishing it starts the next. One operation per call; a failed operation changes nothing. \
Start with `init`, mark tasks `done` as you finish them, and do not stop while tasks are open \
(finish, `drop` or `block` them).";

impl Tool for TodoTool {
    fn name(&self) -> &str {
        NAME
    }

    fn label(&self) -> &str {
        "Todo"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> &Value {
        &PARAMETERS
    }

    fn prompt_snippet(&self) -> Option<&str> {
        Some("Keep a phased todo list for multi-step work (one operation per call)")
    }

    fn prepare_arguments(&self, arguments: Value) -> Value {
        // Models send the fields an operation does not use as null.
        match arguments {
            Value::Object(map) => Value::Object(
                map.into_iter()
                    .filter(|(_, value)| !value.is_null())
                    .collect(),
            ),
            other => other,
        }
    }

    fn execute(self: Arc<Self>, invocation: ToolInvocation) -> ToolFuture {
        Box::pin(async move {
            let op = match todos::parse_op(invocation.arguments) {
                Ok(op) => op,
                Err(error) => return ToolOutput::error(format!("Invalid todo operation: {error}")),
            };
            let Some(sessions) = self.sessions.upgrade() else {
                return ToolOutput::error("The daemon is stopping; the todo list was not changed");
            };
            match sessions
                .change_todos(&self.session_id, TodoChange::Apply(op))
                .await
            {
                Ok(Ok(recorded)) => ToolOutput::text(todos::render(&recorded.todos))
                    .with_details(recorded.to_value()),
                Ok(Err(error)) => {
                    ToolOutput::error(format!("{error}. The todo list is unchanged."))
                }
                Err(error) => ToolOutput::error(format!("Cannot change the todo list: {error}")),
            }
        })
    }
}
