//! Invariants checked on request bodies: well-formed tool conversations pass, orphan and
//! missing tool results, empty ids and missing headers are reported.

use pi_test_support::model_server::{ModelServer, Turn};
use serde_json::{Value, json};

use super::{MODEL, post, read_pieces, request_body};

/// A conversation for `api`: the user asks, the assistant calls tool `call_1`, and
/// `tool_results` (ids) answer it.
fn conversation(api: &str, tool_results: &[&str]) -> Value {
    let mut body = request_body(api);
    match api {
        "anthropic-messages" => {
            let results: Vec<Value> = tool_results
                .iter()
                .map(|id| json!({"type": "tool_result", "tool_use_id": id, "content": "fn main() {}"}))
                .collect();
            body["messages"] = json!([
                {"role": "user", "content": "Read src/main.rs"},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "ok", "signature": "sig"},
                    {"type": "tool_use", "id": "call_1", "name": "read", "input": {"path": "src/main.rs"}},
                ]},
                {"role": "user", "content": results},
            ]);
        }
        "openai-completions" => {
            let mut messages = vec![
                json!({"role": "system", "content": "You are pi."}),
                json!({"role": "user", "content": "Read src/main.rs"}),
                json!({"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"src/main.rs\"}"}},
                ]}),
            ];
            messages.extend(
                tool_results.iter().map(
                    |id| json!({"role": "tool", "tool_call_id": id, "content": "fn main() {}"}),
                ),
            );
            body["messages"] = json!(messages);
        }
        "openai-responses" => {
            let mut input = vec![
                json!({"role": "user", "content": [{"type": "input_text", "text": "Read src/main.rs"}]}),
                json!({"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read", "arguments": "{}"}),
            ];
            input.extend(tool_results.iter().map(|id| json!({"type": "function_call_output", "call_id": id, "output": "fn main() {}"})));
            body["input"] = json!(input);
        }
        "google-generative-ai" => {
            let mut contents = vec![
                json!({"role": "user", "parts": [{"text": "Read src/main.rs"}]}),
                json!({"role": "model", "parts": [{"functionCall": {"name": "read", "args": {"path": "src/main.rs"}}}]}),
            ];
            if !tool_results.is_empty() {
                let parts: Vec<Value> = tool_results
                    .iter()
                    .map(|id| {
                        // Gemini pairs by name; an unknown id stands for an unknown name here.
                        let name = if *id == "call_1" { "read" } else { "write" };
                        json!({"functionResponse": {"name": name, "response": {"output": "fn main() {}"}}})
                    })
                    .collect();
                contents.push(json!({"role": "user", "parts": parts}));
            }
            body["contents"] = json!(contents);
        }
        other => panic!("unknown api {other}"),
    }
    body
}

/// The violations one request with `body` on `api` produces.
async fn violations(api: &str, body: &Value) -> Vec<String> {
    let server = ModelServer::start().await;
    server.push(Turn::reply().text("ok"));
    let (_, error) = read_pieces(post(&server, api, body).await).await;
    assert!(error.is_none());
    let violations = server.take_violations();
    server.finish();
    violations.iter().map(ToString::to_string).collect()
}

#[tokio::test]
async fn well_formed_tool_conversations_pass() {
    for api in super::APIS {
        assert_eq!(
            violations(api, &conversation(api, &["call_1"])).await,
            Vec::<String>::new(),
            "{api}"
        );
    }
}

#[tokio::test]
async fn tool_result_problems_are_reported() {
    let mut text = String::new();
    for api in super::APIS {
        for (case, results) in [
            ("orphan", &["call_1", "call_9"][..]),
            ("missing", &[][..]),
            ("twice", &["call_1", "call_1"][..]),
        ] {
            text.push_str(&format!("== {api}, {case}\n"));
            for violation in violations(api, &conversation(api, results)).await {
                text.push_str(&violation);
                text.push('\n');
            }
        }
    }
    insta::assert_snapshot!(text);
}

#[tokio::test]
async fn request_shape_problems_are_reported() {
    let server = ModelServer::start().await;
    server.push(Turn::reply().text("ok"));
    server.push(Turn::reply().text("ok"));
    // No anthropic-version, no key, no stream flag, an empty tool-call id.
    let body = json!({
        "model": MODEL, "max_tokens": 10,
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "", "name": "", "input": {}}]},
            {"role": "user", "content": [{"type": "text", "text": "before"}, {"type": "tool_result", "tool_use_id": ""}]},
        ],
    });
    let response = super::http_client()
        .post(format!(
            "{}/v1/messages",
            server.base_url("anthropic-messages")
        ))
        .json(&body)
        .send()
        .await
        .unwrap();
    let (_, error) = read_pieces(response).await;
    assert!(error.is_none());
    // Gemini without ?alt=sse.
    let response = super::http_client()
        .post(format!(
            "{}/models/{MODEL}:streamGenerateContent",
            server.base_url("google-generative-ai")
        ))
        .header("x-goog-api-key", "k")
        .json(&request_body("google-generative-ai"))
        .send()
        .await
        .unwrap();
    let (_, error) = read_pieces(response).await;
    assert!(error.is_none());
    let text: Vec<String> = server
        .take_violations()
        .iter()
        .map(ToString::to_string)
        .collect();
    insta::assert_snapshot!(text.join("\n"));
    server.assert_done(2);
}
