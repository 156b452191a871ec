//! Approvals on the real `pid`: a project in `read-only` mode denies a `write` and the model
//! reads why; in `ask-writes` a command waits for a person: the question reaches every
//! attached client (and one that attaches late), the first answer wins, "allow for this
//! session" is remembered, and "deny" reaches the model.

use std::time::Duration;

use pi_client::{Client, Notifications};
use pi_protocol::v1::{
    SessionAttach, SessionAttachParams, SessionCreate, SessionCreateParams, SessionPrompt,
    SessionSetPolicy, SessionSetPolicyParams, UiAnswer, UiRequestParams, UiRespond,
    UiRespondParams,
};
use pi_test_support::events::run_events;
use serde_json::json;

use super::harness::{MODEL, World, prompt};
use super::mcp_faults::{caller, run, tool_results};

pub(super) async fn next_request(events: &mut Notifications) -> UiRequestParams {
    tokio::time::timeout(
        Duration::from_secs(20),
        events.next_of::<pi_protocol::v1::UiRequestNotification>(),
    )
    .await
    .expect("a question arrives")
    .unwrap()
    .unwrap()
}

pub(super) async fn attach(client: &Client, id: &str) {
    client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: id.to_owned(),
            after_seq: None,
        })
        .await
        .unwrap();
}

pub(super) async fn answer(client: &Client, question: &UiRequestParams, choice: &str) {
    client
        .call::<UiRespond>(&UiRespondParams {
            session_id: question.session_id.clone(),
            request_id: question.request_id.clone(),
            answer: UiAnswer {
                value: Some(choice.to_owned()),
                ..UiAnswer::default()
            },
        })
        .await
        .unwrap();
}

pub(super) fn result(seen: &[pi_protocol::v1::SessionEventParams]) -> (String, bool) {
    let (_, content, is_error, _) = tool_results(seen).remove(0);
    let content: serde_json::Value = serde_json::from_str(&content).unwrap();
    (
        content[0]["text"].as_str().unwrap_or_default().to_owned(),
        is_error,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_project_denies_writes_and_the_model_reads_why() {
    let world = World::start_with(
        "anthropic-messages",
        &[(
            "proj/.pi/settings.json",
            json!({"approvals": {"mode": "read-only"}}).to_string(),
        )],
    )
    .await;
    world.server.respond_with(caller);
    let root = world.daemon.home.path().join("proj");
    let (client, mut events) = world.client().await;
    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: root.display().to_string(),
            model: Some(MODEL.to_owned()),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    attach(&client, &session.id).await;
    let call = json!({"path": "notes.txt", "content": "hi"});
    let seen = run(
        &client,
        &mut events,
        &session.id,
        &format!("call write {call}"),
    )
    .await;
    let (text, failed) = result(&seen);
    assert!(failed);
    assert_eq!(
        text,
        "Denied by policy: read-only mode (the project's .pi/settings.json) does not allow \
         `write` on notes.txt. Do something else, or ask the user to change the approvals."
    );
    assert!(!root.join("notes.txt").exists());
    let next = world.server.requests().last().unwrap().body_text.clone();
    assert!(
        next.contains("Denied by policy: read-only mode"),
        "the model read it"
    );
    // A command that only reads runs; one that writes does not. A session's own mode cannot
    // loosen the project's.
    client
        .call::<SessionSetPolicy>(&SessionSetPolicyParams {
            session_id: session.id.clone(),
            mode: "yolo".to_owned(),
        })
        .await
        .unwrap();
    let seen = run(
        &client,
        &mut events,
        &session.id,
        &format!("call bash {}", json!({"command": "ls -a | head -3"})),
    )
    .await;
    assert!(!result(&seen).1);
    let seen = run(
        &client,
        &mut events,
        &session.id,
        &format!("call bash {}", json!({"command": "echo x > made.txt"})),
    )
    .await;
    let (text, failed) = result(&seen);
    assert!(
        failed && text.starts_with("Denied by policy: read-only mode"),
        "{text}"
    );
    assert!(!root.join("made.txt").exists());
    let error = client
        .call::<SessionSetPolicy>(&SessionSetPolicyParams {
            session_id: session.id.clone(),
            mode: "careful".to_owned(),
        })
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "mode must be yolo, ask-writes, ask-all or read-only, not \"careful\""
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asking_reaches_every_client_the_first_answer_wins_and_deny_reaches_the_model() {
    let mut world = World::start_with(
        "anthropic-messages",
        &[(
            ".pi/settings.json",
            json!({"approvals": {"askTimeoutMs": 20000}}).to_string(),
        )],
    )
    .await;
    world.server.respond_with(caller);
    let home = world.daemon.home.path().to_path_buf();
    let (client, mut events) = world.client().await;
    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: home.display().to_string(),
            model: Some(MODEL.to_owned()),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    attach(&client, &session.id).await;
    client
        .call::<SessionSetPolicy>(&SessionSetPolicyParams {
            session_id: session.id.clone(),
            mode: "ask-writes".to_owned(),
        })
        .await
        .unwrap();
    let (second, mut second_events) = world.client().await;
    attach(&second, &session.id).await;

    // The command waits; the second client answers; it runs.
    let touch = format!("call bash {}", json!({"command": "touch made.txt"}));
    client
        .call::<SessionPrompt>(&prompt(&session.id, &touch))
        .await
        .unwrap();
    let question = next_request(&mut second_events).await;
    assert!(!home.join("made.txt").exists(), "it waits for the answer");
    match &question.request {
        pi_protocol::v1::UiRequest::Select { title, options, .. } => {
            assert_eq!(
                title,
                "Allow `bash` with `touch made.txt`? (ask-writes mode (this session) asks)"
            );
            assert_eq!(
                options,
                &[
                    "Allow once",
                    "Allow for this session",
                    "Always allow in this project",
                    "Deny"
                ]
            );
        }
        other => panic!("not a choice: {other:?}"),
    }
    answer(&second, &question, "Allow for this session").await;
    let seen = run_events(&mut events, &session.id).await;
    assert!(!result(&seen).1);
    assert!(home.join("made.txt").exists());
    // Allowed for the session: the same command runs without a question.
    let seen = run(&client, &mut events, &session.id, &touch).await;
    assert!(!result(&seen).1);

    // A client that attaches while a question waits gets it, and its answer counts; a
    // denial reaches the model.
    let remove = format!("call bash {}", json!({"command": "rm made.txt"}));
    client
        .call::<SessionPrompt>(&prompt(&session.id, &remove))
        .await
        .unwrap();
    let _ = next_request(&mut second_events).await;
    let (late, mut late_events) = world.client().await;
    attach(&late, &session.id).await;
    let question = next_request(&mut late_events).await;
    answer(&late, &question, "Deny").await;
    let seen = run_events(&mut events, &session.id).await;
    let (text, failed) = result(&seen);
    assert!(failed);
    assert_eq!(
        text,
        "Denied by the user: `bash` with `rm made.txt` was not allowed. Do something else or \
         ask the user."
    );
    assert!(home.join("made.txt").exists());
    let next = world.server.requests().last().unwrap().body_text.clone();
    assert!(next.contains("Denied by the user"), "the model read it");

    // "Always allow in this project" outlives the daemon.
    let other = format!("call bash {}", json!({"command": "touch other.txt"}));
    client
        .call::<SessionPrompt>(&prompt(&session.id, &other))
        .await
        .unwrap();
    let question = next_request(&mut second_events).await;
    answer(&second, &question, "Always allow in this project").await;
    let seen = run_events(&mut events, &session.id).await;
    assert!(!result(&seen).1);

    // Every decision is in the session, with who answered.
    let export = client
        .call::<pi_protocol::v1::SessionExport>(&pi_protocol::v1::SessionExportParams {
            session_id: session.id.clone(),
            format: pi_protocol::v1::ExportFormat::Jsonl,
            path: None,
        })
        .await
        .unwrap();
    let text = serde_json::to_string(&export).unwrap();
    assert_eq!(
        text.matches("\\\"customType\\\":\\\"approval\\\"").count(),
        4,
        "{text}"
    );
    assert!(text.contains("allowed for this session earlier"), "{text}");
    assert!(text.contains("\\\"answeredBy\\\":\\\""), "{text}");

    drop((client, second, late));
    world.daemon.kill9().await;
    std::fs::remove_file(home.join("other.txt")).unwrap();
    world.daemon.restart().await;
    let (client, mut events) = world.client().await;
    let again = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: home.display().to_string(),
            model: Some(MODEL.to_owned()),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    attach(&client, &again.id).await;
    client
        .call::<SessionSetPolicy>(&SessionSetPolicyParams {
            session_id: again.id.clone(),
            mode: "ask-writes".to_owned(),
        })
        .await
        .unwrap();
    // Nobody is there to answer: it runs because the project allows it.
    let seen = run(&client, &mut events, &again.id, &other).await;
    assert!(!result(&seen).1, "{:?}", result(&seen));
    assert!(home.join("other.txt").exists());

    // A session's own mode outlives the daemon too.
    client
        .call::<SessionSetPolicy>(&SessionSetPolicyParams {
            session_id: again.id.clone(),
            mode: "read-only".to_owned(),
        })
        .await
        .unwrap();
    drop(client);
    world.daemon.kill9().await;
    world.daemon.restart().await;
    let (client, mut events) = world.client().await;
    attach(&client, &again.id).await;
    let call = json!({"path": "kept-out.txt", "content": "no"});
    let seen = run(
        &client,
        &mut events,
        &again.id,
        &format!("call write {call}"),
    )
    .await;
    let (text, failed) = result(&seen);
    assert!(failed);
    assert_eq!(
        text,
        "Denied by policy: read-only mode (this session) does not allow `write` on \
         kept-out.txt. Do something else, or ask the user to change the approvals."
    );
    assert!(!home.join("kept-out.txt").exists());
}
