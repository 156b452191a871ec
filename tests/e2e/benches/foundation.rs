//! Foundation benchmarks: whole-process `pictl daemon status` round trip against a warm
//! daemon, cold start through `pictl daemon start`, and the daemon's idle RSS.
//!
//! Run: `cargo build --release --bins && cargo bench -p pi-e2e --bench foundation`.
//! Prints a Markdown table for `docs/benchmarks.md` and one JSON line.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "bench binary"
)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use pi_test_support::workspace_binary;

const RUNS: usize = 300;
const WARMUP: usize = 20;

fn pictl(pictl: &Path, pid: &Path, home: &Path, args: &[&str]) -> (Duration, serde_json::Value) {
    let started = Instant::now();
    let output = Command::new(pictl)
        .args(args)
        .env("PI_HOME", home)
        .env("PI_DAEMON_BIN", pid)
        .output()
        .unwrap();
    let took = started.elapsed();
    assert!(
        output.status.success(),
        "pictl {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    (took, serde_json::from_slice(&output.stdout).unwrap())
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index].as_secs_f64() * 1000.0
}

fn rss_kib(pid: u64) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find(|line| line.starts_with("VmRSS:"))
        .unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return; // `cargo test --benches` probes bench binaries this way.
    }
    let pid = workspace_binary("pid");
    let pictl_bin = workspace_binary("pictl");
    let home = tempfile::Builder::new()
        .prefix("pi-bench-")
        .tempdir()
        .unwrap();

    let (cold_start, started) = pictl(&pictl_bin, &pid, home.path(), &["daemon", "start"]);
    let daemon_pid = started["pid"].as_u64().unwrap();
    // Let the daemon settle, then read its idle footprint.
    std::thread::sleep(Duration::from_secs(2));
    let idle_rss = rss_kib(daemon_pid);

    for _ in 0..WARMUP {
        pictl(&pictl_bin, &pid, home.path(), &["daemon", "status"]);
    }
    let mut samples: Vec<Duration> = (0..RUNS)
        .map(|_| pictl(&pictl_bin, &pid, home.path(), &["daemon", "status"]).0)
        .collect();
    samples.sort();
    let rss_after = rss_kib(daemon_pid);
    pictl(&pictl_bin, &pid, home.path(), &["daemon", "stop"]);

    let (p50, p95, min) = (
        percentile(&samples, 0.5),
        percentile(&samples, 0.95),
        samples[0].as_secs_f64() * 1000.0,
    );
    println!("| measure | value | target |");
    println!("|---|---|---|");
    println!("| warm `pictl daemon status` p50 ({RUNS} runs) | {p50:.2} ms | < 10 ms |");
    println!("| warm `pictl daemon status` p95 | {p95:.2} ms | |");
    println!("| warm `pictl daemon status` min | {min:.2} ms | |");
    println!(
        "| cold `pictl daemon start` (spawn + ready) | {:.1} ms | |",
        cold_start.as_secs_f64() * 1000.0
    );
    println!(
        "| daemon idle RSS | {:.1} MB | < 15 MB |",
        idle_rss as f64 / 1024.0
    );
    println!(
        "| daemon RSS after {} status calls | {:.1} MB | |",
        RUNS + WARMUP,
        rss_after as f64 / 1024.0
    );
    println!(
        "{}",
        serde_json::json!({
            "bench": "foundation", "statusP50Ms": p50, "statusP95Ms": p95, "coldStartMs": cold_start.as_secs_f64() * 1000.0,
            "idleRssKiB": idle_rss, "rssAfterKiB": rss_after,
        })
    );
}
