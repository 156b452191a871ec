//! What the real APIs would reject, checked on every request before it is answered: the
//! request asks for a stream with a key and the API's required headers, and the conversation
//! is well formed for its API. Every tool result answers a tool call that came before it
//! (Anthropic and chat completions: in the message directly before; Gemini: in the content
//! directly before), every tool call gets exactly one result, tool-call ids and names are not
//! empty. Each finding is one sentence naming where in the body it is.

mod anthropic;
mod gemini;
mod openai;

use axum::http::HeaderMap;
use serde_json::{Value, json};

use super::Api;

/// Everything wrong with one request, as sentences; empty when the real API would accept it.
pub(super) fn check(
    api: Api,
    headers: &HeaderMap,
    query: &[(String, String)],
    body: &Value,
) -> Vec<String> {
    let mut problems = Vec::new();
    if !body.is_object() {
        problems.push("the body is not a JSON object".to_owned());
        return problems;
    }
    let bearer = headers
        .get("authorization")
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.len() > "Bearer ".len() && value.starts_with("Bearer "));
    if api != Api::GoogleGenerativeAi {
        if body["stream"] != json!(true) {
            problems.push("body.stream must be true: the server only streams".to_owned());
        }
        if body["model"].as_str().is_none_or(str::is_empty) {
            problems.push("body.model must be a non-empty string".to_owned());
        }
    }
    match api {
        Api::AnthropicMessages => {
            if !headers.contains_key("anthropic-version") {
                problems.push("the anthropic-version header is missing".to_owned());
            }
            if !headers.contains_key("x-api-key") && !bearer {
                problems.push("no API key: expected x-api-key or authorization: Bearer".to_owned());
            }
            check_claude_subscription(headers, body, &mut problems);
            if body["max_tokens"].as_u64().is_none_or(|max| max == 0) {
                problems.push("body.max_tokens must be a positive integer".to_owned());
            }
            match body["messages"].as_array() {
                Some(messages) => anthropic::check_messages(messages, &mut problems),
                None => problems.push("body.messages must be an array".to_owned()),
            }
        }
        Api::OpenAiCompletions => {
            if !bearer {
                problems.push("no API key: expected authorization: Bearer".to_owned());
            }
            match body["messages"].as_array() {
                Some(messages) => openai::check_chat_messages(messages, &mut problems),
                None => problems.push("body.messages must be an array".to_owned()),
            }
        }
        Api::OpenAiResponses => {
            // Azure OpenAI takes its key as `api-key`, with an `api-version`.
            let azure = headers.contains_key("api-key")
                && query.iter().any(|(name, _)| name == "api-version");
            if !bearer && !azure {
                problems.push(
                    "no API key: expected authorization: Bearer (or Azure's api-key with an api-version)"
                        .to_owned(),
                );
            }
            let chained = body["previous_response_id"].is_string();
            match &body["input"] {
                Value::Array(items) => openai::check_responses_input(items, chained, &mut problems),
                Value::String(_) => {}
                _ => problems.push("body.input must be a string or an array".to_owned()),
            }
        }
        Api::GoogleGenerativeAi => {
            let has_query = |name: &str, value: Option<&str>| {
                query
                    .iter()
                    .any(|(key, found)| key == name && value.is_none_or(|value| found == value))
            };
            // Vertex AI on Application Default Credentials: a Bearer token.
            if !headers.contains_key("x-goog-api-key") && !has_query("key", None) && !bearer {
                problems.push("no API key: expected x-goog-api-key or ?key=".to_owned());
            }
            if !has_query("alt", Some("sse")) {
                problems
                    .push("?alt=sse is missing: without it Gemini streams a JSON array".to_owned());
            }
            match body["contents"].as_array() {
                Some(contents) => gemini::check_contents(contents, &mut problems),
                None => problems.push("body.contents must be an array".to_owned()),
            }
        }
    }
    problems
}

/// What Anthropic asks of a Claude Pro/Max token (`sk-ant-oat…`): sent as a Bearer token
/// (never `x-api-key`), with the Claude Code and OAuth betas, Claude Code's user agent, and a
/// system prompt that starts with Claude Code's identity.
fn check_claude_subscription(headers: &HeaderMap, body: &Value, problems: &mut Vec<String>) {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
    };
    if header("x-api-key").contains("sk-ant-oat") {
        problems.push("a Claude subscription token sent as x-api-key".to_owned());
    }
    if !header("authorization").contains("sk-ant-oat") {
        return;
    }
    let betas: Vec<&str> = header("anthropic-beta").split(',').collect();
    if !betas.contains(&"claude-code-20250219") || !betas.contains(&"oauth-2025-04-20") {
        problems.push(
            "a Claude subscription token without the claude-code-20250219 and oauth-2025-04-20 betas"
                .to_owned(),
        );
    }
    if !header("user-agent").starts_with("claude-cli/") {
        problems.push("a Claude subscription token without Claude Code's user agent".to_owned());
    }
    if body["system"][0]["text"] != "You are Claude Code, Anthropic's official CLI for Claude." {
        problems.push(
            "a Claude subscription request whose system prompt does not start with Claude Code's identity"
                .to_owned(),
        );
    }
}
