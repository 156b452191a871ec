//! `openai-codex-responses`: the Responses API of the ChatGPT backend
//! (`POST {baseUrl}/codex/responses`, SSE), what a ChatGPT Plus/Pro login pays for.
//!
//! Request (pi 0.73.1's): the system prompt as `instructions`, the conversation as Responses
//! input items, `store: false`, `text.verbosity: low`, encrypted reasoning included,
//! `prompt_cache_key` and the `session_id` header from the session, `tool_choice: auto` with
//! parallel calls, tools with `strict: null`, and headers naming the ChatGPT account (from the
//! token's claims), `originator: pi` and `OpenAI-Beta: responses=experimental`. The stream is
//! the Responses stream, ending with `response.done` or `response.completed`.

use serde_json::{Map, Value, json};

use super::codex_socket;
use super::header_list;
use super::openai_responses::{ResponsesDecoder, convert_messages};
use crate::assemble::Assembler;
use crate::event::AssistantStream;
use crate::failure::{Failure, FailureKind};
use crate::http::{HttpRequest, RawTexts};
use crate::model::{Model, ThinkingLevel};
use crate::provider::{Context, Provider, RequestHooks, StreamOptions, Transport};
use crate::transform::transform_messages;

/// The ChatGPT backend's wire format.
#[derive(Debug, Default)]
pub struct OpenAiCodexProvider;

impl Provider for OpenAiCodexProvider {
    fn stream(&self, model: &Model, context: &Context, options: StreamOptions) -> AssistantStream {
        let request = build_request(model, context, &options);
        let over_http = options.transport == Transport::Sse
            || options
                .session_id
                .as_deref()
                .is_some_and(codex_socket::fell_back);
        let request = match request {
            Ok(request) if !over_http => request,
            request => return super::send(model, request, &options, ResponsesDecoder::default()),
        };
        let exchange = codex_socket::Exchange {
            url: socket_url(&request.url),
            headers: socket_headers(&request.headers, options.session_id.as_deref()),
            session: options.session_id.clone(),
            transport: options.transport,
            model: model.clone(),
        };
        let (sender, stream) = AssistantStream::channel(model);
        let mut assembler = Assembler::new(sender, model, stream.partial().timestamp);
        assembler.redact(
            request
                .headers
                .iter()
                .filter(|(name, _)| name == "authorization")
                .map(|(_, value)| value.trim_start_matches("Bearer ").to_owned()),
        );
        let mut hooks = RequestHooks::of(&options);
        let cancel = options.cancel.clone();
        tokio::spawn(async move {
            let request = match crate::http::finalize(request, hooks.payload.take()).await {
                Ok(request) => request,
                Err(message) => {
                    return assembler
                        .fail(message, Failure::new(FailureKind::InvalidRequest))
                        .await;
                }
            };
            match codex_socket::exchange(exchange, request.body(), &cancel, assembler).await {
                codex_socket::Outcome::Settled => {}
                codex_socket::Outcome::Unavailable(assembler, why) => {
                    tracing::info!(
                        reason = %why,
                        "the Codex WebSocket is not available; the session goes on over HTTP"
                    );
                    let decoder = ResponsesDecoder::default();
                    crate::http::drive(request, cancel, hooks, *assembler, decoder).await;
                }
            }
        });
        stream
    }
}

/// The socket's address for an HTTP one: `https` becomes `wss`, `http` `ws`.
fn socket_url(url: &str) -> String {
    if let Some(rest) = url.strip_prefix("https://") {
        format!("wss://{rest}")
    } else if let Some(rest) = url.strip_prefix("http://") {
        format!("ws://{rest}")
    } else {
        url.to_owned()
    }
}

/// pi's handshake headers from the HTTP request's: no `accept`, `content-type` or HTTP beta,
/// the WebSocket beta, and the request id (the session's, else a fresh one) as `session_id`
/// and `x-client-request-id`.
fn socket_headers(headers: &[(String, String)], session: Option<&str>) -> Vec<(String, String)> {
    let request_id = session.map_or_else(request_id, str::to_owned);
    let mut headers: Vec<(String, String)> = headers
        .iter()
        .filter(|(name, _)| {
            !matches!(
                name.as_str(),
                "accept" | "content-type" | "openai-beta" | "session_id" | "x-client-request-id"
            )
        })
        .cloned()
        .collect();
    headers.push(("openai-beta".into(), codex_socket::BETA.into()));
    headers.push(("x-client-request-id".into(), request_id.clone()));
    headers.push(("session_id".into(), request_id));
    headers
}

/// A request id for a request of no session (pi's `codex_<time>_<random>`).
fn request_id() -> String {
    let mut bytes = [0u8; 6];
    let random = match getrandom::fill(&mut bytes) {
        Ok(()) => bytes.iter().map(|byte| format!("{byte:02x}")).collect(),
        Err(_) => "000000000000".to_owned(),
    };
    format!("codex_{}_{random}", pi_util::time::now_millis())
}

/// `{baseUrl}/codex/responses` (a base already ending in either is kept).
fn url(base_url: &str) -> String {
    let base = if base_url.trim().is_empty() {
        "https://chatgpt.com/backend-api"
    } else {
        base_url.trim_end_matches('/')
    };
    if base.ends_with("/codex/responses") {
        base.to_owned()
    } else if base.ends_with("/codex") {
        format!("{base}/responses")
    } else {
        format!("{base}/codex/responses")
    }
}

/// The request for `model`.
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
) -> Result<HttpRequest, String> {
    let Some(key) = &options.api_key else {
        return Err(format!(
            "no key for {}: log in with `pictl login openai-codex` (ChatGPT Plus/Pro)",
            model.provider
        ));
    };
    let account = crate::oauth::codex_account_id(key.expose()).ok_or_else(|| {
        "the key is not a ChatGPT login's token (it names no ChatGPT account); log in with \
         `pictl login openai-codex`"
            .to_owned()
    })?;
    let mut input = Vec::new();
    let messages = transform_messages(&context.messages, model, None);
    convert_messages(&messages, &mut input);
    // pi's order of the body's keys.
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert("store".into(), json!(false));
    body.insert("stream".into(), json!(true));
    body.insert(
        "instructions".into(),
        json!(
            context
                .system_prompt
                .as_deref()
                .filter(|prompt| !prompt.is_empty())
                .unwrap_or("You are a helpful assistant.")
        ),
    );
    body.insert("input".into(), Value::Array(input));
    body.insert("text".into(), json!({"verbosity": "low"}));
    body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    if let Some(session_id) = &options.session_id {
        body.insert("prompt_cache_key".into(), json!(session_id));
    }
    body.insert("tool_choice".into(), json!("auto"));
    body.insert("parallel_tool_calls".into(), json!(true));
    if !context.tools.is_empty() {
        let tools: Vec<Value> = context
            .tools
            .iter()
            .map(|tool| {
                json!({"type": "function", "name": tool.name, "description": tool.description,
                    "parameters": crate::schema::adapt(&tool.parameters, crate::schema::Dialect::OpenAi),
                    "strict": null})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if model.reasoning && options.thinking != ThinkingLevel::Off {
        let effort = match options.thinking {
            ThinkingLevel::Off | ThinkingLevel::Minimal => "minimal",
            ThinkingLevel::Low => "low",
            ThinkingLevel::Medium => "medium",
            ThinkingLevel::High => "high",
            ThinkingLevel::Xhigh => "xhigh",
        };
        body.insert(
            "reasoning".into(),
            json!({"effort": effort, "summary": "auto"}),
        );
    }
    let mut headers = header_list(model);
    headers.push(("authorization".into(), format!("Bearer {}", key.expose())));
    headers.push(("chatgpt-account-id".into(), account));
    headers.push(("originator".into(), "pi".into()));
    headers.retain(|(name, _)| name != "user-agent");
    headers.push(("user-agent".into(), user_agent()));
    headers.push(("openai-beta".into(), "responses=experimental".into()));
    headers.push(("accept".into(), "text/event-stream".into()));
    headers.push(("content-type".into(), "application/json".into()));
    if let Some(session_id) = &options.session_id {
        headers.push(("session_id".into(), session_id.clone()));
        headers.push(("x-client-request-id".into(), session_id.clone()));
    }
    Ok(HttpRequest {
        url: url(&model.base_url),
        headers,
        body: Value::Object(body),
        raw: RawTexts::default(),
        sign: None,
    })
}

/// pi's `pi (PLATFORM RELEASE; ARCH)`.
fn user_agent() -> String {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|text| text.trim().to_owned())
        .unwrap_or_default();
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    format!("pi ({} {release}; {arch})", std::env::consts::OS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_is_the_codex_responses_endpoint() {
        assert_eq!(
            url("https://chatgpt.com/backend-api"),
            "https://chatgpt.com/backend-api/codex/responses"
        );
        assert_eq!(url("http://h/codex/"), "http://h/codex/responses");
        assert_eq!(url("http://h/codex/responses"), "http://h/codex/responses");
    }
}
