//! A session's todo list (oh-my-pi's `todo`): phases of tasks the model keeps with the
//! `todo` tool, or a client sets with `session/setTodos`. It belongs to the branch: it is
//! read back from the branch's entries, so it survives a restart and follows navigation and
//! forks. Every change is announced with the `todos_updated` session event; `session/get`
//! has the current list.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The whole list.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TodoList {
    /// Phases in order.
    pub phases: Vec<TodoPhase>,
}

impl TodoList {
    /// No task at all.
    pub fn is_empty(&self) -> bool {
        self.phases.iter().all(|phase| phase.tasks.is_empty())
    }

    /// Every task, phase by phase.
    pub fn tasks(&self) -> impl Iterator<Item = &TodoTask> {
        self.phases.iter().flat_map(|phase| phase.tasks.iter())
    }

    /// Tasks not yet finished: pending, in progress or blocked.
    pub fn open(&self) -> impl Iterator<Item = &TodoTask> {
        self.tasks().filter(|task| task.status.is_open())
    }
}

/// A named group of tasks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TodoPhase {
    /// The phase's name.
    pub name: String,
    /// Its tasks in order.
    pub tasks: Vec<TodoTask>,
}

/// One task.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TodoTask {
    /// Short id (`t1`, `t2`, …), stable while the task exists.
    pub id: String,
    /// What to do.
    pub content: String,
    /// Where it stands.
    pub status: TodoStatus,
    /// What it waits for (blocked tasks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocker: Option<String>,
}

/// Where a task stands. At most one task is in progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on (at most one).
    InProgress,
    /// Done.
    Completed,
    /// Given up.
    Abandoned,
    /// Waiting on something (`blocker`).
    Blocked,
}

impl TodoStatus {
    /// Not finished (pending, in progress, blocked).
    pub fn is_open(self) -> bool {
        matches!(
            self,
            TodoStatus::Pending | TodoStatus::InProgress | TodoStatus::Blocked
        )
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            TodoStatus::Pending => "pending",
            TodoStatus::InProgress => "in_progress",
            TodoStatus::Completed => "completed",
            TodoStatus::Abandoned => "abandoned",
            TodoStatus::Blocked => "blocked",
        }
    }
}

/// Params of `session/setTodos`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionSetTodosParams {
    /// The session.
    pub session_id: String,
    /// The new list (ids may be empty: the daemon numbers them).
    pub todos: TodoList,
}
