//! What sessions need from the rest of the daemon, as traits: models (resolution, keys, the
//! provider that streams them) and tools (per-session tool sets). The daemon wires the real
//! implementations (pi-llm's registry, pi-tools); tests wire the faux provider and test tools.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use pi_agent::{QueueMode, Tool, ToolExecution, ToolSource};
use pi_llm::{ApiKey, KeyError, Model, Provider, ResolveError, ThinkingLevel};

/// Models: resolution, availability, keys, and the provider router that streams them.
pub trait ModelService: Send + Sync {
    /// Streams any known model (routes by `model.api`).
    fn provider(&self) -> Arc<dyn Provider>;
    /// Resolves `provider/id`, an id, or a search term, with an optional `:level` suffix.
    /// The error is a sentence naming the closest matches.
    fn resolve(&self, spec: &str) -> Result<(Model, Option<ThinkingLevel>), ResolveError>;
    /// The model with exactly this provider and id.
    fn find(&self, provider: &str, id: &str) -> Option<Model>;
    /// Like `find`, or else pi's custom model id for a known provider (the model a session
    /// that chose an unlisted id runs with).
    fn find_or_custom(&self, provider: &str, id: &str) -> Option<Model> {
        self.find(provider, id)
    }
    /// A warning for a model its provider does not list (a custom model id), like pi's.
    fn unlisted_warning(&self, model: &Model) -> Option<String> {
        let _ = model;
        None
    }
    /// The model new sessions use when none is asked for.
    fn default_model(&self) -> Option<Model>;
    /// The default model for a session whose environment is `env` (the client's): a provider
    /// key set only there counts too.
    fn default_model_in(&self, env: &BTreeMap<String, String>) -> Option<Model> {
        let _ = env;
        self.default_model()
    }
    /// The key for `model`'s provider (`None` for servers that need none). The error says which
    /// environment variable or file to set.
    fn api_key(&self, model: &Model) -> Result<Option<ApiKey>, KeyError>;
    /// The key for `model`'s provider as seen from a session whose environment is `env` (the
    /// client's): a provider variable set there beats the daemon's own environment and
    /// `models.json`, while `auth.json` keeps precedence (pi's order).
    fn api_key_in(
        &self,
        model: &Model,
        env: &BTreeMap<String, String>,
    ) -> Result<Option<ApiKey>, KeyError> {
        let _ = env;
        self.api_key(model)
    }
    /// Every known model and whether its provider has a key.
    fn list(&self) -> Vec<(Model, bool)>;
    /// Re-reads the model and key files (after they changed). Models without files: nothing.
    fn reload(&self) {}
    /// Problems with the model and key files now: the file and a sentence naming the field.
    fn diagnostics(&self) -> Vec<(std::path::PathBuf, String)> {
        Vec::new()
    }
}

/// Where and how a session's tools run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolEnvironment {
    /// The session id.
    pub session_id: String,
    /// Absolute working directory.
    pub cwd: PathBuf,
    /// The client's environment (or the daemon's).
    pub env: Arc<BTreeMap<String, String>>,
    /// The daemon's sessions, for tools that reach their own session (approvals, questions)
    /// or start others (subagents). Made by the registry with the environment.
    pub sessions: SessionsWeak,
    /// pi extensions the session loads besides the configured ones (`-e`), resolved.
    pub extensions: Arc<[String]>,
    /// The session loads none of the configured extensions (`--no-extensions`).
    pub no_extensions: bool,
    /// The values it gives the flags its extensions register (pi's `--name[=value]`).
    pub extension_flags: Arc<std::collections::BTreeMap<String, serde_json::Value>>,
    /// The only extension tools it may use (pi's `--tools` / `--no-tools`); `None`: all.
    pub extension_tools: Option<Arc<[String]>>,
    /// The session that started it, for a subagent (its `local://` is the parent's).
    pub parent_session_id: Option<String>,
}

/// The registry of sessions, held weakly: the registry owns the sessions' tools, which hold
/// this. Empty (never upgrades) where there is no registry (tools built for documentation).
#[derive(Clone, Default)]
pub struct SessionsWeak(pub(super) std::sync::Weak<super::SessionRegistry>);

impl SessionsWeak {
    /// The registry, unless the daemon is stopping.
    pub fn upgrade(&self) -> Option<Arc<super::SessionRegistry>> {
        self.0.upgrade()
    }

    /// `env`, shared with the sessions that hold an equal one.
    pub fn shared_env(
        &self,
        env: std::collections::BTreeMap<String, String>,
    ) -> Arc<std::collections::BTreeMap<String, String>> {
        match self.upgrade() {
            Some(registry) => registry.envs.intern(env),
            None => Arc::new(env),
        }
    }
}

impl std::fmt::Debug for SessionsWeak {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionsWeak")
    }
}

impl PartialEq for SessionsWeak {
    fn eq(&self, other: &Self) -> bool {
        self.0.ptr_eq(&other.0)
    }
}

impl Eq for SessionsWeak {}

/// Builds a session's tools.
pub trait ToolFactory: Send + Sync {
    /// The tools named `names` for a session; an unknown name is an error naming it.
    fn tools(
        &self,
        environment: &ToolEnvironment,
        names: &[String],
    ) -> Result<Vec<Arc<dyn Tool>>, ToolsError>;
    /// The tools a session gets when none are named.
    fn default_names(&self) -> Vec<String>;
    /// Every name `tools` knows (pi's `--tools` allowlist keeps only these).
    fn known_names(&self) -> Vec<String> {
        self.default_names()
    }
    /// Forgets what tools stored for a session that was deleted (its artifacts).
    fn delete_session(&self, _session_id: &str) {}
    /// Whether a call of `tool` with `arguments` only reads (what plan mode lets through);
    /// by default nothing is known to.
    fn reads_only(&self, _tool: &str, _arguments: &serde_json::Value) -> bool {
        false
    }
    /// The `exit_plan_mode` tool of a session in plan mode (`None`: plan mode has no way
    /// out but `session/setPlanMode`).
    fn plan_tool(&self, _environment: &ToolEnvironment) -> Option<Arc<dyn Tool>> {
        None
    }
    /// Tools that come and go (MCP servers' tools) for a run of the session about to start:
    /// what they need starts now, and the run asks the source before each model request.
    fn tool_source(&self, _environment: &ToolEnvironment) -> Option<Arc<dyn ToolSource>> {
        None
    }
    /// The names of the tools a run's `tool_source` would give session `session_id` now.
    fn source_tool_names(&self, _session_id: &str) -> Vec<String> {
        Vec::new()
    }
    /// A session was created: start what its runs' `tool_source` will need, in the
    /// background.
    fn warm_up(&self, _environment: &ToolEnvironment) {}
    /// The session's actor stopped: it no longer uses what `tool_source` gave it.
    fn session_closed(&self, _session_id: &str) {}
    /// Slash commands that come with the tools (MCP servers' prompts): (name after the
    /// slash, description).
    fn commands(&self, _session_id: &str) -> Vec<(String, String)> {
        Vec::new()
    }
    /// Expands one of `commands` (`text` is the whole message); `None` when `text` is not
    /// one of them. The error says what was wrong.
    fn expand_command<'a>(
        &'a self,
        _environment: &'a ToolEnvironment,
        _text: &'a str,
    ) -> Option<CommandFuture<'a>> {
        None
    }
}

/// A slash command being expanded (an MCP prompt being fetched); the error is the
/// expander's own.
pub type CommandFuture<'a> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<String, CommandError>> + Send + 'a>>;

/// Why a slash command could not be expanded (the expander's typed error: an MCP server's).
pub type CommandError = Box<dyn std::error::Error + Send + Sync>;

/// Makes each session's hooks.
pub trait SessionHooks: Send + Sync {
    /// The hooks of the session in `environment` (its actor starts); `None` when nothing
    /// could hook into it.
    fn session(&self, environment: &ToolEnvironment) -> Option<Arc<dyn crate::hooks::Hooks>>;
    /// Whether a session in `cwd` created with `extensions` (its own) and `no_extensions`
    /// could have hooks (a cheap look, before it exists).
    fn could_hook(
        &self,
        _cwd: &std::path::Path,
        _extensions: &[String],
        _no_extensions: bool,
    ) -> bool {
        false
    }
}

/// No session has hooks.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoHooks;

impl SessionHooks for NoHooks {
    fn session(&self, _environment: &ToolEnvironment) -> Option<Arc<dyn crate::hooks::Hooks>> {
        None
    }
}

/// Why a session's tools could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ToolsError {
    /// A name that is no tool.
    #[error(transparent)]
    Unknown(#[from] pi_tools::UnknownTool),
    /// The session's artifacts directory could not be made.
    #[error(transparent)]
    Artifacts(#[from] pi_tools::ArtifactError),
}

/// Per-session behaviour the daemon configures.
#[derive(Clone, Debug)]
pub struct SessionSettings {
    /// A session with no subscribers and no run unloads after this long.
    pub idle_unload: Duration,
    /// A session with no subscribers and no run keeps its recent events (for a client that
    /// reconnects with `afterSeq`, deltas included) this long, then gives their memory back.
    pub recent_kept_while_idle: Duration,
    /// What all sessions with no subscribers keep in recent windows at most, together; past
    /// it, a session that loses its last subscriber forgets its window at once.
    pub recent_unwatched: crate::recent::WindowBudget,
    /// What all sessions keep in recent windows at most, together, watched or not; past it a
    /// growing window forgets its oldest events down to a floor.
    pub recent_windows: crate::recent::WindowPool,
    /// Thinking level of new sessions.
    pub default_thinking: ThinkingLevel,
    /// How tool calls of one message run.
    pub tool_execution: ToolExecution,
    /// Steering delivery.
    pub steering_mode: QueueMode,
    /// Follow-up delivery.
    pub follow_up_mode: QueueMode,
    /// Most durable events `session/attach` replays before answering `resync_required`.
    pub replay_limit: u32,
    /// Where settings, context files, skills and prompt templates are read from. Settings
    /// files override `default_thinking` and the queue modes above.
    pub resources: pi_coding::ResourceRoots,
}

impl Default for SessionSettings {
    fn default() -> Self {
        SessionSettings {
            idle_unload: Duration::from_secs(600),
            recent_kept_while_idle: Duration::from_secs(30),
            recent_unwatched: crate::recent::WindowBudget::default(),
            recent_windows: crate::recent::WindowPool::default(),
            default_thinking: ThinkingLevel::Medium,
            tool_execution: ToolExecution::default(),
            steering_mode: QueueMode::OneAtATime,
            follow_up_mode: QueueMode::OneAtATime,
            replay_limit: 5000,
            resources: pi_coding::ResourceRoots::default(),
        }
    }
}

/// Everything a session needs from the daemon.
#[derive(Clone)]
pub struct SessionServices {
    /// Models.
    pub models: Arc<dyn ModelService>,
    /// Tools.
    pub tools: Arc<dyn ToolFactory>,
    /// Extensions at the sessions' hook points ([`NoHooks`]: none).
    pub hooks: Arc<dyn SessionHooks>,
    /// Behaviour.
    pub settings: SessionSettings,
}

impl std::fmt::Debug for SessionServices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionServices")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// Clamps a thinking level to what `model` supports (pi's rule, from pi-llm).
pub use pi_llm::thinking::clamp as clamp_thinking;
