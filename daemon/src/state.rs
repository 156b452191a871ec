//! What every connection and task of the daemon shares: paths, configuration, the store, the
//! shutdown signal and content-free counters.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use pi_paths::Paths;
use pi_protocol::v1::Supervisor;
use pi_tools::Artifacts;
use tokio_util::sync::CancellationToken;

use crate::clients::{Clients, ConnectionGuard};
use crate::config::Config;
use crate::outbound::ConnectionSink;
use crate::session::{SessionRegistry, SessionServices};
use crate::store::Store;
use crate::tools::UserShells;

/// Daemon-wide state, shared behind an `Arc`.
#[derive(Debug)]
pub struct DaemonState {
    /// Resolved directories and files.
    pub paths: Paths,
    /// The loaded `config.toml`.
    pub config: Config,
    /// The database.
    pub store: Store,
    /// Agent sessions (and the questions for the people watching them).
    pub sessions: std::sync::Arc<SessionRegistry>,
    /// Stored tool output (`<data dir>/artifacts`), read by `artifact/read`.
    pub artifacts: Artifacts,
    /// Running `session/bash` commands, for `session/abort`.
    pub user_shells: UserShells,
    /// The watched configuration files and their problems (`config_watch`).
    pub config_files: Arc<crate::config_watch::ConfigFiles>,
    /// The MCP servers every session shares (none in-process unless a test sets one).
    pub mcp: Option<std::sync::Arc<crate::mcp::McpPool>>,
    /// The language servers every session shares (none in-process unless a test sets one).
    pub lsp: Option<std::sync::Arc<crate::lsp::LspPool>>,
    /// The approvals of every session (none in-process unless a test sets one).
    pub policy: Option<std::sync::Arc<crate::policy::PolicyManager>>,
    /// Background jobs (none in-process unless a test sets one).
    pub jobs: Option<std::sync::Arc<crate::jobs::JobPool>>,
    /// Python kernels (none in-process unless a test sets one).
    pub kernels: Option<std::sync::Arc<crate::kernels::KernelPool>>,
    /// The extension host (none in-process unless a test sets one).
    pub extensions: Option<std::sync::Arc<crate::extensions::ExtensionHost>>,
    /// The user's answers about project extensions (kept in memory unless the daemon
    /// attached the store).
    pub extension_trust: Arc<crate::extension_host::ExtensionTrust>,
    /// Starts the processes of user shell commands (the daemon's guard in `pid`).
    pub spawner: pi_tools::spawn::Spawner,
    /// Who started this process.
    pub supervisor: Supervisor,
    /// Cancelled once to begin shutdown (signal or `daemon/shutdown`); listeners stop
    /// accepting, connections drain and close. Never reset.
    pub shutdown: CancellationToken,
    /// Unix milliseconds at start.
    pub started_at: i64,
    started: Instant,
    // Invariant: set once, when the WebSocket listener is bound.
    websocket_url: OnceLock<String>,
    // Set once, when the WebSocket listener could not start: why.
    websocket_error: OnceLock<String>,
    /// The open connections.
    pub clients: Arc<Clients>,
    /// Subscription logins and API keys (`auth/*`; none in-process unless a test sets one).
    pub accounts: Option<Arc<crate::accounts::Accounts>>,
    /// The web UI's login codes and cookies (`web/login`, the listener's `/login`).
    pub web_auth: crate::web_auth::WebAuth,
    /// Reads the bytes the allocator has handed out (`pid`'s jemalloc; `None` in tests).
    pub heap_bytes: Option<fn() -> Option<u64>>,
}

impl DaemonState {
    /// Builds the state at startup.
    pub fn new(
        paths: Paths,
        config: Config,
        store: Store,
        supervisor: Supervisor,
        services: SessionServices,
    ) -> Self {
        let artifacts = Artifacts::new(paths.artifacts_dir());
        DaemonState {
            paths,
            config,
            sessions: SessionRegistry::new(
                store.clone(),
                services,
                std::sync::Arc::new(crate::frame::JsonRpcEncoders),
            ),
            artifacts,
            user_shells: UserShells::default(),
            config_files: Arc::default(),
            mcp: None,
            lsp: None,
            jobs: None,
            kernels: None,
            extensions: None,
            extension_trust: Arc::default(),
            policy: None,
            store,
            spawner: pi_tools::spawn::Spawner::direct(),
            supervisor,
            shutdown: CancellationToken::new(),
            started_at: pi_util::time::now_millis(),
            started: Instant::now(),
            websocket_url: OnceLock::new(),
            websocket_error: OnceLock::new(),
            clients: Arc::default(),
            accounts: None,
            web_auth: crate::web_auth::WebAuth::default(),
            heap_bytes: None,
        }
    }

    /// Milliseconds since start.
    pub fn uptime_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// The WebSocket URL once the listener is bound.
    pub fn websocket_url(&self) -> Option<&str> {
        self.websocket_url.get().map(String::as_str)
    }

    /// Why the WebSocket listener is not running although enabled, if it could not start.
    pub fn websocket_error(&self) -> Option<&str> {
        self.websocket_error.get().map(String::as_str)
    }

    /// Records why the WebSocket listener could not start.
    pub fn set_websocket_error(&self, error: String) {
        let _ = self.websocket_error.set(error);
    }

    /// Records the WebSocket URL; called once by the listener.
    pub fn set_websocket_url(&self, url: String) {
        let _ = self.websocket_url.set(url);
    }

    /// Open connections right now.
    pub fn connection_count(&self) -> u32 {
        self.clients.count()
    }

    /// The open connections' sinks and transports, in id order.
    pub fn clients(&self) -> Vec<(ConnectionSink, &'static str)> {
        self.clients.list()
    }

    /// Registers a new connection; the guard unregisters it when dropped.
    pub fn open_connection(&self) -> ConnectionGuard {
        self.clients.open()
    }
}
