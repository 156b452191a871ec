//! `lsp` calls through the daemon, against pyright (npm, installed by `tests/install-peers`):
//! the release `pid` shares one server per root between sessions.
//!
//! 1. The server's own time: `textDocument/hover` sent straight to `pyright-langserver` over
//!    stdio (the daemon's own JSON-RPC client, `pi_daemon::lsp::rpc`), median of 200.
//! 2. One session: the scripted model asks for one `lsp` hover per turn, 200 turns. Each
//!    call's time from its `tool_execution_start` to its `tool_execution_end` event (the
//!    daemon's whole handling of the call: tool dispatch, server lookup, document sync,
//!    position, the request, the answer's formatting), median: overhead per call = that − (1).
//!    Also the time per turn, and the same with the built-in `read` (the time per turn
//!    without LSP); whole turns include the model request, whose history grows with every
//!    turn, so their difference is the noisier measure.
//! 3. Later sessions in the same root: new server processes (target 0) and the time of a new
//!    session's first `lsp` call against the first session's first (cold) call.
//!
//! Run: `cargo build --release --bins && cargo bench -p pi-e2e --bench lsp`.
//! Prints a Markdown table for `docs/benchmarks.md` and one JSON line.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "bench binary"
)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_daemon::lsp::rpc::{Connection, Held, Incoming, OutboundLimits};
use pi_protocol::v1::{
    LspList, LspListParams, SessionAttach, SessionAttachParams, SessionCreate, SessionCreateParams,
    SessionEvent, SessionEventNotification, SessionMessageParams, SessionPrompt,
};
use pi_test_support::bench::median;
use pi_test_support::daemon::TempDaemon;
use pi_test_support::model_server::{ModelServer, RecordedRequest, Turn};
use pi_test_support::{peers, workspace_binary};
use serde_json::{Value, json};

const CALLS: usize = 200;

/// Answers pyright's own requests and notes its diagnostics.
struct Bench {
    diagnostics: tokio::sync::watch::Sender<u32>,
}

impl Incoming for Bench {
    fn notification(&self, method: &str, _params: Value) -> Option<Held> {
        if method == "textDocument/publishDiagnostics" {
            self.diagnostics.send_modify(|count| *count += 1);
        }
        None
    }

    fn request(
        &self,
        method: &str,
        params: Value,
    ) -> futures_util::future::BoxFuture<'static, Result<Value, (i64, String)>> {
        let answer = match method {
            "workspace/configuration" => Ok(Value::Array(vec![
                Value::Null;
                params["items"]
                    .as_array()
                    .map_or(0, Vec::len)
            ])),
            _ => Ok(Value::Null),
        };
        Box::pin(std::future::ready(answer))
    }
}

/// Hover straight to pyright: its own time per call (ms, median).
async fn direct_hover_ms(root: &Path, file: &Path) -> f64 {
    let mut child = tokio::process::Command::new(peers::npm_bin("pyright-langserver"))
        .arg("--stdio")
        .current_dir(root)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let (diagnostics, mut seen) = tokio::sync::watch::channel(0);
    let connection = Connection::start(
        child.stdin.take().unwrap(),
        child.stdout.take().unwrap(),
        Arc::new(Bench { diagnostics }),
        OutboundLimits::default(),
    );
    let uri = pi_daemon::lsp::path_to_uri(root);
    let timeout = Duration::from_secs(60);
    connection
        .request(
            "initialize",
            json!({"processId": std::process::id(), "rootUri": uri,
                "capabilities": {"workspace": {"configuration": true}}}),
            timeout,
        )
        .await
        .unwrap();
    connection.notify("initialized", json!({}));
    let file_uri = pi_daemon::lsp::path_to_uri(file);
    connection.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": file_uri, "languageId": "python", "version": 1,
            "text": std::fs::read_to_string(file).unwrap()}}),
    );
    seen.wait_for(|count| *count > 0).await.unwrap();
    let mut times = Vec::new();
    for index in 0..CALLS + 20 {
        let started = Instant::now();
        connection
            .request(
                "textDocument/hover",
                json!({"textDocument": {"uri": file_uri}, "position": {"line": 2, "character": 9}}),
                timeout,
            )
            .await
            .unwrap();
        if index >= 20 {
            times.push(started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    median(&mut times)
}

/// The model: `calls` calls of `tool`, one per turn, then a closing text.
fn responder(
    calls: usize,
    tool: &'static str,
    arguments: Value,
) -> impl Fn(&RecordedRequest) -> Result<Turn, String> {
    move |request| {
        let done = request.body_text.matches("\"tool_result\"").count();
        Ok(if done < calls {
            Turn::reply()
                .tool_call(format!("call_{done}"), tool, arguments.clone())
                .into()
        } else {
            Turn::reply().text("Done.").into()
        })
    }
}

/// A session with the `lsp` tool in `cwd`: (client, events, id).
async fn session(
    daemon: &TempDaemon,
    cwd: &Path,
) -> (pi_client::Client, pi_client::Notifications, String) {
    let bin = peers::npm_bin("pyright-langserver")
        .parent()
        .unwrap()
        .to_path_buf();
    let mut env: BTreeMap<String, String> = daemon.env().into_iter().collect();
    env.insert(
        "PATH".to_owned(),
        format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        ),
    );
    let (client, events) = daemon.client().await;
    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: cwd.display().to_string(),
            model: Some("scripted/scripted-model".to_owned()),
            env: Some(env),
            tools: Some(["read", "lsp"].map(str::to_owned).to_vec()),
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

/// One prompt: the calls, the failed ones, the seconds to the first call's end and to the
/// run's end.
async fn run(
    client: &pi_client::Client,
    events: &mut pi_client::Notifications,
    id: &str,
) -> (usize, usize, f64, f64, Vec<f64>) {
    let started = Instant::now();
    let mut executions = Vec::new();
    let mut call_started = Instant::now();
    client
        .call::<SessionPrompt>(&SessionMessageParams {
            session_id: id.to_owned(),
            text: "call".to_owned(),
            images: Vec::new(),
        })
        .await
        .unwrap();
    let (mut calls, mut failed, mut first) = (0, 0, 0.0);
    loop {
        let notification = events
            .next_of::<SessionEventNotification>()
            .await
            .unwrap()
            .unwrap();
        match notification.event {
            SessionEvent::ToolExecutionStart { .. } => call_started = Instant::now(),
            SessionEvent::ToolExecutionEnd { is_error, .. } => {
                executions.push(call_started.elapsed().as_secs_f64() * 1000.0);
                if calls == 0 {
                    first = started.elapsed().as_secs_f64();
                }
                calls += 1;
                failed += usize::from(is_error);
            }
            SessionEvent::AgentEnd { .. } => break,
            _ => {}
        }
    }
    (
        calls,
        failed,
        first,
        started.elapsed().as_secs_f64(),
        executions,
    )
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
                "py/pyproject.toml",
                "[project]\nname = \"bench\"\n".to_owned(),
            ),
            (
                "py/mathlib.py",
                "def add(a: int, b: int) -> int:\n    return a + b\n".to_owned(),
            ),
            (
                "py/main.py",
                "from mathlib import add\n\nresult = add(1, 2)\n".to_owned(),
            ),
        ],
    )
    .await;
    let root = daemon.home.path().join("py");
    let direct = direct_hover_ms(&root, &root.join("main.py")).await;

    let hover = json!({"action": "hover", "file": "main.py", "line": 3, "symbol": "add"});
    let (client, mut events, id) = session(&daemon, &root).await;
    // The first call starts the server (cold).
    server.respond_with(responder(1, "lsp", hover.clone()));
    let (_, failed, cold_first, _, _) = run(&client, &mut events, &id).await;
    assert_eq!(failed, 0);

    let mut lsp_turn = f64::MAX;
    let mut read_turn = f64::MAX;
    let mut lsp_executions = Vec::new();
    // A fresh session per run (the responder counts the session's tool results).
    for _ in 0..3 {
        server.respond_with(responder(CALLS, "lsp", hover.clone()));
        let (client, mut events, id) = session(&daemon, &root).await;
        let (calls, failed, _, seconds, executions) = run(&client, &mut events, &id).await;
        assert_eq!((calls, failed), (CALLS, 0));
        lsp_turn = lsp_turn.min(seconds * 1000.0 / (CALLS + 1) as f64);
        lsp_executions.extend(executions);
        server.respond_with(responder(CALLS, "read", json!({"path": "main.py"})));
        let (client, mut events, id) = session(&daemon, &root).await;
        let (calls, failed, _, seconds, _) = run(&client, &mut events, &id).await;
        assert_eq!((calls, failed), (CALLS, 0));
        read_turn = read_turn.min(seconds * 1000.0 / (CALLS + 1) as f64);
    }
    let turn_overhead = lsp_turn - read_turn - direct;
    let execution = median(&mut lsp_executions);
    let overhead = execution - direct;

    // Another session in the root: no new process, no cold start.
    let (other, mut other_events, other_id) = session(&daemon, &root).await;
    server.respond_with(responder(1, "lsp", hover.clone()));
    let (_, failed, warm_first, _, _) = run(&other, &mut other_events, &other_id).await;
    assert_eq!(failed, 0);
    let list = client
        .call::<LspList>(&LspListParams::default())
        .await
        .unwrap();
    let servers = list.servers.len();
    let starts: u32 = list.servers.iter().map(|server| server.starts).sum();

    println!("| measure | result | target |");
    println!("|---|---|---|");
    println!("| `hover`, pyright alone over stdio, median | {direct:.3} ms | |");
    println!("| one session, a turn with an `lsp` hover | {lsp_turn:.3} ms | |");
    println!("| one session, a turn with a built-in `read` | {read_turn:.3} ms | |");
    println!(
        "| `lsp` call, tool start to end, median of {} | {execution:.3} ms | |",
        lsp_executions.len()
    );
    println!(
        "| daemon overhead per `lsp` call (call − server alone) | {overhead:.3} ms | < 1 ms |"
    );
    println!(
        "| the same from whole turns (`lsp` turn − `read` turn − server alone) | {turn_overhead:.3} ms | |"
    );
    println!(
        "| first session's first `lsp` call (starts pyright) | {:.0} ms | |",
        cold_first * 1000.0
    );
    println!(
        "| a later session's first `lsp` call | {:.1} ms | no cold start |",
        warm_first * 1000.0
    );
    println!("| servers (processes) for all 8 sessions, starts | {servers}, {starts} | 1, 1 |");
    println!(
        "{}",
        json!({"bench": "lsp", "directMs": direct, "lspTurnMs": lsp_turn, "readTurnMs": read_turn,
            "overheadMs": overhead, "executionMs": execution,
            "turnOverheadMs": turn_overhead, "coldFirstMs": cold_first * 1000.0,
            "warmFirstMs": warm_first * 1000.0, "servers": servers, "starts": starts})
    );
    assert_eq!((servers, starts), (1, 1));
}
