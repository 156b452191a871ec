//! The process and kernel pools through the release `pid` with the scripted model.
//!
//! 1. Warm `python` cell round trip: the median of 50 `python {code: "1+1"}` calls through the
//!    daemon (the call's `tool_execution_start` to its `tool_execution_end`, as a client sees
//!    them), minus the median of 50 raw `execute_request`s of `1+1` (send to reply and idle)
//!    sent by this process straight to an ipykernel of the same venv over ZeroMQ. What
//!    remains is the daemon's overhead.
//! 2. 20 sessions each run a cell at once with `[limits] kernels = 4`: the most kernel
//!    processes ever alive (sampled from /proc every 5 ms), and the wall time for all 20.
//! 3. The daemon's RSS before and after a cell printing 200 MB and a job writing 500 MB.
//!
//! Run: `tests/install-peers && cargo build --release --bins && cargo bench -p pi-e2e --bench
//! pools`. Prints a Markdown table for `docs/benchmarks.md` and one JSON line.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "bench binary"
)]

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use jupyter_protocol::{
    ConnectionInfo, ExecuteRequest, ExecutionState, JupyterMessage, JupyterMessageContent,
    KernelInfoRequest, Transport,
};
use pi_protocol::v1::{
    DaemonStatus, DaemonStatusParams, SessionAttach, SessionAttachParams, SessionCreate,
    SessionCreateParams, SessionEvent, SessionEventNotification, SessionMessageParams,
    SessionPrompt,
};
use pi_test_support::bench::median;
use pi_test_support::daemon::TempDaemon;
use pi_test_support::model_server::{ModelServer, RecordedRequest, Turn};
use pi_test_support::workspace_binary;
use serde_json::{Value, json};

const RUNS: usize = 50;
const SESSIONS: usize = 20;

/// `call TOOL ARGS` → that tool call; a tool result → "Done.".
fn caller(request: &RecordedRequest) -> Result<Turn, String> {
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
    let rest = text.strip_prefix("call ").ok_or("not a call")?;
    let (tool, args) = rest.split_once(' ').unwrap_or((rest, "{}"));
    let args: Value = serde_json::from_str(args).map_err(|error| error.to_string())?;
    Ok(Turn::reply().tool_call("t", tool, args).into())
}

async fn session(
    daemon: &TempDaemon,
    dir: &Path,
) -> (pi_client::Client, pi_client::Notifications, String) {
    let (client, events) = daemon.client().await;
    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: dir.display().to_string(),
            model: Some("scripted/scripted-model".to_owned()),
            tools: Some(vec![
                "python".to_owned(),
                "bash".to_owned(),
                "job".to_owned(),
            ]),
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

/// Prompts `call TOOL ARGS`; milliseconds from the call's start to its end.
async fn call(
    client: &pi_client::Client,
    events: &mut pi_client::Notifications,
    id: &str,
    tool: &str,
    args: Value,
) -> f64 {
    client
        .call::<SessionPrompt>(&SessionMessageParams {
            session_id: id.to_owned(),
            text: format!("call {tool} {args}"),
            images: Vec::new(),
        })
        .await
        .unwrap();
    let mut started = None;
    let mut took = None;
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
            SessionEvent::ToolExecutionStart { .. } => started = Some(Instant::now()),
            SessionEvent::ToolExecutionEnd {
                is_error, result, ..
            } => {
                assert!(!is_error, "the call failed: {result:?}");
                took = started.map(|at| at.elapsed().as_secs_f64() * 1000.0);
            }
            SessionEvent::AgentEnd { .. } => break,
            _ => {}
        }
    }
    took.unwrap()
}

async fn rss(client: &pi_client::Client) -> (u64, u64) {
    let memory = client
        .call::<DaemonStatus>(&DaemonStatusParams {})
        .await
        .unwrap()
        .memory
        .unwrap();
    (memory.rss_bytes, memory.peak_rss_bytes)
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// The raw round trip of `1+1` with an ipykernel of `python`, in milliseconds (median).
async fn raw_round_trip(python: &Path, dir: &Path) -> f64 {
    let ip = std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);
    let ports = jupyter_zmq_client::peek_ports(ip, 5).await.unwrap();
    let info = ConnectionInfo {
        ip: ip.to_string(),
        transport: Transport::TCP,
        shell_port: ports[0],
        iopub_port: ports[1],
        stdin_port: ports[2],
        control_port: ports[3],
        hb_port: ports[4],
        key: "bench-key".to_owned(),
        signature_scheme: "hmac-sha256".to_owned(),
        kernel_name: Some("python3".to_owned()),
    };
    let file = dir.join("raw-kernel.json");
    std::fs::write(&file, serde_json::to_vec(&info).unwrap()).unwrap();
    let mut kernel = tokio::process::Command::new(python)
        .args(["-m", "ipykernel_launcher", "-f"])
        .arg(&file)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let session = "bench-raw";
    let identity = jupyter_zmq_client::peer_identity_for_session(session).unwrap();
    let mut shell =
        jupyter_zmq_client::create_client_shell_connection_with_identity(&info, session, identity)
            .await
            .unwrap();
    let mut iopub = jupyter_zmq_client::create_client_iopub_connection(&info, "", session)
        .await
        .unwrap();
    // Ready when a kernel_info's status reaches the subscription.
    loop {
        let request: JupyterMessage = KernelInfoRequest {}.into();
        shell.send(request).await.unwrap();
        shell.read().await.unwrap();
        if tokio::time::timeout(Duration::from_millis(200), iopub.read())
            .await
            .is_ok()
        {
            while tokio::time::timeout(Duration::from_millis(50), iopub.read())
                .await
                .is_ok()
            {}
            break;
        }
    }
    let mut times = Vec::new();
    for _ in 0..RUNS + 5 {
        let message: JupyterMessage = ExecuteRequest::new("1+1".to_owned()).into();
        let id = message.header.msg_id.clone();
        let started = Instant::now();
        shell.send(message).await.unwrap();
        loop {
            let message = iopub.read().await.unwrap();
            if message
                .parent_header
                .as_ref()
                .is_some_and(|parent| parent.msg_id == id)
                && matches!(&message.content, JupyterMessageContent::Status(status)
                    if status.execution_state == ExecutionState::Idle)
            {
                break;
            }
        }
        shell.read().await.unwrap();
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    kernel.kill().await.unwrap();
    median(&mut times[5..])
}

/// Kernel processes alive now: the children of the daemon's guards running ipykernel with a
/// connection file in the daemon's runtime dir. (A kernel's own short-lived fork, before it
/// execs `uname` and the like, has the kernel's command line but is not a kernel.) Zombies
/// read an empty command line, so only live ones count.
fn kernel_processes() -> usize {
    let cmdline = |pid: &str| {
        std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default()
    };
    let parent = |pid: &str| {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // `pid (comm) state ppid ...`; comm may hold spaces, so read after its `)`.
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1).map(str::to_owned))
            .unwrap_or_default()
    };
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|pid| pid.chars().all(|c| c.is_ascii_digit()))
        .filter(|pid| {
            let own = cmdline(pid);
            own.contains("ipykernel_launcher")
                && own.contains("pid-kernels-")
                && !own.contains("__guard")
                && cmdline(&parent(pid)).contains("__guard")
        })
        .count()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let venv = pi_test_support::peers::kernel_venv();
    let server = ModelServer::start().await;
    server.respond_with(caller);
    let models = serde_json::to_string(&server.models_json("anthropic-messages")).unwrap();
    let daemon = TempDaemon::start_with_files(
        &workspace_binary("pid"),
        "[limits]\nkernels = 4\njobs_per_session = 4\n",
        &[(".pi/agent/models.json", models)],
    )
    .await;
    let dirs: Vec<std::path::PathBuf> = (0..SESSIONS)
        .map(|index| {
            let dir = daemon.home.path().join(format!("project-{index}"));
            std::fs::create_dir_all(&dir).unwrap();
            std::os::unix::fs::symlink(&venv, dir.join(".venv")).unwrap();
            dir
        })
        .collect();

    // 1. The warm round trip, raw and through the daemon.
    let raw = raw_round_trip(&venv.join("bin/python"), daemon.home.path()).await;
    let (client, mut events, id) = session(&daemon, &dirs[0]).await;
    for _ in 0..5 {
        call(&client, &mut events, &id, "python", json!({"code": "1+1"})).await;
    }
    let mut through = Vec::new();
    for _ in 0..RUNS {
        through.push(call(&client, &mut events, &id, "python", json!({"code": "1+1"})).await);
    }
    let through = median(&mut through);
    let overhead = through - raw;

    // 2. 20 sessions at once, 4 kernels at most.
    let sampling = Arc::new(AtomicBool::new(true));
    let most = Arc::new(AtomicUsize::new(0));
    let sampler = {
        let (sampling, most) = (sampling.clone(), most.clone());
        tokio::spawn(async move {
            while sampling.load(Ordering::SeqCst) {
                most.fetch_max(kernel_processes(), Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
    };
    let started = Instant::now();
    let mut runs = Vec::new();
    for dir in &dirs {
        let (client, mut events, id) = session(&daemon, dir).await;
        runs.push(tokio::spawn(async move {
            call(
                &client,
                &mut events,
                &id,
                "python",
                json!({"code": "import time; time.sleep(0.2); 1"}),
            )
            .await
        }));
    }
    for run in runs {
        run.await.unwrap();
    }
    let all_twenty = started.elapsed().as_secs_f64();
    sampling.store(false, Ordering::SeqCst);
    sampler.await.unwrap();
    let most = most.load(Ordering::SeqCst);
    assert!(most <= 4, "{most} kernel processes at once");

    // 3. Memory against output volume.
    let (client, mut events, id) = session(&daemon, &dirs[1]).await;
    call(&client, &mut events, &id, "python", json!({"code": "1"})).await;
    let (before, _) = rss(&client).await;
    let big_cell = json!({"code": "import sys\nfor i in range(200): sys.stdout.write('x' * 1_000_000 + '\\n')"});
    call(&client, &mut events, &id, "python", big_cell.clone()).await;
    let (after_cell, _) = rss(&client).await;
    call(&client, &mut events, &id, "python", big_cell).await;
    let (after_second_cell, _) = rss(&client).await;
    call(
        &client,
        &mut events,
        &id,
        "bash",
        json!({"command": "head -c 500000000 /dev/zero | tr '\\0' x", "background": true}),
    )
    .await;
    let jobs = client
        .call::<pi_protocol::v1::JobList>(&pi_protocol::v1::JobListParams {
            session_id: Some(id.clone()),
        })
        .await
        .unwrap()
        .jobs;
    call(
        &client,
        &mut events,
        &id,
        "job",
        json!({"action": "wait", "id": jobs[0].id, "timeout": 120}),
    )
    .await;
    let (after_job, peak) = rss(&client).await;
    let written = client
        .call::<pi_protocol::v1::JobList>(&pi_protocol::v1::JobListParams {
            session_id: Some(id.clone()),
        })
        .await
        .unwrap()
        .jobs[0]
        .output_bytes;
    assert_eq!(written, 500_000_000);

    println!("| measure | result | target |");
    println!("|---|---|---|");
    println!("| raw `1+1` execute round trip to ipykernel, median of {RUNS} | {raw:.3} ms | |");
    println!(
        "| `python` `1+1` through pid (tool start → end as a client sees it), median of {RUNS} | {through:.3} ms | |"
    );
    println!("| daemon overhead per warm cell (difference) | {overhead:.3} ms | < 5 ms |");
    println!(
        "| {SESSIONS} sessions each running a cell at once, `kernels = 4` | {most} kernel processes at most, all done in {all_twenty:.1} s | ≤ 4 |"
    );
    println!(
        "| daemon RSS before → after a 200 MB cell → after another → after a 500 MB job | {:.1} → {:.1} → {:.1} → {:.1} MiB (peak {:.1} MiB) | flat |",
        mib(before),
        mib(after_cell),
        mib(after_second_cell),
        mib(after_job),
        mib(peak)
    );
    println!(
        "{}",
        json!({"bench": "pools", "rawMs": raw, "throughMs": through, "overheadMs": overhead,
            "mostKernelProcesses": most, "twentySessionsSeconds": all_twenty,
            "rssBefore": before, "rssAfterCell": after_cell, "rssAfterSecondCell": after_second_cell, "rssAfterJob": after_job, "peakRss": peak})
    );
}
