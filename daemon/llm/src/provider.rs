//! The request side: what is sent ([`Context`], [`ToolDefinition`], [`StreamOptions`]) and the
//! [`Provider`] trait each wire format implements.

use std::fmt;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::event::AssistantStream;
use crate::model::{Model, ThinkingLevel};
use crate::types::Message;

/// A tool as the model sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolDefinition {
    /// Tool name.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
}

/// Everything the model is shown.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Context {
    /// The system prompt.
    pub system_prompt: Option<String>,
    /// The conversation.
    pub messages: Vec<Message>,
    /// Tools the model may call.
    pub tools: Vec<ToolDefinition>,
}

/// An API key or token. Never printed: `Debug` and `Display` show `***`. A key that is a
/// subscription login's token carries the login, so it can be refreshed
/// ([`crate::oauth::LoginRef`]); equality is the secret's.
#[derive(Clone)]
pub struct ApiKey {
    secret: String,
    login: Option<crate::oauth::LoginRef>,
}

impl PartialEq for ApiKey {
    fn eq(&self, other: &Self) -> bool {
        self.secret == other.secret
    }
}

impl Eq for ApiKey {}

impl ApiKey {
    /// Wraps a secret.
    pub fn new(secret: impl Into<String>) -> Self {
        ApiKey {
            secret: secret.into(),
            login: None,
        }
    }

    /// A login's access token, refreshed through `login` when it expires.
    pub fn from_login(secret: impl Into<String>, login: crate::oauth::LoginRef) -> Self {
        ApiKey {
            secret: secret.into(),
            login: Some(login),
        }
    }

    /// The login this token belongs to, if it is one.
    pub fn login(&self) -> Option<&crate::oauth::LoginRef> {
        self.login.as_ref()
    }

    /// The secret, for building a request header. Never log the result.
    pub fn expose(&self) -> &str {
        &self.secret
    }

    /// Whether this is a Claude Pro/Max OAuth token (pi's test: `sk-ant-oat` in it), which
    /// Anthropic takes only as Claude Code sends it.
    pub fn is_anthropic_oauth(&self) -> bool {
        self.secret.contains("sk-ant-oat")
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// Per-request options.
#[derive(Clone, Debug, Default)]
pub struct StreamOptions {
    /// The resolved key (`None` for servers that need none).
    pub api_key: Option<ApiKey>,
    /// Requested thinking level (clamped to the model by the provider).
    pub thinking: ThinkingLevel,
    /// Output token cap; `None` uses `min(model.max_tokens, 32000)`.
    pub max_tokens: Option<u64>,
    /// Session id, for prompt-cache keys.
    pub session_id: Option<String>,
    /// Cancelling ends the HTTP stream promptly; the stream then ends with `Error{aborted}`.
    pub cancel: CancellationToken,
    /// Sees (and may replace) the request body before it is sent (pi's
    /// `before_provider_request`); `None` for most requests.
    pub payload: Option<PayloadHook>,
    /// Hears the response's status and headers before its body is read (pi's
    /// `after_provider_response`); `None` for most requests.
    pub response: Option<ResponseHook>,
    /// Thinking token budgets per level, over the providers' defaults (pi's
    /// `thinkingBudgets` setting).
    pub thinking_budgets: ThinkingBudgets,
    /// How long the provider may take to answer a request (its response's headers) before
    /// the request fails as a connection error, which the agent retries (pi's
    /// `retry.provider.timeoutMs`); `None`: no limit beyond the client's own.
    pub request_timeout: Option<std::time::Duration>,
    /// pi's `retry.provider.maxRetries`: how often the client library pi uses for a wire
    /// format (Anthropic's and OpenAI's SDKs: `anthropic-messages`, `openai-completions`,
    /// `openai-responses`, `azure-openai-responses`) sends a request again, unseen, after a
    /// connection error or a 408, 409, 429 or 5xx status, before the agent's own retries
    /// (`retry.*`) see the failure. `None`: no such retries (every retry is the agent's, and
    /// shown).
    pub provider_retries: Option<u32>,
    /// pi's `retry.provider.maxRetryDelayMs`: the longest wait a provider may ask for before
    /// a retry; a failure asking for longer says so in its message (the agent does not
    /// retry it). `None`: no cap.
    pub max_retry_delay: Option<std::time::Duration>,
    /// pi's `transport`: how `openai-codex-responses` requests travel (other formats always
    /// use HTTP with server-sent events).
    pub transport: Transport,
    /// How long providers keep the prompt cache (pi's `PI_CACHE_RETENTION=long`).
    pub cache_retention: CacheRetention,
    /// The environment the request's session sees (its client's), for the providers that read
    /// more than a key from it (Azure's resource and deployments); `None`: the daemon's own.
    pub env: Option<std::sync::Arc<std::collections::BTreeMap<String, String>>>,
}

impl StreamOptions {
    /// `name` from the session's environment, else the daemon's; empty counts as unset.
    pub fn env_var(&self, name: &str) -> Option<String> {
        match &self.env {
            Some(env) => env.get(name).cloned(),
            None => std::env::var(name).ok(),
        }
        .filter(|value| !value.trim().is_empty())
    }
}

/// How long a provider keeps the prompt cache: its default, or (pi's `PI_CACHE_RETENTION=long`)
/// the longest it offers — an hour at Anthropic (`cache_control.ttl: 1h`), a day at OpenAI
/// (`prompt_cache_retention: 24h`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CacheRetention {
    /// The provider's default (minutes).
    #[default]
    Short,
    /// The longest the provider offers.
    Long,
}

impl CacheRetention {
    /// pi's reading of `PI_CACHE_RETENTION`: `long` is long, anything else short.
    pub fn from_env_value(value: Option<&str>) -> CacheRetention {
        if value == Some("long") {
            CacheRetention::Long
        } else {
            CacheRetention::Short
        }
    }
}

/// How a request travels where a provider offers more than HTTP with server-sent events
/// (pi's `transport` setting; today the ChatGPT backend's WebSocket).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Transport {
    /// HTTP with server-sent events only.
    Sse,
    /// A WebSocket per session, the whole conversation in every request; HTTP when it
    /// cannot be opened.
    WebSocket,
    /// Like [`Transport::WebSocket`], and a request that only adds to the previous one sends
    /// what it adds, continuing the previous response (`previous_response_id`).
    WebSocketCached,
    /// pi's default: [`Transport::WebSocketCached`].
    #[default]
    Auto,
}

impl Transport {
    /// pi's names: `sse`, `websocket`, `websocket-cached`, `auto`.
    pub fn parse(name: &str) -> Option<Transport> {
        Some(match name {
            "sse" => Transport::Sse,
            "websocket" => Transport::WebSocket,
            "websocket-cached" => Transport::WebSocketCached,
            "auto" => Transport::Auto,
            _ => return None,
        })
    }
}

/// Token budgets of the thinking levels that take one (pi's `thinkingBudgets`); `None`: the
/// provider's default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThinkingBudgets {
    /// `minimal`.
    pub minimal: Option<u64>,
    /// `low`.
    pub low: Option<u64>,
    /// `medium`.
    pub medium: Option<u64>,
    /// `high` (and `xhigh`, where a budget applies).
    pub high: Option<u64>,
}

impl ThinkingBudgets {
    /// The budget set for `level` (`off` has none).
    pub fn of(&self, level: crate::ThinkingLevel) -> Option<u64> {
        use crate::ThinkingLevel;
        match level {
            ThinkingLevel::Off => None,
            ThinkingLevel::Minimal => self.minimal,
            ThinkingLevel::Low => self.low,
            ThinkingLevel::Medium => self.medium,
            ThinkingLevel::High | ThinkingLevel::Xhigh => self.high,
        }
    }
}

/// Given an HTTP response's status and headers (lower-case names), awaited before the body
/// is read.
#[derive(Clone)]
pub struct ResponseHook(pub std::sync::Arc<ResponseFn>);

/// What a [`ResponseHook`] runs.
pub type ResponseFn = dyn Fn(
        u16,
        Vec<(String, String)>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>
    + Send
    + Sync;

impl fmt::Debug for ResponseHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ResponseHook")
    }
}

/// The hooks of one request: what sees its body, what hears its response.
#[derive(Clone, Debug, Default)]
pub struct RequestHooks {
    /// pi's `before_provider_request`.
    pub payload: Option<PayloadHook>,
    /// pi's `after_provider_response`.
    pub response: Option<ResponseHook>,
    /// How long the provider may take to answer ([`StreamOptions::request_timeout`]).
    pub timeout: Option<std::time::Duration>,
    /// Times a request that failed before its response began is sent again on its own
    /// ([`StreamOptions::provider_retries`]); 0 for wire formats pi's SDKs do not retry.
    pub retries: u32,
    /// See [`StreamOptions::max_retry_delay`].
    pub max_retry_delay: Option<std::time::Duration>,
}

impl RequestHooks {
    /// The hooks (and the answer timeout) `options` carries.
    pub fn of(options: &StreamOptions) -> Self {
        RequestHooks {
            payload: options.payload.clone(),
            response: options.response.clone(),
            timeout: options.request_timeout,
            retries: options.provider_retries.unwrap_or(0),
            max_retry_delay: options.max_retry_delay,
        }
    }
}

/// Given a request body as JSON, gives the body to send (the same, or another).
#[derive(Clone)]
pub struct PayloadHook(pub std::sync::Arc<PayloadFn>);

/// What a [`PayloadHook`] runs.
pub type PayloadFn = dyn Fn(
        serde_json::Value,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = serde_json::Value> + Send>>
    + Send
    + Sync;

impl fmt::Debug for PayloadHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PayloadHook")
    }
}

/// A wire format. `stream` returns at once; the response arrives as events.
///
/// Contract: never fails after returning. Every failure (HTTP error, cut stream, abort) is the
/// final `Error` event carrying the partial message with stop reason `error` or `aborted`.
pub trait Provider: Send + Sync {
    /// Starts one request.
    fn stream(&self, model: &Model, context: &Context, options: StreamOptions) -> AssistantStream;
}
