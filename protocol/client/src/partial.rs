//! Rebuilding a streaming assistant message from `message_update` deltas.
//!
//! The daemon sends the partial message once (`message_start`, or the attach snapshot) and
//! then only deltas; clients that show or forward the whole partial (pi's exact JSON shapes)
//! apply each delta here. Applying every delta of a stream to its `message_start` gives the
//! message of its `message_end`, minus usage and stop reason, which only the end carries.

use pi_protocol::v1::message::{
    AssistantContent, AssistantMessage, AssistantMessageEvent, TextContent, ThinkingContent,
    ToolCall,
};

/// Applies one delta to `partial`.
pub fn apply(partial: &mut AssistantMessage, event: &AssistantMessageEvent) {
    let content = &mut partial.content;
    match event {
        AssistantMessageEvent::Start => {}
        AssistantMessageEvent::TextStart { content_index } => put(
            content,
            *content_index,
            AssistantContent::Text(TextContent {
                text: String::new(),
                text_signature: None,
            }),
        ),
        AssistantMessageEvent::TextDelta {
            content_index,
            delta,
        } => {
            if let Some(AssistantContent::Text(text)) = content.get_mut(*content_index) {
                text.text.push_str(delta);
            }
        }
        AssistantMessageEvent::TextEnd {
            content_index,
            content: full,
            signature,
        } => put(
            content,
            *content_index,
            AssistantContent::Text(TextContent {
                text: full.clone(),
                text_signature: signature.clone(),
            }),
        ),
        AssistantMessageEvent::ThinkingStart { content_index } => put(
            content,
            *content_index,
            AssistantContent::Thinking(ThinkingContent {
                thinking: String::new(),
                thinking_signature: None,
                redacted: false,
            }),
        ),
        AssistantMessageEvent::ThinkingDelta {
            content_index,
            delta,
        } => {
            if let Some(AssistantContent::Thinking(thinking)) = content.get_mut(*content_index) {
                thinking.thinking.push_str(delta);
            }
        }
        AssistantMessageEvent::ThinkingEnd {
            content_index,
            content: full,
            signature,
            redacted,
        } => put(
            content,
            *content_index,
            AssistantContent::Thinking(ThinkingContent {
                thinking: full.clone(),
                thinking_signature: signature.clone(),
                redacted: *redacted,
            }),
        ),
        AssistantMessageEvent::ToolcallStart {
            content_index,
            id,
            tool_name,
        } => put(
            content,
            *content_index,
            AssistantContent::ToolCall(ToolCall {
                id: id.clone(),
                name: tool_name.clone(),
                arguments: serde_json::Value::Object(serde_json::Map::new()).into(),
                thought_signature: None,
            }),
        ),
        AssistantMessageEvent::ToolcallDelta {
            content_index,
            arguments,
            ..
        } => {
            if let (Some(arguments), Some(AssistantContent::ToolCall(call))) =
                (arguments, content.get_mut(*content_index))
            {
                call.arguments.set(arguments.clone());
            }
        }
        AssistantMessageEvent::ToolcallEnd {
            content_index,
            tool_call,
        } => put(
            content,
            *content_index,
            AssistantContent::ToolCall(tool_call.clone()),
        ),
        AssistantMessageEvent::Done { message, .. } => *partial = message.clone(),
        AssistantMessageEvent::Error { error, .. } => *partial = error.clone(),
    }
}

/// Sets block `index`, appending when it is the next one (indices arrive in order).
fn put(content: &mut Vec<AssistantContent>, index: usize, block: AssistantContent) {
    if index < content.len() {
        content[index] = block;
    } else {
        content.push(block);
    }
}

#[cfg(test)]
mod tests {
    use pi_protocol::v1::message::{StopReason, Usage};

    use super::*;

    fn empty() -> AssistantMessage {
        AssistantMessage {
            content: Vec::new(),
            api: "anthropic-messages".to_owned(),
            provider: "p".to_owned(),
            model: "m".to_owned(),
            usage: Usage::default(),
            stop_reason: StopReason::Stop,
            error_message: None,
            timestamp: 0,
            response_id: None,
        }
    }

    #[test]
    fn deltas_rebuild_text_thinking_and_tool_calls() {
        let mut partial = empty();
        let events = [
            AssistantMessageEvent::ThinkingStart { content_index: 0 },
            AssistantMessageEvent::ThinkingDelta {
                content_index: 0,
                delta: "hm".to_owned(),
            },
            AssistantMessageEvent::TextStart { content_index: 1 },
            AssistantMessageEvent::TextDelta {
                content_index: 1,
                delta: "Hel".to_owned(),
            },
            AssistantMessageEvent::TextDelta {
                content_index: 1,
                delta: "lo".to_owned(),
            },
            AssistantMessageEvent::ToolcallStart {
                content_index: 2,
                id: "c1".to_owned(),
                tool_name: "read".to_owned(),
            },
            AssistantMessageEvent::ToolcallDelta {
                content_index: 2,
                delta: "{\"path\":".to_owned(),
                arguments: Some(serde_json::json!({})),
            },
            AssistantMessageEvent::ToolcallDelta {
                content_index: 2,
                delta: "\"a\"}".to_owned(),
                arguments: Some(serde_json::json!({"path": "a"})),
            },
        ];
        for event in &events {
            apply(&mut partial, event);
        }
        let json = serde_json::to_value(&partial.content).unwrap();
        assert_eq!(
            json,
            serde_json::json!([
                {"type": "thinking", "thinking": "hm"},
                {"type": "text", "text": "Hello"},
                {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a"}},
            ])
        );
    }
}
