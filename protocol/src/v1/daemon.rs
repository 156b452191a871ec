//! `daemon/*`: status and shutdown of the daemon process.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `daemon/status` (none).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DaemonStatusParams {}

/// Response of `daemon/status`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DaemonStatusResponse {
    /// The daemon's package version.
    pub version: String,
    /// The protocol version the daemon speaks.
    pub protocol_version: u32,
    /// Process id of `pid`.
    pub pid: u32,
    /// When the daemon started, Unix milliseconds.
    pub started_at: i64,
    /// Milliseconds since start.
    pub uptime_ms: u64,
    /// Who started the daemon.
    pub supervisor: Supervisor,
    /// Absolute path of the Unix socket.
    pub socket_path: String,
    /// `ws://127.0.0.1:PORT/` when the WebSocket listener is enabled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub websocket_url: Option<String>,
    /// Why the WebSocket listener is not running although enabled (its port was taken, …);
    /// the Unix socket serves regardless.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub websocket_error: Option<String>,
    /// Open client connections (all transports), including the caller's.
    pub connections: u32,
    /// Session counts.
    pub sessions: SessionCounts,
    /// Version of the newest applied database migration.
    pub database_schema_version: i64,
    /// Absolute path of the SQLite database.
    pub database_path: String,
    /// Absolute path of the configuration directory (`config.toml`).
    pub config_dir: String,
    /// Absolute path of the data directory (database, artifacts).
    pub data_dir: String,
    /// Every open client connection, with what waits in its outbound queue (a client that
    /// falls behind shows here before it is dropped as a slow consumer).
    #[serde(default)]
    pub clients: Vec<ConnectionStatus>,
    /// The daemon process's memory, where the platform reports it (Linux).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<ProcessMemory>,
    /// Counters of the database writer.
    #[serde(default)]
    pub store: StoreCounters,
    /// The watched configuration files (`models.json`, `auth.json`, `settings.json`) and
    /// their problems.
    #[serde(default)]
    pub config: ConfigStatus,
    /// The MCP servers shared by the sessions (details: `mcp/list`).
    #[serde(default)]
    pub mcp: McpCounts,
    /// Language servers (see `lsp/list`).
    #[serde(default)]
    pub lsp: LspCounts,
    /// Background jobs and Python kernels (see `job/list`, `kernel/list`).
    #[serde(default)]
    pub pools: crate::v1::PoolCounts,
    /// The extension host (details: `extensions/list`).
    #[serde(default)]
    pub extensions: ExtensionCounts,
    /// The sandbox the user's settings give sessions (a project's settings may tighten it;
    /// `settings/get {cwd}` says what a directory gets).
    #[serde(default)]
    pub sandbox: crate::v1::settings::EffectiveSandbox,
}

/// The extension host in `daemon/status`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionCounts {
    /// The host's state: `starting`, `ready`, `stopped`, `failed` (empty without a host).
    pub host: String,
    /// Its process, while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Sessions whose extensions it loaded.
    pub sessions: u32,
    /// Extensions loaded, over all those sessions.
    pub loaded: u32,
}

/// Language server counts in `daemon/status`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LspCounts {
    /// Servers the daemon has started or been asked for (one per server and root).
    pub servers: u32,
    /// Servers ready now.
    pub running: u32,
}

/// MCP server counts in `daemon/status`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpCounts {
    /// Servers the daemon has started or been asked for (one per definition key).
    pub servers: u32,
    /// Servers ready now.
    pub running: u32,
}

/// The configuration files the daemon watches and reloads on change.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigStatus {
    /// The watched files, absolute (whether or not they exist).
    pub files: Vec<String>,
    /// Reloads since start (each after a debounced burst of changes).
    pub reloads: u64,
    /// When the last reload happened, Unix milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_reload_at: Option<i64>,
    /// Problems in the files now. A file that was good and then failed to load keeps its
    /// last good version, and says so here.
    pub diagnostics: Vec<crate::v1::settings::ResourceDiagnostic>,
    /// Why the files are not watched (changes then need `pictl daemon restart`), when so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch_error: Option<String>,
}

/// Params of `config/changed`: the configuration files changed and were reloaded; the next
/// `session/create`, `session/setModel`, `model/list` and run see the change.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigChangedParams {
    /// The files that changed, absolute.
    pub files: Vec<String>,
    /// Problems in the watched files after the reload (empty: all good).
    pub diagnostics: Vec<crate::v1::settings::ResourceDiagnostic>,
}

/// One open connection in `daemon/status`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionStatus {
    /// The connection's id (as in `initialize`'s response and the logs).
    pub connection_id: String,
    /// The client's `clientInfo.name` (empty before `initialize`).
    pub client: String,
    /// `unix` or `websocket`.
    pub transport: String,
    /// Messages waiting in its outbound queue.
    pub queued_messages: u64,
    /// Bytes waiting in its outbound queue (dropped as a slow consumer past
    /// `limits.outbound_queue_bytes`).
    pub queued_bytes: u64,
}

/// The daemon process's memory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProcessMemory {
    /// Resident memory now, in bytes.
    pub rss_bytes: u64,
    /// The most resident memory since start, in bytes.
    pub peak_rss_bytes: u64,
    /// Bytes the daemon's allocator has handed out now (the live heap; the rest of the
    /// resident memory is code, stacks and what the allocator keeps for reuse), when the
    /// allocator reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap_bytes: Option<u64>,
    /// Bytes of events that all sessions keep for gapless replay (`[limits] recent_bytes`).
    #[serde(default)]
    pub recent_events_bytes: u64,
}

/// Counters of the database's single writer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StoreCounters {
    /// Transactions the writer committed (or tried to).
    pub transactions: u64,
    /// Writes those transactions carried (more writes than transactions: group commits).
    pub writes: u64,
}

/// Who started the daemon process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Supervisor {
    /// A systemd user unit (`INVOCATION_ID` was set).
    Systemd,
    /// A launchd agent (`XPC_SERVICE_NAME` named a launchd job).
    Launchd,
    /// Autostarted by a client (`pi-client`).
    Client,
    /// Started by hand in a terminal or a script.
    Manual,
}

/// Session counts reported by `daemon/status`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionCounts {
    /// Sessions loaded in memory (with an actor).
    pub loaded: u32,
    /// Sessions stored in the database.
    pub stored: u64,
}

/// Params of `daemon/shutdown` (none).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DaemonShutdownParams {}

/// Response of `daemon/shutdown`: sent before the shutdown begins.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DaemonShutdownResponse {
    /// Process id of the daemon that is shutting down; wait for it to exit.
    pub pid: u32,
}
