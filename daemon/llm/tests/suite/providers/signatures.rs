//! What a model streamed goes back to the same model in the next request in the form its API
//! requires: Anthropic thinking with its `signature` and `redacted_thinking` with its data,
//! Responses reasoning items verbatim (with `encrypted_content`), message item ids and
//! `function_call` item ids, Gemini `thoughtSignature`s, and chat-completions reasoning only
//! where the server wants it back (`reasoning_content`, DeepSeek).

use pi_llm::OpenAiCompletionsCompat;
use pi_test_support::model_server::{ModelServer, Turn};
use serde_json::{Value, json};

use super::{continue_with, model};

/// Streams `first` from `api`'s model, continues with the same model, returns the second body.
async fn round_trip(api: &str, first: Turn) -> Value {
    let server = ModelServer::start().await;
    let model = model(&server, api);
    let (_, body) = continue_with(&server, &model, first, &model).await;
    body
}

#[tokio::test]
async fn anthropic_thinking_keeps_its_signature_and_redacted_data() {
    let body = round_trip(
        "anthropic-messages",
        Turn::reply()
            .thinking_signed("Erst denken… 🤔", "sig-anthropic-1")
            .redacted_thinking("opaque-redacted-data")
            .text("Ich lese a.")
            .tool_call("toolu_01", "read", json!({"path": "a"}))
            .into(),
    )
    .await;
    assert_eq!(
        body["messages"][1],
        json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "Erst denken… 🤔", "signature": "sig-anthropic-1"},
            {"type": "redacted_thinking", "data": "opaque-redacted-data"},
            {"type": "text", "text": "Ich lese a."},
            {"type": "tool_use", "id": "toolu_01", "name": "read", "input": {"path": "a"}},
        ]})
    );
}

#[tokio::test]
async fn responses_items_go_back_verbatim() {
    let body = round_trip(
        "openai-responses",
        Turn::reply()
            .thinking_signed("Erst denken… 🤔", "encrypted-1")
            .redacted_thinking("encrypted-redacted")
            .text("Ich lese a.")
            .tool_call("call_1|fc_1", "read", json!({"path": "a"}))
            .into(),
    )
    .await;
    let input = body["input"].as_array().unwrap();
    // developer prompt, user, then the first reply's four items.
    assert_eq!(
        input[2],
        json!({"id": "rs_scripted_0001_0", "type": "reasoning", "encrypted_content": "encrypted-1",
               "summary": [{"type": "summary_text", "text": "Erst denken… 🤔"}]})
    );
    assert_eq!(
        input[3],
        json!({"id": "rs_scripted_0001_1", "type": "reasoning", "summary": [],
               "encrypted_content": "encrypted-redacted"})
    );
    assert_eq!(input[4]["type"], "message");
    assert_eq!(input[4]["id"], "msg_scripted_0001_2");
    assert_eq!(
        input[5],
        json!({"type": "function_call", "call_id": "call_1", "id": "fc_1", "name": "read",
               "arguments": "{\"path\":\"a\"}"})
    );
    assert_eq!(
        input[6],
        json!({"type": "function_call_output", "call_id": "call_1", "output": "Inhalt von a"})
    );
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
}

#[tokio::test]
async fn gemini_thought_signatures_go_back() {
    let body = round_trip(
        "google-generative-ai",
        Turn::reply()
            .thinking_signed("Erst denken… 🤔", "sig-gemini-1")
            .text("Ich lese a.")
            .tool_call("call_1", "read", json!({"path": "a"}))
            .into(),
    )
    .await;
    assert_eq!(
        body["contents"][1],
        json!({"role": "model", "parts": [
            {"text": "Erst denken… 🤔", "thought": true, "thoughtSignature": "sig-gemini-1"},
            {"text": "Ich lese a."},
            {"functionCall": {"name": "read", "args": {"path": "a"}}},
        ]})
    );
    assert_eq!(
        body["contents"][2],
        json!({"role": "user", "parts": [
            {"functionResponse": {"name": "read", "response": {"output": "Inhalt von a"}}},
        ]})
    );
}

#[tokio::test]
async fn chat_completions_sends_reasoning_back_only_where_required() {
    let first = || {
        Turn::reply()
            .thinking("Erst denken… 🤔")
            .text("Ich lese a.")
            .tool_call("call_1", "read", json!({"path": "a"}))
    };
    let assistant = |reasoning: Option<&str>| {
        let mut message = json!({"role": "assistant", "content": "Ich lese a.", "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "read", "arguments": "{\"path\":\"a\"}"}},
        ]});
        if let Some(reasoning) = reasoning {
            message["reasoning_content"] = json!(reasoning);
        }
        message
    };

    // OpenAI has no field for earlier reasoning.
    let body = round_trip("openai-completions", first().into()).await;
    assert_eq!(body["messages"][2], assistant(None));

    // DeepSeek wants it on assistant messages.
    let server = ModelServer::start().await;
    let mut deepseek = model(&server, "openai-completions");
    deepseek.compat = Some(OpenAiCompletionsCompat {
        requires_reasoning_content_on_assistant_messages: Some(true),
        ..OpenAiCompletionsCompat::default()
    });
    let (_, body) = continue_with(&server, &deepseek, first(), &deepseek).await;
    assert_eq!(body["messages"][2], assistant(Some("Erst denken… 🤔")));
}
