//! The wire format of each API for a representative reply, as raw SSE snapshots, and the
//! per-API renderings of stop reasons, usage and errors.

use pi_test_support::model_server::{ModelServer, ScriptErrorKind, ScriptStop, ScriptUsage, Turn};
use serde_json::{Value, json};

use super::{APIS, body_text, data_events, post, read_pieces, request_body};

/// Thinking (signed), text with multi-byte characters, a tool call and usage.
fn representative_turn() -> Turn {
    Turn::reply()
        .thinking_signed("Read it first.", "sig-1")
        .text("Reading ü✓ now")
        .tool_call("call_01", "read", json!({"path": "src/main.rs"}))
        .usage(ScriptUsage {
            input: 100,
            output: 50,
            cache_read: 20,
            cache_write: 10,
            reasoning: 12,
        })
        .into()
}

/// Serves `turn` to one well-formed request on `api`; returns the status line, the headers
/// a client looks at, and the raw body.
async fn check(api: &str, turn: Turn) -> String {
    let server = ModelServer::start().await;
    server.push(turn);
    let response = post(&server, api, &request_body(api)).await;
    let mut text = format!("HTTP {}\n", response.status().as_u16());
    for name in ["content-type", "request-id", "x-request-id", "retry-after"] {
        if let Some(value) = response.headers().get(name) {
            text.push_str(&format!("{name}: {}\n", value.to_str().unwrap()));
        }
    }
    let (pieces, error) = read_pieces(response).await;
    assert!(error.is_none(), "the body ended with {error:?}");
    text.push('\n');
    text.push_str(&body_text(&pieces));
    server.finish();
    text
}

#[tokio::test]
async fn anthropic_messages_stream() {
    insta::assert_snapshot!(check("anthropic-messages", representative_turn()).await);
}

#[tokio::test]
async fn openai_completions_stream() {
    insta::assert_snapshot!(check("openai-completions", representative_turn()).await);
}

#[tokio::test]
async fn openai_responses_stream() {
    insta::assert_snapshot!(check("openai-responses", representative_turn()).await);
}

#[tokio::test]
async fn google_generative_ai_stream() {
    insta::assert_snapshot!(check("google-generative-ai", representative_turn()).await);
}

#[tokio::test]
async fn chat_completions_send_usage_only_when_asked() {
    let server = ModelServer::start().await;
    let usage = ScriptUsage {
        input: 3,
        output: 4,
        ..ScriptUsage::default()
    };
    server.push(Turn::reply().text("hi").usage(usage));
    let mut body = request_body("openai-completions");
    body.as_object_mut().unwrap().remove("stream_options");
    let (pieces, _) = read_pieces(post(&server, "openai-completions", &body).await).await;
    let events = data_events(&body_text(&pieces));
    assert!(events.iter().all(|event| event.get("usage").is_none()));
    assert_eq!(events.last(), Some(&json!("[DONE]")));
    server.finish();
}

/// The terminal reason each API reports for each scripted stop.
#[tokio::test]
async fn stop_reasons_per_api() {
    let mut table = String::new();
    for stop in [
        ScriptStop::Stop,
        ScriptStop::Length,
        ScriptStop::ToolUse,
        ScriptStop::Refusal,
    ] {
        let mut row = format!("{stop:?}:");
        for api in APIS {
            let server = ModelServer::start().await;
            server.push(Turn::reply().text("x").stop(stop));
            let (pieces, _) = read_pieces(post(&server, api, &request_body(api)).await).await;
            let events = data_events(&body_text(&pieces));
            let reason = events
                .iter()
                .rev()
                .find_map(|event| {
                    let candidates = [
                        &event["delta"]["stop_reason"],
                        &event["choices"][0]["finish_reason"],
                        &event["candidates"][0]["finishReason"],
                    ];
                    if let Some(status) = event["response"]["status"].as_str()
                        && event["type"] != json!("response.in_progress")
                        && event["type"] != json!("response.created")
                    {
                        let details = &event["response"]["incomplete_details"]["reason"];
                        return Some(format!("{} {status} {details}", event["type"]));
                    }
                    candidates
                        .into_iter()
                        .find(|value| value.is_string())
                        .map(Value::to_string)
                })
                .unwrap();
            row.push_str(&format!(" {api}={reason}"));
            server.finish();
        }
        table.push_str(&row);
        table.push('\n');
    }
    insta::assert_snapshot!(table);
}

/// In-stream errors replace the terminal events.
#[tokio::test]
async fn stream_errors_per_api() {
    let mut text = String::new();
    for api in APIS {
        let turn = Turn::reply()
            .text("partial")
            .stream_error(ScriptErrorKind::Overloaded, "Overloaded");
        let body = check(api, turn.into()).await;
        let last = body
            .lines()
            .rfind(|line| line.starts_with("data: "))
            .unwrap()
            .to_owned();
        text.push_str(&format!("{api}: {last}\n"));
    }
    insta::assert_snapshot!(text);
}

/// `api_error` and `context_overflow` render each API's real error body.
#[tokio::test]
async fn error_bodies_per_api() {
    let mut text = String::new();
    for api in APIS {
        let rate_limited = Turn::api_error(429, ScriptErrorKind::RateLimit, "Slow down.")
            .header("retry-after", "1");
        text.push_str(&format!(
            "== {api}, rate limited\n{}\n",
            check(api, rate_limited.into()).await
        ));
        text.push_str(&format!(
            "== {api}, context overflow\n{}\n",
            check(api, Turn::context_overflow().into()).await
        ));
    }
    insta::assert_snapshot!(text);
}

#[tokio::test]
async fn http_error_sends_the_body_and_headers_as_given() {
    let turn = Turn::http_error(529, json!("upstream exploded")).header("x-should-retry", "true");
    let server = ModelServer::start().await;
    server.push(turn);
    let response = post(
        &server,
        "anthropic-messages",
        &request_body("anthropic-messages"),
    )
    .await;
    assert_eq!(response.status().as_u16(), 529);
    assert_eq!(response.headers()["x-should-retry"], "true");
    assert_eq!(
        response.headers()["content-type"],
        "text/plain; charset=utf-8"
    );
    assert_eq!(response.text().await.unwrap(), "upstream exploded");
    server.finish();
}

/// Requests are recorded with route, path, query, headers and body.
#[tokio::test]
async fn requests_are_recorded() {
    let server = ModelServer::start().await;
    server.push(Turn::reply().text("one"));
    server.push(Turn::reply().text("two"));
    for api in ["anthropic-messages", "google-generative-ai"] {
        let (_, error) = read_pieces(post(&server, api, &request_body(api)).await).await;
        assert!(error.is_none());
    }
    let requests = server.requests();
    assert_eq!(server.calls(), 2);
    assert_eq!(requests[0].api.name(), "anthropic-messages");
    assert_eq!(requests[0].path, "/v1/messages");
    assert_eq!(requests[0].header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(requests[0].body, request_body("anthropic-messages"));
    assert_eq!(
        requests[1].path,
        format!("/v1beta/models/{}:streamGenerateContent", super::MODEL)
    );
    assert_eq!(requests[1].query_param("alt"), Some("sse"));
    assert_eq!(requests[1].header("x-goog-api-key"), Some("gemini-test"));
    server.assert_done(2);
}

/// The argument fragments a client receives, whatever the API.
fn argument_fragments(body: &str) -> Vec<String> {
    data_events(body)
        .iter()
        .filter_map(|event| {
            let fragment = if event["type"] == json!("response.function_call_arguments.delta") {
                &event["delta"]
            } else if event["delta"]["type"] == json!("input_json_delta") {
                &event["delta"]["partial_json"]
            } else {
                &event["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
            };
            fragment
                .as_str()
                .filter(|fragment| !fragment.is_empty())
                .map(str::to_owned)
        })
        .collect()
}

#[tokio::test]
async fn arg_splits_cut_arguments_at_character_offsets() {
    for api in [
        "anthropic-messages",
        "openai-completions",
        "openai-responses",
    ] {
        let server = ModelServer::start().await;
        server.push(
            Turn::reply()
                .tool_call_raw("call_1", "read", r#"{"path":"ä/b"}"#)
                .arg_splits(vec![1, 9, 10]),
        );
        let (pieces, _) = read_pieces(post(&server, api, &request_body(api)).await).await;
        assert_eq!(
            argument_fragments(&body_text(&pieces)),
            ["{", r#""path":""#, "ä", r#"/b"}"#],
            "{api}"
        );
        server.finish();
    }
}

#[tokio::test]
async fn invalid_raw_arguments_reach_the_client_verbatim() {
    for api in APIS {
        let server = ModelServer::start().await;
        server.push(Turn::reply().tool_call_raw("call_1", "read", r#"{"path":"#));
        let (pieces, _) = read_pieces(post(&server, api, &request_body(api)).await).await;
        let body = body_text(&pieces);
        if api == "google-generative-ai" {
            // Gemini sends arguments as JSON, so invalid ones make the chunk itself invalid.
            assert!(body.contains(r#""args":{"path":,"#), "{body}");
        } else {
            assert_eq!(argument_fragments(&body).concat(), r#"{"path":"#, "{api}");
        }
        server.finish();
    }
}

#[tokio::test]
async fn redacted_thinking_is_opaque_reasoning() {
    let server = ModelServer::start().await;
    server.push(Turn::reply().redacted_thinking("opaque-data").text("ok"));
    server.push(Turn::reply().redacted_thinking("opaque-data").text("ok"));
    let api = "anthropic-messages";
    let (pieces, _) = read_pieces(post(&server, api, &request_body(api)).await).await;
    let start = &data_events(&body_text(&pieces))[1];
    assert_eq!(
        start["content_block"],
        json!({"type": "redacted_thinking", "data": "opaque-data"})
    );
    let api = "openai-responses";
    let (pieces, _) = read_pieces(post(&server, api, &request_body(api)).await).await;
    let completed = data_events(&body_text(&pieces)).pop().unwrap();
    assert_eq!(
        completed["response"]["output"][0],
        json!({"type": "reasoning", "id": "rs_scripted_0002_0", "summary": [], "encrypted_content": "opaque-data"})
    );
    server.finish();
}
