//! The effective settings of one working directory: pi's `settings.json` layers (pi's global
//! `<pi_agent_dir>/settings.json`, then ours `<config_dir>/settings.json`, then the project's
//! `<cwd>/.pi/settings.json`; later layers win key by key, nested objects merge one level) over
//! pi's defaults.
//!
//! Keys that something in the daemon reads are typed here; pi's other keys are accepted and
//! ignored (see [`crate::settings_parse`]). `systemPrompt` and `appendSystemPrompt` are
//! our additions, the settings form of pi's `--system-prompt` / `--append-system-prompt`.
//!
//! Invariant: `skills` and `prompts` entries are not replaced by later layers; they accumulate,
//! project entries first, each resolved against the directory of the file that names it (pi
//! resolves both scopes' entries the same way).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use pi_agent::QueueMode;
use pi_llm::ThinkingLevel;

/// The names of the language servers the daemon knows without settings (`crate::lsp::servers`
/// defines them; a test there checks the two lists agree). A `lsp.servers` entry with one of
/// these names overrides a built-in, any other name defines a new server.
pub const BUILTIN_LSP_SERVERS: &[&str] = &[
    "rust-analyzer",
    "pyright",
    "basedpyright",
    "pylsp",
    "typescript",
    "gopls",
    "clangd",
    "bash-language-server",
    "json",
    "css",
    "html",
    "yaml",
    "marksman",
];

/// oh-my-pi's tools the `ompTools` setting may name (opt-in: pi's default tool set stays
/// pi's unless the setting or a session asks for them).
pub const OMP_TOOLS: [&str; 6] = ["todo", "ask", "fetch", "web_search", "ast_grep", "ast_edit"];

/// Effective settings, with pi's defaults for what no layer sets.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// `defaultProvider`: provider of the model new sessions use.
    pub default_provider: Option<String>,
    /// `defaultModel`: model id new sessions use (with `default_provider`, or resolved alone).
    pub default_model: Option<String>,
    /// `defaultThinkingLevel`; unset means the daemon's default (pi's `medium`).
    pub default_thinking_level: Option<ThinkingLevel>,
    /// `steeringMode`; unset means the daemon's default (pi's `one-at-a-time`).
    pub steering_mode: Option<QueueMode>,
    /// `followUpMode`; unset means the daemon's default (pi's `one-at-a-time`).
    pub follow_up_mode: Option<QueueMode>,
    /// `compaction.*`.
    pub compaction: CompactionSettings,
    /// `branchSummary.*`.
    pub branch_summary: BranchSummarySettings,
    /// `retry.*`.
    pub retry: RetrySettings,
    /// `shellPath`: the shell the bash tool runs.
    pub shell_path: Option<String>,
    /// `shellCommandPrefix`: text prepended to every bash command.
    pub shell_command_prefix: Option<String>,
    /// `thinkingBudgets.{minimal,low,medium,high}`: token budgets of thinking levels.
    pub thinking_budgets: [Option<u64>; 4],
    /// `images.blockImages`: no image reaches the model.
    pub block_images: bool,
    /// `images.autoResize`: images go to the model fitted to 2000x2000 pixels and 4.5 MB
    /// (`read`'s, and clients' attachments), as pi's default.
    pub auto_resize_images: bool,
    /// `piSessionWriteBack` (ours): sessions opened from pi's session files append their new
    /// entries to them (default on).
    pub pi_session_write_back: bool,
    /// `enabledModels`: the model scope clients use without `--models` (pi's patterns).
    pub enabled_models: Vec<String>,
    /// `ompTools` (ours): oh-my-pi's tools a session gets besides pi's defaults when it
    /// names no tools (`true`: all of [`OMP_TOOLS`]; a list: those).
    pub omp_tools: Vec<String>,
    /// `disabledProviders` (oh-my-pi's): sources of rules and instructions left out (`cursor`,
    /// `windsurf`, `cline`, `github`, `claude`, `codex`, `gemini`, `agents`, `native`).
    pub disabled_providers: Vec<String>,
    /// `ttsr.{enabled, contextMode, interruptMode, repeatMode, repeatGap}` (oh-my-pi's stream
    /// rules).
    pub ttsr: crate::ttsr::TtsrSettings,
    /// `sessionDir`: where pi's session files are looked up.
    pub session_dir: Option<String>,
    /// `hideThinkingBlock`: clients show no thinking blocks.
    pub hide_thinking_block: bool,
    /// `transport` (or the older `websockets`): how `openai-codex-responses` requests travel.
    pub transport: pi_llm::Transport,
    /// pi's interactive-mode keys, which the TUI follows.
    pub tui: TuiSettings,
    /// `theme`: the TUI's theme (a built-in's or a custom theme's name); unset: by the
    /// terminal's background.
    pub theme: Option<String>,
    /// `themes`: extra theme files or directories (project entries first).
    pub themes: Vec<PathEntry>,
    /// Whether the default skill directories are scanned (false with pi's legacy
    /// `skills: {enabled: false}`); explicit entries load regardless.
    pub discover_skills: bool,
    /// `skills`: extra skill files or directories (project entries first).
    pub skills: Vec<PathEntry>,
    /// `enableSkillCommands`: clients offer `/skill:name` completions.
    pub enable_skill_commands: bool,
    /// `prompts`: extra prompt template files or directories (project entries first).
    pub prompts: Vec<PathEntry>,
    /// `mcp.enabled`: sessions use MCP servers at all (default true).
    pub mcp_enabled: bool,
    /// `mcp.disabledServers`: servers (by name) sessions do not use.
    pub mcp_disabled_servers: Vec<String>,
    /// `lsp.diagnosticsOnWrite`: `write` results carry new errors and warnings (default true).
    pub lsp_diagnostics_on_write: bool,
    /// `lsp.diagnosticsOnEdit`: `edit` results too (default false).
    pub lsp_diagnostics_on_edit: bool,
    /// `lsp.servers`: overrides of the built-in language servers and new ones, by name
    /// (layers merge field by field).
    pub lsp_servers: BTreeMap<String, LspServerSettings>,
    /// `lsp.idleTimeoutMs`: how long a language server no session uses keeps running.
    pub lsp_idle_timeout_ms: Option<u64>,
    /// `task.*`: subagents.
    pub task: TaskSettings,
    /// `sessionEnv.exclude`: more name patterns of client variables never stored.
    pub session_env_exclude: Vec<String>,
    /// `sessionEnv.include`: name patterns stored even though they look like secrets.
    pub session_env_include: Vec<String>,
    /// `systemPrompt`: replaces the default prompt body (text, or a path to a file).
    pub system_prompt: Option<TextOrFile>,
    /// `appendSystemPrompt`: appended to the prompt body (text, or a path to a file).
    pub append_system_prompt: Option<TextOrFile>,
}

/// `compaction.*` (pi §5.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompactionSettings {
    /// Automatic compaction on or off (manual compaction is always allowed).
    pub enabled: bool,
    /// Headroom kept for the response; compaction triggers at `contextWindow - reserveTokens`.
    pub reserve_tokens: u64,
    /// Approximate recent tokens kept verbatim.
    pub keep_recent_tokens: u64,
}

/// pi's keys of its interactive mode: the daemon passes them to clients (`settings/get`) and
/// the TUI follows them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TuiSettings {
    /// `doubleEscapeAction`: what Esc twice on an empty editor opens: `tree`, `fork` or `none`.
    pub double_escape_action: String,
    /// `treeFilterMode`: the rows `/tree` starts with: `default`, `no-tools`, `user-only`,
    /// `labeled-only` or `all`.
    pub tree_filter_mode: String,
    /// `editorPaddingX`: columns left free on each side of the editor's text (0–3).
    pub editor_padding_x: u8,
    /// `autocompleteMaxVisible`: rows of the completion list (3–20).
    pub autocomplete_max_visible: u8,
    /// `showHardwareCursor`: the terminal's own cursor in the editor, instead of a drawn one.
    pub show_hardware_cursor: bool,
    /// `quietStartup`: no key hints and no list of loaded resources at startup.
    pub quiet_startup: bool,
    /// `markdown.codeBlockIndent`: what code block lines are indented with.
    pub code_block_indent: String,
    /// `terminal.showTerminalProgress`: the terminal's progress indicator (OSC 9;4) while a
    /// run or a compaction goes on.
    pub show_terminal_progress: bool,
    /// `collapseChangelog`: what is new after an update said in one line.
    pub collapse_changelog: bool,
    /// `terminal.showImages`: images of tool results drawn in the transcript where the
    /// terminal has a graphics protocol.
    pub show_images: bool,
    /// `terminal.imageWidthCells`: the widest an image is drawn, in cells (at least 1).
    pub image_width_cells: u16,
    /// `warnings.anthropicExtraUsage`: warn once when an `anthropic` model runs on a Claude
    /// subscription login, whose use by other programs is billed as extra usage.
    pub warn_anthropic_extra_usage: bool,
}

impl Default for TuiSettings {
    fn default() -> Self {
        TuiSettings {
            double_escape_action: "tree".to_owned(),
            tree_filter_mode: "default".to_owned(),
            editor_padding_x: 0,
            autocomplete_max_visible: 5,
            show_hardware_cursor: false,
            quiet_startup: false,
            code_block_indent: "  ".to_owned(),
            show_terminal_progress: false,
            collapse_changelog: false,
            show_images: true,
            image_width_cells: 60,
            warn_anthropic_extra_usage: true,
        }
    }
}

/// One layer's [`TuiSettings`] keys: what it sets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TuiLayer {
    /// `doubleEscapeAction`.
    pub double_escape_action: Option<String>,
    /// `treeFilterMode`.
    pub tree_filter_mode: Option<String>,
    /// `editorPaddingX`.
    pub editor_padding_x: Option<u8>,
    /// `autocompleteMaxVisible`.
    pub autocomplete_max_visible: Option<u8>,
    /// `showHardwareCursor`.
    pub show_hardware_cursor: Option<bool>,
    /// `quietStartup`.
    pub quiet_startup: Option<bool>,
    /// `markdown.codeBlockIndent`.
    pub code_block_indent: Option<String>,
    /// `terminal.showTerminalProgress`.
    pub show_terminal_progress: Option<bool>,
    /// `collapseChangelog`.
    pub collapse_changelog: Option<bool>,
    /// `terminal.showImages`.
    pub show_images: Option<bool>,
    /// `terminal.imageWidthCells`.
    pub image_width_cells: Option<u16>,
    /// `warnings.anthropicExtraUsage`.
    pub warn_anthropic_extra_usage: Option<bool>,
}

/// `branchSummary.*` (pi §5.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BranchSummarySettings {
    /// Budget for the summarized branch is `contextWindow - reserveTokens`.
    pub reserve_tokens: u64,
    /// Do not ask whether to summarize a branch.
    pub skip_prompt: bool,
}

/// `retry.*` (pi §6.9).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetrySettings {
    /// Automatic retries of transient provider errors.
    pub enabled: bool,
    /// Retries before giving up.
    pub max_retries: u32,
    /// First delay; doubled per attempt.
    pub base_delay_ms: u64,
    /// Longest server-requested delay honoured; 0 disables the cap.
    pub max_delay_ms: u64,
    /// `retry.provider.timeoutMs`: how long a provider may take to answer a request.
    pub provider_timeout_ms: Option<u64>,
    /// `retry.provider.maxRetries`: how often a request is sent again before the agent's
    /// retries see its failure, for the wire formats pi sends through its SDKs; unset: never.
    pub provider_max_retries: Option<u32>,
}

/// A `skills` / `prompts` entry, resolved to an absolute path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathEntry {
    /// The file or directory.
    pub path: PathBuf,
    /// `-path` or `!path`: leave this path (and everything under it) out.
    pub exclude: bool,
}

/// A value that is text, or names a file whose content is the text (pi's CLI rule: an
/// existing path means its content).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextOrFile {
    /// The value as written.
    pub value: String,
    /// The directory of the settings file it came from (relative paths resolve here).
    pub base_dir: PathBuf,
}

/// One settings file's values: what it sets and nothing else.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SettingsLayer {
    /// `defaultProvider`.
    pub default_provider: Option<String>,
    /// `defaultModel`.
    pub default_model: Option<String>,
    /// `defaultThinkingLevel`.
    pub default_thinking_level: Option<ThinkingLevel>,
    /// `steeringMode` (or legacy `queueMode`).
    pub steering_mode: Option<QueueMode>,
    /// `followUpMode`.
    pub follow_up_mode: Option<QueueMode>,
    /// `compaction.enabled`.
    pub compaction_enabled: Option<bool>,
    /// `compaction.reserveTokens`.
    pub compaction_reserve_tokens: Option<u64>,
    /// `compaction.keepRecentTokens`.
    pub compaction_keep_recent_tokens: Option<u64>,
    /// `branchSummary.reserveTokens`.
    pub branch_summary_reserve_tokens: Option<u64>,
    /// `branchSummary.skipPrompt`.
    pub branch_summary_skip_prompt: Option<bool>,
    /// `retry.enabled`.
    pub retry_enabled: Option<bool>,
    /// `retry.maxRetries`.
    pub retry_max_retries: Option<u32>,
    /// `retry.baseDelayMs`.
    pub retry_base_delay_ms: Option<u64>,
    /// `retry.maxDelayMs` (or `retry.provider.maxRetryDelayMs`).
    pub retry_max_delay_ms: Option<u64>,
    /// `retry.provider.timeoutMs`.
    pub retry_provider_timeout_ms: Option<u64>,
    /// `retry.provider.maxRetries`.
    pub retry_provider_max_retries: Option<u32>,
    /// `shellPath`.
    pub shell_path: Option<String>,
    /// `shellCommandPrefix`.
    pub shell_command_prefix: Option<String>,
    /// `thinkingBudgets.*`, by level (minimal, low, medium, high).
    pub thinking_budgets: [Option<u64>; 4],
    /// `images.blockImages`.
    pub block_images: Option<bool>,
    /// `images.autoResize`.
    pub auto_resize_images: Option<bool>,
    /// `piSessionWriteBack`.
    pub pi_session_write_back: Option<bool>,
    /// `enabledModels`.
    pub enabled_models: Option<Vec<String>>,
    /// `ompTools`.
    pub omp_tools: Option<Vec<String>>,
    /// `disabledProviders`.
    pub disabled_providers: Option<Vec<String>>,
    /// `ttsr.enabled`.
    pub ttsr_enabled: Option<bool>,
    /// `ttsr.contextMode` is `keep`.
    pub ttsr_keep_partial: Option<bool>,
    /// `ttsr.interruptMode`.
    pub ttsr_interrupt_mode: Option<crate::ttsr::InterruptMode>,
    /// `ttsr.repeatMode` is `after-gap`.
    pub ttsr_after_gap: Option<bool>,
    /// `ttsr.repeatGap`.
    pub ttsr_repeat_gap: Option<u64>,
    /// `sessionDir`.
    pub session_dir: Option<String>,
    /// `hideThinkingBlock`.
    pub hide_thinking_block: Option<bool>,
    /// `transport` (or `websockets`).
    pub transport: Option<pi_llm::Transport>,
    /// The interactive-mode keys.
    pub tui: TuiLayer,
    /// `theme`.
    pub theme: Option<String>,
    /// `themes`.
    pub themes: Vec<PathEntry>,
    /// Legacy `skills.enabled`.
    pub discover_skills: Option<bool>,
    /// `skills` (or legacy `skills.customDirectories`).
    pub skills: Vec<PathEntry>,
    /// `enableSkillCommands` (or legacy `skills.enableSkillCommands`).
    pub enable_skill_commands: Option<bool>,
    /// `prompts`.
    pub prompts: Vec<PathEntry>,
    /// `mcp.enabled`.
    pub mcp_enabled: Option<bool>,
    /// `mcp.disabledServers`.
    pub mcp_disabled_servers: Option<Vec<String>>,
    /// `lsp.diagnosticsOnWrite`.
    pub lsp_diagnostics_on_write: Option<bool>,
    /// `lsp.diagnosticsOnEdit`.
    pub lsp_diagnostics_on_edit: Option<bool>,
    /// `lsp.servers`.
    pub lsp_servers: BTreeMap<String, LspServerSettings>,
    /// `lsp.idleTimeoutMs`.
    pub lsp_idle_timeout_ms: Option<u64>,
    /// `approvals.mode`.
    pub approvals_mode: Option<String>,
    /// `approvals.rules`, each parsed.
    pub approvals_rules: Option<Vec<crate::approvals::Rule>>,
    /// `approvals.askTimeoutMs`.
    pub approvals_ask_timeout_ms: Option<u64>,
    /// `sandbox` (or `sandbox.mode`): `off`, `workspace-write` or `read-only`.
    pub sandbox_mode: Option<String>,
    /// `sandbox.network`.
    pub sandbox_network: Option<bool>,
    /// `sandbox.writableRoots` (absolute, or `~/` for the user's home).
    pub sandbox_writable_roots: Option<Vec<String>>,
    /// `sessionEnv.exclude`.
    pub session_env_exclude: Option<Vec<String>>,
    /// `sessionEnv.include`.
    pub session_env_include: Option<Vec<String>>,
    /// `task.maxConcurrency`.
    pub task_max_concurrency: Option<u64>,
    /// `task.maxRunning`.
    pub task_max_running: Option<u64>,
    /// `task.maxDepth`.
    pub task_max_depth: Option<u64>,
    /// `task.maxTurns`.
    pub task_max_turns: Option<u64>,
    /// `task.idleTimeoutMs`.
    pub task_idle_timeout_ms: Option<u64>,
    /// `task.loopLimit`.
    pub task_loop_limit: Option<u64>,
    /// `systemPrompt`.
    pub system_prompt: Option<TextOrFile>,
    /// `appendSystemPrompt`.
    pub append_system_prompt: Option<TextOrFile>,
}

/// `task.*`: limits and guards of subagents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskSettings {
    /// `task.maxConcurrency`: children of one parent running at once (default 4).
    pub max_concurrency: u64,
    /// `task.maxRunning`: children running at once in the whole daemon (default 32; read from
    /// the global files).
    pub max_running: u64,
    /// `task.maxDepth`: how deep children may nest; a child at this depth gets no `task`
    /// (default 2).
    pub max_depth: u64,
    /// `task.maxTurns`: a child's turns before it is told to wrap up; stopped 5 turns later
    /// (default 50).
    pub max_turns: u64,
    /// `task.idleTimeoutMs`: a child with no activity this long is stopped; the time inside a
    /// tool call does not count (default 300000).
    pub idle_timeout_ms: u64,
    /// `task.loopLimit`: identical consecutive tool calls that stop a child (default 5).
    pub loop_limit: u64,
}

impl Default for TaskSettings {
    fn default() -> Self {
        TaskSettings {
            max_concurrency: 4,
            max_running: 32,
            max_depth: 2,
            max_turns: 50,
            idle_timeout_ms: 300_000,
            loop_limit: 5,
        }
    }
}

/// One `lsp.servers.<name>` entry: each field set replaces the built-in's (or a lower
/// layer's).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LspServerSettings {
    /// `command`: the program.
    pub command: Option<String>,
    /// `args`.
    pub args: Option<Vec<String>>,
    /// `fileTypes`: extensions it serves (`"py"` or `".py"`).
    pub file_types: Option<Vec<String>>,
    /// `rootMarkers`: files or directories marking a project root.
    pub root_markers: Option<Vec<String>>,
    /// `initializationOptions`, sent with `initialize`.
    pub initialization_options: Option<serde_json::Value>,
    /// `settings`: what `workspace/configuration` answers (by dotted section).
    pub settings: Option<serde_json::Value>,
    /// `disabled`: never start it.
    pub disabled: Option<bool>,
}

impl LspServerSettings {
    /// `other`'s set fields over these.
    pub fn overlay(&mut self, other: &LspServerSettings) {
        set_option(&mut self.command, &other.command);
        set_option(&mut self.args, &other.args);
        set_option(&mut self.file_types, &other.file_types);
        set_option(&mut self.root_markers, &other.root_markers);
        set_option(
            &mut self.initialization_options,
            &other.initialization_options,
        );
        set_option(&mut self.settings, &other.settings);
        set_option(&mut self.disabled, &other.disabled);
    }
}

/// `value` over `target` when set.
fn set_option<T: Clone>(target: &mut Option<T>, value: &Option<T>) {
    if value.is_some() {
        target.clone_from(value);
    }
}

/// Which settings files apply, lowest precedence first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingsFiles {
    /// Global files, lowest precedence first (pi's, then ours).
    pub global: Vec<PathBuf>,
    /// The project file (`<cwd>/.pi/settings.json`), when there is a cwd.
    pub project: Option<PathBuf>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            default_provider: None,
            default_model: None,
            default_thinking_level: None,
            steering_mode: None,
            follow_up_mode: None,
            compaction: CompactionSettings {
                enabled: true,
                reserve_tokens: 16_384,
                keep_recent_tokens: 20_000,
            },
            branch_summary: BranchSummarySettings {
                reserve_tokens: 16_384,
                skip_prompt: false,
            },
            retry: RetrySettings {
                enabled: true,
                max_retries: 3,
                base_delay_ms: 2_000,
                max_delay_ms: 60_000,
                provider_timeout_ms: None,
                provider_max_retries: None,
            },
            shell_path: None,
            shell_command_prefix: None,
            thinking_budgets: [None; 4],
            block_images: false,
            auto_resize_images: true,
            pi_session_write_back: true,
            enabled_models: Vec::new(),
            omp_tools: Vec::new(),
            disabled_providers: Vec::new(),
            ttsr: crate::ttsr::TtsrSettings::default(),
            session_dir: None,
            hide_thinking_block: false,
            transport: pi_llm::Transport::Auto,
            tui: TuiSettings::default(),
            theme: None,
            themes: Vec::new(),
            discover_skills: true,
            skills: Vec::new(),
            enable_skill_commands: true,
            mcp_enabled: true,
            mcp_disabled_servers: Vec::new(),
            lsp_diagnostics_on_write: true,
            lsp_diagnostics_on_edit: false,
            lsp_servers: BTreeMap::new(),
            lsp_idle_timeout_ms: None,
            task: TaskSettings::default(),
            session_env_exclude: Vec::new(),
            session_env_include: Vec::new(),
            prompts: Vec::new(),
            system_prompt: None,
            append_system_prompt: None,
        }
    }
}

impl Settings {
    /// Merges `global` layers (lowest precedence first) and the `project` layer over the
    /// defaults.
    pub fn merge(global: &[SettingsLayer], project: Option<&SettingsLayer>) -> Settings {
        let mut settings = Settings::default();
        for layer in global.iter().chain(project) {
            settings.apply(layer);
        }
        // Entries accumulate instead: project first, then global files, ours before pi's.
        settings.skills = project
            .into_iter()
            .chain(global.iter().rev())
            .flat_map(|layer| layer.skills.iter().cloned())
            .collect();
        settings.prompts = project
            .into_iter()
            .chain(global.iter().rev())
            .flat_map(|layer| layer.prompts.iter().cloned())
            .collect();
        settings.themes = project
            .into_iter()
            .chain(global.iter().rev())
            .flat_map(|layer| layer.themes.iter().cloned())
            .collect();
        settings
    }

    fn apply(&mut self, layer: &SettingsLayer) {
        fn set<T: Clone>(target: &mut T, value: &Option<T>) {
            if let Some(value) = value {
                *target = value.clone();
            }
        }
        set_option(&mut self.default_provider, &layer.default_provider);
        set_option(&mut self.default_model, &layer.default_model);
        set_option(
            &mut self.default_thinking_level,
            &layer.default_thinking_level,
        );
        set_option(&mut self.steering_mode, &layer.steering_mode);
        set_option(&mut self.follow_up_mode, &layer.follow_up_mode);
        set(&mut self.compaction.enabled, &layer.compaction_enabled);
        set(
            &mut self.compaction.reserve_tokens,
            &layer.compaction_reserve_tokens,
        );
        set(
            &mut self.compaction.keep_recent_tokens,
            &layer.compaction_keep_recent_tokens,
        );
        set(
            &mut self.branch_summary.reserve_tokens,
            &layer.branch_summary_reserve_tokens,
        );
        set(
            &mut self.branch_summary.skip_prompt,
            &layer.branch_summary_skip_prompt,
        );
        set(&mut self.retry.enabled, &layer.retry_enabled);
        set(&mut self.retry.max_retries, &layer.retry_max_retries);
        set(&mut self.retry.base_delay_ms, &layer.retry_base_delay_ms);
        set(&mut self.retry.max_delay_ms, &layer.retry_max_delay_ms);
        set_option(
            &mut self.retry.provider_timeout_ms,
            &layer.retry_provider_timeout_ms,
        );
        set_option(
            &mut self.retry.provider_max_retries,
            &layer.retry_provider_max_retries,
        );
        set_option(&mut self.shell_path, &layer.shell_path);
        set_option(&mut self.shell_command_prefix, &layer.shell_command_prefix);
        for (budget, given) in self.thinking_budgets.iter_mut().zip(layer.thinking_budgets) {
            if given.is_some() {
                *budget = given;
            }
        }
        set(&mut self.block_images, &layer.block_images);
        set(&mut self.auto_resize_images, &layer.auto_resize_images);
        set(
            &mut self.pi_session_write_back,
            &layer.pi_session_write_back,
        );
        set(&mut self.enabled_models, &layer.enabled_models);
        set(&mut self.omp_tools, &layer.omp_tools);
        set(&mut self.disabled_providers, &layer.disabled_providers);
        set(&mut self.ttsr.enabled, &layer.ttsr_enabled);
        set(&mut self.ttsr.keep_partial, &layer.ttsr_keep_partial);
        set(&mut self.ttsr.interrupt_mode, &layer.ttsr_interrupt_mode);
        set(&mut self.ttsr.after_gap, &layer.ttsr_after_gap);
        set(&mut self.ttsr.repeat_gap, &layer.ttsr_repeat_gap);
        set_option(&mut self.session_dir, &layer.session_dir);
        set(&mut self.hide_thinking_block, &layer.hide_thinking_block);
        set(&mut self.transport, &layer.transport);
        set_option(&mut self.theme, &layer.theme);
        let (tui, given) = (&mut self.tui, &layer.tui);
        set(&mut tui.double_escape_action, &given.double_escape_action);
        set(&mut tui.tree_filter_mode, &given.tree_filter_mode);
        set(&mut tui.editor_padding_x, &given.editor_padding_x);
        set(
            &mut tui.autocomplete_max_visible,
            &given.autocomplete_max_visible,
        );
        set(&mut tui.show_hardware_cursor, &given.show_hardware_cursor);
        set(&mut tui.quiet_startup, &given.quiet_startup);
        set(&mut tui.code_block_indent, &given.code_block_indent);
        set(
            &mut tui.show_terminal_progress,
            &given.show_terminal_progress,
        );
        set(&mut tui.collapse_changelog, &given.collapse_changelog);
        set(&mut tui.show_images, &given.show_images);
        set(&mut tui.image_width_cells, &given.image_width_cells);
        set(
            &mut tui.warn_anthropic_extra_usage,
            &given.warn_anthropic_extra_usage,
        );
        set(&mut self.discover_skills, &layer.discover_skills);
        set(
            &mut self.enable_skill_commands,
            &layer.enable_skill_commands,
        );
        set(&mut self.mcp_enabled, &layer.mcp_enabled);
        set(&mut self.mcp_disabled_servers, &layer.mcp_disabled_servers);
        set(
            &mut self.lsp_diagnostics_on_write,
            &layer.lsp_diagnostics_on_write,
        );
        set(
            &mut self.lsp_diagnostics_on_edit,
            &layer.lsp_diagnostics_on_edit,
        );
        for (name, entry) in &layer.lsp_servers {
            self.lsp_servers
                .entry(name.clone())
                .or_default()
                .overlay(entry);
        }
        set_option(&mut self.lsp_idle_timeout_ms, &layer.lsp_idle_timeout_ms);
        set(&mut self.session_env_exclude, &layer.session_env_exclude);
        set(&mut self.session_env_include, &layer.session_env_include);
        set(&mut self.task.max_concurrency, &layer.task_max_concurrency);
        set(&mut self.task.max_running, &layer.task_max_running);
        set(&mut self.task.max_depth, &layer.task_max_depth);
        set(&mut self.task.max_turns, &layer.task_max_turns);
        set(&mut self.task.idle_timeout_ms, &layer.task_idle_timeout_ms);
        set(&mut self.task.loop_limit, &layer.task_loop_limit);
        set_option(&mut self.system_prompt, &layer.system_prompt);
        set_option(&mut self.append_system_prompt, &layer.append_system_prompt);
    }
}

impl SettingsFiles {
    /// The files for `cwd` (or only the global ones) given pi's agent dir and our config dir.
    pub fn new(pi_agent_dir: Option<&Path>, config_dir: Option<&Path>, cwd: Option<&Path>) -> Self {
        SettingsFiles {
            global: pi_agent_dir
                .into_iter()
                .chain(config_dir)
                .map(|dir| dir.join("settings.json"))
                .collect(),
            project: cwd.map(|cwd| cwd.join(".pi").join("settings.json")),
        }
    }
}
