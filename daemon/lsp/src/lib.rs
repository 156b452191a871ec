//! Language servers shared by every session: one server per (program, root) for the whole
//! daemon, started by the first session that needs it for a file, used by every session
//! working in that root, stopped after the linger once no session uses it.
//!
//! - `rpc.rs`: JSON-RPC over the server's stdio.
//! - `servers.rs`: which server serves a file, its root and its program.
//! - `tool.rs`: the model's `lsp` tool, and diagnostics after `write` / `edit`.
//!
//! Documents: disk is the truth. A file is opened once per server, whichever session asked;
//! every change a session's `write` or `edit` (or a rename) makes is sent as the whole text
//! with the next version, then saved. Diagnostics are kept per file with the order they
//! arrived in, so "diagnostics newer than my change" needs no version support from the
//! server.
//!
//! Invariants: at most one running connection per key; a server that exits fails its waiting
//! requests at once (naming it) and starts again on the next use, after a backoff that grows
//! with failures in a row (5 in a row: left alone for a minute, or until `lsp/restart`).

pub mod error;
pub mod rpc;
pub mod servers;
pub mod tool;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_encode};
use pi_supervisor::{Child as _, Restart, RestartPolicy, Started, Supervision};
use pi_tools::spawn::Spawner;
use serde_json::{Value, json};
use tokio::sync::watch;

pub use error::LspError;
use rpc::{Connection, Held, Incoming, OutboundLimits, RpcError};

/// A file an edit changed: (path, text before, text after).
pub type FileChange = (PathBuf, String, String);

/// How long starting a server (process and `initialize`) may take.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a request may take.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a server no session uses keeps running, unless `lsp.idleTimeoutMs` says.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(300);
/// How language servers are started and restarted: a start may take [`START_TIMEOUT`]; a
/// server that failed starts again on its next use, once 250 ms (doubled for each failure
/// in a row) have passed; after 5 failures in a row it is left alone for a minute (or
/// `lsp/restart`).
const POLICY: RestartPolicy = RestartPolicy {
    start_timeout: START_TIMEOUT,
    backoff: Duration::from_millis(250),
    max_failures: 5,
    cooldown: Duration::from_secs(60),
    stable_after: None,
    restart: Restart::OnNextUse,
    restart_command: "pictl lsp restart",
};

pub use pi_supervisor::Phase;

/// Diagnostics a server published for one file.
#[derive(Clone, Debug, Default)]
pub struct Published {
    /// The diagnostics, as the server sent them.
    pub items: Vec<Value>,
    /// When they arrived, in the server's arrival order.
    pub seq: u64,
}

/// An open document.
#[derive(Clone, Debug)]
struct Document {
    version: i64,
    // The text last sent (to skip changes that change nothing).
    text: Arc<str>,
}

/// One language server.
#[derive(Debug)]
pub struct LspServer {
    /// Its key: name and root.
    pub key: String,
    /// Its definition's name.
    pub name: String,
    /// The workspace root.
    pub root: PathBuf,
    program: PathBuf,
    args: Vec<String>,
    env: BTreeMap<String, String>,
    initialization_options: Option<Value>,
    // What `workspace/configuration` answers.
    settings: Value,
    /// Its stderr log.
    pub log_path: PathBuf,
    // Its pool, for what starting it takes (the spawner, the limits, the edits it applies).
    pool: Weak<LspPool>,
    supervision: Supervision<Arc<Running>>,
    // Sync mutexes, never held across an await.
    documents: Mutex<HashMap<PathBuf, Document>>,
    diagnostics: Mutex<HashMap<PathBuf, Published>>,
    arrivals: AtomicU64,
    // Bumped whenever diagnostics arrive.
    diagnostics_changed: watch::Sender<u64>,
    // Work-done progress tokens in flight (the project still loading).
    progress: Mutex<BTreeSet<String>>,
    // While a command runs for a code action: the edits the server applies meanwhile.
    recorded: Mutex<Option<(pi_tools::WriteGate, Vec<FileChange>)>>,
    // The diagnostics arrival count when a text was last sent (any file): diagnostics that
    // arrived later reflect every change.
    last_sent: AtomicU64,
}

/// One run of a language server: its connection, what it offers, and its process until its
/// end is awaited.
#[derive(Debug)]
pub struct Running {
    connection: Connection,
    utf8: bool,
    capabilities: Value,
    process: Mutex<Option<tokio::process::Child>>,
}

/// Ends a starting server's process group unless disarmed (a start aborted at its timeout
/// leaves nothing running). Dropped before the process handle, so the leader is unreaped.
struct EndOnDrop(Option<u32>);

impl Drop for EndOnDrop {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            pi_tools::spawn::kill_group(pid);
        }
    }
}

impl LspServer {
    fn running(&self) -> Option<Arc<Running>> {
        self.supervision.running()
    }

    /// That the server is not running, and why (its last error).
    pub fn not_running(&self) -> LspError {
        LspError::NotRunning {
            name: self.name.clone(),
            root: self.root.clone(),
            reason: self
                .supervision
                .last_error()
                .unwrap_or_else(|| "it was stopped".to_owned()),
        }
    }

    /// The connection while ready.
    pub fn connection(&self) -> Option<Connection> {
        self.running().map(|running| running.connection.clone())
    }

    /// Whether positions count UTF-8 bytes (else UTF-16 units).
    pub fn utf8(&self) -> bool {
        self.running().is_some_and(|running| running.utf8)
    }

    /// Whether the server offers `capability` (`renameProvider`, ...).
    pub fn offers(&self, capability: &str) -> bool {
        self.running().is_some_and(|running| {
            !matches!(
                running.capabilities.get(capability),
                None | Some(Value::Null) | Some(Value::Bool(false))
            )
        })
    }

    /// Whether the server's `capability` has `option` set (`codeActionProvider.resolveProvider`).
    pub fn offers_nested(&self, capability: &str, option: &str) -> bool {
        self.running()
            .is_some_and(|running| running.capabilities[capability][option] == true)
    }

    /// Starts recording the edits the server applies (`workspace/applyEdit`), on behalf of a
    /// session whose `gate` says where they may go.
    pub fn record_edits(&self, gate: pi_tools::WriteGate) {
        *self.recorded.lock().unwrap_or_else(PoisonError::into_inner) = Some((gate, Vec::new()));
    }

    /// The edits applied since [`LspServer::record_edits`]: (path, before, after).
    pub fn recorded_edits(&self) -> Vec<(PathBuf, String, String)> {
        self.recorded
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
            .map(|(_, edits)| edits)
            .unwrap_or_default()
    }

    /// Sends a request, naming the server in errors.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, LspError> {
        let Some(connection) = self.connection() else {
            return Err(self.not_running());
        };
        connection
            .request(method, params, REQUEST_TIMEOUT)
            .await
            .map_err(|error| match error {
                RpcError::Closed => LspError::Stopped {
                    name: self.name.clone(),
                    method: method.to_owned(),
                    log: self.log_path.clone(),
                },
                source => LspError::Rpc {
                    name: self.name.clone(),
                    source,
                },
            })
    }

    /// Opens `path` with its text on disk, or sends the new text if it changed since; the
    /// diagnostics arrival count at the moment of sending (newer ones reflect this text).
    pub async fn sync(&self, path: &Path) -> Result<u64, LspError> {
        self.sync_opening(path).await.map(|(after, _)| after)
    }

    /// [`LspServer::sync`], also saying whether the file was opened now (the server may still
    /// be loading the project around it).
    pub async fn sync_opening(&self, path: &Path) -> Result<(u64, bool), LspError> {
        let text = tokio::fs::read_to_string(path)
            .await
            .map_err(|source| LspError::Read {
                path: path.to_path_buf(),
                source,
            })?;
        let Some(connection) = self.connection() else {
            return Err(LspError::Down(self.name.clone()));
        };
        let uri = path_to_uri(path);
        let mut documents = self
            .documents
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let before = self.arrivals.load(Ordering::SeqCst);
        let opened = !documents.contains_key(path);
        match documents.get_mut(path) {
            None => {
                self.last_sent.store(before, Ordering::SeqCst);
                connection.notify(
                    "textDocument/didOpen",
                    json!({"textDocument": {"uri": uri, "languageId": servers::language_id(path),
                        "version": 1, "text": text}}),
                );
                documents.insert(
                    path.to_path_buf(),
                    Document {
                        version: 1,
                        text: text.into(),
                    },
                );
            }
            Some(document) if *document.text == *text => {}
            Some(document) => {
                self.last_sent.store(before, Ordering::SeqCst);
                document.version += 1;
                connection.notify(
                    "textDocument/didChange",
                    json!({"textDocument": {"uri": uri, "version": document.version},
                        "contentChanges": [{"text": text}]}),
                );
                connection.notify(
                    "textDocument/didSave",
                    json!({"textDocument": {"uri": uri}}),
                );
                document.text = text.into();
            }
        }
        Ok((before, opened))
    }

    /// The diagnostics arrival count when a text was last sent to the server.
    pub fn last_sent(&self) -> u64 {
        self.last_sent.load(Ordering::SeqCst)
    }

    /// The files open in this server.
    pub fn open_paths(&self) -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> = self
            .documents
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .keys()
            .cloned()
            .collect();
        paths.sort();
        paths
    }

    /// Closes `path` (it is gone from disk).
    fn close(&self, path: &Path) {
        let was_open = self
            .documents
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(path)
            .is_some();
        if was_open && let Some(connection) = self.connection() {
            connection.notify(
                "textDocument/didClose",
                json!({"textDocument": {"uri": path_to_uri(path)}}),
            );
        }
        self.diagnostics
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(path);
    }

    /// Whether `path` is open in this server.
    pub fn is_open(&self, path: &Path) -> bool {
        self.documents
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(path)
    }

    /// The text last sent for `path`.
    pub fn text_of(&self, path: &Path) -> Option<Arc<str>> {
        self.documents
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(path)
            .map(|document| document.text.clone())
    }

    /// The diagnostics of `path` that arrived after `after`, waiting for them at most
    /// `timeout`; `None` when none arrived in time.
    pub async fn diagnostics_after(
        &self,
        path: &Path,
        after: u64,
        timeout: Duration,
    ) -> Option<Vec<Value>> {
        self.published_after(path, after, timeout)
            .await
            .map(|published| published.items)
    }

    /// [`LspServer::diagnostics_after`] with their arrival number.
    pub async fn published_after(
        &self,
        path: &Path,
        after: u64,
        timeout: Duration,
    ) -> Option<Published> {
        let mut changes = self.diagnostics_changed.subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Some(published) = self.published(path)
                && published.seq > after
            {
                return Some(published);
            }
            if tokio::time::timeout_at(deadline, changes.changed())
                .await
                .is_err()
            {
                return None;
            }
        }
    }

    /// The last diagnostics of `path`.
    pub fn published(&self, path: &Path) -> Option<Published> {
        self.diagnostics
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(path)
            .cloned()
    }

    /// Every file's last diagnostics.
    pub fn all_published(&self) -> Vec<(PathBuf, Published)> {
        let mut all: Vec<(PathBuf, Published)> = self
            .diagnostics
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|(path, published)| (path.clone(), published.clone()))
            .collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    }

    /// Waits (at most `timeout`) until no work-done progress is running (the project loaded).
    pub async fn settled(&self, timeout: Duration) {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut changes = self.diagnostics_changed.subscribe();
        while !self
            .progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
        {
            if tokio::time::timeout_at(deadline, changes.changed())
                .await
                .is_err()
            {
                return;
            }
        }
    }
}

impl LspServer {
    /// Starts it: the process, `initialize`, `initialized`.
    async fn launch(self: Arc<Self>) -> Result<Started<Arc<Running>>, LspError> {
        let pool = self
            .pool
            .upgrade()
            .ok_or_else(|| LspError::Spawner("the daemon is stopping".to_owned()))?;
        let mut command = pool.spawner.server_command(&self.program, &self.args, None);
        command
            .env_clear()
            .envs(&self.env)
            .current_dir(&self.root)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let program = self.program.display().to_string();
        let mut child = pool
            .spawner
            .spawn_on_thread(move || command.spawn())
            .await
            .map_err(|error| LspError::Spawner(error.to_string()))?
            .map_err(|source| LspError::Spawn { program, source })?;
        let pid = child.id();
        // Until it is started, whatever ends this start ends the process too.
        let mut end_on_drop = EndOnDrop(pid);
        let (Some(input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(LspError::Pipes);
        };
        if let Some(stderr) = child.stderr.take() {
            pi_tools::spawn::copy_to_log(stderr, self.log_path.clone());
        }
        let connection = Connection::start(
            input,
            output,
            Arc::new(Handler {
                server: Arc::downgrade(&self),
                pool: Arc::downgrade(&pool),
            }),
            pool.outbound,
        );
        drop(pool);
        let root_uri = path_to_uri(&self.root);
        let initialize = json!({
            "processId": std::process::id(),
            "clientInfo": {"name": "pid", "version": env!("CARGO_PKG_VERSION")},
            "rootUri": root_uri,
            "rootPath": self.root.display().to_string(),
            "workspaceFolders": [{"uri": root_uri, "name": self.root.file_name()
                .map(|name| name.to_string_lossy().into_owned()).unwrap_or_default()}],
            "capabilities": {
                "general": {"positionEncodings": ["utf-8", "utf-16"]},
                "textDocument": {
                    "synchronization": {"didSave": true},
                    "publishDiagnostics": {"versionSupport": true},
                    "definition": {"linkSupport": true},
                    "typeDefinition": {"linkSupport": true},
                    "implementation": {"linkSupport": true},
                    "references": {},
                    "hover": {"contentFormat": ["plaintext", "markdown"]},
                    "documentSymbol": {"hierarchicalDocumentSymbolSupport": true},
                    "rename": {},
                    "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet":
                        ["", "quickfix", "refactor", "refactor.extract", "refactor.inline",
                         "refactor.rewrite", "source", "source.organizeImports", "source.fixAll"]}},
                        "isPreferredSupport": true, "disabledSupport": true, "dataSupport": true,
                        "resolveSupport": {"properties": ["edit"]}},
                },
                "workspace": {"configuration": true, "workspaceFolders": true, "applyEdit": true,
                    "workspaceEdit": {"documentChanges": true}, "symbol": {},
                    "executeCommand": {}, "didChangeWatchedFiles": {"dynamicRegistration": false}},
                "window": {"workDoneProgress": true},
            },
        });
        let mut initialize = initialize;
        if let Some(options) = &self.initialization_options {
            initialize["initializationOptions"] = options.clone();
        }
        // A server that dies or stops reading meanwhile fails the request: its output ends.
        let result = connection
            .request("initialize", initialize, START_TIMEOUT)
            .await
            .map_err(LspError::Initialize)?;
        connection.notify("initialized", json!({}));
        let capabilities = result["capabilities"].clone();
        let utf8 = capabilities["positionEncoding"] == "utf-8";
        end_on_drop.0 = None;
        tracing::info!(server = self.name, root = %self.root.display(), pid, "language server ready");
        Ok(Started {
            running: Arc::new(Running {
                connection,
                utf8,
                capabilities,
                process: Mutex::new(Some(child)),
            }),
            pid,
        })
    }
}

impl pi_supervisor::Child for LspServer {
    type Running = Arc<Running>;
    type Error = LspError;

    fn supervision(&self) -> &Supervision<Arc<Running>> {
        &self.supervision
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn start(self: Arc<Self>) -> pi_supervisor::BoxFuture<Result<Started<Arc<Running>>, LspError>> {
        Box::pin(async move { self.launch().await })
    }

    /// Its process's end, whenever it comes; a server that stops reading its input is ended.
    fn exited(self: Arc<Self>, running: Arc<Running>) -> pi_supervisor::BoxFuture<String> {
        Box::pin(async move {
            let child = running
                .process
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            let Some(mut child) = child else {
                running.connection.closed().await;
                return "its connection closed".to_owned();
            };
            let (status, stuck) =
                pi_tools::spawn::wait_or_end_stuck(&mut child, running.connection.stuck()).await;
            running.connection.closed().await;
            match status {
                _ if stuck => "the server stopped reading its input and was ended".to_owned(),
                Ok(status) => format!("the server exited ({status})"),
                Err(error) => format!("the server's process failed: {error}"),
            }
        })
    }

    fn end(&self, _running: Arc<Running>, pid: Option<u32>) {
        if let Some(pid) = pid {
            pi_tools::spawn::kill_group(pid);
        }
    }

    /// Open documents and progress belong to the process that is gone.
    fn forget(&self) {
        self.documents
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        self.progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}

/// Diagnostics a session's `write` / `edit` reported for a file (or waited for in vain):
/// newer ones go into the session's next tool result.
#[derive(Debug)]
struct Late {
    server: Weak<LspServer>,
    path: PathBuf,
    seq: u64,
    reported: String,
    since: Instant,
}

/// How long late diagnostics are looked for.
const LATE_FOR: Duration = Duration::from_secs(120);

/// What `lsp/list` shows of a server.
#[derive(Clone, Debug)]
pub struct ServerStatus {
    /// Definition name.
    pub name: String,
    /// Workspace root.
    pub root: PathBuf,
    /// `starting`, `ready`, `stopped` or `failed`.
    pub state: &'static str,
    /// The process leading the server's group.
    pub pid: Option<u32>,
    /// Sessions using it.
    pub sessions: Vec<String>,
    /// Files open in it.
    pub open_files: usize,
    /// The last failure.
    pub last_error: Option<String>,
    /// Its stderr log.
    pub log_path: PathBuf,
    /// Starts since the daemon started.
    pub starts: u32,
}

/// Answers what a server asks and keeps what it publishes.
struct Handler {
    server: Weak<LspServer>,
    pool: Weak<LspPool>,
}

impl Incoming for Handler {
    fn notification(&self, method: &str, params: Value) -> Option<Held> {
        let server = self.server.upgrade()?;
        match method {
            "textDocument/publishDiagnostics" => {
                let path = params["uri"].as_str().and_then(uri_to_path)?;
                let seq = server.arrivals.fetch_add(1, Ordering::SeqCst) + 1;
                let items = params["diagnostics"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                server
                    .diagnostics
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(path, Published { items, seq });
                server.diagnostics_changed.send_modify(|count| *count += 1);
            }
            "$/progress" => {
                let token = match &params["token"] {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                };
                let kind = params["value"]["kind"].as_str().unwrap_or_default();
                {
                    let mut progress = server
                        .progress
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner);
                    match kind {
                        "begin" => {
                            progress.insert(token);
                        }
                        "end" => {
                            progress.remove(&token);
                        }
                        _ => {}
                    }
                }
                server.diagnostics_changed.send_modify(|count| *count += 1);
            }
            "window/logMessage" | "window/showMessage" => {
                tracing::debug!(server = server.name, message = %params["message"], "language server says");
            }
            _ => {}
        }
        None
    }

    fn request(
        &self,
        method: &str,
        params: Value,
    ) -> BoxFuture<'static, Result<Value, (i64, String)>> {
        let pool = self.pool.clone();
        let server = self.server.clone();
        let method = method.to_owned();
        Box::pin(async move {
            match method.as_str() {
                "workspace/configuration" => {
                    let settings = server
                        .upgrade()
                        .map(|server| server.settings.clone())
                        .unwrap_or(Value::Null);
                    let answers = params["items"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|item| configuration_section(&settings, item["section"].as_str()))
                        .collect();
                    Ok(Value::Array(answers))
                }
                "window/workDoneProgress/create"
                | "client/registerCapability"
                | "client/unregisterCapability"
                | "window/showMessageRequest"
                | "window/showDocument" => Ok(Value::Null),
                "workspace/workspaceFolders" => {
                    let Some(server) = server.upgrade() else {
                        return Ok(Value::Null);
                    };
                    Ok(json!([{"uri": path_to_uri(&server.root),
                        "name": server.root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()}]))
                }
                "workspace/applyEdit" => {
                    let Some(pool) = pool.upgrade() else {
                        return Ok(
                            json!({"applied": false, "failureReason": "the daemon is stopping"}),
                        );
                    };
                    // On behalf of the session whose code action runs, within where it may
                    // write; with none running, where the server asked.
                    let gate = server.upgrade().and_then(|server| {
                        server
                            .recorded
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .as_ref()
                            .map(|(gate, _)| gate.clone())
                    });
                    match pool
                        .apply_edit(&params["edit"], &gate.unwrap_or_default())
                        .await
                    {
                        Ok(changes) => {
                            if let Some(server) = server.upgrade()
                                && let Some((_, recorded)) = server
                                    .recorded
                                    .lock()
                                    .unwrap_or_else(PoisonError::into_inner)
                                    .as_mut()
                            {
                                recorded.extend(changes);
                            }
                            Ok(json!({"applied": true}))
                        }
                        Err(error) => {
                            Ok(json!({"applied": false, "failureReason": error.to_string()}))
                        }
                    }
                }
                other => Err((-32601, format!("pid does not handle {other}"))),
            }
        })
    }
}

/// Every language server of the daemon.
#[derive(Debug)]
pub struct LspPool {
    // Key → server. A sync mutex, never held across an await.
    servers: Mutex<HashMap<String, Arc<LspServer>>>,
    log_dir: PathBuf,
    linger: Duration,
    spawner: Spawner,
    locks: pi_tools::PathLocks,
    // What a server's input may hold back before the server counts as stuck.
    outbound: OutboundLimits,
    // The servers' change counter (`lsp/changed`) and whether the pool closed.
    pool: pi_supervisor::Pool,
    // Where sessions' settings come from (`lsp.*`).
    settings: std::sync::OnceLock<pi_coding::ResourceRoots>,
    // Per session, diagnostics that may still arrive after its `write` / `edit` result.
    late: Mutex<HashMap<String, Vec<Late>>>,
    // Per directory, the settings files' modification times and sizes, and what they said.
    settings_cache: pi_coding::resources::SettingsCache<pi_coding::Settings>,
}

impl LspPool {
    /// Reads sessions' `lsp.*` settings through `roots`.
    pub fn set_settings_roots(&self, roots: pi_coding::ResourceRoots) {
        let _ = self.settings.set(roots);
    }

    /// The settings of a session in `cwd`, read again only when one of the files changed
    /// (every `lsp` call needs them; reading and parsing the files each time is most of the
    /// daemon's cost of a call).
    fn settings_of(&self, cwd: &Path) -> Arc<pi_coding::Settings> {
        let Some(roots) = self.settings.get() else {
            return Arc::new(pi_coding::Settings::default());
        };
        self.settings_cache
            .get(roots, cwd, || roots.load_settings(Some(cwd)).0)
    }

    /// Whether a session in `cwd` gets diagnostics after `write` and after `edit`.
    pub fn diagnostics_settings(&self, cwd: &Path) -> (bool, bool) {
        let settings = self.settings_of(cwd);
        (
            settings.lsp_diagnostics_on_write,
            settings.lsp_diagnostics_on_edit,
        )
    }

    /// A pool logging servers' stderr into `log_dir`, stopping unused servers after
    /// `linger`, editing files under `locks` (the tools' own).
    pub fn new(
        log_dir: PathBuf,
        linger: Duration,
        spawner: Spawner,
        locks: pi_tools::PathLocks,
    ) -> LspPool {
        LspPool {
            servers: Mutex::new(HashMap::new()),
            log_dir,
            linger,
            spawner,
            locks,
            outbound: OutboundLimits::default(),
            pool: pi_supervisor::Pool::default(),
            settings: std::sync::OnceLock::new(),
            late: Mutex::new(HashMap::new()),
            settings_cache: Default::default(),
        }
    }

    /// The same pool, counting a server stuck past `outbound` (`[limits]
    /// lsp_write_timeout_secs`).
    pub fn with_outbound(mut self, outbound: OutboundLimits) -> LspPool {
        self.outbound = outbound;
        self
    }

    fn servers(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<LspServer>>> {
        self.servers.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Changes of what `list` shows.
    pub fn subscribe_changes(&self) -> watch::Receiver<u64> {
        self.pool.subscribe_changes()
    }

    /// The server for `file` in session `session_id` (in `cwd`, with `env`), ready: started
    /// if needed (waiting for it), now used by the session.
    pub async fn server_for(
        self: &Arc<Self>,
        session_id: &str,
        file: &Path,
        cwd: &Path,
        env: &BTreeMap<String, String>,
    ) -> Result<Arc<LspServer>, LspError> {
        let settings = self.settings_of(cwd);
        let definitions = servers::definitions(&settings.lsp_servers);
        let (definition, root, program) = servers::server_for(file, cwd, env, definitions)?;
        let idle_timeout = settings
            .lsp_idle_timeout_ms
            .map_or(self.linger, Duration::from_millis);
        // Same name and root but another program or configuration (settings changed): another
        // server, and the session leaves the old one. Not the environment: sessions started
        // from different shells differ in it and must still share (the first one's applies).
        let fingerprint = {
            use sha2::Digest as _;
            let described = json!([
                program,
                definition.args,
                definition.initialization_options,
                definition.settings
            ]);
            let digest = sha2::Sha256::digest(described.to_string().as_bytes());
            digest[..4]
                .iter()
                .map(|byte| format!("{byte:02x}"))
                .collect::<String>()
        };
        let base = format!("{}:{}", definition.name, root.display());
        let key = format!("{base}#{fingerprint}");
        let server = {
            let mut servers = self.servers();
            servers
                .entry(key.clone())
                .or_insert_with(|| {
                    let safe: String = root
                        .display()
                        .to_string()
                        .chars()
                        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                        .collect();
                    Arc::new(LspServer {
                        key: key.clone(),
                        name: definition.name.clone(),
                        root: root.clone(),
                        program,
                        args: definition.args.clone(),
                        env: env.clone(),
                        initialization_options: definition.initialization_options.clone(),
                        settings: definition.settings.clone(),
                        log_path: self.log_dir.join(format!(
                            "lsp-{}-{}.log",
                            definition.name,
                            safe.trim_matches('_')
                        )),
                        pool: Arc::downgrade(self),
                        supervision: Supervision::new(POLICY, &self.pool, idle_timeout),
                        documents: Mutex::new(HashMap::new()),
                        diagnostics: Mutex::new(HashMap::new()),
                        arrivals: AtomicU64::new(0),
                        diagnostics_changed: watch::Sender::new(0),
                        progress: Mutex::new(BTreeSet::new()),
                        recorded: Mutex::new(None),
                        last_sent: AtomicU64::new(0),
                    })
                })
                .clone()
        };
        self.release(session_id, |other| {
            other.key != key && other.key.rsplit_once('#').map(|(b, _)| b) == Some(base.as_str())
        });
        server.supervision.set_linger(idle_timeout);
        server.supervision.add_user(session_id, &server.name);
        server.ensure_started();
        if server.supervision.settled().await.is_some() {
            return Ok(server);
        }
        Err(LspError::NotStarted {
            name: server.name.clone(),
            root: server.root.clone(),
            reason: server
                .supervision
                .last_error()
                .unwrap_or_else(|| "it did not start".to_owned()),
        })
    }

    /// The running servers that have `path` open.
    pub fn servers_with(&self, path: &Path) -> Vec<Arc<LspServer>> {
        self.servers()
            .values()
            .filter(|server| server.connection().is_some() && server.is_open(path))
            .cloned()
            .collect()
    }

    /// The running servers session `session_id` uses.
    pub fn servers_of(&self, session_id: &str) -> Vec<Arc<LspServer>> {
        let mut servers: Vec<Arc<LspServer>> = self
            .servers()
            .values()
            .filter(|server| server.supervision.used_by(session_id))
            .cloned()
            .collect();
        servers.sort_by(|a, b| a.key.cmp(&b.key));
        servers
    }

    /// Stops every server (daemon shutdown); none starts any more.
    pub fn shutdown(&self) {
        self.pool.close();
        let servers: Vec<Arc<LspServer>> = self.servers().values().cloned().collect();
        for server in servers {
            server.stop("the daemon is stopping");
        }
    }

    /// Restarts the servers named `name`: stopped now, failures forgotten, started again by
    /// the next use. How many.
    pub fn restart(&self, name: &str) -> usize {
        let servers: Vec<Arc<LspServer>> = self
            .servers()
            .values()
            .filter(|server| server.name == name)
            .cloned()
            .collect();
        for server in &servers {
            server.restart();
        }
        servers.len()
    }

    /// Session `session_id` stopped: servers left unused stop after their idle timeout.
    pub fn session_closed(self: &Arc<Self>, session_id: &str) {
        self.release(session_id, |_| true);
        self.late
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(session_id);
    }

    /// Session `session_id` no longer uses the servers `which` picks: those left unused stop
    /// after their idle timeout.
    fn release(&self, session_id: &str, which: impl Fn(&LspServer) -> bool) {
        let servers: Vec<Arc<LspServer>> = self
            .servers()
            .values()
            .filter(|server| which(server))
            .cloned()
            .collect();
        for server in servers {
            server.release(session_id);
        }
    }

    /// Session `session_id` reported `reported` for `path` from `server` (diagnostics up to
    /// arrival `seq`): newer ones are its next tool result's business.
    pub fn expect_late(
        &self,
        session_id: &str,
        server: &Arc<LspServer>,
        path: &Path,
        seq: u64,
        reported: String,
    ) {
        let mut late = self.late.lock().unwrap_or_else(PoisonError::into_inner);
        let entries = late.entry(session_id.to_owned()).or_default();
        entries
            .retain(|entry| !(entry.path == path && entry.server.ptr_eq(&Arc::downgrade(server))));
        entries.push(Late {
            server: Arc::downgrade(server),
            path: path.to_path_buf(),
            seq,
            reported,
            since: Instant::now(),
        });
    }

    /// Diagnostics that arrived for session `session_id`'s changed files after its tool
    /// results were written and differ from what they said, as a note (paths relative to
    /// `cwd`).
    pub fn late_notes(&self, session_id: &str, cwd: &Path) -> Option<String> {
        let mut notes = Vec::new();
        let mut late = self.late.lock().unwrap_or_else(PoisonError::into_inner);
        let entries = late.get_mut(session_id)?;
        entries.retain(|entry| {
            let Some(server) = entry.server.upgrade() else {
                return false;
            };
            let Some(published) = server.published(&entry.path).filter(|p| p.seq > entry.seq)
            else {
                return entry.since.elapsed() < LATE_FOR;
            };
            let shown = entry
                .path
                .strip_prefix(cwd)
                .map(|relative| relative.display().to_string())
                .unwrap_or_else(|_| entry.path.display().to_string());
            let text = tool::format_diagnostics(&shown, &published.items, 2);
            if text != entry.reported {
                notes.push(if text.is_empty() {
                    format!(
                        "Language server {} now reports no errors or warnings in {shown}.",
                        server.name
                    )
                } else {
                    format!(
                        "Language server {} reports (after the change to {shown}):\n{}",
                        server.name,
                        text.trim_end()
                    )
                });
            }
            false
        });
        if entries.is_empty() {
            late.remove(session_id);
        }
        (!notes.is_empty()).then(|| notes.join("\n"))
    }

    /// A command of session `session_id` ran (`bash`): files open in its servers that changed
    /// on disk are sent again, files gone are closed, and the servers hear of both
    /// (`workspace/didChangeWatchedFiles`).
    pub async fn after_commands(&self, session_id: &str) {
        for server in self.servers_of(session_id) {
            if server.connection().is_none() {
                continue;
            }
            let mut changes = Vec::new();
            for path in server.open_paths() {
                match tokio::fs::read_to_string(&path).await {
                    Ok(text) => {
                        if server.text_of(&path).is_some_and(|sent| *sent != *text)
                            && server.sync(&path).await.is_ok()
                        {
                            changes.push(json!({"uri": path_to_uri(&path), "type": 2}));
                        }
                    }
                    Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                        server.close(&path);
                        changes.push(json!({"uri": path_to_uri(&path), "type": 3}));
                    }
                    Err(_) => {}
                }
            }
            if !changes.is_empty()
                && let Some(connection) = server.connection()
            {
                connection.notify(
                    "workspace/didChangeWatchedFiles",
                    json!({"changes": changes}),
                );
            }
        }
    }

    /// Every server the daemon has seen.
    pub fn list(&self) -> Vec<ServerStatus> {
        let mut list: Vec<ServerStatus> = self
            .servers()
            .values()
            .map(|server| {
                let status = server.supervision.status();
                ServerStatus {
                    name: server.name.clone(),
                    root: server.root.clone(),
                    state: status.state,
                    pid: status.pid,
                    sessions: status.sessions,
                    open_files: server
                        .documents
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .len(),
                    last_error: status.last_error,
                    log_path: server.log_path.clone(),
                    starts: status.starts,
                }
            })
            .collect();
        list.sort_by(|a, b| (&a.name, &a.root).cmp(&(&b.name, &b.root)));
        list
    }

    /// The servers running now.
    pub fn running_count(&self) -> usize {
        self.servers()
            .values()
            .filter(|server| server.supervision.phase() == Phase::Ready)
            .count()
    }

    /// Applies a `WorkspaceEdit` to the files on disk (under the tools' locks) and tells the
    /// servers that have them open; per file, (path, text before, text after). Nothing is
    /// written when `gate` refuses any of the files.
    pub async fn apply_edit(
        &self,
        edit: &Value,
        gate: &pi_tools::WriteGate,
    ) -> Result<Vec<(PathBuf, String, String)>, LspError> {
        let mut per_file: BTreeMap<PathBuf, Vec<Value>> = BTreeMap::new();
        if let Some(changes) = edit["changes"].as_object() {
            for (uri, edits) in changes {
                let path = uri_to_path(uri).ok_or_else(|| LspError::NotFileUri(uri.clone()))?;
                per_file
                    .entry(path)
                    .or_default()
                    .extend(edits.as_array().cloned().unwrap_or_default());
            }
        }
        for change in edit["documentChanges"].as_array().into_iter().flatten() {
            if let Some(kind) = change["kind"].as_str() {
                return Err(LspError::FileOperation(kind.to_owned()));
            }
            let uri = change["textDocument"]["uri"].as_str().unwrap_or_default();
            let path = uri_to_path(uri).ok_or_else(|| LspError::NotFileUri(uri.to_owned()))?;
            per_file
                .entry(path)
                .or_default()
                .extend(change["edits"].as_array().cloned().unwrap_or_default());
        }
        for path in per_file.keys() {
            gate.check(path).map_err(LspError::Sandbox)?;
        }
        let mut done = Vec::new();
        for (path, edits) in per_file {
            let guard = self.locks.lock(&path).await;
            let before =
                tokio::fs::read_to_string(&path)
                    .await
                    .map_err(|source| LspError::Read {
                        path: path.clone(),
                        source,
                    })?;
            let utf8 = self
                .servers_with(&path)
                .first()
                .is_some_and(|server| server.utf8());
            let after = tool::apply_text_edits(&before, &edits, utf8)?;
            let (target, bytes) = (path.clone(), after.clone().into_bytes());
            tokio::task::spawn_blocking(move || pi_tools::write_atomically(&target, &bytes))
                .await
                .map_err(|error| LspError::Spawner(error.to_string()))?
                .map_err(|source| LspError::Write {
                    path: path.clone(),
                    source,
                })?;
            drop(guard);
            for server in self.servers_with(&path) {
                let _ = server.sync(&path).await;
            }
            done.push((path, before, after));
        }
        Ok(done)
    }
}

/// The part of `settings` a `workspace/configuration` item asks for: the whole for no
/// section, else the value at its dotted path (`python.analysis`), `null` when absent.
fn configuration_section(settings: &Value, section: Option<&str>) -> Value {
    let Some(section) = section.filter(|section| !section.is_empty()) else {
        return settings.clone();
    };
    section
        .split('.')
        .try_fold(settings, |value, part| value.get(part))
        .cloned()
        .unwrap_or(Value::Null)
}

/// The bytes a path keeps as they are in a `file://` URI: letters, digits and `-._~/`. Servers
/// compare URIs as strings, so this set never changes.
const URI_PATH_KEEPS: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

/// `path` as a `file://` URI (every other byte percent-encoded, hex in capitals).
pub fn path_to_uri(path: &Path) -> String {
    let encoded = percent_encode(path.as_os_str().as_encoded_bytes(), URI_PATH_KEEPS);
    format!("file://{encoded}")
}

/// A `file://` URI (empty host or `localhost`) as a path.
pub fn uri_to_path(uri: &str) -> Option<PathBuf> {
    url::Url::parse(uri).ok()?.to_file_path().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> Arc<LspServer> {
        Arc::new(LspServer {
            key: "pyright:/p#0".to_owned(),
            name: "pyright".to_owned(),
            root: PathBuf::from("/p"),
            program: PathBuf::from("/bin/true"),
            args: Vec::new(),
            env: BTreeMap::new(),
            initialization_options: None,
            settings: Value::Null,
            log_path: PathBuf::from("/tmp/x.log"),
            pool: Weak::new(),
            supervision: Supervision::new(POLICY, &pi_supervisor::Pool::default(), Duration::ZERO),
            documents: Mutex::new(HashMap::new()),
            diagnostics: Mutex::new(HashMap::new()),
            arrivals: AtomicU64::new(0),
            diagnostics_changed: watch::Sender::new(0),
            progress: Mutex::new(BTreeSet::new()),
            recorded: Mutex::new(None),
            last_sent: AtomicU64::new(0),
        })
    }

    fn publish(server: &LspServer, path: &Path, messages: &[&str]) -> u64 {
        let seq = server.arrivals.fetch_add(1, Ordering::SeqCst) + 1;
        let items = messages
            .iter()
            .map(|message| {
                json!({"range": {"start": {"line": 0, "character": 0}},
                "severity": 1, "message": message})
            })
            .collect();
        server
            .diagnostics
            .lock()
            .unwrap()
            .insert(path.to_path_buf(), Published { items, seq });
        seq
    }

    #[test]
    fn late_diagnostics_go_into_the_next_result_once_and_only_when_they_differ() {
        let pool = LspPool::new(
            PathBuf::from("/tmp"),
            DEFAULT_IDLE_TIMEOUT,
            Spawner::direct(),
            pi_tools::PathLocks::new(),
        );
        let server = server();
        let path = Path::new("/p/a.py");
        let cwd = Path::new("/p");
        // The write waited in vain: nothing yet, nothing to say.
        pool.expect_late("s1", &server, path, 0, String::new());
        assert_eq!(pool.late_notes("s1", cwd), None);
        // They arrive: said once, in the next result.
        publish(&server, path, &["bad type"]);
        assert_eq!(
            pool.late_notes("s1", cwd).as_deref(),
            Some(
                "Language server pyright reports (after the change to a.py):\na.py:1:1 error: bad type"
            )
        );
        assert_eq!(pool.late_notes("s1", cwd), None);
        // The write reported them; a second, identical publication says nothing new, a clean
        // one says so.
        let seq = publish(&server, path, &["bad type"]);
        let reported = tool::format_diagnostics("a.py", &server.published(path).unwrap().items, 2);
        pool.expect_late("s1", &server, path, seq, reported.clone());
        publish(&server, path, &["bad type"]);
        assert_eq!(pool.late_notes("s1", cwd), None);
        pool.expect_late("s1", &server, path, seq + 1, reported);
        publish(&server, path, &[]);
        assert_eq!(
            pool.late_notes("s1", cwd).as_deref(),
            Some("Language server pyright now reports no errors or warnings in a.py.")
        );
        // Another session's expectations are its own.
        pool.expect_late("s2", &server, path, 99, String::new());
        assert_eq!(pool.late_notes("s1", cwd), None);
    }

    #[test]
    fn settings_are_read_again_when_a_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        let pool = LspPool::new(
            dir.path().to_path_buf(),
            DEFAULT_IDLE_TIMEOUT,
            Spawner::direct(),
            pi_tools::PathLocks::new(),
        );
        pool.set_settings_roots(pi_coding::ResourceRoots {
            config_dir: Some(dir.path().join("config")),
            ..pi_coding::ResourceRoots::default()
        });
        let project = dir.path().join("project");
        std::fs::create_dir_all(project.join(".pi")).unwrap();
        assert_eq!(pool.settings_of(&project).lsp_idle_timeout_ms, None);
        let file = project.join(".pi/settings.json");
        std::fs::write(&file, r#"{"lsp": {"idleTimeoutMs": 5}}"#).unwrap();
        assert_eq!(pool.settings_of(&project).lsp_idle_timeout_ms, Some(5));
        // Same size, new content: the modification time tells.
        std::fs::write(&file, r#"{"lsp": {"idleTimeoutMs": 7}}"#).unwrap();
        let later = std::time::SystemTime::now() + Duration::from_secs(2);
        std::fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(later)
            .unwrap();
        assert_eq!(pool.settings_of(&project).lsp_idle_timeout_ms, Some(7));
        std::fs::remove_file(&file).unwrap();
        assert_eq!(pool.settings_of(&project).lsp_idle_timeout_ms, None);
    }

    #[test]
    fn configuration_answers_by_dotted_section() {
        let settings = json!({"python": {"analysis": {"typeCheckingMode": "strict"}}});
        assert_eq!(
            configuration_section(&settings, Some("python.analysis")),
            json!({"typeCheckingMode": "strict"})
        );
        assert_eq!(
            configuration_section(&settings, Some("python.nope")),
            Value::Null
        );
        assert_eq!(configuration_section(&settings, None), settings);
        assert_eq!(configuration_section(&Value::Null, Some("x")), Value::Null);
    }

    #[test]
    fn uris_round_trip() {
        let path = Path::new("/tmp/a dir/ü#x.py");
        let uri = path_to_uri(path);
        assert_eq!(uri, "file:///tmp/a%20dir/%C3%BC%23x.py");
        assert_eq!(uri_to_path(&uri).unwrap(), path);
        assert_eq!(uri_to_path("file:///a/b.ts").unwrap(), Path::new("/a/b.ts"));
        assert_eq!(
            uri_to_path("file://localhost/a/b.ts").unwrap(),
            Path::new("/a/b.ts")
        );
        assert_eq!(
            uri_to_path("file:///a%2Fb/%7e").unwrap(),
            Path::new("/a/b/~")
        );
        assert!(uri_to_path("file://elsewhere/a/b.ts").is_none());
        assert!(uri_to_path("untitled:1").is_none());
    }
}
