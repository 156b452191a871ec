//! Request bodies as the real APIs expect them, for one representative conversation per
//! format: a system prompt, a user message with text and an image, an assistant message of
//! the same model with signed thinking, text and a tool call, the tool's result, a second user
//! message, and a tool with a JSON Schema. Bodies carry no secret (keys travel in headers,
//! checked separately), so they are snapshotted whole.

use pi_llm::{Context, Model, ToolDefinition};
use pi_test_support::model_server::{ModelServer, Turn};
use serde_json::{Value, json};

use super::{APIS, KEY, message, model, options, run};

/// The conversation, with the ids and signatures `model`'s own API would have produced.
fn conversation(model: &Model) -> Context {
    let (call_id, thinking_signature, text_signature) = match model.api.as_str() {
        "anthropic-messages" => ("toolu_01", json!("sig-anthropic"), Value::Null),
        "openai-completions" => ("call_1", Value::Null, Value::Null),
        "openai-responses" => (
            "call_1|fc_1",
            json!(
                json!({"id": "rs_1", "type": "reasoning", "encrypted_content": "encrypted",
                       "summary": [{"type": "summary_text", "text": "Erst die Datei lesen."}]})
                .to_string()
            ),
            json!("msg_1"),
        ),
        "google-generative-ai" => ("call_1", json!("sig-gemini"), Value::Null),
        other => panic!("no conversation for {other}"),
    };
    let mut thinking = json!({"type": "thinking", "thinking": "Erst die Datei lesen."});
    if !thinking_signature.is_null() {
        thinking["thinkingSignature"] = thinking_signature;
    }
    let mut text = json!({"type": "text", "text": "Ich lese src/main.rs."});
    if !text_signature.is_null() {
        text["textSignature"] = text_signature;
    }
    let usage = json!({"input": 10, "output": 20, "cacheRead": 0, "cacheWrite": 0,
        "totalTokens": 30, "cost": {"input": 0.0, "output": 0.0, "cacheRead": 0.0,
        "cacheWrite": 0.0, "total": 0.0}});
    Context {
        system_prompt: Some("Du bist ein hilfreicher Assistent.".into()),
        messages: vec![
            message(json!({"role": "user", "timestamp": 1, "content": [
                {"type": "text", "text": "Was macht dieses Programm? Hier ein Bild:"},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            ]})),
            message(json!({"role": "assistant", "timestamp": 2, "content": [
                thinking,
                text,
                {"type": "toolCall", "id": call_id, "name": "read",
                 "arguments": {"path": "src/main.rs"}},
            ], "api": model.api, "provider": model.provider, "model": model.id,
               "usage": usage, "stopReason": "toolUse"})),
            message(
                json!({"role": "toolResult", "toolCallId": call_id, "toolName": "read",
                "content": [{"type": "text", "text": "fn main() { println!(\"hi\"); }"}],
                "isError": false, "timestamp": 3}),
            ),
            message(json!({"role": "user", "content": "Und jetzt auf Deutsch?", "timestamp": 4})),
        ],
        tools: vec![ToolDefinition {
            name: "read".into(),
            description: "Read a file.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Path to the file"},
                    "offset": {"type": "integer", "minimum": 1},
                },
                "required": ["path"],
                "additionalProperties": false,
            }),
        }],
    }
}

#[tokio::test]
async fn bodies_are_what_each_api_expects() {
    for api in APIS {
        let server = ModelServer::start().await;
        server.push(Turn::reply().text("ok"));
        let model = model(&server, api);
        let run = run(&model, &conversation(&model), options()).await;
        assert_eq!(run.message.text(), "ok");
        server.assert_done(1);
        let request = &server.requests()[0];

        // The key travels in the API's header and nowhere else.
        let (key_header, key_value) = match api {
            "anthropic-messages" => ("x-api-key", KEY.to_owned()),
            "google-generative-ai" => ("x-goog-api-key", KEY.to_owned()),
            _ => ("authorization", format!("Bearer {KEY}")),
        };
        assert_eq!(
            request.header(key_header),
            Some(key_value.as_str()),
            "{api}"
        );
        let mut headers: Vec<String> = request
            .headers
            .iter()
            .filter(|(name, _)| ![key_header, "host", "content-length"].contains(&name.as_str()))
            .map(|(name, value)| format!("{name}: {}", value.to_str().unwrap()))
            .collect();
        headers.sort();
        let body_text = request.body.to_string();
        assert!(!body_text.contains(KEY), "{api}: the key is in the body");

        insta::assert_json_snapshot!(
            api,
            json!({
                "path": request.path,
                "query": request.query,
                "headers": headers,
                "body": request.body,
            })
        );
    }
}
