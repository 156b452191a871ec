//! `pictl run` whole-process wall time: a one-reply prompt against a zero-latency scripted
//! model, the daemon warm (already running, the model resolved once). Optionally the same
//! prompt through pi's `pi -p`, pointed at the same scripted server by a pi `models.json`.
//!
//! Run: `cargo build --release --bins && cargo bench -p pictl --bench run`; set `PI_BIN` to a
//! `pi` executable (e.g. from `npm install @mariozechner/pi-coding-agent`) to measure pi too.
//! Prints a Markdown table for `docs/benchmarks.md` and one JSON line.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "bench binary"
)]

use std::process::Command;
use std::time::{Duration, Instant};

use pi_test_support::daemon::TempDaemon;
use pi_test_support::model_server::{ModelServer, Turn};
use pi_test_support::workspace_binary;

const RUNS: usize = 200;
const WARMUP: usize = 10;
const PI_RUNS: usize = 20;

fn timed(command: &mut Command) -> Duration {
    let started = Instant::now();
    let output = command.output().unwrap();
    let took = started.elapsed();
    assert!(
        output.status.success(),
        "{command:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&output.stdout), "Hello.\n");
    took
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index].as_secs_f64() * 1000.0
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return; // `cargo test --benches` probes bench binaries this way.
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime.block_on(ModelServer::start());
    let models = serde_json::to_string(&server.models_json("anthropic-messages")).unwrap();
    let pid = workspace_binary("pid");
    let pictl = workspace_binary("pictl");
    let daemon = runtime.block_on(TempDaemon::start_with_files(
        &pid,
        "",
        &[(".pi/agent/models.json", models.clone())],
    ));
    let workdir = tempfile::tempdir().unwrap();
    let run = || {
        server.push(Turn::reply().text("Hello."));
        timed(
            Command::new(&pictl)
                .args(["run", "--model", "scripted/scripted-model", "say hello"])
                .current_dir(workdir.path())
                .env("PI_HOME", daemon.home.path())
                .env("PI_DAEMON_BIN", &pid)
                // `cargo bench` points the dynamic loader at the target and toolchain
                // directories; a user's shell does not, and the failed lookups cost ~0.2 ms.
                .env_remove("LD_LIBRARY_PATH"),
        )
    };
    for _ in 0..WARMUP {
        run();
    }
    let mut samples: Vec<Duration> = (0..RUNS).map(|_| run()).collect();
    samples.sort();
    let (p50, p95, min) = (
        percentile(&samples, 0.5),
        percentile(&samples, 0.95),
        samples[0].as_secs_f64() * 1000.0,
    );

    // pi -p on the same prompt, when a pi executable is given.
    let pi = std::env::var_os("PI_BIN").map(|bin| {
        let agent_dir = tempfile::tempdir().unwrap();
        std::fs::write(agent_dir.path().join("models.json"), &models).unwrap();
        let run_pi = || {
            server.push(Turn::reply().text("Hello."));
            timed(
                Command::new(&bin)
                    .args([
                        "-p",
                        "--model",
                        "scripted/scripted-model",
                        "--offline",
                        "say hello",
                    ])
                    .current_dir(workdir.path())
                    .env("PI_CODING_AGENT_DIR", agent_dir.path())
                    .env("PI_SKIP_VERSION_CHECK", "1"),
            )
        };
        run_pi();
        let mut samples: Vec<Duration> = (0..PI_RUNS).map(|_| run_pi()).collect();
        samples.sort();
        (percentile(&samples, 0.5), percentile(&samples, 0.95))
    });
    server.assert_done(WARMUP + RUNS + pi.map_or(0, |_| PI_RUNS + 1));

    println!("| measure | value | target |");
    println!("|---|---|---|");
    println!(
        "| warm `pictl run` one-reply prompt, whole process, p50 ({RUNS} runs) | {p50:.2} ms | ≤ 5 ms |"
    );
    println!("| warm `pictl run`, p95 | {p95:.2} ms | |");
    println!("| warm `pictl run`, min | {min:.2} ms | |");
    if let Some((pi_p50, pi_p95)) = pi {
        println!("| `pi -p` same prompt, p50 ({PI_RUNS} runs) | {pi_p50:.1} ms | |");
        println!("| `pi -p` same prompt, p95 | {pi_p95:.1} ms | |");
    }
    println!(
        "{}",
        serde_json::json!({
            "bench": "pictl-run", "runP50Ms": p50, "runP95Ms": p95, "runMinMs": min,
            "piP50Ms": pi.map(|p| p.0), "piP95Ms": pi.map(|p| p.1),
        })
    );
}
