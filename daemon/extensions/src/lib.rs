//! `pi-extensions`: pi's TypeScript extensions, run unmodified by one Node process (the
//! *host*, `extensions/host/host.mjs`) that loads them through the pinned
//! `@mariozechner/pi-coding-agent` package's own loader and runner (decision 0017). One host
//! serves every session; each session has its own extension instances, as each pi process
//! would have. A session with nothing to load never starts the host.
//!
//! The host is a child server under `pi-supervisor` (restarted on the next use after a crash,
//! with backoff and a circuit breaker; its stderr in a log; its process group ended with the
//! daemon). A session's set is opened in the host when the session warms up (or its first
//! run needs it) and opened again after the host restarted.
//!
//! What the session sees: the tools extensions register (an [`tool::ExtensionTool`] each,
//! through a run's tool source), `tool_call` and `tool_result` handlers around every tool
//! ([`tool::ExtensionGate`]), and the extensions' dialogs asked of the session's clients
//! through the [`SessionPort`] the daemon gives each session.
//!
//! Architecture invariant: this crate knows no session type; what it needs of a session is
//! the [`SessionPort`] it is given.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use pi_jsonrpc::{Held, OutboundLimits, Peer, PeerConfig, Transport};
use pi_protocol::v1::{UiAnswer, UiRequest};
use pi_supervisor::{Child as _, Restart, RestartPolicy, Started, Supervision};
use pi_tools::spawn::Spawner;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::watch;

pub mod approval;
mod error;
pub mod hooks;
pub mod packages;
pub mod provider;
pub mod tool;

pub use approval::{Approvals, NoApprovals};
pub use error::ExtensionError;
pub use provider::ProvidedModel;

/// How long the host may take to start: Node and the pinned package take about a second,
/// installing the package first (`npm ci`) takes longer.
const START_TIMEOUT: Duration = Duration::from_secs(300);
/// How long loading one session's extensions may take.
const OPEN_TIMEOUT: Duration = Duration::from_secs(60);
/// How long one hook (`tool_call`, `tool_result`, …) may take by default before it is given
/// up, naming the extensions that hold it (`HostConfig::hook_timeout`).
pub const HOOK_TIMEOUT: Duration = Duration::from_secs(30);

const POLICY: RestartPolicy = RestartPolicy {
    start_timeout: START_TIMEOUT,
    backoff: Duration::from_millis(250),
    max_failures: 5,
    cooldown: Duration::from_secs(60),
    stable_after: Some(Duration::from_secs(30)),
    restart: Restart::OnNextUse,
    restart_command: "pictl extensions restart",
};

/// Where the host comes from.
#[derive(Clone, Debug)]
pub struct HostConfig {
    /// The `node` program (≥ 20.6).
    pub node: PathBuf,
    /// `host.mjs`.
    pub script: PathBuf,
    /// The `node_modules` directory holding the pinned package (`None`: resolved from the
    /// script's directory).
    pub modules: Option<PathBuf>,
    /// The host's stderr (what extensions print).
    pub log_path: PathBuf,
    /// pi's agent directory (`~/.pi/agent`): global extensions, settings, packages.
    pub agent_dir: PathBuf,
    /// How long one hook may take while no dialog of its session waits for a person
    /// (default [`HOOK_TIMEOUT`]).
    pub hook_timeout: Duration,
}

/// What the daemon gives each session's extensions: its clients, for dialogs, and a place
/// for what the extensions tell it.
pub trait SessionPort: Send + Sync + 'static {
    /// Asks the session's clients (first answer wins); `None` when nobody can answer.
    fn ask(
        &self,
        request: UiRequest,
        timeout: Option<Duration>,
    ) -> futures_util::future::BoxFuture<'_, Option<UiAnswer>>;
    /// Whether a client that can answer dialogs is attached now (pi's `ctx.hasUI`).
    fn has_ui(&self) -> futures_util::future::BoxFuture<'_, bool>;
    /// An action an extension took (`sendMessage`, `appendEntry`, …), as the host sent it.
    fn action(&self, action: Value);
    /// Something an extension shows the session's clients outside dialogs.
    fn show(&self, ui: pi_protocol::v1::ExtensionUi);
    /// The session's entries in pi's session-file format (each a JSON object, in the order
    /// stored) and its leaf: what `ctx.sessionManager` reads.
    fn entries(&self) -> futures_util::future::BoxFuture<'_, (Vec<Value>, Option<String>)>;
}

/// One extension a session loaded.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadedExtension {
    /// Its file (or package entry).
    pub path: String,
    /// The events it handles.
    #[serde(default)]
    pub handlers: Vec<String>,
    /// The tools it registered.
    #[serde(default)]
    pub tools: Vec<String>,
    /// The commands it registered.
    #[serde(default)]
    pub commands: Vec<String>,
    /// The flags it registered.
    #[serde(default)]
    pub flags: Vec<String>,
    /// The shortcuts it registered.
    #[serde(default)]
    pub shortcuts: Vec<String>,
}

/// A tool an extension registered, as the model sees it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RegisteredTool {
    /// Its name.
    pub name: String,
    /// Its label.
    pub label: String,
    /// Its description.
    pub description: String,
    /// JSON Schema of its arguments.
    pub parameters: Value,
    /// The extension that registered it.
    #[serde(default)]
    pub extension: Option<String>,
    /// Its line in the system prompt (pi's `promptSnippet`, on one line).
    #[serde(default)]
    pub prompt_snippet: Option<String>,
    /// Its system prompt guidelines (pi's `promptGuidelines`, trimmed, without empty ones).
    #[serde(default)]
    pub prompt_guidelines: Vec<String>,
}

/// A keyboard shortcut an extension registered.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RegisteredShortcut {
    /// pi's key id, lower-case.
    pub key: String,
    /// What it does.
    #[serde(default)]
    pub description: String,
    /// The extension that registered it.
    #[serde(default)]
    pub extension: Option<String>,
}

/// A slash command an extension registered.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RegisteredCommand {
    /// Its name, after the slash.
    pub name: String,
    /// What it does.
    #[serde(default)]
    pub description: String,
    /// The extension that registered it.
    #[serde(default)]
    pub extension: Option<String>,
}

/// A problem loading or running an extension: which file, what went wrong.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Diagnostic {
    /// The extension (its path), or the source it came from.
    pub path: String,
    /// What went wrong.
    pub error: String,
}

/// A candidate the host's discovery found (pi's package manager: settings `extensions` and
/// `packages`, the global and project directories).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Found {
    path: String,
    scope: String,
}

#[derive(Debug, Default, Deserialize)]
struct Discovered {
    #[serde(default)]
    extensions: Vec<Found>,
    #[serde(default)]
    errors: Vec<Diagnostic>,
}

#[derive(Debug, Default, Deserialize)]
struct Opened {
    #[serde(default)]
    models: Vec<ProvidedModel>,
    #[serde(default)]
    extensions: Vec<LoadedExtension>,
    #[serde(default)]
    tools: Vec<RegisteredTool>,
    #[serde(default)]
    commands: Vec<RegisteredCommand>,
    #[serde(default)]
    shortcuts: Vec<RegisteredShortcut>,
    #[serde(default)]
    errors: Vec<Diagnostic>,
}

/// A session's extensions, as they are loaded in the host.
#[derive(Clone, Debug, Default)]
pub struct SessionSet {
    /// What loaded.
    pub extensions: Vec<LoadedExtension>,
    /// The tools they registered.
    pub tools: Vec<RegisteredTool>,
    /// The slash commands they registered.
    pub commands: Vec<RegisteredCommand>,
    /// The keyboard shortcuts they registered.
    pub shortcuts: Vec<RegisteredShortcut>,
    /// The models of the providers they registered.
    pub models: Vec<ProvidedModel>,
    /// What failed to load or threw since.
    pub diagnostics: Vec<Diagnostic>,
    /// Candidates left out: project extensions not approved.
    pub skipped: Vec<Diagnostic>,
    /// The skipped ones nobody answered about yet.
    pub unapproved: Vec<String>,
    // The host run it was opened in; another run has not heard of it.
    generation: u64,
}

impl SessionSet {
    /// Whether it is loaded in the host run `status` describes (a set opened in a host that
    /// stopped is opened again on the session's next use).
    pub fn is_live(&self, status: &HostStatus) -> bool {
        status.generation == Some(self.generation)
    }

    /// Whether some extension handles `event`.
    pub fn handles(&self, event: &str) -> bool {
        self.extensions
            .iter()
            .any(|extension| extension.handlers.iter().any(|name| name == event))
    }
}

/// Where a session's extensions are.
#[derive(Debug)]
pub enum Opening {
    /// Nothing to open: no extension is configured for the session, or it closed.
    Nothing,
    /// Opened (or failed to open: an empty set with diagnostics).
    Opened(Arc<SessionSet>),
    /// Still opening after a minute (the host's first start installs pi's package).
    Pending,
}

/// What a session loads besides and instead of the configured extensions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Choice {
    /// Extensions of its own (pi's `-e FILE`): files, directories, package sources.
    pub paths: Vec<String>,
    /// None of the configured ones (pi's `--no-extensions`).
    pub no_extensions: bool,
    /// Values for the flags extensions register (pi's `--name[=value]`).
    pub flags: BTreeMap<String, Value>,
}

/// A session as the host knows it.
struct Session {
    cwd: PathBuf,
    choice: Choice,
    port: Arc<dyn SessionPort>,
    // `Some` once its first opening ended (loaded, or failed: an empty set with
    // diagnostics); replaced when it is opened again or an extension fails.
    set: Arc<watch::Sender<Option<Arc<SessionSet>>>>,
    // Partial results of the session's extension tools that run now, by call id.
    running: HashMap<String, pi_agent::ProgressSink>,
    // Dialogs its extensions are asking now, and when the last one ended: a hook waiting
    // for a person is not a hook that hangs.
    dialogs: usize,
    last_dialog: Option<std::time::Instant>,
    // What extensions read of the session without asking (pi's getters), as last told.
    state: serde_json::Map<String, Value>,
    // Its pending question about the project's extensions.
    approving: Option<tokio::task::AbortHandle>,
    // The tools its extensions made the active ones (pi's `setActiveTools`), by name.
    active: Option<Vec<String>>,
}

/// The host run that is up: its connection and process.
pub struct Running {
    peer: Peer,
    process: Mutex<Option<tokio::process::Child>>,
    generation: u64,
}

impl std::fmt::Debug for Running {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running")
            .field("generation", &self.generation)
            .finish_non_exhaustive()
    }
}

/// The extension host: one Node process for every session.
pub struct ExtensionHost {
    config: HostConfig,
    spawner: Spawner,
    pool: pi_supervisor::Pool,
    supervision: Supervision<Arc<Running>>,
    // A sync mutex, never held across an await.
    sessions: Mutex<HashMap<String, Session>>,
    generation: std::sync::atomic::AtomicU64,
    versions: Mutex<Option<Value>>,
    approvals: Arc<dyn Approvals>,
    // Where the steps of each package operation in flight go, by its token.
    progress: Mutex<HashMap<u64, packages::Progress>>,
    // Where the events of each extension provider's stream in flight go, by its id.
    streams: Mutex<HashMap<u64, tokio::sync::mpsc::Sender<Value>>>,
    next_stream: std::sync::atomic::AtomicU64,
    me: Weak<ExtensionHost>,
}

impl std::fmt::Debug for ExtensionHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtensionHost")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// What `extensions/list` shows of the host.
#[derive(Clone, Debug)]
pub struct HostStatus {
    /// `starting`, `ready`, `failed` or `stopped`.
    pub state: &'static str,
    /// Its process.
    pub pid: Option<u32>,
    /// Its last failure, and what happens next.
    pub last_error: Option<String>,
    /// Starts since the daemon started.
    pub starts: u32,
    /// Its log.
    pub log_path: PathBuf,
    /// Node's and the pinned package's versions, once it ran.
    pub versions: Option<Value>,
    /// The sessions with extensions, by id.
    pub sessions: BTreeMap<String, Arc<SessionSet>>,
    // The host run that is up.
    generation: Option<u64>,
}

impl ExtensionHost {
    /// A host that starts on first use, through `spawner` (the daemon's guard), loading the
    /// project extensions `approvals` approves.
    pub fn new(config: HostConfig, spawner: Spawner, approvals: Arc<dyn Approvals>) -> Arc<Self> {
        let pool = pi_supervisor::Pool::default();
        Arc::new_cyclic(|me| ExtensionHost {
            config,
            spawner,
            supervision: Supervision::new(POLICY, &pool, Duration::from_secs(60)),
            pool,
            sessions: Mutex::new(HashMap::new()),
            generation: std::sync::atomic::AtomicU64::new(0),
            versions: Mutex::new(None),
            approvals,
            progress: Mutex::new(HashMap::new()),
            streams: Mutex::new(HashMap::new()),
            next_stream: std::sync::atomic::AtomicU64::new(1),
            me: me.clone(),
        })
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether anything could load for a session in `cwd` that chose `choice`, cheaply and
    /// without the host: extensions of its own (`-e`), or — unless it chose none of the
    /// configured ones — a global or project extension directory with entries, or the
    /// user's or the project's settings naming extensions or packages (project ones load
    /// once approved, and are asked about). Sessions for which this is false pay nothing.
    pub fn configured(&self, cwd: &Path, choice: &Choice) -> bool {
        let has_entries =
            |dir: PathBuf| std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some());
        !choice.paths.is_empty()
            || !choice.no_extensions
                && [self.config.agent_dir.clone(), cwd.join(".pi")]
                    .into_iter()
                    .any(|dir| {
                        has_entries(dir.join("extensions"))
                            || names_extensions(&dir.join("settings.json"))
                    })
    }

    /// Session `session_id` (in `cwd`) may use extensions: they load in the background;
    /// [`ExtensionHost::opened`] waits for them.
    pub fn warm_up(
        &self,
        session_id: &str,
        cwd: &Path,
        choice: &Choice,
        port: Arc<dyn SessionPort>,
    ) {
        let set = {
            let mut sessions = self.sessions();
            if sessions.contains_key(session_id) {
                return;
            }
            let set = Arc::new(watch::Sender::new(None));
            sessions.insert(
                session_id.to_owned(),
                Session {
                    cwd: cwd.to_path_buf(),
                    choice: choice.clone(),
                    port,
                    set: set.clone(),
                    running: HashMap::new(),
                    dialogs: 0,
                    last_dialog: None,
                    state: serde_json::Map::new(),
                    approving: None,
                    active: None,
                },
            );
            set
        };
        let Some(host) = self.me.upgrade() else {
            return;
        };
        let session_id = session_id.to_owned();
        tokio::spawn(async move {
            let opened = host.open(&session_id).await;
            set.send_replace(Some(Arc::new(opened)));
        });
    }

    /// The session's extensions once loaded (or failed to), `None` for a session that never
    /// warmed up.
    pub async fn opened(self: &Arc<Self>, session_id: &str) -> Option<Arc<SessionSet>> {
        match self.opening(session_id).await {
            Opening::Opened(set) => Some(set),
            Opening::Nothing | Opening::Pending => None,
        }
    }

    /// Like [`ExtensionHost::opened`], telling a set still opening after a minute (the
    /// host's first start installs pi's package) from a session with nothing to open.
    pub async fn opening(self: &Arc<Self>, session_id: &str) -> Opening {
        let Some(mut set) = self
            .sessions()
            .get(session_id)
            .map(|session| session.set.subscribe())
        else {
            return Opening::Nothing;
        };
        let set = match tokio::time::timeout(OPEN_TIMEOUT, set.wait_for(Option::is_some)).await {
            Ok(Ok(set)) => match set.clone() {
                Some(set) => set,
                None => return Opening::Nothing,
            },
            Ok(Err(_)) => return Opening::Nothing,
            Err(_) => return Opening::Pending,
        };
        // Opened in a host run that is gone: opened again in this one.
        if self.supervision.running().map(|running| running.generation) != Some(set.generation)
            && !set.extensions.is_empty()
        {
            let reopened = Arc::new(self.open(session_id).await);
            if let Some(session) = self.sessions().get(session_id) {
                session.set.send_replace(Some(reopened.clone()));
            }
            return Opening::Opened(reopened);
        }
        Opening::Opened(set)
    }

    /// The tools the session's extensions made the active ones (pi's `setActiveTools`);
    /// `None` until one did.
    pub fn active_tools(&self, session_id: &str) -> Option<Vec<String>> {
        self.sessions().get(session_id)?.active.clone()
    }

    /// The session's extensions as loaded now, without waiting.
    pub fn current(&self, session_id: &str) -> Option<Arc<SessionSet>> {
        self.sessions().get(session_id)?.set.borrow().clone()
    }

    /// The session ended (its actor stopped, or it was deleted): its extensions hear
    /// `session_shutdown` and are dropped.
    pub fn close(self: &Arc<Self>, session_id: &str) {
        let Some(session) = self.sessions().remove(session_id) else {
            return;
        };
        if let Some(task) = &session.approving {
            task.abort();
        }
        self.release(session_id);
        if session
            .set
            .borrow()
            .as_ref()
            .is_none_or(|set| set.extensions.is_empty())
        {
            return;
        }
        let (host, session_id) = (self.clone(), session_id.to_owned());
        tokio::spawn(async move { host.close_in_host(&session_id).await });
    }

    /// Closes session `session_id`'s extensions in the running host (`session_shutdown`).
    pub(crate) async fn close_in_host(&self, session_id: &str) {
        if let Some(running) = self.supervision.running() {
            let _ = running
                .peer
                .request(
                    "session/close",
                    json!({"sessionId": session_id, "reason": "quit"}),
                    Some(OPEN_TIMEOUT),
                )
                .await;
        }
    }

    /// What `extensions/list` shows.
    pub fn status(&self) -> HostStatus {
        let status = self.supervision.status();
        HostStatus {
            state: status.state,
            pid: status.pid,
            last_error: status.last_error,
            starts: status.starts,
            log_path: self.config.log_path.clone(),
            versions: self
                .versions
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
            sessions: self
                .sessions()
                .iter()
                .filter_map(|(id, session)| Some((id.clone(), session.set.borrow().clone()?)))
                .collect(),
            generation: self.supervision.running().map(|running| running.generation),
        }
    }

    /// Ends the host now; the next use starts it again (`pictl extensions restart`).
    pub fn restart(self: &Arc<Self>) {
        pi_supervisor::Child::restart(self);
    }

    /// The daemon stops: the host is ended and nothing starts it again.
    pub fn shutdown(&self) {
        self.pool.close();
        self.stop("the daemon is stopping");
    }

    /// The connection to a running host, started if needed (for session `session_id`).
    async fn connection(
        self: &Arc<Self>,
        session_id: &str,
    ) -> Result<Arc<Running>, ExtensionError> {
        self.supervision.add_user(session_id, "extensions");
        self.ensure_started();
        self.supervision.settled().await.ok_or_else(|| {
            ExtensionError::HostDown(
                self.supervision
                    .last_error()
                    .unwrap_or_else(|| "the extension host did not start".to_owned()),
            )
        })
    }

    /// Discovers and loads session `session_id`'s extensions in the host.
    async fn open(self: &Arc<Self>, session_id: &str) -> SessionSet {
        self.open_once(session_id, false).await
    }

    async fn open_again(self: &Arc<Self>, session_id: &str) -> SessionSet {
        self.open_once(session_id, true).await
    }

    async fn open_once(self: &Arc<Self>, session_id: &str, retried: bool) -> SessionSet {
        let Some((cwd, choice, port, state)) = self.sessions().get(session_id).map(|session| {
            (
                session.cwd.clone(),
                session.choice.clone(),
                session.port.clone(),
                session.state.clone(),
            )
        }) else {
            return SessionSet::default();
        };
        let has_ui = port.has_ui().await;
        let entries = port.entries().await;
        match self
            .try_open(session_id, &cwd, &choice, has_ui, state, entries)
            .await
        {
            // Project extensions answered about while the set was opening: opened again
            // with the answer (once; an answer is not taken back that fast).
            Ok(set)
                if !retried
                    && set
                        .unapproved
                        .iter()
                        .any(|path| self.approvals.approval(path).is_some()) =>
            {
                Box::pin(self.open_again(session_id)).await
            }
            Ok(set) => {
                // What the session told while the set was opening went to a host that did
                // not have it yet: the whole state again, after the opening.
                let state = self
                    .sessions()
                    .get(session_id)
                    .map(|session| session.state.clone());
                if let Some(mut state) = state.filter(|state| !state.is_empty())
                    && !set.extensions.is_empty()
                {
                    state.insert("sessionId".to_owned(), Value::from(session_id));
                    self.tell("session/state", Value::Object(state));
                }
                if !set.unapproved.is_empty() {
                    self.ask_approval(
                        session_id,
                        &cwd.display().to_string(),
                        set.unapproved.clone(),
                    );
                }
                set
            }
            Err(error) => SessionSet {
                diagnostics: vec![Diagnostic {
                    // Loading that hung names what was loading; anything else is the host's.
                    path: match &error {
                        ExtensionError::Timeout { extensions, .. } if !extensions.is_empty() => {
                            extensions.join(", ")
                        }
                        _ => self.config.script.display().to_string(),
                    },
                    error: error.to_string(),
                }],
                ..SessionSet::default()
            },
        }
    }

    async fn try_open(
        self: &Arc<Self>,
        session_id: &str,
        cwd: &Path,
        choice: &Choice,
        has_ui: bool,
        state: serde_json::Map<String, Value>,
        (entries, leaf_id): (Vec<Value>, Option<String>),
    ) -> Result<SessionSet, ExtensionError> {
        let running = self.connection(session_id).await?;
        let agent_dir = self.config.agent_dir.display().to_string();
        let cwd_text = cwd.display().to_string();
        let discovered = self.discover(&running, cwd, choice).await?;
        // Project extensions are code the project brings: they load once approved
        // (decision 0017); until then they are listed, not loaded.
        let mut paths: Vec<&str> = Vec::new();
        let mut skipped = Vec::new();
        let mut unapproved = Vec::new();
        for found in &discovered.extensions {
            let approval = if found.scope == "project" {
                self.approvals.approval(&found.path)
            } else {
                Some(true)
            };
            match approval {
                Some(true) => paths.push(&found.path),
                None => {
                    skipped.push(approval::skipped(&found.path, None));
                    unapproved.push(found.path.clone());
                }
                Some(false) => skipped.push(approval::skipped(&found.path, Some(false))),
            }
        }
        let mut set = SessionSet {
            skipped,
            unapproved,
            diagnostics: discovered.errors.clone(),
            generation: running.generation,
            ..SessionSet::default()
        };
        if paths.is_empty() {
            // Opened before with what is refused now: those instances go, and the tools
            // they made the active ones with them.
            self.close_in_host(session_id).await;
            let narrowed = self.sessions().get_mut(session_id).and_then(|session| {
                session.active.take()?;
                Some(session.port.clone())
            });
            if let Some(port) = narrowed {
                port.action(json!({"sessionId": session_id, "action": "resetActiveTools"}));
            }
            return Ok(set);
        }
        let loading: Vec<String> = paths.iter().map(|path| (*path).to_owned()).collect();
        let opened: Opened = decode(
            running
                .peer
                .request(
                    "session/open",
                    json!({"sessionId": session_id, "cwd": cwd_text, "agentDir": agent_dir,
                        "paths": paths, "hasUI": has_ui, "reason": "startup", "state": state,
                        "flags": choice.flags,
                        "entries": entries, "leafId": leaf_id}),
                    Some(self.load_timeout()),
                )
                .await
                .map_err(|error| match ExtensionError::from(error) {
                    // An extension's factory or `session_start` handler that never returns.
                    ExtensionError::Timeout { after, .. } => ExtensionError::Timeout {
                        what: "loading (a factory or session_start)".to_owned(),
                        extensions: loading.clone(),
                        after,
                    },
                    other => other,
                })?,
        )?;
        set.extensions = opened.extensions;
        set.tools = opened.tools;
        set.commands = opened.commands;
        set.shortcuts = opened.shortcuts;
        set.models = opened.models;
        set.diagnostics.extend(opened.errors);
        for diagnostic in &set.diagnostics {
            tracing::warn!(
                session = session_id,
                extension = diagnostic.path,
                error = diagnostic.error,
                "an extension did not load"
            );
        }
        Ok(set)
    }

    /// How long loading a session's extensions (their factories, `session_start`) may take:
    /// twice a hook's time, at least 10 s.
    fn load_timeout(&self) -> Duration {
        (self.config.hook_timeout * 2).max(Duration::from_secs(10))
    }

    /// What pi's package manager finds for a session in `cwd` that chose `choice`.
    async fn discover(
        &self,
        running: &Running,
        cwd: &Path,
        choice: &Choice,
    ) -> Result<Discovered, ExtensionError> {
        decode(
            running
                .peer
                .request(
                    "discover",
                    json!({"cwd": cwd.display().to_string(),
                        "agentDir": self.config.agent_dir.display().to_string(),
                        "extensionPaths": choice.paths, "noExtensions": choice.no_extensions}),
                    Some(OPEN_TIMEOUT),
                )
                .await?,
        )
    }

    /// Sends a request about a session to the host that opened its set.
    async fn call(
        self: &Arc<Self>,
        session_id: &str,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, ExtensionError> {
        let set = self
            .opened(session_id)
            .await
            .ok_or_else(|| ExtensionError::NotOpen(session_id.to_owned()))?;
        let running = self
            .supervision
            .running()
            .filter(|running| running.generation == set.generation)
            .ok_or_else(|| {
                ExtensionError::HostDown(self.supervision.last_error().unwrap_or_else(|| {
                    "the extension host stopped; it starts again on the next use".to_owned()
                }))
            })?;
        // The time allowed runs while no dialog of the session waits for a person.
        let request = running.peer.request(method, params, None);
        tokio::pin!(request);
        loop {
            match tokio::time::timeout(timeout, &mut request).await {
                Ok(answer) => return answer.map_err(ExtensionError::from),
                Err(_) if self.asking(session_id, timeout) => continue,
                Err(_) => {
                    let extensions: Vec<String> = set
                        .extensions
                        .iter()
                        .filter(|extension| extension.handlers.iter().any(|name| name == method))
                        .map(|extension| extension.path.clone())
                        .collect();
                    // Each extension that may hold it is named where the session's problems
                    // are listed, as one that throws is (the host runs them in turn and does
                    // not say which one waits).
                    let who = if extensions.len() > 1 {
                        "this extension or another handling it"
                    } else {
                        "it"
                    };
                    for path in &extensions {
                        self.note(
                            session_id,
                            Diagnostic {
                                path: path.clone(),
                                error: format!(
                                    "{method}: {who} did not answer within {} s and was given up",
                                    timeout.as_secs()
                                ),
                            },
                        );
                    }
                    return Err(ExtensionError::Timeout {
                        what: method.to_owned(),
                        extensions,
                        after: timeout,
                    });
                }
            }
        }
    }

    /// Whether session `session_id`'s extensions are asking a person now, or were within
    /// `within`.
    fn asking(&self, session_id: &str, within: Duration) -> bool {
        self.sessions().get(session_id).is_some_and(|session| {
            session.dialogs > 0
                || session
                    .last_dialog
                    .is_some_and(|ended| ended.elapsed() < within)
        })
    }

    fn dialog(&self, session_id: &str, started: bool) {
        if let Some(session) = self.sessions().get_mut(session_id) {
            if started {
                session.dialogs += 1;
            } else {
                session.dialogs = session.dialogs.saturating_sub(1);
                session.last_dialog = Some(std::time::Instant::now());
            }
        }
    }

    /// Whether a client that answers dialogs is attached to the session now.
    pub(crate) async fn has_ui(&self, session_id: &str) -> bool {
        match self.port(session_id) {
            Some(port) => port.has_ui().await,
            None => false,
        }
    }

    /// Tells the host, without waiting.
    fn tell(&self, method: &str, params: Value) {
        if let Some(running) = self.supervision.running() {
            let _ = running.peer.notify(method, params);
        }
    }

    fn progress_for(&self, session_id: &str, call_id: &str, sink: pi_agent::ProgressSink) {
        if let Some(session) = self.sessions().get_mut(session_id) {
            session.running.insert(call_id.to_owned(), sink);
        }
    }

    fn progress_done(&self, session_id: &str, call_id: &str) {
        if let Some(session) = self.sessions().get_mut(session_id) {
            session.running.remove(call_id);
        }
    }

    fn port(&self, session_id: &str) -> Option<Arc<dyn SessionPort>> {
        Some(self.sessions().get(session_id)?.port.clone())
    }

    fn note(&self, session_id: &str, diagnostic: Diagnostic) {
        tracing::warn!(
            session = session_id,
            extension = diagnostic.path,
            error = diagnostic.error,
            "an extension failed"
        );
        let sessions = self.sessions();
        let Some(session) = sessions.get(session_id) else {
            return;
        };
        session.set.send_modify(|set| {
            if let Some(set) = set {
                Arc::make_mut(set).diagnostics.push(diagnostic);
            }
        });
    }

    async fn launch(self: Arc<Self>) -> Result<Started<Arc<Running>>, ExtensionError> {
        self.install().await?;
        let mut command = self.spawner.server_command(
            &self.config.node,
            &[self.config.script.display().to_string()],
            None,
        );
        command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        if let Some(modules) = &self.config.modules {
            command.env("PI_EXTENSION_HOST_MODULES", modules);
        }
        // pi's agent directory as the daemon sees it: what extensions read and write through
        // pi's `getAgentDir()` is where pid looks for settings and extensions.
        command.env("PI_CODING_AGENT_DIR", &self.config.agent_dir);
        if let Some(dir) = self.config.script.parent() {
            command.current_dir(dir);
        }
        let node = self.config.node.clone();
        let mut child = self
            .spawner
            .spawn_on_thread(move || command.spawn())
            .await
            .map_err(|error| ExtensionError::Spawner(error.to_string()))?
            .map_err(|source| ExtensionError::Spawn {
                program: node.display().to_string(),
                source,
            })?;
        let pid = child.id();
        let (Some(input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(ExtensionError::Pipes);
        };
        if let Some(stderr) = child.stderr.take() {
            pi_tools::spawn::copy_to_log(stderr, self.config.log_path.clone());
        }
        let generation = self
            .generation
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            + 1;
        let peer = Peer::start(
            Transport::bytes(input, output, pi_jsonrpc::Framing::Lines),
            Arc::new(Handler {
                host: self.me.clone(),
            }),
            HOST,
        );
        let running = Arc::new(Running {
            peer,
            process: Mutex::new(Some(child)),
            generation,
        });
        let versions = running
            .peer
            .request("initialize", json!({}), Some(START_TIMEOUT))
            .await
            .map_err(|error| {
                if let Some(pid) = pid {
                    pi_tools::spawn::kill_group(pid);
                }
                ExtensionError::Start {
                    reason: error.to_string(),
                    log: self.config.log_path.clone(),
                }
            })?;
        *self.versions.lock().unwrap_or_else(PoisonError::into_inner) = Some(versions);
        Ok(Started { running, pid })
    }
}

impl ExtensionHost {
    /// Installs the pinned package next to the script (`npm ci`, from the lock file) when no
    /// `node_modules` was given and it is not there yet.
    async fn install(&self) -> Result<(), ExtensionError> {
        if self.config.modules.is_some() {
            return Ok(());
        }
        let Some(dir) = self.config.script.parent() else {
            return Ok(());
        };
        let installed = dir.join("node_modules/@mariozechner/pi-coding-agent/package.json");
        if installed.exists() {
            return Ok(());
        }
        tracing::info!(dir = %dir.display(), "installing the extension host's pinned pi package");
        // The sessions waiting for their extensions show why it takes a while.
        let _shown = Installing::show(self);
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.config.log_path)
            .map_err(|error| ExtensionError::Install(format!("cannot open its log: {error}")))?;
        let log_err = log
            .try_clone()
            .map_err(|error| ExtensionError::Install(error.to_string()))?;
        let status = tokio::process::Command::new("npm")
            .args([
                "ci",
                "--omit=dev",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
            ])
            .current_dir(dir)
            .stdin(std::process::Stdio::null())
            .stdout(log)
            .stderr(log_err)
            .kill_on_drop(true)
            .status()
            .await
            .map_err(|error| ExtensionError::Install(format!("cannot run npm: {error}")))?;
        if !status.success() {
            return Err(ExtensionError::Install(format!(
                "`npm ci` in {} failed ({status}); see {}",
                dir.display(),
                self.config.log_path.display()
            )));
        }
        Ok(())
    }
}

/// The host as a JSON-RPC peer: lines over its stdio, messages up to 64 MiB.
/// The status the sessions waiting for the host show while pi's package installs, cleared
/// when the install ends (however it ends).
struct Installing {
    ports: Vec<Arc<dyn SessionPort>>,
}

impl Installing {
    const KEY: &'static str = "extensions";

    fn show(host: &ExtensionHost) -> Installing {
        let ports: Vec<Arc<dyn SessionPort>> = host
            .sessions()
            .values()
            .map(|session| session.port.clone())
            .collect();
        for port in &ports {
            port.show(pi_protocol::v1::ExtensionUi::Status {
                key: Self::KEY.to_owned(),
                text: Some(
                    "Installing pi's extension runtime (its first start: npm ci of \
                     @mariozechner/pi-coding-agent 0.73.1)…"
                        .to_owned(),
                ),
            });
        }
        Installing { ports }
    }
}

impl Drop for Installing {
    fn drop(&mut self) {
        for port in &self.ports {
            port.show(pi_protocol::v1::ExtensionUi::Status {
                key: Self::KEY.to_owned(),
                text: None,
            });
        }
    }
}

const HOST: PeerConfig = PeerConfig {
    max_message: 64 * 1024 * 1024,
    outbound: OutboundLimits {
        write_timeout: Duration::from_secs(60),
        queued_bytes: 64 * 1024 * 1024,
    },
    cancel_notification: None,
    answer_malformed: false,
    name: "extension host",
};

fn decode<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, ExtensionError> {
    serde_json::from_value(value).map_err(|error| ExtensionError::Protocol(error.to_string()))
}

/// A `ui/*` notice of the host as the protocol's [`pi_protocol::v1::ExtensionUi`].
fn ui_of(method: &str, params: Value) -> Result<pi_protocol::v1::ExtensionUi, serde_json::Error> {
    let kind = match method {
        "ui/notify" => "notify",
        "ui/status" => "status",
        "ui/widget" => "widget",
        "ui/title" => "title",
        _ => "editorText",
    };
    let mut params = params;
    if let Value::Object(fields) = &mut params {
        fields.insert("kind".to_owned(), Value::from(kind));
        fields.retain(|_, value| !value.is_null());
    }
    serde_json::from_value(params)
}

/// Whether a settings file names extensions or packages.
fn names_extensions(file: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(file) else {
        return false;
    };
    let Ok(settings) = serde_json::from_str::<Value>(&text) else {
        return false;
    };
    ["extensions", "packages"].iter().any(|key| {
        settings[key]
            .as_array()
            .is_some_and(|entries| !entries.is_empty())
    })
}

impl pi_supervisor::Child for ExtensionHost {
    type Running = Arc<Running>;
    type Error = ExtensionError;

    fn supervision(&self) -> &Supervision<Arc<Running>> {
        &self.supervision
    }

    fn name(&self) -> &str {
        "extension host"
    }

    fn start(
        self: Arc<Self>,
    ) -> pi_supervisor::BoxFuture<Result<Started<Arc<Running>>, ExtensionError>> {
        Box::pin(async move { self.launch().await })
    }

    fn exited(self: Arc<Self>, running: Arc<Running>) -> pi_supervisor::BoxFuture<String> {
        Box::pin(async move {
            let child = running
                .process
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            let Some(mut child) = child else {
                running.peer.closed().await;
                return "its connection closed".to_owned();
            };
            let (status, stuck) =
                pi_tools::spawn::wait_or_end_stuck(&mut child, running.peer.stuck()).await;
            match status {
                _ if stuck => {
                    "the extension host stopped reading its input and was ended".to_owned()
                }
                Ok(status) => format!("the extension host exited ({status})"),
                Err(error) => format!("the extension host's process failed: {error}"),
            }
        })
    }

    fn end(&self, _running: Arc<Running>, pid: Option<u32>) {
        if let Some(pid) = pid {
            pi_tools::spawn::kill_group(pid);
        }
    }
}

/// What the host sends on its own: dialogs, actions, errors, tool progress.
struct Handler {
    host: Weak<ExtensionHost>,
}

impl pi_jsonrpc::Handler for Handler {
    fn notification(&self, method: &str, params: Value) -> Option<Held> {
        let host = self.host.upgrade()?;
        let session_id = params["sessionId"].as_str().unwrap_or_default().to_owned();
        match method {
            "tool/update" => {
                let call_id = params["toolCallId"].as_str().unwrap_or_default();
                if let Some(sink) = host
                    .sessions()
                    .get(&session_id)
                    .and_then(|session| session.running.get(call_id))
                {
                    sink.update(tool::output_of(&params["partial"], false));
                }
            }
            "extension/error" => host.note(
                &session_id,
                Diagnostic {
                    path: params["extensionPath"]
                        .as_str()
                        .unwrap_or("an extension")
                        .to_owned(),
                    error: format!(
                        "{}: {}",
                        params["event"].as_str().unwrap_or("event"),
                        params["error"].as_str().unwrap_or_default()
                    ),
                },
            ),
            "action" => {
                let port = {
                    let mut sessions = host.sessions();
                    let session = sessions.get_mut(&session_id)?;
                    if params["action"] == "setActiveTools" {
                        session.active = Some(
                            params["names"]
                                .as_array()
                                .into_iter()
                                .flatten()
                                .filter_map(|name| name.as_str().map(str::to_owned))
                                .collect(),
                        );
                    }
                    session.port.clone()
                };
                port.action(params);
            }
            "packages/progress" => host.package_progress(&params),
            "provider/event" => return host.stream_event(&params),
            // pi's `registerProvider` (or `unregisterProvider`) after loading: the session's
            // models change.
            "providers/changed" => match serde_json::from_value(params["models"].clone()) {
                Ok(models) => {
                    let sessions = host.sessions();
                    let session = sessions.get(&session_id)?;
                    session.set.send_modify(|set| {
                        if let Some(set) = set {
                            Arc::make_mut(set).models = models;
                        }
                    });
                }
                Err(error) => {
                    tracing::warn!(session = session_id, %error, "a malformed model list from the extension host")
                }
            },
            // A tool registered after loading (pi's `registerTool` from a handler or a
            // command): the session's next request offers it.
            "tools/changed" => match serde_json::from_value(params["tools"].clone()) {
                Ok(tools) => {
                    let sessions = host.sessions();
                    let session = sessions.get(&session_id)?;
                    session.set.send_modify(|set| {
                        if let Some(set) = set {
                            Arc::make_mut(set).tools = tools;
                        }
                    });
                }
                Err(error) => {
                    tracing::warn!(session = session_id, %error, "a malformed tool list from the extension host")
                }
            },
            "ui/notify" | "ui/status" | "ui/widget" | "ui/title" | "ui/editorText" => {
                match ui_of(method, params) {
                    Ok(ui) => {
                        if let Some(port) = host.port(&session_id) {
                            port.show(ui);
                        }
                    }
                    Err(error) => {
                        tracing::warn!(session = session_id, method, %error, "a malformed ui notice from the extension host")
                    }
                }
            }
            _ => {}
        }
        None
    }

    fn request(&self, method: &str, params: Value) -> pi_jsonrpc::Answer {
        let host = self.host.clone();
        let method = method.to_owned();
        Box::pin(async move {
            let host = host
                .upgrade()
                .ok_or((-32603, "the daemon is stopping".to_owned()))?;
            match method.as_str() {
                "ui/ask" => {
                    let session_id = params["sessionId"].as_str().unwrap_or_default();
                    let request: UiRequest = serde_json::from_value(params["request"].clone())
                        .map_err(|error| (-32602, format!("not a dialog: {error}")))?;
                    let timeout = params["timeoutMs"].as_u64().map(Duration::from_millis);
                    let Some(port) = host.port(session_id) else {
                        return Ok(json!({"cancelled": true}));
                    };
                    host.dialog(session_id, true);
                    let answer = port.ask(request, timeout).await.unwrap_or(UiAnswer {
                        cancelled: true,
                        ..UiAnswer::default()
                    });
                    host.dialog(session_id, false);
                    serde_json::to_value(answer).map_err(|error| (-32603, error.to_string()))
                }
                other => Err((-32601, format!("pid does not handle {other}"))),
            }
        })
    }
}
