//! What the model produced is kept exactly, in each of the four wire formats: tool-call
//! arguments keep the model's bytes — key order and whitespace — from the provider stream to
//! the `toolcall_end` event, the stored entry, the export and the next request (so a
//! provider's prompt cache, which matches the request prefix byte for byte, hits on the turn
//! after a tool call), and assistant messages keep the provider's response id (`responseId`)
//! in events, entries and exports, where pi writes it: after `timestamp`.

use pi_protocol::v1::message::{AgentMessage, AssistantContent, AssistantMessageEvent, ToolCall};
use pi_protocol::v1::{
    ExportFormat, ReadScope, SessionEntry, SessionEvent, SessionExport, SessionExportParams,
    SessionPrompt, SessionRead, SessionReadParams,
};
use pi_test_support::events::run_events;
use pi_test_support::model_server::Turn;
use pi_test_support::raw::RawConnection;
use serde_json::Value;

use super::harness::{World, prompt};

/// What the model writes: keys in its own order (`path` before `content`, not sorted), and its
/// own spacing.
const ARGUMENTS: &str = "{\"path\": \"notes.txt\",\n  \"content\": \"zebra, then apple\", \"mode\": {\"z\": 1, \"a\": [ {\"y\": true, \"b\": null} ]}}";

/// The argument bytes the scripted model sends in `api`: Gemini's `args` is an object inside
/// the server's (compact) JSON, so its bytes are compact, in the model's key order; the
/// others carry the model's text as it is.
fn sent(api: &str) -> String {
    match api {
        "google-generative-ai" => serde_json::from_str::<Value>(ARGUMENTS)
            .unwrap()
            .to_string(),
        _ => ARGUMENTS.to_owned(),
    }
}

/// The model's bytes as line-delimited JSON (event frames, the stored entry, the JSONL
/// export) carries them: on one line, a line break between tokens written as a space.
fn one_line(api: &str) -> String {
    sent(api).replace('\n', " ")
}

/// The arguments written compactly, in the model's key order: what a client that decodes
/// them re-serializes (as pi writes them).
fn compact() -> String {
    serde_json::from_str::<Value>(ARGUMENTS)
        .unwrap()
        .to_string()
}

/// How the next request's body text carries the arguments: as a JSON string for the OpenAI
/// formats, as the object itself for Anthropic and Google.
fn in_request_body(api: &str) -> String {
    match api {
        "anthropic-messages" => format!(r#""input":{}"#, sent(api)),
        "google-generative-ai" => format!(r#""args":{}"#, sent(api)),
        _ => format!(
            r#""arguments":{}"#,
            serde_json::to_string(ARGUMENTS).unwrap()
        ),
    }
}

/// The tool call's arguments in the request that follows it, as the request carries them:
/// a JSON string for the OpenAI formats, an object for Anthropic and Google.
fn arguments_sent_back(api: &str, body: &Value) -> String {
    let found = match api {
        "anthropic-messages" => body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|message| message["content"].as_array().into_iter().flatten())
            .find(|block| block["type"] == "tool_use")
            .map(|block| block["input"].to_string()),
        "openai-completions" => body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|message| message["tool_calls"].as_array().into_iter().flatten())
            .find_map(|call| call["function"]["arguments"].as_str().map(str::to_owned)),
        "openai-responses" => body["input"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|item| item["type"] == "function_call")
            .and_then(|item| item["arguments"].as_str().map(str::to_owned)),
        "google-generative-ai" => body["contents"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|content| content["parts"].as_array().into_iter().flatten())
            .find_map(|part| part.get("functionCall"))
            .map(|call| call["args"].to_string()),
        other => panic!("no such API: {other}"),
    };
    found.unwrap_or_else(|| panic!("{api}: no tool call in the second request: {body:#}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_output_is_kept_as_pi_keeps_it_in_every_format() {
    for api in [
        "anthropic-messages",
        "openai-completions",
        "openai-responses",
        "google-generative-ai",
    ] {
        let world = World::start(api).await;
        let (client, mut events) = world.client().await;
        let session = world.attached_session(&client).await;
        // A second client reads the event frames as the daemon writes them.
        let mut raw = RawConnection::initialized(&world.daemon.paths.socket_path()).await;
        raw.send(
            &serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "session/attach",
            "params": {"sessionId": session.id}}),
        )
        .await;
        loop {
            let message = raw.read().await.expect("the daemon answers the attach");
            if message["id"] == 1 {
                assert!(message.get("result").is_some(), "{message}");
                break;
            }
        }
        world.server.push(
            Turn::reply()
                .text("Writing it.")
                .tool_call_raw("call_1", "write", ARGUMENTS),
        );
        world.server.push(Turn::reply().text("Done."));
        client
            .call::<SessionPrompt>(&prompt(&session.id, "write the note"))
            .await
            .unwrap();
        let seen = run_events(&mut events, &session.id).await;

        let ended: Vec<String> = seen
            .iter()
            .filter_map(|event| match &event.event {
                SessionEvent::MessageUpdate {
                    assistant_message_event: AssistantMessageEvent::ToolcallEnd { tool_call, .. },
                } => Some(tool_call.arguments.to_string()),
                _ => None,
            })
            .collect();
        // Decoded, the arguments are the model's value; on the wire, its bytes.
        assert_eq!(ended, [compact()], "{api}: toolcall_end");
        let frame = loop {
            let line = raw.read_line().await.expect("the event frames keep coming");
            if line.contains(r#""type":"toolcall_end""#) {
                break line;
            }
        };
        assert!(
            frame.contains(&format!(r#""arguments":{}"#, one_line(api))),
            "{api}: the toolcall_end frame carries the arguments byte for byte: {frame}"
        );

        let requests = world.server.requests();
        assert_eq!(requests.len(), 2, "{api}");
        // The same value, and the same bytes.
        assert_eq!(
            serde_json::from_str::<Value>(&arguments_sent_back(api, &requests[1].body)).unwrap(),
            serde_json::from_str::<Value>(ARGUMENTS).unwrap(),
            "{api}: the next request"
        );
        assert!(
            requests[1].body_text.contains(&in_request_body(api)),
            "{api}: the next request carries {} byte for byte:\n{}",
            in_request_body(api),
            requests[1].body_text
        );

        let stored = client
            .call::<SessionRead>(&SessionReadParams {
                session_id: session.id.clone(),
                scope: ReadScope::Branch,
                cursor: None,
                limit: None,
            })
            .await
            .unwrap();
        let calls: Vec<&ToolCall> = stored
            .entries
            .iter()
            .filter_map(|record| match &record.entry {
                SessionEntry::Message {
                    message: AgentMessage::Assistant(assistant),
                    ..
                } => Some(assistant),
                _ => None,
            })
            .flat_map(|assistant| &assistant.content)
            .filter_map(|block| match block {
                AssistantContent::ToolCall(call) => Some(call),
                _ => None,
            })
            .collect();
        assert_eq!(calls.len(), 1, "{api}");
        assert_eq!(
            calls[0].arguments.to_string(),
            compact(),
            "{api}: the stored entry, decoded"
        );
        assert_eq!(
            std::fs::read_to_string(world.daemon.home.path().join("notes.txt")).unwrap(),
            "zebra, then apple"
        );

        // The response ids the scripted server sent, one per reply, on the messages.
        let prefix = match api {
            "anthropic-messages" => "msg_scripted_",
            "openai-completions" => "chatcmpl-scripted-",
            "openai-responses" => "resp_scripted_",
            _ => "scripted-",
        };
        let ended: Vec<String> = seen
            .iter()
            .filter_map(|event| match &event.event {
                SessionEvent::MessageEnd {
                    message: AgentMessage::Assistant(assistant),
                    ..
                } => Some(assistant.response_id.clone().unwrap_or_default()),
                _ => None,
            })
            .collect();
        assert_eq!(ended.len(), 2, "{api}");
        for id in &ended {
            let number = id.strip_prefix(prefix).unwrap_or_else(|| {
                panic!("{api}: response id {id:?} is not the server's ({prefix}NNNN)")
            });
            assert!(
                number.len() == 4 && number.chars().all(|c| c.is_ascii_digit()),
                "{id}"
            );
        }
        assert_ne!(ended[0], ended[1], "{api}: one id per response");
        let stored_ids: Vec<String> = stored
            .entries
            .iter()
            .filter_map(|record| match &record.entry {
                SessionEntry::Message {
                    message: AgentMessage::Assistant(assistant),
                    ..
                } => assistant.response_id.clone(),
                _ => None,
            })
            .collect();
        assert_eq!(stored_ids, ended, "{api}: the stored entries");
        let exported = client
            .call::<SessionExport>(&SessionExportParams {
                session_id: session.id.clone(),
                format: ExportFormat::Jsonl,
                path: None,
            })
            .await
            .unwrap()
            .content
            .unwrap();
        assert!(
            exported.contains(&format!(r#""arguments":{}"#, one_line(api))),
            "{api}: the export carries the arguments byte for byte:\n{exported}"
        );
        for id in &ended {
            let line = exported
                .lines()
                .find(|line| line.contains(id.as_str()))
                .unwrap_or_else(|| panic!("{api}: {id} is not in the export:\n{exported}"));
            let after_timestamp = format!(r#","responseId":"{id}""#);
            let timestamp_at = line.rfind(r#""timestamp":"#).unwrap();
            assert!(
                line[timestamp_at..].contains(&after_timestamp),
                "{api}: pi writes responseId right after the message's timestamp: {line}"
            );
        }
        world.server.assert_done(2);
    }
}
