//! MCP servers shared by every session: one connection (and one child process) per resolved
//! definition for the whole daemon, whatever the number of sessions using it.
//!
//! - `config.rs`: where definitions come from (`mcp.json` files) and what they mean.
//! - Stdio servers run under the guard (`pi_tools::guard`), so the server's whole process
//!   tree dies with the daemon, also on SIGKILL.
//! - `tool.rs`: a server's tool as a session's tool (`mcp__<server>__<tool>`).
//! - `source.rs`: a run's MCP tools, asked before each model request (tools of servers that
//!   became ready join the next turn), and the wait for servers never seen before.
//!
//! [`McpPool`] keys servers by [`ServerDefinition::key`]. A session's run asks for its tools
//! ([`McpPool::run_tools`]): servers not running yet start, a starting server's cached tool
//! list is offered at once (calls wait for the server), and the run's first request waits
//! (at most `[mcp] first_start_wait_secs`) for a server that never listed its tools. A
//! session uses a server from then until its actor stops ([`McpPool::session_closed`]); a
//! server nobody uses stops after the linger. A server in use that exits (or fails to start)
//! starts again after a backoff that doubles with each failure in a row; after
//! [`MAX_FAILURES`] it waits [`COOLDOWN`] (or `mcp/restart`). A project server starts only
//! while approved.
//!
//! Invariants: at most one connection per key; calls from every session go over it
//! concurrently (rmcp multiplexes them); a stopped server's process group is killed while its
//! leader is still our unreaped child (so the group id cannot have been reused). A project
//! server starts only once approved (`trust.rs`); until then the session that needs it asks
//! its clients.

pub mod config;
pub mod error;
pub mod prompts;
pub mod source;
pub mod tool;
pub mod trust;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

pub use error::McpError;
use pi_supervisor::{BoxFuture, Child as _, Restart, RestartPolicy, Started, Supervision};
use pi_tools::Artifacts;
use pi_tools::spawn::Spawner;
use rmcp::service::{
    Peer, RoleClient, RunningService, RunningServiceCancellationToken, ServiceExt as _,
};
use rmcp::transport::TokioChildProcess;
use tokio::sync::watch;

pub use config::{ServerDefinition, Transport};

/// A prefix of the slash commands of MCP prompts (`prompts.rs`).
pub const COMMAND_PREFIX: &str = "/mcp:";
/// The scheme `read` takes for MCP resources (`prompts.rs`).
pub const RESOURCE_SCHEME: &str = "mcp://";

/// Failures in a row after which a server waits [`COOLDOWN`] before the next start.
pub const MAX_FAILURES: u32 = 5;
/// How long a server that keeps failing is left alone.
pub const COOLDOWN: Duration = Duration::from_secs(60);
/// How MCP servers are started and restarted: a start (process, handshake, tool list) may
/// take 60 s; a server in use that fails starts again by itself after 250 ms, doubled for
/// each failure in a row; after [`MAX_FAILURES`] it waits [`COOLDOWN`] (or `mcp/restart`);
/// one that ran 30 s starts its count afresh.
const POLICY: RestartPolicy = RestartPolicy {
    start_timeout: Duration::from_secs(60),
    backoff: Duration::from_millis(250),
    max_failures: MAX_FAILURES,
    cooldown: COOLDOWN,
    stable_after: Some(Duration::from_secs(30)),
    restart: Restart::WhileUsed,
    restart_command: "pictl mcp restart",
};
/// How old a cached tool list may be.
const TOOL_CACHE_AGE: Duration = Duration::from_secs(30 * 24 * 3600);
/// How long a call may take when the definition sets no `timeout`.
const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(600);

pub use pi_supervisor::Phase;

/// A server's tool as listed by the server.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolInfo {
    /// The server's name for it.
    pub name: String,
    /// Its description.
    pub description: String,
    /// JSON Schema of its arguments.
    pub input_schema: serde_json::Value,
}

/// A server as one session sees it: the name the session's definition gives it (its tools are
/// `mcp__<name>__<tool>`) and the shared server. Two definitions of one command (`mcp.json`
/// and an editor's, say) are two bindings of one server: one process, both names work.
#[derive(Clone, Debug)]
pub struct Binding {
    /// The definition's name for the server.
    pub name: String,
    /// How long a call may take (the definition's `timeout`).
    pub timeout: Duration,
    /// The shared server.
    pub server: Arc<Server>,
}

/// What `mcp/list` shows of a server.
#[derive(Clone, Debug)]
pub struct ServerStatus {
    /// The server's name (in the definition that started it).
    pub name: String,
    /// Other names sessions give it (another definition of the same command).
    pub aliases: Vec<String>,
    /// Its sharing key.
    pub key: String,
    /// `stdio` or `http`.
    pub transport: &'static str,
    /// `starting`, `ready`, `stopped` or `failed`.
    pub state: &'static str,
    /// The child process (the guard leading its group), when running over stdio.
    pub pid: Option<u32>,
    /// The file that defines it.
    pub file: PathBuf,
    /// Its tools' names as the server lists them.
    pub tools: Vec<String>,
    /// The sessions using it.
    pub sessions: Vec<String>,
    /// The last failure, in a sentence.
    pub last_error: Option<String>,
    /// The server's stderr log.
    pub log_path: PathBuf,
    /// Starts since the daemon started.
    pub starts: u32,
}

type Client = RunningService<RoleClient, Handler>;

/// One run of a server: its connection, and what it listed when it started.
pub struct Connection {
    peer: Peer<RoleClient>,
    // Ends the connection (and so the process) when taken and cancelled.
    stop: Mutex<Option<RunningServiceCancellationToken>>,
    // The service, until its end is awaited.
    service: Mutex<Option<Client>>,
    tools: Vec<ToolInfo>,
    prompts: Vec<prompts::PromptInfo>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("tools", &self.tools.len())
            .finish_non_exhaustive()
    }
}

/// Where a server's progress notifications go: the running calls' progress sinks, by the
/// progress token each call sent. Progress is cumulative, so a call's updates are throttled
/// to one per [`PROGRESS_INTERVAL`], the newest kept: a server that floods notifications
/// reaches the session (and every client) ten times a second, not at its own pace.
#[derive(Clone, Debug, Default)]
pub struct ProgressRoutes {
    // A sync mutex, never held across an await.
    routes: Arc<Mutex<HashMap<String, Route>>>,
}

/// The least time between two progress updates of one call.
pub const PROGRESS_INTERVAL: Duration = Duration::from_millis(100);

#[derive(Debug)]
struct Route {
    sink: pi_agent::ProgressSink,
    // When an update last went to the sink.
    sent_at: Option<tokio::time::Instant>,
    // The newest update held back by the throttle, and whether a flush is scheduled for it.
    held: Option<pi_agent::ToolOutput>,
    flush_scheduled: bool,
}

impl ProgressRoutes {
    /// Routes progress with `token` to `sink` until the returned guard drops.
    pub fn route(&self, token: String, sink: pi_agent::ProgressSink) -> ProgressRoute {
        self.routes().insert(
            token.clone(),
            Route {
                sink,
                sent_at: None,
                held: None,
                flush_scheduled: false,
            },
        );
        ProgressRoute {
            routes: self.clone(),
            token,
        }
    }

    fn routes(&self) -> std::sync::MutexGuard<'_, HashMap<String, Route>> {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn send(&self, token: &str, update: pi_agent::ToolOutput) {
        let now = tokio::time::Instant::now();
        let flush_at = {
            let mut routes = self.routes();
            let Some(route) = routes.get_mut(token) else {
                return;
            };
            match route.sent_at {
                Some(sent_at) if now < sent_at + PROGRESS_INTERVAL => {
                    route.held = Some(update);
                    if route.flush_scheduled {
                        return;
                    }
                    route.flush_scheduled = true;
                    sent_at + PROGRESS_INTERVAL
                }
                _ => {
                    route.sink.update(update);
                    route.sent_at = Some(now);
                    route.held = None;
                    return;
                }
            }
        };
        // The newest held-back update goes out when the interval is over (unless the call
        // ended meanwhile).
        let routes = self.clone();
        let token = token.to_owned();
        tokio::spawn(async move {
            tokio::time::sleep_until(flush_at).await;
            let mut map = routes.routes();
            if let Some(route) = map.get_mut(&token) {
                route.flush_scheduled = false;
                if let Some(update) = route.held.take() {
                    route.sink.update(update);
                    route.sent_at = Some(tokio::time::Instant::now());
                }
            }
        });
    }
}

/// A call's progress route; dropping it ends the route.
#[derive(Debug)]
pub struct ProgressRoute {
    routes: ProgressRoutes,
    token: String,
}

impl Drop for ProgressRoute {
    fn drop(&mut self) {
        self.routes.routes().remove(&self.token);
    }
}

/// A progress token as the key of its route.
pub fn token_key(token: &rmcp::model::ProgressToken) -> String {
    match &token.0 {
        rmcp::model::NumberOrString::String(text) => text.to_string(),
        rmcp::model::NumberOrString::Number(number) => number.to_string(),
    }
}

/// What the daemon does with a server's notifications: progress becomes the calls'
/// `tool_execution_update`s; a changed tool list is fetched again (sessions' next runs offer
/// it).
#[derive(Clone, Debug, Default)]
pub struct Handler {
    progress: ProgressRoutes,
    server: std::sync::Weak<Server>,
    cache: Option<ToolCache>,
    changes: Option<pi_supervisor::Pool>,
}

impl rmcp::ClientHandler for Handler {
    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        let token = token_key(&params.progress_token);
        let amount = match params.total {
            Some(total) => format!("{}/{}", params.progress, total),
            None => params.progress.to_string(),
        };
        let text = match &params.message {
            Some(message) => format!("Progress {amount}: {message}"),
            None => format!("Progress {amount}"),
        };
        let update = pi_agent::ToolOutput::text(text).with_details(serde_json::json!({
            "progress": params.progress,
            "total": params.total,
            "message": params.message,
        }));
        self.progress.send(&token, update);
    }

    async fn on_tool_list_changed(&self, context: rmcp::service::NotificationContext<RoleClient>) {
        let Some(server) = self.server.upgrade() else {
            return;
        };
        match list_tools(&context.peer).await {
            Ok(tools) => {
                tracing::info!(
                    server = server.name(),
                    tools = tools.len(),
                    "MCP server's tools changed"
                );
                if let Some(cache) = &self.cache {
                    cache.put(&server.key, &tools).await;
                }
                let mut state = server.state();
                state.tools = tools;
                state.listed = true;
                drop(state);
                if let Some(changes) = &self.changes {
                    changes.changed();
                }
            }
            Err(error) => {
                tracing::warn!(server = server.name(), %error, "cannot list the changed tools");
            }
        }
    }

    async fn on_prompt_list_changed(
        &self,
        context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        if let Some(server) = self.server.upgrade() {
            let prompts = prompts::list_prompts(&context.peer).await;
            server.state().prompts = prompts;
        }
    }
}

/// The tools `peer` lists.
async fn list_tools(peer: &Peer<RoleClient>) -> Result<Vec<ToolInfo>, McpError> {
    Ok(peer
        .list_all_tools()
        .await
        .map_err(|error| McpError::ListTools(error.to_string()))?
        .into_iter()
        .map(|tool| ToolInfo {
            name: tool.name.to_string(),
            description: tool.description.map(|d| d.to_string()).unwrap_or_default(),
            input_schema: serde_json::Value::Object((*tool.input_schema).clone()),
        })
        .collect())
}

/// Servers' last tool lists by key, in memory and in the store: a session offers a starting
/// server's cached tools (their calls wait for it) instead of none.
#[derive(Clone, Debug, Default)]
pub struct ToolCache {
    // A sync mutex, never held across an await.
    lists: Arc<Mutex<HashMap<String, Vec<ToolInfo>>>>,
    store: Arc<std::sync::OnceLock<pi_store::Store>>,
}

impl ToolCache {
    /// Loads the lists `store` holds and keeps new ones there.
    pub async fn attach_store(&self, store: pi_store::Store) -> Result<(), pi_store::StoreError> {
        let since = pi_util::time::now_millis() - TOOL_CACHE_AGE.as_millis() as i64;
        let rows = store.cached_mcp_tools(since).await?;
        {
            let mut lists = self.lists.lock().unwrap_or_else(PoisonError::into_inner);
            for (key, json) in rows {
                if let Ok(tools) = serde_json::from_str::<Vec<ToolInfo>>(&json) {
                    lists.insert(key, tools);
                }
            }
        }
        let _ = self.store.set(store);
        Ok(())
    }

    fn get(&self, key: &str) -> Option<Vec<ToolInfo>> {
        self.lists
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .cloned()
    }

    /// Keeps `tools` as `key`'s list, in the store too (done when this returns).
    async fn put(&self, key: &str, tools: &[ToolInfo]) {
        self.lists
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key.to_owned(), tools.to_vec());
        let (Some(store), Ok(json)) = (self.store.get(), serde_json::to_string(tools)) else {
            return;
        };
        if let Err(error) = store
            .cache_mcp_tools(key, &json, pi_util::time::now_millis())
            .await
        {
            tracing::warn!(%error, "cannot cache an MCP server's tools");
        }
    }
}

/// One shared server.
pub struct Server {
    key: String,
    definition: ServerDefinition,
    // The working directory and environment of the session that started it (a stdio server's
    // environment is that session's plus the definition's).
    cwd: PathBuf,
    env: BTreeMap<String, String>,
    log_path: PathBuf,
    // The running calls' progress sinks, shared with the connection's handler.
    progress: ProgressRoutes,
    // What starting it takes from its pool.
    starter: Starter,
    supervision: Supervision<Arc<Connection>>,
    // A sync mutex, never held across an await; taken after the supervision's, never before.
    state: Mutex<ServerState>,
}

/// What a server's start takes from its pool.
#[derive(Clone, Debug)]
struct Starter {
    spawner: Spawner,
    cache: ToolCache,
    trust: Arc<trust::Trust>,
    first_start_wait: Duration,
}

#[derive(Default)]
struct ServerState {
    tools: Vec<ToolInfo>,
    prompts: Vec<prompts::PromptInfo>,
    // Its tool list is known (listed by it, now or before: the cache had it). Runs wait for a
    // starting server whose list is not known, until `awaited_until`.
    listed: bool,
    // Set at its first start while its list is not known: the end of runs' wait for it.
    awaited_until: Option<Instant>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("key", &self.key)
            .field("name", &self.definition.name)
            .finish_non_exhaustive()
    }
}

impl Server {
    fn state(&self) -> std::sync::MutexGuard<'_, ServerState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.definition.name
    }

    /// How long a call may take.
    pub fn call_timeout(&self) -> Duration {
        call_timeout(&self.definition)
    }

    /// Routes the server's progress notifications with `token` to `sink` while the guard
    /// lives.
    pub fn route_progress(&self, token: String, sink: pi_agent::ProgressSink) -> ProgressRoute {
        self.progress.route(token, sink)
    }

    /// The connection, while the server is ready.
    pub fn client(&self) -> Option<Peer<RoleClient>> {
        self.supervision
            .running()
            .map(|connection| connection.peer.clone())
    }

    /// The connection, waiting up to the start timeout when the server is starting.
    pub async fn ready_client(&self) -> Option<Peer<RoleClient>> {
        self.supervision
            .settled()
            .await
            .map(|connection| connection.peer.clone())
    }

    /// Whether it is starting.
    pub fn starting(&self) -> bool {
        self.supervision.phase() == Phase::Starting
    }

    /// Where it is.
    pub fn phase(&self) -> Phase {
        self.supervision.phase()
    }

    /// Follows its phase.
    pub fn subscribe_phase(&self) -> watch::Receiver<Phase> {
        self.supervision.subscribe()
    }

    /// Its last failure.
    pub fn last_error(&self) -> Option<String> {
        self.supervision.last_error()
    }

    /// Connects: its process or URL, the handshake, the tool list.
    async fn connect(self: &Arc<Self>) -> Result<Started<Arc<Connection>>, McpError> {
        let handler = Handler {
            progress: self.progress.clone(),
            server: Arc::downgrade(self),
            cache: Some(self.starter.cache.clone()),
            changes: Some(self.supervision.pool().clone()),
        };
        let (client, pid) = match &self.definition.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let mut full_env = self.env.clone();
                full_env.extend(env.clone());
                let program = crate::tool::find_program(command, &full_env);
                let spawner = &self.starter.spawner;
                let mut process = spawner.server_command(&program, args, None);
                process
                    .env_clear()
                    .envs(&full_env)
                    .current_dir(cwd.as_deref().unwrap_or(&self.cwd));
                let (transport, stderr) = spawner
                    .spawn_on_thread(move || {
                        TokioChildProcess::builder(process)
                            .stderr(std::process::Stdio::piped())
                            .spawn()
                    })
                    .await
                    .map_err(|error| McpError::Spawner(error.to_string()))?
                    .map_err(|source| McpError::Spawn {
                        program: program.clone(),
                        source,
                    })?;
                let pid = transport.id();
                if let Some(stderr) = stderr {
                    pi_tools::spawn::copy_to_log(stderr, self.log_path.clone());
                }
                let client = handler
                    .serve(transport)
                    .await
                    .map_err(|error| McpError::Handshake(error.to_string()))?;
                (client, pid)
            }
            Transport::Http { url, headers } => {
                // rmcp's HTTPS client needs the process's TLS provider (the LLM client
                // installs the same one; whichever comes first wins).
                let _ = rustls::crypto::ring::default_provider().install_default();
                let mut config =
                    rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
                        url.clone(),
                    );
                let mut custom = std::collections::HashMap::new();
                for (name, value) in headers {
                    if name.eq_ignore_ascii_case("authorization") {
                        let token = value.strip_prefix("Bearer ").unwrap_or(value);
                        config = config.auth_header(token.to_owned());
                        continue;
                    }
                    if let (Ok(name), Ok(value)) = (
                        http::HeaderName::from_bytes(name.as_bytes()),
                        http::HeaderValue::from_str(value),
                    ) {
                        custom.insert(name, value);
                    }
                }
                config = config.custom_headers(custom);
                let transport = rmcp::transport::StreamableHttpClientTransport::from_config(config);
                let client =
                    handler
                        .serve(transport)
                        .await
                        .map_err(|error| McpError::HandshakeWith {
                            url: without_secrets(url),
                            error: error.to_string(),
                        })?;
                (client, None)
            }
        };
        let tools = list_tools(client.peer()).await?;
        let prompts = prompts::list_prompts(client.peer()).await;
        Ok(Started {
            running: Arc::new(Connection {
                peer: client.peer().clone(),
                stop: Mutex::new(Some(client.cancellation_token())),
                service: Mutex::new(Some(client)),
                tools,
                prompts,
            }),
            pid,
        })
    }
}

#[cfg(test)]
impl Server {
    /// A stopped server of its own pool that lists `tools` (for unit tests).
    fn for_tests(key: &str, definition: ServerDefinition, tools: Vec<ToolInfo>) -> Arc<Server> {
        Arc::new(Server {
            key: key.to_owned(),
            definition,
            cwd: PathBuf::from("/"),
            env: BTreeMap::new(),
            log_path: PathBuf::from("/dev/null"),
            progress: ProgressRoutes::default(),
            starter: Starter {
                spawner: Spawner::direct(),
                cache: ToolCache::default(),
                trust: Arc::default(),
                first_start_wait: Duration::ZERO,
            },
            supervision: Supervision::new(POLICY, &pi_supervisor::Pool::default(), Duration::ZERO),
            state: Mutex::new(ServerState {
                tools,
                ..ServerState::default()
            }),
        })
    }
}

impl pi_supervisor::Child for Server {
    type Running = Arc<Connection>;
    type Error = McpError;

    fn supervision(&self) -> &Supervision<Arc<Connection>> {
        &self.supervision
    }

    fn name(&self) -> &str {
        &self.definition.name
    }

    /// Never a project server not approved (or no longer).
    fn may_start(&self) -> bool {
        self.starter.trust.approval(&self.definition).allows_start()
    }

    /// Runs wait for a server that never listed its tools, from its first start.
    fn starting(&self) {
        let mut state = self.state();
        if !state.listed && state.awaited_until.is_none() {
            state.awaited_until = Some(Instant::now() + self.starter.first_start_wait);
        }
    }

    fn start(self: Arc<Self>) -> BoxFuture<Result<Started<Arc<Connection>>, McpError>> {
        Box::pin(async move { self.connect().await })
    }

    /// Its tools and prompts are its own now, and cached before it shows ready: whoever
    /// sees it ready finds them cached.
    fn ready(self: Arc<Self>, connection: Arc<Connection>) -> BoxFuture<()> {
        Box::pin(async move {
            {
                let mut state = self.state();
                state.tools = connection.tools.clone();
                state.prompts = connection.prompts.clone();
                state.listed = true;
            }
            self.starter.cache.put(&self.key, &connection.tools).await;
        })
    }

    fn exited(self: Arc<Self>, connection: Arc<Connection>) -> BoxFuture<String> {
        Box::pin(async move {
            let service = connection
                .service
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            let reason = match service {
                Some(service) => match service.waiting().await {
                    Ok(rmcp::service::QuitReason::Closed) => "its connection closed".to_owned(),
                    Ok(other) => format!("{other:?}"),
                    Err(error) => error.to_string(),
                },
                None => "its connection closed".to_owned(),
            };
            format!(
                "the server exited ({reason}; its stderr is in {})",
                self.log_path.display()
            )
        })
    }

    fn end(&self, connection: Arc<Connection>, pid: Option<u32>) {
        if let Some(pid) = pid {
            // The leader is still our unreaped child (rmcp holds it): the group is ours.
            pi_tools::spawn::kill_group(pid);
        }
        let stop = connection
            .stop
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(stop) = stop {
            stop.cancel();
        }
    }
}

/// Every MCP server of the daemon.
/// How long the pool keeps what it starts (`[mcp]` of `config.toml`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct McpTimings {
    /// How long a server no session uses keeps running; zero stops it at once.
    pub linger: Duration,
    /// How long a run waits, from the server's first start, for a server that has never
    /// listed its tools; zero does not wait.
    pub first_start_wait: Duration,
}

#[derive(Debug)]
pub struct McpPool {
    // Key → server. A sync mutex, never held across an await.
    servers: Mutex<HashMap<String, Arc<Server>>>,
    config_dir: PathBuf,
    pi_agent_dir: PathBuf,
    log_dir: PathBuf,
    linger: Duration,
    // How long runs wait for a server that never listed its tools, from its first start.
    first_start_wait: Duration,
    // Starts servers so that they die with the daemon.
    spawner: Spawner,
    artifacts: Artifacts,
    trust: Arc<trust::Trust>,
    cache: ToolCache,
    // Where sessions' settings come from (`mcp.enabled`, `mcp.disabledServers`).
    settings: std::sync::OnceLock<pi_coding::ResourceRoots>,
    // Servers each session was told not to use (`mcp/setEnabled`), by name. A sync mutex,
    // never held across an await.
    disabled: Mutex<HashMap<String, BTreeSet<String>>>,
    // Servers a client gave one session (`session/setMcpServers`: an editor's ACP
    // `mcpServers`), trusted, in memory while the daemon runs. A sync mutex.
    session_servers: Mutex<HashMap<String, Vec<ServerDefinition>>>,
    store: std::sync::OnceLock<pi_store::Store>,
    // The servers' change counter (`mcp/changed`) and whether the pool closed (`shutdown`:
    // nothing starts any more).
    pool: pi_supervisor::Pool,
}

impl McpPool {
    /// A pool reading definitions from `config_dir` and `pi_agent_dir`, logging servers'
    /// stderr into `log_dir`, keeping servers as `timings` say.
    pub fn new(
        config_dir: PathBuf,
        pi_agent_dir: PathBuf,
        log_dir: PathBuf,
        timings: McpTimings,
        artifacts: Artifacts,
        spawner: Spawner,
    ) -> McpPool {
        McpPool {
            servers: Mutex::new(HashMap::new()),
            config_dir,
            pi_agent_dir,
            log_dir,
            linger: timings.linger,
            first_start_wait: timings.first_start_wait,
            spawner,
            artifacts,
            trust: Arc::default(),
            cache: ToolCache::default(),
            settings: std::sync::OnceLock::new(),
            disabled: Mutex::new(HashMap::new()),
            session_servers: Mutex::new(HashMap::new()),
            store: std::sync::OnceLock::new(),
            pool: pi_supervisor::Pool::default(),
        }
    }

    fn servers(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Server>>> {
        self.servers.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The definitions a session in `cwd` with `env` sees, and the problems in their files.
    pub fn definitions(
        &self,
        cwd: &Path,
        env: &BTreeMap<String, String>,
    ) -> (Vec<ServerDefinition>, Vec<pi_coding::Diagnostic>) {
        config::load(
            &config::files(&self.config_dir, &self.pi_agent_dir, cwd),
            cwd,
            env,
        )
    }

    /// Sets the servers a client gave session `session_id` (replacing earlier ones); they
    /// join the files' servers for the session's next run.
    pub fn set_session_servers(&self, session_id: &str, servers: Vec<ServerDefinition>) {
        self.session_servers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(session_id.to_owned(), servers);
        self.changed();
    }

    /// The servers a client gave session `session_id`.
    pub fn session_servers(&self, session_id: &str) -> Vec<ServerDefinition> {
        self.session_servers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(session_id)
            .cloned()
            .unwrap_or_default()
    }

    /// Starts the servers session `session_id` (in `cwd`, with `env`) sees, without waiting;
    /// project servers not answered about yet are asked about through `approver`.
    pub fn warm_up(
        self: &Arc<Self>,
        session_id: &str,
        cwd: &Path,
        env: &BTreeMap<String, String>,
        approver: &Arc<dyn trust::Approver>,
    ) {
        self.acquire(session_id, cwd, env, approver);
    }

    /// The user's answers about project servers.
    pub fn trust(&self) -> &Arc<trust::Trust> {
        &self.trust
    }

    /// Keeps what the pool remembers in `store` (answers about project servers, tool lists,
    /// sessions' disabled servers) and loads what it holds.
    pub async fn attach_store(&self, store: pi_store::Store) -> Result<(), pi_store::StoreError> {
        self.trust.attach_store(store.clone()).await?;
        self.cache.attach_store(store.clone()).await?;
        let rows = store.session_mcp_disabled().await?;
        {
            let mut disabled = self.disabled.lock().unwrap_or_else(PoisonError::into_inner);
            for (session, server) in rows {
                disabled.entry(session).or_default().insert(server);
            }
        }
        let _ = self.store.set(store);
        Ok(())
    }

    /// Changes of what [`McpPool::list`] shows: the value is bumped on each (a receiver sees
    /// the latest, changes in between coalesce).
    pub fn subscribe_changes(&self) -> watch::Receiver<u64> {
        self.pool.subscribe_changes()
    }

    fn changed(&self) {
        self.pool.changed();
    }

    /// Reads sessions' `mcp.*` settings through `roots`.
    pub fn set_settings_roots(&self, roots: pi_coding::ResourceRoots) {
        let _ = self.settings.set(roots);
    }

    /// Enables or disables server `name` for session `session_id` (its next run follows);
    /// the servers now disabled for it.
    pub async fn set_enabled(
        &self,
        session_id: &str,
        name: &str,
        enabled: bool,
    ) -> Result<Vec<String>, pi_store::StoreError> {
        if let Some(store) = self.store.get() {
            store
                .set_session_mcp_disabled(session_id, name, !enabled)
                .await?;
        }
        let mut disabled = self.disabled.lock().unwrap_or_else(PoisonError::into_inner);
        let set = disabled.entry(session_id.to_owned()).or_default();
        if enabled {
            set.remove(name);
        } else {
            set.insert(name.to_owned());
        }
        Ok(set.iter().cloned().collect())
    }

    /// The servers session `session_id` in `cwd` may not use (by its settings and its own
    /// choice); `None` when its settings turn MCP off.
    fn refused(&self, session_id: &str, cwd: &Path) -> Option<BTreeSet<String>> {
        let mut refused: BTreeSet<String> = self
            .disabled
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(session_id)
            .cloned()
            .unwrap_or_default();
        if let Some(roots) = self.settings.get() {
            let (settings, _) = roots.load_settings(Some(cwd));
            if !settings.mcp_enabled {
                return None;
            }
            refused.extend(settings.mcp_disabled_servers);
        }
        Some(refused)
    }

    /// The servers the session sees and may start, each now used by it under its
    /// definition's name and started if it was not. Project servers not answered about yet
    /// are asked about; once approved, they start and join the session's next run.
    fn acquire(
        self: &Arc<Self>,
        session_id: &str,
        cwd: &Path,
        env: &BTreeMap<String, String>,
        approver: &Arc<dyn trust::Approver>,
    ) -> Vec<Binding> {
        let (mut definitions, _) = self.definitions(cwd, env);
        match self.refused(session_id, cwd) {
            Some(refused) => definitions.retain(|definition| !refused.contains(&definition.name)),
            None => definitions.clear(),
        }
        // What a client gave this session: trusted, and replacing a file's server of the same
        // name.
        let given = self.session_servers(session_id);
        definitions.retain(|definition| !given.iter().any(|server| server.name == definition.name));
        definitions.extend(given);
        let mut used = Vec::new();
        for definition in definitions {
            match self.trust.approval(&definition) {
                trust::Approval::UserFile | trust::Approval::Approved => {
                    used.push(self.use_server(session_id, definition, cwd, env));
                }
                trust::Approval::Denied => {}
                trust::Approval::Unanswered => {
                    let pool = Arc::downgrade(self);
                    let (session, start, cwd, env) = (
                        session_id.to_owned(),
                        definition.clone(),
                        cwd.to_path_buf(),
                        env.clone(),
                    );
                    self.trust
                        .ask(approver.clone(), session_id, &definition, move |approved| {
                            if let (true, Some(pool)) = (approved, pool.upgrade()) {
                                pool.use_server(&session, start, &cwd, &env);
                            }
                        });
                }
            }
        }
        // Each server is used by the session under exactly the names it has now; servers it
        // used before but no longer may (disabled since) are released.
        let servers: Vec<Arc<Server>> = self.servers().values().cloned().collect();
        for server in servers {
            let names: BTreeSet<String> = used
                .iter()
                .filter(|binding| Arc::ptr_eq(&binding.server, &server))
                .map(|binding| binding.name.clone())
                .collect();
            if names.is_empty() {
                server.release(session_id);
                continue;
            }
            server.supervision.set_user(session_id, names);
        }
        used
    }

    /// `definition`'s server, now used by `session_id` under the definition's name and
    /// started if it was not.
    fn use_server(
        self: &Arc<Self>,
        session_id: &str,
        definition: ServerDefinition,
        cwd: &Path,
        env: &BTreeMap<String, String>,
    ) -> Binding {
        let name = definition.name.clone();
        let timeout = call_timeout(&definition);
        let server = self.server(definition, cwd, env);
        server.supervision.add_user(session_id, &name);
        server.ensure_started();
        Binding {
            name,
            timeout,
            server,
        }
    }

    fn server(
        &self,
        definition: ServerDefinition,
        cwd: &Path,
        env: &BTreeMap<String, String>,
    ) -> Arc<Server> {
        let key = definition.key(cwd);
        let mut servers = self.servers();
        servers
            .entry(key.clone())
            .or_insert_with(|| {
                let log_path = self
                    .log_dir
                    .join(format!("mcp-{}-{key}.log", definition.name));
                let cached = self.cache.get(&key);
                let state = ServerState {
                    listed: cached.is_some(),
                    tools: cached.unwrap_or_default(),
                    ..ServerState::default()
                };
                Arc::new(Server {
                    key,
                    definition,
                    cwd: cwd.to_path_buf(),
                    env: env.clone(),
                    log_path,
                    progress: ProgressRoutes::default(),
                    starter: Starter {
                        spawner: self.spawner.clone(),
                        cache: self.cache.clone(),
                        trust: self.trust.clone(),
                        first_start_wait: self.first_start_wait,
                    },
                    supervision: Supervision::new(POLICY, &self.pool, self.linger),
                    state: Mutex::new(state),
                })
            })
            .clone()
    }

    /// Session `session_id` stopped: it no longer uses any server. Servers left unused stop
    /// after the linger.
    pub fn session_closed(self: &Arc<Self>, session_id: &str) {
        self.trust.session_closed(session_id);
        let servers: Vec<Arc<Server>> = self.servers().values().cloned().collect();
        for server in servers {
            server.release(session_id);
        }
    }

    /// Stops the servers of `definition` (a project server refused or forgotten: it runs no
    /// more until approved again).
    pub async fn stop_definition(&self, definition: &ServerDefinition) {
        let servers: Vec<Arc<Server>> = self
            .servers()
            .values()
            .filter(|server| {
                server.definition.file == definition.file
                    && server.definition.definition_hash == definition.definition_hash
            })
            .cloned()
            .collect();
        for server in servers {
            server.stop("its approval was withdrawn");
        }
    }

    /// Forgets session `session_id`'s own disabled servers (it was deleted; the store's rows
    /// went with it).
    pub fn forget_session(&self, session_id: &str) {
        self.disabled
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(session_id);
        self.session_servers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(session_id);
    }

    /// Stops every server (daemon shutdown).
    pub async fn shutdown(&self) {
        self.pool.close();
        let servers: Vec<Arc<Server>> = self.servers().values().cloned().collect();
        for server in servers {
            server.stop("the daemon is stopping");
        }
    }

    /// Restarts the servers named `name` (all their definitions): stops them; the next use
    /// starts them again, failures forgotten. Returns how many were restarted.
    pub async fn restart(self: &Arc<Self>, name: &str) -> usize {
        let servers: Vec<Arc<Server>> = self
            .servers()
            .values()
            // Its name, or one a session gives it.
            .filter(|server| server.name() == name || server.supervision.has_name(name))
            .cloned()
            .collect();
        for server in &servers {
            server.stop("restart requested");
            server.supervision.reset_failures();
            // Runs wait for it again, as for a new server, if it never listed its tools.
            server.state().awaited_until = None;
            if server.supervision.is_used() {
                server.ensure_started();
            }
        }
        servers.len()
    }

    /// Every server the daemon has seen, by name then key.
    pub fn list(&self) -> Vec<ServerStatus> {
        let mut list: Vec<ServerStatus> = self
            .servers()
            .values()
            .map(|server| {
                let status = server.supervision.status();
                ServerStatus {
                    name: server.definition.name.clone(),
                    aliases: status
                        .names
                        .into_iter()
                        .filter(|name| *name != server.definition.name)
                        .collect(),
                    key: server.key.clone(),
                    transport: server.definition.transport_name(),
                    state: status.state,
                    pid: status.pid,
                    file: server.definition.file.clone(),
                    tools: server
                        .state()
                        .tools
                        .iter()
                        .map(|tool| tool.name.clone())
                        .collect(),
                    sessions: status.sessions,
                    last_error: status.last_error,
                    log_path: server.log_path.clone(),
                    starts: status.starts,
                }
            })
            .collect();
        list.sort_by(|a, b| (&a.name, &a.key).cmp(&(&b.name, &b.key)));
        list
    }

    /// The servers running now (for `daemon/status`).
    pub fn running_count(&self) -> usize {
        self.servers()
            .values()
            .filter(|server| server.phase() == Phase::Ready)
            .count()
    }
}

/// How long a call to `definition`'s server may take.
fn call_timeout(definition: &ServerDefinition) -> Duration {
    definition
        .timeout_ms
        .map_or(DEFAULT_CALL_TIMEOUT, Duration::from_millis)
}

/// `url` without its user information and query (where tokens hide), for messages.
fn without_secrets(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    let rest = match rest.split_once('/') {
        Some((authority, path)) => {
            let host = authority.rsplit('@').next().unwrap_or(authority);
            format!("{host}/{path}")
        }
        None => rest.rsplit('@').next().unwrap_or(rest).to_owned(),
    };
    if scheme.is_empty() {
        rest
    } else {
        format!("{scheme}://{rest}")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn urls_lose_their_secrets_in_messages() {
        assert_eq!(
            super::without_secrets("https://user:pw@example.com/mcp?token=abc#x"),
            "https://example.com/mcp"
        );
        assert_eq!(
            super::without_secrets("http://127.0.0.1:9/mcp"),
            "http://127.0.0.1:9/mcp"
        );
    }
}
