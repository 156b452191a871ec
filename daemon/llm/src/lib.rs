//! pi-llm: the provider-agnostic streaming LLM layer (pi-ai's role).
//!
//! - `types`: messages (user, assistant, toolResult) and content blocks in pi's JSON shapes,
//!   usage and cost, stop reasons.
//! - `event`: the unified stream of one response ([`StreamEvent`]) and [`AssistantStream`],
//!   which applies every event to the partial message it exposes.
//! - `model`: the [`Model`] description and thinking levels.
//! - `provider`: the request [`Context`], [`StreamOptions`] and the [`Provider`] trait every
//!   wire format implements.
//! - `faux`: an in-process scripted provider for unit tests.
//! - `catalog`: built-in providers and models, generated from pi's own catalog
//!   (`catalog/pi-models.json`).
//! - `compat`: quirks of OpenAI-compatible servers, configured and detected.
//! - `config_value`: `!command` / variable-name / literal values, with an injectable
//!   environment.
//! - `auth`, `keys`: pi's `auth.json` and key precedence; `oauth`: subscription logins
//!   (Anthropic, Codex, Copilot) and refreshing their tokens.
//! - `models_json`, `models_merge`: pi's `models.json`, validated and merged with built-ins.
//! - `resolve`, `registry`: model resolution and the [`ModelRegistry`].
//! - `thinking`: thinking levels a model offers and clamping.
//!
//! Architecture invariant: pi-llm knows nothing of sessions, storage or transports. A provider
//! never fails after returning its stream: every failure becomes the final `Error` event with
//! the partial message (stop reason `error` or `aborted`).

pub mod assemble;
pub mod auth;
pub mod aws;
pub mod catalog;
pub mod compat;
pub mod config_value;
pub mod event;
pub mod failure;
pub mod faux;
pub mod http;
pub mod keys;
mod level;
pub mod model;
pub mod models_json;
pub mod models_merge;
pub mod oauth;
pub mod partial_json;
pub mod provider;
pub mod providers;
pub mod registry;
pub mod resolve;
pub mod retry;
pub mod schema;
pub mod sse;
pub mod thinking;
pub mod transform;
pub mod types;

pub use auth::{AuthCredential, AuthError, AuthFile, OAuthCredential};
pub use catalog::{PROVIDERS, ProviderInfo, builtin_models};
pub use compat::{
    MaxTokensField, OpenAiCompletionsCompat, ResolvedCompat, RoutingPreferences, ThinkingFormat,
};
pub use config_value::{
    CommandError, ConfigValueResolver, Environment, MapEnvironment, ProcessEnvironment,
};
pub use event::{AssistantStream, DoneReason, ErrorReason, StreamEvent, StreamSender, apply_event};
pub use failure::{Failure, FailureKind};
pub use keys::{ConfiguredKey, KeyError, KeySource, ResolvedKey};
pub use model::{InputKind, Model, ModelCost, ThinkingLevel};
pub use models_json::{ModelsFile, ModelsJsonError};
pub use provider::{
    ApiKey, CacheRetention, Context, PayloadHook, Provider, RequestHooks, ResponseHook,
    StreamOptions, ThinkingBudgets, ToolDefinition, Transport,
};
pub use providers::ProviderRouter;
pub use registry::{Clock, Diagnostic, DiagnosticKind, ModelRegistry, RegistryConfig};
pub use resolve::ResolveError;
pub use retry::{RetryDecision, RetryPolicy};
pub use types::is_context_overflow;
pub use types::{
    AssistantContent, AssistantMessage, Cost, ImageContent, Message, StopReason, TextContent,
    ThinkingContent, ToolCall, ToolResultMessage, Usage, UserContent, UserMessage,
};
