//! What every connection and task of the daemon shares: paths, configuration, the store, the
//! shutdown signal and content-free counters.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use pi_paths::Paths;
use pi_protocol::v1::Supervisor;
use pi_tools::Artifacts;
use tokio_util::sync::CancellationToken;

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
    /// Agent sessions.
    pub sessions: SessionRegistry,
    /// Stored tool output (`<data dir>/artifacts`), read by `artifact/read`.
    pub artifacts: Artifacts,
    /// Running `session/bash` commands, for `session/abort`.
    pub user_shells: UserShells,
    /// Questions for the people watching sessions (`ui/*`).
    pub ui: crate::ui::UiBroker,
    /// The watched configuration files and their problems (`config_watch`).
    pub config_files: crate::config_watch::ConfigFiles,
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
    // Open connections; incremented and decremented only by `ConnectionGuard`.
    connections: AtomicU32,
    // The outbound sinks of open connections by id, for `daemon/status`; entries are added by
    // `ConnectionGuard::register` and removed when the guard drops. A sync mutex, never held
    // across an await.
    clients: Mutex<BTreeMap<String, (ConnectionSink, &'static str)>>,
    next_connection_id: AtomicU64,
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
            ui: crate::ui::UiBroker::default(),
            config_files: crate::config_watch::ConfigFiles::default(),
            mcp: None,
            lsp: None,
            jobs: None,
            kernels: None,
            policy: None,
            store,
            spawner: pi_tools::spawn::Spawner::direct(),
            supervisor,
            shutdown: CancellationToken::new(),
            started_at: pi_util::time::now_millis(),
            started: Instant::now(),
            websocket_url: OnceLock::new(),
            connections: AtomicU32::new(0),
            clients: Mutex::new(BTreeMap::new()),
            next_connection_id: AtomicU64::new(1),
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

    /// Records the WebSocket URL; called once by the listener.
    pub fn set_websocket_url(&self, url: String) {
        let _ = self.websocket_url.set(url);
    }

    /// Open connections right now.
    pub fn connection_count(&self) -> u32 {
        self.connections.load(Ordering::Relaxed)
    }

    /// The open connections' sinks and transports, in id order.
    pub fn clients(&self) -> Vec<(ConnectionSink, &'static str)> {
        self.clients
            .lock()
            .map(|clients| clients.values().cloned().collect())
            .unwrap_or_default()
    }

    /// Registers a new connection; the guard unregisters it when dropped.
    pub fn open_connection(self: &std::sync::Arc<Self>) -> ConnectionGuard {
        self.connections.fetch_add(1, Ordering::Relaxed);
        let id = self.next_connection_id.fetch_add(1, Ordering::Relaxed);
        ConnectionGuard {
            state: self.clone(),
            id: format!("c{id}"),
        }
    }
}

/// Keeps a connection counted; dropping it uncounts it.
#[derive(Debug)]
pub struct ConnectionGuard {
    state: std::sync::Arc<DaemonState>,
    /// The connection's id, `c1`, `c2`, ... in start order.
    pub id: String,
}

impl ConnectionGuard {
    /// Lists the connection's outbound sink (and transport name) in `daemon/status`.
    pub fn register(&self, sink: ConnectionSink, transport: &'static str) {
        if let Ok(mut clients) = self.state.clients.lock() {
            clients.insert(self.id.clone(), (sink, transport));
        }
    }
}

impl Drop for ConnectionGuard {
    fn drop(&mut self) {
        if let Ok(mut clients) = self.state.clients.lock() {
            clients.remove(&self.id);
        }
        self.state.connections.fetch_sub(1, Ordering::Relaxed);
    }
}
