//! Everything the TUI shows, as plain data: the session, its transcript, the editor, the
//! overlays and the connection. [`crate::update::update`] is the only writer; rendering only
//! reads it.

use pi_protocol::v1::message::StopReason;
use pi_protocol::v1::{AttachedClient, ModelInfo, QueueState, SessionInfo, SlashCommand};

use crate::editor::Editor;
use crate::keymap::Keymap;
use crate::overlay::{Completion, Overlay};
use crate::transcript::Transcript;

/// Thinking levels in cycling order.
pub const THINKING_LEVELS: &[&str] = &["off", "minimal", "low", "medium", "high", "xhigh"];

/// The id the session picker gives one of pi's session files not opened in the daemon yet;
/// choosing it opens the file (`session/import {link}`).
pub const PI_FILE_PREFIX: &str = "pi-file:";

/// Facts about the terminal's surroundings, found once by the runtime.
#[derive(Clone, Debug, Default)]
pub struct Environment {
    /// The working directory, as shown (`~` for the home directory).
    pub cwd_display: String,
    /// The git branch of the working directory, if any.
    pub git_branch: Option<String>,
    /// This connection's id (`initialize`), to tell our presence from others'.
    pub connection_id: String,
    /// pi's `--verbose`: the startup header in full whatever `quietStartup` says.
    pub verbose: bool,
    /// The home directory (paths under it are shown with `~`); empty when unknown.
    pub home: String,
    /// pi's `--theme` paths (theme files or directories, absolute).
    pub theme_paths: Vec<String>,
    /// pi's `--no-themes`: no theme discovery (only `--theme`'s and the built-ins).
    pub no_themes: bool,
    /// The terminal's graphics protocol, if it has one the TUI speaks.
    pub graphics: Option<Graphics>,
    /// Anthropic's variable in this environment holds a Claude subscription token.
    pub anthropic_env_token: bool,
    /// `--api-key` gave a Claude subscription token.
    pub subscription_key: bool,
    /// A cell's width and height in pixels.
    pub cell: (u16, u16),
}

/// The connection to the daemon.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Connection {
    /// Connecting or attaching for the first time.
    Connecting,
    /// Attached and live.
    Live,
    /// The connection dropped; the runtime is trying again.
    Reconnecting {
        /// Attempts so far.
        attempt: u32,
        /// Why it dropped, when known.
        reason: Option<String>,
    },
}

/// Token and cost sums over the session's assistant messages.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct UsageTotals {
    /// Input tokens (non-cached plus cache reads and writes).
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Cost, USD.
    pub cost: f64,
    /// Context size of the last reply (its total tokens), for the context gauge.
    pub context_tokens: u64,
}

/// How the transcript is shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ViewOptions {
    /// Thinking blocks expanded.
    pub show_thinking: bool,
    /// Tool output expanded.
    pub expand_tools: bool,
    /// Thinking blocks shown only as `Thinking...` (pi's `hideThinkingBlock`).
    pub hide_thinking: bool,
    /// Lines scrolled up from the bottom; 0 follows new output.
    pub scroll_from_bottom: usize,
    /// Bumped by every scroll the user makes; the renderer holds a scrolled-up view in place
    /// only while it is unchanged.
    pub scroll_serial: u64,
    /// What code block lines are indented with (pi's `markdown.codeBlockIndent`).
    /// Shared: the view is part of every cached layout's key, cloned per item and frame.
    pub code_indent: std::sync::Arc<str>,
    /// Images of tool results drawn in the transcript (pi's `terminal.showImages`, on a
    /// terminal with a graphics protocol); `None`: not drawn.
    pub inline_images: Option<InlineImages>,
}

/// How images are drawn in the transcript.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InlineImages {
    /// The terminal's graphics protocol.
    pub protocol: Graphics,
    /// The widest an image is drawn, in cells (pi's `terminal.imageWidthCells`).
    pub width_cells: u16,
    /// A cell's width and height in pixels.
    pub cell: (u16, u16),
}

/// A terminal graphics protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Graphics {
    /// kitty's (kitty, Ghostty, WezTerm).
    Kitty,
    /// iTerm2's inline images (iTerm2, WezTerm too).
    Iterm2,
    /// DEC's sixels (foot, mlterm, Konsole, Windows Terminal; xterm with `PI_TUI_IMAGES`).
    Sixel,
}

impl Default for ViewOptions {
    fn default() -> Self {
        ViewOptions {
            show_thinking: false,
            expand_tools: false,
            hide_thinking: false,
            scroll_from_bottom: 0,
            scroll_serial: 0,
            code_indent: "  ".into(),
            inline_images: None,
        }
    }
}

/// What Esc twice on an empty editor opens (pi's `doubleEscapeAction`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DoubleEscape {
    /// `/tree`.
    #[default]
    Tree,
    /// `/fork`.
    Fork,
    /// Nothing.
    None,
}

/// The rows `/tree` shows (pi's `treeFilterMode`), in pi's cycling order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TreeFilter {
    /// Messages and summaries; no settings entries (labels, model and thinking changes).
    #[default]
    Default,
    /// The default minus tool results.
    NoTools,
    /// User messages only.
    UserOnly,
    /// Labeled entries only.
    LabeledOnly,
    /// Everything.
    All,
}

impl TreeFilter {
    const ORDER: [TreeFilter; 5] = [
        TreeFilter::Default,
        TreeFilter::NoTools,
        TreeFilter::UserOnly,
        TreeFilter::LabeledOnly,
        TreeFilter::All,
    ];

    /// pi's name of the mode (`no-tools`); unknown names are the default.
    pub fn parse(name: &str) -> TreeFilter {
        match name {
            "no-tools" => TreeFilter::NoTools,
            "user-only" => TreeFilter::UserOnly,
            "labeled-only" => TreeFilter::LabeledOnly,
            "all" => TreeFilter::All,
            _ => TreeFilter::Default,
        }
    }

    /// The next mode in pi's order (`step` 1) or the previous one (-1).
    pub fn cycle(self, step: isize) -> TreeFilter {
        let index = Self::ORDER
            .iter()
            .position(|mode| *mode == self)
            .unwrap_or(0) as isize;
        Self::ORDER[(index + step).rem_euclid(Self::ORDER.len() as isize) as usize]
    }

    /// What the tree's title says about the mode (nothing for the default), as pi's.
    pub fn tag(self) -> &'static str {
        match self {
            TreeFilter::Default => "",
            TreeFilter::NoTools => " [no-tools]",
            TreeFilter::UserOnly => " [user]",
            TreeFilter::LabeledOnly => " [labeled]",
            TreeFilter::All => " [all]",
        }
    }
}

/// pi's interactive-mode settings (`settings/get`), as the TUI follows them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Preferences {
    /// `doubleEscapeAction`.
    pub double_escape: DoubleEscape,
    /// `treeFilterMode`: the mode `/tree` opens with.
    pub tree_filter: TreeFilter,
    /// `editorPaddingX`: free columns on each side of the editor's text.
    pub editor_padding_x: u16,
    /// `autocompleteMaxVisible`: rows of the completion list.
    pub autocomplete_max_visible: usize,
    /// `showHardwareCursor`: the terminal's cursor in the editor (else a drawn one).
    pub hardware_cursor: bool,
    /// `quietStartup` (and not `--verbose`): no key hints or loaded resources at the top.
    pub quiet_startup: bool,
    /// `terminal.showTerminalProgress`: the terminal's progress indicator while busy.
    pub terminal_progress: bool,
    /// `images.autoResize`: attached images are fitted to what models accept.
    pub fit_images: bool,
    /// `warnings.anthropicExtraUsage`: warn when an `anthropic` model runs on a Claude
    /// subscription.
    pub warn_extra_usage: bool,
    /// `collapseChangelog`: what is new after an update in one line.
    pub collapse_changelog: bool,
    /// `terminal.showImages`: tool results' images drawn where the terminal can.
    pub show_images: bool,
    /// `terminal.imageWidthCells`: the widest an image is drawn.
    pub image_width_cells: u16,
}

impl Default for Preferences {
    fn default() -> Self {
        Preferences {
            double_escape: DoubleEscape::Tree,
            tree_filter: TreeFilter::Default,
            editor_padding_x: 0,
            autocomplete_max_visible: 5,
            hardware_cursor: false,
            quiet_startup: false,
            terminal_progress: false,
            fit_images: true,
            warn_extra_usage: true,
            collapse_changelog: false,
            show_images: true,
            image_width_cells: 60,
        }
    }
}

impl Preferences {
    /// The preferences `settings` give, with the view options they change (`--verbose`
    /// shows the startup header whatever `quietStartup` says).
    pub fn from_settings(
        settings: &pi_protocol::v1::EffectiveSettings,
        verbose: bool,
    ) -> Preferences {
        Preferences {
            double_escape: match settings.double_escape_action.as_str() {
                "fork" => DoubleEscape::Fork,
                "none" => DoubleEscape::None,
                _ => DoubleEscape::Tree,
            },
            tree_filter: TreeFilter::parse(&settings.tree_filter_mode),
            editor_padding_x: u16::from(settings.editor_padding_x.min(3)),
            autocomplete_max_visible: usize::from(settings.autocomplete_max_visible.clamp(3, 20)),
            hardware_cursor: settings.show_hardware_cursor,
            quiet_startup: settings.quiet_startup && !verbose,
            terminal_progress: settings.terminal.show_terminal_progress,
            fit_images: settings.images.auto_resize,
            warn_extra_usage: settings.warnings.anthropic_extra_usage,
            collapse_changelog: settings.collapse_changelog,
            show_images: settings.terminal.show_images,
            image_width_cells: settings.terminal.image_width_cells.max(1),
        }
    }
}

/// The `/resume` picker: the sessions listed and how they are shown.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionPicker {
    /// As `session/list` gave them (most recent first).
    pub sessions: Vec<pi_protocol::v1::SessionInfo>,
    /// Each session's directory shown (pi's Ctrl+P).
    pub show_path: bool,
    /// Only named sessions (pi's Ctrl+N).
    pub named_only: bool,
    /// Sorted by title instead of by recency (pi's Ctrl+S).
    pub by_name: bool,
    /// The session Ctrl+D asked to delete, waiting for Enter.
    pub confirming_delete: Option<String>,
}

/// Where pi's extra-usage warning stands (see [`State::extra_usage`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExtraUsageCheck {
    /// The warning was shown; it is not shown again.
    pub shown: bool,
    /// The `provider/id` of the model last checked; a check runs again when it changes.
    pub checked_model: Option<String>,
}

/// Which theme to show (the `theme` setting; none: by the terminal's background) and where
/// custom themes are: pi's `--theme` paths, the `themes` setting's, and the project's and
/// pi's theme directories (these two and the setting's not with `--no-themes`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThemeChoice {
    /// A theme's name (or a theme file).
    pub name: Option<String>,
    /// Theme files or directories, absolute (`-`/`!` in front: left out).
    pub paths: Vec<String>,
    /// Whether the project's `.pi/themes` and pi's `<agent dir>/themes` are searched.
    pub discover: bool,
}

/// What the session loaded, for the startup header (pi's `[Context]`, `[Skills]`,
/// `[Prompts]`, `[Extensions]`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Loaded {
    /// Context files, absolute paths in prompt order.
    pub context_files: Vec<String>,
    /// Extension files.
    pub extensions: Vec<String>,
    /// Custom themes found where pi looks, by name (pi's `[Themes]`).
    pub themes: Vec<String>,
}

/// The session tree behind an open `/tree` dialog, to filter it again.
#[derive(Clone, Debug, PartialEq)]
pub struct TreeView {
    /// Every entry of the session.
    pub entries: Vec<pi_protocol::v1::EntryRecord>,
    /// The leaf when it was read.
    pub leaf_id: Option<String>,
    /// The rows shown.
    pub filter: TreeFilter,
    /// Labels shown with when they were set (pi's Shift+T).
    pub label_times: bool,
    /// Entries whose branches are folded away (pi's Ctrl+←).
    pub folded: std::collections::HashSet<String>,
}

/// Prompt history navigation (↑/↓).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct History {
    /// Prompts, newest first, as served by `history/search`.
    pub entries: Vec<String>,
    /// The entry shown in the editor; `None` while editing a new prompt.
    pub position: Option<usize>,
    /// The editor text before browsing began.
    pub draft: String,
}

/// The whole UI state.
#[derive(Clone, Debug)]
pub struct State {
    /// Key bindings.
    pub keymap: Keymap,
    /// pi's interactive-mode settings.
    pub prefs: Preferences,
    /// The colours (pi's `theme`), and what the terminal shows of them.
    pub theme: std::sync::Arc<crate::theme::Theme>,
    /// How colours reach the terminal.
    pub color_mode: crate::theme::ColorMode,
    /// The theme asked for (loaded by the runtime, which watches its file).
    pub theme_choice: ThemeChoice,
    /// What the session loaded (context files, extensions), for the startup header.
    pub loaded: Loaded,
    /// Terminal surroundings.
    pub environment: Environment,
    /// The attached session's metadata, once attached.
    pub session: Option<SessionInfo>,
    /// The conversation.
    pub transcript: Transcript,
    /// The prompt editor.
    pub editor: Editor,
    /// Connection state.
    pub connection: Connection,
    /// A run is active.
    pub running: bool,
    /// An automatic retry is waiting for its turn (Esc cancels it).
    pub retry_pending: bool,
    /// A `!command` is running.
    pub bash_running: bool,
    /// A compaction is running (Esc aborts it).
    pub compacting: bool,
    /// The MCP servers a request of the run waits for (`tools_wait_start`), until
    /// `tools_wait_end`.
    pub tools_wait: Option<Vec<String>>,
    /// Messages queued in the daemon, not yet delivered.
    pub queue: QueueState,
    /// Every client attached to the session (this one included), with drafts.
    pub clients: Vec<AttachedClient>,
    /// Models the daemon knows.
    pub models: Vec<ModelInfo>,
    /// The model scope Ctrl+P cycles within (`--models`, else `enabledModels`); empty: every
    /// model with a key.
    pub model_scope: Vec<String>,
    /// The session's own slash commands (prompt templates, skills).
    pub session_commands: Vec<SlashCommand>,
    /// The keys the session's pi extensions registered (`pi.registerShortcut`), with pi's
    /// key id; a key the TUI does not bind runs the extension's handler.
    pub shortcuts: Vec<(crate::keymap::KeyChord, String)>,
    /// The session's todo list (oh-my-pi's `todo`), shown above the editor while a task is
    /// open.
    pub todos: pi_protocol::v1::TodoList,
    /// oh-my-pi's plan mode is on for the session (the footer says `plan`).
    pub plan_mode: bool,
    /// Every MCP server of the daemon (`mcp/list`, kept current by `mcp/changed`).
    pub mcp_servers: Vec<pi_protocol::v1::McpServerStatus>,
    /// Every language server of the daemon (`lsp/list`, kept current by `lsp/changed`).
    pub lsp_servers: Vec<pi_protocol::v1::LspServerStatus>,
    /// The attached session's background jobs (`job/list`, refreshed after its tool calls).
    pub jobs: Vec<pi_protocol::v1::JobInfo>,
    /// The daemon's Python kernels (`kernel/list`, refreshed with the jobs).
    pub kernels: Vec<pi_protocol::v1::KernelInfo>,
    /// Questions for this session not answered yet, oldest first (the first is shown).
    pub questions: Vec<pi_protocol::v1::UiRequestParams>,
    /// The providers and their logins as `auth/list` last told (`/login`, `/logout`), for
    /// the names of their logins.
    pub auth_providers: Vec<pi_protocol::v1::AuthProviderStatus>,
    /// A login was cancelled (Esc) before its first step gave its id: the step that gives it
    /// `/login PROVIDER` typed before the list of logins came: started once it comes (a
    /// subscription's login, or another provider's key).
    pub pending_login: Option<String>,
    /// pi's warning that a Claude subscription is billed as extra usage: whether it was
    /// shown (once per TUI, as pi), and the model last checked for it.
    pub extra_usage: ExtraUsageCheck,
    /// The `/resume` picker's sessions and view (pi's session selector keys).
    pub session_picker: Option<SessionPicker>,
    /// The settings in effect for the working directory, as `settings/get` last told.
    pub settings: Option<Box<pi_protocol::v1::EffectiveSettings>>,
    /// A jump key was pressed: the next character typed is jumped to (`true`: forward).
    pub pending_jump: Option<bool>,
    /// sends the cancellation.
    pub cancel_login_on_first_step: bool,
    /// Token and cost sums.
    pub usage: UsageTotals,
    /// View toggles and scrolling.
    pub view: ViewOptions,
    /// A dialog over the transcript.
    pub overlay: Option<Overlay>,
    /// The tree the `/tree` dialog shows, while it is open.
    pub tree_view: Option<TreeView>,
    /// The completion popup above the editor.
    pub completion: Option<Completion>,
    /// Prompt history.
    pub history: History,
    /// Files of the working directory for `@` completion (relative paths).
    pub files: Vec<String>,
    /// The word a Tab found no file for, waiting for a fresh file list to try again.
    pub path_completion_pending: Option<String>,
    /// A transient status message above the editor.
    pub status: Option<String>,
    /// Terminal size (columns, rows).
    pub size: (u16, u16),
    /// When Ctrl+C last cleared the editor (ms, from the input clock), for "twice quits".
    pub last_clear_at: Option<u64>,
    /// When Esc last found the editor empty and nothing to stop (ms), for "twice opens the
    /// tree" (`doubleEscapeAction`).
    pub last_escape_at: Option<u64>,
    /// Replay cursor: the seq of the newest durable event applied.
    pub durable_seq: u64,
    /// The leaf entry as this client last saw it, to detect divergence after a replay.
    pub leaf_id: Option<String>,
    /// The run's animation frame (advanced by ticks while running).
    pub spinner: usize,
    /// Set once the user asked to leave.
    pub exiting: bool,
    /// Warnings found before the first attach (configuration problems, an unloadable theme,
    /// `keybindings.json`), said after the first session's history.
    pub startup_warnings: Vec<String>,
    /// What the session's extensions show outside dialogs (`extension/ui`).
    pub extension_ui: ExtensionUi,
}

/// What a session's extensions show that lasts: status texts (in the footer) and widgets
/// (above or below the editor), by key, without the ANSI colours of pi's theme. Kept for the
/// session they came with: the daemon sends them while attaching, before the attach result.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExtensionUi {
    /// The session they belong to.
    pub session_id: String,
    /// Status texts by key.
    pub statuses: std::collections::BTreeMap<String, String>,
    /// Widgets by key: their lines and whether they go above the editor.
    pub widgets: std::collections::BTreeMap<String, (Vec<String>, bool)>,
}

impl State {
    /// A fresh state before the first attach.
    pub fn new(keymap: Keymap, environment: Environment) -> State {
        State {
            keymap,
            prefs: Preferences::default(),
            theme: std::sync::Arc::new(crate::theme::Theme::dark()),
            // The 16 named colours until the runtime knows the terminal.
            color_mode: crate::theme::ColorMode::Ansi16,
            theme_choice: ThemeChoice {
                discover: true,
                ..ThemeChoice::default()
            },
            loaded: Loaded::default(),
            environment,
            session: None,
            transcript: Transcript::default(),
            editor: Editor::default(),
            connection: Connection::Connecting,
            running: false,
            retry_pending: false,
            bash_running: false,
            compacting: false,
            tools_wait: None,
            queue: QueueState::default(),
            clients: Vec::new(),
            models: Vec::new(),
            model_scope: Vec::new(),
            session_commands: Vec::new(),
            shortcuts: Vec::new(),
            todos: pi_protocol::v1::TodoList::default(),
            plan_mode: false,
            mcp_servers: Vec::new(),
            lsp_servers: Vec::new(),
            jobs: Vec::new(),
            kernels: Vec::new(),
            questions: Vec::new(),
            auth_providers: Vec::new(),
            cancel_login_on_first_step: false,
            pending_login: None,
            extra_usage: ExtraUsageCheck::default(),
            pending_jump: None,
            settings: None,
            session_picker: None,
            usage: UsageTotals::default(),
            view: ViewOptions::default(),
            overlay: None,
            tree_view: None,
            completion: None,
            history: History::default(),
            files: Vec::new(),
            path_completion_pending: None,
            status: None,
            size: (80, 24),
            last_clear_at: None,
            last_escape_at: None,
            durable_seq: 0,
            leaf_id: None,
            spinner: 0,
            exiting: false,
            startup_warnings: Vec::new(),
            extension_ui: ExtensionUi::default(),
        }
    }

    /// The model in use, with its catalog details when known.
    pub fn model(&self) -> Option<&ModelInfo> {
        let model = self.session.as_ref()?.model.as_ref()?;
        self.models
            .iter()
            .find(|info| info.provider == model.provider && info.id == model.id)
    }

    /// The thinking level in use.
    pub fn thinking_level(&self) -> &str {
        self.session
            .as_ref()
            .map(|session| session.thinking_level.as_str())
            .unwrap_or("off")
    }

    /// Other attached clients (not this one).
    pub fn other_clients(&self) -> impl Iterator<Item = &AttachedClient> {
        self.clients
            .iter()
            .filter(|client| client.connection_id != self.environment.connection_id)
    }

    /// Adds an assistant message's usage to the totals.
    pub fn count_usage(&mut self, usage: &pi_protocol::v1::message::Usage, stop: StopReason) {
        self.usage.input += usage.input + usage.cache_read + usage.cache_write;
        self.usage.output += usage.output;
        self.usage.cost += usage.cost.total;
        if !matches!(stop, StopReason::Aborted | StopReason::Error) || usage.total_tokens > 0 {
            self.usage.context_tokens = usage.total_tokens;
        }
    }
}
