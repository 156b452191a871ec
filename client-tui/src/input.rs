//! What can wake the TUI up: one closed enum, fed to [`crate::update::update`] by the runtime.
//! Keys, pastes and ticks carry the time (ms since start) so `update` never reads a clock.

use crossterm::event::KeyEvent;
use pi_protocol::v1::{
    ConfigChangedParams, EntryRecord, HistoryEntry, ModelInfo, QueueState, SessionAttachResponse,
    SessionEventParams, SessionForkResponse, SessionInfo, SessionNavigateResponse,
    SessionPresenceParams, SessionStatsResponse,
};

/// One input.
#[derive(Clone, Debug)]
pub enum Input {
    /// The clipboard's image was written to this file (Ctrl+V), or there was none
    /// (`Ok(None)`), or it could not be read (`Err`).
    ClipboardImage(Result<Option<std::path::PathBuf>, String>),
    /// `keybindings.json` read again (`/reload`): the keys and what is wrong in the file.
    Keymap {
        /// The keys in effect.
        keymap: crate::keymap::Keymap,
        /// Unknown ids and keys, conflicts.
        warnings: Vec<String>,
    },
    /// The external editor closed (Ctrl+G): the text saved, or why there is none (`Err`
    /// with a message; `Ok(None)`: it exited with a failure, the text stays).
    ExternalEdited(Result<Option<String>, String>),
    /// A key press.
    Key {
        /// The key.
        event: KeyEvent,
        /// Ms since the TUI started.
        now_ms: u64,
    },
    /// Bracketed paste.
    Paste(String),
    /// The mouse wheel turned: positive scrolls up (back in the transcript), in lines.
    Wheel(isize),
    /// The terminal's size (columns, rows).
    Resize(u16, u16),
    /// A timer tick (animations); ms since start.
    Tick(u64),
    /// A theme was loaded (asked for, or its file changed); `problem` says why it is not the
    /// one asked for, or why the file's new version is not used.
    Theme {
        /// The theme to show.
        theme: std::sync::Arc<crate::theme::Theme>,
        /// What went wrong, if anything.
        problem: Option<String>,
    },
    /// Attached (first time, after a reconnect, or to another session).
    Attached(Box<Attachment>),
    /// A session event.
    Event(Box<SessionEventParams>),
    /// Who is attached and what they type.
    Presence(SessionPresenceParams),
    /// The daemon reloaded its configuration files (`config/changed`).
    ConfigChanged(ConfigChangedParams),
    /// The MCP servers changed (`mcp/changed`).
    McpChanged(pi_protocol::v1::McpChangedParams),
    /// The language servers changed (`lsp/changed`).
    LspChanged(pi_protocol::v1::LspChangedParams),
    /// A question for the people watching the session (`ui/request`).
    UiRequest(pi_protocol::v1::UiRequestParams),
    /// A question was answered (here or elsewhere) or withdrawn (`ui/resolved`).
    UiResolved(pi_protocol::v1::UiResolvedParams),
    /// What a session's extensions show (`extension/ui`).
    ExtensionUi(pi_protocol::v1::ExtensionUiParams),
    /// A step of a login this client started (`auth/loginEvent`).
    LoginEvent(pi_protocol::v1::AuthLoginEventParams),
    /// The connection dropped; the runtime reconnects.
    Disconnected {
        /// Why, when known.
        reason: Option<String>,
    },
    /// Connected again without attaching: no session was attached, or it is gone.
    Reconnected {
        /// This connection's id.
        connection_id: String,
        /// Why the session could not be attached again, if it could not.
        problem: Option<String>,
    },
    /// Another reconnection attempt failed.
    ReconnectFailed {
        /// Attempts so far.
        attempt: u32,
    },
    /// A request finished.
    Reply(Reply),
    /// Files of the working directory for `@` completion.
    Files(Vec<String>),
}

/// The result of attaching.
#[derive(Clone, Debug)]
pub struct Attachment {
    /// This connection's id.
    pub connection_id: String,
    /// Snapshot and replay.
    pub response: SessionAttachResponse,
    /// The branch's stored entries (seq ≤ the snapshot's), when the transcript is rebuilt
    /// from scratch; `None` when `response.replay` continues what the TUI shows.
    pub history: Option<Vec<EntryRecord>>,
}

/// Results of requests that `update` asked for.
#[derive(Clone, Debug)]
pub enum Reply {
    /// `model/list`.
    Models(Vec<ModelInfo>),
    /// The session's extensions let the client leave it: switch now.
    Switch(crate::effect::SwitchTo),
    /// A setting was saved (`/settings`) in this file.
    SettingSaved {
        /// The setting.
        key: String,
        /// The file written.
        file: String,
    },
    /// A new session to move to (`/clone`, `/import`), and what to say once there.
    Opened {
        /// The new session.
        session_id: String,
        /// The status line after the move.
        status: String,
    },
    /// What `session/get` tells: the session's own slash commands, its extensions'
    /// shortcuts, and what it loaded (for the startup header).
    Commands(Box<pi_protocol::v1::SessionGetResponse>),
    /// The effective settings of the working directory (`settings/get`), after the daemon
    /// reloaded its configuration.
    Settings(Box<pi_protocol::v1::EffectiveSettings>),
    /// `session/list` for the picker.
    Sessions(Vec<SessionInfo>),
    /// For `/agents`: the session's parent (when it is a subagent) and its subagents.
    Agents {
        /// The session whose `task` call started this one.
        parent: Option<Box<SessionInfo>>,
        /// The subagents this session's `task` calls started, newest first.
        children: Vec<SessionInfo>,
    },
    /// `session/read` of the whole tree, for `/tree` and `/fork`.
    Tree {
        /// Entries in creation order.
        entries: Vec<EntryRecord>,
        /// The leaf.
        leaf_id: Option<String>,
        /// For `/fork` (user messages only) rather than `/tree`.
        for_fork: bool,
    },
    /// `session/stats`.
    Stats(SessionStatsResponse),
    /// `mcp/list`: every MCP server.
    McpServers(Vec<pi_protocol::v1::McpServerStatus>),
    /// `lsp/list`: every language server.
    LspServers(Vec<pi_protocol::v1::LspServerStatus>),
    /// `extensions/list` of the attached session.
    Extensions(pi_protocol::v1::ExtensionsListResponse),
    /// The attached session's jobs and the daemon's kernels.
    Pools {
        /// `job/list` of the session.
        jobs: Vec<pi_protocol::v1::JobInfo>,
        /// `kernel/list`.
        kernels: Vec<pi_protocol::v1::KernelInfo>,
    },
    /// `history/search`.
    History {
        /// The query searched (empty: the newest prompts).
        query: String,
        /// Prompts, newest first.
        entries: Vec<HistoryEntry>,
    },
    /// `session/navigate`.
    Navigated(SessionNavigateResponse),
    /// `session/fork`.
    Forked(Box<SessionForkResponse>),
    /// `auth/list`: every provider and where its key comes from.
    AuthProviders(Vec<pi_protocol::v1::AuthProviderStatus>),
    /// `auth/login` completed: the tokens are stored.
    LoggedIn {
        /// The provider logged in to.
        provider: String,
        /// The `auth.json` holding its tokens.
        path: String,
    },
    /// `auth/login` failed or was cancelled.
    LoginFailed {
        /// The provider.
        provider: String,
        /// The daemon's (or the connection's) message.
        message: String,
        /// Cancelled (`auth/loginCancel`) rather than failed.
        cancelled: bool,
    },
    /// `auth/logout`.
    LoggedOut {
        /// The provider.
        provider: String,
        /// The `auth.json` files its login or key was removed from (empty: there was none).
        removed: Vec<String>,
    },
    /// A request succeeded; show this sentence.
    Done(String),
    /// A request succeeded with warnings for the user (a custom model id, ...).
    Warnings(Vec<String>),
    /// Queued messages taken back (`session/dequeue`).
    Dequeued(QueueState),
    /// A `!command` finished (its output arrives as a `bashExecution` message).
    BashFinished,
    /// A request failed.
    Failed {
        /// What was attempted (`set the model`).
        action: String,
        /// The daemon's or the system's message.
        message: String,
    },
}
