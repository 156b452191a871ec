//! HTTP error answers: [`ErrorTurn`] (built with [`Turn::http_error`](super::Turn::http_error),
//! [`Turn::api_error`](super::Turn::api_error) or
//! [`Turn::context_overflow`](super::Turn::context_overflow)) and the provider-neutral
//! [`ScriptErrorKind`] each route renders as its API's error type, code or status.

use axum::http::{HeaderName, HeaderValue, StatusCode};
use serde_json::Value;

use super::script::header;

/// An HTTP error answer. Build it with [`Turn::http_error`], [`Turn::api_error`] or
/// [`Turn::context_overflow`].
#[derive(Clone, Debug)]
pub struct ErrorTurn {
    pub(super) status: StatusCode,
    pub(super) body: ErrorBody,
    pub(super) headers: Vec<(HeaderName, HeaderValue)>,
}

/// A provider-neutral error class, rendered as each API's error type, code or status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScriptErrorKind {
    /// A malformed request (400 `invalid_request_error`, `INVALID_ARGUMENT`).
    InvalidRequest,
    /// A missing or wrong key (401 `authentication_error`, `invalid_api_key`, `UNAUTHENTICATED`).
    Authentication,
    /// Too many requests (429 `rate_limit_error`, `rate_limit_exceeded`, `RESOURCE_EXHAUSTED`).
    RateLimit,
    /// The service is overloaded (Anthropic 529 `overloaded_error`, 503 elsewhere).
    Overloaded,
    /// An internal server error (500 `api_error`, `server_error`, `INTERNAL`).
    Server,
    /// The prompt does not fit the context window (400 with each API's own wording).
    ContextOverflow,
}

#[derive(Clone, Debug)]
pub(super) enum ErrorBody {
    Json(Value),
    Text(String),
    /// Each route renders its API's error shape; `None` uses the API's own wording.
    Api {
        kind: ScriptErrorKind,
        message: Option<String>,
    },
}

impl ErrorTurn {
    /// Adds a response header, e.g. `retry-after`.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push(header(name, value));
        self
    }
}

impl ScriptErrorKind {
    /// The HTTP status this kind usually comes with; used for the numeric codes inside
    /// in-stream errors (Gemini `error.code`).
    pub fn typical_status(self) -> u16 {
        match self {
            ScriptErrorKind::InvalidRequest | ScriptErrorKind::ContextOverflow => 400,
            ScriptErrorKind::Authentication => 401,
            ScriptErrorKind::RateLimit => 429,
            ScriptErrorKind::Overloaded => 503,
            ScriptErrorKind::Server => 500,
        }
    }
}
