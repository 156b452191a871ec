//! L2: `kill -9` of the daemon while 20 sessions stream, ten times. After every kill the
//! database passes `PRAGMA integrity_check`; after every restart every entry whose event any
//! client received is stored, every session is listed, shows its interrupted turn, and takes
//! a new prompt (which streams until the next kill). After the last restart every session
//! runs a prompt to the end.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use pi_daemon::session::recovery::INTERRUPTED_TURN;
use pi_daemon::store::Store;
use pi_protocol::v1::message::{AgentMessage, StopReason};
use pi_protocol::v1::{
    SessionAttach, SessionAttachParams, SessionCreate, SessionCreateParams, SessionEntry,
    SessionInfo, SessionList, SessionListParams, SessionPrompt,
};
use pi_test_support::model_server::{Gate, RecordedRequest, ScriptStop, Turn};

use super::{Recorder, announced_entries, kind, read_tree};
use crate::suite::harness::{MODEL, World, prompt};

const SESSIONS: usize = 20;
const CYCLES: usize = 10;

/// Each prompt: a tool turn that completes (durable entries), then a reply that streams and,
/// while `hold` has a gate, stops mid-way until the daemon dies.
fn responder(
    hold: Arc<Mutex<Option<Gate>>>,
) -> impl Fn(&RecordedRequest) -> Result<Turn, String> + Send + Sync + 'static {
    move |request| {
        let messages = request.body["messages"]
            .as_array()
            .ok_or("the request has no messages")?;
        let last_role = messages
            .last()
            .and_then(|message| message["role"].as_str())
            .unwrap_or_default();
        Ok(match last_role {
            "user" => Turn::reply()
                .text("Let me check.")
                .tool_call(
                    format!("call_{}", messages.len()),
                    "bash",
                    serde_json::json!({"command": "echo checked"}),
                )
                .stop(ScriptStop::ToolUse)
                .into(),
            "tool" => {
                let reply = Turn::reply()
                    .text("The check says: checked. ".repeat(20))
                    .delta_chars(4);
                match hold.lock().unwrap().as_ref() {
                    Some(gate) => reply.hold_after(8, gate).into(),
                    None => reply.into(),
                }
            }
            other => return Err(format!("unexpected last message role {other:?}")),
        })
    }
}

/// The session is listed, stores every announced entry, and shows `interrupted` interrupted
/// turns.
async fn check_recovered(
    client: &pi_client::Client,
    session: &SessionInfo,
    announced: &[String],
    interrupted: usize,
) {
    let listed = client
        .call::<SessionList>(&SessionListParams {
            limit: Some(500),
            ..SessionListParams::default()
        })
        .await
        .unwrap();
    assert!(
        listed.sessions.iter().any(|listed| listed.id == session.id),
        "session {} is listed",
        session.id
    );
    let stored = read_tree(client, &session.id).await;
    let stored_ids: Vec<String> = stored
        .iter()
        .map(|record| {
            serde_json::to_value(&record.entry).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    for id in announced {
        assert!(
            stored_ids.contains(id),
            "entry {id} of session {} was announced but is not stored",
            session.id
        );
    }
    let markers = stored
        .iter()
        .filter(|record| {
            matches!(
                &record.entry,
                SessionEntry::Message {
                    message: AgentMessage::Assistant(assistant),
                    ..
                } if assistant.stop_reason == StopReason::Aborted
                    && assistant.error_message.as_deref() == Some(INTERRUPTED_TURN)
            )
        })
        .count();
    assert_eq!(
        markers, interrupted,
        "session {} shows each interrupted turn",
        session.id
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_while_twenty_sessions_stream_ten_times() {
    let mut world = World::start("openai-completions").await;
    let hold = Arc::new(Mutex::new(Some(Gate::new())));
    world.server.respond_with(responder(hold.clone()));
    let sessions: Vec<SessionInfo> = {
        let (client, _notifications) = world.client().await;
        let mut sessions = Vec::new();
        for _ in 0..SESSIONS {
            sessions.push(
                client
                    .call::<SessionCreate>(&SessionCreateParams {
                        cwd: world.daemon.home.path().display().to_string(),
                        model: Some(MODEL.to_owned()),
                        tools: Some(vec!["bash".to_owned()]),
                        ..SessionCreateParams::default()
                    })
                    .await
                    .unwrap(),
            );
        }
        sessions
    };
    let mut announced: HashMap<String, Vec<String>> = HashMap::new();

    for cycle in 0..=CYCLES {
        let last = cycle == CYCLES;
        if last {
            *hold.lock().unwrap() = None;
        }
        let mut watchers = Vec::new();
        for session in &sessions {
            let (client, notifications) = world.client().await;
            let recorder = Recorder::start(notifications);
            check_recovered(
                &client,
                session,
                announced.get(&session.id).map_or(&[][..], Vec::as_slice),
                cycle,
            )
            .await;
            client
                .call::<SessionAttach>(&SessionAttachParams {
                    session_id: session.id.clone(),
                    after_seq: None,
                })
                .await
                .unwrap();
            client
                .call::<SessionPrompt>(&prompt(&session.id, &format!("cycle {cycle}")))
                .await
                .unwrap();
            watchers.push((client, recorder));
        }
        for (session, (_client, recorder)) in sessions.iter().zip(&mut watchers) {
            if last {
                recorder
                    .wait_for("the run's end", |events| {
                        events.iter().any(|event| kind(event) == "agent_end")
                    })
                    .await;
                let events = recorder.events();
                assert!(
                    !events.iter().any(|event| kind(event) == "session_error"),
                    "session {}: {events:?}",
                    session.id
                );
            } else {
                recorder
                    .wait_for("the reply after the tool result to stream", |events| {
                        events
                            .iter()
                            .skip_while(|event| kind(event) != "tool_execution_end")
                            .any(|event| kind(event) == "message_update")
                    })
                    .await;
            }
            announced
                .entry(session.id.clone())
                .or_default()
                .extend(announced_entries(&recorder.events()));
        }
        if last {
            break;
        }
        world.daemon.kill9().await;
        let problems = Store::check_file(&world.daemon.paths.database_path())
            .await
            .unwrap();
        assert_eq!(problems, ["ok"], "integrity after kill {}", cycle + 1);
        drop(watchers);
        // Let the held streams of the dead daemon end, and hold the next ones anew.
        if let Some(gate) = hold.lock().unwrap().replace(Gate::new()) {
            gate.release();
        }
        world.daemon.restart().await;
    }
    let (client, _notifications) = world.client().await;
    for session in &sessions {
        check_recovered(&client, session, &announced[&session.id], CYCLES).await;
    }
}
