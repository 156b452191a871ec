//! Compaction through the daemon with the faux provider: the threshold trigger after a run,
//! what the next request holds, pi's summarization request, update mode, manual compaction
//! with instructions, and abort.

use pi_daemon::compaction::CompactionSettings;
use pi_daemon::compaction::prompt::SUMMARIZATION_SYSTEM_PROMPT;
use pi_daemon::session::SessionSettings;
use pi_llm::faux::{FauxGate, FauxReply, FauxRequest};
use pi_llm::{Message, ThinkingLevel, Usage, UserContent};
use pi_protocol::v1::message::AgentMessage;
use pi_protocol::v1::*;

use super::harness::{Options, TestDaemon, events_until, kind, run_events};

/// Keeps about 60 tokens: with 50-token messages, the last user message and its answer.
pub fn compacting_options() -> Options {
    Options {
        settings: SessionSettings {
            compaction: CompactionSettings {
                enabled: true,
                reserve_tokens: 16_384,
                keep_recent_tokens: 60,
            },
            ..SessionSettings::default()
        },
        ..Options::default()
    }
}

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
    pub async fn start(options: Options) -> Session {
        let daemon = TestDaemon::start_with(options).await;
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

#[tokio::test]
async fn threshold_compaction_keeps_the_recent_turn_and_summarizes_the_rest() {
    let mut session = Session::start(compacting_options()).await;
    session
        .converse(&sized("U1"), FauxReply::text(sized("A1")))
        .await;
    // The second answer reports a context past the threshold; the summary answers next.
    session
        .daemon
        .faux
        .push(FauxReply::text(sized("A2")).with_usage(over_threshold()));
    session
        .daemon
        .faux
        .push(FauxReply::text("## Goal\nShip it."));
    session.prompt(&sized("U2")).await;
    let events = session.events_until("compaction_end").await;
    let kinds: Vec<String> = events.iter().map(kind).collect();
    let tail = &kinds[kinds.len() - 4..];
    assert_eq!(
        tail,
        [
            "agent_end",
            "compaction_start",
            "entry_added",
            "compaction_end"
        ]
    );
    assert!(
        events.windows(2).all(|pair| pair[1].seq == pair[0].seq + 1),
        "every event has the next seq"
    );
    let u2 = session.entry_id("U2").await;
    let SessionEvent::CompactionEnd {
        reason,
        result: Some(result),
        aborted,
        will_retry,
        error_message,
    } = compaction_end(&events)
    else {
        panic!("the compaction succeeded");
    };
    assert_eq!(reason, CompactionReason::Threshold);
    assert!(!aborted && !will_retry && error_message.is_none());
    assert_eq!(result.summary, "## Goal\nShip it.");
    assert_eq!(result.first_kept_entry_id, u2);
    assert_eq!(result.tokens_before, 190_000, "the last real usage");
    assert_eq!(
        result.details,
        Some(serde_json::json!({"readFiles": [], "modifiedFiles": []}))
    );

    // The summarization request follows pi: its system prompt, one user message, 0.8 × the
    // reserve as output cap, high reasoning on a reasoning model.
    let requests = session.daemon.faux.requests();
    let summarization = &requests[2];
    assert_eq!(summarization.max_tokens, Some(13_107));
    assert_eq!(summarization.thinking, ThinkingLevel::High);
    insta::assert_snapshot!("threshold_summary_request", summary_prompt(summarization));

    // The compaction entry is stored with pi's fields.
    let branch = session.branch().await;
    let Some(SessionEntry::Compaction {
        first_kept_entry_id,
        tokens_before,
        from_hook,
        ..
    }) = branch.last()
    else {
        panic!("the branch ends with the compaction");
    };
    assert_eq!((first_kept_entry_id, *tokens_before), (&u2, 190_000));
    assert_eq!(*from_hook, Some(false));

    // The next request holds the summary and exactly the kept messages.
    session
        .converse(&sized("U3"), FauxReply::text(sized("A3")))
        .await;
    let requests = session.daemon.faux.requests();
    assert_eq!(
        seen(&requests[3]),
        ["user:The", "user:U2", "assistant:A2", "user:U3"]
    );
    let Message::User(summary) = &requests[3].context.messages[0] else {
        panic!("the summary is a user message");
    };
    assert_eq!(
        user_text(&summary.content),
        "The conversation history before this point was compacted into the following \
         summary:\n\n<summary>\n## Goal\nShip it.\n</summary>"
    );

    // A second compaction updates the first summary with what followed it.
    session
        .daemon
        .faux
        .push(FauxReply::text(sized("A4")).with_usage(over_threshold()));
    session
        .daemon
        .faux
        .push(FauxReply::text("## Goal\nShip it, v2."));
    session.prompt(&sized("U4")).await;
    let events = session.events_until("compaction_end").await;
    assert!(matches!(
        compaction_end(&events),
        SessionEvent::CompactionEnd {
            result: Some(_),
            ..
        }
    ));
    let requests = session.daemon.faux.requests();
    insta::assert_snapshot!("update_summary_request", summary_prompt(&requests[5]));
    session
        .converse(&sized("U5"), FauxReply::text("done"))
        .await;
    assert_eq!(
        seen(&session.daemon.faux.requests()[6]),
        ["user:The", "user:U4", "assistant:A4", "user:U5"]
    );
    assert_eq!(session.daemon.faux.pending(), 0);
}

#[tokio::test]
async fn manual_compaction_follows_the_instructions_and_refuses_to_repeat() {
    let mut session = Session::start(compacting_options()).await;
    let id = session.id.clone();
    let compact = |instructions: Option<&str>| SessionCompactParams {
        session_id: id.clone(),
        instructions: instructions.map(str::to_owned),
    };
    // As pi, a session with nothing to summarize still asks the model, with an empty
    // conversation.
    session.daemon.faux.push(FauxReply::text("## Goal\n(none)"));
    let response = session
        .client
        .call::<SessionCompact>(&compact(None))
        .await
        .unwrap();
    assert_eq!(response.result.unwrap().summary, "## Goal\n(none)");
    let prompt = summary_prompt(&session.daemon.faux.requests()[0]);
    assert!(prompt.starts_with("<conversation>\n\n</conversation>\n\nThe messages above"));

    let again = session
        .client
        .call::<SessionCompact>(&compact(None))
        .await
        .unwrap_err();
    assert_eq!(
        again.rpc_kind(),
        Some(pi_protocol::ErrorKind::InvalidParams)
    );
    assert_eq!(again.to_string(), "Compaction failed: Already compacted");
    let ended = std::cell::Cell::new(0);
    let events = events_until(&mut session.events, &session.id, |event| {
        ended.set(ended.get() + usize::from(kind(event) == "compaction_end"));
        ended.get() == 2
    })
    .await;
    let ends: Vec<&SessionEvent> = events
        .iter()
        .filter(|event| kind(event) == "compaction_end")
        .map(|event| &event.event)
        .collect();
    assert!(matches!(
        ends.as_slice(),
        [
            SessionEvent::CompactionEnd {
                reason: CompactionReason::Manual,
                result: Some(_),
                ..
            },
            SessionEvent::CompactionEnd {
                reason: CompactionReason::Manual,
                result: None,
                error_message: Some(_),
                ..
            }
        ]
    ));

    session
        .converse(&sized("U1"), FauxReply::text(sized("A1")))
        .await;
    session
        .converse(&sized("U2"), FauxReply::text(sized("A2")))
        .await;
    session
        .daemon
        .faux
        .push(FauxReply::text("## Goal\nManual."));
    let response = session
        .client
        .call::<SessionCompact>(&compact(Some("Keep the file names.")))
        .await
        .unwrap();
    assert!(!response.aborted);
    assert_eq!(response.result.unwrap().summary, "## Goal\nManual.");
    let prompt = summary_prompt(&session.daemon.faux.requests()[3]);
    assert!(
        prompt.starts_with("<conversation>\n[User]: U1 "),
        "only the history before the kept turn: {prompt}"
    );
    assert!(prompt.contains("<previous-summary>\n## Goal\n(none)\n</previous-summary>"));
    assert!(prompt.ends_with(
        "Preserve exact file paths, function names, and error messages.\n\nAdditional focus: Keep the file names."
    ));
}

#[tokio::test]
async fn abort_stops_a_running_compaction_and_stores_nothing() {
    let mut session = Session::start(compacting_options()).await;
    session
        .converse(&sized("U1"), FauxReply::text(sized("A1")))
        .await;
    session
        .converse(&sized("U2"), FauxReply::text(sized("A2")))
        .await;
    let gate = FauxGate::new();
    session
        .daemon
        .faux
        .push(FauxReply::text("never").held_after(0, &gate));
    let client = session.client.clone();
    let id = session.id.clone();
    let compacting = tokio::spawn(async move {
        client
            .call::<SessionCompact>(&SessionCompactParams {
                session_id: id,
                instructions: None,
            })
            .await
    });
    session.events_until("compaction_start").await;
    let busy = session
        .client
        .call::<SessionPrompt>(&SessionMessageParams {
            session_id: session.id.clone(),
            text: "meanwhile".into(),
            images: vec![],
        })
        .await
        .unwrap_err();
    assert_eq!(busy.rpc_kind(), Some(pi_protocol::ErrorKind::Busy));
    session
        .client
        .call::<SessionAbort>(&SessionIdParams {
            session_id: session.id.clone(),
        })
        .await
        .unwrap();
    let response = compacting.await.unwrap().unwrap();
    assert!(response.aborted && response.result.is_none());
    let events = session.events_until("compaction_end").await;
    assert!(matches!(
        compaction_end(&events),
        SessionEvent::CompactionEnd {
            aborted: true,
            result: None,
            ..
        }
    ));
    assert!(
        !session
            .branch()
            .await
            .iter()
            .any(|entry| matches!(entry, SessionEntry::Compaction { .. }))
    );
    let info = session
        .client
        .call::<SessionGet>(&SessionIdParams {
            session_id: session.id.clone(),
        })
        .await
        .unwrap()
        .info;
    assert_eq!(info.status, SessionStatus::Idle);
    // The session works on.
    session.converse("after", FauxReply::text("fine")).await;
    let roles: Vec<&str> = session
        .branch()
        .await
        .iter()
        .filter_map(|entry| match entry {
            SessionEntry::Message {
                message: AgentMessage::User(_),
                ..
            } => Some("user"),
            _ => None,
        })
        .collect();
    assert_eq!(roles.len(), 3);
}
