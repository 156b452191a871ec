//! L1 as a bench: 100 `pictl run`s at once against one release `pid`, each the ten-turn tool
//! scenario (write, read, edit, bash, ls) in its own directory, the scripted model server
//! answering with zero latency. Measures the wall time from spawning the first `pictl` to the
//! last one's exit, the daemon's CPU time, and the daemon's peak RSS (`VmHWM`).
//!
//! Run: `cargo build --release --bins && cargo bench -p pi-e2e --bench load`.
//! Prints a Markdown table for `docs/benchmarks.md` and one JSON line.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "bench binary"
)]

use std::time::Instant;

use pi_test_support::bench::{daemon_binary, env_number};
use pi_test_support::daemon::TempDaemon;
use pi_test_support::model_server::ModelServer;
use pi_test_support::procfs::{cpu_seconds, status_value};
use pi_test_support::{scenario, workspace_binary};
use serde_json::json;

/// Concurrent sessions, each its own `pictl` process (`PI_BENCH_SESSIONS` overrides it, e.g.
/// for a profiler).
fn sessions() -> usize {
    env_number("PI_BENCH_SESSIONS").unwrap_or(100)
}
/// Measured rounds, each on a fresh daemon; the best wall time is reported
/// (`PI_BENCH_ROUNDS` overrides it).
fn round_count() -> usize {
    env_number("PI_BENCH_ROUNDS").unwrap_or(3)
}

struct Round {
    wall: f64,
    daemon_cpu: f64,
    peak_rss_kib: u64,
    idle_rss_kib: u64,
    peak_threads: u64,
}

async fn round() -> Round {
    let server = ModelServer::start().await;
    server.respond_with(scenario::respond);
    let models = serde_json::to_string(&server.models_json("openai-completions")).unwrap();
    let mut daemon =
        TempDaemon::start_with_files(&daemon_binary(), "", &[(".pi/agent/models.json", models)])
            .await;
    let pictl = workspace_binary("pictl");
    let workspaces: Vec<tempfile::TempDir> = (0..sessions())
        .map(|_| tempfile::tempdir().unwrap())
        .collect();
    let idle_rss_kib = status_value(daemon.pid(), "VmRSS:");
    let cpu_before = cpu_seconds(daemon.pid());
    // The daemon's thread count, sampled while the runs go (runtime and blocking-pool
    // threads; each may hold its own allocator arena).
    let daemon_pid = daemon.pid();
    let (stop, mut stopped) = tokio::sync::watch::channel(false);
    let sampler = tokio::spawn(async move {
        let mut peak = 0;
        loop {
            peak = peak.max(status_value(daemon_pid, "Threads:"));
            tokio::select! {
                _ = stopped.changed() => return peak,
                () = tokio::time::sleep(std::time::Duration::from_millis(5)) => {}
            }
        }
    });
    let started = Instant::now();
    let runs = workspaces.iter().enumerate().map(|(n, dir)| {
        let mut command = tokio::process::Command::from(scenario::pictl_run(
            &pictl,
            &format!("s{n}"),
            dir.path(),
            daemon.env(),
            &[],
        ));
        command.kill_on_drop(true);
        async move { (n, command.output().await.unwrap()) }
    });
    let outputs = futures_util::future::join_all(runs).await;
    let wall = started.elapsed().as_secs_f64();
    let daemon_cpu = cpu_seconds(daemon.pid()) - cpu_before;
    let peak_rss_kib = status_value(daemon.pid(), "VmHWM:");
    stop.send_replace(true);
    let peak_threads = sampler.await.unwrap();
    for (n, output) in &outputs {
        assert!(
            output.status.success(),
            "run s{n} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            String::from_utf8_lossy(&output.stdout).contains(scenario::FINISHED),
            "run s{n} did not finish the scenario"
        );
        scenario::check_workspace(workspaces[*n].path(), &format!("s{n}")).unwrap();
    }
    server.assert_done(sessions() * scenario::TURNS);
    // A clean stop, so that a daemon under a profiler writes its profile.
    daemon.signal(rustix::process::Signal::TERM);
    daemon.wait_exit(std::time::Duration::from_secs(60)).await;
    Round {
        wall,
        daemon_cpu,
        peak_rss_kib,
        idle_rss_kib,
        peak_threads,
    }
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return; // `cargo test --benches` probes bench binaries this way.
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut rounds = Vec::new();
        for _ in 0..round_count() {
            rounds.push(round().await);
        }
        let best = rounds
            .iter()
            .min_by(|a, b| a.wall.total_cmp(&b.wall))
            .unwrap();
        let peak = rounds.iter().map(|round| round.peak_rss_kib).max().unwrap();
        println!("| measure | value | target |");
        println!("|---|---|---|");
        println!(
            "| {} concurrent `pictl run`s × {} turns: wall (best of {}) | {:.2} s | < 5 s |",
            sessions(),
            scenario::TURNS,
            round_count(),
            best.wall
        );
        println!(
            "| the same: daemon CPU (user+sys) | {:.2} s | |",
            best.daemon_cpu
        );
        println!(
            "| daemon peak RSS (highest of {} rounds; idle before: {:.1} MB) | {:.1} MB | < 100 MB |",
            round_count(),
            best.idle_rss_kib as f64 / 1024.0,
            peak as f64 / 1024.0
        );
        println!(
            "| daemon threads at most (sampled every 5 ms) | {} | |",
            rounds.iter().map(|round| round.peak_threads).max().unwrap()
        );
        println!(
            "{}",
            json!({
                "bench": "load", "sessions": sessions(), "turns": scenario::TURNS,
                "wallSeconds": rounds.iter().map(|round| round.wall).collect::<Vec<_>>(),
                "daemonCpuSeconds": rounds.iter().map(|round| round.daemon_cpu).collect::<Vec<_>>(),
                "peakRssKiB": rounds.iter().map(|round| round.peak_rss_kib).collect::<Vec<_>>(),
            })
        );
    });
}
