//! Crash recovery: runs that were active when the daemon died are closed at the next start.
//!
//! Nothing half-written exists (only complete messages are stored), so recovery appends what a
//! clean abort would have: an error result for each tool call of the last assistant message
//! that has none, then an aborted assistant message marking the interrupted turn. The model
//! never sees aborted messages; the next prompt continues from a consistent context.

use pi_protocol::v1::SessionEntry;
use pi_protocol::v1::message::{
    AgentMessage, AssistantContent, AssistantMessage, StopReason, TextContent, ToolResultMessage,
    Usage, UserContent,
};

use crate::entries::{self, EntryBase, EntryIds};
use crate::{SessionError, storage, stored_entries};
use pi_store::Store;
use pi_util::time::now_millis;

/// The text of a tool result for a call that a crash interrupted.
pub const INTERRUPTED_TOOL: &str =
    "Tool execution was interrupted: the daemon stopped before the call finished.";
/// The error message of the marker that closes an interrupted turn.
pub const INTERRUPTED_TURN: &str = "Interrupted: the daemon stopped during this turn.";

/// Closes every interrupted run; returns how many sessions were repaired.
/// `write_back` says whether the settings of a working directory let sessions opened from
/// pi's files append to them.
pub async fn recover_interrupted(
    store: &Store,
    write_back: impl Fn(&str) -> bool,
) -> Result<usize, SessionError> {
    let ids = store.interrupted_sessions().await.map_err(storage(store))?;
    for id in &ids {
        let Some(mut row) = store.session(id).await.map_err(storage(store))? else {
            continue;
        };
        let branch: Vec<SessionEntry> = store
            .branch(id, row.leaf_id.as_deref())
            .await
            .map_err(storage(store))?
            .iter()
            .map(entries::parse_entry)
            .collect::<Result<_, _>>()
            .map_err(SessionError::internal)?;
        let existing = store.entry_ids(id).await.map_err(storage(store))?;
        let mut ids = EntryIds::new(existing.iter().map(String::as_str));
        let now = now_millis();
        let messages: Vec<&AgentMessage> = branch
            .iter()
            .filter_map(|entry| match entry {
                SessionEntry::Message { message, .. } => Some(message),
                _ => None,
            })
            .collect();
        let mut additions: Vec<AgentMessage> = Vec::new();
        if let Some(position) = messages
            .iter()
            .rposition(|m| matches!(m, AgentMessage::Assistant(_)))
            && let AgentMessage::Assistant(assistant) = messages[position]
        {
            let answered: Vec<&str> = messages[position + 1..]
                .iter()
                .filter_map(|m| match m {
                    AgentMessage::ToolResult(result) => Some(result.tool_call_id.as_str()),
                    _ => None,
                })
                .collect();
            for block in &assistant.content {
                if let AssistantContent::ToolCall(call) = block
                    && !answered.contains(&call.id.as_str())
                {
                    additions.push(AgentMessage::ToolResult(ToolResultMessage {
                        tool_call_id: call.id.clone(),
                        tool_name: call.name.clone(),
                        content: vec![UserContent::Text(TextContent {
                            text: INTERRUPTED_TOOL.to_owned(),
                            text_signature: None,
                        })],
                        details: None,
                        is_error: true,
                        timestamp: now,
                    }));
                }
            }
        }
        let ends_cleanly = matches!(messages.last(), Some(AgentMessage::Assistant(last)) if last.stop_reason != StopReason::ToolUse);
        if !additions.is_empty() || (!ends_cleanly && !messages.is_empty()) {
            let (provider, model) = row.model.clone().unwrap_or_default();
            additions.push(AgentMessage::Assistant(AssistantMessage {
                content: Vec::new(),
                api: String::new(),
                provider,
                model,
                usage: Usage::default(),
                stop_reason: StopReason::Aborted,
                error_message: Some(INTERRUPTED_TURN.to_owned()),
                timestamp: now,
                response_id: None,
            }));
        }
        let mut parent = row.leaf_id.clone();
        let mut new = Vec::with_capacity(additions.len());
        for message in additions {
            let base = EntryBase::new(&mut ids, parent.clone(), now);
            parent = Some(base.id.clone());
            new.push(SessionEntry::Message {
                id: base.id,
                parent_id: base.parent_id,
                timestamp: base.timestamp,
                message,
            });
        }
        let stored = stored_entries(&new, row.last_seq + 1)?;
        row.message_count += stored.len() as u64;
        row.leaf_id = parent;
        row.last_seq += stored.len() as u64;
        row.running = false;
        row.updated_at = now;
        let appended = stored.len();
        let bodies: Vec<String> = match &row.start_options.pi_file {
            Some(_) if write_back(&row.cwd) => {
                stored.iter().map(|entry| entry.body.clone()).collect()
            }
            _ => Vec::new(),
        };
        store
            .append_entries(&row, stored)
            .await
            .map_err(storage(store))?;
        if let (Some(path), false) = (&row.start_options.pi_file, bodies.is_empty()) {
            let lines: Vec<&str> = bodies.iter().map(String::as_str).collect();
            if let Err(error) = crate::pi_format::append_to_file(std::path::Path::new(path), &lines)
            {
                tracing::warn!(session = id, path, %error, "cannot append to the pi session file");
            }
        }
        tracing::warn!(
            session = id,
            appended,
            "closed a run interrupted by a crash"
        );
    }
    Ok(ids.len())
}
