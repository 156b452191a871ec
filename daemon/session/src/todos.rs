//! A session's todo list (oh-my-pi's `todo`): the operations the `todo` tool applies, and the
//! list read back from a branch's entries.
//!
//! Invariants: an operation applies whole or not at all (an error leaves the list as it
//! was); after every operation at most one task is in progress, and when none is while a
//! task is pending, the first pending task is started (oh-my-pi keeps exactly one in
//! progress). The list of a branch is the last one its entries record: a successful `todo`
//! tool result's `details.todos`, or a `todos` custom entry (`session/setTodos`).

use pi_protocol::v1::message::AgentMessage;
use pi_protocol::v1::{SessionEntry, TodoList, TodoPhase, TodoStatus, TodoTask};
use serde::Deserialize;
use serde_json::Value;

/// The tool's name.
pub const TODO_TOOL: &str = "todo";
/// The custom entry `session/setTodos` records.
pub const TODOS_ENTRY: &str = "todos";

/// A change to a session's list.
#[derive(Clone, Debug, PartialEq)]
pub enum TodoChange {
    /// The `todo` tool's operation (not stored by itself: the tool's result records the list).
    Apply(TodoOp),
    /// `session/setTodos`: the list given whole, recorded in a `todos` custom entry.
    Set(TodoList),
}

/// One operation of the `todo` tool.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum TodoOp {
    /// Replace the whole list.
    Init {
        /// Phases with their tasks' texts.
        phases: Vec<PhaseSpec>,
    },
    /// Add tasks to a phase (a new phase when none has that name; default: the last).
    Append {
        /// The phase.
        #[serde(default)]
        phase: Option<String>,
        /// The tasks' texts.
        tasks: Vec<String>,
    },
    /// Start a task (the one in progress goes back to pending).
    Start {
        /// Id or text.
        task: String,
    },
    /// Finish a task (default: the one in progress).
    Done {
        /// Id or text.
        #[serde(default)]
        task: Option<String>,
    },
    /// Give a task up.
    Drop {
        /// Id or text.
        task: String,
    },
    /// Mark a task blocked.
    Block {
        /// Id or text.
        task: String,
        /// What it waits for.
        blocker: String,
    },
    /// A blocked task becomes pending again.
    Unblock {
        /// Id or text.
        task: String,
    },
    /// Remove a task.
    Rm {
        /// Id or text.
        task: String,
    },
    /// Show the list.
    View,
}

/// A phase of `init`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhaseSpec {
    /// Its name.
    pub name: String,
    /// Its tasks' texts.
    pub tasks: Vec<String>,
}

/// Why an operation was refused (the list is unchanged).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TodoError {
    /// No task has that id or text.
    #[error(
        "no task {0:?} in the todo list; use a task id (t1, t2, …) or its exact text (op `view` lists them)"
    )]
    NoSuchTask(String),
    /// `done` without a task while none is in progress.
    #[error("no task is in progress; name the task to mark done")]
    NothingInProgress,
    /// A task or phase without text.
    #[error("{0} is empty; give it some text")]
    Empty(&'static str),
    /// The list has no task yet.
    #[error("the todo list is empty; start it with op `init`")]
    NoList,
    /// Finished tasks cannot change.
    #[error("task {id} is already {status}; only open tasks can be {action}")]
    Finished {
        /// The task.
        id: String,
        /// Its status.
        status: &'static str,
        /// What was asked.
        action: &'static str,
    },
    /// `unblock` of a task that is not blocked.
    #[error("task {0} is not blocked")]
    NotBlocked(String),
    /// A list given whole has more than one task in progress.
    #[error("more than one task is in progress ({0}); at most one may be")]
    TwoInProgress(String),
    /// A list given whole has two tasks with one id.
    #[error("two tasks have the id {0}; ids must be unique")]
    DuplicateId(String),
}

/// `list` after `op`, or why not (then `list` is unchanged).
pub fn apply(list: &TodoList, op: TodoOp) -> Result<TodoList, TodoError> {
    let mut next = list.clone();
    match op {
        TodoOp::View => return Ok(next),
        TodoOp::Init { phases } => {
            let mut ids = Ids::default();
            next.phases = phases
                .into_iter()
                .map(|phase| {
                    Ok(TodoPhase {
                        name: non_empty(phase.name, "a phase name")?,
                        tasks: phase
                            .tasks
                            .into_iter()
                            .map(|content| new_task(&mut ids, content))
                            .collect::<Result<_, _>>()?,
                    })
                })
                .collect::<Result<_, TodoError>>()?;
        }
        TodoOp::Append { phase, tasks } => {
            let mut ids = Ids::after(&next);
            let tasks = tasks
                .into_iter()
                .map(|content| new_task(&mut ids, content))
                .collect::<Result<Vec<_>, _>>()?;
            let at = match phase {
                Some(name) => {
                    let name = non_empty(name, "a phase name")?;
                    match next.phases.iter().position(|phase| phase.name == name) {
                        Some(at) => at,
                        None => {
                            next.phases.push(TodoPhase {
                                name,
                                tasks: Vec::new(),
                            });
                            next.phases.len() - 1
                        }
                    }
                }
                None if next.phases.is_empty() => {
                    next.phases.push(TodoPhase {
                        name: "Tasks".to_owned(),
                        tasks: Vec::new(),
                    });
                    0
                }
                None => next.phases.len() - 1,
            };
            next.phases[at].tasks.extend(tasks);
        }
        TodoOp::Start { task } => {
            let id = open_task(&next, &task, "started")?;
            for other in tasks_mut(&mut next) {
                if other.status == TodoStatus::InProgress {
                    other.status = TodoStatus::Pending;
                }
            }
            set(&mut next, &id, TodoStatus::InProgress, None);
        }
        TodoOp::Done { task } => {
            let id = match task {
                Some(task) => open_task(&next, &task, "done")?,
                None if next.is_empty() => return Err(TodoError::NoList),
                None => next
                    .tasks()
                    .find(|task| task.status == TodoStatus::InProgress)
                    .map(|task| task.id.clone())
                    .ok_or(TodoError::NothingInProgress)?,
            };
            set(&mut next, &id, TodoStatus::Completed, None);
        }
        TodoOp::Drop { task } => {
            let id = open_task(&next, &task, "dropped")?;
            set(&mut next, &id, TodoStatus::Abandoned, None);
        }
        TodoOp::Block { task, blocker } => {
            let id = open_task(&next, &task, "blocked")?;
            let blocker = non_empty(blocker, "the blocker")?;
            set(&mut next, &id, TodoStatus::Blocked, Some(blocker));
        }
        TodoOp::Unblock { task } => {
            let found = find(&next, &task)?;
            if found.status != TodoStatus::Blocked {
                return Err(TodoError::NotBlocked(found.id.clone()));
            }
            let id = found.id.clone();
            set(&mut next, &id, TodoStatus::Pending, None);
        }
        TodoOp::Rm { task } => {
            let id = find(&next, &task)?.id.clone();
            for phase in &mut next.phases {
                phase.tasks.retain(|task| task.id != id);
            }
        }
    }
    keep_one_in_progress(&mut next);
    Ok(next)
}

/// A list given whole (`session/setTodos`): ids filled in where missing, checked, one task
/// started when none is.
pub fn normalize(list: TodoList) -> Result<TodoList, TodoError> {
    let mut list = list;
    let mut ids = Ids::after(&list);
    let mut seen = std::collections::HashSet::new();
    let mut in_progress = Vec::new();
    for phase in &mut list.phases {
        if phase.name.trim().is_empty() {
            return Err(TodoError::Empty("a phase name"));
        }
        for task in &mut phase.tasks {
            if task.content.trim().is_empty() {
                return Err(TodoError::Empty("a task"));
            }
            if task.id.trim().is_empty() {
                task.id = ids.next();
            }
            if !seen.insert(task.id.clone()) {
                return Err(TodoError::DuplicateId(task.id.clone()));
            }
            if task.status == TodoStatus::InProgress {
                in_progress.push(task.id.clone());
            }
        }
    }
    if in_progress.len() > 1 {
        return Err(TodoError::TwoInProgress(in_progress.join(", ")));
    }
    keep_one_in_progress(&mut list);
    Ok(list)
}

/// A list as recorded: with its revision, which counts the changes along the branch, so
/// that of results stored in call order the one applied last is known (parallel calls may be
/// applied in another order than their results are stored).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recorded {
    /// The list.
    pub todos: TodoList,
    /// Its revision (0: none yet).
    pub revision: u64,
}

impl Recorded {
    /// How an entry records it (a tool result's details, a custom entry's data).
    pub fn to_value(&self) -> Value {
        serde_json::json!({"todos": self.todos, "revision": self.revision})
    }
}

/// The list a branch (root first) ends with: the recorded one of the highest revision (the
/// last of equals).
pub fn of_branch(branch: &[SessionEntry]) -> Recorded {
    branch
        .iter()
        .filter_map(recorded)
        .fold(None, |best: Option<Recorded>, next| match best {
            Some(best) if best.revision > next.revision => Some(best),
            _ => Some(next),
        })
        .unwrap_or_default()
}

/// The list an entry records, if it records one.
pub fn recorded(entry: &SessionEntry) -> Option<Recorded> {
    let value = match entry {
        SessionEntry::Message {
            message: AgentMessage::ToolResult(result),
            ..
        } if result.tool_name == TODO_TOOL && !result.is_error => result.details.as_ref()?,
        SessionEntry::Custom {
            custom_type, data, ..
        } if custom_type == TODOS_ENTRY => data.as_ref()?,
        _ => return None,
    };
    Some(Recorded {
        todos: TodoList::deserialize(value.get("todos")?).ok()?,
        revision: value.get("revision").and_then(Value::as_u64).unwrap_or(0),
    })
}

/// The list as the model reads it.
pub fn render(list: &TodoList) -> String {
    if list.is_empty() {
        return "The todo list is empty.".to_owned();
    }
    let mut out = String::new();
    for phase in &list.phases {
        out.push_str(&phase.name);
        out.push_str(":\n");
        for task in &phase.tasks {
            let mark = match task.status {
                TodoStatus::Pending => "[ ]",
                TodoStatus::InProgress => "[>]",
                TodoStatus::Completed => "[x]",
                TodoStatus::Abandoned => "[-]",
                TodoStatus::Blocked => "[!]",
            };
            out.push_str(&format!("  {mark} {} {}", task.id, task.content));
            if let Some(blocker) = &task.blocker {
                out.push_str(&format!(" (blocked: {blocker})"));
            }
            out.push('\n');
        }
    }
    let total = list.tasks().count();
    let done = list
        .tasks()
        .filter(|task| task.status == TodoStatus::Completed)
        .count();
    out.push_str(&format!("{done}/{total} done"));
    if let Some(task) = list
        .tasks()
        .find(|task| task.status == TodoStatus::InProgress)
    {
        out.push_str(&format!("; in progress: {} {}", task.id, task.content));
    }
    out
}

/// Task ids `t1`, `t2`, … after the highest one in use.
#[derive(Default)]
struct Ids(u64);

impl Ids {
    fn after(list: &TodoList) -> Ids {
        Ids(list
            .tasks()
            .filter_map(|task| task.id.strip_prefix('t')?.parse::<u64>().ok())
            .max()
            .unwrap_or(0))
    }

    fn next(&mut self) -> String {
        self.0 += 1;
        format!("t{}", self.0)
    }
}

fn new_task(ids: &mut Ids, content: String) -> Result<TodoTask, TodoError> {
    Ok(TodoTask {
        content: non_empty(content, "a task")?,
        id: ids.next(),
        status: TodoStatus::Pending,
        blocker: None,
    })
}

fn non_empty(text: String, what: &'static str) -> Result<String, TodoError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(TodoError::Empty(what));
    }
    Ok(trimmed.to_owned())
}

fn find<'a>(list: &'a TodoList, reference: &str) -> Result<&'a TodoTask, TodoError> {
    let reference = reference.trim();
    list.tasks()
        .find(|task| task.id == reference)
        .or_else(|| {
            list.tasks()
                .find(|task| task.content.eq_ignore_ascii_case(reference))
        })
        .ok_or_else(|| TodoError::NoSuchTask(reference.to_owned()))
}

fn open_task(list: &TodoList, reference: &str, action: &'static str) -> Result<String, TodoError> {
    let task = find(list, reference)?;
    if !task.status.is_open() {
        return Err(TodoError::Finished {
            id: task.id.clone(),
            status: task.status.as_str(),
            action,
        });
    }
    Ok(task.id.clone())
}

fn tasks_mut(list: &mut TodoList) -> impl Iterator<Item = &mut TodoTask> {
    list.phases
        .iter_mut()
        .flat_map(|phase| phase.tasks.iter_mut())
}

fn set(list: &mut TodoList, id: &str, status: TodoStatus, blocker: Option<String>) {
    if let Some(task) = tasks_mut(list).find(|task| task.id == id) {
        task.status = status;
        task.blocker = blocker;
    }
}

fn keep_one_in_progress(list: &mut TodoList) {
    if list
        .tasks()
        .any(|task| task.status == TodoStatus::InProgress)
    {
        return;
    }
    if let Some(task) = tasks_mut(list).find(|task| task.status == TodoStatus::Pending) {
        task.status = TodoStatus::InProgress;
    }
}

/// The arguments of a `todo` call as an operation, or why they are not one.
pub fn parse_op(arguments: Value) -> Result<TodoOp, String> {
    serde_json::from_value(arguments).map_err(|error| {
        format!(
            "{error}; the ops are init {{phases}}, append {{tasks, phase?}}, start|drop|unblock|rm {{task}}, done {{task?}}, block {{task, blocker}}, view"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn op(value: Value) -> TodoOp {
        match parse_op(value) {
            Ok(op) => op,
            Err(error) => panic!("{error}"),
        }
    }

    fn statuses(list: &TodoList) -> Vec<(&str, &str)> {
        list.tasks()
            .map(|task| (task.id.as_str(), task.status.as_str()))
            .collect()
    }

    fn started() -> TodoList {
        apply(
            &TodoList::default(),
            op(json!({"op": "init", "phases": [
                {"name": "Build", "tasks": ["parse", "check"]},
                {"name": "Ship", "tasks": ["release"]}
            ]})),
        )
        .unwrap()
    }

    #[test]
    fn init_numbers_tasks_and_starts_the_first() {
        let list = started();
        assert_eq!(
            statuses(&list),
            [("t1", "in_progress"), ("t2", "pending"), ("t3", "pending")]
        );
        assert_eq!(list.phases[1].name, "Ship");
    }

    #[test]
    fn done_moves_on_to_the_next_pending_task() {
        let list = apply(&started(), op(json!({"op": "done"}))).unwrap();
        assert_eq!(
            statuses(&list),
            [
                ("t1", "completed"),
                ("t2", "in_progress"),
                ("t3", "pending")
            ]
        );
        let list = apply(&list, op(json!({"op": "done", "task": "release"}))).unwrap();
        assert_eq!(
            statuses(&list),
            [
                ("t1", "completed"),
                ("t2", "in_progress"),
                ("t3", "completed")
            ]
        );
    }

    #[test]
    fn start_keeps_one_task_in_progress() {
        let list = apply(&started(), op(json!({"op": "start", "task": "t3"}))).unwrap();
        assert_eq!(
            statuses(&list),
            [("t1", "pending"), ("t2", "pending"), ("t3", "in_progress")]
        );
    }

    #[test]
    fn block_and_unblock() {
        let list = apply(
            &started(),
            op(json!({"op": "block", "task": "t1", "blocker": "waiting on CI"})),
        )
        .unwrap();
        assert_eq!(
            statuses(&list),
            [("t1", "blocked"), ("t2", "in_progress"), ("t3", "pending")]
        );
        assert!(render(&list).contains("[!] t1 parse (blocked: waiting on CI)"));
        let list = apply(&list, op(json!({"op": "unblock", "task": "t1"}))).unwrap();
        assert_eq!(list.phases[0].tasks[0].status, TodoStatus::Pending);
        assert_eq!(list.phases[0].tasks[0].blocker, None);
    }

    #[test]
    fn append_rm_and_drop() {
        let list = apply(
            &started(),
            op(json!({"op": "append", "phase": "Docs", "tasks": ["write notes"]})),
        )
        .unwrap();
        assert_eq!(list.phases[2].tasks[0].id, "t4");
        let list = apply(&list, op(json!({"op": "append", "tasks": ["proofread"]}))).unwrap();
        assert_eq!(list.phases[2].tasks[1].id, "t5");
        let list = apply(&list, op(json!({"op": "rm", "task": "t2"}))).unwrap();
        assert_eq!(list.tasks().count(), 4);
        let list = apply(&list, op(json!({"op": "drop", "task": "t1"}))).unwrap();
        assert_eq!(
            statuses(&list),
            [
                ("t1", "abandoned"),
                ("t3", "in_progress"),
                ("t4", "pending"),
                ("t5", "pending")
            ]
        );
    }

    #[test]
    fn errors_leave_the_list_unchanged_and_say_what_to_do() {
        let list = started();
        let cases = [
            (
                json!({"op": "start", "task": "t9"}),
                "no task \"t9\" in the todo list; use a task id (t1, t2, …) or its exact text (op `view` lists them)",
            ),
            (
                json!({"op": "append", "tasks": ["  "]}),
                "a task is empty; give it some text",
            ),
            (
                json!({"op": "unblock", "task": "t2"}),
                "task t2 is not blocked",
            ),
        ];
        for (value, message) in cases {
            assert_eq!(apply(&list, op(value)).unwrap_err().to_string(), message);
        }
        let done = apply(&list, op(json!({"op": "done", "task": "t1"}))).unwrap();
        assert_eq!(
            apply(&done, op(json!({"op": "drop", "task": "t1"})))
                .unwrap_err()
                .to_string(),
            "task t1 is already completed; only open tasks can be dropped"
        );
        assert_eq!(
            apply(&TodoList::default(), op(json!({"op": "done"})))
                .unwrap_err()
                .to_string(),
            "the todo list is empty; start it with op `init`"
        );
        let error = parse_op(json!({"op": "finish"})).unwrap_err();
        assert!(error.contains("unknown variant `finish`"), "{error}");
        assert!(error.contains("the ops are init {phases}"), "{error}");
    }

    #[test]
    fn normalize_fills_ids_and_refuses_two_in_progress() {
        let task = |id: &str, status| TodoTask {
            id: id.to_owned(),
            content: format!("task {id}"),
            status,
            blocker: None,
        };
        let list = TodoList {
            phases: vec![TodoPhase {
                name: "A".to_owned(),
                tasks: vec![
                    task("t2", TodoStatus::Completed),
                    task("", TodoStatus::Pending),
                ],
            }],
        };
        let list = normalize(list).unwrap();
        assert_eq!(
            statuses(&list),
            [("t2", "completed"), ("t3", "in_progress")]
        );
        let two = TodoList {
            phases: vec![TodoPhase {
                name: "A".to_owned(),
                tasks: vec![
                    task("a", TodoStatus::InProgress),
                    task("b", TodoStatus::InProgress),
                ],
            }],
        };
        assert_eq!(
            normalize(two).unwrap_err().to_string(),
            "more than one task is in progress (a, b); at most one may be"
        );
    }
}
