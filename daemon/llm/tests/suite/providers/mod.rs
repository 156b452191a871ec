//! The four wire formats against the scripted model server, over real HTTP on loopback:
//! streamed replies (text, thinking, tool calls, usage and cost), signatures sent back,
//! request bodies as the real APIs expect them, every failure class, aborts, a conversation
//! moving between providers, and keys that never leak.
//!
//! Every test streams through [`pi_llm::ProviderRouter`] with [`run`], which checks the event
//! sequence itself (dense block indexes, deltas adding up to each block's end, one terminal
//! event, the stream's partial equal to the final message), and ends with the server's
//! `assert_done(n)`: exactly `n` requests, every scripted turn used, no request the real API
//! would reject.

mod abort;
mod cross_provider;
mod errors;
mod leaks;
mod requests;
mod signatures;
mod streaming;

use pi_llm::model::{InputKind, ModelCost};
use pi_llm::{
    ApiKey, AssistantMessage, Context, Message, Model, Provider, ProviderRouter, StreamEvent,
    StreamOptions, ToolCall, ToolResultMessage, UserContent,
};
use pi_test_support::model_server::{ModelServer, Turn};
use serde_json::Value;

/// The four wire formats, in the order every per-format snapshot lists them.
pub const APIS: [&str; 4] = [
    "anthropic-messages",
    "openai-completions",
    "openai-responses",
    "google-generative-ai",
];

/// The key every request carries (tests of leaks use their own sentinel).
pub const KEY: &str = "sk-test-0123456789";

/// A reasoning model of `api` on `server`, priced so costs are easy to read: $3 input, $15
/// output, $0.30 cache read and $3.75 cache write per million tokens.
pub fn model(server: &ModelServer, api: &str) -> Model {
    let (id, provider) = match api {
        "anthropic-messages" => ("claude-sonnet-4-5", "anthropic"),
        "openai-completions" => ("o4-mini", "openai"),
        "openai-responses" => ("gpt-5-mini", "openai"),
        "google-generative-ai" => ("gemini-2.5-pro", "google"),
        other => panic!("no test model for {other}"),
    };
    Model {
        id: id.into(),
        name: id.into(),
        api: api.into(),
        provider: provider.into(),
        base_url: server.base_url(api),
        reasoning: true,
        input: vec![InputKind::Text, InputKind::Image],
        cost: ModelCost {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
        },
        context_window: 200_000,
        max_tokens: 64_000,
        headers: Default::default(),
        compat: None,
    }
}

/// Options with [`KEY`], medium thinking and a session id.
pub fn options() -> StreamOptions {
    StreamOptions {
        api_key: Some(ApiKey::new(KEY)),
        session_id: Some("session-0001".into()),
        ..StreamOptions::default()
    }
}

/// A context of one user message.
pub fn ask(text: &str) -> Context {
    Context {
        system_prompt: Some("You are a test.".into()),
        messages: vec![user(text)],
        tools: Vec::new(),
    }
}

/// A user message from JSON text.
pub fn user(text: &str) -> Message {
    message(serde_json::json!({"role": "user", "content": text, "timestamp": 1}))
}

/// A successful result of `call` with `text`.
pub fn tool_result(call: &ToolCall, text: &str) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        content: vec![UserContent::text(text)],
        details: None,
        is_error: false,
        timestamp: 2,
    })
}

/// Streams `first` for `ask("Lies a.")`, then continues the conversation (the reply, a result
/// for each of its tool calls, another user message) with `next_model`, answered `ok`.
/// Returns the first run and the body of the second request; the server saw exactly two.
pub async fn continue_with(
    server: &ModelServer,
    first_model: &Model,
    first: impl Into<Turn>,
    next_model: &Model,
) -> (Run, Value) {
    server.push(first);
    server.push(Turn::reply().text("ok"));
    let mut context = ask("Lies a.");
    let first = run(first_model, &context, options()).await;
    context
        .messages
        .push(Message::Assistant(first.message.clone()));
    for call in first.message.tool_calls() {
        context.messages.push(tool_result(call, "Inhalt von a"));
    }
    context.messages.push(user("Und jetzt?"));
    let second = run(next_model, &context, options()).await;
    assert_eq!(second.message.text(), "ok", "{:?}", second.message);
    server.assert_done(2);
    (first, server.requests()[1].body.clone())
}

/// A message from pi's JSON.
pub fn message(value: Value) -> Message {
    serde_json::from_value(value).unwrap()
}

/// What one stream produced: every event and the final message, with timestamps zeroed.
#[derive(Debug)]
pub struct Run {
    pub events: Vec<StreamEvent>,
    pub message: AssistantMessage,
}

/// Streams one request through the router, consuming every event, and checks the sequence.
pub async fn run(model: &Model, context: &Context, options: StreamOptions) -> Run {
    let mut stream = ProviderRouter::new().stream(model, context, options);
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        events.push(event);
    }
    let partial = stream.partial().clone();
    let message = check_sequence(&events);
    assert_eq!(
        partial, message,
        "the stream's partial is the final message"
    );
    let mut run = Run { events, message };
    run.message.timestamp = 0;
    for event in &mut run.events {
        if let StreamEvent::Done { message, .. } | StreamEvent::Error { error: message, .. } = event
        {
            message.timestamp = 0;
        }
    }
    run
}

/// Pushes `turn`, streams a request for `ask("Hi")` on `api`, and returns the run; the server
/// must have seen exactly one request.
pub async fn run_turn(api: &str, turn: impl Into<Turn>) -> Run {
    let server = ModelServer::start().await;
    server.push(turn);
    let run = run(&model(&server, api), &ask("Hi"), options()).await;
    server.assert_done(1);
    run
}

/// The checks every event sequence passes; returns the final message.
fn check_sequence(events: &[StreamEvent]) -> AssistantMessage {
    #[derive(PartialEq)]
    enum Open {
        Text(String),
        Thinking(String),
        Tool(String),
        Closed,
    }
    let mut blocks: Vec<Open> = Vec::new();
    let (last, body) = events.split_last().expect("a stream has a terminal event");
    for (position, event) in body.iter().enumerate() {
        let block = |index: usize, blocks: &[Open]| -> usize {
            assert!(
                index < blocks.len(),
                "event {position}: block {index} not open"
            );
            index
        };
        match event {
            StreamEvent::Start => assert_eq!(position, 0, "start comes first"),
            StreamEvent::TextStart { content_index }
            | StreamEvent::ThinkingStart { content_index }
            | StreamEvent::ToolcallStart { content_index, .. } => {
                assert_eq!(*content_index, blocks.len(), "indexes are dense");
                blocks.push(match event {
                    StreamEvent::TextStart { .. } => Open::Text(String::new()),
                    StreamEvent::ThinkingStart { .. } => Open::Thinking(String::new()),
                    _ => Open::Tool(String::new()),
                });
            }
            StreamEvent::TextDelta {
                content_index,
                delta,
            } => match blocks.get_mut(*content_index) {
                Some(Open::Text(text)) => text.push_str(delta),
                _ => panic!("event {position}: text delta outside an open text block"),
            },
            StreamEvent::ThinkingDelta {
                content_index,
                delta,
            } => match blocks.get_mut(*content_index) {
                Some(Open::Thinking(text)) => text.push_str(delta),
                _ => panic!("event {position}: thinking delta outside an open thinking block"),
            },
            StreamEvent::ToolcallDelta {
                content_index,
                delta,
                ..
            } => match blocks.get_mut(*content_index) {
                Some(Open::Tool(text)) => text.push_str(delta),
                _ => panic!("event {position}: argument delta outside an open tool call"),
            },
            StreamEvent::TextEnd {
                content_index,
                content,
                ..
            } => {
                let index = block(*content_index, &blocks);
                assert!(
                    blocks[index] == Open::Text(content.clone()),
                    "text end = deltas"
                );
                blocks[index] = Open::Closed;
            }
            StreamEvent::ThinkingEnd {
                content_index,
                content,
                ..
            } => {
                let index = block(*content_index, &blocks);
                assert!(
                    blocks[index] == Open::Thinking(content.clone()),
                    "thinking end = deltas"
                );
                blocks[index] = Open::Closed;
            }
            StreamEvent::ToolcallEnd {
                content_index,
                tool_call,
            } => {
                let index = block(*content_index, &blocks);
                let Open::Tool(raw) = &blocks[index] else {
                    panic!("event {position}: tool call end of a closed block");
                };
                if let Ok(whole) = serde_json::from_str::<Value>(raw) {
                    assert_eq!(tool_call.arguments, whole, "arguments = deltas");
                }
                blocks[index] = Open::Closed;
            }
            StreamEvent::Done { .. } | StreamEvent::Error { .. } => {
                panic!("event {position}: a terminal event before the last")
            }
        }
    }
    match last {
        StreamEvent::Done { message, .. } => {
            assert!(
                blocks.iter().all(|block| *block == Open::Closed),
                "every block is closed before done"
            );
            assert_eq!(message.content.len(), blocks.len());
            (**message).clone()
        }
        StreamEvent::Error { error, .. } => {
            assert!(error.error_message.is_some(), "errors say what happened");
            assert!(error.failure.is_some(), "live errors carry their failure");
            (**error).clone()
        }
        other => panic!("the last event is not terminal: {other:?}"),
    }
}

/// The events in one line each, consecutive deltas of a block folded into one line with
/// their count, then the final message as JSON: what the streaming snapshots show.
pub fn transcript(run: &Run) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut folded: Option<(String, usize, String)> = None;
    let flush = |folded: &mut Option<(String, usize, String)>, lines: &mut Vec<String>| {
        if let Some((head, count, text)) = folded.take() {
            lines.push(format!("{head} x{count} {text:?}"));
        }
    };
    for event in &run.events {
        let delta = match event {
            StreamEvent::TextDelta {
                content_index,
                delta,
            } => Some((format!("text_delta #{content_index}"), delta)),
            StreamEvent::ThinkingDelta {
                content_index,
                delta,
            } => Some((format!("thinking_delta #{content_index}"), delta)),
            StreamEvent::ToolcallDelta {
                content_index,
                delta,
                ..
            } => Some((format!("toolcall_delta #{content_index}"), delta)),
            _ => None,
        };
        match (delta, &mut folded) {
            (Some((head, delta)), Some((open, count, text))) if *open == head => {
                *count += 1;
                text.push_str(delta);
            }
            (Some((head, delta)), _) => {
                flush(&mut folded, &mut lines);
                folded = Some((head, 1, delta.clone()));
            }
            (None, _) => {
                flush(&mut folded, &mut lines);
                lines.push(event_line(event));
            }
        }
    }
    flush(&mut folded, &mut lines);
    let message = serde_json::to_string_pretty(&run.message).unwrap();
    format!("{}\n{message}", lines.join("\n"))
}

/// One event in a line (deltas included, unfolded).
pub fn event_line(event: &StreamEvent) -> String {
    match event {
        StreamEvent::Start => "start".into(),
        StreamEvent::TextStart { content_index } => format!("text_start #{content_index}"),
        StreamEvent::ThinkingStart { content_index } => {
            format!("thinking_start #{content_index}")
        }
        StreamEvent::ToolcallStart {
            content_index,
            id,
            tool_name,
        } => format!("toolcall_start #{content_index} {id} {tool_name}"),
        StreamEvent::TextEnd {
            content_index,
            signature,
            ..
        } => format!("text_end #{content_index} signature={signature:?}"),
        StreamEvent::ThinkingEnd {
            content_index,
            signature,
            redacted,
            ..
        } => format!("thinking_end #{content_index} signature={signature:?} redacted={redacted}"),
        StreamEvent::ToolcallEnd {
            content_index,
            tool_call,
        } => format!("toolcall_end #{content_index} {}", tool_call.arguments),
        StreamEvent::Done { reason, .. } => format!("done {reason:?}"),
        StreamEvent::Error { reason, error } => format!(
            "error {reason:?} {:?}: {}",
            error.failure.map(|failure| failure.kind),
            error.error_message.as_deref().unwrap_or_default()
        ),
        StreamEvent::TextDelta {
            content_index,
            delta,
        } => format!("text_delta #{content_index} {delta:?}"),
        StreamEvent::ThinkingDelta {
            content_index,
            delta,
        } => format!("thinking_delta #{content_index} {delta:?}"),
        StreamEvent::ToolcallDelta {
            content_index,
            delta,
            ..
        } => format!("toolcall_delta #{content_index} {delta:?}"),
    }
}

/// `# {api}` headed sections, one per format, for snapshots comparing the four.
pub fn sections(parts: Vec<(&str, String)>) -> String {
    parts
        .into_iter()
        .map(|(api, text)| format!("# {api}\n{text}"))
        .collect::<Vec<_>>()
        .join("\n\n")
}
