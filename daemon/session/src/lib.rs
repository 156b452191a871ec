//! `pi-session`: the daemon's session core. It knows sessions, their actors, entries,
//! compaction, typed events and questions; it does not know the wire (the daemon gives each
//! actor an `EventEncoder`), the transports, or the resources behind a session's tools (the
//! daemon gives the registry a `ToolFactory` and a `ModelService`).
//!
//! Sessions: the registry of loaded session actors, and operations that work on stored
//! sessions without loading them (create, list, read, fork, delete, import, export).
//!
//! Sessions load lazily on the first command that needs their actor and unload after
//! `idle_unload` with no subscribers and no run.
//!
//! Architecture invariant: at most one actor per session. Loads are serialized by the registry;
//! an unloading actor leaves the map before it refuses further commands, and callers whose
//! command was refused retry against a freshly loaded actor.

pub mod actor;
pub mod compaction;
pub mod convert;
pub mod entries;
pub mod error;
pub mod events;
pub mod hooks;
pub mod html;
pub mod params;
pub mod pi_format;
pub mod plan;
pub mod presence;
pub mod questions;
pub mod recent;
pub mod recovery;
pub mod retry;
pub mod secrets;
pub mod services;
pub mod sink;
pub mod stats;
pub mod summarize;
pub mod testing;
pub mod todos;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_llm::{Model, ThinkingLevel};
use pi_protocol::v1::message::{AgentMessage as WireMessage, UserContent};
use pi_protocol::v1::{
    EmptyResponse, EntryRecord, ModelInfo, ModelRef, ReadScope, SessionCreateParams, SessionEntry,
    SessionForkResponse, SessionInfo, SessionListParams, SessionListResponse, SessionReadParams,
    SessionReadResponse, SessionStatus,
};
use pi_util::ids::new_uuid;
use pi_util::time::now_millis;

pub use actor::{Command, Deliver, Reply, ResolvedModel, SessionHandle};
pub use error::SessionError;
pub use services::{
    ModelService, SessionServices, SessionSettings, SessionsWeak, ToolEnvironment, ToolFactory,
};

use crate::actor::SessionActor;
use crate::entries::{EntryBase, EntryIds};
use pi_store::{NewEntry, SessionRow, Store, StoreError};

/// What makes a new session a subagent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subagent {
    /// Its id, chosen by the caller (its result slot is registered under it first).
    pub id: String,
    /// The session whose `task` call starts it.
    pub parent_id: String,
    /// The task's name.
    pub task_name: String,
}

/// An extension source as a session keeps it: a relative path resolved against the
/// session's directory (pi resolves `-e` paths against its working directory); package
/// sources (`npm:`, `git:`, URLs) and absolute paths as given.
fn extension_source(source: &str, cwd: &std::path::Path) -> String {
    let source = source.trim();
    let is_package = ["npm:", "git:", "git+", "http://", "https://", "ssh://"]
        .iter()
        .any(|prefix| source.starts_with(prefix));
    if is_package || std::path::Path::new(source).is_absolute() {
        return source.to_owned();
    }
    let expanded = match source.strip_prefix("~/") {
        Some(rest) => match std::env::var_os("HOME") {
            Some(home) => std::path::Path::new(&home).join(rest),
            None => cwd.join(source),
        },
        None => cwd.join(source),
    };
    pi_paths::lexical::normalize(&expanded)
        .display()
        .to_string()
}

/// Loaded sessions by id. A sync mutex, never held across await.
pub type SessionMap = Mutex<HashMap<String, SessionHandle>>;

/// How long closing all sessions may take at shutdown.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_millis(1500);

/// The registry of sessions.
#[derive(Debug)]
pub struct SessionRegistry {
    // Itself, weakly: given to the sessions' tools in their environment.
    me: SessionsWeak,
    // Questions for the people watching sessions (`ui/*`).
    questions: questions::Questions,
    store: Store,
    services: SessionServices,
    // Makes each actor's encoder: how its events and notices become bytes for subscribers
    // in other processes.
    encoders: Arc<dyn events::EncoderFactory>,
    sessions: Arc<SessionMap>,
    // Per session being loaded, its gate, held while its actor is loaded, so one session never
    // gets two actors and one session's load never waits for another's. A sync mutex, never
    // held across an await; an entry is removed by the last holder of its gate.
    loading: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    next_generation: AtomicU64,
    // The variables each session holds in memory only (never stored), for the daemon's life:
    // an actor that unloads when idle gets them back when it loads again, a fork takes its
    // source's. Written at create, fork and `session/setEnv`, removed at delete. A sync
    // mutex, never held across an await.
    held_env: Mutex<HashMap<String, pi_store::Env>>,
    // One copy of equal environments: the sessions a shell starts send the same variables.
    envs: pi_util::intern::Interner<BTreeMap<String, String>>,
}

impl SessionRegistry {
    /// A registry over `store`; its sessions' events are encoded by `encoders`' encoders.
    pub fn new(
        store: Store,
        services: SessionServices,
        encoders: Arc<dyn events::EncoderFactory>,
    ) -> Arc<Self> {
        Arc::new_cyclic(|me| SessionRegistry {
            me: SessionsWeak(me.clone()),
            questions: questions::Questions::default(),
            store,
            services,
            encoders,
            sessions: Arc::new(Mutex::new(HashMap::new())),
            loading: Mutex::new(HashMap::new()),
            next_generation: AtomicU64::new(1),
            held_env: Mutex::new(HashMap::new()),
            envs: pi_util::intern::Interner::new(),
        })
    }

    /// The registry, weakly (for what the registry's own sessions hold).
    pub fn weak(&self) -> SessionsWeak {
        self.me.clone()
    }

    /// `row` with the variables the daemon holds for it in memory.
    fn with_held_env(&self, mut row: SessionRow) -> SessionRow {
        let held = self
            .held_env
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(env) = held.get(&row.id) {
            row.secret_env = env.clone();
        }
        drop(held);
        // Read from the store, each row has its own copy.
        if let Some(env) = &row.env {
            row.env = Some(self.envs.share(env));
        }
        row
    }

    /// Remembers what `id` holds in memory (nothing: forgets it).
    fn hold_env(&self, id: &str, env: &pi_store::Env) {
        let mut held = self
            .held_env
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if env.is_empty() {
            held.remove(id);
        } else {
            held.insert(id.to_owned(), env.clone());
        }
    }

    /// Changes session `id`'s todo list: the new list, or why the change was refused (the
    /// list is then unchanged).
    pub async fn change_todos(
        &self,
        id: &str,
        change: todos::TodoChange,
    ) -> Result<Result<todos::Recorded, todos::TodoError>, SessionError> {
        self.call(id, |reply| Command::Todos {
            change: change.clone(),
            reply,
        })
        .await
    }

    /// `session/setTodos`: replaces the list, stored on the branch.
    pub async fn set_todos(
        &self,
        id: &str,
        list: pi_protocol::v1::TodoList,
    ) -> Result<EmptyResponse, SessionError> {
        match self.change_todos(id, todos::TodoChange::Set(list)).await? {
            Ok(_) => Ok(EmptyResponse {}),
            Err(error) => Err(SessionError::invalid("todos", error.to_string())),
        }
    }

    /// `session/setPlanMode`: turns session `id`'s plan mode on or off.
    pub async fn set_plan_mode(
        &self,
        id: &str,
        enabled: bool,
    ) -> Result<EmptyResponse, SessionError> {
        self.call(id, |reply| Command::SetPlanMode { enabled, reply })
            .await
    }

    /// The user's decision on the plan session `id` proposed (`exit_plan_mode`).
    pub async fn decide_plan(
        &self,
        id: &str,
        decision: plan::PlanDecision,
    ) -> Result<EmptyResponse, SessionError> {
        self.call(id, |reply| Command::DecidePlan {
            decision: decision.clone(),
            reply,
        })
        .await
    }

    /// The plan session `id` approved last on its branch (for its subagents).
    pub async fn approved_plan(
        &self,
        id: &str,
    ) -> Result<Option<pi_protocol::v1::ApprovedPlan>, SessionError> {
        self.call(id, |reply| Command::ApprovedPlan { reply }).await
    }

    /// `session/setEnv`: the variables of `env` the session lacks, taken (in memory).
    pub async fn set_env(
        &self,
        id: &str,
        env: BTreeMap<String, String>,
    ) -> Result<pi_protocol::v1::SessionSetEnvResponse, SessionError> {
        self.take_env(id, env, false).await
    }

    /// `session/setApiKey`: `key` for `provider` in session `id`'s runs (in memory).
    pub async fn set_api_key(
        &self,
        id: &str,
        provider: &str,
        key: String,
    ) -> Result<pi_protocol::v1::EmptyResponse, SessionError> {
        if key.trim().is_empty() {
            return Err(SessionError::invalid(
                "key",
                "the API key is empty".to_owned(),
            ));
        }
        let variable = pi_protocol::v1::runtime_api_key_variable(provider);
        self.take_env(id, [(variable, key)].into(), true).await?;
        Ok(pi_protocol::v1::EmptyResponse {})
    }

    async fn take_env(
        &self,
        id: &str,
        env: BTreeMap<String, String>,
        any: bool,
    ) -> Result<pi_protocol::v1::SessionSetEnvResponse, SessionError> {
        let response = self
            .call(id, |reply| Command::SetEnv {
                env: env.clone(),
                any,
                reply,
            })
            .await?;
        if !response.accepted.is_empty() {
            let mut held = self
                .held_env
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let held = Arc::make_mut(held.entry(id.to_owned()).or_default());
            for name in &response.accepted {
                if let Some(value) = env.get(name) {
                    held.insert(name.clone(), value.clone());
                }
            }
        }
        Ok(response)
    }

    /// Bytes of events all sessions keep in their recent windows.
    pub fn recent_events_bytes(&self) -> usize {
        self.services.settings.recent_windows.used()
    }

    /// The services sessions use.
    pub fn services(&self) -> &SessionServices {
        &self.services
    }

    /// Which client variables stay in memory only (the global settings' `sessionEnv`).
    pub fn env_policy(&self) -> secrets::EnvPolicy {
        let (settings, _) = self.services.settings.resources.load_settings(None);
        secrets::EnvPolicy::new(&settings.session_env_exclude, &settings.session_env_include)
    }

    /// Closes runs that a crash interrupted (see [`recovery`]). Call once at startup.
    pub async fn recover_interrupted(&self) -> Result<usize, SessionError> {
        let roots = self.services.settings.resources.clone();
        recovery::recover_interrupted(&self.store, move |cwd| {
            roots
                .load_settings(Some(std::path::Path::new(cwd)))
                .0
                .pi_session_write_back
        })
        .await
    }

    /// Sessions with a live actor.
    pub fn loaded_count(&self) -> u32 {
        self.sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .values()
            .filter(|handle| !handle.is_closed())
            .count() as u32
    }

    /// Creates a session. A model none of the daemon's providers has may be one of a
    /// provider the session's extensions register (pi's `registerProvider`): the session is
    /// created, and the model chosen once they loaded — or the session deleted again and
    /// the model refused, as before.
    pub async fn create(&self, params: SessionCreateParams) -> Result<SessionInfo, SessionError> {
        let spec = params.model.clone();
        match self.create_as(params.clone(), None).await {
            Err(refused @ SessionError::ModelNotFound { .. }) => {
                let cwd = std::path::Path::new(&params.cwd);
                let Some(spec) = spec.filter(|_| {
                    self.services
                        .hooks
                        .could_hook(cwd, &params.extensions, params.no_extensions)
                }) else {
                    return Err(refused);
                };
                let info = self
                    .create_as(
                        SessionCreateParams {
                            model: None,
                            ..params
                        },
                        None,
                    )
                    .await?;
                let chosen = match self.hooks(&info.id).await {
                    Ok(Some(_)) => self.set_model(&info.id, &spec).await.ok(),
                    _ => None,
                };
                match chosen {
                    Some(chosen) => Ok(SessionInfo {
                        model: Some(pi_protocol::v1::ModelRef {
                            provider: chosen.model.provider,
                            id: chosen.model.id,
                        }),
                        thinking_level: chosen.thinking_level,
                        warnings: [info.warnings, chosen.warnings].concat(),
                        ..info
                    }),
                    None => {
                        if let Err(error) = self.delete(&info.id).await {
                            tracing::warn!(session = info.id, %error, "cannot delete a session created for a model nobody has");
                        }
                        Err(refused)
                    }
                }
            }
            other => other,
        }
    }

    /// Creates a session; with `task`, a subagent.
    pub async fn create_as(
        &self,
        params: SessionCreateParams,
        task: Option<Subagent>,
    ) -> Result<SessionInfo, SessionError> {
        let normalized = params::absolute_path("cwd", &params.cwd)?;
        let cwd = normalized.as_path();
        if !cwd.is_dir() {
            return Err(SessionError::invalid(
                "cwd",
                format!(
                    "cwd must be an existing directory, and {} is not",
                    cwd.display()
                ),
            ));
        }
        let models = &self.services.models;
        // The settings files' defaults apply when the caller names no model or level; the
        // rest of the cwd's resources go to the session's actor.
        let resolve_all = |sources: &[String]| -> Vec<String> {
            sources
                .iter()
                .map(|source| resolve_cli_path(source, cwd))
                .collect()
        };
        let (tools_named, extension_tools) = match (&params.tool_allowlist, &params.tools) {
            (Some(_), Some(_)) => {
                return Err(SessionError::invalid(
                    "toolAllowlist",
                    "give tools or toolAllowlist, not both".to_owned(),
                ));
            }
            (Some(allowed), None) => {
                let known = self.services.tools.known_names();
                (
                    Some(
                        allowed
                            .iter()
                            .filter(|name| known.contains(name))
                            .cloned()
                            .collect::<Vec<_>>(),
                    ),
                    Some(allowed.clone()),
                )
            }
            (None, tools) => (tools.clone(), None),
        };
        let start_options = pi_store::StartOptions {
            skills: resolve_all(&params.skills),
            prompt_templates: resolve_all(&params.prompt_templates),
            no_prompt_templates: params.no_prompt_templates,
            extension_tools,
            pi_file: None,
        };
        let resources = pi_coding::resources::load_in_background(
            self.services.settings.resources.clone(),
            cwd.to_path_buf(),
            choice_of(&start_options, params.no_skills),
        )
        .await;
        let settings = &resources.settings;
        let (model, level) = match &params.model {
            Some(spec) => {
                let (model, level) =
                    models
                        .resolve(spec)
                        .map_err(|error| SessionError::ModelNotFound {
                            field: Some("model"),
                            message: error.to_string(),
                        })?;
                (Some(model), level)
            }
            None => {
                let client_env = params.env.clone().unwrap_or_default();
                (
                    settings_default_model(models.as_ref(), settings)
                        .or_else(|| models.default_model_in(&client_env)),
                    None,
                )
            }
        };
        let requested = match (&params.thinking, level) {
            (Some(text), _) => text
                .parse::<ThinkingLevel>()
                .map_err(|error| SessionError::invalid("thinking", error.to_string()))?,
            (None, Some(level)) => level,
            (None, None) => settings
                .default_thinking_level
                .unwrap_or(self.services.settings.default_thinking),
        };
        let thinking = model.as_ref().map_or(requested, |model| {
            services::clamp_thinking(model, requested)
        });
        // pi's defaults, and oh-my-pi's tools the `ompTools` setting adds.
        let tools = tools_named.unwrap_or_else(|| {
            let mut names = self.services.tools.default_names();
            let known = self.services.tools.known_names();
            for name in &settings.omp_tools {
                if known.contains(name) && !names.contains(name) {
                    names.push(name.clone());
                }
            }
            names
        });
        let now = now_millis();
        // Variables that look like secrets live in memory only.
        let policy = self.env_policy();
        let (kept_env, secret_env) = match &params.env {
            Some(env) => {
                let (kept, secret) = policy.split(env);
                (Some(kept), secret)
            }
            None => (None, BTreeMap::new()),
        };
        // pi refuses to start with an `-e` path that does not exist.
        let extensions: Vec<String> = params
            .extensions
            .iter()
            .map(|source| extension_source(source, cwd))
            .collect();
        if let Some(missing) = extensions.iter().find(|source| {
            std::path::Path::new(source.as_str()).is_absolute()
                && !std::path::Path::new(source.as_str()).exists()
        }) {
            return Err(SessionError::invalid(
                "extensions",
                format!(
                    "Failed to load extension \"{missing}\": Extension path does not exist: {missing}"
                ),
            ));
        }
        let mut row = SessionRow {
            id: task.as_ref().map_or_else(new_uuid, |task| task.id.clone()),
            cwd: cwd.display().to_string(),
            env: kept_env.map(|env| self.envs.intern(env)),
            name: params
                .name
                .as_ref()
                .map(|name| name.trim().to_owned())
                .filter(|name| !name.is_empty()),
            parent_session_id: task.as_ref().map(|task| task.parent_id.clone()),
            created_at: now,
            updated_at: now,
            leaf_id: None,
            model: model
                .as_ref()
                .map(|model| (model.provider.clone(), model.id.clone())),
            thinking_level: thinking.as_str().to_owned(),
            tools,
            message_count: 0,
            first_message: None,
            last_seq: 0,
            running: false,
            system_prompt: params.system_prompt.clone(),
            append_system_prompt: params.append_system_prompt.clone(),
            task_name: task.as_ref().map(|task| task.task_name.clone()),
            secret_env_names: secret_env.keys().cloned().collect(),
            secret_env: self.envs.intern(secret_env),
            no_skills: params.no_skills,
            no_context_files: params.no_context_files,
            extensions: extensions.into(),
            no_extensions: params.no_extensions,
            extension_flags: Arc::new(params.extension_flags.clone()),
            start_options: Arc::new(start_options),
        };
        let tools = self
            .services
            .tools
            .tools(&tool_environment(&row, &self.me), &row.tools)
            .map_err(|error| SessionError::invalid("tools", error.to_string()))?;

        let mut ids = EntryIds::default();
        let mut new_entries: Vec<SessionEntry> = Vec::new();
        let mut parent = None;
        let mut push = |make: &dyn Fn(EntryBase) -> SessionEntry| {
            let base = EntryBase::new(&mut ids, parent.clone(), now);
            parent = Some(base.id.clone());
            new_entries.push(make(base));
        };
        push(&|b| SessionEntry::ThinkingLevelChange {
            id: b.id,
            parent_id: b.parent_id,
            timestamp: b.timestamp,
            thinking_level: thinking.as_str().to_owned(),
        });
        if let Some(model) = &model {
            push(&|b| SessionEntry::ModelChange {
                id: b.id,
                parent_id: b.parent_id,
                timestamp: b.timestamp,
                provider: model.provider.clone(),
                model_id: model.id.clone(),
            });
        }
        if let Some(name) = row.name.clone() {
            push(&|b| SessionEntry::SessionInfo {
                id: b.id,
                parent_id: b.parent_id,
                timestamp: b.timestamp,
                name: Some(name.clone()),
            });
        }
        let stored = stored_entries(&new_entries, 1)?;
        row.leaf_id = stored.last().map(|entry| entry.id.clone());
        row.last_seq = stored.len() as u64;
        self.store
            .insert_session_with_entries(&row, stored)
            .await
            .map_err(storage(&self.store))?;
        tracing::info!(session = row.id, cwd = row.cwd, "session created");
        self.hold_env(&row.id, &row.secret_env);
        // A created session is about to be used (attached, prompted): its actor starts from
        // what was just written instead of reading it back. It unloads when idle like any.
        let mut info = info(&row, false, row.last_seq);
        if let Some(warning) = model
            .as_ref()
            .and_then(|model| models.unlisted_warning(model))
        {
            tracing::warn!(session = info.id, %warning, "custom model id");
            info.warnings.push(warning);
        }
        let environment = tool_environment(&row, &self.me);
        let generation = self.next_generation.fetch_add(1, Ordering::Relaxed);
        let loaded = actor::Loaded {
            branch: new_entries,
            entry_ids: ids,
            resources,
            tools: Some(tools),
            // Its creation entries are all the events it has had.
            stored_through: row.last_seq,
        };
        match SessionActor::start(
            self.store.clone(),
            self.services.clone(),
            self.sessions.clone(),
            self.me.clone(),
            generation,
            row,
            loaded,
            self.encoders.encoder(&info.id),
        ) {
            Ok(handle) => {
                self.sessions
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .insert(info.id.clone(), handle);
                // The session's MCP servers start now, so their tools are ready by its first
                // prompt. After the actor is registered: a project server's question goes
                // through it, and its end releases them.
                self.services.tools.warm_up(&environment);
            }
            // Stored; its first command loads it from the store instead (and reports).
            Err(error) => {
                tracing::warn!(session = info.id, %error, "cannot start the actor")
            }
        }
        Ok(info)
    }

    /// Sends a command to a session's actor, loading it if needed, retrying once if the actor
    /// stopped meanwhile.
    pub async fn call<T>(
        &self,
        id: &str,
        make: impl Fn(Reply<T>) -> Command,
    ) -> Result<T, SessionError> {
        for _ in 0..3 {
            let handle = self.handle(id).await?;
            match handle.call(&make).await {
                Ok(result) => return result,
                Err(actor::Gone) => continue,
            }
        }
        Err(SessionError::KeepsStopping(id.to_owned()))
    }

    /// Sets session `id`'s model from what a user typed, resolved as pi's registry resolves
    /// it: among the daemon's models and the models of the providers its extensions
    /// registered (which replace those of a provider they redefine).
    pub async fn set_model(
        &self,
        id: &str,
        spec: &str,
    ) -> Result<pi_protocol::v1::SessionSetModelResponse, SessionError> {
        let resolved = match self.hooks(id).await? {
            Some(hooks) => {
                let provided = hooks.models().await;
                if provided.is_empty() {
                    None
                } else {
                    Some(Box::new(self.resolve_among(&provided, spec)?))
                }
            }
            None => None,
        };
        self.call(id, |reply| Command::SetModel {
            spec: spec.to_owned(),
            resolved: resolved.clone(),
            reply,
        })
        .await
    }

    /// `spec` among the daemon's models and `provided` (an extension's providers' models,
    /// each with whether it has a key): the model, the level asked for, whether it has a key.
    fn resolve_among(
        &self,
        provided: &[(Model, bool)],
        spec: &str,
    ) -> Result<actor::ResolvedModel, SessionError> {
        let models = &self.services.models;
        let redefined =
            |provider: &str| provided.iter().any(|(model, _)| model.provider == provider);
        let mut all: Vec<(Model, bool)> = models
            .list()
            .into_iter()
            .filter(|(model, _)| !redefined(&model.provider))
            .collect();
        all.extend(provided.iter().cloned());
        let has_key = |provider: &str| {
            all.iter()
                .any(|(model, has_key)| *has_key && model.provider == provider)
        };
        let candidates: Vec<Model> = all.iter().map(|(model, _)| model.clone()).collect();
        let (model, level) =
            pi_llm::resolve::resolve_spec(&candidates, &has_key, spec).map_err(|error| {
                SessionError::ModelNotFound {
                    field: None,
                    message: error.to_string(),
                }
            })?;
        let (has_key, warning) = match provided
            .iter()
            .find(|(found, _)| found.provider == model.provider)
        {
            Some((_, has_key)) => {
                let listed = provided
                    .iter()
                    .any(|(found, _)| found.provider == model.provider && found.id == model.id);
                (
                    *has_key,
                    (!listed).then(|| pi_llm::resolve::unlisted_warning(&model)),
                )
            }
            None => (
                models.api_key(&model).is_ok(),
                models.unlisted_warning(&model),
            ),
        };
        Ok(actor::ResolvedModel {
            model,
            level,
            has_key,
            warning,
        })
    }

    /// pi's `session_before_switch`: whether session `id`'s extensions want a client that
    /// leaves it (`reason` `new` or `resume`) to stay. A session not loaded has no extension
    /// running: nobody objects.
    pub async fn before_switch(
        &self,
        id: &str,
        reason: &str,
        target: Option<String>,
    ) -> Result<bool, SessionError> {
        let Some(hooks) = self.call_loaded(id, |reply| Command::Hooks { reply }).await else {
            // Not loaded; one that does not exist at all is an error.
            return match self.store.session(id).await.map_err(storage(&self.store))? {
                Some(_) => Ok(false),
                None => Err(SessionError::SessionNotFound(id.to_owned())),
            };
        };
        let Some(hooks) = hooks? else {
            return Ok(false);
        };
        match hooks.0.before_switch(reason.to_owned(), target).await {
            Ok(cancelled) => Ok(cancelled),
            Err(error) => {
                tracing::warn!(session = id, %error, "session_before_switch failed; switching");
                Ok(false)
            }
        }
    }

    /// pi's `navigateTree`: moves session `id`'s leaf to `entry_id`, summarizing the branch
    /// left behind when `summary` says so. The session's `session_before_tree` handlers are
    /// asked first (beside the actor: one may ask the session's clients): they may cancel the
    /// move, write the summary, change its instructions, or label it.
    pub async fn navigate(
        &self,
        id: &str,
        entry_id: &str,
        summary: Option<compaction::Instructions>,
    ) -> Result<pi_protocol::v1::SessionNavigateResponse, SessionError> {
        let mut summary = summary;
        let mut written = None;
        let mut label = None;
        let hooks = self
            .hooks(id)
            .await?
            .filter(|hooks| hooks.handles("session_before_tree"));
        if let Some(hooks) = hooks
            && let Some(preparation) = self.tree_preparation(id, entry_id, &summary).await?
        {
            match hooks.before_tree(preparation).await {
                Ok(decided) if decided.cancel => {
                    return Err(SessionError::CancelledByExtension(
                        "move in the session tree",
                    ));
                }
                Ok(decided) => {
                    if let Some(asked) = &summary {
                        summary = Some(
                            asked.overridden(decided.instructions, decided.replace_instructions),
                        );
                        written = decided.summary.map(Box::new);
                    }
                    label = decided.label;
                }
                Err(error) => {
                    tracing::warn!(session = id, %error, "session_before_tree failed; moving as asked");
                }
            }
        }
        let moved = self
            .call(id, |reply| Command::Navigate {
                entry_id: entry_id.to_owned(),
                summary: summary.clone(),
                written: written.clone(),
                reply,
            })
            .await?;
        if let Some(label) = label.filter(|_| !moved.aborted) {
            let labelled = moved
                .summary_entry_id
                .clone()
                .unwrap_or_else(|| entry_id.to_owned());
            self.call(id, |reply| Command::Label {
                entry_id: labelled.clone(),
                label: Some(label.clone()),
                reply,
            })
            .await?;
        }
        Ok(moved)
    }

    /// pi's `TreePreparation` for a move of session `id` to `entry_id` (`None`: no such
    /// entry, which the move itself reports).
    async fn tree_preparation(
        &self,
        id: &str,
        entry_id: &str,
        summary: &Option<compaction::Instructions>,
    ) -> Result<Option<serde_json::Value>, SessionError> {
        let storage = storage(&self.store);
        let Some(row) = self.store.session(id).await.map_err(&storage)? else {
            return Ok(None);
        };
        if self
            .store
            .entry(id, entry_id)
            .await
            .map_err(&storage)?
            .is_none()
        {
            return Ok(None);
        }
        let old_branch = self
            .store
            .branch(id, row.leaf_id.as_deref())
            .await
            .map_err(&storage)?;
        let target_branch = self
            .store
            .branch(id, Some(entry_id))
            .await
            .map_err(&storage)?;
        let on_target: std::collections::HashSet<&str> = target_branch
            .iter()
            .map(|entry| entry.id.as_str())
            .collect();
        let common = old_branch
            .iter()
            .rposition(|entry| on_target.contains(entry.id.as_str()));
        let abandoned: Vec<serde_json::Value> = old_branch
            .iter()
            .skip(common.map_or(0, |at| at + 1))
            .filter_map(|entry| serde_json::from_str(&entry.body).ok())
            .collect();
        let (instructions, replace) = match summary {
            Some(compaction::Instructions::Focus(text)) => (Some(text.as_str()), false),
            Some(compaction::Instructions::Replace(text)) => (Some(text.as_str()), true),
            _ => (None, false),
        };
        Ok(Some(serde_json::json!({
            "targetId": entry_id,
            "oldLeafId": row.leaf_id,
            "commonAncestorId": common.map(|at| old_branch[at].id.clone()),
            "entriesToSummarize": abandoned,
            "userWantsSummary": summary.is_some(),
            "customInstructions": instructions,
            "replaceInstructions": replace,
        })))
    }

    /// The hooks of session `id` (loaded if needed), for work beside its actor.
    pub async fn hooks(&self, id: &str) -> Result<Option<Arc<dyn hooks::Hooks>>, SessionError> {
        Ok(self
            .call(id, |reply| Command::Hooks { reply })
            .await?
            .map(|handle| handle.0))
    }

    /// Sends a command to a session's actor if it is loaded now; `None` when it is not (or
    /// stopped meanwhile). For what only concerns a live session — its extensions' notices and
    /// actions — which must not load it again: a second actor for a session whose actor is
    /// being registered would replace it.
    pub async fn call_loaded<T>(
        &self,
        id: &str,
        make: impl Fn(Reply<T>) -> Command,
    ) -> Option<Result<T, SessionError>> {
        let handle = self.loaded(id)?;
        handle.call(&make).await.ok()
    }

    async fn handle(&self, id: &str) -> Result<SessionHandle, SessionError> {
        if let Some(handle) = self.loaded(id) {
            return Ok(handle);
        }
        let gate = self
            .loading_gates()
            .entry(id.to_owned())
            .or_default()
            .clone();
        let loaded = {
            let _held = gate.lock().await;
            match self.loaded(id) {
                Some(handle) => Ok(handle),
                None => self.load(id).await,
            }
        };
        let mut gates = self.loading_gates();
        // Gates are cloned only under this lock: the map's and ours mean nobody else waits.
        if Arc::strong_count(&gate) == 2 {
            gates.remove(id);
        }
        loaded
    }

    fn loading_gates(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, Arc<tokio::sync::Mutex<()>>>> {
        self.loading
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Loads stored session `id` and starts its actor; the caller holds its gate.
    async fn load(&self, id: &str) -> Result<SessionHandle, SessionError> {
        let row = self
            .store
            .session(id)
            .await
            .map_err(storage(&self.store))?
            .ok_or_else(|| SessionError::SessionNotFound(id.to_owned()))?;
        let row = self.with_held_env(row);
        let generation = self.next_generation.fetch_add(1, Ordering::Relaxed);
        let handle = SessionActor::spawn(
            self.store.clone(),
            self.services.clone(),
            self.sessions.clone(),
            self.me.clone(),
            generation,
            row,
            self.encoders.encoder(id),
        )
        .await?;
        self.sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(id.to_owned(), handle.clone());
        Ok(handle)
    }

    /// Whether session `id`'s actor runs now.
    pub fn is_loaded(&self, id: &str) -> bool {
        self.loaded(id).is_some()
    }

    fn loaded(&self, id: &str) -> Option<SessionHandle> {
        let map = self
            .sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        map.get(id).filter(|handle| !handle.is_closed()).cloned()
    }

    /// A page of sessions, newest activity first.
    pub async fn list(
        &self,
        params: SessionListParams,
    ) -> Result<SessionListResponse, SessionError> {
        let limit = params.limit.unwrap_or(50).clamp(1, 500);
        let cursor = params
            .cursor
            .as_deref()
            .map(parse_list_cursor)
            .transpose()?;
        let cwd = params
            .cwd
            .as_deref()
            .map(|cwd| params::absolute_path("cwd", cwd))
            .transpose()?
            .map(|cwd| cwd.display().to_string());
        let mut rows = self
            .store
            .list_sessions_under(
                cwd.as_deref(),
                params.parent_id.as_deref(),
                cursor.as_ref(),
                limit + 1,
            )
            .await
            .map_err(storage(&self.store))?;
        let next_cursor = if rows.len() > limit as usize {
            rows.truncate(limit as usize);
            rows.last()
                .map(|row| format!("{}:{}", row.updated_at, row.id))
        } else {
            None
        };
        let questions = self.questions_by_session();
        let sessions = rows
            .into_iter()
            .map(|row| {
                let row = self.with_held_env(row);
                let mut info = info(&row, row.running, row.last_seq);
                info.questions = questions.get(&info.id).copied().unwrap_or(0);
                info
            })
            .collect();
        Ok(SessionListResponse {
            sessions,
            next_cursor,
        })
    }

    /// Metadata of a stored session (loaded or not).
    pub async fn stored_info(&self, id: &str) -> Result<SessionInfo, SessionError> {
        let row = self
            .store
            .session(id)
            .await
            .map_err(storage(&self.store))?
            .ok_or_else(|| SessionError::SessionNotFound(id.to_owned()))?;
        let row = self.with_held_env(row);
        Ok(info(&row, row.running, row.last_seq))
    }

    /// A page of stored entries.
    pub async fn read(
        &self,
        params: SessionReadParams,
    ) -> Result<SessionReadResponse, SessionError> {
        let row = self
            .store
            .session(&params.session_id)
            .await
            .map_err(storage(&self.store))?
            .ok_or_else(|| SessionError::SessionNotFound(params.session_id.clone()))?;
        let limit = params.limit.unwrap_or(200).clamp(1, 1000) as usize;
        let cursor: i64 = match &params.cursor {
            None => -1,
            Some(text) => text.parse().map_err(|_| {
                SessionError::invalid(
                    "cursor",
                    format!("cursor {text:?} is not a cursor from a previous page"),
                )
            })?,
        };
        let (page, next_cursor) = match params.scope {
            ReadScope::Branch => {
                let branch = self
                    .store
                    .branch(&row.id, row.leaf_id.as_deref())
                    .await
                    .map_err(storage(&self.store))?;
                let start = (cursor + 1).max(0) as usize;
                let end = (start + limit).min(branch.len());
                let next = (end < branch.len()).then(|| (end as i64 - 1).to_string());
                (
                    branch
                        .get(start..end)
                        .map(<[_]>::to_vec)
                        .unwrap_or_default(),
                    next,
                )
            }
            ReadScope::Tree => {
                let mut entries = self
                    .store
                    .entries_by_ordinal(&row.id, cursor, limit as u32 + 1)
                    .await
                    .map_err(storage(&self.store))?;
                let next = if entries.len() > limit {
                    entries.truncate(limit);
                    entries.last().map(|entry| entry.ordinal.to_string())
                } else {
                    None
                };
                (entries, next)
            }
        };
        let entries = page
            .iter()
            .map(|stored| {
                Ok(EntryRecord {
                    seq: stored.seq,
                    entry: entries::parse_entry(stored).map_err(SessionError::internal)?,
                })
            })
            .collect::<Result<_, SessionError>>()?;
        Ok(SessionReadResponse {
            entries,
            leaf_id: row.leaf_id,
            next_cursor,
        })
    }

    /// pi's fork: a new session with the branch up to the parent of a user message.
    pub async fn fork(
        &self,
        session_id: &str,
        entry_id: &str,
    ) -> Result<SessionForkResponse, SessionError> {
        // pi's `session_before_fork`: the source's extensions (when it is loaded) may
        // cancel, asking their clients first.
        if let Some(Ok(Some(hooks))) = self
            .call_loaded(session_id, |reply| Command::Hooks { reply })
            .await
        {
            match hooks.0.before_fork(entry_id.to_owned()).await {
                Ok(true) => return Err(SessionError::CancelledByExtension("fork")),
                Ok(false) => {}
                Err(error) => {
                    tracing::warn!(session = session_id, %error, "session_before_fork failed; forking");
                }
            }
        }
        let source = self
            .store
            .session(session_id)
            .await
            .map_err(storage(&self.store))?
            .ok_or_else(|| SessionError::SessionNotFound(session_id.to_owned()))?;
        // The fork holds what its source holds in memory.
        let source = self.with_held_env(source);
        let stored = self
            .store
            .entry(session_id, entry_id)
            .await
            .map_err(storage(&self.store))?
            .ok_or_else(|| SessionError::EntryNotFound(entry_id.to_owned()))?;
        let entry = entries::parse_entry(&stored).map_err(SessionError::internal)?;
        let SessionEntry::Message {
            parent_id,
            message: WireMessage::User(user),
            ..
        } = &entry
        else {
            let what = match &entry {
                SessionEntry::Message {
                    message: WireMessage::Assistant(_),
                    ..
                } => "an assistant message".to_owned(),
                SessionEntry::Message {
                    message: WireMessage::ToolResult(_),
                    ..
                } => "a tool result".to_owned(),
                SessionEntry::Message { .. } => "not a user message".to_owned(),
                other => format!("a {} entry", entries::entry_parts(other).2),
            };
            return Err(SessionError::invalid(
                "entryId",
                format!("fork needs a user message, and {entry_id} is {what}"),
            ));
        };
        let text = user_content_text(&user.content);
        let path: Vec<SessionEntry> = self
            .store
            .branch(session_id, parent_id.as_deref())
            .await
            .map_err(storage(&self.store))?
            .iter()
            .map(entries::parse_entry)
            .collect::<Result<_, _>>()
            .map_err(SessionError::internal)?;
        let label_entries: Vec<SessionEntry> = self
            .store
            .entries_of_kind(session_id, "label")
            .await
            .map_err(storage(&self.store))?
            .iter()
            .map(entries::parse_entry)
            .collect::<Result<_, _>>()
            .map_err(SessionError::internal)?;
        let copied = pi_format::copy_without_labels(
            &path,
            pi_format::resolve_labels(&label_entries),
            now_millis(),
        );
        let mut row = SessionRow {
            id: new_uuid(),
            name: None,
            parent_session_id: Some(source.id.clone()),
            created_at: now_millis(),
            updated_at: now_millis(),
            leaf_id: None,
            message_count: 0,
            first_message: None,
            last_seq: 0,
            running: false,
            task_name: None,
            ..source
        };
        pi_format::summarize_into_row(&copied, &mut row);
        let stored = stored_entries(&copied, 1)?;
        self.store
            .insert_session_with_entries(&row, stored)
            .await
            .map_err(storage(&self.store))?;
        self.hold_env(&row.id, &row.secret_env);
        Ok(SessionForkResponse {
            session: info(&row, false, row.last_seq),
            text,
        })
    }

    /// Deletes a session (stopping its run first).
    pub async fn delete(&self, id: &str) -> Result<EmptyResponse, SessionError> {
        if let Some(handle) = self.loaded(id) {
            let _ = handle
                .call(|reply| Command::Close {
                    deleted: true,
                    reply,
                })
                .await;
        }
        if !self
            .store
            .delete_session(id)
            .await
            .map_err(storage(&self.store))?
        {
            return Err(SessionError::SessionNotFound(id.to_owned()));
        }
        self.hold_env(id, &pi_store::Env::default());
        self.services.tools.delete_session(id);
        tracing::info!(session = id, "session deleted");
        Ok(EmptyResponse {})
    }

    /// Where a stored session's tools (and user shell commands) run.
    pub async fn environment(&self, id: &str) -> Result<ToolEnvironment, SessionError> {
        // From the actor: the variables it holds in memory only are part of it.
        self.call(id, |reply| Command::Environment { reply }).await
    }

    /// Imports a pi session file (an absolute path) as a new session. With `link`, the
    /// session is the file's in the daemon: a session already opened from it that has every
    /// entry it holds is returned as it is, and new entries are appended to the file.
    pub async fn import(&self, path: &str, link: bool) -> Result<SessionInfo, SessionError> {
        let file = params::absolute_path("path", path)?;
        if link {
            let last = pi_format::last_entry_id(&file)?;
            let linked = self
                .store
                .sessions_linked_to(&file.display().to_string())
                .await
                .map_err(storage(&self.store))?;
            for id in linked {
                let current = match &last {
                    Some(entry) => self
                        .store
                        .has_entry(&id, entry)
                        .await
                        .map_err(storage(&self.store))?,
                    None => true,
                };
                if current {
                    return self.stored_info(&id).await;
                }
            }
        }
        let (mut row, entries) = pi_format::import_file(&file, &self.services, link)?;
        // A file that never chose a model (pi uses its default then): the default here.
        if row.model.is_none() {
            let models = &self.services.models;
            let (settings, _) = self
                .services
                .settings
                .resources
                .load_settings(Some(Path::new(&row.cwd)));
            row.model = settings_default_model(models.as_ref(), &settings)
                .or_else(|| models.default_model())
                .map(|model| (model.provider, model.id));
        }
        let stored = entries
            .iter()
            .enumerate()
            .map(|(offset, imported)| {
                entries::new_entry_with_body(
                    &imported.entry,
                    imported.body.clone(),
                    1 + offset as u64,
                )
            })
            .collect();
        self.store
            .insert_session_with_entries(&row, stored)
            .await
            .map_err(storage(&self.store))?;
        tracing::info!(
            session = row.id,
            path,
            linked = row.start_options.pi_file.is_some(),
            "session imported"
        );
        Ok(info(&row, false, row.last_seq))
    }

    /// Every entry of a session in creation order, as stored (JSON), for export.
    pub async fn all_entries(&self, id: &str) -> Result<(SessionRow, Vec<String>), SessionError> {
        let (row, stored) = self.stored_entries(id).await?;
        Ok((row, stored.into_iter().map(|stored| stored.body).collect()))
    }

    /// Every entry of a session as stored, in creation order (parents first), with its row.
    async fn stored_entries(
        &self,
        id: &str,
    ) -> Result<(SessionRow, Vec<pi_store::StoredEntry>), SessionError> {
        let row = self
            .store
            .session(id)
            .await
            .map_err(storage(&self.store))?
            .ok_or_else(|| SessionError::SessionNotFound(id.to_owned()))?;
        let mut all = Vec::new();
        let mut after = -1;
        loop {
            let page = self
                .store
                .entries_by_ordinal(id, after, 1000)
                .await
                .map_err(storage(&self.store))?;
            let Some(last) = page.last() else { break };
            after = last.ordinal;
            all.extend(page);
        }
        Ok((row, all))
    }

    /// The current branch of a session, root first, for export.
    pub async fn branch_entries(
        &self,
        id: &str,
    ) -> Result<(SessionRow, Vec<SessionEntry>), SessionError> {
        let row = self
            .store
            .session(id)
            .await
            .map_err(storage(&self.store))?
            .ok_or_else(|| SessionError::SessionNotFound(id.to_owned()))?;
        let branch = self
            .store
            .branch(id, row.leaf_id.as_deref())
            .await
            .map_err(storage(&self.store))?
            .iter()
            .map(entries::parse_entry)
            .collect::<Result<_, _>>()
            .map_err(SessionError::internal)?;
        Ok((row, branch))
    }

    /// Every entry of session `id`, parsed, in the order they were stored (parents first),
    /// with its row: the whole tree, for the HTML export.
    pub async fn tree_entries(
        &self,
        id: &str,
    ) -> Result<(SessionRow, Vec<SessionEntry>), SessionError> {
        let (row, stored) = self.stored_entries(id).await?;
        let entries = stored
            .iter()
            .map(entries::parse_entry)
            .collect::<Result<_, _>>()
            .map_err(SessionError::internal)?;
        Ok((row, entries))
    }

    /// Number of stored sessions.
    pub async fn stored_count(&self) -> u64 {
        self.store.session_count().await.unwrap_or(0)
    }

    /// Stops every actor (aborting runs, saving state), within a bound.
    pub async fn shutdown(&self) {
        let handles: Vec<SessionHandle> = self
            .sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .values()
            .cloned()
            .collect();
        let closing = handles.iter().map(|handle| {
            handle.call(|reply| Command::Close {
                deleted: false,
                reply,
            })
        });
        if tokio::time::timeout(SHUTDOWN_TIMEOUT, futures_util::future::join_all(closing))
            .await
            .is_err()
        {
            tracing::warn!("some sessions did not stop in time");
        }
    }
}

/// Converts entries to stored form, announcing them with seqs from `first_seq`.
fn stored_entries(new: &[SessionEntry], first_seq: u64) -> Result<Vec<NewEntry>, SessionError> {
    new.iter()
        .enumerate()
        .map(|(offset, entry)| {
            entries::new_entry(entry, first_seq + offset as u64).map_err(SessionError::internal)
        })
        .collect()
}

fn parse_list_cursor(text: &str) -> Result<(i64, String), SessionError> {
    text.split_once(':')
        .and_then(|(updated, id)| Some((updated.parse().ok()?, id.to_owned())))
        .ok_or_else(|| {
            SessionError::invalid(
                "cursor",
                format!("cursor {text:?} is not a cursor from a previous page"),
            )
        })
}

/// Session metadata as sent on the wire.
pub fn info(row: &SessionRow, running: bool, seq: u64) -> SessionInfo {
    SessionInfo {
        id: row.id.clone(),
        cwd: row.cwd.clone(),
        name: row.name.clone(),
        created_at: row.created_at,
        updated_at: row.updated_at,
        model: row.model.as_ref().map(|(provider, id)| ModelRef {
            provider: provider.clone(),
            id: id.clone(),
        }),
        thinking_level: row.thinking_level.clone(),
        leaf_id: row.leaf_id.clone(),
        message_count: row.message_count,
        first_message: row.first_message.clone(),
        parent_session_id: row.parent_session_id.clone(),
        task_name: row.task_name.clone(),
        missing_env: missing_env(row),
        status: if running {
            SessionStatus::Running
        } else {
            SessionStatus::Idle
        },
        last_seq: seq,
        warnings: Vec::new(),
        pi_file: row.start_options.pi_file.clone(),
        questions: 0,
    }
}

/// A model as sent on the wire.
pub fn model_info(model: &Model, has_key: bool) -> ModelInfo {
    ModelInfo {
        provider: model.provider.clone(),
        id: model.id.clone(),
        name: model.name.clone(),
        api: model.api.clone(),
        context_window: model.context_window,
        max_tokens: model.max_tokens,
        reasoning: model.reasoning,
        images: model.accepts_images(),
        input_cost: model.cost.input,
        output_cost: model.cost.output,
        has_key,
        base_url: Some(model.base_url.clone()),
        cache_read_cost: Some(model.cost.cache_read),
        cache_write_cost: Some(model.cost.cache_write),
    }
}

/// The model the settings name (`defaultProvider` + `defaultModel`, pi's rule; or
/// `defaultModel` alone, resolved like `session/create`'s `model`), if it exists.
fn settings_default_model(
    models: &dyn ModelService,
    settings: &pi_coding::Settings,
) -> Option<Model> {
    let id = settings.default_model.as_deref()?;
    match settings.default_provider.as_deref() {
        Some(provider) => models.find(provider, id),
        None => models.resolve(id).ok().map(|(model, _)| model),
    }
}
/// Where a session's tools run; they reach the daemon's sessions through `sessions`.
pub fn tool_environment(row: &SessionRow, sessions: &SessionsWeak) -> ToolEnvironment {
    let env = match &row.env {
        // The row's own map, shared, when there is nothing to add to it.
        Some(env) if row.secret_env.is_empty() => env.clone(),
        Some(env) => {
            let mut merged = (**env).clone();
            merged.extend(tool_variables(&row.secret_env));
            sessions.shared_env(merged)
        }
        None => {
            let mut env: BTreeMap<String, String> = std::env::vars().collect();
            env.extend(tool_variables(&row.secret_env));
            sessions.shared_env(env)
        }
    };
    ToolEnvironment {
        parent_session_id: row.parent_session_id.clone(),
        session_id: row.id.clone(),
        cwd: row.cwd.clone().into(),
        env,
        sessions: sessions.clone(),
        extensions: row.extensions.clone(),
        no_extensions: row.no_extensions,
        extension_flags: row.extension_flags.clone(),
        extension_tools: row
            .start_options
            .extension_tools
            .as_ref()
            .map(|names| names.clone().into()),
    }
}

/// The secret variables a session's tools see: all but its runtime API keys.
fn tool_variables(secret: &pi_store::Env) -> impl Iterator<Item = (String, String)> + '_ {
    secret
        .iter()
        .filter(|(name, _)| !name.starts_with(pi_protocol::v1::RUNTIME_API_KEY_PREFIX))
        .map(|(name, value)| (name.clone(), value.clone()))
}

/// The API key `session/setApiKey` gave session `row` for `provider`.
pub(crate) fn runtime_api_key(row: &SessionRow, provider: &str) -> Option<pi_llm::ApiKey> {
    row.secret_env
        .get(&pi_protocol::v1::runtime_api_key_variable(provider))
        .map(|key| pi_llm::ApiKey::new(key.clone()))
}

/// The resources session `row` chose on pi's command line.
pub fn resource_choice(row: &SessionRow) -> pi_coding::resources::ResourceChoice {
    choice_of(&row.start_options, row.no_skills)
}

fn choice_of(
    options: &pi_store::StartOptions,
    no_skills: bool,
) -> pi_coding::resources::ResourceChoice {
    pi_coding::resources::ResourceChoice {
        skills: options.skills.iter().map(PathBuf::from).collect(),
        prompt_templates: options.prompt_templates.iter().map(PathBuf::from).collect(),
        no_skills,
        no_prompt_templates: options.no_prompt_templates,
    }
}

/// A path given on pi's command line (`--skill`, `--prompt-template`), absolute: `~` is the
/// home, a relative path is relative to `cwd`.
fn resolve_cli_path(source: &str, cwd: &Path) -> String {
    let expanded = match source.strip_prefix("~/") {
        Some(rest) => {
            std::env::home_dir().map_or_else(|| PathBuf::from(source), |home| home.join(rest))
        }
        None if source == "~" => std::env::home_dir().unwrap_or_else(|| PathBuf::from(source)),
        None => PathBuf::from(source),
    };
    let absolute = if expanded.is_absolute() {
        expanded
    } else {
        cwd.join(expanded)
    };
    // `.` and `..` resolved as written (Node's `path.resolve`, which pi uses).
    let mut normal = PathBuf::new();
    for component in absolute.components() {
        match component {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                normal.pop();
            }
            other => normal.push(other),
        }
    }
    normal.display().to_string()
}

/// The secret variables a session lost (not stored; not supplied since it was loaded).
pub fn missing_env(row: &SessionRow) -> Vec<String> {
    row.secret_env_names
        .iter()
        .filter(|name| !row.secret_env.contains_key(*name))
        .cloned()
        .collect()
}

/// The text blocks of user content, joined by newlines.
pub fn user_content_text(content: &[UserContent]) -> String {
    content
        .iter()
        .filter_map(|block| match block {
            UserContent::Text(text) => Some(text.text.as_str()),
            UserContent::Image(_) => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Turns a store failure into a [`SessionError::Storage`] (logged): a client can always tell
/// a storage failure from a bug.
pub fn storage(store: &Store) -> impl Fn(StoreError) -> SessionError + '_ {
    move |error| SessionError::storage(store.path(), error)
}

#[cfg(test)]
mod tests {
    use super::extension_source;
    use std::path::Path;

    #[test]
    fn extension_sources_resolve_like_pis_dash_e() {
        let cwd = Path::new("/work/proj");
        assert_eq!(
            extension_source("./tools/x.ts", cwd),
            "/work/proj/tools/x.ts"
        );
        assert_eq!(extension_source("../x.ts", cwd), "/work/x.ts");
        assert_eq!(extension_source("/abs/x.ts", cwd), "/abs/x.ts");
        assert_eq!(
            extension_source("npm:@scope/pkg@1.0", cwd),
            "npm:@scope/pkg@1.0"
        );
        assert_eq!(
            extension_source("git:github.com/a/b", cwd),
            "git:github.com/a/b"
        );
        assert_eq!(extension_source(" x.ts ", cwd), "/work/proj/x.ts");
    }
}
