//! How compaction fits around runs: `session/compact` aborts an active run first; a follow-up
//! queued during a threshold compaction runs after it; the stored details list the files the
//! summarized turns touched.

use pi_llm::faux::{FauxGate, FauxReply};
use pi_protocol::v1::message::{AgentMessage, StopReason};
use pi_protocol::v1::*;
use serde_json::json;

use super::support::*;
use crate::suite::sessions::harness::Options;
use crate::suite::sessions::harness::kind;

#[tokio::test]
async fn manual_compaction_aborts_the_active_run_first() {
    let mut session = Session::start(Options::default(), KEEP_LAST_TURN).await;
    session
        .converse(&sized("U1"), FauxReply::text(sized("A1")))
        .await;
    session
        .daemon
        .faux
        .push(FauxReply::tool_call("block", json!({"key": "k"})));
    session
        .daemon
        .faux
        .push(FauxReply::text("## Goal\nAfter abort."));
    session.prompt(&sized("U2")).await;
    session.daemon.block.wait_started(1).await;
    let response = session
        .client
        .call::<SessionCompact>(&SessionCompactParams {
            session_id: session.id.clone(),
            instructions: None,
        })
        .await
        .unwrap();
    // The cut lands on A1 (U2 and the aborted turn are under 60 tokens): a split turn with no
    // history before it.
    assert_eq!(
        response.result.unwrap().summary,
        "No prior history.\n\n---\n\n**Turn Context (split turn):**\n\n## Goal\nAfter abort."
    );
    let events = session.events_until("compaction_end").await;
    let kinds: Vec<String> = events.iter().map(kind).collect();
    let end = kinds.iter().position(|k| k == "agent_end").unwrap();
    assert_eq!(
        kinds[end + 1],
        "compaction_start",
        "compaction after the run ended"
    );
    let aborted = session.branch().await.iter().any(|entry| {
        matches!(entry, SessionEntry::Message {
            message: AgentMessage::Assistant(assistant),
            ..
        } if assistant.stop_reason == StopReason::Aborted)
    });
    assert!(aborted, "the run ended as aborted");
}

#[tokio::test]
async fn a_follow_up_queued_during_a_threshold_compaction_runs_after_it() {
    let mut session = Session::start(Options::default(), KEEP_LAST_TURN).await;
    session
        .converse(&sized("U1"), FauxReply::text(sized("A1")))
        .await;
    let gate = FauxGate::new();
    let faux = &session.daemon.faux;
    faux.push(FauxReply::text(sized("A2")).with_usage(over_threshold()));
    faux.push(FauxReply::text("## Goal\nQueued.").held_after(0, &gate));
    faux.push(FauxReply::text("A3"));
    session.prompt(&sized("U2")).await;
    session.events_until("compaction_start").await;
    session
        .client
        .call::<SessionFollowUp>(&SessionMessageParams {
            session_id: session.id.clone(),
            text: "U3 queued".into(),
            images: vec![],
        })
        .await
        .unwrap();
    gate.release();
    let events = session.events_until("agent_end").await;
    let kinds: Vec<String> = events.iter().map(kind).collect();
    let end = kinds.iter().position(|k| k == "compaction_end").unwrap();
    assert_eq!(
        kinds[end..end + 3],
        ["compaction_end", "queue_update", "agent_start"]
    );
    let requests = session.daemon.faux.requests();
    assert_eq!(
        seen(&requests[3]),
        ["user:The", "user:U2", "assistant:A2", "user:U3"]
    );
}

#[tokio::test]
async fn compaction_details_list_the_files_the_summarized_turns_touched() {
    let mut session = Session::start(Options::default(), KEEP_LAST_TURN).await;
    let faux = &session.daemon.faux;
    faux.push(
        FauxReply::tool_call("read", json!({"path": "src/lib.rs"})).then_tool_call(
            "edit",
            json!({"path": "src/main.rs", "oldText": "a", "newText": "b"}),
        ),
    );
    faux.push(FauxReply::tool_call(
        "write",
        json!({"path": "NOTES.md", "content": "x"}),
    ));
    session
        .converse(&sized("U1"), FauxReply::text(sized("A1")))
        .await;
    session
        .daemon
        .faux
        .push(FauxReply::text(sized("A2")).with_usage(over_threshold()));
    session.daemon.faux.push(FauxReply::text("## Goal\nFiles."));
    session.prompt(&sized("U2")).await;
    let events = session.events_until("compaction_end").await;
    let SessionEvent::CompactionEnd {
        result: Some(result),
        ..
    } = compaction_end(&events)
    else {
        panic!("the compaction succeeded");
    };
    assert_eq!(
        result.details,
        Some(json!({"readFiles": ["src/lib.rs"], "modifiedFiles": ["NOTES.md", "src/main.rs"]}))
    );
    assert_eq!(
        result.summary,
        "## Goal\nFiles.\n\n<read-files>\nsrc/lib.rs\n</read-files>\n\n<modified-files>\nNOTES.md\nsrc/main.rs\n</modified-files>"
    );
}

#[tokio::test]
async fn a_failed_threshold_compaction_is_reported_and_retried_before_the_next_prompt() {
    let mut session = Session::start(Options::default(), KEEP_LAST_TURN).await;
    session
        .converse(&sized("U1"), FauxReply::text(sized("A1")))
        .await;
    let faux = &session.daemon.faux;
    faux.push(FauxReply::text(sized("A2")).with_usage(over_threshold()));
    faux.push(FauxReply::error("overloaded"));
    session.prompt(&sized("U2")).await;
    let events = session.events_until("compaction_end").await;
    assert_eq!(
        compaction_end(&events),
        SessionEvent::CompactionEnd {
            reason: CompactionReason::Threshold,
            result: None,
            aborted: false,
            will_retry: false,
            error_message: Some("Auto-compaction failed: Summarization failed: overloaded".into()),
        }
    );
    assert!(
        !session
            .branch()
            .await
            .iter()
            .any(|entry| matches!(entry, SessionEntry::Compaction { .. }))
    );

    // The next prompt checks the last answer first: it compacts, then runs.
    session.daemon.faux.push(FauxReply::text("## Goal\nLater."));
    let events = session.converse("U3 next", FauxReply::text("A3")).await;
    let kinds: Vec<String> = events.iter().map(kind).collect();
    assert_eq!(
        kinds[..4],
        [
            "compaction_start",
            "entry_added",
            "compaction_end",
            "agent_start"
        ]
    );
    assert_eq!(
        seen(&session.daemon.faux.requests()[4]),
        ["user:The", "user:U2", "assistant:A2", "user:U3"]
    );
}
