//! The script a test feeds the [`ModelServer`](super::ModelServer): provider-neutral turns,
//! either a streamed [`Reply`] built from [`Turn::reply`] (content blocks, usage, stop
//! reason, chunking and faults) or an HTTP error built from [`Turn::http_error`],
//! [`Turn::api_error`] or [`Turn::context_overflow`].
//!
//! Builders validate what they can when the test calls them and panic there, in the test,
//! with a message saying what is wrong; the server task never panics over a script.

use std::time::Duration;

use axum::http::{HeaderName, HeaderValue, StatusCode};
use serde_json::Value;

use super::error_turn::{ErrorBody, ErrorTurn, ScriptErrorKind};
use super::gate::Gate;

/// How many characters a text, thinking or argument delta carries unless the test says
/// otherwise: small enough that every block arrives in several deltas.
pub const DEFAULT_DELTA_CHARS: usize = 8;

/// One scripted answer: the response to the next request, whatever its route.
#[derive(Clone, Debug)]
pub struct Turn {
    pub(super) kind: TurnKind,
}

/// A streamed (HTTP 200, SSE) answer. Build it with [`Turn::reply`]; blocks stream in the
/// order they were added.
#[derive(Clone, Debug)]
pub struct Reply {
    pub(super) blocks: Vec<Block>,
    pub(super) usage: ScriptUsage,
    pub(super) stop: Option<ScriptStop>,
    // Invariant: at least 1.
    pub(super) delta_chars: usize,
    pub(super) faults: Faults,
    pub(super) stream_error: Option<(ScriptErrorKind, String)>,
    pub(super) headers: Vec<(HeaderName, HeaderValue)>,
}

/// Token counts of a reply, provider-neutral. Each wire format converts them to its own
/// conventions (see the module documentation of [`super`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScriptUsage {
    /// Input tokens that were neither read from nor written to a cache.
    pub input: u64,
    /// All output tokens, reasoning included (as OpenAI and Anthropic count them).
    pub output: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read: u64,
    /// Input tokens written to the prompt cache (only Anthropic reports these).
    pub cache_write: u64,
    /// The part of `output` spent on reasoning (OpenAI and Gemini report it separately).
    pub reasoning: u64,
}

/// Why a reply ended, rendered as each API's own stop or finish reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScriptStop {
    /// The model finished (`end_turn`, `stop`, `completed`, `STOP`).
    Stop,
    /// The output token limit was hit (`max_tokens`, `length`, `max_output_tokens`, `MAX_TOKENS`).
    Length,
    /// The model wants tool results (`tool_use`, `tool_calls`; Responses and Gemini have no
    /// such reason and report a normal completion).
    ToolUse,
    /// The model refused or was filtered (`refusal`, `content_filter`, `SAFETY`).
    Refusal,
}

#[derive(Clone, Debug)]
pub(super) enum TurnKind {
    Reply(Reply),
    Error(ErrorTurn),
}

#[derive(Clone, Debug)]
pub(super) enum Block {
    Thinking {
        text: String,
        signature: Option<String>,
    },
    RedactedThinking {
        data: String,
    },
    Text {
        text: String,
    },
    ToolCall {
        id: String,
        name: String,
        arguments: String,
        /// Character offsets to split `arguments` at instead of every `delta_chars`.
        // Invariant: strictly increasing, each inside `1..arguments.chars().count()`.
        splits: Option<Vec<usize>>,
    },
}

#[derive(Clone, Debug, Default)]
pub(super) struct Faults {
    pub(super) delay_each: Option<Duration>,
    pub(super) hold: Option<(usize, Gate)>,
    pub(super) cut: Option<Cut>,
    pub(super) malformed_after: Option<usize>,
    // Invariant: at least 1.
    pub(super) body_split_bytes: Option<usize>,
}

/// Where and how a stream ends early.
#[derive(Clone, Copy, Debug)]
pub(super) enum Cut {
    /// After this many events the connection is reset: the client sees a transport error.
    Disconnect(usize),
    /// After this many events the body ends cleanly, without the terminal events.
    Truncate(usize),
}

impl Turn {
    /// Starts a streamed reply. Add blocks with [`Reply::text`], [`Reply::thinking`],
    /// [`Reply::tool_call`] and friends.
    pub fn reply() -> Reply {
        Reply {
            blocks: Vec::new(),
            usage: ScriptUsage::default(),
            stop: None,
            delta_chars: DEFAULT_DELTA_CHARS,
            faults: Faults::default(),
            stream_error: None,
            headers: Vec::new(),
        }
    }

    /// An HTTP error with exactly this body: JSON, or plain text when `body` is a JSON string.
    pub fn http_error(status: u16, body: Value) -> ErrorTurn {
        let body = match body {
            Value::String(text) => ErrorBody::Text(text),
            json => ErrorBody::Json(json),
        };
        ErrorTurn {
            status: status_code(status),
            body,
            headers: Vec::new(),
        }
    }

    /// An HTTP error whose JSON body has the shape of the real API on the route it is served
    /// on, e.g. Anthropic `{"type":"error","error":{"type":"overloaded_error",...}}`.
    pub fn api_error(status: u16, kind: ScriptErrorKind, message: impl Into<String>) -> ErrorTurn {
        ErrorTurn {
            status: status_code(status),
            body: ErrorBody::Api {
                kind,
                message: Some(message.into()),
            },
            headers: Vec::new(),
        }
    }

    /// A 400 context-overflow error in each API's real shape and wording, e.g. Anthropic's
    /// `prompt is too long: …` or OpenAI's `context_length_exceeded`.
    pub fn context_overflow() -> ErrorTurn {
        ErrorTurn {
            status: StatusCode::BAD_REQUEST,
            body: ErrorBody::Api {
                kind: ScriptErrorKind::ContextOverflow,
                message: None,
            },
            headers: Vec::new(),
        }
    }
}

impl Reply {
    /// Adds an unsigned thinking block.
    pub fn thinking(mut self, text: impl Into<String>) -> Self {
        self.blocks.push(Block::Thinking {
            text: text.into(),
            signature: None,
        });
        self
    }

    /// Adds a signed thinking block: Anthropic `signature_delta`, Gemini `thoughtSignature`,
    /// Responses `encrypted_content` (when the request asked for it).
    pub fn thinking_signed(
        mut self,
        text: impl Into<String>,
        signature: impl Into<String>,
    ) -> Self {
        self.blocks.push(Block::Thinking {
            text: text.into(),
            signature: Some(signature.into()),
        });
        self
    }

    /// Adds an Anthropic `redacted_thinking` block; Responses renders it as a reasoning item
    /// with only `encrypted_content`; chat completions and Gemini skip it.
    pub fn redacted_thinking(mut self, data: impl Into<String>) -> Self {
        self.blocks
            .push(Block::RedactedThinking { data: data.into() });
        self
    }

    /// Adds a text block.
    pub fn text(mut self, text: impl Into<String>) -> Self {
        self.blocks.push(Block::Text { text: text.into() });
        self
    }

    /// Adds a tool call whose arguments are `arguments` serialized compactly.
    pub fn tool_call(
        self,
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: Value,
    ) -> Self {
        self.tool_call_raw(id, name, arguments.to_string())
    }

    /// Adds a tool call whose argument JSON is exactly `arguments`, which need not be valid.
    /// On Responses an id `call|item` is split into `call_id` and the item `id`.
    pub fn tool_call_raw(
        mut self,
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        self.blocks.push(Block::ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
            splits: None,
        });
        self
    }

    /// Splits the argument JSON of the last added tool call at these character offsets
    /// (strictly increasing, strictly inside the string) instead of every `delta_chars`.
    /// Gemini sends arguments whole and ignores this.
    pub fn arg_splits(mut self, offsets: Vec<usize>) -> Self {
        let Some(Block::ToolCall {
            arguments, splits, ..
        }) = self.blocks.last_mut()
        else {
            panic!("arg_splits applies to the last added block, which must be a tool call");
        };
        let n_chars = arguments.chars().count();
        let increasing = offsets.windows(2).all(|pair| pair[0] < pair[1]);
        let inside = offsets.iter().all(|&offset| 0 < offset && offset < n_chars);
        assert!(
            increasing && inside,
            "arg_splits {offsets:?} must be strictly increasing and inside 1..{n_chars} \
             (the argument JSON has {n_chars} characters)"
        );
        *splits = Some(offsets);
        self
    }

    /// Sets the token counts reported at the end of the stream (default: all zero).
    pub fn usage(mut self, usage: ScriptUsage) -> Self {
        self.usage = usage;
        self
    }

    /// Sets the stop reason (default: [`ScriptStop::ToolUse`] when the reply has tool calls,
    /// else [`ScriptStop::Stop`]).
    pub fn stop(mut self, stop: ScriptStop) -> Self {
        self.stop = Some(stop);
        self
    }

    /// Splits every text, thinking and argument string into deltas of `n` characters
    /// (default [`DEFAULT_DELTA_CHARS`]).
    pub fn delta_chars(mut self, n: usize) -> Self {
        assert!(n > 0, "delta_chars must be at least 1");
        self.delta_chars = n;
        self
    }

    /// Writes the response body in pieces of `n` bytes, each flushed as its own HTTP chunk,
    /// regardless of SSE event, line and UTF-8 character boundaries.
    pub fn body_split_bytes(mut self, n: usize) -> Self {
        assert!(n > 0, "body_split_bytes must be at least 1");
        self.faults.body_split_bytes = Some(n);
        self
    }

    /// Waits `delay` before each SSE event.
    pub fn delay_each(mut self, delay: Duration) -> Self {
        self.faults.delay_each = Some(delay);
        self
    }

    /// Stops after `n_events` SSE events until `gate` is released; [`Gate::reached`]
    /// resolves once the stream waits there. Past the last event it holds before the body ends.
    pub fn hold_after(mut self, n_events: usize, gate: &Gate) -> Self {
        self.faults.hold = Some((n_events, gate.clone()));
        self
    }

    /// Resets the connection after `n_events` SSE events: the client sees a transport error
    /// and no terminal events. Replaces an earlier [`Reply::truncate_after`].
    pub fn disconnect_after(mut self, n_events: usize) -> Self {
        self.faults.cut = Some(Cut::Disconnect(n_events));
        self
    }

    /// Ends the body cleanly after `n_events` SSE events, without the terminal events.
    /// Replaces an earlier [`Reply::disconnect_after`].
    pub fn truncate_after(mut self, n_events: usize) -> Self {
        self.faults.cut = Some(Cut::Truncate(n_events));
        self
    }

    /// Inserts an SSE event whose `data:` is not valid JSON after `n_events` events, then
    /// continues. It counts as an event for the other faults.
    pub fn malformed_after(mut self, n_events: usize) -> Self {
        self.faults.malformed_after = Some(n_events);
        self
    }

    /// Ends the stream with the API's in-stream error instead of its terminal events.
    pub fn stream_error(mut self, kind: ScriptErrorKind, message: impl Into<String>) -> Self {
        self.stream_error = Some((kind, message.into()));
        self
    }

    /// Adds a response header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push(header(name, value));
        self
    }

    pub(super) fn stop_reason(&self) -> ScriptStop {
        let has_tool_calls = self
            .blocks
            .iter()
            .any(|block| matches!(block, Block::ToolCall { .. }));
        match self.stop {
            Some(stop) => stop,
            None if has_tool_calls => ScriptStop::ToolUse,
            None => ScriptStop::Stop,
        }
    }

    /// `text` cut into deltas of `delta_chars` characters; no delta for an empty string.
    pub(super) fn deltas<'a>(&self, text: &'a str) -> Vec<&'a str> {
        let mut boundaries: Vec<usize> = text
            .char_indices()
            .map(|(byte, _)| byte)
            .step_by(self.delta_chars)
            .collect();
        boundaries.push(text.len());
        boundaries
            .windows(2)
            .map(|pair| &text[pair[0]..pair[1]])
            .collect()
    }

    /// A tool call's argument deltas: at its explicit splits, else every `delta_chars`.
    pub(super) fn argument_deltas<'a>(
        &self,
        arguments: &'a str,
        splits: Option<&[usize]>,
    ) -> Vec<&'a str> {
        let Some(splits) = splits else {
            return self.deltas(arguments);
        };
        let char_bytes: Vec<usize> = arguments.char_indices().map(|(byte, _)| byte).collect();
        let mut boundaries = vec![0];
        boundaries.extend(splits.iter().map(|&offset| char_bytes[offset]));
        boundaries.push(arguments.len());
        boundaries
            .windows(2)
            .map(|pair| &arguments[pair[0]..pair[1]])
            .collect()
    }
}

impl From<Reply> for Turn {
    fn from(reply: Reply) -> Turn {
        Turn {
            kind: TurnKind::Reply(reply),
        }
    }
}

impl From<ErrorTurn> for Turn {
    fn from(error: ErrorTurn) -> Turn {
        Turn {
            kind: TurnKind::Error(error),
        }
    }
}

fn status_code(status: u16) -> StatusCode {
    StatusCode::from_u16(status)
        .unwrap_or_else(|_| panic!("{status} is not an HTTP status code (100..=999)"))
}

pub(super) fn header(name: &str, value: &str) -> (HeaderName, HeaderValue) {
    let name = HeaderName::try_from(name)
        .unwrap_or_else(|_| panic!("{name:?} is not a valid HTTP header name"));
    let value = HeaderValue::try_from(value)
        .unwrap_or_else(|_| panic!("{value:?} is not a valid HTTP header value"));
    (name, value)
}
