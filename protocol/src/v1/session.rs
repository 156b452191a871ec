//! `session/*`: creating, listing, reading, attaching to and driving agent sessions.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::v1::entry::EntryRecord;
use crate::v1::event::{CompactionResult, SessionEventParams};
use crate::v1::message::{AssistantMessage, ImageContent, ToolResult};
use crate::v1::model::{ModelInfo, ModelRef};
use crate::v1::presence::AttachedClient;

/// What a session is, without its history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// Session id (UUID).
    pub id: String,
    /// Absolute working directory of its tools.
    pub cwd: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Creation time, Unix ms.
    pub created_at: i64,
    /// Last activity, Unix ms.
    pub updated_at: i64,
    /// The current model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelRef>,
    /// The current thinking level.
    pub thinking_level: String,
    /// The leaf entry; the current branch ends here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaf_id: Option<String>,
    /// Message entries in the session (all branches).
    pub message_count: u64,
    /// First user message text, for pickers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_message: Option<String>,
    /// The session this one was forked from, or, with `taskName`, the session whose `task`
    /// call started it (a subagent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_session_id: Option<String>,
    /// A subagent's task name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_name: Option<String>,
    /// Secret variables of the client that created the session (names like `*KEY*`,
    /// `*TOKEN*`, ...: never stored) that it lacks since it was loaded again; a client that
    /// has them supplies them with `session/setEnv`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_env: Vec<String>,
    /// `idle` or `running`.
    pub status: SessionStatus,
    /// The newest event sequence number.
    pub last_seq: u64,
    /// Warnings about the session for the user to see while they hold (for example a model id
    /// its provider does not list, used as a custom model id as pi does): in `session/create`'s
    /// response, `session/get`, the attach snapshot and `session_updated`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The pi session file it was opened from (`session/import {link}`), which its new
    /// entries are appended to in pi's format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pi_file: Option<String>,
    /// Questions (approvals, `ask`) in the session waiting for an answer, in `session/list`'s
    /// answer: a client shows which sessions wait for someone without attaching to each.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub questions: u32,
}

fn is_zero(value: &u32) -> bool {
    *value == 0
}

/// Whether a run is active.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SessionStatus {
    /// No run.
    Idle,
    /// A run is active.
    Running,
}

/// Params of `session/create`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionCreateParams {
    /// Absolute working directory; tools run here.
    pub cwd: String,
    /// Environment of the session's tools (the client's environment). Absent: the daemon's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<BTreeMap<String, String>>,
    /// Model: `provider/id`, an id, or a search term, with optional `:level`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Thinking level (`off`...`xhigh`); clamped to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    /// Active tool names; absent: the default set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Replaces the default system prompt body for this session's runs (pi's
    /// `--system-prompt`); the date and working directory still follow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Appended to the system prompt body for this session's runs (pi's
    /// `--append-system-prompt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub append_system_prompt: Option<String>,
    /// pi's `--tools` allowlist: only these tools, built-in or registered by the session's
    /// extensions, are available; names the session has no tool of are ignored, as pi
    /// ignores them. `[]` is pi's `--no-tools`. Give it or `tools`, not both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_allowlist: Option<Vec<String>>,
    /// Loads no discovered or configured skills (pi's `--no-skills`); `skills` still load.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_skills: bool,
    /// Skill files or directories the session loads besides the others (pi's `--skill`); a
    /// relative path is relative to `cwd`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skills: Vec<String>,
    /// Prompt template files or directories the session loads besides the others (pi's
    /// `--prompt-template`); a relative path is relative to `cwd`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompt_templates: Vec<String>,
    /// Loads no discovered or configured prompt templates (pi's `--no-prompt-templates`);
    /// `promptTemplates` still load.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_prompt_templates: bool,
    /// The system prompt carries no context files (`AGENTS.md`, `CLAUDE.md`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_context_files: bool,
    /// pi extensions this session loads besides the configured ones (pi's `-e FILE`):
    /// files, directories or package sources (`npm:…`, `git:…`, installed); a relative
    /// path is relative to `cwd`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
    /// Load none of the configured extensions (pi's `--no-extensions`); `extensions` still
    /// load.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_extensions: bool,
    /// Values for the flags the session's extensions register (pi's `--name[=value]` on its
    /// command line; `pi.getFlag`): a string, or `true` for a flag given alone. A name no
    /// extension of the session registers fails the creation (`invalid_params`, as pi
    /// refuses an unknown option); so does `true` for a string flag.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub extension_flags: std::collections::BTreeMap<String, serde_json::Value>,
}

/// Response of `session/prompt`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionPromptResponse {
    /// Whether the prompt started a run (events follow, up to `agent_end`); `false` when
    /// one of the session's extensions took it instead — its command ran, or an `input`
    /// handler answered it — and no event follows.
    pub started: bool,
}

/// Params naming a session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionIdParams {
    /// The session.
    pub session_id: String,
}

/// An empty response.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EmptyResponse {}

/// Params of `session/list`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionListParams {
    /// Only sessions with this working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Page size (default 50, at most 500).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// `nextCursor` of the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Only the subagents this session's `task` calls started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
}

/// Response of `session/list`: newest activity first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionListResponse {
    /// One page of sessions.
    pub sessions: Vec<SessionInfo>,
    /// Pass as `cursor` for the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// Response of `session/get`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionGetResponse {
    /// Metadata.
    pub info: SessionInfo,
    /// The session's own tools (the built-in ones `session/create` named, or the defaults).
    /// Its runs also offer `mcpTools`; where a name is in both, the own tool is the one.
    pub tools: Vec<String>,
    /// The MCP servers' tools its runs offer now (`mcp__<server>__<tool>`), from the servers
    /// the session uses — from its creation, or in a session loaded again from its next run
    /// on. A server starting for the first time joins when it has listed its tools.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp_tools: Vec<String>,
    /// Queued messages.
    pub queue: QueueState,
    /// Clients attached right now.
    pub attached_clients: u32,
    /// The system prompt the next run uses: built from the session's tools, working
    /// directory, context files, skills and custom or appended prompt, dated today.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Problems found in the session's settings files, context files, skills and prompt
    /// templates (the offending items are skipped or used as the message says).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_diagnostics: Vec<crate::v1::settings::ResourceDiagnostic>,
    /// Slash commands the session offers besides a client's built-ins: its prompt templates
    /// (`/name`), unless `enableSkillCommands` is off its skills (`/skill:name`), and its MCP
    /// servers' prompts (`/mcp:server:prompt args`). Send them as message text; the daemon
    /// expands them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<SlashCommand>,
    /// Keyboard shortcuts the session's pi extensions register (`pi.registerShortcut`): a
    /// client that has the key free runs one with `extensions/shortcut`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shortcuts: Vec<ExtensionShortcut>,
    /// The context files (`AGENTS.md`, `CLAUDE.md`) in the session's system prompt, absolute
    /// paths in prompt order (what pi's startup header lists as `[Context]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context_files: Vec<String>,
    /// The files of the pi extensions loaded for the session so far (what pi's startup
    /// header lists as `[Extensions]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
    /// The todo list of the current branch (oh-my-pi's `todo`); absent when empty.
    #[serde(default, skip_serializing_if = "crate::v1::todo::TodoList::is_empty")]
    pub todos: crate::v1::todo::TodoList,
    /// Rules from the agent config directories (oh-my-pi's discovery: `.pi/rules`, Cursor,
    /// Windsurf, Cline, Copilot…), in projects that turn oh-my-pi's tools on; other tools'
    /// instruction files are in `contextFiles`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<RuleInfo>,
    /// oh-my-pi's plan mode is on for the branch (see `session/setPlanMode`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub plan_mode: bool,
    /// The plan approved last on the branch, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_plan: Option<crate::v1::plan::ApprovedPlan>,
}

/// A rule a session found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RuleInfo {
    /// Its name (`rule://NAME`).
    pub name: String,
    /// Where it came from: `native`, `agents`, `cursor`, `windsurf`, `cline`, `github`.
    pub provider: String,
    /// The file.
    pub path: String,
    /// `always` (in the system prompt whole), `rulebook` (listed, read with `rule://`) or
    /// `stream` (fires when its condition matches the model's output).
    pub kind: String,
    /// What it is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The files it is about.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub globs: Vec<String>,
}

/// A keyboard shortcut an extension registered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionShortcut {
    /// pi's key id, lower-case (`ctrl+alt+p`, `f6`).
    pub key: String,
    /// What it does.
    pub description: String,
}

/// A slash command a session offers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlashCommand {
    /// The name after the slash (`review`, `skill:pdf`).
    pub name: String,
    /// What it does, as pi shows it.
    pub description: String,
    /// `template`, `skill` or `mcp` (an MCP server's prompt, `mcp:<server>:<prompt>`).
    pub source: String,
}

/// Queued steering and follow-up messages.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct QueueState {
    /// Steering messages (texts).
    pub steering: Vec<String>,
    /// Follow-up messages (texts).
    pub follow_up: Vec<String>,
}

/// Which entries `session/read` returns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReadScope {
    /// The current branch, root to leaf.
    #[default]
    Branch,
    /// Every entry, in creation order.
    Tree,
}

/// Params of `session/read`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionReadParams {
    /// The session.
    pub session_id: String,
    /// Branch (default) or whole tree.
    #[serde(default)]
    pub scope: ReadScope,
    /// Page size (default 200, at most 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// `nextCursor` of the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// Response of `session/read`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionReadResponse {
    /// One page of entries.
    pub entries: Vec<EntryRecord>,
    /// The leaf when the page was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaf_id: Option<String>,
    /// Pass as `cursor` for the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// Params of `session/attach`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionAttachParams {
    /// The session.
    pub session_id: String,
    /// The last `seq` this client saw; durable events after it are replayed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_seq: Option<u64>,
}

/// Response of `session/attach`: a snapshot, the replay, and from then on live events.
/// Nothing is missed or repeated between `replay` and the first live event.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionAttachResponse {
    /// The state right now.
    pub snapshot: SessionSnapshot,
    /// Events after `afterSeq`, in order (empty without `afterSeq`): every event, live ones
    /// included, when `gapless`; otherwise only the durable ones.
    pub replay: Vec<SessionEventParams>,
    /// `true` when `replay` holds every event after `afterSeq` (the session still remembered
    /// them): a client that applied events up to `afterSeq` applies the replay and has missed
    /// nothing, the streaming message included. `false` when only the durable events could
    /// be replayed: take the streaming state from the snapshot.
    #[serde(default)]
    pub gapless: bool,
}

/// The live state of a session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionSnapshot {
    /// Metadata (its `lastSeq` is the seq this snapshot reflects).
    pub info: SessionInfo,
    /// The assistant message being streamed, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming_message: Option<AssistantMessage>,
    /// Tool calls running now.
    pub running_tools: Vec<RunningTool>,
    /// Queued messages.
    pub queue: QueueState,
    /// Clients attached, this one included.
    pub attached_clients: u32,
    /// The attached clients with their drafts, this one included (see `session/presence`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<AttachedClient>,
}

/// A tool call in progress.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunningTool {
    /// Call id.
    pub tool_call_id: String,
    /// Tool name.
    pub tool_name: String,
    /// Raw arguments.
    pub args: serde_json::Value,
    /// The latest partial result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial_result: Option<ToolResult>,
}

/// Params of `session/prompt`, `session/steer` and `session/followUp`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionMessageParams {
    /// The session.
    pub session_id: String,
    /// The message text.
    pub text: String,
    /// Attached images.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImageContent>,
}

/// Params of `session/setModel`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionSetModelParams {
    /// The session.
    pub session_id: String,
    /// `provider/id`, an id, or a search term, with optional `:level`.
    pub model: String,
}

/// Response of `session/setModel`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionSetModelResponse {
    /// The model now in use.
    pub model: ModelInfo,
    /// The thinking level after clamping to the model.
    pub thinking_level: String,
    /// Warnings for the user (for example a model id its provider does not list, used as a
    /// custom model id as pi does).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Params of `session/setThinking`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionSetThinkingParams {
    /// The session.
    pub session_id: String,
    /// `off`, `minimal`, `low`, `medium`, `high` or `xhigh`.
    pub level: String,
}

/// Response of `session/setThinking`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionSetThinkingResponse {
    /// The level in effect (clamped to the model).
    pub level: String,
}

/// Params of `session/setName`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionSetNameParams {
    /// The session.
    pub session_id: String,
    /// The new name (trimmed; must not be empty).
    pub name: String,
}

/// Params of `session/setPolicy`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionSetPolicyParams {
    /// The session.
    pub session_id: String,
    /// `yolo`, `ask-writes`, `ask-all` or `read-only`.
    pub mode: String,
}

/// Response of `session/setPolicy`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionSetPolicyResponse {
    /// The session's mode now.
    pub mode: String,
}

/// Params of `session/setEnv`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionSetEnvParams {
    /// The session.
    pub session_id: String,
    /// Variables; only those the session lacks (`SessionInfo.missingEnv`) are taken.
    pub env: BTreeMap<String, String>,
}

/// Params of `session/setApiKey`.
#[derive(Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionSetApiKeyParams {
    /// The session.
    pub session_id: String,
    /// The provider the key is for (the session's model's, for pi's `--api-key`).
    pub provider: String,
    /// The key; never logged or echoed.
    pub key: String,
}

impl std::fmt::Debug for SessionSetApiKeyParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionSetApiKeyParams")
            .field("session_id", &self.session_id)
            .field("provider", &self.provider)
            .field("key", &"<redacted>")
            .finish()
    }
}

/// The secret variable under which a session holds the API key `session/setApiKey` gave
/// it for `provider` (in memory only; its tools never see it).
pub fn runtime_api_key_variable(provider: &str) -> String {
    format!("{RUNTIME_API_KEY_PREFIX}{provider}")
}

/// The prefix of [`runtime_api_key_variable`]s.
pub const RUNTIME_API_KEY_PREFIX: &str = "PI_RUNTIME_API_KEY:";

/// Response of `session/setEnv`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionSetEnvResponse {
    /// The names taken (in memory only).
    pub accepted: Vec<String>,
    /// What the session still lacks.
    pub missing_env: Vec<String>,
}

/// Params of `session/label`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionLabelParams {
    /// The session.
    pub session_id: String,
    /// The entry to label.
    pub entry_id: String,
    /// The label; absent or empty clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// Params of `session/fork` and `session/navigate`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionEntryParams {
    /// The session.
    pub session_id: String,
    /// The entry.
    pub entry_id: String,
}

/// Response of `session/fork`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionForkResponse {
    /// The new session (history up to the parent of the chosen message).
    pub session: SessionInfo,
    /// The chosen message's text, to edit and send again.
    pub text: String,
}

/// Why a client leaves a session for another (pi's `session_before_switch` reason).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum SwitchReason {
    /// For a new session (pi's `/new`).
    #[default]
    New,
    /// For another existing session (pi's `/resume`).
    Resume,
}

/// Params of `session/beforeSwitch`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionBeforeSwitchParams {
    /// The session the client leaves.
    pub session_id: String,
    /// Why.
    pub reason: SwitchReason,
    /// The session it goes to, when it exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_session_id: Option<String>,
}

/// Response of `session/beforeSwitch`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionBeforeSwitchResponse {
    /// The session's extensions want the client to stay.
    pub cancelled: bool,
}

/// Params of `session/navigate`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionNavigateParams {
    /// The session.
    pub session_id: String,
    /// The entry to continue from.
    pub entry_id: String,
    /// Summarize the branch being left (a `branch_summary` entry at the new position).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub summarize: bool,
    /// Extra instructions for the summary (`Additional focus: …`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Use `instructions` instead of pi's summary instructions.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replace_instructions: bool,
}

/// Response of `session/navigate`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionNavigateResponse {
    /// The new leaf (the summary entry when one was written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaf_id: Option<String>,
    /// When navigating to a user message: its text, to edit and send again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The `branch_summary` entry written for the branch left behind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary_entry_id: Option<String>,
    /// The summary was aborted (`session/abort`); the leaf did not move.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub aborted: bool,
}

/// Params of `session/compact`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionCompactParams {
    /// The session.
    pub session_id: String,
    /// What the summary should focus on (`Additional focus: …`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

/// Response of `session/compact`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionCompactResponse {
    /// What was stored; absent when aborted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<CompactionResult>,
    /// The compaction was aborted (`session/abort`); nothing was stored.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub aborted: bool,
}

/// Response of `session/stats` (pi's `SessionStats`, over the current context).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionStatsResponse {
    /// The session.
    pub session_id: String,
    /// User messages.
    pub user_messages: u64,
    /// Assistant messages.
    pub assistant_messages: u64,
    /// Tool calls.
    pub tool_calls: u64,
    /// Tool results.
    pub tool_results: u64,
    /// All messages.
    pub total_messages: u64,
    /// Token sums.
    pub tokens: TokenTotals,
    /// Cost sum, USD.
    pub cost: f64,
}

/// Token sums.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenTotals {
    /// Input.
    pub input: u64,
    /// Output.
    pub output: u64,
    /// Cache reads.
    pub cache_read: u64,
    /// Cache writes.
    pub cache_write: u64,
    /// Sum of the four.
    pub total: u64,
}

/// Params of `session/import`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionImportParams {
    /// Absolute path of a pi session file (JSONL, versions 1 to 3).
    pub path: String,
    /// Open the file rather than copy it: a session already opened from it that holds
    /// every entry the file has is returned as it is; otherwise a new one is, and (for a
    /// version 3 file) its new entries are appended to the file as pi writes them, unless
    /// the `piSessionWriteBack` setting is `false`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub link: bool,
}

/// Format of `session/export`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExportFormat {
    /// pi's session file (JSONL v3), which pi can open.
    #[default]
    Jsonl,
    /// A self-contained HTML page.
    Html,
}

/// Params of `session/export`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionExportParams {
    /// The session.
    pub session_id: String,
    /// JSONL (default) or HTML.
    #[serde(default)]
    pub format: ExportFormat,
    /// Absolute path to write; absent: the content is returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// Response of `session/export`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionExportResponse {
    /// The exported text, when no path was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// The file written, when a path was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// Params of `session/bash`: a user shell command (pi's `!cmd`; `!!cmd` sets
/// `excludeFromContext`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionBashParams {
    /// The session.
    pub session_id: String,
    /// The command line, run by the session's shell in its cwd and environment.
    pub command: String,
    /// Record the command and its output, but never send them to the model (`!!cmd`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exclude_from_context: bool,
}

/// Response of `session/bash`: what was recorded as a `bashExecution` message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionBashResponse {
    /// Sanitized, tail-truncated output (2000 lines / 50 KB).
    pub output: String,
    /// Exit code; absent when the command was killed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Killed before it exited (daemon shutdown).
    pub cancelled: bool,
    /// `output` was truncated; the full output is `fullOutputPath`.
    pub truncated: bool,
    /// `artifact://ID` of the full output, readable with `artifact/read`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
    /// The entry storing the message; absent while a run is active (the message is stored
    /// when the run ends, as in pi).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_id: Option<String>,
}
