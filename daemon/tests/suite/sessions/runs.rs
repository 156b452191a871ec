//! Runs through the daemon: parallel tools, steering, follow-ups, abort, panics, unloading,
//! and recovery of a run a crash interrupted.

use std::sync::Arc;
use std::time::Duration;

use pi_llm::faux::{FauxGate, FauxReply};
use pi_llm::{AssistantStream, Context, Model, Provider, StreamOptions};
use pi_protocol::v1::message::{AgentMessage, StopReason, UserContent};
use pi_protocol::v1::*;

use super::harness::{Options, TestDaemon, events_until, kind, run_events};

fn prompt(session_id: &str, text: &str) -> SessionMessageParams {
    SessionMessageParams {
        session_id: session_id.to_owned(),
        text: text.to_owned(),
        images: vec![],
    }
}

async fn branch_messages(client: &pi_client::Client, session_id: &str) -> Vec<AgentMessage> {
    let read = client
        .call::<SessionRead>(&SessionReadParams {
            session_id: session_id.to_owned(),
            scope: ReadScope::Branch,
            limit: None,
            cursor: None,
        })
        .await
        .unwrap();
    read.entries
        .into_iter()
        .filter_map(|record| match record.entry {
            SessionEntry::Message { message, .. } => Some(message),
            _ => None,
        })
        .collect()
}

fn roles(messages: &[AgentMessage]) -> Vec<String> {
    messages
        .iter()
        .map(|message| match message {
            AgentMessage::User(_) => "user".to_owned(),
            AgentMessage::Assistant(a) => format!(
                "assistant:{}",
                serde_json::to_value(a.stop_reason)
                    .unwrap()
                    .as_str()
                    .unwrap()
            ),
            AgentMessage::ToolResult(r) => {
                format!("toolResult:{}", if r.is_error { "error" } else { "ok" })
            }
            _ => "other".to_owned(),
        })
        .collect()
}

fn result_text(message: &AgentMessage) -> String {
    match message {
        AgentMessage::ToolResult(result) => result
            .content
            .iter()
            .filter_map(|c| match c {
                UserContent::Text(t) => Some(t.text.clone()),
                UserContent::Image(_) => None,
            })
            .collect(),
        _ => String::new(),
    }
}

#[tokio::test]
async fn parallel_tool_calls_over_several_turns_keep_call_order() {
    let daemon = TestDaemon::start().await;
    let (client, mut events) = daemon.client().await;
    let session = daemon.create_session(&client).await;
    client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: session.id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    daemon.faux.push(
        FauxReply::tool_call("block", serde_json::json!({"key": "a"}))
            .then_tool_call("block", serde_json::json!({"key": "b"}))
            .then_tool_call("block", serde_json::json!({"key": "c"})),
    );
    daemon.faux.push(FauxReply::tool_call(
        "block",
        serde_json::json!({"key": "d"}),
    ));
    daemon.faux.push(FauxReply::text("all done"));
    client
        .call::<SessionPrompt>(&prompt(&session.id, "go"))
        .await
        .unwrap();
    daemon.block.wait_started(3).await;
    for key in ["c", "a", "b", "d"] {
        daemon.block.release(key);
    }
    run_events(&mut events, &session.id).await;
    let messages = branch_messages(&client, &session.id).await;
    assert_eq!(
        roles(&messages),
        [
            "user",
            "assistant:toolUse",
            "toolResult:ok",
            "toolResult:ok",
            "toolResult:ok",
            "assistant:toolUse",
            "toolResult:ok",
            "assistant:stop"
        ]
    );
    assert_eq!(
        messages[2..5].iter().map(result_text).collect::<Vec<_>>(),
        ["released a", "released b", "released c"]
    );
    // The model's second request carried the three results in call order.
    let requests = daemon.faux.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[1].context.messages.len(), 5);
    assert_eq!(requests[2].context.messages.len(), 7);
}

#[tokio::test]
async fn steering_mid_tool_skips_the_rest_and_follow_ups_run_after() {
    let mut options = Options::default();
    options.settings.tool_execution = pi_agent::ToolExecution::Sequential;
    let daemon = TestDaemon::start_with(options).await;
    let (client, mut events) = daemon.client().await;
    let session = daemon.create_session(&client).await;
    client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: session.id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    daemon.faux.push(
        FauxReply::tool_call("block", serde_json::json!({"key": "s1"}))
            .then_tool_call("block", serde_json::json!({"key": "s2"})),
    );
    daemon.faux.push(FauxReply::text("steered"));
    daemon.faux.push(FauxReply::text("followed up"));
    client
        .call::<SessionPrompt>(&prompt(&session.id, "go"))
        .await
        .unwrap();
    daemon.block.wait_started(1).await;
    client
        .call::<SessionSteer>(&prompt(&session.id, "change course"))
        .await
        .unwrap();
    client
        .call::<SessionFollowUp>(&prompt(&session.id, "and then this"))
        .await
        .unwrap();
    let queued = events_until(
        &mut events,
        &session.id,
        |e| matches!(&e.event, SessionEvent::QueueUpdate { follow_up, .. } if follow_up.len() == 1),
    )
    .await;
    assert!(
        matches!(&queued.last().unwrap().event, SessionEvent::QueueUpdate { steering, .. } if steering == &["change course".to_owned()])
    );
    daemon.block.release("s1");
    run_events(&mut events, &session.id).await;
    let messages = branch_messages(&client, &session.id).await;
    assert_eq!(
        roles(&messages),
        [
            "user",
            "assistant:toolUse",
            "toolResult:ok",
            "toolResult:error",
            "user",
            "assistant:stop",
            "user",
            "assistant:stop"
        ]
    );
    assert_eq!(result_text(&messages[3]), pi_agent::SKIPPED_FOR_STEERING);
}

#[tokio::test]
async fn abort_mid_stream_and_mid_tool_leave_a_consistent_tree() {
    let daemon = TestDaemon::start().await;
    let (client, mut events) = daemon.client().await;
    let session = daemon.create_session(&client).await;
    let id = session.id.clone();
    client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();

    let gate = FauxGate::new();
    daemon.faux.push(
        FauxReply::text("partial ")
            .then_text("never")
            .held_after(1, &gate),
    );
    client
        .call::<SessionPrompt>(&prompt(&id, "stream"))
        .await
        .unwrap();
    events_until(&mut events, &id, |e| {
        matches!(
            &e.event,
            SessionEvent::MessageUpdate {
                assistant_message_event: message::AssistantMessageEvent::TextEnd { .. }
            }
        )
    })
    .await;
    client
        .call::<SessionAbort>(&SessionIdParams {
            session_id: id.clone(),
        })
        .await
        .unwrap();
    let info = client
        .call::<SessionGet>(&SessionIdParams {
            session_id: id.clone(),
        })
        .await
        .unwrap()
        .info;
    assert_eq!(info.status, SessionStatus::Idle, "abort returns once idle");
    run_events(&mut events, &id).await;

    daemon.faux.push(FauxReply::tool_call(
        "block",
        serde_json::json!({"key": "never"}),
    ));
    client
        .call::<SessionPrompt>(&prompt(&id, "tool"))
        .await
        .unwrap();
    daemon.block.wait_started(1).await;
    client
        .call::<SessionAbort>(&SessionIdParams {
            session_id: id.clone(),
        })
        .await
        .unwrap();
    run_events(&mut events, &id).await;

    let messages = branch_messages(&client, &id).await;
    assert_eq!(
        roles(&messages),
        [
            "user",
            "assistant:aborted",
            "user",
            "assistant:toolUse",
            "toolResult:error",
            "assistant:aborted"
        ]
    );
    let AgentMessage::Assistant(aborted) = &messages[1] else {
        unreachable!()
    };
    assert_eq!(aborted.stop_reason, StopReason::Aborted);
    assert_eq!(
        serde_json::to_value(&aborted.content).unwrap()[0]["text"],
        "partial "
    );
    assert_eq!(result_text(&messages[4]), "Operation aborted");
}

/// A provider whose stream panics inside the run task.
struct PanickingProvider;

impl Provider for PanickingProvider {
    fn stream(
        &self,
        _model: &Model,
        _context: &Context,
        _options: StreamOptions,
    ) -> AssistantStream {
        panic!("the provider exploded");
    }
}

#[tokio::test]
async fn a_panicking_run_ends_with_an_error_event_and_the_session_stays_usable() {
    let options = Options {
        provider: Some(Arc::new(PanickingProvider)),
        ..Options::default()
    };
    let daemon = TestDaemon::start_with(options).await;
    let (client, mut events) = daemon.client().await;
    let session = daemon.create_session(&client).await;
    client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: session.id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    client
        .call::<SessionPrompt>(&prompt(&session.id, "boom"))
        .await
        .unwrap();
    let seen = events_until(&mut events, &session.id, |e| kind(e) == "session_error").await;
    let SessionEvent::SessionError { message } = &seen.last().unwrap().event else {
        unreachable!()
    };
    assert!(message.contains("internal error"), "{message}");
    // The session and the daemon carry on.
    let info = client
        .call::<SessionGet>(&SessionIdParams {
            session_id: session.id.clone(),
        })
        .await
        .unwrap()
        .info;
    assert_eq!(info.status, SessionStatus::Idle);
    let other = daemon.create_session(&client).await;
    assert_ne!(other.id, session.id);
}

#[tokio::test]
async fn idle_sessions_unload_and_reload_lazily() {
    let mut options = Options::default();
    options.settings.idle_unload = Duration::from_millis(50);
    let daemon = TestDaemon::start_with(options).await;
    let (client, _events) = daemon.client().await;
    let session = daemon.create_session(&client).await;
    daemon.faux.push(FauxReply::text("first"));
    client
        .call::<SessionPrompt>(&prompt(&session.id, "one"))
        .await
        .unwrap();
    assert_eq!(daemon.state.sessions.loaded_count(), 1);
    daemon.wait_until_unloaded().await;
    let stored = client
        .call::<SessionGet>(&SessionIdParams {
            session_id: session.id.clone(),
        })
        .await
        .unwrap();
    assert_eq!(stored.info.message_count, 2, "reloaded with its history");
    daemon.faux.push(FauxReply::text("second"));
    client
        .call::<SessionPrompt>(&prompt(&session.id, "two"))
        .await
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while daemon.faux.requests().len() < 2 {
        assert!(std::time::Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        daemon.faux.requests()[1].context.messages.len(),
        3,
        "the reloaded context has the first exchange"
    );
}

#[tokio::test]
async fn a_run_interrupted_by_a_crash_is_closed_at_the_next_start() {
    let daemon = TestDaemon::start().await;
    let (client, mut events) = daemon.client().await;
    let session = daemon.create_session(&client).await;
    client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: session.id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    daemon.faux.push(FauxReply::tool_call(
        "block",
        serde_json::json!({"key": "crash"}),
    ));
    client
        .call::<SessionPrompt>(&prompt(&session.id, "go"))
        .await
        .unwrap();
    daemon.block.wait_started(1).await;
    events_until(&mut events, &session.id, |e| {
        kind(e) == "tool_execution_start"
    })
    .await;
    // Simulate a crash: copy the database as it is mid-run and start a new daemon on the copy.
    let paths = daemon.state.paths.clone();
    let crashed = tempfile::Builder::new()
        .prefix("pi-crash-")
        .tempdir()
        .unwrap();
    let crashed_paths = pi_test_support::daemon::paths_for(crashed.path());
    std::fs::create_dir_all(&crashed_paths.data_dir).unwrap();
    let snapshot = daemon.state.store.clone();
    snapshot
        .backup_to(&crashed_paths.database_path())
        .await
        .unwrap();
    drop(paths);

    let restarted = TestDaemon::start_in(
        crashed,
        Options::default(),
        pi_llm::faux::FauxProvider::new(),
    )
    .await;
    let (client, _events) = restarted.client().await;
    let messages = branch_messages(&client, &session.id).await;
    assert_eq!(
        roles(&messages),
        [
            "user",
            "assistant:toolUse",
            "toolResult:error",
            "assistant:aborted"
        ]
    );
    assert_eq!(
        result_text(&messages[2]),
        pi_daemon::session::recovery::INTERRUPTED_TOOL
    );
    let info = client
        .call::<SessionGet>(&SessionIdParams {
            session_id: session.id.clone(),
        })
        .await
        .unwrap()
        .info;
    assert_eq!(info.status, SessionStatus::Idle);
    // A new prompt continues from the repaired context.
    restarted.faux.push(FauxReply::text("continuing"));
    client
        .call::<SessionPrompt>(&prompt(&session.id, "again"))
        .await
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while restarted.faux.requests().is_empty() {
        assert!(std::time::Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(restarted.faux.requests()[0].context.messages.len(), 5);
    daemon.block.release("crash");
}
