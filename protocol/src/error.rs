//! Errors on the wire: the JSON-RPC error object and the closed [`ErrorKind`] enum carried in
//! `error.data.kind`.
//!
//! Clients branch on `data.kind`, never on message text. Every kind has a fixed JSON-RPC code
//! (the standard ones for the standard kinds, `-320xx` for ours). Adding a kind is an additive
//! change; renaming or removing one is a protocol break.
//!
//! Errors never carry a peer's input back in full: [`echo`] cuts what a message quotes (a
//! method name, an id, a value) to a bounded length, and [`ErrorObject::new`] bounds the whole
//! message, so a 10 MB method name gets an error of a few hundred bytes, not a 10 MB one.

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What went wrong, machine-readable. Each variant says what the client should do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The message was not valid JSON (-32700). Fix the sender's serializer.
    ParseError,
    /// The message was JSON but not a valid JSON-RPC 2.0 request (-32600), or was a batch.
    InvalidRequest,
    /// The method does not exist in this daemon (-32601). Check `capabilities.methods` from
    /// `initialize`.
    MethodNotFound,
    /// The params did not match the method's schema (-32602). `data.field` names the bad field.
    InvalidParams,
    /// A bug or unexpected failure inside the daemon (-32603). Report it with the daemon log.
    Internal,
    /// The daemon has more work queued than it accepts (-32001). Retry later with backoff.
    Overloaded,
    /// A request other than `initialize` arrived first (-32002). Send `initialize` first.
    NotInitialized,
    /// `initialize` was sent twice on one connection (-32003). Initialize once per connection.
    AlreadyInitialized,
    /// The client and daemon speak different protocol versions (-32004). `data.details` holds
    /// the daemon's versions; restart the daemon (`pictl daemon restart`) or upgrade the client.
    ProtocolMismatch,
    /// A message exceeded the daemon's size limit (-32005). The connection is closed; send
    /// smaller messages (large files belong on disk, not in messages).
    MessageTooLarge,
    /// The daemon is shutting down (-32006). Reconnect once a new daemon is up.
    ShuttingDown,
    /// The caller is not allowed to do this (-32007).
    Unauthorized,
    /// The named object (session, entry, model, ...) does not exist (-32010).
    NotFound,
    /// The target is busy, e.g. a session with an active run (-32011). Wait, steer or abort.
    Busy,
    /// The replay cursor is older than what the daemon retains (-32012). Re-read history with
    /// `session/read` and attach without a cursor.
    ResyncRequired,
    /// The model's context window is exceeded (-32013). Compact the session.
    ContextOverflow,
    /// The model provider failed (-32014). `message` carries the provider's explanation.
    ProviderError,
    /// The daemon's database failed (-32015): the disk is full, the database is read-only,
    /// damaged or locked by another program. `message` says which and what to do;
    /// `data.details.failure` is one of `disk_full`, `read_only`, `corrupt`, `io`, `locked`,
    /// `other`. Nothing of the failed request was saved and the session is as it was before.
    Storage,
    /// The session's extensions (pi's `session_before_*` handlers, perhaps after asking a
    /// person) cancelled the operation (-32016). Nothing changed; `message` names what was
    /// cancelled.
    Cancelled,
}

impl ErrorKind {
    /// The JSON-RPC error code of this kind.
    pub const fn code(self) -> i64 {
        match self {
            ErrorKind::ParseError => -32700,
            ErrorKind::InvalidRequest => -32600,
            ErrorKind::MethodNotFound => -32601,
            ErrorKind::InvalidParams => -32602,
            ErrorKind::Internal => -32603,
            ErrorKind::Overloaded => -32001,
            ErrorKind::NotInitialized => -32002,
            ErrorKind::AlreadyInitialized => -32003,
            ErrorKind::ProtocolMismatch => -32004,
            ErrorKind::MessageTooLarge => -32005,
            ErrorKind::ShuttingDown => -32006,
            ErrorKind::Unauthorized => -32007,
            ErrorKind::NotFound => -32010,
            ErrorKind::Busy => -32011,
            ErrorKind::ResyncRequired => -32012,
            ErrorKind::ContextOverflow => -32013,
            ErrorKind::ProviderError => -32014,
            ErrorKind::Storage => -32015,
            ErrorKind::Cancelled => -32016,
        }
    }
}

/// The JSON-RPC `error` member.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorObject {
    /// The JSON-RPC code, fixed per kind (see [`ErrorKind::code`]).
    pub code: i64,
    /// A sentence for humans that says what was wrong and what to do.
    pub message: String,
    /// Machine-readable detail; always present in errors from `pid`.
    // Boxed so that `Result<_, ErrorObject>` stays small.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Box<ErrorData>>,
}

/// The `error.data` member.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErrorData {
    /// What went wrong.
    pub kind: ErrorKind,
    /// For `invalid_params`: the path of the offending field (`cwd`, `images[2].data`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// Kind-specific detail, documented per kind in `docs/protocol.md`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

/// The longest text [`echo`] quotes unchanged, in bytes.
pub const ECHO_MAX_BYTES: usize = 128;
/// The longest message [`ErrorObject::new`] keeps unchanged, in bytes.
pub const MESSAGE_MAX_BYTES: usize = 4096;

/// Quotes a peer's input (a method name, an id, a path) in an error message: unchanged up to
/// [`ECHO_MAX_BYTES`], otherwise its start and end around an ellipsis, with its length:
/// `aaaa…zzzz (10485760 bytes)`.
pub fn echo(text: &str) -> Cow<'_, str> {
    cut(text, ECHO_MAX_BYTES, 80, 24)
}

/// `text` if it is at most `max` bytes, else its first `head` and last `tail` bytes (on
/// character boundaries) around an ellipsis, followed by the original length.
fn cut(text: &str, max: usize, head: usize, tail: usize) -> Cow<'_, str> {
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    let mut head_end = head;
    while !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = text.len() - tail;
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    Cow::Owned(format!(
        "{}…{} ({} bytes)",
        &text[..head_end],
        &text[tail_start..],
        text.len()
    ))
}

impl ErrorObject {
    /// Builds an error of `kind` with a human message. A message over [`MESSAGE_MAX_BYTES`]
    /// (one that quotes too much input) is cut in the middle, keeping what it says to do.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        let message = message.into();
        let message = match cut(&message, MESSAGE_MAX_BYTES, 2048, 1024) {
            Cow::Borrowed(_) => message,
            Cow::Owned(cut) => cut,
        };
        ErrorObject {
            code: kind.code(),
            message,
            data: Some(Box::new(ErrorData {
                kind,
                field: None,
                details: None,
            })),
        }
    }

    /// Adds the offending field's path (cut with [`echo`]: a path can hold a peer's map keys).
    pub fn with_field(mut self, field: impl Into<String>) -> Self {
        if let Some(data) = &mut self.data {
            let field = field.into();
            data.field = Some(match echo(&field) {
                Cow::Borrowed(_) => field,
                Cow::Owned(cut) => cut,
            });
        }
        self
    }

    /// Adds kind-specific detail.
    pub fn with_details(mut self, details: Value) -> Self {
        if let Some(data) = &mut self.data {
            data.details = Some(details);
        }
        self
    }

    /// The kind, when the error carries one (errors from `pid` always do).
    pub fn kind(&self) -> Option<ErrorKind> {
        self.data.as_ref().map(|data| data.kind)
    }
}

impl std::fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}
