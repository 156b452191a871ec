//! Fork and navigate give the model the right context (asserted on the recorded requests).

use pi_llm::Message;
use pi_llm::faux::FauxReply;
use pi_protocol::v1::message::AgentMessage;
use pi_protocol::v1::*;

use super::harness::{TestDaemon, run_events};

fn prompt(session_id: &str, text: &str) -> SessionMessageParams {
    SessionMessageParams {
        session_id: session_id.to_owned(),
        text: text.to_owned(),
        images: vec![],
    }
}

/// The texts the model saw, one per message (`user:one`, `assistant:A`).
fn seen(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .map(|message| match message {
            Message::User(user) => format!(
                "user:{}",
                user.content
                    .iter()
                    .filter_map(|c| match c {
                        pi_llm::UserContent::Text(t) => Some(t.text.clone()),
                        pi_llm::UserContent::Image(_) => None,
                    })
                    .collect::<String>()
            ),
            Message::Assistant(assistant) => format!("assistant:{}", assistant.text()),
            Message::ToolResult(_) => "toolResult".to_owned(),
        })
        .collect()
}

async fn user_entry(client: &pi_client::Client, session_id: &str, text: &str) -> String {
    let read = client
        .call::<SessionRead>(&SessionReadParams {
            session_id: session_id.to_owned(),
            scope: ReadScope::Tree,
            limit: None,
            cursor: None,
        })
        .await
        .unwrap();
    read.entries
        .iter()
        .find_map(|record| match &record.entry {
            SessionEntry::Message {
                id,
                message: AgentMessage::User(user),
                ..
            } if serde_json::to_value(&user.content).unwrap()[0]["text"] == text => {
                Some(id.clone())
            }
            _ => None,
        })
        .unwrap()
}

async fn converse(
    daemon: &TestDaemon,
    client: &pi_client::Client,
    events: &mut pi_client::Notifications,
    session_id: &str,
    text: &str,
    reply: &str,
) {
    daemon.faux.push(FauxReply::text(reply));
    client
        .call::<SessionPrompt>(&prompt(session_id, text))
        .await
        .unwrap();
    run_events(events, session_id).await;
}

#[tokio::test]
async fn navigating_to_a_user_message_branches_from_its_parent() {
    let daemon = TestDaemon::start().await;
    let (client, mut events) = daemon.client().await;
    let session = daemon.create_session(&client).await;
    let id = session.id.clone();
    client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    converse(&daemon, &client, &mut events, &id, "one", "A").await;
    converse(&daemon, &client, &mut events, &id, "two", "B").await;

    let two = user_entry(&client, &id, "two").await;
    let navigated = client
        .call::<SessionNavigate>(&SessionNavigateParams {
            session_id: id.clone(),
            entry_id: two,
            ..SessionNavigateParams::default()
        })
        .await
        .unwrap();
    assert_eq!(
        navigated.text.as_deref(),
        Some("two"),
        "the message comes back for editing"
    );
    converse(&daemon, &client, &mut events, &id, "two, rephrased", "C").await;
    let requests = daemon.faux.requests();
    assert_eq!(
        seen(&requests[2].context.messages),
        ["user:one", "assistant:A", "user:two, rephrased"]
    );

    // The leaf survives a restart of the session (it is stored, unlike pi's).
    let info = client
        .call::<SessionGet>(&SessionIdParams {
            session_id: id.clone(),
        })
        .await
        .unwrap()
        .info;
    let read = client
        .call::<SessionRead>(&SessionReadParams {
            session_id: id.clone(),
            scope: ReadScope::Branch,
            limit: None,
            cursor: None,
        })
        .await
        .unwrap();
    assert_eq!(read.leaf_id, info.leaf_id);
    let tree = client
        .call::<SessionRead>(&SessionReadParams {
            session_id: id.clone(),
            scope: ReadScope::Tree,
            limit: Some(3),
            cursor: None,
        })
        .await
        .unwrap();
    assert_eq!(tree.entries.len(), 3);
    let rest = client
        .call::<SessionRead>(&SessionReadParams {
            session_id: id.clone(),
            scope: ReadScope::Tree,
            limit: None,
            cursor: tree.next_cursor,
        })
        .await
        .unwrap();
    assert_eq!(
        tree.entries.len() + rest.entries.len(),
        2 + 6,
        "both branches are kept"
    );
}

#[tokio::test]
async fn fork_copies_the_history_before_a_user_message_into_a_new_session() {
    let daemon = TestDaemon::start().await;
    let (client, mut events) = daemon.client().await;
    let session = daemon.create_session(&client).await;
    let id = session.id.clone();
    client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    converse(&daemon, &client, &mut events, &id, "one", "A").await;
    converse(&daemon, &client, &mut events, &id, "two", "B").await;
    let one = user_entry(&client, &id, "one").await;
    client
        .call::<SessionLabel>(&SessionLabelParams {
            session_id: id.clone(),
            entry_id: one.clone(),
            label: Some("start".into()),
        })
        .await
        .unwrap();

    let two = user_entry(&client, &id, "two").await;
    let forked = client
        .call::<SessionFork>(&SessionEntryParams {
            session_id: id.clone(),
            entry_id: two,
        })
        .await
        .unwrap();
    assert_eq!(forked.text, "two");
    assert_eq!(
        forked.session.parent_session_id.as_deref(),
        Some(id.as_str())
    );
    assert_ne!(forked.session.id, id);
    assert_eq!(forked.session.message_count, 2);

    let (other, mut other_events) = daemon.client().await;
    other
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: forked.session.id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    daemon.faux.push(FauxReply::text("D"));
    other
        .call::<SessionPrompt>(&prompt(&forked.session.id, "two, forked"))
        .await
        .unwrap();
    run_events(&mut other_events, &forked.session.id).await;
    let requests = daemon.faux.requests();
    assert_eq!(
        seen(&requests.last().unwrap().context.messages),
        ["user:one", "assistant:A", "user:two, forked"]
    );

    // Only the first message was on the copied path, so the label came along.
    let read = other
        .call::<SessionRead>(&SessionReadParams {
            session_id: forked.session.id.clone(),
            scope: ReadScope::Tree,
            limit: None,
            cursor: None,
        })
        .await
        .unwrap();
    let labels: Vec<(String, Option<String>)> = read
        .entries
        .iter()
        .filter_map(|record| match &record.entry {
            SessionEntry::Label {
                target_id, label, ..
            } => Some((target_id.clone(), label.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(labels, [(one, Some("start".to_owned()))]);

    // Fork needs a user message.
    let assistant = read
        .entries
        .iter()
        .find_map(|record| match &record.entry {
            SessionEntry::Message {
                id,
                message: AgentMessage::Assistant(_),
                ..
            } => Some(id.clone()),
            _ => None,
        })
        .unwrap();
    let error = other
        .call::<SessionFork>(&SessionEntryParams {
            session_id: forked.session.id.clone(),
            entry_id: assistant.clone(),
        })
        .await
        .unwrap_err();
    assert_eq!(
        error.rpc_kind(),
        Some(pi_protocol::ErrorKind::InvalidParams)
    );
    assert!(
        error.to_string().contains(&format!(
            "fork needs a user message, and {assistant} is an assistant message"
        )),
        "{error}"
    );
}
