//! `pictl acp` latency through the release binaries with the scripted model (which runs in
//! this process, so its clock is ours): from the moment the model server starts answering a
//! request (its responder runs, the first byte follows) to the first `agent_message_chunk` the
//! editor reads from `pictl acp`'s stdout; and, for comparison, to the first text delta a
//! direct daemon client receives. Median of 50 prompts each.
//!
//! Run: `cargo build --release --bins && cargo bench -p pi-e2e --bench acp`.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "bench binary"
)]

use std::sync::{Arc, Mutex};
use std::time::Instant;

use pi_protocol::v1::{
    SessionAttach, SessionAttachParams, SessionCreate, SessionCreateParams, SessionEvent,
    SessionEventNotification, SessionMessageParams, SessionPrompt,
};
use pi_test_support::bench::median;
use pi_test_support::daemon::TempDaemon;
use pi_test_support::model_server::{ModelServer, Turn};
use pi_test_support::workspace_binary;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};

const RUNS: usize = 50;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let server = ModelServer::start().await;
    let answered: Arc<Mutex<Option<Instant>>> = Arc::new(Mutex::new(None));
    {
        let answered = answered.clone();
        server.respond_with(move |_request| {
            *answered.lock().unwrap() = Some(Instant::now());
            Ok(Turn::reply().text("hello from the model").into())
        });
    }
    let models = serde_json::to_string(&server.models_json("anthropic-messages")).unwrap();
    let daemon = TempDaemon::start_with_files(
        &workspace_binary("pid"),
        "",
        &[(".pi/agent/models.json", models)],
    )
    .await;
    let cwd = daemon.home.path().display().to_string();

    // Through `pictl acp`.
    let mut acp = tokio::process::Command::new(workspace_binary("pictl"))
        .arg("acp")
        .arg("--model")
        .arg("scripted/scripted-model")
        .envs(daemon.env())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = acp.stdin.take().unwrap();
    let mut lines = tokio::io::BufReader::new(acp.stdout.take().unwrap()).lines();
    let mut send = async |message: Value| {
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    };
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})).await;
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": cwd, "mcpServers": []}})).await;
    let mut session_id = String::new();
    while session_id.is_empty() {
        let line: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        if line["id"] == 2 {
            session_id = line["result"]["sessionId"].as_str().unwrap().to_owned();
        }
    }
    let mut through_acp = Vec::new();
    for run in 0..RUNS + 5 {
        let id = 100 + run;
        send(
            json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt",
            "params": {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}}),
        )
        .await;
        let mut first = None;
        loop {
            let line: Value =
                serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
            if first.is_none() && line["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
            {
                first = Some(Instant::now());
            }
            if line["id"] == id {
                break;
            }
        }
        let answered_at = answered.lock().unwrap().unwrap();
        if run >= 5 {
            through_acp.push((first.unwrap() - answered_at).as_secs_f64() * 1000.0);
        }
    }
    drop(stdin);
    let _ = acp.wait().await;

    // A direct daemon client, for comparison.
    let (client, mut events) = daemon.client().await;
    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: cwd.clone(),
            model: Some("scripted/scripted-model".to_owned()),
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
    let mut direct = Vec::new();
    for run in 0..RUNS + 5 {
        client
            .call::<SessionPrompt>(&SessionMessageParams {
                session_id: session.id.clone(),
                text: "hi".to_owned(),
                images: Vec::new(),
            })
            .await
            .unwrap();
        let mut first = None;
        loop {
            let notification = events
                .next_of::<SessionEventNotification>()
                .await
                .unwrap()
                .unwrap();
            match notification.event {
                SessionEvent::MessageUpdate { .. } if first.is_none() => {
                    first = Some(Instant::now())
                }
                SessionEvent::AgentEnd { .. } => break,
                _ => {}
            }
        }
        let answered_at = answered.lock().unwrap().unwrap();
        if run >= 5 {
            direct.push((first.unwrap() - answered_at).as_secs_f64() * 1000.0);
        }
    }
    let acp_ms = median(&mut through_acp);
    let direct_ms = median(&mut direct);
    println!("| measure | result | target |");
    println!("|---|---|---|");
    println!(
        "| model answers → first `agent_message_chunk` read from `pictl acp`, median of {RUNS} | {acp_ms:.3} ms | < 2 ms |"
    );
    println!(
        "| model answers → first `message_update` at a direct daemon client, median of {RUNS} | {direct_ms:.3} ms | |"
    );
    println!(
        "| the ACP bridge's share (difference) | {:.3} ms | |",
        acp_ms - direct_ms
    );
    println!(
        "{}",
        json!({"bench": "acp", "acpMs": acp_ms, "directMs": direct_ms, "bridgeMs": acp_ms - direct_ms})
    );
}
