//! L8: the recent windows of all sessions share one budget (`[limits] recent_bytes`). Three
//! watched sessions stream far more than it holds at once: the daemon keeps no more than the
//! budget (`daemon/status` `memory.recentEventsBytes`), a reconnect from within what is kept
//! is still gapless, and one from further back gets the stored entries and `gapless: false`
//! instead of a replay that claims to have missed nothing.

use pi_protocol::v1::{
    DaemonStatus, DaemonStatusParams, SessionAttach, SessionAttachParams, SessionPrompt,
};
use pi_test_support::model_server::Turn;

use super::{Recorder, kind};
use crate::suite::harness::{World, prompt};

/// What all windows may hold together: far less than the three runs stream.
const BUDGET: usize = 128 * 1024;
/// Each run: 96 KiB of text in 64-byte deltas (some 1,500 events, 300 KB encoded).
const TEXT_BYTES: usize = 96 * 1024;
const DELTA_BYTES: usize = 64;
const SESSIONS: usize = 3;
/// What a window keeps of its newest events however full the budget is.
const FLOOR: usize = 16 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_windows_together_stay_within_the_budget_and_replay_says_what_it_lost() {
    let config = format!("[limits]\nrecent_bytes = {BUDGET}\n");
    let world = World::start_with_config("openai-completions", &config, &[]).await;
    let mut watched = Vec::new();
    for _ in 0..SESSIONS {
        let (client, notifications) = world.client().await;
        let recorder = Recorder::start(notifications);
        let session = world.attached_session(&client).await;
        world.server.push(
            Turn::reply()
                .text("y".repeat(TEXT_BYTES))
                .delta_chars(DELTA_BYTES),
        );
        watched.push((client, recorder, session));
    }
    for (client, _, session) in &watched {
        client
            .call::<SessionPrompt>(&prompt(&session.id, "a long answer, please"))
            .await
            .unwrap();
    }
    for (_, recorder, _) in &mut watched {
        recorder
            .wait_for("the run's end", |events| {
                events.iter().any(|event| kind(event) == "agent_end")
            })
            .await;
    }

    let (observer, _observer_notifications) = world.client().await;
    let status = observer
        .call::<DaemonStatus>(&DaemonStatusParams {})
        .await
        .unwrap();
    let memory = status.memory.expect("Linux reports the daemon's memory");
    // At most the budget, and what each window keeps of its newest events (16 KiB) when the
    // budget is spent.
    let streamed: usize = watched
        .iter()
        .map(|(_, recorder, _)| recorder.events().len())
        .sum();
    assert!(streamed > 3 * TEXT_BYTES / DELTA_BYTES, "{streamed} events");
    assert!(
        memory.recent_events_bytes > 0
            && memory.recent_events_bytes <= (BUDGET + SESSIONS * FLOOR) as u64,
        "{memory:?}"
    );
    assert!(
        memory.heap_bytes.is_some_and(|heap| heap > 0),
        "pid reports its allocator's heap: {memory:?}"
    );

    // A client that saw all but the run's end catches up gaplessly on every session (a big
    // `message_end` or `turn_end` pushed the deltas out of a window that had to shrink); one
    // that saw none of the run gets the stored messages and is told it missed the rest.
    for (_, recorder, session) in &watched {
        let last_seq = recorder.events().last().unwrap().seq;
        let (late, _late_notifications) = world.client().await;
        let recent = late
            .call::<SessionAttach>(&SessionAttachParams {
                session_id: session.id.clone(),
                after_seq: Some(last_seq - 1),
            })
            .await
            .unwrap();
        assert!(recent.gapless);
        assert_eq!(
            recent
                .replay
                .iter()
                .map(|event| (event.seq, kind(event)))
                .collect::<Vec<_>>(),
            [(last_seq, "agent_end".to_owned())]
        );
    }
    let (_, recorder, session) = &watched[0];
    let first_seq = recorder.events().first().unwrap().seq;
    let (early, _early_notifications) = world.client().await;
    let old = early
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: session.id.clone(),
            after_seq: Some(first_seq - 1),
        })
        .await
        .unwrap();
    assert!(!old.gapless, "the window no longer reaches the run's start");
    let replayed: Vec<String> = old.replay.iter().map(kind).collect();
    assert!(
        replayed
            .iter()
            .filter(|kind| *kind == "message_end")
            .count()
            >= 2,
        "the stored prompt and answer: {replayed:?}"
    );
    assert!(
        !replayed.iter().any(|kind| kind == "message_update"),
        "no deltas from a window that lost some: {replayed:?}"
    );
}
