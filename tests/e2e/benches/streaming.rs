//! Streaming throughput through the daemon: the scripted model server streams a long reply,
//! one SSE event per token, to the real release `pid`, which forwards every delta to one
//! client attached over the Unix socket. Measures tokens per second while the reply flows
//! (first delta at the client to its `agent_end`) and from the prompt to `agent_end` (which
//! also counts the scripted server rendering the whole reply up front, on the same two
//! cores), and the daemon's CPU time per token (from `/proc/PID/task/*/schedstat`), for
//! each wire format.
//!
//! Run: `cargo build --release --bins && cargo bench -p pi-e2e --bench streaming`.
//! Prints a Markdown table for `docs/benchmarks.md` and one JSON line.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "bench binary"
)]

use std::path::PathBuf;
use std::time::Instant;

use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};

use pi_protocol::v1::{SessionCreate, SessionCreateParams, SessionMessageParams, SessionPrompt};
use pi_test_support::daemon::TempDaemon;
use pi_test_support::model_server::{ModelServer, Turn};
use pi_test_support::procfs::thread_cpu_seconds;
use pi_test_support::workspace_binary;
use serde_json::json;

/// Tokens per reply: one four-character text delta, one SSE event, each
/// (`PI_BENCH_TOKENS` overrides it, e.g. for a profiler).
fn tokens() -> usize {
    std::env::var("PI_BENCH_TOKENS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(50_000)
}
/// The scripted server writes the body in pieces of this size (as real servers batch
/// writes); the events stay one per token.
const WRITE_BYTES: usize = 16 * 1024;
/// Replies per format (`PI_BENCH_ROUNDS` overrides it); the best is reported (the least
/// disturbed by the machine).
fn rounds() -> usize {
    std::env::var("PI_BENCH_ROUNDS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(5)
}

struct Round {
    tokens: usize,
    /// From the prompt to the client's `agent_end`: includes the scripted server rendering
    /// the whole reply before its first byte.
    seconds: f64,
    /// From the first delta at the client to `agent_end`: the rate while the reply flows.
    streaming_seconds: f64,
    daemon_cpu: f64,
}

/// One reply streamed to a raw Unix socket client that only splits lines and recognizes the
/// deltas and the end, so the client's own decoding does not cap the rate.
async fn round(server: &ModelServer, daemon: &TempDaemon, cwd: &str) -> Round {
    let (client, _notifications) = daemon.client().await;
    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: cwd.to_owned(),
            model: Some("scripted/scripted-model".to_owned()),
            tools: Some(Vec::new()),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    let stream = tokio::net::UnixStream::connect(daemon.paths.socket_path())
        .await
        .unwrap();
    let (read, mut write) = stream.into_split();
    let mut reader = tokio::io::BufReader::with_capacity(256 * 1024, read);
    let send = |value: serde_json::Value| {
        let mut line = value.to_string();
        line.push('\n');
        line
    };
    write
        .write_all(
            send(
                json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": pi_protocol::PROTOCOL_VERSION,
                "clientInfo": {"name": "bench", "version": "0"}}}),
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    write
        .write_all(
            send(
                json!({"jsonrpc": "2.0", "id": 2, "method": "session/attach",
                        "params": {"sessionId": session.id}}),
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    let mut line = Vec::new();
    // Initialize's and attach's responses.
    for _ in 0..2 {
        line.clear();
        reader.read_until(b'\n', &mut line).await.unwrap();
    }
    let expected = tokens();
    server.push(
        Turn::reply()
            .text("tok ".repeat(expected))
            .delta_chars(4)
            .body_split_bytes(WRITE_BYTES),
    );
    let cpu_before = thread_cpu_seconds(daemon.pid());
    let started = Instant::now();
    client
        .call::<SessionPrompt>(&SessionMessageParams {
            session_id: session.id.clone(),
            text: "stream".to_owned(),
            images: Vec::new(),
        })
        .await
        .unwrap();
    let delta = memchr::memmem::Finder::new(b"\"text_delta\"");
    let end = memchr::memmem::Finder::new(b"\"type\":\"agent_end\"");
    let mut tokens = 0;
    let mut first_delta = None;
    loop {
        line.clear();
        let read = reader.read_until(b'\n', &mut line).await.unwrap();
        assert!(read > 0, "the daemon closed the connection");
        if delta.find(&line).is_some() {
            first_delta.get_or_insert_with(Instant::now);
            tokens += 1;
        } else if end.find(&line).is_some() {
            break;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let streaming_seconds = first_delta.unwrap().elapsed().as_secs_f64();
    let daemon_cpu = thread_cpu_seconds(daemon.pid()) - cpu_before;
    assert_eq!(tokens, expected, "every token arrived");
    Round {
        tokens,
        seconds,
        streaming_seconds,
        daemon_cpu,
    }
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return; // `cargo test --benches` probes bench binaries this way.
    }
    // `PI_BENCH_PID=FILE` runs another daemon binary (e.g. a script that runs `pid` under
    // valgrind's callgrind for an exact profile).
    let pid = std::env::var_os("PI_BENCH_PID")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_binary("pid"));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        println!(
            "| format | tokens/s, first token to last (best of {}) | tokens/s, prompt to end | daemon CPU per token | target |",
            rounds()
        );
        println!("|---|---|---|---|---|");
        let mut results = Vec::new();
        // `PI_BENCH_API=NAME` measures one format (e.g. under a profiler).
        let only = std::env::var("PI_BENCH_API").ok();
        for api in [
            "anthropic-messages",
            "openai-completions",
            "openai-responses",
            "google-generative-ai",
        ]
        .into_iter()
        .filter(|api| only.as_deref().is_none_or(|only| only == *api))
        {
            let server = ModelServer::start().await;
            let models = serde_json::to_string(&server.models_json(api)).unwrap();
            let mut daemon =
                TempDaemon::start_with_files(&pid, "", &[(".pi/agent/models.json", models)])
                    .await;
            let cwd = daemon.home.path().display().to_string();
            // One warm-up round, then the measured ones.
            round(&server, &daemon, &cwd).await;
            let mut rounds = Vec::new();
            for _ in 0..self::rounds() {
                rounds.push(round(&server, &daemon, &cwd).await);
            }
            let best_rate = rounds
                .iter()
                .map(|round| round.tokens as f64 / round.seconds)
                .fold(0.0, f64::max);
            let best_streaming_rate = rounds
                .iter()
                .map(|round| (round.tokens - 1) as f64 / round.streaming_seconds)
                .fold(0.0, f64::max);
            let best_cpu = rounds
                .iter()
                .map(|round| round.daemon_cpu / round.tokens as f64 * 1e6)
                .fold(f64::INFINITY, f64::min);
            // A clean stop, so that a daemon under a profiler writes its profile.
            daemon.signal(rustix::process::Signal::TERM);
            daemon.wait_exit(std::time::Duration::from_secs(60)).await;
            println!(
                "| {api} | {:.0} k | {:.0} k | {best_cpu:.2} µs | ≥ 500 k tokens/s, ≤ 2 µs |",
                best_streaming_rate / 1000.0,
                best_rate / 1000.0
            );
            results.push(json!({"api": api, "tokensPerSecond": best_rate,
                "streamingTokensPerSecond": best_streaming_rate,
                "daemonCpuMicrosPerToken": best_cpu}));
        }
        println!("{}", json!({"bench": "streaming", "tokens": tokens(), "results": results}));
    });
}
