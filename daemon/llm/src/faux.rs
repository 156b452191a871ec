//! An in-process scripted provider for unit tests (api `faux`): replies are queued by the test,
//! streamed as realistic deltas, recorded with the context they were asked with, and can be
//! held mid-stream by a [`FauxGate`] until the test releases them or the request is aborted.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::Semaphore;

use crate::event::{AssistantStream, DoneReason, ErrorReason, StreamEvent, StreamSender};
use crate::model::{InputKind, Model, ModelCost, ThinkingLevel};
use crate::provider::{Context, Provider, StreamOptions};
use crate::types::{
    AssistantContent, AssistantMessage, StopReason, TextContent, ThinkingContent, ToolCall, Usage,
};
use pi_util::time::now_millis;

/// A scripted provider. Cheap to clone; clones share the script and the recorded requests.
#[derive(Clone, Debug, Default)]
pub struct FauxProvider {
    // A sync mutex, never held across await.
    state: Arc<Mutex<FauxState>>,
}

#[derive(Debug, Default)]
struct FauxState {
    replies: VecDeque<FauxReply>,
    requests: Vec<FauxRequest>,
}

/// One request the provider received.
#[derive(Clone, Debug)]
pub struct FauxRequest {
    /// The model id asked for.
    pub model: String,
    /// Everything the model was shown.
    pub context: Context,
    /// The requested thinking level.
    pub thinking: ThinkingLevel,
    /// The requested output token cap.
    pub max_tokens: Option<u64>,
}

/// One scripted reply.
#[derive(Clone, Debug, Default)]
pub struct FauxReply {
    content: Vec<AssistantContent>,
    usage: Option<Usage>,
    error: Option<String>,
    stop_reason: Option<StopReason>,
    hold: Option<(usize, FauxGate)>,
    pace: Option<std::time::Duration>,
}

/// Holds a reply mid-stream until [`FauxGate::release`] (or an abort).
#[derive(Clone, Debug)]
pub struct FauxGate {
    permits: Arc<Semaphore>,
}

impl Default for FauxGate {
    fn default() -> Self {
        FauxGate::new()
    }
}

impl FauxGate {
    /// A closed gate.
    pub fn new() -> Self {
        FauxGate {
            permits: Arc::new(Semaphore::new(0)),
        }
    }

    /// Lets one held stream continue.
    pub fn release(&self) {
        self.permits.add_permits(1);
    }
}

static NEXT_CALL_ID: AtomicU64 = AtomicU64::new(1);

impl FauxReply {
    /// A text reply.
    pub fn text(text: impl Into<String>) -> Self {
        FauxReply::default().then_text(text)
    }

    /// A reply with one tool call.
    pub fn tool_call(name: &str, arguments: Value) -> Self {
        FauxReply::default().then_tool_call(name, arguments)
    }

    /// A reply that fails with `message` (stop reason `error`) after its content.
    pub fn error(message: impl Into<String>) -> Self {
        FauxReply {
            error: Some(message.into()),
            ..FauxReply::default()
        }
    }

    /// Appends a text block.
    pub fn then_text(mut self, text: impl Into<String>) -> Self {
        self.content.push(AssistantContent::Text(TextContent {
            text: text.into(),
            text_signature: None,
        }));
        self
    }

    /// Appends a thinking block.
    pub fn then_thinking(mut self, thinking: impl Into<String>) -> Self {
        let block = ThinkingContent {
            thinking: thinking.into(),
            thinking_signature: Some("faux-signature".into()),
            redacted: false,
        };
        self.content.push(AssistantContent::Thinking(block));
        self
    }

    /// Appends a tool call with a fresh id.
    pub fn then_tool_call(mut self, name: &str, arguments: Value) -> Self {
        let id = format!("faux-call-{}", NEXT_CALL_ID.fetch_add(1, Ordering::Relaxed));
        self.content.push(AssistantContent::ToolCall(ToolCall {
            id,
            name: name.to_owned(),
            arguments: arguments.into(),
            thought_signature: None,
        }));
        self
    }

    /// Reports this usage instead of the chars/4 estimate.
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = Some(usage);
        self
    }

    /// Ends with this stop reason (default: `toolUse` when there are tool calls, else `stop`).
    pub fn with_stop_reason(mut self, stop_reason: StopReason) -> Self {
        self.stop_reason = Some(stop_reason);
        self
    }

    /// Waits this long before each event, like a model streaming at a steady rate.
    pub fn paced(mut self, interval: std::time::Duration) -> Self {
        self.pace = Some(interval);
        self
    }

    /// Holds the stream after `blocks` content blocks until `gate` is released.
    pub fn held_after(mut self, blocks: usize, gate: &FauxGate) -> Self {
        self.hold = Some((blocks, gate.clone()));
        self
    }
}

impl FauxProvider {
    /// An empty script.
    pub fn new() -> Self {
        FauxProvider::default()
    }

    /// Queues a reply.
    pub fn push(&self, reply: FauxReply) {
        {
            let mut state = self
                .state
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            state.replies.push_back(reply);
        }
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<FauxRequest> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .requests
            .clone()
    }

    /// Replies still queued.
    pub fn pending(&self) -> usize {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .replies
            .len()
    }
}

/// A model served by the faux provider.
pub fn faux_model() -> Model {
    Model {
        id: "faux-1".to_owned(),
        name: "Faux 1".to_owned(),
        api: "faux".to_owned(),
        provider: "faux".to_owned(),
        base_url: String::new(),
        reasoning: true,
        input: vec![InputKind::Text, InputKind::Image],
        cost: ModelCost {
            input: 1.0,
            output: 2.0,
            cache_read: 0.1,
            cache_write: 1.25,
        },
        context_window: 200_000,
        max_tokens: 32_000,
        headers: Default::default(),
        compat: None,
    }
}

impl Provider for FauxProvider {
    fn stream(&self, model: &Model, context: &Context, options: StreamOptions) -> AssistantStream {
        let reply = match self.state.lock() {
            Ok(mut state) => {
                state.requests.push(FauxRequest {
                    model: model.id.clone(),
                    context: context.clone(),
                    thinking: options.thinking,
                    max_tokens: options.max_tokens,
                });
                state.replies.pop_front()
            }
            Err(_) => None,
        };
        let (sender, stream) = AssistantStream::channel(model);
        let mut partial = stream.partial().clone();
        let input_chars: usize = serde_json::to_string(&context.messages)
            .map(|s| s.len())
            .unwrap_or(0)
            + context.system_prompt.as_ref().map_or(0, String::len);
        let cost = model.cost;
        tokio::spawn(async move {
            let Some(reply) = reply else {
                fail(
                    &sender,
                    partial,
                    ErrorReason::Error,
                    "No more faux responses queued",
                )
                .await;
                return;
            };
            play(&sender, &mut partial, reply, &options, input_chars, &cost).await;
        });
        stream
    }
}

async fn play(
    sender: &StreamSender,
    partial: &mut AssistantMessage,
    reply: FauxReply,
    options: &StreamOptions,
    input_chars: usize,
    cost: &ModelCost,
) {
    if !sender.send(StreamEvent::Start).await {
        return;
    }
    let mut output_chars = 0;
    for (index, block) in reply.content.iter().enumerate() {
        if let Some((after, gate)) = &reply.hold
            && *after == index
        {
            tokio::select! {
                _ = gate.permits.acquire() => {}
                _ = options.cancel.cancelled() => {}
            }
        }
        if options.cancel.is_cancelled() {
            fail(
                sender,
                partial.clone(),
                ErrorReason::Aborted,
                "Request was aborted",
            )
            .await;
            return;
        }
        let events = match block {
            AssistantContent::Text(text) => {
                output_chars += text.text.len();
                let mut events = vec![StreamEvent::TextStart {
                    content_index: index,
                }];
                events.extend(chunks(&text.text).map(|delta| StreamEvent::TextDelta {
                    content_index: index,
                    delta,
                }));
                events.push(StreamEvent::TextEnd {
                    content_index: index,
                    content: text.text.clone(),
                    signature: None,
                });
                events
            }
            AssistantContent::Thinking(thinking) => {
                output_chars += thinking.thinking.len();
                let mut events = vec![StreamEvent::ThinkingStart {
                    content_index: index,
                }];
                events.extend(
                    chunks(&thinking.thinking).map(|delta| StreamEvent::ThinkingDelta {
                        content_index: index,
                        delta,
                    }),
                );
                events.push(StreamEvent::ThinkingEnd {
                    content_index: index,
                    content: thinking.thinking.clone(),
                    signature: thinking.thinking_signature.clone(),
                    redacted: false,
                });
                events
            }
            AssistantContent::ToolCall(call) => {
                let json = call.arguments.to_json_string();
                output_chars += json.len();
                vec![
                    StreamEvent::ToolcallStart {
                        content_index: index,
                        id: call.id.clone(),
                        tool_name: call.name.clone(),
                    },
                    StreamEvent::ToolcallDelta {
                        content_index: index,
                        delta: json,
                        arguments: Some(call.arguments.value().clone()),
                    },
                    StreamEvent::ToolcallEnd {
                        content_index: index,
                        tool_call: call.clone(),
                    },
                ]
            }
        };
        for event in events {
            if let Some(interval) = reply.pace {
                tokio::time::sleep(interval).await;
            }
            if !sender.send(event).await {
                return;
            }
        }
        partial.content.push(block.clone());
    }
    if options.cancel.is_cancelled() {
        fail(
            sender,
            partial.clone(),
            ErrorReason::Aborted,
            "Request was aborted",
        )
        .await;
        return;
    }
    let mut usage = reply.usage.unwrap_or(Usage {
        input: (input_chars / 4) as u64,
        output: (output_chars / 4).max(1) as u64,
        ..Usage::default()
    });
    usage.price(cost);
    partial.usage = usage;
    partial.timestamp = now_millis();
    if let Some(message) = reply.error {
        fail(sender, partial.clone(), ErrorReason::Error, &message).await;
        return;
    }
    let has_tool_calls = partial.tool_calls().next().is_some();
    let stop_reason = reply.stop_reason.unwrap_or(if has_tool_calls {
        StopReason::ToolUse
    } else {
        StopReason::Stop
    });
    partial.stop_reason = stop_reason;
    let reason = match stop_reason {
        StopReason::Length => DoneReason::Length,
        StopReason::ToolUse => DoneReason::ToolUse,
        StopReason::Stop | StopReason::Error | StopReason::Aborted => DoneReason::Stop,
    };
    sender
        .send(StreamEvent::Done {
            reason,
            message: Box::new(partial.clone()),
        })
        .await;
}

async fn fail(
    sender: &StreamSender,
    mut partial: AssistantMessage,
    reason: ErrorReason,
    message: &str,
) {
    partial.stop_reason = match reason {
        ErrorReason::Error => StopReason::Error,
        ErrorReason::Aborted => StopReason::Aborted,
    };
    partial.error_message = Some(message.to_owned());
    sender
        .send(StreamEvent::Error {
            reason,
            error: Box::new(partial),
        })
        .await;
}

/// Splits text into up to three deltas on char boundaries.
fn chunks(text: &str) -> impl Iterator<Item = String> + '_ {
    let chars: Vec<char> = text.chars().collect();
    let size = chars.len().div_ceil(3).max(1);
    chars
        .chunks(size)
        .map(|chunk| chunk.iter().collect::<String>())
        .collect::<Vec<_>>()
        .into_iter()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn streams_scripted_replies_and_records_requests() {
        let faux = FauxProvider::new();
        faux.push(FauxReply::text("héllo wörld").then_tool_call("read", json!({"path": "a.txt"})));
        let context = Context {
            system_prompt: Some("sys".into()),
            ..Context::default()
        };
        let mut stream = faux.stream(&faux_model(), &context, StreamOptions::default());
        let mut kinds = Vec::new();
        while let Some(event) = stream.next().await {
            kinds.push(
                serde_json::to_value(&event).unwrap()["type"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            );
        }
        assert_eq!(kinds.first().map(String::as_str), Some("start"));
        assert_eq!(kinds.last().map(String::as_str), Some("done"));
        let message = stream.partial();
        assert_eq!(message.text(), "héllo wörld");
        assert_eq!(message.stop_reason, StopReason::ToolUse);
        assert_eq!(
            message.tool_calls().next().unwrap().arguments,
            json!({"path": "a.txt"})
        );
        assert!(message.usage.cost.total > 0.0);
        assert_eq!(
            faux.requests()[0].context.system_prompt.as_deref(),
            Some("sys")
        );
    }

    #[tokio::test]
    async fn empty_script_and_abort_end_with_error_events() {
        let faux = FauxProvider::new();
        let message = faux
            .stream(&faux_model(), &Context::default(), StreamOptions::default())
            .result()
            .await;
        assert_eq!(message.stop_reason, StopReason::Error);
        assert_eq!(
            message.error_message.as_deref(),
            Some("No more faux responses queued")
        );

        let gate = FauxGate::new();
        faux.push(
            FauxReply::text("first")
                .then_text("second")
                .held_after(1, &gate),
        );
        let options = StreamOptions::default();
        let cancel = options.cancel.clone();
        let mut stream = faux.stream(&faux_model(), &Context::default(), options);
        while let Some(event) = stream.next().await {
            if matches!(event, StreamEvent::TextEnd { .. }) {
                cancel.cancel();
            }
        }
        assert_eq!(stream.partial().stop_reason, StopReason::Aborted);
        assert_eq!(stream.partial().text(), "first");
    }
}
