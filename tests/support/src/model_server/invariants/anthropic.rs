//! Anthropic Messages conversations: tool results, ids, thinking signatures, empty content.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

/// `tool_result` blocks sit first in the user message right after the assistant message with
/// the `tool_use`, which they all answer; ids match `[a-zA-Z0-9_-]+`; thinking is signed;
/// content and text are not empty.
pub(super) fn check_messages(messages: &[Value], problems: &mut Vec<String>) {
    let mut tool_uses: HashMap<String, usize> = HashMap::new();
    let mut answered: HashSet<String> = HashSet::new();
    // The tool_use ids of the previous message when it was an assistant message.
    let mut awaiting: Vec<String> = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        let role = message["role"].as_str().unwrap_or_default();
        if role != "user" && role != "assistant" {
            problems.push(format!(
                "messages[{i}].role must be user or assistant, not {role:?}"
            ));
        }
        let blocks: &[Value] = match &message["content"] {
            Value::Array(blocks) => blocks,
            Value::String(_) => &[],
            _ => {
                problems.push(format!(
                    "messages[{i}].content must be a string or an array of blocks"
                ));
                &[]
            }
        };
        let empty = match &message["content"] {
            Value::Array(blocks) => blocks.is_empty(),
            Value::String(text) => text.is_empty(),
            _ => false,
        };
        // The API allows an empty final assistant message (a prefill) and nothing else empty.
        if empty && !(role == "assistant" && i + 1 == messages.len()) {
            problems.push(format!("messages[{i}].content must not be empty"));
        }
        let mut results = Vec::new();
        let mut tool_uses_here = Vec::new();
        let mut other_content_seen = false;
        for (b, block) in blocks.iter().enumerate() {
            let at = format!("messages[{i}].content[{b}]");
            let block_type = block["type"].as_str().unwrap_or_default();
            match block_type {
                "text" if block["text"].as_str().is_none_or(str::is_empty) => {
                    problems.push(format!("{at}: text blocks must be non-empty"));
                }
                "thinking" if block["signature"].as_str().is_none_or(str::is_empty) => {
                    problems.push(format!("{at}: thinking block without a signature"));
                }
                "tool_use" => {
                    let id = block["id"].as_str().unwrap_or_default();
                    let valid_id = !id.is_empty()
                        && id
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                    if !valid_id {
                        problems.push(format!(
                            "{at}: tool_use id {id:?} must match ^[a-zA-Z0-9_-]+$"
                        ));
                    }
                    if block["name"].as_str().is_none_or(str::is_empty) {
                        problems.push(format!("{at}: tool_use without a name"));
                    }
                    if !block["input"].is_object() {
                        problems.push(format!("{at}: tool_use input must be an object"));
                    }
                    if role != "assistant" {
                        problems.push(format!("{at}: tool_use outside an assistant message"));
                    }
                    if tool_uses.insert(id.to_owned(), i).is_some() {
                        problems.push(format!("{at}: tool_use id {id:?} is used twice"));
                    }
                    tool_uses_here.push(id.to_owned());
                }
                "tool_result" => {
                    if other_content_seen {
                        problems.push(format!(
                            "{at}: tool_result blocks must come before any other content"
                        ));
                    }
                    if role != "user" {
                        problems.push(format!("{at}: tool_result outside a user message"));
                    }
                    results.push((
                        at,
                        block["tool_use_id"].as_str().unwrap_or_default().to_owned(),
                    ));
                }
                "" => problems.push(format!("{at}: content block without a type")),
                _ => {}
            }
            other_content_seen |= block_type != "tool_result";
        }
        for (at, id) in results {
            if answered.contains(&id) {
                problems.push(format!("{at}: second tool_result for tool_use {id:?}"));
            } else if awaiting.contains(&id) {
                answered.insert(id);
            } else if let Some(k) = tool_uses.get(&id) {
                problems.push(format!(
                    "{at}: tool_result for {id:?} does not directly follow its tool_use in messages[{k}]"
                ));
            } else {
                problems.push(format!(
                    "{at}: orphan tool_result: no earlier tool_use has id {id:?}"
                ));
            }
        }
        for id in awaiting.iter().filter(|id| !answered.contains(*id)) {
            problems.push(format!(
                "messages[{}]: tool_use {id:?} has no tool_result in messages[{i}]",
                i - 1
            ));
        }
        awaiting = tool_uses_here;
    }
    for id in &awaiting {
        problems.push(format!(
            "tool_use {id:?} in the last message has no tool_result"
        ));
    }
}
