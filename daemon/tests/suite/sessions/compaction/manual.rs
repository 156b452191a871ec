//! `session/compact` and `session/abort`: instructions, pi's empty-conversation quirk,
//! `Already compacted`, abort of a running compaction.

use pi_llm::faux::{FauxGate, FauxReply};
use pi_protocol::v1::message::AgentMessage;
use pi_protocol::v1::*;

use super::support::*;
use crate::suite::sessions::harness::Options;
use crate::suite::sessions::harness::{events_until, kind};

#[tokio::test]
async fn manual_compaction_follows_the_instructions_and_refuses_to_repeat() {
    let mut session = Session::start(Options::default(), KEEP_LAST_TURN).await;
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
    let mut session = Session::start(Options::default(), KEEP_LAST_TURN).await;
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
