//! Providers extensions register (pi's `pi.registerProvider`): their models join the
//! session's (`models`), and a request to one of them is streamed by the host — the
//! provider's own `streamSimple`, or pi's implementation of a built-in API with the base URL
//! and headers the extension set — with the key and headers pi's registry resolves there
//! (`auth.json`, the provider's `apiKey`, its OAuth login). [`ExtensionProvider`] is that
//! stream as a [`Provider`] of the session core: the host's events (`provider/event`) are
//! played into pi-llm's [`Assembler`], so a run sees the same events, final message, usage
//! and failures as from a built-in wire format.

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use pi_llm::assemble::Assembler;
use pi_llm::{
    AssistantStream, Context, DoneReason, Failure, FailureKind, Model, Provider, StreamOptions,
    ThinkingLevel,
};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::ExtensionHost;

/// Events of one stream buffered between the host's connection and its assembler: past it,
/// the connection waits (the host's output is read no further until the run takes them).
const STREAM_BUFFER: usize = 64;

/// A model of a provider an extension registered.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProvidedModel {
    /// The model, as pid's catalog describes models.
    #[serde(flatten)]
    pub model: Model,
    /// Whether pi's registry in the host has a key or login for its provider.
    #[serde(default)]
    pub has_key: bool,
}

impl ExtensionHost {
    /// The models of the providers session `session_id`'s extensions registered, as loaded
    /// now.
    pub fn models(&self, session_id: &str) -> Vec<ProvidedModel> {
        self.current(session_id)
            .map(|set| set.models.clone())
            .unwrap_or_default()
    }

    /// The models of the providers session `session_id`'s extensions registered, once they
    /// loaded.
    pub async fn models_loaded(self: &Arc<Self>, session_id: &str) -> Vec<ProvidedModel> {
        self.opened(session_id)
            .await
            .map(|set| set.models.clone())
            .unwrap_or_default()
    }

    /// What streams session `session_id`'s extension providers' models; `env` is the
    /// session's environment (the client's), where a provider's key variable is looked up
    /// first, as for the daemon's own providers.
    pub fn provider(
        self: &Arc<Self>,
        session_id: &str,
        env: Arc<std::collections::BTreeMap<String, String>>,
    ) -> Arc<dyn Provider> {
        Arc::new(ExtensionProvider {
            host: Arc::downgrade(self),
            session_id: session_id.to_owned(),
            env,
        })
    }

    /// An event of stream `stream_id` from the host: handed to its run, the host's output
    /// held meanwhile (`None`: a stream that ended).
    pub(crate) fn stream_event(&self, params: &Value) -> Option<pi_jsonrpc::Held> {
        let id = params["streamId"].as_u64()?;
        let sender = self.streams().get(&id)?.clone();
        let event = params["event"].clone();
        Some(Box::pin(async move {
            let _ = sender.send(event).await;
        }))
    }

    fn streams(&self) -> std::sync::MutexGuard<'_, HashMap<u64, mpsc::Sender<Value>>> {
        self.streams
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A session's extension providers, as a provider of its runs.
struct ExtensionProvider {
    host: Weak<ExtensionHost>,
    session_id: String,
    env: Arc<std::collections::BTreeMap<String, String>>,
}

impl Provider for ExtensionProvider {
    fn stream(&self, model: &Model, context: &Context, options: StreamOptions) -> AssistantStream {
        let (sender, stream) = AssistantStream::channel(model);
        let assembler = Assembler::new(sender, model, stream.partial().timestamp);
        let request = json!({
            "sessionId": self.session_id,
            "provider": model.provider,
            "modelId": model.id,
            "context": context_json(context),
            "options": {
                "reasoning": (options.thinking != ThinkingLevel::Off)
                    .then(|| options.thinking.as_str()),
                "maxTokens": options.max_tokens,
                "sessionId": options.session_id,
            },
            "env": *self.env,
        });
        let host = self.host.clone();
        let session_id = self.session_id.clone();
        tokio::spawn(async move {
            match host.upgrade() {
                Some(host) => run(host, session_id, request, options, assembler).await,
                None => {
                    assembler
                        .fail(
                            "the daemon is stopping".to_owned(),
                            Failure::new(FailureKind::Other),
                        )
                        .await
                }
            }
        });
        stream
    }
}

/// pi-ai's `Context`: the system prompt, the messages in pi's shapes, the tools.
fn context_json(context: &Context) -> Value {
    json!({
        "systemPrompt": context.system_prompt,
        "messages": context.messages,
        "tools": context.tools.iter().map(|tool| json!({
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        })).collect::<Vec<_>>(),
    })
}

/// Removes a stream's sender when its run ends, however it ends.
struct Registered<'a> {
    host: &'a ExtensionHost,
    id: u64,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.host.streams().remove(&self.id);
    }
}

async fn run(
    host: Arc<ExtensionHost>,
    session_id: String,
    mut request: Value,
    options: StreamOptions,
    mut assembler: Assembler,
) {
    let id = host
        .next_stream
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let (sender, mut events) = mpsc::channel(STREAM_BUFFER);
    host.streams().insert(id, sender);
    let _registered = Registered { host: &host, id };
    request["streamId"] = Value::from(id);
    let call = host.call(
        &session_id,
        "provider/stream",
        request,
        // The stream may run as long as a model takes; the host gives it up itself.
        std::time::Duration::from_secs(24 * 3600),
    );
    tokio::pin!(call);
    let mut play = Play::default();
    loop {
        tokio::select! {
            event = events.recv() => {
                let Some(event) = event else { break };
                match play.event(&mut assembler, event).await {
                    Played::More => continue,
                    Played::Done(reason) => return assembler.finish(reason).await,
                    Played::Failed(message, failure) => return assembler.fail(message, failure).await,
                }
            }
            answer = &mut call => {
                if let Err(error) = answer {
                    // The host went away or refused the stream: what it sent is kept.
                    return assembler.fail(
                        format!("the extension's provider failed: {error}"),
                        Failure::new(FailureKind::Connection),
                    ).await;
                }
                // Every event came before the answer (the host's messages are read in
                // order): what is left in the channel is all there is.
                while let Ok(event) = events.try_recv() {
                    match play.event(&mut assembler, event).await {
                        Played::More => continue,
                        Played::Done(reason) => return assembler.finish(reason).await,
                        Played::Failed(message, failure) => {
                            return assembler.fail(message, failure).await
                        }
                    }
                }
                return assembler.fail(
                    "the extension's provider ended its stream without a result".to_owned(),
                    Failure::new(FailureKind::StreamCut),
                ).await;
            }
            () = options.cancel.cancelled() => {
                host.tell("provider/cancel", json!({"streamId": id}));
                return assembler.abort().await;
            }
        }
    }
}

/// Where the host's blocks are in the assembled message.
#[derive(Default)]
struct Play {
    // The host's content index → the assembler's.
    blocks: HashMap<u64, usize>,
}

enum Played {
    More,
    Done(DoneReason),
    Failed(String, Failure),
}

impl Play {
    async fn event(&mut self, out: &mut Assembler, event: Value) -> Played {
        let index = event["contentIndex"].as_u64();
        let text = |key: &str| event[key].as_str().unwrap_or_default().to_owned();
        match event["type"].as_str().unwrap_or_default() {
            "start" => out.start().await,
            "text_start" => {
                let at = out.open_text().await;
                self.blocks.extend(index.map(|index| (index, at)));
            }
            "thinking_start" => {
                let at = out.open_thinking().await;
                self.blocks.extend(index.map(|index| (index, at)));
            }
            "toolcall_start" => {
                let at = out.open_tool_call(text("id"), text("name")).await;
                self.blocks.extend(index.map(|index| (index, at)));
            }
            "text_delta" => {
                let at = self.at(out, index, Kind::Text).await;
                out.text_delta(at, &text("delta")).await;
            }
            "thinking_delta" => {
                let at = self.at(out, index, Kind::Thinking).await;
                out.thinking_delta(at, &text("delta")).await;
            }
            "toolcall_delta" => {
                let at = self.at(out, index, Kind::Tool(&event)).await;
                out.tool_args_delta(at, &text("delta")).await;
            }
            "text_end" => {
                let at = self.at(out, index, Kind::Text).await;
                if let Some(signature) = event["signature"].as_str() {
                    out.set_text_signature(at, signature.to_owned());
                }
                out.close(at).await;
            }
            "thinking_end" => {
                let at = self.at(out, index, Kind::Thinking).await;
                if let Some(signature) = event["signature"].as_str() {
                    if event["redacted"] == true {
                        out.set_redacted(at, signature.to_owned());
                    } else {
                        out.set_thinking_signature(at, signature.to_owned());
                    }
                }
                out.close(at).await;
            }
            "toolcall_end" => {
                let call = &event["toolCall"];
                let at = self.at(out, index, Kind::Tool(call)).await;
                // The complete arguments, as the provider parsed them.
                if call["arguments"].is_object() {
                    out.set_tool_arguments_text(at, &call["arguments"].to_string());
                }
                out.close(at).await;
            }
            "done" => {
                let message = &event["message"];
                self.content_not_streamed(out, message).await;
                usage(out, message);
                let reason = match event["reason"].as_str() {
                    Some("length") => DoneReason::Length,
                    Some("toolUse") => DoneReason::ToolUse,
                    _ => DoneReason::Stop,
                };
                return Played::Done(reason);
            }
            "error" => {
                let message = &event["error"];
                usage(out, message);
                let text = message["errorMessage"]
                    .as_str()
                    .unwrap_or("the extension's provider failed")
                    .to_owned();
                let failure = if event["reason"] == "aborted" {
                    Failure::new(FailureKind::Aborted)
                } else {
                    Failure::new(pi_llm::failure::classify_error_message(&text))
                };
                return Played::Failed(text, failure);
            }
            _ => {}
        }
        Played::More
    }

    /// The block the host calls `index`, opened now if its start never came.
    async fn at(&mut self, out: &mut Assembler, index: Option<u64>, kind: Kind<'_>) -> usize {
        let index = index.unwrap_or_default();
        if let Some(at) = self.blocks.get(&index) {
            return *at;
        }
        let at = match kind {
            Kind::Text => out.open_text().await,
            Kind::Thinking => out.open_thinking().await,
            Kind::Tool(call) => {
                let field = |key: &str| call[key].as_str().unwrap_or_default().to_owned();
                out.open_tool_call(field("id"), field("name")).await
            }
        };
        self.blocks.insert(index, at);
        at
    }

    /// A provider that gave its message only at the end (no block events): its blocks, as
    /// events, before `done`.
    async fn content_not_streamed(&mut self, out: &mut Assembler, message: &Value) {
        if !self.blocks.is_empty() {
            return;
        }
        for block in message["content"].as_array().into_iter().flatten() {
            let text = |key: &str| block[key].as_str().unwrap_or_default().to_owned();
            let at = match block["type"].as_str() {
                Some("text") => {
                    let at = out.open_text().await;
                    out.text_delta(at, &text("text")).await;
                    at
                }
                Some("thinking") => {
                    let at = out.open_thinking().await;
                    out.thinking_delta(at, &text("thinking")).await;
                    at
                }
                Some("toolCall") => {
                    let at = out.open_tool_call(text("id"), text("name")).await;
                    out.set_tool_arguments_text(at, &block["arguments"].to_string());
                    at
                }
                _ => continue,
            };
            out.close(at).await;
        }
    }
}

enum Kind<'a> {
    Text,
    Thinking,
    Tool(&'a Value),
}

/// The usage and response id of the host's final message (priced again from the model).
fn usage(out: &mut Assembler, message: &Value) {
    out.set_response_id(message["responseId"].as_str());
    let usage = &message["usage"];
    if !usage.is_object() {
        return;
    }
    let count = |key: &str| usage[key].as_u64().unwrap_or_default();
    let own = out.usage_mut();
    own.input = count("input");
    own.output = count("output");
    own.cache_read = count("cacheRead");
    own.cache_write = count("cacheWrite");
    own.total_tokens = count("totalTokens");
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_llm::StreamEvent;

    fn model() -> Model {
        serde_json::from_value(json!({
            "id": "m", "name": "M", "api": "custom-api", "provider": "custom",
            "baseUrl": "http://localhost", "reasoning": false, "input": ["text"],
            "cost": {"input": 1.0, "output": 2.0, "cacheRead": 0.0, "cacheWrite": 0.0},
            "contextWindow": 1000, "maxTokens": 100
        }))
        .unwrap()
    }

    async fn play(events: Vec<Value>) -> (Vec<StreamEvent>, pi_llm::AssistantMessage) {
        let model = model();
        let (sender, mut stream) = AssistantStream::channel(&model);
        let mut out = Assembler::new(sender, &model, stream.partial().timestamp);
        let task = tokio::spawn(async move {
            let mut play = Play::default();
            for event in events {
                match play.event(&mut out, event).await {
                    Played::More => {}
                    Played::Done(reason) => return out.finish(reason).await,
                    Played::Failed(text, failure) => return out.fail(text, failure).await,
                }
            }
        });
        let mut seen = Vec::new();
        while let Some(event) = stream.next().await {
            seen.push(event);
        }
        task.await.unwrap();
        (seen, stream.partial().clone())
    }

    #[tokio::test]
    async fn a_hosts_stream_becomes_the_same_events_and_message() {
        let (events, message) = play(vec![
            json!({"type": "start"}),
            json!({"type": "text_start", "contentIndex": 0}),
            json!({"type": "text_delta", "contentIndex": 0, "delta": "Hel"}),
            json!({"type": "text_delta", "contentIndex": 0, "delta": "lo"}),
            json!({"type": "text_end", "contentIndex": 0, "content": "Hello"}),
            json!({"type": "toolcall_start", "contentIndex": 1, "id": "c1", "name": "read"}),
            json!({"type": "toolcall_delta", "contentIndex": 1, "delta": "{\"path\":"}),
            json!({"type": "toolcall_end", "contentIndex": 1,
                "toolCall": {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.txt"}}}),
            json!({"type": "done", "reason": "toolUse", "message": {"responseId": "r1",
                "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15}}}),
        ])
        .await;
        let kinds: Vec<&str> = events
            .iter()
            .map(|event| match event {
                StreamEvent::Start => "start",
                StreamEvent::TextStart { .. } => "text_start",
                StreamEvent::TextDelta { .. } => "text_delta",
                StreamEvent::TextEnd { .. } => "text_end",
                StreamEvent::ToolcallStart { .. } => "toolcall_start",
                StreamEvent::ToolcallDelta { .. } => "toolcall_delta",
                StreamEvent::ToolcallEnd { .. } => "toolcall_end",
                StreamEvent::Done { .. } => "done",
                _ => "other",
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "start",
                "text_start",
                "text_delta",
                "text_delta",
                "text_end",
                "toolcall_start",
                "toolcall_delta",
                "toolcall_end",
                "done"
            ]
        );
        assert_eq!(message.text(), "Hello");
        let call = message.tool_calls().next().unwrap();
        assert_eq!(call.arguments["path"], "a.txt");
        assert_eq!(message.stop_reason, pi_llm::StopReason::ToolUse);
        assert_eq!(message.usage.input, 10);
        assert_eq!(message.response_id.as_deref(), Some("r1"));
        // Priced from the model: 10 input tokens at $1/M and 5 output at $2/M.
        assert!((message.usage.cost.total - 0.00002).abs() < 1e-12);
    }

    #[tokio::test]
    async fn a_message_given_only_at_the_end_is_still_streamed() {
        let (events, message) = play(vec![json!({"type": "done", "reason": "stop",
            "message": {"content": [{"type": "text", "text": "all at once"}]}})])
        .await;
        assert!(events.iter().any(
            |event| matches!(event, StreamEvent::TextDelta { delta, .. } if delta == "all at once")
        ));
        assert_eq!(message.text(), "all at once");
    }

    #[tokio::test]
    async fn an_error_keeps_its_message_and_class() {
        let (_, message) = play(vec![
            json!({"type": "start"}),
            json!({"type": "error", "reason": "error",
                "error": {"errorMessage": "429 Too Many Requests"}}),
        ])
        .await;
        assert_eq!(message.stop_reason, pi_llm::StopReason::Error);
        assert_eq!(
            message.error_message.as_deref(),
            Some("429 Too Many Requests")
        );
        assert_eq!(
            message.failure.map(|failure| failure.kind),
            Some(FailureKind::RateLimited)
        );
    }
}
