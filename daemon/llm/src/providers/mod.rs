//! The wire formats, one module each, and [`ProviderRouter`], which streams any model by its
//! `api`.
//!
//! Every provider builds its request with the shared helpers here, sends it through
//! [`crate::http`], and decodes the SSE stream into the [`crate::assemble::Assembler`].

pub mod anthropic;
pub mod azure_openai;
pub mod bedrock;
mod codex_socket;
mod deferred;
pub mod google;
pub mod google_vertex;
mod login;
pub mod mistral;
pub mod openai_codex;
pub mod openai_completions;
pub mod openai_responses;

use std::sync::Arc;

use serde_json::Value;

use crate::event::AssistantStream;
use crate::failure::{Failure, FailureKind};
use crate::http::Step;
use crate::model::Model;
use crate::provider::{Context, Provider, StreamOptions};

/// API names of the built-in wire formats.
pub const ANTHROPIC_MESSAGES: &str = "anthropic-messages";
/// OpenAI Chat Completions and compatible servers.
pub const OPENAI_COMPLETIONS: &str = "openai-completions";
/// OpenAI Responses.
pub const OPENAI_RESPONSES: &str = "openai-responses";
/// Google Gemini (Generative Language API).
pub const GOOGLE_GENERATIVE_AI: &str = "google-generative-ai";
/// Amazon Bedrock's Converse API.
pub const BEDROCK_CONVERSE_STREAM: &str = "bedrock-converse-stream";
/// Mistral's chat API (through its SDK, in pi).
pub const MISTRAL_CONVERSATIONS: &str = "mistral-conversations";
/// Gemini on Vertex AI.
pub const GOOGLE_VERTEX: &str = "google-vertex";
/// Azure OpenAI's Responses API.
pub const AZURE_OPENAI_RESPONSES: &str = "azure-openai-responses";
/// The ChatGPT backend's Responses API (a ChatGPT Plus/Pro login).
pub const OPENAI_CODEX_RESPONSES: &str = "openai-codex-responses";

/// Streams any model through the provider registered for its `api`.
#[derive(Clone)]
pub struct ProviderRouter {
    extra: Vec<(String, Arc<dyn Provider>)>,
}

impl std::fmt::Debug for ProviderRouter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let apis: Vec<&str> = self.extra.iter().map(|(api, _)| api.as_str()).collect();
        f.debug_struct("ProviderRouter")
            .field("extra", &apis)
            .finish()
    }
}

impl Default for ProviderRouter {
    fn default() -> Self {
        ProviderRouter::new()
    }
}

impl ProviderRouter {
    /// The four built-in wire formats.
    pub fn new() -> Self {
        ProviderRouter { extra: Vec::new() }
    }

    /// Adds (or overrides) the provider for `api` (e.g. `faux` in tests).
    pub fn with(mut self, api: impl Into<String>, provider: Arc<dyn Provider>) -> Self {
        self.extra.push((api.into(), provider));
        self
    }
}

impl Provider for ProviderRouter {
    fn stream(&self, model: &Model, context: &Context, options: StreamOptions) -> AssistantStream {
        // A subscription login: made fresh first, refreshed again on a 401.
        if let Some(login) = options
            .api_key
            .as_ref()
            .and_then(|key| key.login())
            .cloned()
        {
            let direct = Arc::new(Direct(self.clone()));
            return login::stream_with_login(direct, login, model, context, options);
        }
        self.route(model, context, options)
    }
}

/// The router without the login step (what a login's stream sends through).
struct Direct(ProviderRouter);

impl Provider for Direct {
    fn stream(&self, model: &Model, context: &Context, options: StreamOptions) -> AssistantStream {
        self.0.route(model, context, options)
    }
}

/// Whether the built-in wire formats include `api`.
pub fn speaks(api: &str) -> bool {
    [
        ANTHROPIC_MESSAGES,
        OPENAI_COMPLETIONS,
        OPENAI_RESPONSES,
        OPENAI_CODEX_RESPONSES,
        AZURE_OPENAI_RESPONSES,
        GOOGLE_GENERATIVE_AI,
        GOOGLE_VERTEX,
        MISTRAL_CONVERSATIONS,
        BEDROCK_CONVERSE_STREAM,
    ]
    .contains(&api)
}

impl ProviderRouter {
    fn route(&self, model: &Model, context: &Context, options: StreamOptions) -> AssistantStream {
        if let Some((_, provider)) = self.extra.iter().rev().find(|(api, _)| *api == model.api) {
            return provider.stream(model, context, options);
        }
        match model.api.as_str() {
            ANTHROPIC_MESSAGES => anthropic::AnthropicProvider.stream(model, context, options),
            OPENAI_COMPLETIONS => {
                openai_completions::OpenAiCompletionsProvider.stream(model, context, options)
            }
            OPENAI_RESPONSES => {
                openai_responses::OpenAiResponsesProvider.stream(model, context, options)
            }
            GOOGLE_GENERATIVE_AI => google::GoogleProvider.stream(model, context, options),
            GOOGLE_VERTEX => google_vertex::GoogleVertexProvider.stream(model, context, options),
            MISTRAL_CONVERSATIONS => mistral::MistralProvider.stream(model, context, options),
            BEDROCK_CONVERSE_STREAM => bedrock::BedrockProvider.stream(model, context, options),
            AZURE_OPENAI_RESPONSES => {
                azure_openai::AzureOpenAiProvider.stream(model, context, options)
            }
            OPENAI_CODEX_RESPONSES => {
                openai_codex::OpenAiCodexProvider.stream(model, context, options)
            }
            other => {
                let message = format!(
                    "{}/{} is served through the API {other:?}, which this daemon does not speak \
                     yet; choose a model of another provider (`pictl models` lists them)",
                    model.provider, model.id
                );
                crate::http::spawn_stream(
                    model,
                    Err(message),
                    options.cancel,
                    Default::default(),
                    NeverDecoder,
                )
            }
        }
    }
}

/// The decoder of a request that is never sent.
struct NeverDecoder;

impl crate::http::Decoder for NeverDecoder {
    async fn on_event(
        &mut self,
        _event: &crate::sse::SseEvent,
        _out: &mut crate::assemble::Assembler,
    ) -> Step {
        Step::Continue
    }
}

/// Sends `request` (built from `options`) and decodes its response with `decoder`: what each
/// wire format's `stream` does once its request is built.
pub(crate) fn send<D: crate::http::Decoder>(
    model: &Model,
    request: Result<crate::http::HttpRequest, String>,
    options: &StreamOptions,
    decoder: D,
) -> AssistantStream {
    let mut hooks = crate::provider::RequestHooks::of(options);
    if !SDK_RETRIED.contains(&model.api.as_str()) {
        hooks.retries = 0;
    }
    crate::http::spawn_stream(model, request, options.cancel.clone(), hooks, decoder)
}

/// The wire formats whose requests pi sends through a client library that retries them on
/// its own (Anthropic's and OpenAI's SDKs, with `retry.provider.maxRetries`).
const SDK_RETRIED: [&str; 4] = [
    ANTHROPIC_MESSAGES,
    OPENAI_COMPLETIONS,
    OPENAI_RESPONSES,
    AZURE_OPENAI_RESPONSES,
];

/// pi's base output cap: the caller's value, else `min(model.maxTokens, 32000)`.
pub(crate) fn base_max_tokens(model: &Model, options: &StreamOptions) -> u64 {
    options
        .max_tokens
        .unwrap_or_else(|| model.max_tokens.min(32_000))
        .max(1)
}

/// The model's configured extra headers.
pub(crate) fn header_list(model: &Model) -> Vec<(String, String)> {
    model
        .headers
        .iter()
        .map(|(name, value)| (name.to_ascii_lowercase(), value.clone()))
        .collect()
}

/// Parses one event's JSON data; a malformed chunk fails the response as a cut stream (the
/// next attempt may well succeed).
pub(crate) fn parse_event_json(data: &str) -> Result<Value, Step> {
    serde_json::from_str(data).map_err(|error| Step::Fail {
        message: format!("the provider sent a malformed stream chunk ({error})"),
        failure: Failure::new(FailureKind::StreamCut),
    })
}

/// The class of an OpenAI-style in-stream error (chat completions `{"error": …}`, Responses
/// `response.failed` and `error`), which carries no HTTP status: its string `code` and `type`
/// say what happened, and the text decides when they say nothing known.
pub(crate) fn openai_error_kind(
    code: Option<&str>,
    error_type: Option<&str>,
    message: &str,
) -> FailureKind {
    let by_text = crate::failure::classify_error_message(message);
    if by_text == FailureKind::ContextOverflow {
        return by_text;
    }
    match (code.unwrap_or_default(), error_type.unwrap_or_default()) {
        ("context_length_exceeded", _) => FailureKind::ContextOverflow,
        ("rate_limit_exceeded", _) | (_, "rate_limit_error") => FailureKind::RateLimited,
        ("server_is_overloaded", _) => FailureKind::Overloaded,
        ("server_error", _) | (_, "server_error") => FailureKind::ServerError,
        ("invalid_api_key", _) | (_, "authentication_error") => FailureKind::Auth,
        _ => by_text,
    }
}

/// The headers Copilot wants on each request (pi's): who started it (`user` when the last
/// message is the user's, else `agent`), the intent, and whether images are in it.
pub(crate) fn copilot_headers(messages: &[crate::types::Message]) -> Vec<(String, String)> {
    use crate::types::{Message, UserContent};
    let initiator = match messages.last() {
        Some(Message::User(_)) | None => "user",
        Some(_) => "agent",
    };
    let has_image = |content: &[UserContent]| {
        content
            .iter()
            .any(|block| matches!(block, UserContent::Image(_)))
    };
    let images = messages.iter().any(|message| match message {
        Message::User(user) => has_image(&user.content),
        Message::ToolResult(result) => has_image(&result.content),
        Message::Assistant(_) => false,
    });
    let mut headers = vec![
        ("x-initiator".to_owned(), initiator.to_owned()),
        ("openai-intent".to_owned(), "conversation-edits".to_owned()),
    ];
    if images {
        headers.push(("copilot-vision-request".to_owned(), "true".to_owned()));
    }
    headers
}

/// The texts of user content, one per line (images left out).
pub(crate) fn joined_text(content: &[crate::types::UserContent]) -> String {
    let texts: Vec<&str> = content
        .iter()
        .filter_map(|block| match block {
            crate::types::UserContent::Text(text) => Some(text.text.as_str()),
            crate::types::UserContent::Image(_) => None,
        })
        .collect();
    texts.join("\n")
}

/// `data:<mime>;base64,<data>` for formats that take images as URLs.
pub(crate) fn data_url(mime_type: &str, data: &str) -> String {
    format!("data:{mime_type};base64,{data}")
}
