//! A conversation produced by one provider's model continued with another's: the second request
//! turns thinking into text (dropping redacted thinking and signatures), normalizes tool-call
//! ids to the target's rules with the matching results rewritten, and answers a tool call that
//! got no result with `No result provided`.

use pi_llm::{Message, Model};
use pi_test_support::model_server::{ModelServer, Reply, Turn};
use serde_json::{Value, json};

use super::{ask, model, options, run, tool_result, user};

/// Streams `first` from `from`'s model, keeps a result for the first tool call only, and
/// continues with `to`'s model (renamed `to_id` when given). Returns the second body's
/// conversation (`messages`, `input` or `contents`).
async fn continue_across(from: &str, first: Reply, to: &str, to_id: Option<&str>) -> Value {
    let server = ModelServer::start().await;
    server.push(first);
    server.push(Turn::reply().text("ok"));
    let first_model = model(&server, from);
    let mut next_model: Model = model(&server, to);
    if let Some(id) = to_id {
        next_model.id = id.into();
    }
    let mut context = ask("Lies a und b.");
    let first = run(&first_model, &context, options()).await;
    let first_call = first.message.tool_calls().next().unwrap().clone();
    context.messages.push(Message::Assistant(first.message));
    context
        .messages
        .push(tool_result(&first_call, "Inhalt von a"));
    context.messages.push(user("Und jetzt?"));
    let second = run(&next_model, &context, options()).await;
    assert_eq!(second.message.text(), "ok", "{from} → {to}");
    server.assert_done(2);
    let body = server.requests()[1].body.clone();
    match to {
        "anthropic-messages" | "openai-completions" => body["messages"].clone(),
        "openai-responses" => body["input"].clone(),
        _ => body["contents"].clone(),
    }
}

fn anthropic_reply() -> Reply {
    Turn::reply()
        .thinking_signed("Ich sollte beide Dateien lesen.", "sig-anthropic")
        .redacted_thinking("opaque")
        .text("Ich lese a und b.")
        .tool_call("toolu_01", "read", json!({"path": "a"}))
        .tool_call("toolu_02", "read", json!({"path": "b"}))
}

#[tokio::test]
async fn from_anthropic_to_every_other_format() {
    for (to, to_id) in [
        ("anthropic-messages", Some("claude-opus-4-1")),
        ("openai-completions", None),
        ("openai-responses", None),
        ("google-generative-ai", None),
    ] {
        let conversation =
            continue_across("anthropic-messages", anthropic_reply(), to, to_id).await;
        let text = conversation.to_string();
        assert!(
            !text.contains("sig-anthropic"),
            "{to}: signature sent: {text}"
        );
        assert!(
            !text.contains("opaque"),
            "{to}: redacted thinking sent: {text}"
        );
        assert!(
            text.contains("Ich sollte beide Dateien lesen."),
            "{to}: {text}"
        );
        assert!(text.contains("No result provided"), "{to}: {text}");
        insta::assert_json_snapshot!(format!("from_anthropic_to_{to}"), conversation);
    }
}

#[tokio::test]
async fn from_responses_to_anthropic_and_chat_completions() {
    let reply = || {
        Turn::reply()
            .thinking_signed("Plan: a, dann b.", "encrypted")
            .text("Ich lese a und b.")
            .tool_call("call_1|fc_1", "read", json!({"path": "a"}))
            .tool_call("call_2|fc_2", "read", json!({"path": "b"}))
    };
    let anthropic = continue_across("openai-responses", reply(), "anthropic-messages", None).await;
    // `|` is not allowed in Anthropic ids: both halves stay, joined by `_`.
    assert_eq!(anthropic[1]["content"][2]["id"], "call_1_fc_1");
    assert_eq!(anthropic[2]["content"][0]["tool_use_id"], "call_1_fc_1");
    assert_eq!(anthropic[2]["content"][1]["tool_use_id"], "call_2_fc_2");
    assert_eq!(anthropic[2]["content"][1]["is_error"], true);
    insta::assert_json_snapshot!("from_responses_to_anthropic", anthropic);

    let completions =
        continue_across("openai-responses", reply(), "openai-completions", None).await;
    // Chat completions keeps the call id and drops the item id.
    assert_eq!(completions[2]["tool_calls"][1]["id"], "call_2");
    assert_eq!(completions[4]["tool_call_id"], "call_2");
    insta::assert_json_snapshot!("from_responses_to_completions", completions);
}

#[tokio::test]
async fn from_gemini_to_responses() {
    let reply = Turn::reply()
        .thinking_signed("Gedanke.", "sig-gemini")
        .text("Lese.")
        .tool_call("", "read", json!({"path": "a"}))
        .tool_call("", "ls", json!({"dir": "."}));
    let input = continue_across("google-generative-ai", reply, "openai-responses", None).await;
    let text = input.to_string();
    assert!(!text.contains("sig-gemini"), "{text}");
    // Gemini sent no ids: the generated ones are paired with their outputs.
    let call_ids: Vec<&Value> = input
        .as_array()
        .unwrap()
        .iter()
        .filter(|item| item["type"] == "function_call")
        .map(|item| &item["call_id"])
        .collect();
    let output_ids: Vec<&Value> = input
        .as_array()
        .unwrap()
        .iter()
        .filter(|item| item["type"] == "function_call_output")
        .map(|item| &item["call_id"])
        .collect();
    assert_eq!(call_ids, output_ids);
    assert_eq!(call_ids.len(), 2);
}
