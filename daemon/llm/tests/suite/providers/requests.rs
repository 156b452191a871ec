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

/// pi's `PI_CACHE_RETENTION=long`: Anthropic's cache marks last an hour, OpenAI keeps the
/// prompt cache a day (Responses, and chat completions with the session as its key);
/// chat completions send the key to OpenAI itself in any case, and nothing long to Cloudflare.
#[test]
fn long_cache_retention_is_asked_for_as_pi_asks() {
    use pi_llm::CacheRetention;
    use pi_llm::providers::{anthropic, openai_completions, openai_responses};
    let server_free = |api: &str, base_url: &str, provider: &str| pi_llm::Model {
        id: "m".to_owned(),
        name: "m".to_owned(),
        api: api.to_owned(),
        provider: provider.to_owned(),
        base_url: base_url.to_owned(),
        reasoning: false,
        input: vec![pi_llm::InputKind::Text],
        cost: pi_llm::ModelCost::default(),
        context_window: 100_000,
        max_tokens: 8_000,
        headers: Default::default(),
        compat: None,
    };
    let context = super::ask("Hi");
    for retention in [CacheRetention::Short, CacheRetention::Long] {
        let mut options = options();
        options.cache_retention = retention;
        let long = retention == CacheRetention::Long;

        let claude = server_free(
            "anthropic-messages",
            "https://api.anthropic.com",
            "anthropic",
        );
        let body = anthropic::build_request(&claude, &context, &options)
            .unwrap()
            .body;
        let expected = if long {
            json!({"type": "ephemeral", "ttl": "1h"})
        } else {
            json!({"type": "ephemeral"})
        };
        assert_eq!(body["system"][0]["cache_control"], expected);
        assert_eq!(body["messages"][0]["content"][0]["cache_control"], expected);

        let gpt = server_free("openai-responses", "https://api.openai.com/v1", "openai");
        let body = openai_responses::build_request(&gpt, &context, &options)
            .unwrap()
            .body;
        assert_eq!(body["prompt_cache_key"], json!("session-0001"));
        assert_eq!(
            body.get("prompt_cache_retention"),
            long.then(|| json!("24h")).as_ref()
        );

        let chat = server_free("openai-completions", "https://api.openai.com/v1", "openai");
        let body = openai_completions::build_request(&chat, &context, &options)
            .unwrap()
            .body;
        assert_eq!(body["prompt_cache_key"], json!("session-0001"));
        assert_eq!(
            body.get("prompt_cache_retention"),
            long.then(|| json!("24h")).as_ref()
        );

        let groq = server_free(
            "openai-completions",
            "https://api.groq.com/openai/v1",
            "groq",
        );
        let body = openai_completions::build_request(&groq, &context, &options)
            .unwrap()
            .body;
        assert_eq!(
            body.get("prompt_cache_key").is_some(),
            long,
            "another server gets the key only for a long cache: {body}"
        );

        let cloudflare = server_free(
            "openai-completions",
            "https://api.cloudflare.com/client/v4/accounts/a/ai/v1",
            "cloudflare-workers-ai",
        );
        let body = openai_completions::build_request(&cloudflare, &context, &options)
            .unwrap()
            .body;
        assert!(body.get("prompt_cache_key").is_none(), "{body}");
        assert!(body.get("prompt_cache_retention").is_none(), "{body}");
    }
    assert_eq!(
        CacheRetention::from_env_value(Some("long")),
        CacheRetention::Long
    );
    assert_eq!(
        CacheRetention::from_env_value(Some("1h")),
        CacheRetention::Short
    );
}
