//! Several clients on one session: identical streams, mid-stream attach, replay after a
//! reconnect, slow clients cut off without slowing the others.

use std::time::Duration;

use pi_llm::faux::{FauxGate, FauxReply};
use pi_protocol::v1::message::AssistantContent;
use pi_protocol::v1::*;
use pi_test_support::raw::RawConnection;

use super::harness::{Options, TestDaemon, events_until, kind, run_events};

fn attach(session_id: &str, after_seq: Option<u64>) -> SessionAttachParams {
    SessionAttachParams {
        session_id: session_id.to_owned(),
        after_seq,
    }
}

fn prompt(session_id: &str, text: &str) -> SessionMessageParams {
    SessionMessageParams {
        session_id: session_id.to_owned(),
        text: text.to_owned(),
        images: vec![],
    }
}

#[tokio::test]
async fn attached_clients_see_identical_sequences_including_each_others_prompts() {
    let daemon = TestDaemon::start().await;
    let (alice, mut alice_events) = daemon.client().await;
    let (bob, mut bob_events) = daemon.client().await;
    let session = daemon.create_session(&alice).await;
    alice
        .call::<SessionAttach>(&attach(&session.id, None))
        .await
        .unwrap();
    let snapshot = bob
        .call::<SessionAttach>(&attach(&session.id, None))
        .await
        .unwrap()
        .snapshot;
    assert_eq!(snapshot.attached_clients, 2);

    daemon
        .faux
        .push(FauxReply::text("one").then_tool_call("block", serde_json::json!({"key": "x"})));
    daemon.faux.push(FauxReply::text("two"));
    daemon.block.release("x");
    alice
        .call::<SessionPrompt>(&prompt(&session.id, "from alice"))
        .await
        .unwrap();
    let seen_by_alice = run_events(&mut alice_events, &session.id).await;
    let seen_by_bob = run_events(&mut bob_events, &session.id).await;
    assert_eq!(seen_by_alice, seen_by_bob);
    // Bob saw Alice's prompt as it happened.
    let user_start = seen_by_bob.iter().find_map(|e| match &e.event {
        SessionEvent::MessageStart {
            message: message::AgentMessage::User(user),
        } => Some(user.content.clone()),
        _ => None,
    });
    assert_eq!(
        user_start,
        Some(vec![message::UserContent::Text(message::TextContent {
            text: "from alice".into(),
            text_signature: None
        })])
    );
}

#[tokio::test]
async fn a_client_attaching_mid_stream_gets_the_partial_then_the_rest() {
    let daemon = TestDaemon::start().await;
    let (alice, mut alice_events) = daemon.client().await;
    let session = daemon.create_session(&alice).await;
    alice
        .call::<SessionAttach>(&attach(&session.id, None))
        .await
        .unwrap();
    let gate = FauxGate::new();
    daemon.faux.push(
        FauxReply::text("first part ")
            .then_text("second part")
            .held_after(1, &gate),
    );
    alice
        .call::<SessionPrompt>(&prompt(&session.id, "go"))
        .await
        .unwrap();
    events_until(&mut alice_events, &session.id, |e| {
        matches!(
            &e.event,
            SessionEvent::MessageUpdate {
                assistant_message_event: message::AssistantMessageEvent::TextEnd { .. }
            }
        )
    })
    .await;

    let (carol, mut carol_events) = daemon.client().await;
    let attached = carol
        .call::<SessionAttach>(&attach(&session.id, None))
        .await
        .unwrap();
    let mut partial = attached
        .snapshot
        .streaming_message
        .expect("a message is streaming");
    assert_eq!(partial.content.len(), 1);
    assert_eq!(attached.snapshot.info.status, SessionStatus::Running);
    gate.release();
    let rest = run_events(&mut carol_events, &session.id).await;
    assert_eq!(
        rest[0].seq,
        attached.snapshot.info.last_seq + 1,
        "no gap after the snapshot"
    );
    // Rebuild the partial from the deltas and compare with the final message.
    let mut final_message = None;
    for event in &rest {
        match &event.event {
            SessionEvent::MessageUpdate {
                assistant_message_event,
            } => apply(&mut partial, assistant_message_event),
            SessionEvent::MessageEnd {
                message: message::AgentMessage::Assistant(message),
                ..
            } => final_message = Some(message.clone()),
            _ => {}
        }
    }
    let final_message = final_message.unwrap();
    assert_eq!(partial.content, final_message.content);
}

fn apply(partial: &mut message::AssistantMessage, event: &message::AssistantMessageEvent) {
    use message::AssistantMessageEvent as E;
    match event {
        E::TextStart { .. } => partial
            .content
            .push(AssistantContent::Text(message::TextContent {
                text: String::new(),
                text_signature: None,
            })),
        E::TextDelta {
            content_index,
            delta,
        } => {
            if let Some(AssistantContent::Text(text)) = partial.content.get_mut(*content_index) {
                text.text.push_str(delta);
            }
        }
        _ => {}
    }
}

#[tokio::test]
async fn reconnecting_with_after_seq_replays_every_missed_event() {
    let daemon = TestDaemon::start().await;
    let (alice, mut alice_events) = daemon.client().await;
    let (bob, mut bob_events) = daemon.client().await;
    let session = daemon.create_session(&alice).await;
    alice
        .call::<SessionAttach>(&attach(&session.id, None))
        .await
        .unwrap();
    bob.call::<SessionAttach>(&attach(&session.id, None))
        .await
        .unwrap();
    daemon.faux.push(FauxReply::tool_call(
        "block",
        serde_json::json!({"key": "r"}),
    ));
    daemon.faux.push(FauxReply::text("after the tool"));
    alice
        .call::<SessionPrompt>(&prompt(&session.id, "go"))
        .await
        .unwrap();
    // Alice sees the user message stored, then drops off.
    let before = events_until(&mut alice_events, &session.id, |e| {
        matches!(
            &e.event,
            SessionEvent::MessageEnd {
                entry_id: Some(_),
                ..
            }
        )
    })
    .await;
    let last_seen = before.last().unwrap().seq;
    alice.close().await;
    daemon.block.release("r");
    let bob_saw = run_events(&mut bob_events, &session.id).await;

    let (alice, _alice_events) = daemon.client().await;
    let attached = alice
        .call::<SessionAttach>(&attach(&session.id, Some(last_seen)))
        .await
        .unwrap();
    // The session still remembers everything Alice missed: the replay is what Bob saw
    // after her cursor, streaming deltas included.
    let expected: Vec<SessionEventParams> =
        bob_saw.into_iter().filter(|e| e.seq > last_seen).collect();
    assert!(attached.gapless);
    assert_eq!(attached.replay, expected);
    let durable = expected
        .iter()
        .filter(|e| {
            matches!(
                &e.event,
                SessionEvent::MessageEnd {
                    entry_id: Some(_),
                    ..
                } | SessionEvent::EntryAdded { .. }
            )
        })
        .count();
    assert_eq!(durable, 3, "assistant, tool result, assistant");
    assert!(expected.len() > durable, "live events are replayed too");
    assert_eq!(
        attached.snapshot.info.last_seq,
        bob.call::<SessionGet>(&SessionIdParams {
            session_id: session.id.clone()
        })
        .await
        .unwrap()
        .info
        .last_seq
    );

    // A cursor from the future (a restarted daemon's client) needs a resync.
    let error = alice
        .call::<SessionAttach>(&attach(
            &session.id,
            Some(attached.snapshot.info.last_seq + 100),
        ))
        .await
        .unwrap_err();
    assert_eq!(
        error.rpc_kind(),
        Some(pi_protocol::ErrorKind::ResyncRequired)
    );
    assert!(
        error.to_string().contains("attach without `afterSeq`"),
        "{error}"
    );
}

/// A session that unloaded (or a restarted daemon) no longer remembers live events: the
/// replay holds the durable ones, and says so.
#[tokio::test]
async fn after_an_unload_only_durable_events_are_replayed() {
    let mut options = Options::default();
    options.settings.idle_unload = Duration::from_millis(50);
    let daemon = TestDaemon::start_with(options).await;
    let (client, mut events) = daemon.client().await;
    let session = daemon.create_session(&client).await;
    client
        .call::<SessionAttach>(&attach(&session.id, None))
        .await
        .unwrap();
    daemon.faux.push(FauxReply::text("the reply"));
    client
        .call::<SessionPrompt>(&prompt(&session.id, "go"))
        .await
        .unwrap();
    let seen = run_events(&mut events, &session.id).await;
    client.close().await;
    daemon.wait_until_unloaded().await;
    let (client, _events) = daemon.client().await;
    let attached = client
        .call::<SessionAttach>(&attach(&session.id, Some(0)))
        .await
        .unwrap();
    assert!(!attached.gapless);
    let durable: Vec<SessionEventParams> = seen
        .into_iter()
        .filter(|e| {
            matches!(
                &e.event,
                SessionEvent::MessageEnd {
                    entry_id: Some(_),
                    ..
                } | SessionEvent::EntryAdded { .. }
            )
        })
        .collect();
    let replayed_seqs: Vec<u64> = attached.replay.iter().map(|e| e.seq).collect();
    let durable_seqs: Vec<u64> = durable.iter().map(|e| e.seq).collect();
    assert!(
        replayed_seqs.ends_with(&durable_seqs),
        "{replayed_seqs:?} ends with the run's durable events {durable_seqs:?}"
    );
}

/// A session nobody watches keeps its recent events for a while, so a client that comes back
/// soon catches up gaplessly; then it gives their memory back, and a client that comes back
/// later gets the durable events, and is told so.
#[tokio::test]
async fn an_unwatched_session_forgets_its_recent_events_after_a_while() {
    let mut options = Options::default();
    options.settings.recent_kept_while_idle = Duration::from_secs(3);
    let daemon = TestDaemon::start_with(options).await;
    let (client, mut events) = daemon.client().await;
    let session = daemon.create_session(&client).await;
    let attached = client
        .call::<SessionAttach>(&attach(&session.id, None))
        .await
        .unwrap();
    let before_run = attached.snapshot.info.last_seq;
    daemon.faux.push(FauxReply::text("the reply"));
    client
        .call::<SessionPrompt>(&prompt(&session.id, "go"))
        .await
        .unwrap();
    run_events(&mut events, &session.id).await;
    client.close().await;
    let reattach = || async {
        let (client, _events) = daemon.client().await;
        let attached = client
            .call::<SessionAttach>(&attach(&session.id, Some(before_run)))
            .await
            .unwrap();
        client.close().await;
        attached
    };
    assert!(reattach().await.gapless, "a quick reconnect is gapless");
    // Longer than the session keeps them once nobody watches.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let later = reattach().await;
    assert!(!later.gapless, "the events were kept");
    assert!(
        later.replay.iter().all(|event| matches!(
            &event.event,
            SessionEvent::MessageEnd {
                entry_id: Some(_),
                ..
            } | SessionEvent::EntryAdded { .. }
        )),
        "only durable events: {:?}",
        later.replay
    );
    assert!(!later.replay.is_empty());
}

/// A fresh session's first events are its creation entries, numbered before its actor
/// broadcast anything: a cursor at 0 or 1 gets them from the store and the rest from the
/// recent window, gapless. So does a fork, whose entries are all its history.
#[tokio::test]
async fn a_fresh_session_replays_from_its_first_seq_gapless() {
    let daemon = TestDaemon::start().await;
    let (client, mut events) = daemon.client().await;
    let session = daemon.create_session(&client).await;
    let created = session.last_seq;
    assert!(created >= 2, "thinking level and model entries: {created}");
    client
        .call::<SessionAttach>(&attach(&session.id, None))
        .await
        .unwrap();
    daemon.faux.push(FauxReply::text("one"));
    client
        .call::<SessionPrompt>(&prompt(&session.id, "first"))
        .await
        .unwrap();
    let mut seen = run_events(&mut events, &session.id).await;
    daemon.faux.push(FauxReply::text("two"));
    client
        .call::<SessionPrompt>(&prompt(&session.id, "second"))
        .await
        .unwrap();
    seen.extend(run_events(&mut events, &session.id).await);
    assert_eq!(seen[0].seq, created + 1);

    for after in [0, 1] {
        let (other, _other_events) = daemon.client().await;
        let attached = other
            .call::<SessionAttach>(&attach(&session.id, Some(after)))
            .await
            .unwrap();
        assert!(attached.gapless, "afterSeq {after}");
        let seqs: Vec<u64> = attached.replay.iter().map(|event| event.seq).collect();
        let expected: Vec<u64> = (after + 1..=attached.snapshot.info.last_seq).collect();
        assert_eq!(seqs, expected, "afterSeq {after}: every event, in order");
        // The creation entries, then exactly what the attached client saw.
        let (stored, live) = attached.replay.split_at((created - after) as usize);
        assert!(
            stored
                .iter()
                .all(|event| matches!(event.event, SessionEvent::EntryAdded { .. })),
            "{stored:?}"
        );
        assert_eq!(live, seen.as_slice());
    }

    // A fork of the second prompt holds the first run: all stored, all replayed.
    let second_prompt = seen
        .iter()
        .filter_map(|event| match &event.event {
            SessionEvent::MessageEnd {
                message: message::AgentMessage::User(_),
                entry_id: Some(id),
            } => Some(id.clone()),
            _ => None,
        })
        .nth(1)
        .unwrap();
    let fork = client
        .call::<SessionFork>(&SessionEntryParams {
            session_id: session.id.clone(),
            entry_id: second_prompt,
        })
        .await
        .unwrap();
    let attached = client
        .call::<SessionAttach>(&attach(&fork.session.id, Some(0)))
        .await
        .unwrap();
    assert!(attached.gapless);
    let seqs: Vec<u64> = attached.replay.iter().map(|event| event.seq).collect();
    let expected: Vec<u64> = (1..=attached.snapshot.info.last_seq).collect();
    assert_eq!(seqs, expected);
}

#[tokio::test]
async fn a_too_old_cursor_needs_a_resync() {
    let mut options = Options::default();
    options.settings.replay_limit = 2;
    options.settings.idle_unload = Duration::from_millis(50);
    let daemon = TestDaemon::start_with(options).await;
    let (client, mut events) = daemon.client().await;
    let session = daemon.create_session(&client).await;
    client
        .call::<SessionAttach>(&attach(&session.id, None))
        .await
        .unwrap();
    daemon.faux.push(FauxReply::text("a"));
    client
        .call::<SessionPrompt>(&prompt(&session.id, "go"))
        .await
        .unwrap();
    run_events(&mut events, &session.id).await;
    // Unloaded, the session replays from the store alone, where more than 2 events wait.
    client.close().await;
    daemon.wait_until_unloaded().await;
    let (client, _events) = daemon.client().await;
    let error = client
        .call::<SessionAttach>(&attach(&session.id, Some(0)))
        .await
        .unwrap_err();
    assert_eq!(
        error.rpc_kind(),
        Some(pi_protocol::ErrorKind::ResyncRequired)
    );
    assert!(
        error
            .to_string()
            .contains("more than 2 events happened after seq 0"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_client_is_disconnected_while_the_others_keep_going() {
    let mut options = Options::default();
    options.config.limits.outbound_queue_bytes = 1024 * 1024;
    let daemon = TestDaemon::start_with(options).await;
    let (fast, mut fast_events) = daemon.client().await;
    let session = daemon.create_session(&fast).await;
    fast.call::<SessionAttach>(&attach(&session.id, None))
        .await
        .unwrap();

    // The slow client attaches and then never reads again.
    let mut slow = RawConnection::initialized(&daemon.state.paths.socket_path()).await;
    slow.send(&serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "session/attach", "params": {"sessionId": session.id}})).await;
    // Ten turns of a model streaming about 10 MB/s, each ending in a tool call: far more than
    // the slow client's socket buffer and 1 MiB budget, easily read by an attentive client.
    let block = "x".repeat(10_000);
    for turn in 0..10 {
        let mut reply = FauxReply::text(block.clone()).paced(Duration::from_millis(1));
        for _ in 0..20 {
            reply = reply.then_text(block.clone());
        }
        daemon
            .faux
            .push(reply.then_tool_call("block", serde_json::json!({"key": format!("t{turn}")})));
        daemon.block.release(&format!("t{turn}"));
    }
    daemon.faux.push(FauxReply::text("done"));
    fast.call::<SessionPrompt>(&prompt(&session.id, "flood"))
        .await
        .unwrap();
    let seen = run_events(&mut fast_events, &session.id).await;
    assert!(
        seen.len() > 400,
        "the fast client got every event ({})",
        seen.len()
    );
    for pair in seen.windows(2) {
        assert_eq!(pair[1].seq, pair[0].seq + 1, "no gap for the fast client");
    }
    // The slow connection was closed: reading drains what was buffered, then ends.
    let drained = tokio::time::timeout(Duration::from_secs(30), async {
        let mut count = 0;
        while slow.read().await.is_some() {
            count += 1;
        }
        count
    })
    .await
    .expect("the slow connection is closed");
    assert!(
        drained < seen.len(),
        "the slow client did not get everything ({drained} of {})",
        seen.len()
    );
    let status = fast
        .call::<DaemonStatus>(&DaemonStatusParams {})
        .await
        .unwrap();
    assert_eq!(status.connections, 1);
    let kinds: Vec<String> = seen.iter().map(kind).collect();
    assert_eq!(kinds.last().map(String::as_str), Some("agent_end"));
}
