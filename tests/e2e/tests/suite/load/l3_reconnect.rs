//! L3: a client attached to a streaming session disconnects 500 times at random points and
//! each time reconnects with `session/attach {afterSeq}` = the last seq it received. The union
//! of what it received has no gap and no duplicate `seq`, the replays are gapless, and the
//! messages rebuilt from the events (deltas included) are exactly the stored entries.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use pi_protocol::v1::message::{AgentMessage, AssistantContent, AssistantMessage};
use pi_protocol::v1::{
    SessionAttach, SessionAttachParams, SessionCreate, SessionCreateParams, SessionEntry,
    SessionEvent, SessionEventParams, SessionPrompt,
};
use pi_test_support::model_server::{RecordedRequest, ScriptStop, Turn};

use super::{WAIT, read_tree};
use crate::suite::harness::{MODEL, World, prompt};

const DISCONNECTS: usize = 500;

/// Tool turns with streamed text for as long as `keep_going`, then a closing text. Events are
/// paced (1 ms) so that the stream outlasts the disconnects.
fn responder(
    keep_going: Arc<AtomicBool>,
) -> impl Fn(&RecordedRequest) -> Result<Turn, String> + Send + Sync + 'static {
    move |request| {
        let turn = request.body["messages"]
            .as_array()
            .map_or(0, |messages| messages.len());
        let reply = Turn::reply()
            .text(format!("Turn {turn} streams these words one by one. "))
            .delta_chars(3)
            .delay_each(Duration::from_millis(1));
        Ok(if keep_going.load(Ordering::Relaxed) {
            reply
                .tool_call(
                    format!("call_{turn}"),
                    "bash",
                    serde_json::json!({"command": format!("echo {turn}")}),
                )
                .stop(ScriptStop::ToolUse)
                .into()
        } else {
            reply.text("Done.").into()
        })
    }
}

/// A tiny deterministic generator (xorshift), so a failure replays the same disconnects.
struct Random(u64);

impl Random {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound
    }
}

fn text_of(message: &AssistantMessage) -> String {
    message
        .content
        .iter()
        .filter_map(|block| match block {
            AssistantContent::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_hundred_disconnects_lose_and_repeat_nothing() {
    let world = World::start("openai-completions").await;
    let keep_going = Arc::new(AtomicBool::new(true));
    world.server.respond_with(responder(keep_going.clone()));
    let (client, notifications) = world.client().await;
    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: world.daemon.home.path().display().to_string(),
            model: Some(MODEL.to_owned()),
            tools: Some(vec!["bash".to_owned()]),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    let attached = client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: session.id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    let first_seq = attached.snapshot.info.last_seq + 1;
    client
        .call::<SessionPrompt>(&prompt(&session.id, "stream for a while"))
        .await
        .unwrap();

    let mut received: BTreeMap<u64, SessionEventParams> = BTreeMap::new();
    let mut duplicates = Vec::new();
    let mut not_gapless = 0;
    let mut last_seq = first_seq - 1;
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    let mut connection = Some((client, notifications));
    let mut finished = false;
    for round in 0..=DISCONNECTS {
        let (client, notifications) = match connection.take() {
            Some(open) => open,
            None => {
                let (client, notifications) = world.client().await;
                let attached = client
                    .call::<SessionAttach>(&SessionAttachParams {
                        session_id: session.id.clone(),
                        after_seq: Some(last_seq),
                    })
                    .await
                    .unwrap();
                if !attached.gapless {
                    not_gapless += 1;
                }
                for event in attached.replay {
                    last_seq = last_seq.max(event.seq);
                    if let Some(earlier) = received.insert(event.seq, event) {
                        duplicates.push(earlier.seq);
                    }
                }
                (client, notifications)
            }
        };
        let mut notifications = notifications;
        if round == DISCONNECTS {
            // The last connection stays until the run ends.
            keep_going.store(false, Ordering::Relaxed);
        }
        let budget = if round == DISCONNECTS {
            u64::MAX
        } else {
            random.below(12)
        };
        let mut taken = 0;
        while taken < budget && !finished {
            let notification = tokio::time::timeout(WAIT, notifications.next())
                .await
                .expect("events keep coming while the session streams")
                .expect("the connection stays open");
            if notification.method != "session/event" {
                continue;
            }
            let event: SessionEventParams =
                serde_json::from_value(notification.params.unwrap()).unwrap();
            taken += 1;
            last_seq = last_seq.max(event.seq);
            finished = matches!(event.event, SessionEvent::AgentEnd { .. });
            if let Some(earlier) = received.insert(event.seq, event) {
                duplicates.push(earlier.seq);
            }
        }
        assert!(
            !finished || round == DISCONNECTS,
            "the run ended after {round} disconnects; the stream is too short"
        );
        // Disconnect abruptly: whatever the daemon already sent is lost with the socket.
        drop(notifications);
        drop(client);
    }

    assert!(duplicates.is_empty(), "duplicate seqs {duplicates:?}");
    assert_eq!(not_gapless, 0, "every reconnect caught up gaplessly");
    let seqs: Vec<u64> = received.keys().copied().collect();
    let expected: Vec<u64> = (first_seq..=last_seq).collect();
    assert_eq!(seqs.len(), expected.len(), "gaps in the received seqs");
    assert_eq!(seqs, expected);

    // Rebuild every assistant message from its start and deltas; compare with its end, and
    // every end with the stored entry it announced.
    let (client, _notifications) = world.client().await;
    let stored: BTreeMap<String, AgentMessage> = read_tree(&client, &session.id)
        .await
        .into_iter()
        .filter_map(|record| match record.entry {
            SessionEntry::Message { id, message, .. } => Some((id, message)),
            _ => None,
        })
        .collect();
    let mut partial: Option<AssistantMessage> = None;
    let mut ends = 0;
    for event in received.values() {
        match &event.event {
            SessionEvent::MessageStart {
                message: AgentMessage::Assistant(start),
            } => partial = Some(start.clone()),
            SessionEvent::MessageUpdate {
                assistant_message_event,
            } => {
                let partial = partial.as_mut().expect("an update follows a start");
                pi_client::partial::apply(partial, assistant_message_event);
            }
            SessionEvent::MessageEnd { message, entry_id } => {
                if let (AgentMessage::Assistant(end), Some(rebuilt)) = (message, partial.take()) {
                    assert_eq!(text_of(&rebuilt), text_of(end), "seq {}", event.seq);
                }
                let id = entry_id.as_ref().expect("every message is stored");
                assert_eq!(stored.get(id), Some(message), "entry {id}");
                ends += 1;
            }
            _ => {}
        }
    }
    let stored_since_prompt = stored.len();
    assert_eq!(
        ends, stored_since_prompt,
        "every stored message was announced once"
    );
    assert!(ends > 20, "the stream ran many turns ({ends} messages)");
}
