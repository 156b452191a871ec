//! Presence, prompt history and dequeue: drafts travel to the other attached clients, leaving
//! clients disappear from the list, every sent message lands in the shared history, and queued
//! messages can be taken back before they are delivered.

use std::time::Duration;

use pi_llm::faux::FauxReply;
use pi_protocol::v1::*;
use pi_protocol::{ErrorKind, NotificationMethod as _};

use super::harness::{TestDaemon, run_events};

/// The next `session/presence` for `session_id`, as `(name, draft)` pairs.
async fn next_presence(
    notifications: &mut pi_client::Notifications,
    session_id: &str,
) -> Vec<(String, String)> {
    loop {
        let notification = tokio::time::timeout(Duration::from_secs(10), notifications.next())
            .await
            .expect("a presence notification in time")
            .expect("the connection is open");
        if notification.method != SessionPresence::NAME {
            continue;
        }
        let params: SessionPresenceParams =
            serde_json::from_value(notification.params.unwrap()).unwrap();
        if params.session_id == session_id {
            return params
                .clients
                .into_iter()
                .map(|client| (client.name, client.draft))
                .collect();
        }
    }
}

fn attach(session_id: &str) -> SessionAttachParams {
    SessionAttachParams {
        session_id: session_id.to_owned(),
        after_seq: None,
    }
}

#[tokio::test]
async fn drafts_reach_the_other_clients_and_leavers_disappear() {
    let daemon = TestDaemon::start().await;
    let (alice, mut alice_events) = daemon.client().await;
    let (bob, mut bob_events) = daemon.client().await;
    let session = daemon.create_session(&alice).await;

    let refused = alice
        .call::<SessionSetDraft>(&SessionSetDraftParams {
            session_id: session.id.clone(),
            text: "not attached".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(refused.rpc_kind(), Some(ErrorKind::InvalidParams));

    alice
        .call::<SessionAttach>(&attach(&session.id))
        .await
        .unwrap();
    assert_eq!(
        next_presence(&mut alice_events, &session.id).await,
        [("session-test".to_owned(), String::new())]
    );
    let snapshot = bob
        .call::<SessionAttach>(&attach(&session.id))
        .await
        .unwrap()
        .snapshot;
    assert_eq!(snapshot.clients.len(), 2);
    assert_eq!(next_presence(&mut alice_events, &session.id).await.len(), 2);

    alice
        .call::<SessionSetDraft>(&SessionSetDraftParams {
            session_id: session.id.clone(),
            text: "half a thought".into(),
        })
        .await
        .unwrap();
    // Bob's own attach announcement comes first, then Alice's draft.
    assert_eq!(next_presence(&mut bob_events, &session.id).await.len(), 2);
    assert_eq!(
        next_presence(&mut bob_events, &session.id).await,
        [
            ("session-test".to_owned(), "half a thought".to_owned()),
            ("session-test".to_owned(), String::new()),
        ]
    );

    alice.close().await;
    assert_eq!(
        next_presence(&mut bob_events, &session.id).await,
        [("session-test".to_owned(), String::new())]
    );
}

#[tokio::test]
async fn sent_messages_are_searchable_in_the_shared_history() {
    let daemon = TestDaemon::start().await;
    let (client, mut events) = daemon.client().await;
    let session = daemon.create_session(&client).await;
    client
        .call::<SessionAttach>(&attach(&session.id))
        .await
        .unwrap();
    daemon.faux.push(FauxReply::text("done"));
    client
        .call::<SessionPrompt>(&SessionMessageParams {
            session_id: session.id.clone(),
            text: "refactor the parser".into(),
            images: vec![],
        })
        .await
        .unwrap();
    run_events(&mut events, &session.id).await;
    client
        .call::<SessionFollowUp>(&SessionMessageParams {
            session_id: session.id.clone(),
            text: "then add tests".into(),
            images: vec![],
        })
        .await
        .unwrap();

    let search = |query: Option<&str>| HistorySearchParams {
        query: query.map(str::to_owned),
        cwd: None,
        limit: None,
    };
    let texts = |response: HistorySearchResponse| {
        response
            .entries
            .into_iter()
            .map(|entry| entry.text)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        texts(client.call::<HistorySearch>(&search(None)).await.unwrap()),
        ["then add tests", "refactor the parser"]
    );
    assert_eq!(
        texts(
            client
                .call::<HistorySearch>(&search(Some("pars")))
                .await
                .unwrap()
        ),
        ["refactor the parser"]
    );
}

/// A text message to `session_id`.
fn message(session_id: &str, text: &str) -> SessionMessageParams {
    SessionMessageParams {
        session_id: session_id.to_owned(),
        text: text.into(),
        images: vec![],
    }
}

/// A new attached session whose run (prompt "start") is held in the `block` tool (key
/// `held`) until released; its model then answers "done".
async fn run_held_in_a_tool(daemon: &TestDaemon, client: &pi_client::Client) -> SessionInfo {
    let session = daemon.create_session(client).await;
    client
        .call::<SessionAttach>(&attach(&session.id))
        .await
        .unwrap();
    daemon.faux.push(
        FauxReply::text("working").then_tool_call("block", serde_json::json!({"key": "held"})),
    );
    daemon.faux.push(FauxReply::text("done"));
    client
        .call::<SessionPrompt>(&message(&session.id, "start"))
        .await
        .unwrap();
    daemon.block.wait_started(1).await;
    session
}

/// Like pi's editor, the history keeps a prompt the session refused (here: busy), so that it
/// can be recalled and sent again; blank prompts are not kept.
#[tokio::test]
async fn a_refused_prompt_stays_in_the_history_and_a_blank_one_is_not_recorded() {
    let daemon = TestDaemon::start().await;
    let (client, mut events) = daemon.client().await;
    let session = run_held_in_a_tool(&daemon, &client).await;
    let refused = client
        .call::<SessionPrompt>(&message(&session.id, "sent while busy"))
        .await
        .unwrap_err();
    assert_eq!(refused.rpc_kind(), Some(ErrorKind::Busy), "{refused}");
    daemon.block.release("held");
    run_events(&mut events, &session.id).await;
    daemon.faux.push(FauxReply::text("nothing to do"));
    client
        .call::<SessionPrompt>(&message(&session.id, "  "))
        .await
        .unwrap();
    run_events(&mut events, &session.id).await;

    let texts: Vec<String> = client
        .call::<HistorySearch>(&HistorySearchParams {
            query: None,
            cwd: None,
            limit: None,
        })
        .await
        .unwrap()
        .entries
        .into_iter()
        .map(|entry| entry.text)
        .collect();
    assert_eq!(texts, ["sent while busy", "start"]);
}

#[tokio::test]
async fn dequeue_takes_the_queued_messages_back_before_delivery() {
    let daemon = TestDaemon::start().await;
    let (client, mut events) = daemon.client().await;
    let session = run_held_in_a_tool(&daemon, &client).await;
    client
        .call::<SessionSteer>(&message(&session.id, "change course"))
        .await
        .unwrap();
    client
        .call::<SessionFollowUp>(&message(&session.id, "and then this"))
        .await
        .unwrap();
    let id = SessionIdParams {
        session_id: session.id.clone(),
    };
    let taken = client.call::<SessionDequeue>(&id).await.unwrap();
    assert_eq!(taken.steering, ["change course"]);
    assert_eq!(taken.follow_up, ["and then this"]);
    assert_eq!(
        client.call::<SessionDequeue>(&id).await.unwrap(),
        QueueState::default()
    );
    daemon.block.release("held");
    let run = run_events(&mut events, &session.id).await;
    let last_queue = run.iter().rev().find_map(|event| match &event.event {
        SessionEvent::QueueUpdate {
            steering,
            follow_up,
        } => Some((steering.len(), follow_up.len())),
        _ => None,
    });
    assert_eq!(last_queue, Some((0, 0)));
    let delivered_users = run
        .iter()
        .filter(|event| {
            matches!(
                &event.event,
                SessionEvent::MessageEnd {
                    message: message::AgentMessage::User(_),
                    ..
                }
            )
        })
        .count();
    assert_eq!(delivered_users, 1, "only the prompt was delivered");
}
