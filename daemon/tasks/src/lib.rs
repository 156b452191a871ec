//! Subagents: the `task` tool's children are real sessions of this daemon — stored, listed
//! under their parent (`session/list {parentId}`), attachable from any client while they run,
//! resumable with their real history.
//!
//! - `agents.rs`: agent definitions (bundled, discovered, pi-subagents' profiles).
//! - `tool.rs`: the `task` tool (and pi-subagents' `delegate_to_subagents`), the children's
//!   hidden `submit_result`, and `agent://<id>` for `read`.
//!
//! A batch runs its children at once, at most `task.maxConcurrency` per parent and
//! `task.maxRunning` in the daemon. Each child is created with the agent's prompt, model and
//! tools, gets the shared context and its task as its first prompt, and is watched through an
//! in-process event sink: an idle timer (suspended inside tool calls), identical-call loop
//! detection, a turn budget with a wrap-up message, and the parent's abort. Its result is what
//! it passed to `submit_result` (checked against the output schema; a child that ends without
//! it is reminded up to 3 times) or, without a schema, its last assistant text.

pub mod agents;
pub mod error;
pub mod isolation;
pub mod tool;

pub use error::TaskError;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use pi_agent::ToolOutput;
use pi_protocol::v1::message::{AssistantContent, StopReason};
use pi_protocol::v1::{EmptyResponse, SessionCreateParams, SessionEvent};
use serde_json::{Value, json};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use pi_coding::ResourceRoots;
use pi_coding::settings::TaskSettings;
use pi_session::events::Delivery;
use pi_session::{Command, SessionRegistry, Subagent, ToolEnvironment};
use pi_store::Store;

/// Reminders for a child that ends without `submit_result` when a schema asks for it.
const MAX_REMINDERS: u32 = 3;
/// Invalid `submit_result` calls corrected before the child is stopped.
const MAX_SCHEMA_RETRIES: u32 = 3;
/// Turns after the wrap-up message before the child is stopped.
const WRAP_UP_GRACE: u64 = 5;
/// How long a tool call of a child may run without any event (its output counts).
const TOOL_LIMIT: Duration = Duration::from_secs(30 * 60);
/// A result longer than this is cut in the parent's tool result (the rest: `agent://`).
const RESULT_PREVIEW: usize = 5_000;

/// What one task asks for.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskSpec {
    /// Its name (unique in the batch); generated when absent.
    pub name: Option<String>,
    /// The agent (default `task`).
    pub agent: Option<String>,
    /// What to do.
    pub task: String,
    /// The result's JSON Schema (beats the agent's `output`).
    pub output_schema: Option<Value>,
    /// Run in a git worktree.
    pub isolated: bool,
    /// Continue this existing child instead of starting one.
    pub resume: Option<String>,
    /// Its working directory (relative to the parent's).
    pub cwd: Option<String>,
    /// Its idle timeout (beats `task.idleTimeoutMs`).
    pub timeout: Option<Duration>,
}

/// Where a child puts its result (`submit_result`).
#[derive(Debug, Default)]
pub struct Slot {
    /// The result's JSON Schema.
    pub schema: Option<Value>,
    /// What the child submitted: its data, or the error it reported.
    pub result: Mutex<Option<Result<Value, String>>>,
}

/// How one task ended.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskOutcome {
    /// Its name.
    pub name: String,
    /// Its agent.
    pub agent: String,
    /// The child session (none when it could not be created).
    pub session_id: Option<String>,
    /// `done`, `failed`, `aborted` or `timed_out`.
    pub status: &'static str,
    /// Its result.
    pub result: Option<Value>,
    /// Why it failed.
    pub error: Option<String>,
    /// Tokens its turns used.
    pub tokens: u64,
    /// Its turns.
    pub turns: u64,
    /// How long it ran.
    pub duration: Duration,
    /// What became of an isolated task's changes.
    pub changes: Option<isolation::Merged>,
}

/// Every running child of the daemon, and what they need.
#[derive(Debug)]
pub struct TaskManager {
    roots: ResourceRoots,
    // A child works under its parent's approval mode (when the daemon has approvals), stored.
    policy: Option<Arc<pi_policy::PolicyManager>>,
    store: Store,
    // Isolated tasks' worktrees, and the patches of their changes.
    worktrees: PathBuf,
    patches: PathBuf,
    // Held while a child's changes are applied to its parent's tree.
    applying: tokio::sync::Mutex<()>,
    // Runs git for isolated tasks.
    spawner: pi_tools::spawn::Spawner,
    running: Arc<Semaphore>,
    // Per parent session: its children's permits.
    parents: Mutex<HashMap<String, Arc<Semaphore>>>,
    // Per child session: where its `submit_result` goes.
    slots: Mutex<HashMap<String, Arc<Slot>>>,
}

impl TaskManager {
    /// A manager reading settings and agents through `roots`, keeping isolated tasks'
    /// worktrees and patches under `data_dir`; children inherit their parent's approval mode
    /// from `policy`, stored in `store`.
    pub fn new(
        roots: ResourceRoots,
        data_dir: &std::path::Path,
        spawner: pi_tools::spawn::Spawner,
        policy: Option<Arc<pi_policy::PolicyManager>>,
        store: Store,
    ) -> TaskManager {
        let max_running = roots.load_settings(None).0.task.max_running.max(1);
        TaskManager {
            roots,
            policy,
            store,
            worktrees: data_dir.join("worktrees"),
            patches: data_dir.join("patches"),
            applying: tokio::sync::Mutex::new(()),
            spawner,
            running: Arc::new(Semaphore::new(max_running as usize)),
            parents: Mutex::new(HashMap::new()),
            slots: Mutex::new(HashMap::new()),
        }
    }

    /// The roots agents and settings are read from.
    pub fn roots(&self) -> &ResourceRoots {
        &self.roots
    }

    /// The settings of a session in `cwd`.
    pub fn settings(&self, cwd: &std::path::Path) -> TaskSettings {
        self.roots.load_settings(Some(cwd)).0.task
    }

    /// The result slot of child `session_id`, while it runs.
    pub fn slot(&self, session_id: &str) -> Option<Arc<Slot>> {
        self.slots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(session_id)
            .cloned()
    }

    /// How deep `session_id` is among `sessions`: 0 for a session no `task` started.
    pub async fn depth(&self, sessions: &SessionRegistry, session_id: &str) -> u64 {
        let mut depth = 0;
        let mut current = session_id.to_owned();
        // Bounded: a cycle cannot be stored, but a corrupt store should not hang a call.
        for _ in 0..32 {
            let Ok(info) = sessions.stored_info(&current).await else {
                break;
            };
            match (info.task_name, info.parent_session_id) {
                (Some(_), Some(parent)) => {
                    depth += 1;
                    current = parent;
                }
                _ => break,
            }
        }
        depth
    }

    /// Runs `specs` for the session of `parent` with the shared `context`, reporting
    /// progress through `progress`, stopping the children when `cancel` fires.
    pub async fn run_batch(
        self: &Arc<Self>,
        parent: &ToolEnvironment,
        context: &str,
        specs: Vec<TaskSpec>,
        cancel: CancellationToken,
        progress: pi_agent::ProgressSink,
    ) -> Result<(Vec<TaskOutcome>, Vec<String>), TaskError> {
        let sessions = parent.sessions.upgrade().ok_or(TaskError::Stopping)?;
        let settings = self.settings(&parent.cwd);
        let depth = self.depth(&sessions, &parent.session_id).await;
        if depth >= settings.max_depth {
            return Err(TaskError::Call(format!(
                "task is not available here: this session is a subagent at depth {depth}, and \
                 task.maxDepth is {}",
                settings.max_depth
            )));
        }
        if specs.is_empty() {
            return Err(TaskError::Call(
                "tasks is empty: give at least one task".to_owned(),
            ));
        }
        let (agents, problems) = agents::discover(&agents::search_dirs(
            &parent.cwd,
            self.roots.config_dir.as_deref(),
            self.roots.pi_agent_dir.as_deref(),
        ));
        let parent_info = sessions
            .stored_info(&parent.session_id)
            .await
            .map_err(TaskError::Session)?;
        // Check every task before starting any.
        let mut names: Vec<String> = Vec::new();
        let mut planned = Vec::new();
        for (index, spec) in specs.into_iter().enumerate() {
            if spec.task.trim().is_empty() {
                return Err(TaskError::Call(format!(
                    "tasks[{index}].task is empty: say what to do"
                )));
            }
            if let Some(resume) = &spec.resume
                && (planned
                    .iter()
                    .any(|(_, _, other): &(String, agents::Agent, TaskSpec)| {
                        other.resume.as_ref() == Some(resume)
                    })
                    || self.slot(resume).is_some())
            {
                return Err(TaskError::Call(format!(
                    "tasks[{index}].resume: {resume} is already working on a task; wait for it \
                     (one task at a time per subagent)"
                )));
            }
            if let Some(dir) = &spec.cwd {
                let relative = std::path::Path::new(dir);
                let escapes = relative.is_absolute()
                    || pi_paths::lexical::normalize(&std::path::Path::new("/x").join(relative))
                        .strip_prefix("/x")
                        .is_err();
                if escapes {
                    return Err(TaskError::Call(format!(
                        "tasks[{index}].cwd \"{dir}\" must be a directory inside yours, relative to it"
                    )));
                }
            }
            if let Some(schema) = &spec.output_schema
                && let Err(error) = jsonschema::validator_for(schema)
            {
                return Err(TaskError::Call(format!(
                    "tasks[{index}].outputSchema is not a valid JSON Schema: {error}"
                )));
            }
            if spec.isolated && spec.resume.is_some() {
                return Err(TaskError::Call(format!(
                    "tasks[{index}]: `isolated` and `resume` do not go together (an isolated \
                     task's worktree is gone once its changes came back); resume it without \
                     `isolated`"
                )));
            }
            let agent_name = spec.agent.clone().unwrap_or_else(|| "task".to_owned());
            let Some(agent) = agents.get(&agent_name).cloned() else {
                let known: Vec<&str> = agents.keys().map(String::as_str).collect();
                return Err(TaskError::Call(format!(
                    "Unknown agent \"{agent_name}\". Available: {}{}",
                    known.join(", "),
                    if problems.is_empty() {
                        String::new()
                    } else {
                        format!(
                            ". Agent files with problems (not loaded): {}",
                            problems
                                .iter()
                                .map(ToString::to_string)
                                .collect::<Vec<_>>()
                                .join("; ")
                        )
                    }
                )));
            };
            let mut name = spec
                .name
                .clone()
                .map(|name| name.trim().to_owned())
                .filter(|name| !name.is_empty())
                .unwrap_or_else(|| format!("{agent_name}-{}", index + 1));
            if names.iter().any(|known| known.eq_ignore_ascii_case(&name)) {
                if spec.name.is_some() {
                    return Err(TaskError::Call(format!(
                        "tasks[{index}].name \"{name}\" is used twice; names must be unique"
                    )));
                }
                name = format!("{name}-{}", index + 1);
            }
            names.push(name.clone());
            planned.push((name, agent, spec));
        }
        let board = Arc::new(Board::new(
            planned
                .iter()
                .map(|(name, agent, _)| (name.clone(), agent.name.clone()))
                .collect(),
            progress,
        ));
        let per_parent = self.parent_permits(&parent.session_id, settings.max_concurrency);
        let runs = planned
            .into_iter()
            .enumerate()
            .map(|(index, (name, agent, spec))| {
                let manager = self.clone();
                let sessions = sessions.clone();
                let board = board.clone();
                let cancel = cancel.clone();
                let per_parent = per_parent.clone();
                let parent_info = parent_info.clone();
                async move {
                    let started = Instant::now();
                    let mut outcome = TaskOutcome {
                        name: name.clone(),
                        agent: agent.name.clone(),
                        session_id: None,
                        status: "failed",
                        result: None,
                        error: None,
                        tokens: 0,
                        turns: 0,
                        duration: Duration::ZERO,
                        changes: None,
                    };
                    let permits = tokio::select! {
                        () = cancel.cancelled() => None,
                        permits = async {
                            let mine = per_parent.acquire_owned().await.ok()?;
                            // The daemon-wide budget counts root batches' children; a child's own
                            // children run under its permit (waiting for another could deadlock
                            // a full daemon of delegating children).
                            let global = if depth == 0 {
                                Some(manager.running.clone().acquire_owned().await.ok()?)
                            } else {
                                None
                            };
                            Some((mine, global))
                        } => permits,
                    };
                    if permits.is_none() {
                        outcome.status = "aborted";
                        outcome.error = Some("aborted before it started".to_owned());
                        board.set(index, |task| task.status = "aborted");
                        return outcome;
                    }
                    let child = Child {
                        manager: &manager,
                        sessions: &sessions,
                        parent,
                        parent_info: &parent_info,
                        settings,
                        depth,
                        context,
                        board: &board,
                        index,
                    };
                    child.run(&agent, &spec, &mut outcome, &cancel).await;
                    outcome.duration = started.elapsed();
                    drop(permits);
                    outcome
                }
            });
        let problems: Vec<String> = problems.iter().map(ToString::to_string).collect();
        Ok((futures_util::future::join_all(runs).await, problems))
    }

    fn parent_permits(&self, parent: &str, limit: u64) -> Arc<Semaphore> {
        let mut parents = self.parents.lock().unwrap_or_else(PoisonError::into_inner);
        // Forget parents with no child running.
        parents.retain(|_, permits| Arc::strong_count(permits) > 1);
        parents
            .entry(parent.to_owned())
            .or_insert_with(|| Arc::new(Semaphore::new(limit.max(1) as usize)))
            .clone()
    }
}

/// The live state of a batch, reported as the `task` call's progress.
#[derive(Debug)]
struct Board {
    tasks: Mutex<Vec<BoardTask>>,
    progress: pi_agent::ProgressSink,
}

#[derive(Clone, Debug)]
struct BoardTask {
    name: String,
    agent: String,
    session_id: Option<String>,
    status: &'static str,
    tool: Option<String>,
    tokens: u64,
    turns: u64,
}

impl Board {
    fn new(tasks: Vec<(String, String)>, progress: pi_agent::ProgressSink) -> Board {
        Board {
            tasks: Mutex::new(
                tasks
                    .into_iter()
                    .map(|(name, agent)| BoardTask {
                        name,
                        agent,
                        session_id: None,
                        status: "queued",
                        tool: None,
                        tokens: 0,
                        turns: 0,
                    })
                    .collect(),
            ),
            progress,
        }
    }

    fn set(&self, index: usize, change: impl FnOnce(&mut BoardTask)) {
        // Published under the lock: updates never arrive out of order.
        let mut tasks = self.tasks.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(task) = tasks.get_mut(index) {
            change(task);
        }
        let lines: Vec<String> = tasks
            .iter()
            .map(|task| {
                let doing = match (&task.tool, task.status) {
                    (Some(tool), "running") => format!("running, in {tool}"),
                    _ => task.status.to_owned(),
                };
                format!(
                    "{} ({}): {doing}, {} turns, {} tokens",
                    task.name, task.agent, task.turns, task.tokens
                )
            })
            .collect();
        let details = json!({"tasks": tasks.iter().map(|task| json!({
            "name": task.name, "agent": task.agent, "sessionId": task.session_id,
            "status": task.status, "currentTool": task.tool, "tokens": task.tokens,
            "turns": task.turns,
        })).collect::<Vec<_>>()});
        self.progress.update(ToolOutput {
            content: vec![pi_llm::UserContent::text(lines.join("\n"))],
            details,
            is_error: false,
            terminate: false,
        });
    }
}

/// One child's run.
struct Child<'a> {
    manager: &'a Arc<TaskManager>,
    sessions: &'a Arc<SessionRegistry>,
    parent: &'a ToolEnvironment,
    parent_info: &'a pi_protocol::v1::SessionInfo,
    settings: TaskSettings,
    depth: u64,
    context: &'a str,
    board: &'a Board,
    index: usize,
}

/// How watching a child's run ended.
enum Watched {
    /// The run ended by itself.
    Ended,
    /// Stopped: the status and why.
    Stopped(&'static str, String),
}

impl Child<'_> {
    async fn run(
        &self,
        agent: &agents::Agent,
        spec: &TaskSpec,
        outcome: &mut TaskOutcome,
        cancel: &CancellationToken,
    ) {
        let schema = spec.output_schema.clone().or_else(|| agent.output.clone());
        let id = spec.resume.clone().unwrap_or_else(pi_util::ids::new_uuid);
        // Before the child exists: its tools look the slot up when it is created.
        let slot = Arc::new(Slot {
            schema: schema.clone(),
            result: Mutex::new(None),
        });
        self.manager
            .slots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.clone(), slot.clone());
        let worktree = if spec.isolated {
            match isolation::create(
                &self.manager.spawner,
                &self.parent.cwd,
                &self.manager.worktrees,
                &id,
            )
            .await
            {
                Ok(worktree) => Some(worktree),
                Err(error) => {
                    self.manager
                        .slots
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .remove(&id);
                    outcome.error = Some(error.to_string());
                    self.board.set(self.index, |task| task.status = "failed");
                    return;
                }
            }
        } else {
            None
        };
        let base = worktree
            .as_ref()
            .map_or_else(|| self.parent.cwd.clone(), |worktree| worktree.cwd.clone());
        if let Err(error) = self.start(agent, spec, &outcome.name, &id, &base).await {
            if let Some(worktree) = &worktree {
                outcome.changes = Some(
                    isolation::finish(
                        &self.manager.spawner,
                        worktree,
                        &self.manager.patches,
                        &id,
                        &outcome.name,
                        false,
                        &self.manager.applying,
                    )
                    .await,
                );
            }
            self.manager
                .slots
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&id);
            outcome.error = Some(error.to_string());
            self.board.set(self.index, |task| task.status = "failed");
            return;
        }
        outcome.session_id = Some(id.clone());
        self.board.set(self.index, |task| {
            task.session_id = Some(id.clone());
            task.status = "running";
        });
        let watched = self
            .drive(&id, spec, schema.as_ref(), &slot, outcome, cancel)
            .await;
        self.manager
            .slots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id);
        match watched {
            Ok(value) => {
                outcome.status = "done";
                outcome.result = Some(value);
            }
            Err((status, error)) => {
                outcome.status = status;
                outcome.error = Some(error);
            }
        }
        if let Some(worktree) = &worktree {
            let merged = isolation::finish(
                &self.manager.spawner,
                worktree,
                &self.manager.patches,
                &id,
                &outcome.name,
                outcome.status == "done",
                &self.manager.applying,
            )
            .await;
            outcome.changes = Some(merged);
        }
        let status = outcome.status;
        self.board.set(self.index, |task| {
            task.status = status;
            task.tool = None;
        });
    }

    /// Creates the child `id` (or checks the one to resume).
    async fn start(
        &self,
        agent: &agents::Agent,
        spec: &TaskSpec,
        name: &str,
        id: &str,
        base: &std::path::Path,
    ) -> Result<(), TaskError> {
        let sessions = self.sessions;
        if let Some(resume) = &spec.resume {
            let info = sessions
                .stored_info(resume)
                .await
                .map_err(|error| TaskError::Resume {
                    id: resume.clone(),
                    why: error.to_string(),
                })?;
            if info.parent_session_id.as_deref() != Some(self.parent.session_id.as_str())
                || info.task_name.is_none()
            {
                return Err(TaskError::Resume {
                    id: resume.clone(),
                    why: "it is not a subagent of this session".to_owned(),
                });
            }
            if !std::path::Path::new(&info.cwd).is_dir() {
                return Err(TaskError::Resume {
                    id: resume.clone(),
                    why: format!(
                        "its working directory {} is gone (an isolated task's worktree is \
                         removed once its changes came back)",
                        info.cwd
                    ),
                });
            }
            return Ok(());
        }
        let cwd = match &spec.cwd {
            Some(dir) => pi_paths::lexical::normalize(&base.join(dir)),
            None => base.to_path_buf(),
        };
        let child_may_spawn = self.depth + 1 < self.settings.max_depth;
        let mut tools: Vec<String> = match &agent.tools {
            Some(tools) => tools.clone(),
            None => {
                let mut tools = sessions.services().tools.default_names();
                tools.push("task".to_owned());
                tools
            }
        };
        tools.retain(|tool| {
            !agent.exclude_tools.contains(tool) && (child_may_spawn || tool != "task")
        });
        if !tools.iter().any(|tool| tool == "submit_result") {
            tools.push("submit_result".to_owned());
        }
        let model = agent.model.clone().or_else(|| {
            self.parent_info
                .model
                .as_ref()
                .map(|model| format!("{}/{}", model.provider, model.id))
        });
        // The plan the parent approved goes to its subagents (oh-my-pi's `§ Plan`).
        let plan = sessions
            .approved_plan(&self.parent.session_id)
            .await
            .ok()
            .flatten();
        let append_system_prompt = match (agent.append_system_prompt.clone(), plan) {
            (appended, None) => appended,
            (appended, Some(plan)) => Some(format!(
                "{}§ Plan\n\nThe approved plan \"{}\" this task is part of:\n\n{}",
                appended
                    .map(|text| format!("{text}\n\n"))
                    .unwrap_or_default(),
                plan.title,
                plan.text.trim()
            )),
        };
        let params = SessionCreateParams {
            cwd: cwd.display().to_string(),
            env: Some((*self.parent.env).clone()),
            model,
            thinking: Some(
                agent
                    .thinking
                    .clone()
                    .unwrap_or_else(|| self.parent_info.thinking_level.clone()),
            ),
            tools: Some(tools),
            name: Some(name.to_owned()),
            system_prompt: agent.system_prompt.clone(),
            append_system_prompt,
            no_skills: agent.no_skills,
            no_context_files: agent.no_context_files,
            // The parent's choice of pi extensions holds for its subagents, as a pi started
            // with `-e` passes it on.
            extensions: self.parent.extensions.to_vec(),
            no_extensions: self.parent.no_extensions,
            extension_flags: (*self.parent.extension_flags).clone(),
            ..SessionCreateParams::default()
        };
        sessions
            .create_as(
                params,
                Some(Subagent {
                    id: id.to_owned(),
                    parent_id: self.parent.session_id.clone(),
                    task_name: name.to_owned(),
                }),
            )
            .await
            .map_err(TaskError::StartChild)?;
        // A child works under its parent's approval mode.
        if let Some(policy) = &self.manager.policy
            && let Some(mode) = policy.mode_of(&self.parent.session_id)
        {
            policy.set_mode(id, mode);
            if let Err(error) = self.manager.store.set_policy_mode(id, mode.name()).await {
                tracing::warn!(%error, "cannot store a subagent's approval mode");
            }
        }
        Ok(())
    }

    /// Prompts the child and watches it until it has a result (reminding it when a schema
    /// asks for `submit_result`).
    async fn drive(
        &self,
        id: &str,
        spec: &TaskSpec,
        schema: Option<&Value>,
        slot: &Slot,
        outcome: &mut TaskOutcome,
        cancel: &CancellationToken,
    ) -> Result<Value, (&'static str, String)> {
        let sessions = self.sessions;
        // Everything the child says, typed; bounded by its events and their encoded size.
        let (sink, mut receiver) = pi_session::sink::channel::<Delivery>(
            format!("task-{id}"),
            pi_session::sink::SinkLimits {
                frames: 100_000,
                bytes: 256 << 20,
            },
        );
        sink.set_name("task".to_owned());
        sink.set_opt_out(Vec::new());
        sessions
            .call(id, |reply| Command::Attach {
                subscriber: Arc::new(sink.clone()),
                after_seq: None,
                reply,
            })
            .await
            .map_err(|error| ("failed", format!("cannot watch the subagent: {error}")))?;
        let mut text = first_prompt(self.context, &spec.task, schema);
        let mut reminders = 0;
        let result = loop {
            let prompt = {
                let text = text.clone();
                sessions
                    .call(id, move |reply| Command::Prompt {
                        text: text.clone(),
                        images: Vec::new(),
                        source: pi_session::hooks::InputSource::Rpc,
                        reply,
                    })
                    .await
            };
            match prompt {
                Err(error) => {
                    break Err(("failed", format!("the subagent did not start: {error}")));
                }
                Ok(response) if !response.started => {
                    break Err((
                        "failed",
                        "the subagent did not run: one of its extensions took its prompt \
                         (a command, or an `input` handler that answered it)"
                            .to_owned(),
                    ));
                }
                Ok(_) => {}
            }
            let (watched, last) = self
                .watch(id, spec, &sink, &mut receiver, outcome, cancel)
                .await;
            if let Watched::Stopped(status, why) = watched {
                let _ = sessions
                    .call(id, |reply: pi_session::Reply<EmptyResponse>| {
                        Command::Abort { reply }
                    })
                    .await;
                break Err((status, why));
            }
            let submitted = slot
                .result
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            match (submitted, last) {
                (Some(Ok(data)), _) => break Ok(data),
                (Some(Err(error)), _) => break Err(("failed", error)),
                (None, Last::Failed(error)) => break Err(("failed", error)),
                (None, Last::Aborted) => {
                    break Err(("aborted", "the subagent's run was aborted".to_owned()));
                }
                (None, Last::Text(text)) if schema.is_none() => break Ok(Value::String(text)),
                (None, Last::Nothing) if schema.is_none() => {
                    break Err(("failed", "the subagent ended without a reply".to_owned()));
                }
                (None, _) if reminders < MAX_REMINDERS => {
                    reminders += 1;
                    text = "You ended without calling `submit_result`. Call it now with `data` \
                            matching the output schema, or with `error` if you cannot do the \
                            task."
                        .to_owned();
                }
                (None, _) => {
                    break Err((
                        "failed",
                        format!(
                            "the subagent ended without calling submit_result after \
                             {MAX_REMINDERS} reminders"
                        ),
                    ));
                }
            }
        };
        let _ = sessions
            .call(id, |reply| Command::Detach {
                connection_id: sink.id().to_owned(),
                reply,
            })
            .await;
        result
    }

    /// Watches the child until it has settled (its run ended and no retry or compaction it
    /// scheduled is pending) or a guard stops it; how, and its last assistant message.
    async fn watch(
        &self,
        id: &str,
        spec: &TaskSpec,
        sink: &pi_session::sink::Sink<Delivery>,
        receiver: &mut pi_session::sink::SinkReceiver<Delivery>,
        outcome: &mut TaskOutcome,
        cancel: &CancellationToken,
    ) -> (Watched, Last) {
        let idle = spec
            .timeout
            .unwrap_or(Duration::from_millis(self.settings.idle_timeout_ms));
        let mut state = WatchState {
            last: Last::Nothing,
            in_tools: 0,
            streak: (String::new(), 0),
            schema_failures: 0,
            wrapped_up: false,
            ended: false,
        };
        // Asked once a run ended: answered when nothing runs, compacts or waits to retry.
        let mut settled: Option<futures_util::future::BoxFuture<'_, ()>> = None;
        let mut deliveries = Vec::new();
        loop {
            deliveries.clear();
            // Inside a tool call the clock is the longer tool limit (a build, a test run);
            // every event starts it again.
            let limit = if state.in_tools > 0 {
                idle.max(TOOL_LIMIT)
            } else {
                idle
            };
            let received = tokio::select! {
                () = cancel.cancelled() => {
                    return (Watched::Stopped("aborted", "aborted: the parent's run was aborted".to_owned()), state.last);
                }
                () = sink.closed() => {
                    return (Watched::Stopped("failed", "lost the subagent's events (its event queue overflowed)".to_owned()), state.last);
                }
                () = async { if let Some(settled) = settled.as_mut() { settled.await } }, if settled.is_some() => {
                    // Everything it did before settling is queued already.
                    while let Some(delivery) = receiver.try_recv() {
                        if let Some(stopped) = self.on_delivery(&delivery, id, &mut state, outcome).await {
                            return (stopped, state.last);
                        }
                    }
                    return (Watched::Ended, state.last);
                }
                received = tokio::time::timeout(limit, receiver.recv_many(&mut deliveries, 256)) => received.ok(),
            };
            let Some(count) = received else {
                let why = if state.in_tools > 0 {
                    format!(
                        "timed out: a tool call of the subagent ran {} s without any output",
                        limit.as_secs_f64()
                    )
                } else {
                    format!(
                        "timed out: the subagent did nothing for {} s",
                        idle.as_secs_f64()
                    )
                };
                return (Watched::Stopped("timed_out", why), state.last);
            };
            if count == 0 {
                return (
                    Watched::Stopped("failed", "the subagent's events stopped".to_owned()),
                    state.last,
                );
            }
            for delivery in &deliveries {
                if let Some(stopped) = self.on_delivery(delivery, id, &mut state, outcome).await {
                    return (stopped, state.last);
                }
            }
            if state.ended && settled.is_none() {
                let sessions = self.sessions;
                let id = id.to_owned();
                settled = Some(Box::pin(async move {
                    let _ = sessions
                        .call(&id, |reply| Command::WhenSettled { reply })
                        .await;
                }));
            }
        }
    }

    /// Takes one event of the child into `state` (notices do not count); `Some` when a guard
    /// stops it.
    async fn on_delivery(
        &self,
        delivery: &Delivery,
        id: &str,
        state: &mut WatchState,
        outcome: &mut TaskOutcome,
    ) -> Option<Watched> {
        let loop_limit = self.settings.loop_limit.max(2);
        let max_turns = self.settings.max_turns.max(1);
        let Delivery::Event(event) = delivery else {
            return None;
        };
        if event.session_id() != id {
            return None;
        }
        match event.event() {
            SessionEvent::AgentEnd { .. } => {
                state.ended = true;
                state.in_tools = 0;
            }
            SessionEvent::AutoRetryEnd {
                success: false,
                final_error,
                ..
            } => {
                state.last = Last::Failed(
                    final_error
                        .clone()
                        .unwrap_or_else(|| "the model request failed".to_owned()),
                );
            }
            // Waiting for new MCP servers is timed like a tool call, not like idleness.
            SessionEvent::ToolsWaitStart { .. } => state.in_tools += 1,
            SessionEvent::ToolsWaitEnd { .. } => state.in_tools = state.in_tools.saturating_sub(1),
            SessionEvent::ToolExecutionStart {
                tool_name, args, ..
            } => {
                state.in_tools += 1;
                let key = format!("{tool_name} {args}");
                if state.streak.0 == key {
                    state.streak.1 += 1;
                } else {
                    state.streak = (key, 1);
                }
                if state.streak.1 >= loop_limit {
                    return Some(Watched::Stopped(
                        "failed",
                        format!(
                            "stopped: the subagent made the same call (`{tool_name}` with the \
                             same arguments) {} times in a row",
                            state.streak.1
                        ),
                    ));
                }
                self.board
                    .set(self.index, |task| task.tool = Some(tool_name.clone()));
            }
            SessionEvent::ToolExecutionEnd {
                tool_name,
                is_error,
                result,
                ..
            } => {
                state.in_tools = state.in_tools.saturating_sub(1);
                if tool_name == "submit_result" && *is_error {
                    state.schema_failures += 1;
                    if state.schema_failures > MAX_SCHEMA_RETRIES {
                        let why = result
                            .content
                            .iter()
                            .filter_map(|block| match block {
                                pi_protocol::v1::message::UserContent::Text(text) => {
                                    Some(text.text.as_str())
                                }
                                pi_protocol::v1::message::UserContent::Image(_) => None,
                            })
                            .collect::<Vec<_>>()
                            .join("\n");
                        return Some(Watched::Stopped(
                            "failed",
                            format!(
                                "the result did not match the output schema after \
                                 {MAX_SCHEMA_RETRIES} corrections: {why}"
                            ),
                        ));
                    }
                }
                self.board.set(self.index, |task| task.tool = None);
            }
            SessionEvent::TurnEnd { message, .. } => {
                outcome.turns += 1;
                outcome.tokens += message.usage.total_tokens;
                let (turns, tokens) = (outcome.turns, outcome.tokens);
                self.board.set(self.index, |task| {
                    task.turns = turns;
                    task.tokens = tokens;
                });
                state.last = match message.stop_reason {
                    StopReason::Error => Last::Failed(
                        message
                            .error_message
                            .clone()
                            .unwrap_or_else(|| "the model request failed".to_owned()),
                    ),
                    StopReason::Aborted => Last::Aborted,
                    _ => {
                        let text: Vec<&str> = message
                            .content
                            .iter()
                            .filter_map(|block| match block {
                                AssistantContent::Text(text) => Some(text.text.as_str()),
                                _ => None,
                            })
                            .collect();
                        let text = text.join("\n").trim().to_owned();
                        if text.is_empty() {
                            std::mem::replace(&mut state.last, Last::Nothing)
                        } else {
                            Last::Text(text)
                        }
                    }
                };
                if outcome.turns >= max_turns + WRAP_UP_GRACE {
                    return Some(Watched::Stopped(
                        "failed",
                        format!(
                            "stopped after {} turns (task.maxTurns is {max_turns}, and it was \
                             told to wrap up)",
                            outcome.turns
                        ),
                    ));
                }
                if outcome.turns >= max_turns && !state.wrapped_up {
                    state.wrapped_up = true;
                    let _ = self
                        .sessions
                        .call(id, |reply| Command::Enqueue {
                            steering: true,
                            text: "You have used your turn budget. Wrap up now: finish the step \
                                   you are on and report your result (with submit_result if \
                                   you were asked for one)."
                                .to_owned(),
                            images: Vec::new(),
                            reply,
                        })
                        .await;
                }
            }
            _ => {}
        }
        None
    }
}

/// What watching a child has seen so far.
struct WatchState {
    last: Last,
    in_tools: usize,
    // The last tool call (name and arguments) and how many times in a row it came.
    streak: (String, u64),
    schema_failures: u32,
    wrapped_up: bool,
    // A run ended (the settled check is due).
    ended: bool,
}

/// The child's last assistant message, as far as the result is concerned.
enum Last {
    Nothing,
    Text(String),
    Failed(String),
    Aborted,
}

/// A child's first prompt: the shared context, its task, how to report.
fn first_prompt(context: &str, task: &str, schema: Option<&Value>) -> String {
    let mut text = String::new();
    if !context.trim().is_empty() {
        text.push_str("# Context\n\n");
        text.push_str(context.trim());
        text.push_str("\n\n");
    }
    text.push_str("# Your task\n\n");
    text.push_str(task.trim());
    text.push_str("\n\n");
    match schema {
        Some(schema) => {
            text.push_str(
                "When you are done, call `submit_result` with `data` matching this JSON \
                 Schema (or with `error` if you cannot do the task):\n\n",
            );
            text.push_str(&serde_json::to_string_pretty(schema).unwrap_or_default());
        }
        None => text.push_str(
            "When you are done, reply with your result (or call `submit_result` with `data`, \
             or `error` if you cannot do the task). Your last message is what the parent reads.",
        ),
    }
    text
}

/// The parent's tool result: per task its status, result or error, tokens, time, session.
/// `problems`: agent files that did not load, said at the end.
pub fn render(outcomes: &[TaskOutcome], problems: &[String]) -> ToolOutput {
    let done = outcomes.iter().filter(|o| o.status == "done").count();
    let mut text = format!("{} task(s): {done} done", outcomes.len());
    let failed = outcomes.len() - done;
    if failed > 0 {
        text.push_str(&format!(", {failed} not"));
    }
    text.push('.');
    for outcome in outcomes {
        text.push_str(&format!(
            "\n\n## {} ({}): {} in {:.1} s, {} turns, {} tokens",
            outcome.name,
            outcome.agent,
            outcome.status.replace('_', " "),
            outcome.duration.as_secs_f64(),
            outcome.turns,
            outcome.tokens
        ));
        if let Some(id) = &outcome.session_id {
            text.push_str(&format!(
                "\nsession {id}; transcript: agent://{id}; continue it with resume: \"{id}\""
            ));
        }
        if let Some(error) = &outcome.error {
            text.push_str(&format!("\nerror: {error}"));
        }
        if let Some(changes) = &outcome.changes {
            text.push_str(&format!("\nchanges: {}", changes.message));
        }
        if let Some(result) = &outcome.result {
            let shown = match result {
                Value::String(text) => text.clone(),
                other => serde_json::to_string_pretty(other).unwrap_or_default(),
            };
            text.push('\n');
            if shown.chars().count() > RESULT_PREVIEW {
                text.extend(shown.chars().take(RESULT_PREVIEW));
                text.push_str("\n… (cut; the whole result is in the transcript)");
            } else {
                text.push_str(&shown);
            }
        }
    }
    if !problems.is_empty() {
        text.push_str("\n\nAgent files with problems (not loaded):");
        for problem in problems {
            text.push_str(&format!("\n- {problem}"));
        }
    }
    let details = json!({"tasks": outcomes.iter().map(|outcome| json!({
        "name": outcome.name, "agent": outcome.agent, "sessionId": outcome.session_id,
        "status": outcome.status, "result": outcome.result, "error": outcome.error,
        "tokens": outcome.tokens, "turns": outcome.turns,
        "durationMs": outcome.duration.as_millis() as u64,
        "changes": outcome.changes.as_ref().map(|changes| json!({
            "message": changes.message, "patchPath": changes.patch, "applied": changes.applied,
        })),
    })).collect::<Vec<_>>()});
    ToolOutput {
        content: vec![pi_llm::UserContent::text(text)],
        details,
        is_error: done == 0,
        terminate: false,
    }
}
