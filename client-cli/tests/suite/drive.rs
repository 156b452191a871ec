//! `pictl send|steer|follow-up|abort` and `pictl watch` on sessions other clients drive.

use std::time::{Duration, Instant};

use pi_client::Client;
use pi_protocol::v1::{SessionAttach, SessionAttachParams, SessionGet, SessionIdParams};
use pi_test_support::events::{events_until, kind, run_events};
use pi_test_support::model_server::{Gate, Turn};
use tokio::io::{AsyncBufReadExt as _, BufReader};

use super::world::{World, assert_exit, stderr, stdout};

/// Waits until `count` clients are attached to the session (the watcher has subscribed).
async fn until_attached(client: &Client, session_id: &str, count: u32) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let details = client
            .call::<SessionGet>(&SessionIdParams {
                session_id: session_id.to_owned(),
            })
            .await
            .unwrap();
        if details.attached_clients >= count {
            return;
        }
        assert!(Instant::now() < deadline, "the watcher never attached");
        // Condition polling: attaching has no event another client could await.
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_steer_follow_up_and_abort_drive_a_session() {
    let world = World::start().await;
    let (client, mut events) = world.client().await;
    let session = world.session(&client).await;
    client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: session.id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();

    // send starts a run and returns at once.
    let gate = Gate::new();
    world
        .server
        .push(Turn::reply().text("Working on it").hold_after(3, &gate));
    world.server.push(Turn::reply().text("Follow-up done."));
    let sent = world
        .pictl(&["send", &session.id, "start", "working"])
        .await;
    assert_exit(&sent, 0);
    assert_eq!(stdout(&sent), "");
    gate.reached().await;

    // steer and follow-up queue messages while it runs.
    let followed = world
        .pictl_with_stdin(&["follow-up", &session.id[..8], "and then?"], "")
        .await;
    assert_exit(&followed, 0);
    let queued = events_until(&mut events, &session.id, |event| {
        kind(event) == "queue_update"
    })
    .await;
    let last = serde_json::to_value(&queued.last().unwrap().event).unwrap();
    assert_eq!(last["followUp"], serde_json::json!(["and then?"]));
    gate.release();
    let run = run_events(&mut events, &session.id).await;
    let user_texts: Vec<String> = queued
        .iter()
        .chain(&run)
        .filter(|event| kind(event) == "message_end")
        .map(|event| serde_json::to_value(&event.event).unwrap())
        .filter(|event| event["message"]["role"] == "user")
        .map(|event| {
            event["message"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(user_texts, ["start working", "and then?"]);

    // abort stops a running session and returns once it is idle.
    let gate = Gate::new();
    world
        .server
        .push(Turn::reply().text("Never finishes").hold_after(3, &gate));
    assert_exit(&world.pictl(&["send", &session.id, "again"]).await, 0);
    gate.reached().await;
    let aborted = world.pictl(&["abort", &session.id]).await;
    assert_exit(&aborted, 0);
    let details = client
        .call::<SessionGet>(&SessionIdParams {
            session_id: session.id.clone(),
        })
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(details.info.status).unwrap(),
        "idle",
        "abort returns once the session is idle"
    );
    gate.release();

    let steered = world.pictl(&["steer", &session.id, "later"]).await;
    assert_exit(&steered, 0);
    let nothing = world.pictl(&["send", &session.id]).await;
    assert_exit(&nothing, 2);
    assert_eq!(
        stderr(&nothing),
        "pictl: error: nothing to send: give a message, an @file or piped input\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_shows_another_clients_run_live() {
    let world = World::start().await;
    let (client, _events) = world.client().await;
    let session = world.session(&client).await;
    std::fs::write(world.workdir.path().join("a.txt"), "alpha\n").unwrap();

    let mut watcher = world.command(&["watch", &session.id]).spawn().unwrap();
    let mut lines = BufReader::new(watcher.stdout.take().unwrap()).lines();
    until_attached(&client, &session.id, 1).await;

    world
        .server
        .push(Turn::reply().text("Reading it.").tool_call(
            "call_1",
            "read",
            serde_json::json!({"path": "a.txt"}),
        ));
    world.server.push(Turn::reply().text("All done."));
    client
        .call::<pi_protocol::v1::SessionPrompt>(&pi_protocol::v1::SessionMessageParams {
            session_id: session.id.clone(),
            text: "read a.txt".to_owned(),
            images: Vec::new(),
        })
        .await
        .unwrap();
    let mut seen = Vec::new();
    while let Some(line) = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .expect("watch prints the run live")
        .unwrap()
    {
        let done = line == "All done.";
        seen.push(line);
        if done {
            break;
        }
    }
    insta::assert_snapshot!("watch_human", world.redact(&seen.join("\n")));

    // Ctrl+C ends the watch with 130.
    let pid = rustix::process::Pid::from_raw(watcher.id().unwrap() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let status = tokio::time::timeout(Duration::from_secs(20), watcher.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(130));

    // --after-seq replays what happened since (the session is still loaded: every event,
    // its creation entries first); --json prints them as the daemon sends them.
    let mut watcher = world
        .command(&["watch", &session.id, "--after-seq", "0", "--json"])
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(watcher.stdout.take().unwrap()).lines();
    let mut replayed = Vec::new();
    while let Some(line) = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .unwrap()
        .unwrap()
    {
        let done = line.contains("All done.");
        replayed.push(line);
        if done {
            break;
        }
    }
    let redacted: Vec<String> = replayed.iter().map(|line| world.redact(line)).collect();
    insta::assert_snapshot!("watch_json_replay", redacted.join("\n"));
    watcher.kill().await.unwrap();
}
