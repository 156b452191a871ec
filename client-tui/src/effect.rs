//! What `update` asks the runtime to do: one closed enum. The runtime performs effects with
//! `pi-client` (and the terminal, for the clipboard) and reports results back as inputs.

/// One effect.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    /// Call the daemon about the attached session.
    Request(Request),
    /// Attach to another session (detaching from this one).
    Switch(SwitchTo),
    /// Put text on the clipboard (OSC 52).
    Copy(String),
    /// Read the clipboard's image into a file (Ctrl+V); the result comes back as
    /// [`crate::input::Input::ClipboardImage`].
    PasteImage,
    /// Read `keybindings.json` again (`/reload`); the result comes back as
    /// [`crate::input::Input::Keymap`].
    ReloadKeys,
    /// Give the terminal back and stop the process (Ctrl+Z; `fg` resumes it).
    Suspend,
    /// Edit this text in `$VISUAL` or `$EDITOR` on the terminal (Ctrl+G); the result comes
    /// back as [`crate::input::Input::ExternalEdited`].
    ExternalEditor(String),
    /// Set the terminal's title.
    Title(String),
    /// Tell the other clients what the editor holds (coalesced by the runtime).
    Draft(String),
    /// List the working directory's files for `@` completion.
    ListFiles,
    /// Leave the TUI; the session keeps running in the daemon.
    Detach,
    /// Load the theme the choice names (and watch its file).
    LoadTheme(crate::state::ThemeChoice),
    /// Open a login's URL in the desktop's browser, when there is a desktop (macOS, or
    /// `DISPLAY`/`WAYLAND_DISPLAY` set, as `pictl login`); nothing otherwise.
    OpenUrl(String),
}

/// A session to switch to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SwitchTo {
    /// A new session in the working directory, with the current model and level.
    New {
        /// Model spec.
        model: Option<String>,
        /// Thinking level.
        thinking: Option<String>,
    },
    /// An existing session.
    Existing(String),
}

/// A daemon call.
#[derive(Clone, Debug, PartialEq)]
pub enum Request {
    /// `session/prompt` (idle).
    Prompt(Message),
    /// `session/steer` (running, Enter).
    Steer(Message),
    /// `session/followUp` (running, Alt+Enter).
    FollowUp(Message),
    /// `session/abort`.
    Abort,
    /// `session/dequeue`: take the queued messages back into the editor.
    Dequeue,
    /// `session/dequeue`, then `session/abort` (Esc with messages queued: pi restores them).
    DequeueAndAbort,
    /// `session/abortRetry`.
    AbortRetry,
    /// `extensions/shortcut`: a key an extension registered.
    Shortcut(String),
    /// `session/bash` (`!cmd`; `!!cmd` keeps it out of the model's context).
    Bash {
        /// The command line.
        command: String,
        /// `!!`: recorded, never sent to the model.
        exclude_from_context: bool,
    },
    /// `session/beforeSwitch`, then the switch unless the session's extensions object.
    BeforeSwitch(SwitchTo),
    /// `session/setModel`.
    SetModel(String),
    /// `session/setThinking`.
    SetThinking(String),
    /// `session/setPolicy`.
    SetPolicy(String),
    /// Turn plan mode on or off.
    SetPlanMode(bool),
    /// `session/setName`.
    SetName(String),
    /// `session/label` (empty label clears).
    Label {
        /// The entry.
        entry_id: String,
        /// The label.
        label: String,
    },
    /// `session/setName` of another session (from `/resume`), then the list again.
    RenameSession {
        /// The session.
        session_id: String,
        /// Its name.
        name: String,
    },
    /// `session/delete` (from `/resume`), then the list again.
    DeleteSession(String),
    /// `session/label` from the tree dialog, then the tree read again to show it.
    LabelInTree {
        /// The entry.
        entry_id: String,
        /// The label (empty clears).
        label: String,
    },
    /// `session/fork`.
    Fork(String),
    /// `session/navigate`, optionally summarizing the branch left behind.
    Navigate {
        /// The entry to continue from.
        entry_id: String,
        /// Write a branch summary at the new position.
        summarize: bool,
    },
    /// `session/compact` with optional focus instructions.
    Compact(Option<String>),
    /// `session/export` to a file (absolute, or relative to the working directory); `None`:
    /// an HTML file named after the session.
    Export(Option<String>),
    /// `settings/setDefault` of one setting (a dotted key), then the settings read again.
    SaveSetting {
        /// `compaction.enabled`, `theme`, …
        key: String,
        /// The value.
        value: serde_json::Value,
    },
    /// pi's `/clone`: the session copied into a new one, which the TUI moves to.
    Clone,
    /// pi's `/import FILE`: a pi session file copied into a new session, which the TUI
    /// moves to.
    Import(String),
    /// pi's `/share`: the session as HTML in a secret GitHub gist (through `gh`).
    Share,
    /// `session/stats`.
    Stats,
    /// `model/list`.
    ListModels,
    /// `settings/get` for the working directory.
    Settings,
    /// `session/get`, for the session's own slash commands (templates, skills).
    ListCommands,
    /// `session/list` for this working directory.
    ListSessions,
    /// `session/list {parentId}` of this session, and its parent (`/agents`).
    ListAgents {
        /// The session's parent, when it is a subagent.
        parent: Option<String>,
    },
    /// `session/read` of the whole tree.
    ReadTree {
        /// For `/fork`.
        for_fork: bool,
    },
    /// `history/search`.
    SearchHistory(String),
    /// `mcp/list`.
    McpList,
    /// `lsp/list`.
    LspList,
    /// `extensions/list` of the attached session, shown when it arrives (`/extensions`).
    ExtensionsList,
    /// `extensions/restart`.
    ExtensionsRestart,
    /// `job/list` of the attached session and `kernel/list`.
    Pools,
    /// `lsp/restart`.
    LspRestart(String),
    /// `mcp/restart`.
    McpRestart(String),
    /// `mcp/setEnabled` for the attached session.
    McpSetEnabled {
        /// The server.
        name: String,
        /// Use it or not.
        enabled: bool,
    },
    /// `auth/list`: the providers and their logins, for `/login` and `/logout`.
    AuthList,
    /// `auth/login`: answered when the login completed (minutes), its steps coming meanwhile
    /// as `auth/loginEvent` notifications.
    Login {
        /// The provider (`anthropic`, `openai-codex`, `github-copilot`).
        provider: String,
    },
    /// `auth/loginInput`: the answer to a login's prompt.
    LoginInput {
        /// The login.
        login_id: String,
        /// The answer.
        text: String,
    },
    /// `auth/loginCancel` of this login.
    LoginCancel(String),
    /// `auth/logout` of this provider.
    Logout(String),
    /// `auth/setApiKey`: stores an API key for a provider.
    SetApiKey {
        /// The provider.
        provider: String,
        /// The key.
        key: String,
    },
    /// `ui/respond`.
    UiRespond {
        /// The question's session.
        session_id: String,
        /// The question.
        request_id: String,
        /// The answer.
        answer: pi_protocol::v1::UiAnswer,
    },
}

/// A message to send, with images by path (the runtime reads and encodes them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// The text.
    pub text: String,
    /// Image files named in the text.
    pub image_paths: Vec<String>,
    /// Fit the images to what models accept before sending (pi's `images.autoResize`).
    pub fit_images: bool,
}
