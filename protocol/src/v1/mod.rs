//! Protocol version 1: the method and notification tables and their payload types, one module
//! per resource.
//!
//! Changes inside v1 are additive only: new methods, new optional fields, new enum variants
//! that old clients can ignore. Regenerate `protocol/schema/` and update `docs/protocol.md` in
//! the same commit.

pub mod artifact;
pub mod auth;
pub mod connection;
pub mod daemon;
pub mod entry;
pub mod event;
pub mod extensions;
pub mod history;
pub mod initialize;
pub mod lsp;
pub mod mcp;
pub mod message;
pub mod model;
pub mod packages;
pub mod plan;
pub mod pool;
pub mod presence;
pub mod rules;
pub mod session;
pub mod settings;
pub mod todo;
pub mod trust;
pub mod ui;
pub mod usage;
pub mod web;

pub use artifact::*;
pub use auth::*;
pub use connection::*;
pub use daemon::*;
pub use entry::*;
pub use event::*;
pub use extensions::*;
pub use history::*;
pub use initialize::*;
pub use lsp::*;
pub use mcp::*;
pub use model::*;
pub use packages::*;
pub use plan::*;
pub use pool::*;
pub use presence::*;
pub use rules::*;
pub use session::*;
pub use settings::*;
pub use todo::*;
pub use trust::*;
pub use ui::*;
pub use usage::*;
pub use web::*;

crate::method_table! {
    /// Opens the connection: negotiates the protocol version. Must be the first request;
    /// nothing else is served before it.
    Initialize = "initialize" (InitializeParams) -> InitializeResponse;
    /// Reports the daemon's version, process, endpoints and counters.
    DaemonStatus = "daemon/status" (DaemonStatusParams) -> DaemonStatusResponse;
    /// Asks the daemon to shut down gracefully. Answered before the shutdown begins.
    DaemonShutdown = "daemon/shutdown" (DaemonShutdownParams) -> DaemonShutdownResponse;
    /// Creates a session in a working directory with the client's environment.
    SessionCreate = "session/create" (SessionCreateParams) -> SessionInfo;
    /// Lists stored sessions, newest activity first, optionally for one working directory.
    SessionList = "session/list" (SessionListParams) -> SessionListResponse;
    /// Returns a session's metadata, tools and queue.
    SessionGet = "session/get" (SessionIdParams) -> SessionGetResponse;
    /// Reads stored entries, of the current branch or the whole tree, a page at a time.
    SessionRead = "session/read" (SessionReadParams) -> SessionReadResponse;
    /// Subscribes this connection to a session's events: returns a snapshot and the durable
    /// events after `afterSeq`, atomically with the subscription (no gap, no duplicate).
    SessionAttach = "session/attach" (SessionAttachParams) -> SessionAttachResponse;
    /// Unsubscribes this connection from a session's events.
    SessionDetach = "session/detach" (SessionIdParams) -> EmptyResponse;
    /// Starts a run with a user message. Returns at once; progress comes as events. Fails
    /// with `busy` while a run is active (use `session/steer` or `session/followUp`).
    SessionPrompt = "session/prompt" (SessionMessageParams) -> SessionPromptResponse;
    /// Queues a message delivered after the running tools finish (remaining calls skipped).
    SessionSteer = "session/steer" (SessionMessageParams) -> EmptyResponse;
    /// Queues a message delivered when the agent would otherwise stop.
    SessionFollowUp = "session/followUp" (SessionMessageParams) -> EmptyResponse;
    /// Aborts the active run (stream and tools), compaction or branch summary, and returns
    /// once the session is idle.
    SessionAbort = "session/abort" (SessionIdParams) -> EmptyResponse;
    /// Cancels a pending automatic retry (the wait before it); the session becomes idle and
    /// `auto_retry_end {success: false, finalError: "Retry cancelled"}` is sent. A no-op when no
    /// retry is pending.
    SessionAbortRetry = "session/abortRetry" (SessionIdParams) -> EmptyResponse;
    /// Switches the session's model (recorded as a `model_change` entry).
    SessionSetModel = "session/setModel" (SessionSetModelParams) -> SessionSetModelResponse;
    /// Sets the thinking level (clamped to the model; recorded as an entry).
    SessionSetThinking = "session/setThinking" (SessionSetThinkingParams) -> SessionSetThinkingResponse;
    /// Names the session (a `session_info` entry).
    SessionSetName = "session/setName" (SessionSetNameParams) -> EmptyResponse;
    /// Sets a session's approval mode (replacing the user settings' `approvals.mode`; the
    /// project's file still applies and may only tighten). Kept while the daemon runs; its
    /// subagents inherit it.
    SessionSetPolicy = "session/setPolicy" (SessionSetPolicyParams) -> SessionSetPolicyResponse;
    /// Supplies secret variables a session lacks since it was loaded again (`missingEnv`):
    /// kept in memory only; other names are ignored.
    SessionSetEnv = "session/setEnv" (SessionSetEnvParams) -> SessionSetEnvResponse;
    /// Gives a session the API key of one provider (pi's `--api-key`): its runs use it before
    /// `auth.json`, the environment and `models.json`. Kept in memory only, like secret
    /// variables; lost when the daemon stops.
    SessionSetApiKey = "session/setApiKey" (SessionSetApiKeyParams) -> EmptyResponse;
    /// Replaces a session's todo list (oh-my-pi's `set_todos`): stored on its branch,
    /// announced with `todos_updated`.
    SessionSetTodos = "session/setTodos" (SessionSetTodosParams) -> EmptyResponse;
    /// Turns oh-my-pi's plan mode on or off for a session (stored on its branch, announced
    /// with `plan_mode_changed`).
    SessionSetPlanMode = "session/setPlanMode" (SessionSetPlanModeParams) -> EmptyResponse;
    /// Labels an entry, or clears its label.
    SessionLabel = "session/label" (SessionLabelParams) -> EmptyResponse;
    /// Creates a new session holding the history before a user message (pi's fork).
    SessionFork = "session/fork" (SessionEntryParams) -> SessionForkResponse;
    /// Asks a session's pi extensions whether a client may leave it for another session
    /// (pi's `session_before_switch`; they may ask its clients first). The session itself
    /// keeps running either way; a client that switches calls this first.
    SessionBeforeSwitch = "session/beforeSwitch" (SessionBeforeSwitchParams) -> SessionBeforeSwitchResponse;
    /// Moves the leaf: the conversation continues from another point of the tree. With
    /// `summarize`, the branch left behind is summarized first (a `branch_summary` entry).
    SessionNavigate = "session/navigate" (SessionNavigateParams) -> SessionNavigateResponse;
    /// Compacts the context now: summarizes the history before the recent messages (a
    /// `compaction` entry). Aborts an active run first; answered when done.
    SessionCompact = "session/compact" (SessionCompactParams) -> SessionCompactResponse;
    /// Deletes a session and everything it stored.
    SessionDelete = "session/delete" (SessionIdParams) -> EmptyResponse;
    /// Message counts, tokens and cost of the current context.
    SessionStats = "session/stats" (SessionIdParams) -> SessionStatsResponse;
    /// Imports a pi session file (JSONL v1-v3) as a new session.
    SessionImport = "session/import" (SessionImportParams) -> SessionInfo;
    /// Exports a session as pi's JSONL v3 or as a self-contained HTML page.
    SessionExport = "session/export" (SessionExportParams) -> SessionExportResponse;
    /// Runs a user shell command (pi's `!cmd`/`!!cmd`) in the session's cwd and environment
    /// and records it as a `bashExecution` message; answers when the command ends.
    SessionBash = "session/bash" (SessionBashParams) -> SessionBashResponse;
    /// Reads a byte range of a session's artifact (`artifact://ID`, e.g. the full output of a
    /// truncated bash command).
    ArtifactRead = "artifact/read" (ArtifactReadParams) -> ArtifactReadResponse;
    /// Lists the models the daemon knows, with whether a key is configured.
    ModelList = "model/list" (ModelListParams) -> ModelListResponse;
    /// Every provider with a subscription login, then the others, with where each one's key
    /// comes from now.
    AuthList = "auth/list" (AuthListParams) -> AuthListResponse;
    /// Logs in to a subscription (pi's `/login`) and stores the tokens in `auth.json`, which
    /// pi reads too; answered when the login completed. Its steps (a URL to open, a question,
    /// progress) come as `auth/loginEvent` to this client; answers go back with
    /// `auth/loginInput`.
    AuthLogin = "auth/login" (AuthLoginParams) -> AuthLoginResponse;
    /// Answers the question of a login in progress (a pasted code, a domain).
    AuthLoginInput = "auth/loginInput" (AuthLoginInputParams) -> EmptyResponse;
    /// Cancels a login in progress; its `auth/login` fails as cancelled.
    AuthLoginCancel = "auth/loginCancel" (AuthLoginCancelParams) -> EmptyResponse;
    /// Removes a provider's login or key from every `auth.json` that has one (pi's
    /// `/logout`).
    AuthLogout = "auth/logout" (AuthLogoutParams) -> AuthLogoutResponse;
    /// Stores an API key for a provider in `auth.json` (0600, under pi's file lock).
    AuthSetApiKey = "auth/setApiKey" (AuthSetApiKeyParams) -> AuthSetApiKeyResponse;
    /// Reports this client's editor draft to the other clients attached to the session.
    SessionSetDraft = "session/setDraft" (SessionSetDraftParams) -> EmptyResponse;
    /// Takes every queued steering and follow-up message out of the queues (to edit them
    /// again) and returns their texts.
    SessionDequeue = "session/dequeue" (SessionIdParams) -> QueueState;
    /// Searches the prompt history shared by all clients, newest first.
    HistorySearch = "history/search" (HistorySearchParams) -> HistorySearchResponse;
    /// Returns the effective settings (pi's `settings.json` layers) for a working directory,
    /// with the problems found in the files.
    SettingsGet = "settings/get" (SettingsGetParams) -> SettingsGetResponse;
    /// Changes the global defaults: writes the daemon's own `settings.json` (never pi's or a
    /// project's), atomically, and returns the new effective global settings.
    SettingsSetDefault = "settings/setDefault" (SettingsSetDefaultParams) -> SettingsGetResponse;
    /// Says which of oh-my-pi's stream rules (a rule file, or the project's) would fire on a
    /// piece of a reply, and whether each would interrupt it.
    RulesTest = "rules/test" (RulesTestParams) -> RulesTestResponse;
    /// Tokens and cost of stored assistant messages, by model and by UTC day.
    UsageStats = "usage/stats" (UsageStatsParams) -> UsageStatsResponse;
    /// Makes a one-time login link for the web UI (`pictl web`): the code in it is good for
    /// one visit within two minutes and gets the browser a session cookie; answered on the
    /// Unix socket only.
    WebLogin = "web/login" (WebLoginParams) -> WebLoginResponse;
    /// Logs every browser out of the web UI (a new key signs cookies from now on); answered
    /// on the Unix socket only.
    WebRevoke = "web/revoke" (WebRevokeParams) -> EmptyResponse;
    /// Asks the clients attached to a session a question (select, confirm, input, editor)
    /// and waits for the first answer (or the timeout: a cancelled answer).
    UiAsk = "ui/ask" (UiAskParams) -> UiAskResponse;
    /// Answers a `ui/request`; the first answer wins.
    UiRespond = "ui/respond" (UiRespondParams) -> UiRespondResponse;
    /// Lists the MCP servers the daemon runs for its sessions (one per definition, shared),
    /// and with `cwd` the definitions a session there sees.
    McpList = "mcp/list" (McpListParams) -> McpListResponse;
    /// Restarts an MCP server by name (failures forgotten); sessions using it get it back.
    McpRestart = "mcp/restart" (McpRestartParams) -> McpRestartResponse;
    /// The last lines of an MCP server's stderr log, by name.
    McpLogs = "mcp/logs" (McpLogsParams) -> McpLogsResponse;
    /// Approves, refuses or forgets a server a project file defines (what a session's
    /// clients are asked), for scripts.
    McpTrust = "mcp/trust" (McpTrustParams) -> McpTrustResponse;
    /// Turns an MCP server off (or on again) for one session; its next run follows.
    McpSetEnabled = "mcp/setEnabled" (McpSetEnabledParams) -> McpSetEnabledResponse;
    /// Gives one session MCP servers of its own (an editor's ACP `mcpServers`), trusted,
    /// replacing those given before; kept while the daemon runs.
    McpSetSessionServers = "mcp/setSessionServers" (McpSetSessionServersParams) -> McpSetSessionServersResponse;
    /// Lists the language servers (one per server and workspace root, shared by sessions).
    LspList = "lsp/list" (LspListParams) -> LspListResponse;
    /// Restarts the language servers of a name (failures forgotten); the next use starts them.
    LspRestart = "lsp/restart" (LspRestartParams) -> LspRestartResponse;
    /// The last lines of a language server's stderr log, by name (and root).
    LspLogs = "lsp/logs" (LspLogsParams) -> LspLogsResponse;
    /// Lists background jobs (`bash` with `background: true`), also those a daemon restart
    /// lost.
    JobList = "job/list" (JobListParams) -> JobListResponse;
    /// Kills a session's job, or all of its running jobs (their whole process groups).
    JobKill = "job/kill" (JobKillParams) -> JobKillResponse;
    /// Lists the live Python kernels (the `python` tool), least recently used first.
    KernelList = "kernel/list" (KernelListParams) -> KernelListResponse;
    /// The extension host and each session's pi extensions: what loaded, what failed, what
    /// waits for an approval.
    ExtensionsList = "extensions/list" (ExtensionsListParams) -> ExtensionsListResponse;
    /// Ends the extension host (failures forgotten); the next use starts it again and
    /// sessions load their extensions anew.
    ExtensionsRestart = "extensions/restart" (ExtensionsRestartParams) -> ExtensionsRestartResponse;
    /// Approves, refuses or forgets the extensions a project brings (project extensions load
    /// only once approved); sessions that skipped approved ones load them now.
    ExtensionsTrust = "extensions/trust" (ExtensionsTrustParams) -> ExtensionsTrustResponse;
    /// Runs the handler of a keyboard shortcut the session's pi extensions registered
    /// (`pi.registerShortcut`; `session/get` lists them); answered when it ended.
    ExtensionsShortcut = "extensions/shortcut" (ExtensionsShortcutParams) -> ExtensionsShortcutResponse;
    /// Installs a pi package and adds it to the user's (or the project's) settings, as
    /// `pi install`; `packages/progress` reports its steps to the caller.
    PackagesInstall = "packages/install" (PackagesInstallParams) -> PackagesInstallResponse;
    /// Uninstalls a pi package and removes it from settings, as `pi remove`.
    PackagesRemove = "packages/remove" (PackagesRemoveParams) -> PackagesRemoveResponse;
    /// Updates one pi package, or every one not pinned, as `pi update --extensions`.
    PackagesUpdate = "packages/update" (PackagesUpdateParams) -> PackagesUpdateResponse;
    /// The pi packages the user's and the project's settings name, as `pi list`.
    PackagesList = "packages/list" (PackagesListParams) -> PackagesListResponse;
}

crate::notification_table! {
    /// A question for the people watching a session (see `ui/ask`); re-sent to clients that
    /// attach while it is pending.
    UiRequestNotification = "ui/request" (DaemonToClient, UiRequestParams);
    /// A `ui/request` was answered (by anyone), timed out or was withdrawn: close its dialog.
    UiResolvedNotification = "ui/resolved" (DaemonToClient, UiResolvedParams);
    /// Sent by the daemon right before it closes a connection on its own initiative, with the
    /// reason. Best effort: a connection closed for being too slow may not receive it.
    ConnectionClosing = "connection/closing" (DaemonToClient, ConnectionClosingParams);
    /// What a session's extensions show outside dialogs: notices, status texts, widgets, a
    /// title, editor text; sent to the session's attached clients.
    ExtensionUiNotification = "extension/ui" (DaemonToClient, ExtensionUiParams);
    /// An event of an attached session.
    SessionEventNotification = "session/event" (DaemonToClient, SessionEventParams);
    /// The clients attached to a session and their drafts changed.
    SessionPresence = "session/presence" (DaemonToClient, SessionPresenceParams);
    /// The configuration files (`models.json`, `auth.json`, `settings.json`) changed and were
    /// reloaded; sent to every connection. A bad edit keeps the file's last good version and
    /// comes with a diagnostic.
    ConfigChanged = "config/changed" (DaemonToClient, ConfigChangedParams);
    /// An MCP server started, became ready, stopped or failed, changed its tools, or its
    /// sessions changed; sent to every connection with every server's status (as `mcp/list`).
    McpChanged = "mcp/changed" (DaemonToClient, McpChangedParams);
    /// A language server started, became ready, stopped or failed, or its sessions changed;
    /// sent to every connection with every server's status (as `lsp/list`).
    LspChanged = "lsp/changed" (DaemonToClient, LspChangedParams);
    /// A step of an `auth/login` (a URL to open, a question, progress), sent to the client
    /// that started it.
    AuthLoginEvent = "auth/loginEvent" (DaemonToClient, AuthLoginEventParams);
    /// A step of a `packages/install`, `packages/remove` or `packages/update`, sent to the
    /// client that asked.
    PackagesProgress = "packages/progress" (DaemonToClient, PackagesProgressParams);
}
