//! The provider side of a response stream: [`Assembler`] turns a wire format's decoded pieces
//! (open a block, append text, append argument JSON, set usage, finish) into pi's event
//! sequence, while keeping its own copy of the partial message for the terminal event.
//!
//! Guarantees every provider gets for free: content indexes are dense and in stream order;
//! every opened block is closed (`*_end`) before `done`; tool-call arguments are re-parsed
//! incrementally so a partial object is available, with re-parsing amortised (geometric
//! growth) so a long argument stream stays linear; usage is priced from the model; exactly one
//! terminal event is sent.

use serde_json::Value;

use crate::event::{DoneReason, ErrorReason, StreamEvent, StreamSender};
use crate::failure::{Failure, FailureKind};
use crate::model::{Model, ModelCost};
use crate::partial_json::{parse_arguments, parse_partial};
use crate::types::{
    AssistantContent, AssistantMessage, StopReason, TextContent, ThinkingContent, ToolCall, Usage,
};

/// The text of an aborted response's `errorMessage` (pi's).
pub const ABORTED_MESSAGE: &str = "Request was aborted";

/// Arguments shorter than this are re-parsed on every delta.
const ALWAYS_REPARSE_BELOW: usize = 4096;

/// Builds one response's events and final message.
#[derive(Debug)]
pub struct Assembler {
    sender: StreamSender,
    prices: ModelCost,
    // Invariant: equals what the consumer's partial is after every event sent so far, plus
    // the raw argument text of open tool calls kept in `blocks`.
    message: AssistantMessage,
    blocks: Vec<Block>,
    consumer_gone: bool,
    // Secrets of the request (keys, tokens), scrubbed from any error text: some providers
    // echo the key they rejected.
    secrets: Vec<String>,
}

#[derive(Debug)]
enum Block {
    Text {
        open: bool,
    },
    Thinking {
        open: bool,
    },
    Tool {
        open: bool,
        raw: String,
        parsed_at: usize,
    },
}

impl Assembler {
    /// An assembler for a response of `model` whose partial starts like the consumer's.
    pub fn new(sender: StreamSender, model: &Model, timestamp: i64) -> Self {
        Assembler {
            sender,
            prices: model.cost,
            message: AssistantMessage {
                api: model.api.clone(),
                provider: model.provider.clone(),
                model: model.id.clone(),
                timestamp,
                ..AssistantMessage::default()
            },
            blocks: Vec::new(),
            consumer_gone: false,
            secrets: Vec::new(),
        }
    }

    /// Registers secrets to scrub from error messages (values shorter than 8 characters are
    /// ignored: scrubbing them would mangle ordinary words).
    pub fn redact(&mut self, secrets: impl IntoIterator<Item = String>) {
        self.secrets
            .extend(secrets.into_iter().filter(|secret| secret.len() >= 8));
    }

    /// Whether the consumer dropped the stream (stop reading the response).
    pub fn consumer_gone(&self) -> bool {
        self.consumer_gone || self.sender.is_closed()
    }

    /// The message as built so far.
    pub fn message(&self) -> &AssistantMessage {
        &self.message
    }

    /// Usage so far; providers overwrite fields as the wire reports them.
    pub fn usage_mut(&mut self) -> &mut Usage {
        &mut self.message.usage
    }

    /// Records the provider's id of the response; the first one seen wins (some formats
    /// repeat it on every chunk). Empty ids are ignored.
    pub fn set_response_id(&mut self, id: Option<&str>) {
        if self.message.response_id.is_none()
            && let Some(id) = id.filter(|id| !id.is_empty())
        {
            self.message.response_id = Some(id.to_owned());
        }
    }

    /// Whether any tool call was opened.
    pub fn has_tool_calls(&self) -> bool {
        self.blocks
            .iter()
            .any(|block| matches!(block, Block::Tool { .. }))
    }

    /// Sends `start`.
    pub async fn start(&mut self) {
        self.send(StreamEvent::Start).await;
    }

    /// Opens a text block; returns its index.
    pub async fn open_text(&mut self) -> usize {
        let index = self.push(
            Block::Text { open: true },
            AssistantContent::Text(TextContent::default()),
        );
        self.send(StreamEvent::TextStart {
            content_index: index,
        })
        .await;
        index
    }

    /// Appends text to block `index`.
    pub async fn text_delta(&mut self, index: usize, delta: &str) {
        if delta.is_empty() {
            return;
        }
        if let Some(AssistantContent::Text(text)) = self.message.content.get_mut(index) {
            text.text.push_str(delta);
            let event = StreamEvent::TextDelta {
                content_index: index,
                delta: delta.to_owned(),
            };
            self.send(event).await;
        }
    }

    /// Sets the signature of text block `index` (sent with its `text_end`).
    pub fn set_text_signature(&mut self, index: usize, signature: String) {
        if let Some(AssistantContent::Text(text)) = self.message.content.get_mut(index) {
            text.text_signature = Some(signature);
        }
    }

    /// Opens a thinking block; returns its index.
    pub async fn open_thinking(&mut self) -> usize {
        let block = AssistantContent::Thinking(ThinkingContent::default());
        let index = self.push(Block::Thinking { open: true }, block);
        self.send(StreamEvent::ThinkingStart {
            content_index: index,
        })
        .await;
        index
    }

    /// Appends reasoning text to block `index`.
    pub async fn thinking_delta(&mut self, index: usize, delta: &str) {
        if delta.is_empty() {
            return;
        }
        if let Some(AssistantContent::Thinking(thinking)) = self.message.content.get_mut(index) {
            thinking.thinking.push_str(delta);
            let event = StreamEvent::ThinkingDelta {
                content_index: index,
                delta: delta.to_owned(),
            };
            self.send(event).await;
        }
    }

    /// Appends to the signature of thinking block `index` (Anthropic streams it in pieces).
    pub fn thinking_signature_delta(&mut self, index: usize, piece: &str) {
        if let Some(AssistantContent::Thinking(thinking)) = self.message.content.get_mut(index) {
            thinking
                .thinking_signature
                .get_or_insert_with(String::new)
                .push_str(piece);
        }
    }

    /// Replaces the signature of thinking block `index` (formats that send it whole).
    pub fn set_thinking_signature(&mut self, index: usize, signature: String) {
        if let Some(AssistantContent::Thinking(thinking)) = self.message.content.get_mut(index) {
            thinking.thinking_signature = Some(signature);
        }
    }

    /// Marks thinking block `index` redacted, carrying `data` opaquely as its signature.
    pub fn set_redacted(&mut self, index: usize, data: String) {
        if let Some(AssistantContent::Thinking(thinking)) = self.message.content.get_mut(index) {
            thinking.redacted = true;
            thinking.thinking_signature = Some(data);
        }
    }

    /// Opens a tool call; returns its index.
    pub async fn open_tool_call(&mut self, id: String, name: String) -> usize {
        let call = ToolCall {
            id: id.clone(),
            name: name.clone(),
            arguments: Value::Object(serde_json::Map::new()).into(),
            thought_signature: None,
        };
        let block = Block::Tool {
            open: true,
            raw: String::new(),
            parsed_at: 0,
        };
        let index = self.push(block, AssistantContent::ToolCall(call));
        self.send(StreamEvent::ToolcallStart {
            content_index: index,
            id,
            tool_name: name,
        })
        .await;
        index
    }

    /// Sets the Google thought signature of tool call `index`.
    pub fn set_thought_signature(&mut self, index: usize, signature: String) {
        if let Some(AssistantContent::ToolCall(call)) = self.message.content.get_mut(index) {
            call.thought_signature = Some(signature);
        }
    }

    /// Appends raw argument JSON to tool call `index`. An empty delta is still an event, as pi
    /// forwards the empty fragments servers send (the first of Chat Completions and
    /// Anthropic).
    pub async fn tool_args_delta(&mut self, index: usize, delta: &str) {
        let Some(Block::Tool { raw, parsed_at, .. }) = self.blocks.get_mut(index) else {
            return;
        };
        raw.push_str(delta);
        // Re-parse small arguments every time, large ones when they grew by a quarter: linear
        // overall, and the partial object is never more than a quarter behind.
        let reparse = !delta.is_empty()
            && (raw.len() < ALWAYS_REPARSE_BELOW || raw.len() >= *parsed_at + *parsed_at / 4);
        let arguments = if reparse {
            *parsed_at = raw.len();
            parse_partial(raw)
        } else {
            None
        };
        if let (Some(arguments), Some(AssistantContent::ToolCall(call))) =
            (&arguments, self.message.content.get_mut(index))
        {
            call.arguments.set(arguments.clone());
        }
        let event = StreamEvent::ToolcallDelta {
            content_index: index,
            delta: delta.to_owned(),
            arguments,
        };
        self.send(event).await;
    }

    /// Replaces the argument text of tool call `index` with the complete text (formats that
    /// repeat it at the end); the call keeps it exactly when it closes.
    pub fn set_tool_arguments_text(&mut self, index: usize, text: &str) {
        if let Some(Block::Tool { raw, parsed_at, .. }) = self.blocks.get_mut(index) {
            text.clone_into(raw);
            *parsed_at = 0;
        }
    }

    /// Closes block `index`, sending its `*_end` event. Closing twice is harmless.
    pub async fn close(&mut self, index: usize) {
        let Some(block) = self.blocks.get_mut(index) else {
            return;
        };
        let event = match block {
            Block::Text { open } | Block::Thinking { open } if !*open => return,
            Block::Tool { open, .. } if !*open => return,
            Block::Text { open } => {
                *open = false;
                match self.message.content.get(index) {
                    Some(AssistantContent::Text(text)) => StreamEvent::TextEnd {
                        content_index: index,
                        content: text.text.clone(),
                        signature: text.text_signature.clone(),
                    },
                    _ => return,
                }
            }
            Block::Thinking { open } => {
                *open = false;
                match self.message.content.get(index) {
                    Some(AssistantContent::Thinking(thinking)) => StreamEvent::ThinkingEnd {
                        content_index: index,
                        content: thinking.thinking.clone(),
                        signature: thinking.thinking_signature.clone(),
                        redacted: thinking.redacted,
                    },
                    _ => return,
                }
            }
            Block::Tool { open, raw, .. } => {
                *open = false;
                let arguments = parse_arguments(raw);
                match self.message.content.get_mut(index) {
                    Some(AssistantContent::ToolCall(call)) => {
                        call.arguments = arguments;
                        StreamEvent::ToolcallEnd {
                            content_index: index,
                            tool_call: call.clone(),
                        }
                    }
                    _ => return,
                }
            }
        };
        self.send(event).await;
    }

    /// Closes every open block, in index order.
    pub async fn close_all(&mut self) {
        for index in 0..self.blocks.len() {
            self.close(index).await;
        }
    }

    /// Ends the response successfully with `reason` (closing open blocks first).
    pub async fn finish(mut self, reason: DoneReason) {
        self.close_all().await;
        self.message.stop_reason = match reason {
            DoneReason::Stop => StopReason::Stop,
            DoneReason::Length => StopReason::Length,
            DoneReason::ToolUse => StopReason::ToolUse,
        };
        self.message.usage.price(&self.prices);
        let message = Box::new(self.message.clone());
        self.send(StreamEvent::Done { reason, message }).await;
    }

    /// Ends the response as failed, keeping the partial content and usage.
    pub async fn fail(mut self, error_message: String, failure: Failure) {
        let reason = if failure.kind == FailureKind::Aborted {
            self.message.stop_reason = StopReason::Aborted;
            ErrorReason::Aborted
        } else {
            self.message.stop_reason = StopReason::Error;
            ErrorReason::Error
        };
        // Tool calls cut short keep their best-effort arguments.
        for (index, block) in self.blocks.iter().enumerate() {
            if let (Block::Tool { raw, .. }, Some(AssistantContent::ToolCall(call))) =
                (block, self.message.content.get_mut(index))
            {
                call.arguments = parse_arguments(raw);
            }
        }
        let mut error_message = error_message;
        for secret in &self.secrets {
            if error_message.contains(secret.as_str()) {
                error_message = error_message.replace(secret.as_str(), "***");
            }
        }
        self.message.error_message = Some(error_message);
        self.message.failure = Some(failure);
        self.message.usage.price(&self.prices);
        let error = Box::new(self.message.clone());
        self.send(StreamEvent::Error { reason, error }).await;
    }

    /// Ends the response as aborted by the caller.
    pub async fn abort(self) {
        self.fail(
            ABORTED_MESSAGE.to_owned(),
            Failure::new(FailureKind::Aborted),
        )
        .await;
    }

    fn push(&mut self, block: Block, content: AssistantContent) -> usize {
        self.blocks.push(block);
        self.message.content.push(content);
        self.message.content.len() - 1
    }

    async fn send(&mut self, event: StreamEvent) {
        if !self.consumer_gone && !self.sender.send(event).await {
            self.consumer_gone = true;
        }
    }
}
