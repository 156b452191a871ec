//! Session events: the `session/event` notification. The vocabulary is pi's (`agent_start`,
//! `message_update`, `tool_execution_end`, `compaction_start`, ...) plus the daemon's own
//! (`queue_update`, `entry_added`, `leaf_changed`, `session_error`, `tools_wait_start`,
//! `tools_wait_end`).
//!
//! Every event has a per-session, strictly increasing `seq`. Durable events (`message_end` of
//! stored messages and `entry_added`) are backed by stored entries and are replayed by
//! `session/attach {afterSeq}`; the others are live only.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::v1::entry::SessionEntry;
use crate::v1::message::{
    AgentMessage, AssistantMessage, AssistantMessageEvent, ToolResult, ToolResultMessage,
};
use crate::v1::session::SessionInfo;

/// Params of the `session/event` notification.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionEventParams {
    /// The session.
    pub session_id: String,
    /// Per-session sequence number, strictly increasing.
    pub seq: u64,
    /// The event.
    pub event: SessionEvent,
}

/// One session event, tagged by `type`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum SessionEvent {
    /// A run began.
    AgentStart,
    /// A run ended. Unlike pi's `agent_end`, the run's messages are not repeated: each was
    /// announced by its `message_end`; `messageCount` says how many there were.
    AgentEnd {
        /// Messages the run produced, prompts included.
        message_count: u32,
    },
    /// A turn began.
    TurnStart,
    /// A turn ended.
    TurnEnd {
        /// The turn's assistant message.
        message: AssistantMessage,
        /// Its tool results.
        tool_results: Vec<ToolResultMessage>,
    },
    /// A message began (for the assistant: the empty partial).
    MessageStart {
        /// The message.
        message: AgentMessage,
    },
    /// The streaming assistant message changed.
    MessageUpdate {
        /// The delta.
        assistant_message_event: AssistantMessageEvent,
    },
    /// A message is complete. Durable when `entryId` is set (stored before it was sent).
    MessageEnd {
        /// The final message.
        message: AgentMessage,
        /// The entry that stores it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        entry_id: Option<String>,
    },
    /// A tool call began (raw arguments).
    ToolExecutionStart {
        /// Call id.
        tool_call_id: String,
        /// Tool name.
        tool_name: String,
        /// Raw arguments.
        args: Value,
    },
    /// A tool reported its result so far (replaces the previous update).
    ToolExecutionUpdate {
        /// Call id.
        tool_call_id: String,
        /// Tool name.
        tool_name: String,
        /// Raw arguments.
        args: Value,
        /// The result so far.
        partial_result: ToolResult,
    },
    /// A tool call finished.
    ToolExecutionEnd {
        /// Call id.
        tool_call_id: String,
        /// Tool name.
        tool_name: String,
        /// The result.
        result: ToolResult,
        /// The call failed.
        is_error: bool,
    },
    /// The steering or follow-up queue changed.
    QueueUpdate {
        /// Queued steering messages (texts).
        steering: Vec<String>,
        /// Queued follow-ups (texts).
        follow_up: Vec<String>,
    },
    /// A non-message entry was stored (model or thinking change, label, name, summaries).
    /// Durable.
    EntryAdded {
        /// The entry.
        entry: SessionEntry,
    },
    /// The leaf moved (navigation); the context now ends at `leafId`.
    LeafChanged {
        /// The new leaf; `null` for an empty branch.
        leaf_id: Option<String>,
    },
    /// Session metadata changed (name, model, thinking level, status).
    SessionUpdated {
        /// The new metadata.
        info: SessionInfo,
    },
    /// The session's todo list changed (the `todo` tool, `session/setTodos`, navigation to
    /// another branch). Durable through the entries it comes from.
    TodosUpdated {
        /// The whole list.
        todos: crate::v1::todo::TodoList,
    },
    /// Plan mode was turned on or off (`session/setPlanMode`, `/plan`, the user's answer to
    /// `exit_plan_mode`, navigation to another branch). Durable through the entries it comes
    /// from.
    PlanModeChanged {
        /// Whether it is on now.
        enabled: bool,
    },
    /// A run failed with a transient provider error and will be retried after `delayMs`
    /// (pi's `auto_retry_start`). The failed message stays in the tree but is never sent to
    /// the model again. Not durable.
    AutoRetryStart {
        /// Which retry this is, from 1.
        attempt: u32,
        /// Retries allowed.
        max_attempts: u32,
        /// Wait before the retry, in milliseconds (backoff or the server's `Retry-After`).
        delay_ms: u64,
        /// The error being retried.
        error_message: String,
    },
    /// Retrying ended (pi's `auto_retry_end`): a retry succeeded, the retries ran out, or they
    /// were cancelled (`session/abortRetry`, `session/abort`). Not durable.
    AutoRetryEnd {
        /// A retry produced a successful reply.
        success: bool,
        /// The last attempt made.
        attempt: u32,
        /// Why retrying stopped, when it failed (`Retry cancelled` when cancelled).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        final_error: Option<String>,
    },
    /// A model request of the run waits for tools on their way: MCP servers that have never
    /// listed their tools (a definition's first use in a directory, or a fresh daemon) and are
    /// starting. Ends with `tools_wait_end`, at the latest after `timeoutMs` (`[mcp]
    /// first_start_wait_secs`). Not durable.
    ToolsWaitStart {
        /// The servers waited for, by the session's names for them.
        sources: Vec<String>,
        /// The longest the wait lasts, in milliseconds.
        timeout_ms: u64,
    },
    /// The wait is over; the request goes out with the tools that are there. Not durable.
    ToolsWaitEnd {
        /// The servers still not ready (failed, or slower than the wait): their tools join a
        /// later turn once they are.
        not_ready: Vec<String>,
        /// The run was aborted during the wait.
        aborted: bool,
    },
    /// The session's run failed inside the daemon (a bug); the session carries on.
    SessionError {
        /// What happened.
        message: String,
    },
    /// A compaction began (pi's `compaction_start`).
    CompactionStart {
        /// Why.
        reason: CompactionReason,
    },
    /// A compaction ended (pi's `compaction_end`). On success the `compaction` entry was
    /// stored (and announced by `entry_added`) before this event.
    CompactionEnd {
        /// Why it ran.
        reason: CompactionReason,
        /// What was stored; absent when it failed or was aborted.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<CompactionResult>,
        /// It was aborted (`session/abort`).
        aborted: bool,
        /// The failed turn is retried next (overflow recovery).
        will_retry: bool,
        /// Why it failed, e.g. `Auto-compaction failed: …`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error_message: Option<String>,
    },
}

/// Why a compaction ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CompactionReason {
    /// Asked for with `session/compact`.
    Manual,
    /// The context passed `contextWindow - reserveTokens` after a run or before a prompt.
    Threshold,
    /// The model rejected the context as too long; the turn is retried after compacting.
    Overflow,
}

/// What a compaction stored (pi's `CompactionResult`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CompactionResult {
    /// The summary that replaces the history before `firstKeptEntryId`.
    pub summary: String,
    /// The first entry kept verbatim.
    pub first_kept_entry_id: String,
    /// Context tokens before compacting.
    pub tokens_before: u64,
    /// `{readFiles, modifiedFiles}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}
