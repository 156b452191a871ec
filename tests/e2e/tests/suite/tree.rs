//! Fork and navigate give the model the right context, asserted on the request bodies the
//! scripted model server received (OpenAI Responses wire format).

use pi_client::{Client, Notifications};
use pi_protocol::v1::message::AgentMessage;
use pi_protocol::v1::{
    ReadScope, SessionAttach, SessionAttachParams, SessionEntry, SessionEntryParams, SessionFork,
    SessionNavigate, SessionNavigateParams, SessionPrompt, SessionRead, SessionReadParams,
};
use pi_test_support::events::run_events;
use pi_test_support::model_server::Turn;
use serde_json::Value;

use super::harness::{World, prompt};

const API: &str = "openai-responses";

async fn converse(
    world: &World,
    client: &Client,
    events: &mut Notifications,
    session_id: &str,
    text: &str,
    answer: &str,
) {
    world.server.push(Turn::reply().text(answer));
    client
        .call::<SessionPrompt>(&prompt(session_id, text))
        .await
        .unwrap();
    run_events(events, session_id).await;
}

/// The id of the user message entry with `text`.
async fn user_entry(client: &Client, session_id: &str, text: &str) -> String {
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
        .unwrap_or_else(|| panic!("no user entry {text:?}"))
}

/// `role:text` of every input item of a Responses request.
fn seen(body: &Value) -> Vec<String> {
    body["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|item| item["role"] != "developer" && item["role"] != "system")
        .map(|item| {
            let text = item["content"][0]["text"].as_str().unwrap_or_default();
            format!("{}:{text}", item["role"].as_str().unwrap_or("item"))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn navigate_and_fork_send_the_chosen_branch() {
    let world = World::start(API).await;
    let (client, mut events) = world.client().await;
    let session = world.attached_session(&client).await;
    let id = session.id.clone();
    converse(&world, &client, &mut events, &id, "one", "A").await;
    converse(&world, &client, &mut events, &id, "two", "B").await;

    // Navigate to "two": the conversation continues from its parent.
    let two = user_entry(&client, &id, "two").await;
    let navigated = client
        .call::<SessionNavigate>(&SessionNavigateParams {
            session_id: id.clone(),
            entry_id: two.clone(),
            ..SessionNavigateParams::default()
        })
        .await
        .unwrap();
    assert_eq!(navigated.text.as_deref(), Some("two"));
    converse(&world, &client, &mut events, &id, "two, rephrased", "C").await;
    let requests = world.server.requests();
    assert_eq!(
        seen(&requests[2].body),
        ["user:one", "assistant:A", "user:two, rephrased"]
    );

    // Fork at "two" of the first branch: a new session with the history before it.
    let forked = client
        .call::<SessionFork>(&SessionEntryParams {
            session_id: id.clone(),
            entry_id: two,
        })
        .await
        .unwrap();
    assert_eq!(forked.text, "two");
    client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: forked.session.id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    converse(
        &world,
        &client,
        &mut events,
        &forked.session.id,
        "two, forked",
        "D",
    )
    .await;
    let requests = world.server.requests();
    assert_eq!(
        seen(&requests[3].body),
        ["user:one", "assistant:A", "user:two, forked"]
    );
    world.server.assert_done(4);
}
