//! Subagents through the release `pid` with the scripted model.
//!
//! 1. Spawn overhead per child: the median time of a `task` call with one child that answers
//!    in one turn (from the call's `tool_execution_start` to its `tool_execution_end`), minus
//!    the median time of one plain turn of a session (prompt to `agent_end`) against the same
//!    model server. What remains is the child's creation, its first prompt, the watching and
//!    the result. 30 of each.
//! 2. Memory: the daemon's RSS (`daemon/status`) before a `task` call with 16 children, and
//!    while all 16 are running (each waiting for its model's first answer).
//!
//! Run: `cargo build --release --bins && cargo bench -p pi-e2e --bench tasks`.
//! Prints a Markdown table for `docs/benchmarks.md` and one JSON line.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "bench binary"
)]

use std::time::{Duration, Instant};

use pi_protocol::v1::{
    DaemonStatus, DaemonStatusParams, SessionAttach, SessionAttachParams, SessionCreate,
    SessionCreateParams, SessionEvent, SessionEventNotification, SessionMessageParams,
    SessionPrompt,
};
use pi_test_support::bench::median;
use pi_test_support::daemon::TempDaemon;
use pi_test_support::model_server::{Gate, ModelServer, RecordedRequest, Turn};
use pi_test_support::workspace_binary;
use serde_json::{Value, json};

const RUNS: usize = 30;
const CHILDREN: usize = 16;

fn first_text(request: &RecordedRequest) -> String {
    match &request.body["messages"][0]["content"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|block| block["text"].as_str())
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

/// Parents (by their last message): `spawn N` / `hold N` call `task` with N children, then
/// say "Done."; `hello` gets "hi". Children: `answer` answers at once, `wait` waits at the
/// gate.
fn responder(gate: Gate) -> impl Fn(&RecordedRequest) -> Result<Turn, String> {
    move |request| {
        let first = first_text(request);
        if let Some((_, task)) = first.split_once("# Your task\n\n") {
            let task = task.split("\n\n").next().unwrap_or_default();
            return Ok(if task == "wait" {
                Turn::reply().text("waited").hold_after(0, &gate).into()
            } else {
                Turn::reply().text("answered").into()
            });
        }
        let last = request.body["messages"]
            .as_array()
            .and_then(|messages| messages.last())
            .cloned()
            .unwrap_or(Value::Null);
        let blocks = last["content"].as_array().cloned().unwrap_or_default();
        if blocks.iter().any(|block| block["type"] == "tool_result") {
            return Ok(Turn::reply().text("Done.").into());
        }
        let text: String = blocks
            .iter()
            .filter_map(|block| block["text"].as_str())
            .collect();
        let text = last["content"].as_str().map_or(text, str::to_owned);
        if text == "hello" {
            return Ok(Turn::reply().text("hi").into());
        }
        let (kind, count) = text.split_once(' ').unwrap_or((text.as_str(), "1"));
        let count: usize = count.parse().map_err(|_| format!("bad prompt {text:?}"))?;
        let task = if kind == "hold" { "wait" } else { "answer" };
        let tasks: Vec<Value> = (0..count).map(|_| json!({"task": task})).collect();
        Ok(Turn::reply()
            .tool_call("t", "task", json!({"context": "", "tasks": tasks}))
            .into())
    }
}

async fn session(
    daemon: &TempDaemon,
    tools: &[&str],
) -> (pi_client::Client, pi_client::Notifications, String) {
    let (client, events) = daemon.client().await;
    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: daemon.home.path().display().to_string(),
            model: Some("scripted/scripted-model".to_owned()),
            tools: Some(tools.iter().map(|&tool| tool.to_owned()).collect()),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: session.id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    (client, events, session.id)
}

/// Prompts `text`; (seconds to `agent_end`, seconds of the first tool call).
async fn turn(
    client: &pi_client::Client,
    events: &mut pi_client::Notifications,
    id: &str,
    text: &str,
) -> (f64, Option<f64>) {
    let started = Instant::now();
    client
        .call::<SessionPrompt>(&SessionMessageParams {
            session_id: id.to_owned(),
            text: text.to_owned(),
            images: Vec::new(),
        })
        .await
        .unwrap();
    let mut call_started = None;
    let mut call = None;
    loop {
        let notification = events
            .next_of::<SessionEventNotification>()
            .await
            .unwrap()
            .unwrap();
        if notification.session_id != id {
            continue;
        }
        match notification.event {
            SessionEvent::ToolExecutionStart { .. } => call_started = Some(Instant::now()),
            SessionEvent::ToolExecutionEnd { is_error, .. } => {
                assert!(!is_error, "the task call failed");
                call = call_started.map(|at| at.elapsed().as_secs_f64());
            }
            SessionEvent::AgentEnd { .. } => break,
            _ => {}
        }
    }
    (started.elapsed().as_secs_f64(), call)
}

async fn rss(client: &pi_client::Client) -> u64 {
    client
        .call::<DaemonStatus>(&DaemonStatusParams {})
        .await
        .unwrap()
        .memory
        .map_or(0, |memory| memory.rss_bytes)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let server = ModelServer::start().await;
    let models = serde_json::to_string(&server.models_json("anthropic-messages")).unwrap();
    let daemon = TempDaemon::start_with_files(
        &workspace_binary("pid"),
        "",
        &[
            (".pi/agent/models.json", models),
            (
                ".pi/settings.json",
                json!({"task": {"maxConcurrency": CHILDREN}}).to_string(),
            ),
        ],
    )
    .await;
    let gate = Gate::new();
    server.respond_with(responder(gate.clone()));

    // Warm up both paths.
    let (client, mut events, id) = session(&daemon, &["read"]).await;
    turn(&client, &mut events, &id, "hello").await;
    let (parent, mut parent_events, parent_id) = session(&daemon, &["read", "task"]).await;
    turn(&parent, &mut parent_events, &parent_id, "spawn 1").await;

    let mut plain = Vec::new();
    let mut spawned = Vec::new();
    for _ in 0..RUNS {
        let (seconds, _) = turn(&client, &mut events, &id, "hello").await;
        plain.push(seconds * 1000.0);
        let (_, call) = turn(&parent, &mut parent_events, &parent_id, "spawn 1").await;
        spawned.push(call.unwrap() * 1000.0);
    }
    let plain = median(&mut plain);
    let task_call = median(&mut spawned);
    let overhead = task_call - plain;

    // 16 children at once, all running.
    let before = rss(&client).await;
    parent
        .call::<SessionPrompt>(&SessionMessageParams {
            session_id: parent_id.clone(),
            text: format!("hold {CHILDREN}"),
            images: Vec::new(),
        })
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let waiting = server
            .requests()
            .iter()
            .filter(|request| first_text(request).contains("# Your task\n\nwait"))
            .count();
        if waiting >= CHILDREN {
            break;
        }
        assert!(Instant::now() < deadline, "only {waiting} children started");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let during = rss(&client).await;
    gate.release();
    loop {
        let notification = parent_events
            .next_of::<SessionEventNotification>()
            .await
            .unwrap()
            .unwrap();
        if notification.session_id == parent_id
            && matches!(notification.event, SessionEvent::AgentEnd { .. })
        {
            break;
        }
    }
    let added = during.saturating_sub(before) as f64 / (1024.0 * 1024.0);

    println!("| measure | result | target |");
    println!("|---|---|---|");
    println!("| one plain turn (prompt to end), median of {RUNS} | {plain:.3} ms | |");
    println!(
        "| `task` call with one child answering in one turn, median of {RUNS} | {task_call:.3} ms | |"
    );
    println!("| spawn overhead per child (difference) | {overhead:.3} ms | < 5 ms |");
    println!(
        "| daemon RSS before → with {CHILDREN} children running | {:.1} MiB → {:.1} MiB | |",
        before as f64 / (1024.0 * 1024.0),
        during as f64 / (1024.0 * 1024.0)
    );
    println!("| RSS added by {CHILDREN} running children | {added:.2} MiB | < 5 MB |");
    println!(
        "{}",
        json!({"bench": "tasks", "plainTurnMs": plain, "taskCallMs": task_call,
            "spawnOverheadMs": overhead, "rssBefore": before, "rssDuring": during,
            "addedMiB": added, "children": CHILDREN})
    );
}
