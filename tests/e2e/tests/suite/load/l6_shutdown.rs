//! L6: SIGTERM while three sessions stream. The daemon stops within its shutdown bound (runs
//! are aborted and saved, clients told why), exits 0, and after a restart each session shows
//! its interrupted turn and takes a new prompt that runs to the end.

use std::time::Duration;

use pi_protocol::v1::message::{AgentMessage, StopReason};
use pi_protocol::v1::{
    CloseReason, ConnectionClosing, SessionAttach, SessionAttachParams, SessionEntry, SessionPrompt,
};
use pi_test_support::model_server::{Gate, Turn};

use super::{Recorder, kind, read_tree};
use crate::suite::harness::{World, prompt};

const SESSIONS: usize = 3;
/// The daemon bounds a graceful shutdown at about 4.3 s (sessions 1.5 s, connections 2 s,
/// database 0.8 s; docs/install.md); this leaves room for a loaded machine, so only a hang
/// fails here.
const SHUTDOWN_BOUND: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_while_three_sessions_stream_then_resume() {
    let mut world = World::start("anthropic-messages").await;
    let gate = Gate::new();
    let mut sessions = Vec::new();
    let mut watchers = Vec::new();
    for n in 0..SESSIONS {
        let (client, mut notifications) = world.client().await;
        let session = world.attached_session(&client).await;
        world.server.push(
            Turn::reply()
                .text(format!("Reply {n} streams and never ends. ").repeat(10))
                .delta_chars(4)
                .hold_after(6, &gate),
        );
        client
            .call::<SessionPrompt>(&prompt(&session.id, "stream"))
            .await
            .unwrap();
        // Wait until this session streams before the next one starts.
        pi_test_support::events::events_until(&mut notifications, &session.id, |event| {
            kind(event) == "message_update"
        })
        .await;
        sessions.push(session);
        watchers.push((client, notifications));
    }

    world.daemon.signal(rustix::process::Signal::TERM);
    let (status, _took) = world.daemon.wait_exit(SHUTDOWN_BOUND).await;
    assert_eq!(status.code(), Some(0), "stderr:\n{}", world.daemon.stderr());
    for (_client, notifications) in &mut watchers {
        let closing = notifications
            .next_of::<ConnectionClosing>()
            .await
            .expect("told before the end")
            .unwrap();
        assert_eq!(closing.reason, CloseReason::Shutdown);
    }
    drop(watchers);
    gate.release();

    world.daemon.restart().await;
    for session in &sessions {
        let (client, notifications) = world.client().await;
        let stored = read_tree(&client, &session.id).await;
        let interrupted = stored.iter().any(|record| {
            matches!(
                &record.entry,
                SessionEntry::Message {
                    message: AgentMessage::Assistant(assistant),
                    ..
                } if assistant.stop_reason == StopReason::Aborted
            )
        });
        assert!(
            interrupted,
            "session {} shows its interrupted turn",
            session.id
        );
        let mut recorder = Recorder::start(notifications);
        client
            .call::<SessionAttach>(&SessionAttachParams {
                session_id: session.id.clone(),
                after_seq: None,
            })
            .await
            .unwrap();
        world.server.push(Turn::reply().text("Back and finished."));
        client
            .call::<SessionPrompt>(&prompt(&session.id, "go on"))
            .await
            .unwrap();
        recorder
            .wait_for("the resumed run's end", |events| {
                events.iter().any(|event| kind(event) == "agent_end")
            })
            .await;
        let events = recorder.events();
        assert!(
            events.iter().any(|event| matches!(
                &event.event,
                pi_protocol::v1::SessionEvent::MessageEnd {
                    message: AgentMessage::Assistant(reply),
                    entry_id: Some(_),
                } if reply.stop_reason == StopReason::Stop
            )),
            "session {}: {events:?}",
            session.id
        );
    }
    world.server.assert_done(SESSIONS * 2);
}
