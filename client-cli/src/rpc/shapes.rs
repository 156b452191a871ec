//! pi's RPC shapes built from daemon answers: responses, `Model`, the message context of
//! `get_messages`, and the JSONL framing of stdin (LF only; U+2028 and U+2029 stay inside
//! strings).

use pi_protocol::v1::message::{
    AgentMessage, BranchSummaryMessage, CompactionSummaryMessage, CustomMessage,
};
use pi_protocol::v1::{ModelInfo, SessionEntry};
use serde_json::{Value, json};

/// A success response, echoing `id` when the command had one.
pub fn success(id: Option<&Value>, command: &str, data: Option<Value>) -> Value {
    let mut response = json!({"type": "response", "command": command, "success": true});
    if let Some(id) = id {
        response["id"] = id.clone();
    }
    if let Some(data) = data {
        response["data"] = data;
    }
    response
}

/// A failure response, echoing `id` when the command had one (pi omits it in most errors).
pub fn failure(id: Option<&Value>, command: &str, error: impl Into<String>) -> Value {
    let mut response = json!({
        "type": "response",
        "command": command,
        "success": false,
        "error": error.into(),
    });
    if let Some(id) = id {
        response["id"] = id.clone();
    }
    response
}

/// pi's `Model` object (§6.3) for a daemon model.
pub fn pi_model(model: &ModelInfo) -> Value {
    let input = if model.images {
        json!(["text", "image"])
    } else {
        json!(["text"])
    };
    json!({
        "id": model.id,
        "name": model.name,
        "api": model.api,
        "provider": model.provider,
        "baseUrl": model.base_url.clone().unwrap_or_default(),
        "reasoning": model.reasoning,
        "input": input,
        "cost": {
            "input": model.input_cost,
            "output": model.output_cost,
            "cacheRead": model.cache_read_cost.unwrap_or(0.0),
            "cacheWrite": model.cache_write_cost.unwrap_or(0.0),
        },
        "contextWindow": model.context_window,
        "maxTokens": model.max_tokens,
    })
}

/// The messages a branch gives the model (pi's `buildSessionContext`): message entries,
/// custom messages and branch summaries in order; after the newest compaction, its summary
/// first, then the kept entries from `firstKeptEntryId`, then what followed.
pub fn context_messages(branch: &[SessionEntry]) -> Vec<AgentMessage> {
    let compaction = branch
        .iter()
        .rposition(|entry| matches!(entry, SessionEntry::Compaction { .. }));
    let mut messages = Vec::new();
    let push = |entry: &SessionEntry, messages: &mut Vec<AgentMessage>| match entry {
        SessionEntry::Message { message, .. } => messages.push(message.clone()),
        SessionEntry::CustomMessage {
            custom_type,
            content,
            display,
            details,
            timestamp,
            ..
        } => messages.push(AgentMessage::Custom(CustomMessage {
            custom_type: custom_type.clone(),
            content: content.clone(),
            display: *display,
            details: details.clone(),
            timestamp: millis(timestamp),
        })),
        SessionEntry::BranchSummary {
            from_id,
            summary,
            timestamp,
            ..
        } if !summary.is_empty() => {
            messages.push(AgentMessage::BranchSummary(BranchSummaryMessage {
                summary: summary.clone(),
                from_id: from_id.clone(),
                timestamp: millis(timestamp),
            }));
        }
        SessionEntry::BranchSummary { .. }
        | SessionEntry::ThinkingLevelChange { .. }
        | SessionEntry::ModelChange { .. }
        | SessionEntry::Compaction { .. }
        | SessionEntry::Custom { .. }
        | SessionEntry::Label { .. }
        | SessionEntry::SessionInfo { .. } => {}
    };
    match compaction.map(|index| (index, &branch[index])) {
        Some((
            index,
            SessionEntry::Compaction {
                summary,
                first_kept_entry_id,
                tokens_before,
                timestamp,
                ..
            },
        )) => {
            messages.push(AgentMessage::CompactionSummary(CompactionSummaryMessage {
                summary: summary.clone(),
                tokens_before: *tokens_before,
                timestamp: millis(timestamp),
            }));
            let kept_from = branch[..index]
                .iter()
                .position(|entry| entry_id(entry) == first_kept_entry_id)
                .unwrap_or(index);
            for entry in branch[kept_from..index].iter().chain(&branch[index + 1..]) {
                push(entry, &mut messages);
            }
        }
        _ => {
            for entry in branch {
                push(entry, &mut messages);
            }
        }
    }
    messages
}

fn entry_id(entry: &SessionEntry) -> &str {
    match entry {
        SessionEntry::Message { id, .. }
        | SessionEntry::ThinkingLevelChange { id, .. }
        | SessionEntry::ModelChange { id, .. }
        | SessionEntry::Compaction { id, .. }
        | SessionEntry::BranchSummary { id, .. }
        | SessionEntry::Custom { id, .. }
        | SessionEntry::CustomMessage { id, .. }
        | SessionEntry::Label { id, .. }
        | SessionEntry::SessionInfo { id, .. } => id,
    }
}

/// An entry's ISO timestamp as Unix ms (0 when unreadable).
fn millis(iso: &str) -> i64 {
    let Some((date, time)) = iso.split_once('T') else {
        return 0;
    };
    let Some(day) = pi_util::time::millis_from_date(date) else {
        return 0;
    };
    let clock = time.trim_end_matches('Z');
    let mut parts = clock.split(':');
    let hours: i64 = parts.next().and_then(|h| h.parse().ok()).unwrap_or(0);
    let minutes: i64 = parts.next().and_then(|m| m.parse().ok()).unwrap_or(0);
    let seconds: f64 = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0.0);
    day + (hours * 3600 + minutes * 60) * 1000 + (seconds * 1000.0).round() as i64
}

/// Splits stdin bytes into records on LF only, stripping one trailing CR; U+2028 and U+2029
/// (multi-byte in UTF-8) never split a record.
#[derive(Debug, Default)]
pub struct LineSplitter {
    buffer: Vec<u8>,
}

impl LineSplitter {
    /// Feeds bytes; returns the complete records they finish.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        self.buffer.extend_from_slice(bytes);
        let mut records = Vec::new();
        while let Some(end) = self.buffer.iter().position(|&byte| byte == b'\n') {
            let mut line: Vec<u8> = self.buffer.drain(..=end).collect();
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            records.push(String::from_utf8_lossy(&line).into_owned());
        }
        records
    }

    /// The final record without a trailing LF, if any.
    pub fn finish(&mut self) -> Option<String> {
        if self.buffer.is_empty() {
            return None;
        }
        let mut line = std::mem::take(&mut self.buffer);
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        Some(String::from_utf8_lossy(&line).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_split_on_lf_only() {
        let mut splitter = LineSplitter::default();
        let input = "{\"a\":\"x\u{2028}y\u{2029}z\"}\r\n{\"b\":1}\n{\"c\"";
        let mut records = Vec::new();
        // Split at every byte: records never depend on how reads are chunked.
        for byte in input.as_bytes() {
            records.extend(splitter.push(std::slice::from_ref(byte)));
        }
        assert_eq!(records, ["{\"a\":\"x\u{2028}y\u{2029}z\"}", "{\"b\":1}"]);
        splitter.push(b":2}");
        assert_eq!(splitter.finish().as_deref(), Some("{\"c\":2}"));
        assert_eq!(splitter.finish(), None);
    }

    #[test]
    fn responses_always_echo_ids() {
        let id = json!("r1");
        assert_eq!(
            failure(Some(&id), "frob", "Unknown command: frob"),
            json!({"type": "response", "command": "frob", "success": false,
                   "error": "Unknown command: frob", "id": "r1"})
        );
        assert_eq!(
            success(None, "abort", None),
            json!({"type": "response", "command": "abort", "success": true})
        );
    }

    #[test]
    fn entry_times_become_unix_millis() {
        assert_eq!(millis("2026-03-15T10:20:30.123Z"), 1_773_570_030_123);
        assert_eq!(millis("nonsense"), 0);
    }
}
