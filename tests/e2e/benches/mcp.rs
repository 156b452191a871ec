//! MCP calls through the daemon, against `@modelcontextprotocol/server-everything` (npm,
//! installed by `tests/install-peers`): the release `pid` shares one server between sessions.
//!
//! 1. The server's own time: `echo` called directly over stdio JSON-RPC, one call at a time.
//! 2. One session: the scripted model asks for one `echo` per turn, 200 turns; the time per
//!    turn. The same with the built-in `read` instead (a cheap local tool): the time per turn
//!    without MCP. Overhead per call = (MCP turn − `read` turn) − (1): what the daemon adds to
//!    the server's own time (an upper bound: `read` itself costs a little).
//! 3. 20 sessions × 50 calls at once (1,000 calls): errors (must be 0), wall time, processes
//!    of the server, daemon CPU per call.
//!
//! Run: `cargo build --release --bins && cargo bench -p pi-e2e --bench mcp`.
//! Prints a Markdown table for `docs/benchmarks.md` and one JSON line.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "bench binary"
)]

use std::time::{Duration, Instant};

use pi_protocol::v1::{
    McpList, McpListParams, SessionAttach, SessionAttachParams, SessionCreate, SessionCreateParams,
    SessionEvent, SessionEventNotification, SessionMessageParams, SessionPrompt,
};
use pi_test_support::bench::median;
use pi_test_support::daemon::TempDaemon;
use pi_test_support::model_server::{ModelServer, RecordedRequest, Turn};
use pi_test_support::procfs::thread_cpu_seconds;
use pi_test_support::{peers, workspace_binary};
use serde_json::json;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};

const SINGLE_CALLS: usize = 200;
const SESSIONS: usize = 20;
const CALLS_PER_SESSION: usize = 50;

/// `echo` straight to the server over stdio: its own time per call (ms, median).
async fn direct_call_ms(server: &std::path::Path) -> f64 {
    let mut child = tokio::process::Command::new(server)
        .arg("stdio")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = async |value: serde_json::Value| {
        stdin
            .write_all(format!("{value}\n").as_bytes())
            .await
            .unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"}}}),
    )
    .await;
    let answered = async |id: u64, lines: &mut tokio::io::Lines<_>| loop {
        let line: String = lines.next_line().await.unwrap().unwrap();
        let message: serde_json::Value = serde_json::from_str(&line).unwrap();
        if message["id"] == id {
            return;
        }
    };
    answered(0, &mut lines).await;
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    let mut times = Vec::new();
    for id in 1..=(SINGLE_CALLS as u64 + 20) {
        let started = Instant::now();
        send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"message": "bench"}}}))
        .await;
        answered(id, &mut lines).await;
        if id > 20 {
            times.push(started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    median(&mut times)
}

/// The model: `calls` calls of `tool`, one per turn, then a closing text.
fn responder(
    calls: usize,
    tool: &'static str,
    arguments: serde_json::Value,
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

/// One prompt whose turns each make one call: the calls, the failed ones, and the seconds
/// from the prompt to the run's end.
async fn run_session(daemon: &TempDaemon, cwd: &str) -> (usize, usize, f64) {
    let (client, mut events) = daemon.client().await;
    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: cwd.to_owned(),
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
    let started = Instant::now();
    client
        .call::<SessionPrompt>(&SessionMessageParams {
            session_id: session.id.clone(),
            text: "call".to_owned(),
            images: Vec::new(),
        })
        .await
        .unwrap();
    let mut calls = 0;
    let mut failed = 0;
    loop {
        let notification = events
            .next_of::<SessionEventNotification>()
            .await
            .unwrap()
            .unwrap();
        match notification.event {
            SessionEvent::ToolExecutionEnd { is_error, .. } => {
                calls += 1;
                failed += usize::from(is_error);
            }
            SessionEvent::AgentEnd { .. } => break,
            _ => {}
        }
    }
    (calls, failed, started.elapsed().as_secs_f64())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let everything = peers::npm_bin("mcp-server-everything");
    let direct = direct_call_ms(&everything).await;

    let server = ModelServer::start().await;
    let models = serde_json::to_string(&server.models_json("anthropic-messages")).unwrap();
    let mcp = json!({"mcpServers": {"everything": {
        "command": everything.display().to_string(), "args": ["stdio"]}}})
    .to_string();
    let daemon = TempDaemon::start_with_files(
        &workspace_binary("pid"),
        "",
        &[
            (".pi/agent/models.json", models),
            (".pi/agent/mcp.json", mcp),
        ],
    )
    .await;
    let cwd = daemon.home.path().display().to_string();
    std::fs::write(daemon.home.path().join("bench.txt"), "bench\n").unwrap();
    let (client, _notifications) = daemon.client().await;

    // One session, one call at a time (the first session's create starts the server).
    let echo = || {
        responder(
            SINGLE_CALLS,
            "mcp__everything__echo",
            json!({"message": "bench"}),
        )
    };
    server.respond_with(echo());
    let warm = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: cwd.clone(),
            model: Some("scripted/scripted-model".to_owned()),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    drop(warm);
    let deadline = Instant::now() + Duration::from_secs(60);
    while !client
        .call::<McpList>(&McpListParams::default())
        .await
        .unwrap()
        .servers
        .iter()
        .any(|server| server.state == "ready")
    {
        assert!(Instant::now() < deadline, "the MCP server never got ready");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Alternate MCP and `read` sessions; the best of three of each.
    let mut mcp_turn = f64::MAX;
    let mut read_turn = f64::MAX;
    for _ in 0..3 {
        server.respond_with(echo());
        let (calls, failed, seconds) = run_session(&daemon, &cwd).await;
        assert_eq!((calls, failed), (SINGLE_CALLS, 0));
        mcp_turn = mcp_turn.min(seconds * 1000.0 / (SINGLE_CALLS + 1) as f64);
        server.respond_with(responder(
            SINGLE_CALLS,
            "read",
            json!({"path": "bench.txt"}),
        ));
        let (calls, failed, seconds) = run_session(&daemon, &cwd).await;
        assert_eq!((calls, failed), (SINGLE_CALLS, 0));
        read_turn = read_turn.min(seconds * 1000.0 / (SINGLE_CALLS + 1) as f64);
    }
    let through_daemon = mcp_turn - read_turn;

    // 20 sessions at once.
    server.respond_with(responder(
        CALLS_PER_SESSION,
        "mcp__everything__echo",
        json!({"message": "bench"}),
    ));
    let pid = daemon.pid();
    let cpu_before = thread_cpu_seconds(pid);
    let started = Instant::now();
    let mut runs = Vec::new();
    let daemon = std::sync::Arc::new(daemon);
    for _ in 0..SESSIONS {
        let daemon = daemon.clone();
        let cwd = cwd.clone();
        runs.push(tokio::spawn(
            async move { run_session(&daemon, &cwd).await },
        ));
    }
    let mut calls = 0;
    let mut errors = 0;
    for run in runs {
        let (made, failed, _) = run.await.unwrap();
        calls += made;
        errors += failed;
    }
    let wall = started.elapsed().as_secs_f64();
    let cpu = thread_cpu_seconds(pid) - cpu_before;
    let list = client
        .call::<McpList>(&McpListParams::default())
        .await
        .unwrap();
    let processes = list.servers.len();
    let overhead = through_daemon - direct;

    println!("| measure | result | target |");
    println!("|---|---|---|");
    println!("| `echo`, the server alone over stdio, median | {direct:.3} ms | |");
    println!("| one session, a turn with an MCP `echo` call | {mcp_turn:.3} ms | |");
    println!("| one session, a turn with a built-in `read` call | {read_turn:.3} ms | |");
    println!(
        "| daemon overhead per MCP call (MCP turn − `read` turn − server alone) | {overhead:.3} ms | < 0.5 ms |"
    );
    println!(
        "| {SESSIONS} sessions × {CALLS_PER_SESSION} calls at once: calls, errors | {calls}, {errors} | 1,000, 0 |"
    );
    println!("| the same: wall | {wall:.2} s | |");
    println!(
        "| the same: daemon CPU per call (turns included) | {:.3} ms | |",
        cpu * 1000.0 / calls as f64
    );
    println!("| server connections (processes) for all sessions | {processes} | 1 |");
    println!(
        "{}",
        json!({"bench": "mcp", "directMs": direct, "throughDaemonMs": through_daemon,
            "mcpTurnMs": mcp_turn, "readTurnMs": read_turn,
            "overheadMs": overhead, "calls": calls, "errors": errors, "wallS": wall,
            "daemonCpuMsPerCall": cpu * 1000.0 / calls as f64,
            "servers": processes})
    );
    assert_eq!(errors, 0);
    assert_eq!(calls, SESSIONS * CALLS_PER_SESSION);
}
