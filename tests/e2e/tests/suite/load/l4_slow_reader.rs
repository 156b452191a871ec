//! L4: a client that stops reading while a long run streams. The daemon drops it once its
//! outbound queue passes the configured budget instead of buffering, so what it holds for
//! the client stays bounded (watched through `daemon/status` during the run: the queue never
//! exceeds the budget, and the connection is gone before the run ends); another client on
//! the same session gets every event in order and the run ends; and the slow client, once it
//! reads again, finds `connection/closing` with reason `slow_consumer` after what its socket
//! held, then the end of the stream.

use pi_protocol::v1::{
    DaemonStatus, DaemonStatusParams, SessionAttach, SessionAttachParams, SessionPrompt,
};
use pi_test_support::model_server::{ScriptStop, Turn};
use pi_test_support::raw::RawConnection;

use super::{Recorder, kind};
use crate::suite::harness::{World, prompt};

/// Every connection's outbound queue budget.
const QUEUE_BYTES: usize = 8 * 1024 * 1024;
/// The run: six turns of 1 MiB of text each in 4 KiB deltas, paced at one delta per
/// millisecond (4 MB/s), so that a client that reads at all keeps up with seconds to spare.
/// With each message repeated by `message_end` and `turn_end`, about 18 MiB go to each
/// client, more than twice the budget.
const TURNS: usize = 6;
const TURN_BYTES: usize = 1024 * 1024;
const DELTA_BYTES: usize = 4096;

/// What `daemon/status` showed of the slow client while the run streamed.
#[derive(Debug, Default)]
struct Watched {
    /// The most bytes its queue held.
    most_queued: u64,
    /// Polls that found it connected, and then not any more.
    seen: usize,
    gone: bool,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_is_dropped_without_slowing_the_others() {
    let config = format!("[limits]\noutbound_queue_bytes = {QUEUE_BYTES}\n");
    let world = World::start_with_config("anthropic-messages", &config, &[]).await;
    let (fast, notifications) = world.client().await;
    let mut recorder = Recorder::start(notifications);
    let session = world.attached_session(&fast).await;

    // The slow client attaches and then never reads until the run is over.
    let mut slow = RawConnection::initialized(&world.daemon.paths.socket_path()).await;
    slow.send(&serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "session/attach",
        "params": {"sessionId": session.id}
    }))
    .await;
    // The fast client's own attach confirms the slow one is subscribed too: attaches are
    // served in order by the session.
    fast.call::<SessionAttach>(&SessionAttachParams {
        session_id: session.id.clone(),
        after_seq: None,
    })
    .await
    .unwrap();
    // Watch the slow client's queue from a third connection while the run streams.
    let (watcher, _watcher_notifications) = world.client().await;
    let watching = tokio::spawn(async move {
        let mut watched = Watched::default();
        loop {
            let status = watcher
                .call::<DaemonStatus>(&DaemonStatusParams {})
                .await
                .unwrap();
            match status.clients.iter().find(|client| client.client == "raw") {
                Some(slow) => {
                    watched.seen += 1;
                    watched.most_queued = watched.most_queued.max(slow.queued_bytes);
                }
                None if watched.seen > 0 => {
                    watched.gone = true;
                    return watched;
                }
                None => {}
            }
            // Polling: `daemon/status` is how an operator watches queues too.
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    });

    for turn in 0..TURNS {
        let reply = Turn::reply()
            .text("x".repeat(TURN_BYTES))
            .delta_chars(DELTA_BYTES)
            .delay_each(std::time::Duration::from_millis(1));
        world.server.push(if turn + 1 < TURNS {
            reply
                .tool_call(
                    format!("call_{turn}"),
                    "ls",
                    serde_json::json!({"path": "."}),
                )
                .stop(ScriptStop::ToolUse)
        } else {
            reply
        });
    }
    fast.call::<SessionPrompt>(&prompt(&session.id, "a long answer, please"))
        .await
        .unwrap();
    let watched = watching.await.unwrap();
    // The slow client was dropped while the run still streamed, never holding more than the
    // budget.
    assert!(
        !recorder
            .events()
            .iter()
            .any(|event| kind(event) == "agent_end"),
        "the slow client should be gone before the run ends"
    );
    assert!(watched.gone, "{watched:?}");
    assert!(watched.most_queued <= QUEUE_BYTES as u64, "{watched:?}");
    recorder
        .wait_for("the run's end", |events| {
            events.iter().any(|event| kind(event) == "agent_end")
        })
        .await;

    // The fast client got every event of the run, in order, without a gap.
    let events = recorder.events();
    let seqs: Vec<u64> = events.iter().map(|event| event.seq).collect();
    let first = seqs[0];
    assert_eq!(seqs, (first..first + seqs.len() as u64).collect::<Vec<_>>());
    let deltas = events
        .iter()
        .filter(|event| kind(event) == "message_update")
        .count();
    assert!(
        deltas >= TURNS * TURN_BYTES / DELTA_BYTES,
        "{deltas} deltas"
    );

    // The slow client reads what its socket holds, then the reason, then the end.
    let mut last = None;
    let mut read = 0;
    while let Some(message) = slow.read().await {
        read += 1;
        last = Some(message);
    }
    let last = last.expect("the slow client read something");
    assert_eq!(last["method"], "connection/closing", "{last}");
    assert_eq!(last["params"]["reason"], "slow_consumer", "{last}");
    assert!(
        last["params"]["message"]
            .as_str()
            .unwrap()
            .contains("afterSeq"),
        "{last}"
    );
    assert!(
        read < deltas,
        "the slow client got {read} messages, fewer than the {deltas} deltas"
    );
    world.server.assert_done(TURNS);
}
