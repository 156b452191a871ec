//! The conversation as the TUI shows it: a list of items (user and assistant messages, tool
//! calls with their results, summaries, notices) built from stored entries and session events,
//! plus the assistant message being streamed, rebuilt from `message_update` deltas.
//!
//! Invariant: every mutation of an item goes through [`Transcript::item_mut`] or a push, which
//! give the item a fresh `revision`, unique in the process (even across clones of a
//! transcript); the render cache keys on it, so a stale layout is never drawn.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use pi_protocol::v1::SessionEntry;
use pi_protocol::v1::message::{
    AgentMessage, AssistantContent, AssistantMessage, AssistantMessageEvent, StopReason,
    TextContent, ThinkingContent, ToolCall, ToolResult, UserContent,
};
use serde_json::Value;

/// Revisions handed out, process-wide (see the module invariant).
static NEXT_REVISION: AtomicU64 = AtomicU64::new(1);

/// One block of an assistant reply, in stream order.
#[derive(Clone, Debug, PartialEq)]
pub enum AssistantBlock {
    /// Markdown text.
    Text(String),
    /// Reasoning text (collapsed by default).
    Thinking(String),
}

/// How far a tool call got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolStatus {
    /// The model asked for it; it has not started.
    Pending,
    /// Running.
    Running,
    /// Finished successfully.
    Done,
    /// Finished with an error (or was skipped).
    Failed,
}

/// A tool call and what it produced so far.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolItem {
    /// Call id.
    pub call_id: String,
    /// Tool name (`read`, `edit`, ...).
    pub tool_name: String,
    /// Arguments as the model wrote them.
    pub args: Value,
    /// Progress.
    pub status: ToolStatus,
    /// Text content of the (partial) result.
    pub output: String,
    /// Structured details of the result (`diff` for edit, ...).
    pub details: Value,
    /// The result's images (`read` of a PNG), shown inline where the terminal can.
    pub images: Vec<Picture>,
}

/// An image of a tool's result, for the terminal's graphics protocol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Picture {
    /// Per transcript: tells images apart for the terminal (kitty's image id); never 0.
    pub id: u32,
    /// Base64 of the image.
    pub data: std::sync::Arc<str>,
    /// Its MIME type.
    pub mime: String,
    /// Width and height in pixels (800x600 when its header cannot be read).
    pub size: (u32, u32),
}

impl Picture {
    /// The picture of image `index` of tool call `call_id`'s result.
    fn of(call_id: &str, index: usize, image: &pi_protocol::v1::message::ImageContent) -> Picture {
        use base64::Engine as _;
        // FNV-1a of the call and index: stable across redraws and reconnects.
        let mut hash: u32 = 0x811c_9dc5;
        for byte in call_id.bytes().chain(index.to_le_bytes()) {
            hash = (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193);
        }
        // The header is at the start: 64 KiB of the image is enough to read the size.
        let head = &image.data[..image.data.len().min(87_380) / 4 * 4];
        let size = base64::engine::general_purpose::STANDARD
            .decode(head)
            .ok()
            .and_then(|bytes| {
                let kind = pi_image::sniff(&bytes)?;
                pi_image::dimensions(&bytes, kind)
            })
            .unwrap_or((800, 600));
        Picture {
            id: hash.max(1),
            data: image.data.as_str().into(),
            mime: image.mime_type.clone(),
            size,
        }
    }
}

/// The pictures of tool call `call_id`'s result `content`.
fn pictures(call_id: &str, content: &[UserContent]) -> Vec<Picture> {
    content
        .iter()
        .filter_map(|block| match block {
            UserContent::Image(image) => Some(image),
            UserContent::Text(_) => None,
        })
        .enumerate()
        .map(|(index, image)| Picture::of(call_id, index, image))
        .collect()
}

/// What an item is.
#[derive(Clone, Debug, PartialEq)]
pub enum ItemKind {
    /// A user message (text, number of images).
    User {
        /// The text.
        text: String,
        /// Attached images.
        images: usize,
    },
    /// An assistant reply's text and thinking (tool calls are separate items).
    Assistant {
        /// Blocks in order.
        blocks: Vec<AssistantBlock>,
        /// Set for errors and aborts.
        error: Option<String>,
        /// Why it ended.
        stop_reason: StopReason,
    },
    /// A tool call.
    Tool(ToolItem),
    /// A user shell command (`!cmd`).
    Bash {
        /// The command.
        command: String,
        /// Its output.
        output: String,
        /// Exit code, when it exited.
        exit_code: Option<i32>,
    },
    /// History before this point was compacted.
    CompactionSummary {
        /// The summary.
        summary: String,
        /// Context tokens before.
        tokens_before: u64,
    },
    /// A summary of a branch navigated away from.
    BranchSummary {
        /// The summary.
        summary: String,
    },
    /// A message injected by an extension.
    Custom {
        /// Producer tag.
        custom_type: String,
        /// Text.
        text: String,
    },
    /// A one-line notice: model changes, retries, errors, command results.
    Notice {
        /// Severity.
        level: NoticeLevel,
        /// Text.
        text: String,
    },
}

/// How a notice is coloured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoticeLevel {
    /// Secondary information (dim).
    Info,
    /// Something to look at (yellow).
    Warning,
    /// A failure (red).
    Error,
}

/// One transcript item.
#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    /// What it is.
    pub kind: ItemKind,
    /// The entry that stores it, when stored.
    pub entry_id: Option<String>,
    // Invariant: bumped on every change (see the module doc).
    revision: u64,
}

impl Item {
    /// Changes whenever the item does.
    pub fn revision(&self) -> u64 {
        self.revision
    }
}

/// The conversation of one session.
#[derive(Clone, Debug, Default)]
pub struct Transcript {
    items: Vec<Item>,
    // Tool items by call id (indices into `items`).
    tools: HashMap<String, usize>,
    /// The assistant message being streamed, rebuilt from deltas.
    streaming: Option<AssistantMessage>,
    // Bumped on every change of `streaming`.
    streaming_revision: u64,
}

impl Transcript {
    /// The items, oldest first.
    pub fn items(&self) -> &[Item] {
        &self.items
    }

    /// The message being streamed, if any.
    pub fn streaming(&self) -> Option<&AssistantMessage> {
        self.streaming.as_ref()
    }

    /// Changes whenever the streaming message does.
    pub fn streaming_revision(&self) -> u64 {
        self.streaming_revision
    }

    /// Removes everything (a new session, or a full resync).
    pub fn clear(&mut self) {
        self.items.clear();
        self.tools.clear();
        self.streaming = None;
        self.streaming_revision += 1;
    }

    /// Appends an item.
    pub fn push(&mut self, kind: ItemKind, entry_id: Option<String>) {
        let revision = self.bump();
        if let ItemKind::Tool(tool) = &kind {
            self.tools.insert(tool.call_id.clone(), self.items.len());
        }
        self.items.push(Item {
            kind,
            entry_id,
            revision,
        });
    }

    /// Appends a notice.
    pub fn notice(&mut self, level: NoticeLevel, text: impl Into<String>) {
        self.push(
            ItemKind::Notice {
                level,
                text: text.into(),
            },
            None,
        );
    }

    /// Adds a stored entry (history load and replay).
    pub fn push_entry(&mut self, entry: &SessionEntry) {
        match entry {
            SessionEntry::Message { id, message, .. } => {
                self.push_message(message, Some(id.clone()));
            }
            // Settings chosen before the first message are the session's setup, which the
            // footer shows; later changes are worth a line in the conversation.
            SessionEntry::ThinkingLevelChange { thinking_level, .. } => {
                if self.has_conversation() {
                    self.notice(
                        NoticeLevel::Info,
                        format!("Thinking level: {thinking_level}"),
                    );
                }
            }
            SessionEntry::ModelChange {
                provider, model_id, ..
            } => {
                if self.has_conversation() {
                    self.notice(NoticeLevel::Info, format!("Model: {provider}/{model_id}"));
                }
            }
            SessionEntry::Compaction {
                id,
                summary,
                tokens_before,
                ..
            } => self.push(
                ItemKind::CompactionSummary {
                    summary: summary.clone(),
                    tokens_before: *tokens_before,
                },
                Some(id.clone()),
            ),
            SessionEntry::BranchSummary { id, summary, .. } => self.push(
                ItemKind::BranchSummary {
                    summary: summary.clone(),
                },
                Some(id.clone()),
            ),
            SessionEntry::CustomMessage {
                id,
                custom_type,
                content,
                display,
                ..
            } => {
                if *display {
                    self.push(
                        ItemKind::Custom {
                            custom_type: custom_type.clone(),
                            text: user_text(content),
                        },
                        Some(id.clone()),
                    );
                }
            }
            SessionEntry::Custom {
                custom_type,
                data: Some(data),
                ..
            } if custom_type == "approval" => {
                // The daemon's approval decisions (`policy`): one line each.
                let text = |key: &str| data[key].as_str().unwrap_or_default().to_owned();
                let how = match (data.get("answeredBy"), data.get("by")) {
                    (Some(by), _) if by.is_string() => {
                        format!("{} answered \"{}\"", text("answeredBy"), text("answer"))
                    }
                    (_, Some(_)) => text("by"),
                    _ => "nobody answered".to_owned(),
                };
                let denied = text("decision") == "denied";
                self.notice(
                    if denied {
                        NoticeLevel::Warning
                    } else {
                        NoticeLevel::Info
                    },
                    format!("Approval: {} {} ({how})", text("call"), text("decision")),
                );
            }
            SessionEntry::Custom { .. }
            | SessionEntry::Label { .. }
            | SessionEntry::SessionInfo { .. } => {}
        }
    }

    /// Adds a complete message. Assistant tool calls become tool items; tool results fill
    /// the item of their call.
    pub fn push_message(&mut self, message: &AgentMessage, entry_id: Option<String>) {
        match message {
            AgentMessage::User(user) => {
                let images = user
                    .content
                    .iter()
                    .filter(|block| matches!(block, UserContent::Image(_)))
                    .count();
                self.push(
                    ItemKind::User {
                        text: user_text(&user.content),
                        images,
                    },
                    entry_id,
                );
            }
            AgentMessage::Assistant(assistant) => {
                let blocks = assistant_blocks(&assistant.content);
                let has_error = matches!(
                    assistant.stop_reason,
                    StopReason::Error | StopReason::Aborted
                );
                if !blocks.is_empty() || has_error {
                    self.push(
                        ItemKind::Assistant {
                            blocks,
                            error: assistant.error_message.clone(),
                            stop_reason: assistant.stop_reason,
                        },
                        entry_id.clone(),
                    );
                }
                for block in &assistant.content {
                    if let AssistantContent::ToolCall(call) = block {
                        self.ensure_tool(call);
                    }
                }
            }
            AgentMessage::ToolResult(result) => {
                let status = if result.is_error {
                    ToolStatus::Failed
                } else {
                    ToolStatus::Done
                };
                let output = user_text(&result.content);
                let details = result.details.clone().unwrap_or(Value::Null);
                let images = pictures(&result.tool_call_id, &result.content);
                match self.tools.get(&result.tool_call_id).copied() {
                    Some(index) => {
                        let item = self.item_mut(index);
                        if let ItemKind::Tool(tool) = &mut item.kind {
                            tool.status = status;
                            tool.output = output;
                            tool.details = details;
                            tool.images = images;
                        }
                        item.entry_id = entry_id;
                    }
                    None => self.push(
                        ItemKind::Tool(ToolItem {
                            call_id: result.tool_call_id.clone(),
                            tool_name: result.tool_name.clone(),
                            args: Value::Null,
                            status,
                            output,
                            details,
                            images,
                        }),
                        entry_id,
                    ),
                }
            }
            AgentMessage::BashExecution(bash) => self.push(
                ItemKind::Bash {
                    command: bash.command.clone(),
                    output: bash.output.clone(),
                    exit_code: bash.exit_code,
                },
                entry_id,
            ),
            AgentMessage::Custom(custom) => {
                if custom.display {
                    self.push(
                        ItemKind::Custom {
                            custom_type: custom.custom_type.clone(),
                            text: user_text(&custom.content),
                        },
                        entry_id,
                    );
                }
            }
            AgentMessage::BranchSummary(summary) => self.push(
                ItemKind::BranchSummary {
                    summary: summary.summary.clone(),
                },
                entry_id,
            ),
            AgentMessage::CompactionSummary(summary) => self.push(
                ItemKind::CompactionSummary {
                    summary: summary.summary.clone(),
                    tokens_before: summary.tokens_before,
                },
                entry_id,
            ),
        }
    }

    /// Starts streaming an assistant message (the empty partial of `message_start`, or the
    /// snapshot's partial).
    pub fn start_streaming(&mut self, message: AssistantMessage) {
        self.streaming = Some(message);
        self.streaming_revision += 1;
    }

    /// Stops streaming without a final message (reconnects, aborts seen as errors).
    pub fn stop_streaming(&mut self) {
        if self.streaming.take().is_some() {
            self.streaming_revision += 1;
        }
    }

    /// Applies one delta to the streaming message. Deltas without a partial are dropped (a
    /// client attached mid-message gets the partial in its snapshot).
    pub fn apply_delta(&mut self, event: &AssistantMessageEvent) {
        let Some(partial) = &mut self.streaming else {
            return;
        };
        apply_assistant_event(partial, event);
        self.streaming_revision += 1;
    }

    /// A tool call started running (or reported progress, or ended).
    pub fn tool_progress(
        &mut self,
        call_id: &str,
        tool_name: &str,
        args: Option<&Value>,
        status: ToolStatus,
        result: Option<&ToolResult>,
    ) {
        let index = match self.tools.get(call_id).copied() {
            Some(index) => index,
            None => {
                self.push(
                    ItemKind::Tool(ToolItem {
                        call_id: call_id.to_owned(),
                        tool_name: tool_name.to_owned(),
                        args: args.cloned().unwrap_or(Value::Null),
                        status,
                        output: String::new(),
                        details: Value::Null,
                        images: Vec::new(),
                    }),
                    None,
                );
                self.items.len() - 1
            }
        };
        let item = self.item_mut(index);
        if let ItemKind::Tool(tool) = &mut item.kind {
            tool.status = status;
            if let Some(args) = args
                && tool.args.is_null()
            {
                tool.args = args.clone();
            }
            if let Some(result) = result {
                tool.output = user_text(&result.content);
                tool.details = result.details.clone().unwrap_or(Value::Null);
                tool.images = pictures(call_id, &result.content);
            }
        }
    }

    /// Marks every unfinished tool call as failed (the run ended without results for them).
    pub fn fail_unfinished_tools(&mut self) {
        let unfinished: Vec<usize> = self
            .tools
            .values()
            .copied()
            .filter(|&index| {
                matches!(
                    &self.items[index].kind,
                    ItemKind::Tool(ToolItem {
                        status: ToolStatus::Pending | ToolStatus::Running,
                        ..
                    })
                )
            })
            .collect();
        for index in unfinished {
            if let ItemKind::Tool(tool) = &mut self.item_mut(index).kind {
                tool.status = ToolStatus::Failed;
            }
        }
    }

    /// The text of the last assistant reply (for `/copy`).
    pub fn last_assistant_text(&self) -> Option<String> {
        self.items.iter().rev().find_map(|item| match &item.kind {
            ItemKind::Assistant { blocks, .. } => {
                let text: Vec<&str> = blocks
                    .iter()
                    .filter_map(|block| match block {
                        AssistantBlock::Text(text) => Some(text.as_str()),
                        AssistantBlock::Thinking(_) => None,
                    })
                    .collect();
                (!text.is_empty()).then(|| text.join("\n\n"))
            }
            _ => None,
        })
    }

    /// Whether anything but notices was added.
    fn has_conversation(&self) -> bool {
        self.items
            .iter()
            .any(|item| !matches!(item.kind, ItemKind::Notice { .. }))
    }

    fn ensure_tool(&mut self, call: &ToolCall) {
        if let Some(index) = self.tools.get(&call.id).copied() {
            let item = self.item_mut(index);
            if let ItemKind::Tool(tool) = &mut item.kind {
                tool.args = call.arguments.value().clone();
            }
            return;
        }
        self.push(
            ItemKind::Tool(ToolItem {
                call_id: call.id.clone(),
                tool_name: call.name.clone(),
                args: call.arguments.value().clone(),
                status: ToolStatus::Pending,
                output: String::new(),
                details: Value::Null,
                images: Vec::new(),
            }),
            None,
        );
    }

    fn item_mut(&mut self, index: usize) -> &mut Item {
        let revision = self.bump();
        let item = &mut self.items[index];
        item.revision = revision;
        item
    }

    fn bump(&mut self) -> u64 {
        NEXT_REVISION.fetch_add(1, Ordering::Relaxed)
    }
}

/// The text and thinking blocks of assistant content (tool calls are left out).
pub fn assistant_blocks(content: &[AssistantContent]) -> Vec<AssistantBlock> {
    content
        .iter()
        .filter_map(|block| match block {
            AssistantContent::Text(text) if !text.text.is_empty() => {
                Some(AssistantBlock::Text(text.text.clone()))
            }
            AssistantContent::Thinking(thinking) if !thinking.thinking.is_empty() => {
                Some(AssistantBlock::Thinking(thinking.thinking.clone()))
            }
            AssistantContent::Text(_)
            | AssistantContent::Thinking(_)
            | AssistantContent::ToolCall(_) => None,
        })
        .collect()
}

/// The text blocks of user content, joined by blank lines.
pub fn user_text(content: &[UserContent]) -> String {
    let texts: Vec<&str> = content
        .iter()
        .filter_map(|block| match block {
            UserContent::Text(text) => Some(text.text.as_str()),
            UserContent::Image(_) => None,
        })
        .collect();
    texts.join("\n")
}

/// Applies one streaming delta to a partial assistant message (the client's half of the
/// daemon's `apply_event`).
pub fn apply_assistant_event(partial: &mut AssistantMessage, event: &AssistantMessageEvent) {
    fn slot(partial: &mut AssistantMessage, index: usize, empty: AssistantContent) {
        while partial.content.len() <= index {
            partial.content.push(empty.clone());
        }
    }
    let empty_text = || {
        AssistantContent::Text(TextContent {
            text: String::new(),
            text_signature: None,
        })
    };
    let empty_thinking = || {
        AssistantContent::Thinking(ThinkingContent {
            thinking: String::new(),
            thinking_signature: None,
            redacted: false,
        })
    };
    match event {
        AssistantMessageEvent::Start => {}
        AssistantMessageEvent::TextStart { content_index } => {
            slot(partial, *content_index, empty_text());
            partial.content[*content_index] = empty_text();
        }
        AssistantMessageEvent::TextDelta {
            content_index,
            delta,
        } => {
            slot(partial, *content_index, empty_text());
            if let AssistantContent::Text(text) = &mut partial.content[*content_index] {
                text.text.push_str(delta);
            }
        }
        AssistantMessageEvent::TextEnd {
            content_index,
            content,
            ..
        } => {
            slot(partial, *content_index, empty_text());
            if let AssistantContent::Text(text) = &mut partial.content[*content_index] {
                text.text.clone_from(content);
            }
        }
        AssistantMessageEvent::ThinkingStart { content_index } => {
            slot(partial, *content_index, empty_thinking());
            partial.content[*content_index] = empty_thinking();
        }
        AssistantMessageEvent::ThinkingDelta {
            content_index,
            delta,
        } => {
            slot(partial, *content_index, empty_thinking());
            if let AssistantContent::Thinking(thinking) = &mut partial.content[*content_index] {
                thinking.thinking.push_str(delta);
            }
        }
        AssistantMessageEvent::ThinkingEnd {
            content_index,
            content,
            ..
        } => {
            slot(partial, *content_index, empty_thinking());
            if let AssistantContent::Thinking(thinking) = &mut partial.content[*content_index] {
                thinking.thinking.clone_from(content);
            }
        }
        AssistantMessageEvent::ToolcallStart {
            content_index,
            id,
            tool_name,
        } => {
            let call = AssistantContent::ToolCall(ToolCall {
                id: id.clone(),
                name: tool_name.clone(),
                arguments: Value::Object(serde_json::Map::new()).into(),
                thought_signature: None,
            });
            slot(partial, *content_index, call.clone());
            partial.content[*content_index] = call;
        }
        AssistantMessageEvent::ToolcallDelta {
            content_index,
            arguments,
            ..
        } => {
            if let (Some(arguments), Some(AssistantContent::ToolCall(call))) =
                (arguments, partial.content.get_mut(*content_index))
            {
                call.arguments.set(arguments.clone());
            }
        }
        AssistantMessageEvent::ToolcallEnd {
            content_index,
            tool_call,
        } => {
            let call = AssistantContent::ToolCall(tool_call.clone());
            slot(partial, *content_index, call.clone());
            partial.content[*content_index] = call;
        }
        AssistantMessageEvent::Done { message, .. } => *partial = message.clone(),
        AssistantMessageEvent::Error { error, .. } => *partial = error.clone(),
    }
}
