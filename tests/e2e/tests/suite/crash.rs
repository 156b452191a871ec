//! `kill -9` of the daemon in the middle of a streaming reply: after a restart the session is
//! listed, its completed entries are intact, the interrupted turn is marked, and the next
//! prompt continues from a consistent context (asserted on the request the model receives).

use pi_protocol::v1::message::{AgentMessage, StopReason};
use pi_protocol::v1::{
    ReadScope, SessionEntry, SessionList, SessionListParams, SessionPrompt, SessionRead,
    SessionReadParams,
};
use pi_test_support::events::{events_until, kind, run_events};
use pi_test_support::model_server::{Gate, Turn};

use super::harness::{World, prompt};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_mid_stream_then_restart_continues_consistently() {
    let mut world = World::start("anthropic-messages").await;
    let (client, mut events) = world.client().await;
    let session = world.attached_session(&client).await;

    // A first, complete exchange.
    world.server.push(Turn::reply().text("First answer."));
    client
        .call::<SessionPrompt>(&prompt(&session.id, "first question"))
        .await
        .unwrap();
    run_events(&mut events, &session.id).await;

    // The second reply streams a little, then hangs until the daemon is killed.
    let gate = Gate::new();
    world.server.push(
        Turn::reply()
            .text("This reply never finishes")
            .delta_chars(4)
            .hold_after(6, &gate),
    );
    client
        .call::<SessionPrompt>(&prompt(&session.id, "second question"))
        .await
        .unwrap();
    events_until(&mut events, &session.id, |event| {
        kind(event) == "message_update"
    })
    .await;
    gate.reached().await;
    drop(client);
    world.daemon.kill9().await;

    world.daemon.restart().await;
    let (client, _events) = world.client().await;
    let listed = client
        .call::<SessionList>(&SessionListParams::default())
        .await
        .unwrap();
    assert!(
        listed.sessions.iter().any(|s| s.id == session.id),
        "the session is listed"
    );

    let read = client
        .call::<SessionRead>(&SessionReadParams {
            session_id: session.id.clone(),
            scope: ReadScope::Branch,
            limit: None,
            cursor: None,
        })
        .await
        .unwrap();
    let messages: Vec<AgentMessage> = read
        .entries
        .iter()
        .filter_map(|record| match &record.entry {
            SessionEntry::Message { message, .. } => Some(message.clone()),
            _ => None,
        })
        .collect();
    let summary: Vec<String> = messages
        .iter()
        .map(|message| match message {
            AgentMessage::User(user) => format!(
                "user: {}",
                serde_json::to_value(&user.content).unwrap()[0]["text"]
                    .as_str()
                    .unwrap()
            ),
            AgentMessage::Assistant(assistant) => format!(
                "assistant {:?}: {}",
                assistant.stop_reason,
                serde_json::to_value(&assistant.content).unwrap()
            ),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(summary.len(), 4, "{summary:#?}");
    assert_eq!(summary[0], "user: first question");
    assert!(summary[1].contains("First answer."), "{summary:#?}");
    assert_eq!(summary[2], "user: second question");
    let AgentMessage::Assistant(marker) = &messages[3] else {
        panic!("the interrupted turn is closed by an assistant marker: {summary:#?}");
    };
    assert_eq!(marker.stop_reason, StopReason::Aborted);
    assert!(
        marker
            .error_message
            .as_deref()
            .unwrap_or_default()
            .contains("Interrupted"),
        "{marker:?}"
    );

    // The next prompt continues: the model sees both questions, the first answer, and no
    // trace of the half reply.
    let (client, mut events) = world.client().await;
    client
        .call::<pi_protocol::v1::SessionAttach>(&pi_protocol::v1::SessionAttachParams {
            session_id: session.id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    world.server.push(Turn::reply().text("Third answer."));
    client
        .call::<SessionPrompt>(&prompt(&session.id, "third question"))
        .await
        .unwrap();
    run_events(&mut events, &session.id).await;
    let last = world.server.requests().pop().unwrap();
    let sent: Vec<(String, String)> = last.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_owned(),
                m["content"][0]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect();
    assert_eq!(
        sent,
        vec![
            ("user".to_owned(), "first question".to_owned()),
            ("assistant".to_owned(), "First answer.".to_owned()),
            ("user".to_owned(), "second question".to_owned()),
            ("user".to_owned(), "third question".to_owned()),
        ]
    );
    world.server.assert_done(3);
}
