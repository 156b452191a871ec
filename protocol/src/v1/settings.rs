//! `settings/*`: the effective pi-compatible settings (`settings.json` layers) of a working
//! directory, and changing the global defaults.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Params of `settings/get`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SettingsGetParams {
    /// Absolute working directory whose project layer (`<cwd>/.pi/settings.json`) applies.
    /// Absent: the global layers only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

/// Response of `settings/get`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SettingsGetResponse {
    /// The effective settings.
    pub settings: EffectiveSettings,
    /// The files consulted, lowest precedence first (whether or not they exist).
    pub files: Vec<String>,
    /// The file `settings/setDefault` writes.
    pub writable_file: String,
    /// Problems found in the files; the offending keys are ignored.
    pub diagnostics: Vec<ResourceDiagnostic>,
    /// The sandbox in force for sessions in `cwd` (the user's settings, tightened by the
    /// project's), or, without `cwd`, what the user's settings give.
    #[serde(default)]
    pub sandbox: EffectiveSandbox,
}

/// The sandbox sessions get: what confines their `bash` commands and background jobs, and
/// where their file tools (`write`, `edit`, language-server edits) may write.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EffectiveSandbox {
    /// `off`, `workspace-write` or `read-only`.
    pub mode: String,
    /// Whether commands may open network sockets (always when `off`).
    pub network: bool,
    /// Where commands and file tools may write with `workspace-write`: the session's
    /// directory (`cwd`, or `<session directory>` when none was given), the temp directories
    /// and the setting's `writableRoots`. Empty otherwise.
    pub writable_roots: Vec<String>,
    /// What this machine enforces when the sandbox is on (Landlock and its ABI, the network
    /// filter alone, or macOS `sandbox-exec`); absent when `off`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enforcement: Option<String>,
}

impl Default for EffectiveSandbox {
    fn default() -> Self {
        EffectiveSandbox {
            mode: "off".to_owned(),
            network: true,
            writable_roots: Vec::new(),
            enforcement: None,
        }
    }
}

/// Effective settings, in `settings.json`'s key names, with pi's defaults filled in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EffectiveSettings {
    /// Provider of the model new sessions use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_provider: Option<String>,
    /// Model new sessions use when `session/create` names none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_model: Option<String>,
    /// Thinking level of new sessions (`off`...`xhigh`).
    pub default_thinking_level: String,
    /// `all` or `one-at-a-time`.
    pub steering_mode: String,
    /// `all` or `one-at-a-time`.
    pub follow_up_mode: String,
    /// Automatic compaction.
    pub compaction: CompactionSettings,
    /// Branch summaries.
    pub branch_summary: BranchSummarySettings,
    /// Automatic retries.
    pub retry: RetrySettings,
    /// The shell the bash tool runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell_path: Option<String>,
    /// Text prepended to every bash command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell_command_prefix: Option<String>,
    /// Extra skill paths, absolute; `-` or `!` in front excludes.
    pub skills: Vec<String>,
    /// Whether clients offer `/skill:name` commands.
    pub enable_skill_commands: bool,
    /// Extra prompt template paths, absolute; `-` or `!` in front excludes.
    pub prompts: Vec<String>,
    /// Replaces the default system prompt body (text, or a path to a file), as set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Appended to the system prompt body (text, or a path to a file), as set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub append_system_prompt: Option<String>,
    /// MCP servers.
    pub mcp: McpSettings,
    /// pi's `enabledModels`: the model scope (patterns, as `--models` takes them) clients
    /// use when none is given: a new session starts on the default model when it is in the
    /// scope, else on the scope's first, and the TUI's Ctrl+P cycles within it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub enabled_models: Vec<String>,
    /// pi's `sessionDir`: where clients look up pi's session files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_dir: Option<String>,
    /// pi's `hideThinkingBlock`: clients show no thinking blocks.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hide_thinking_block: bool,
    /// pi's `doubleEscapeAction`: what Esc twice on an empty editor opens in the TUI
    /// (`tree`, `fork` or `none`).
    #[serde(default = "default_double_escape_action")]
    pub double_escape_action: String,
    /// pi's `treeFilterMode`: the rows the TUI's `/tree` starts with (`default`, `no-tools`,
    /// `user-only`, `labeled-only` or `all`).
    #[serde(default = "default_tree_filter_mode")]
    pub tree_filter_mode: String,
    /// pi's `editorPaddingX`: columns the TUI leaves free on each side of the editor (0–3).
    #[serde(default)]
    pub editor_padding_x: u8,
    /// pi's `autocompleteMaxVisible`: rows of the TUI's completion list (3–20).
    #[serde(default = "default_autocomplete_max_visible")]
    pub autocomplete_max_visible: u8,
    /// pi's `showHardwareCursor`: the terminal's cursor in the TUI's editor instead of a
    /// drawn one.
    #[serde(default)]
    pub show_hardware_cursor: bool,
    /// pi's `quietStartup`: the TUI starts without key hints and without the list of what
    /// the session loaded (`--verbose` shows them anyway).
    #[serde(default)]
    pub quiet_startup: bool,
    /// pi's `collapseChangelog`: the TUI says what is new after an update in one line.
    #[serde(default)]
    pub collapse_changelog: bool,
    /// pi's `markdown.*`.
    #[serde(default)]
    pub markdown: MarkdownSettings,
    /// pi's `terminal.*` that clients follow.
    #[serde(default)]
    pub terminal: TerminalSettings,
    /// pi's `images.*`.
    #[serde(default)]
    pub images: ImagesSettings,
    /// pi's `warnings.*`.
    #[serde(default)]
    pub warnings: WarningsSettings,
    /// pi's `theme`: the TUI's theme (`dark`, `light`, or a custom theme's name); absent: by
    /// the terminal's background.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
    /// pi's `themes`: extra theme files or directories, absolute; `-` or `!` in front excludes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub themes: Vec<String>,
}

/// `warnings`: which of pi's warnings clients show.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WarningsSettings {
    /// Warn once when an `anthropic` model runs on a Claude subscription (a login, or an
    /// `sk-ant-oat` token given as a key): other programs' use of it is billed as extra
    /// usage, not from the plan's limits.
    pub anthropic_extra_usage: bool,
}

impl Default for WarningsSettings {
    fn default() -> Self {
        WarningsSettings {
            anthropic_extra_usage: true,
        }
    }
}

/// `images`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImagesSettings {
    /// Images go to the model fitted to 2000x2000 pixels and 4.5 MB of base64: `read`'s,
    /// and the ones clients attach (`@file`), which clients fit before sending.
    pub auto_resize: bool,
    /// No image reaches the model: each is replaced by a sentence saying so.
    pub block_images: bool,
}

impl Default for ImagesSettings {
    fn default() -> Self {
        ImagesSettings {
            auto_resize: true,
            block_images: false,
        }
    }
}

fn default_double_escape_action() -> String {
    "tree".to_owned()
}

fn default_tree_filter_mode() -> String {
    "default".to_owned()
}

fn default_autocomplete_max_visible() -> u8 {
    5
}

/// `markdown`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MarkdownSettings {
    /// What code block lines are indented with.
    pub code_block_indent: String,
}

impl Default for MarkdownSettings {
    fn default() -> Self {
        MarkdownSettings {
            code_block_indent: "  ".to_owned(),
        }
    }
}

/// `terminal`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TerminalSettings {
    /// The terminal's progress indicator (OSC 9;4) while a run or a compaction goes on.
    #[serde(default)]
    pub show_terminal_progress: bool,
    /// Images of tool results drawn in the transcript, where the terminal has a graphics
    /// protocol (kitty's or iTerm2's).
    #[serde(default = "yes")]
    pub show_images: bool,
    /// The widest an image is drawn, in cells.
    #[serde(default = "sixty")]
    pub image_width_cells: u16,
}

impl Default for TerminalSettings {
    fn default() -> Self {
        TerminalSettings {
            show_terminal_progress: false,
            show_images: true,
            image_width_cells: 60,
        }
    }
}

fn yes() -> bool {
    true
}

fn sixty() -> u16 {
    60
}

/// `mcp`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpSettings {
    /// Sessions use MCP servers at all.
    pub enabled: bool,
    /// Servers (by name) sessions do not use.
    pub disabled_servers: Vec<String>,
}

/// `compaction`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CompactionSettings {
    /// Automatic compaction on or off.
    pub enabled: bool,
    /// Tokens kept free for the response.
    pub reserve_tokens: u64,
    /// Recent tokens kept verbatim.
    pub keep_recent_tokens: u64,
}

/// `branchSummary`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BranchSummarySettings {
    /// Tokens kept free when summarizing a branch.
    pub reserve_tokens: u64,
    /// Do not ask whether to summarize.
    pub skip_prompt: bool,
}

/// `retry`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RetrySettings {
    /// Automatic retries on or off.
    pub enabled: bool,
    /// Retries before giving up.
    pub max_retries: u32,
    /// First delay, doubled per attempt.
    pub base_delay_ms: u64,
    /// Longest server-requested delay honoured (0: no cap).
    pub max_delay_ms: u64,
}

/// A problem in a settings file, skill, prompt template or context file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceDiagnostic {
    /// `warning`, or `collision` (two resources share a name; the first wins).
    #[serde(rename = "type")]
    pub kind: ResourceDiagnosticKind,
    /// The file concerned.
    pub path: String,
    /// The settings key (dotted) or frontmatter field concerned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// What is wrong and what the daemon did about it.
    pub message: String,
}

/// Kinds of [`ResourceDiagnostic`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResourceDiagnosticKind {
    /// A bad file, key or value.
    Warning,
    /// A name already taken.
    Collision,
    /// A pi setting the daemon does not apply (yet, or at all), and why.
    NotApplied,
}

/// Params of `settings/setDefault`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SettingsSetDefaultParams {
    /// `settings.json` keys to set, with pi's names and value types (for example
    /// `{"defaultModel": "claude-sonnet-4-5", "retry": {"maxRetries": 5}}`). Nested objects
    /// merge one level into what the file has.
    #[serde(default)]
    pub values: Map<String, Value>,
    /// Keys to remove: `retry`, or dotted `retry.maxRetries`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unset: Vec<String>,
    /// Which file: the daemon's own `settings.json` (default), or pi's global one, so pi
    /// sees the change too (then the keys are also removed from the daemon's file, which
    /// would otherwise override them).
    #[serde(default, skip_serializing_if = "SettingsTarget::is_daemon")]
    pub target: SettingsTarget,
}

/// The settings file `settings/setDefault` writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum SettingsTarget {
    /// `<config dir>/settings.json`.
    #[default]
    Daemon,
    /// pi's `<agent dir>/settings.json` (`~/.pi/agent/settings.json`).
    Pi,
}

impl SettingsTarget {
    /// The default.
    pub fn is_daemon(&self) -> bool {
        *self == SettingsTarget::Daemon
    }
}
