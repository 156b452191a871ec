//! Helpers for the compaction tests: a session with an attached client, sized messages,
//! usage past the threshold, and readers for recorded requests and events.

use pi_daemon::compaction::prompt::SUMMARIZATION_SYSTEM_PROMPT;
use pi_llm::faux::{FauxReply, FauxRequest};
use pi_llm::{Message, Usage, UserContent};
use pi_protocol::v1::*;

use crate::suite::sessions::harness::{Options, TestDaemon, events_until, kind, run_events};

/// With 50-token messages, keeping about 60 tokens keeps the last user message and its answer.
pub const KEEP_LAST_TURN: u64 = 60;

/// A 200-character text (50 estimated tokens) starting with `label`.
pub fn sized(label: &str) -> String {
    format!("{label} {}", ".".repeat(199 - label.len()))
}

/// Usage past the faux model's threshold (200,000 - 16,384).
pub fn over_threshold() -> Usage {
    Usage {
        input: 189_000,
        output: 1_000,
        total_tokens: 190_000,
        ..Usage::default()
    }
}

pub struct Session {
    pub daemon: TestDaemon,
    pub client: pi_client::Client,
    pub events: pi_client::Notifications,
    pub id: String,
}

impl Session {
    /// A session whose working directory's `.pi/settings.json` sets pi's
    /// `compaction.keepRecentTokens` (the other compaction settings keep pi's defaults).
    pub async fn start(options: Options, keep_recent_tokens: u64) -> Session {
        let daemon = TestDaemon::start_with(options).await;
        let project = daemon.home.path().join(".pi");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(
            project.join("settings.json"),
            serde_json::json!({"compaction": {"keepRecentTokens": keep_recent_tokens}}).to_string(),
        )
        .unwrap();
        let (client, events) = daemon.client().await;
        let id = daemon.create_session(&client).await.id;
        client
            .call::<SessionAttach>(&SessionAttachParams {
                session_id: id.clone(),
                after_seq: None,
            })
            .await
            .unwrap();
        Session {
            daemon,
            client,
            events,
            id,
        }
    }

    pub async fn prompt(&self, text: &str) {
        self.client
            .call::<SessionPrompt>(&SessionMessageParams {
                session_id: self.id.clone(),
                text: text.to_owned(),
                images: vec![],
            })
            .await
            .unwrap();
    }

    /// Prompts and reads events until `agent_end`.
    pub async fn converse(&mut self, text: &str, reply: FauxReply) -> Vec<SessionEventParams> {
        self.daemon.faux.push(reply);
        self.prompt(text).await;
        run_events(&mut self.events, &self.id).await
    }

    /// Reads events until one of type `until`.
    pub async fn events_until(&mut self, until: &str) -> Vec<SessionEventParams> {
        events_until(&mut self.events, &self.id, |event| kind(event) == until).await
    }

    pub async fn branch(&self) -> Vec<SessionEntry> {
        self.client
            .call::<SessionRead>(&SessionReadParams {
                session_id: self.id.clone(),
                scope: ReadScope::Branch,
                limit: None,
                cursor: None,
            })
            .await
            .unwrap()
            .entries
            .into_iter()
            .map(|record| record.entry)
            .collect()
    }

    /// The id of the message entry whose text starts with `label`.
    pub async fn entry_id(&self, label: &str) -> String {
        self.branch()
            .await
            .into_iter()
            .find_map(|entry| match entry {
                SessionEntry::Message { id, message, .. } => {
                    let text = serde_json::to_value(&message).unwrap()["content"][0]["text"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned();
                    text.starts_with(label).then_some(id)
                }
                _ => None,
            })
            .unwrap_or_else(|| panic!("no message starting with {label:?}"))
    }
}

/// The texts the model saw, one per message, shortened to their first word.
pub fn seen(request: &FauxRequest) -> Vec<String> {
    request
        .context
        .messages
        .iter()
        .map(|message| match message {
            Message::User(user) => format!("user:{}", first_words(&user_text(&user.content))),
            Message::Assistant(assistant) => {
                format!("assistant:{}", first_words(&assistant.text()))
            }
            Message::ToolResult(_) => "toolResult".to_owned(),
        })
        .collect()
}

pub fn user_text(content: &[UserContent]) -> String {
    content
        .iter()
        .filter_map(|block| match block {
            UserContent::Text(text) => Some(text.text.as_str()),
            UserContent::Image(_) => None,
        })
        .collect()
}

fn first_words(text: &str) -> String {
    text.split(' ').next().unwrap_or_default().to_owned()
}

/// The single user message of a summarization request.
pub fn summary_prompt(request: &FauxRequest) -> String {
    assert_eq!(
        request.context.system_prompt.as_deref(),
        Some(SUMMARIZATION_SYSTEM_PROMPT)
    );
    assert!(request.context.tools.is_empty(), "no tools for summaries");
    let [Message::User(user)] = request.context.messages.as_slice() else {
        panic!("a summarization request has one user message");
    };
    user_text(&user.content)
}

pub fn compaction_end(events: &[SessionEventParams]) -> SessionEvent {
    events
        .iter()
        .rev()
        .find(|event| kind(event) == "compaction_end")
        .map(|event| event.event.clone())
        .expect("a compaction_end event")
}
