//! The unified event stream of one response, in pi's vocabulary (`start`, `text_*`,
//! `thinking_*`, `toolcall_*`, `done`, `error`), and [`AssistantStream`], which applies each
//! event to the partial message it exposes.
//!
//! Events carry deltas only. Instead of repeating the whole partial message in every event (pi's
//! quadratic habit), the stream keeps one partial up to date: after `next()` returns an event,
//! `partial()` is the message with that event applied.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::model::Model;
use crate::types::{
    AssistantContent, AssistantMessage, StopReason, TextContent, ThinkingContent, ToolCall,
};

/// How a successful response ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum DoneReason {
    /// The model finished.
    Stop,
    /// The output token limit was hit.
    Length,
    /// The model wants tool results.
    ToolUse,
}

/// How a failed response ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ErrorReason {
    /// The request failed.
    Error,
    /// The request was cancelled.
    Aborted,
}

/// One event of a response stream. `content_index` is the block's index in the message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum StreamEvent {
    /// The response began.
    Start,
    /// A text block began.
    TextStart {
        /// Block index.
        content_index: usize,
    },
    /// More text.
    TextDelta {
        /// Block index.
        content_index: usize,
        /// The new text.
        delta: String,
    },
    /// A text block ended.
    TextEnd {
        /// Block index.
        content_index: usize,
        /// The whole text of the block.
        content: String,
        /// The block's signature, if the provider gave one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    /// A thinking block began.
    ThinkingStart {
        /// Block index.
        content_index: usize,
    },
    /// More thinking.
    ThinkingDelta {
        /// Block index.
        content_index: usize,
        /// The new text.
        delta: String,
    },
    /// A thinking block ended.
    ThinkingEnd {
        /// Block index.
        content_index: usize,
        /// The whole text of the block.
        content: String,
        /// The block's signature, if the provider gave one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
        /// The reasoning was redacted by the provider.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        redacted: bool,
    },
    /// A tool call began.
    ToolcallStart {
        /// Block index.
        content_index: usize,
        /// The call id.
        id: String,
        /// The tool name.
        tool_name: String,
    },
    /// More argument JSON.
    ToolcallDelta {
        /// Block index.
        content_index: usize,
        /// The raw JSON fragment.
        delta: String,
        /// The arguments parsed so far (best effort), when they were re-parsed for this delta.
        /// Large arguments are re-parsed only as they grow by a quarter, so a long argument
        /// stream stays linear; absent means "unchanged since the last one".
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arguments: Option<Value>,
    },
    /// A tool call ended.
    ToolcallEnd {
        /// Block index.
        content_index: usize,
        /// The complete call.
        tool_call: ToolCall,
    },
    /// The response succeeded. Terminal.
    Done {
        /// Why it ended.
        reason: DoneReason,
        /// The final message (boxed: it is large and comes once, while the per-token
        /// variants move through several channels).
        message: Box<AssistantMessage>,
    },
    /// The response failed or was aborted. Terminal.
    Error {
        /// Failure or abort.
        reason: ErrorReason,
        /// The partial message with `stopReason` `error`/`aborted` and `errorMessage`.
        error: Box<AssistantMessage>,
    },
}

impl StreamEvent {
    /// Whether this is the last event of a stream.
    pub fn is_terminal(&self) -> bool {
        matches!(self, StreamEvent::Done { .. } | StreamEvent::Error { .. })
    }
}

/// Events buffered between a provider task and its consumer.
const STREAM_BUFFER: usize = 16;

/// The provider's end of a stream.
#[derive(Clone, Debug)]
pub struct StreamSender {
    // Boxed: the channel's blocks hold pointers, not the largest event.
    sender: mpsc::Sender<Box<StreamEvent>>,
}

impl StreamSender {
    /// Sends one event; `false` when the consumer is gone (stop producing).
    pub async fn send(&self, event: StreamEvent) -> bool {
        self.sender.send(Box::new(event)).await.is_ok()
    }

    /// Whether the consumer has dropped the stream.
    pub fn is_closed(&self) -> bool {
        self.sender.is_closed()
    }
}

/// The consumer's end: events in order, and the partial message they build.
#[derive(Debug)]
pub struct AssistantStream {
    receiver: mpsc::Receiver<Box<StreamEvent>>,
    // Invariant: equals the initial message with every event returned so far applied.
    partial: AssistantMessage,
    finished: bool,
}

impl AssistantStream {
    /// A connected sender and stream for a response of `model`.
    pub fn channel(model: &Model) -> (StreamSender, AssistantStream) {
        let (sender, receiver) = mpsc::channel(STREAM_BUFFER);
        let partial = AssistantMessage {
            api: model.api.clone(),
            provider: model.provider.clone(),
            model: model.id.clone(),
            timestamp: pi_util::time::now_millis(),
            ..AssistantMessage::default()
        };
        (
            StreamSender { sender },
            AssistantStream {
                receiver,
                partial,
                finished: false,
            },
        )
    }

    /// The next event, already applied to [`AssistantStream::partial`]; `None` after the
    /// terminal event. A provider that vanishes without a terminal event yields a synthetic
    /// `Error`.
    pub async fn next(&mut self) -> Option<StreamEvent> {
        if self.finished {
            return None;
        }
        let event = match self.receiver.recv().await {
            Some(event) => *event,
            None => {
                let mut error = self.partial.clone();
                error.stop_reason = StopReason::Error;
                error.error_message =
                    Some("the provider ended the stream without a final event".to_owned());
                StreamEvent::Error {
                    reason: ErrorReason::Error,
                    error: Box::new(error),
                }
            }
        };
        self.apply(&event);
        self.finished = event.is_terminal();
        Some(event)
    }

    /// The message as built so far.
    pub fn partial(&self) -> &AssistantMessage {
        &self.partial
    }

    /// The message as built so far, taken (the stream is done with).
    pub fn into_partial(self) -> AssistantMessage {
        self.partial
    }

    /// Drains the stream and returns the final message.
    pub async fn result(mut self) -> AssistantMessage {
        while self.next().await.is_some() {}
        self.partial
    }

    fn apply(&mut self, event: &StreamEvent) {
        apply_event(&mut self.partial, event);
    }
}

/// Applies one event to a partial message: what [`AssistantStream`] does after each event, for
/// consumers that rebuild a partial from forwarded events (session snapshots, clients).
pub fn apply_event(partial: &mut AssistantMessage, event: &StreamEvent) {
    let content = &mut partial.content;
    match event {
        StreamEvent::Start => {}
        StreamEvent::TextStart { content_index } => {
            put(
                content,
                *content_index,
                AssistantContent::Text(TextContent::default()),
            );
        }
        StreamEvent::TextDelta {
            content_index,
            delta,
        } => {
            if let Some(AssistantContent::Text(text)) = content.get_mut(*content_index) {
                text.text.push_str(delta);
            }
        }
        StreamEvent::TextEnd {
            content_index,
            content: full,
            signature,
        } => {
            let block = TextContent {
                text: full.clone(),
                text_signature: signature.clone(),
            };
            put(content, *content_index, AssistantContent::Text(block));
        }
        StreamEvent::ThinkingStart { content_index } => {
            put(
                content,
                *content_index,
                AssistantContent::Thinking(ThinkingContent::default()),
            );
        }
        StreamEvent::ThinkingDelta {
            content_index,
            delta,
        } => {
            if let Some(AssistantContent::Thinking(thinking)) = content.get_mut(*content_index) {
                thinking.thinking.push_str(delta);
            }
        }
        StreamEvent::ThinkingEnd {
            content_index,
            content: full,
            signature,
            redacted,
        } => {
            let block = ThinkingContent {
                thinking: full.clone(),
                thinking_signature: signature.clone(),
                redacted: *redacted,
            };
            put(content, *content_index, AssistantContent::Thinking(block));
        }
        StreamEvent::ToolcallStart {
            content_index,
            id,
            tool_name,
        } => {
            let call = ToolCall {
                id: id.clone(),
                name: tool_name.clone(),
                arguments: Value::Object(serde_json::Map::new()).into(),
                thought_signature: None,
            };
            put(content, *content_index, AssistantContent::ToolCall(call));
        }
        StreamEvent::ToolcallDelta {
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
        StreamEvent::ToolcallEnd {
            content_index,
            tool_call,
        } => {
            put(
                content,
                *content_index,
                AssistantContent::ToolCall(tool_call.clone()),
            );
        }
        StreamEvent::Done { message, .. } => *partial = (**message).clone(),
        StreamEvent::Error { error, .. } => *partial = (**error).clone(),
    }
}

fn put(content: &mut Vec<AssistantContent>, index: usize, block: AssistantContent) {
    if index < content.len() {
        content[index] = block;
    } else {
        content.push(block);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_serialize_in_pi_vocabulary() {
        let event = StreamEvent::ToolcallDelta {
            content_index: 2,
            delta: "{\"a".into(),
            arguments: Some(json!({})),
        };
        assert_eq!(
            serde_json::to_value(&event).unwrap(),
            json!({"type": "toolcall_delta", "contentIndex": 2, "delta": "{\"a", "arguments": {}})
        );
        assert_eq!(
            serde_json::to_value(StreamEvent::Start).unwrap(),
            json!({"type": "start"})
        );
    }
}
