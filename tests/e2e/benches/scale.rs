//! Scale: 1,000 `pictl run`s at once against one release `pid`, each the ten-turn tool
//! scenario (write, read, edit, bash, ls) in its own directory, the scripted model server
//! answering with zero latency: first as L1 runs it (`--no-session`), then with every session
//! kept (a user's plain `pictl run`); then the daemon's memory with the 1,000 kept sessions
//! loaded and idle, and again once they unloaded.
//!
//! Measures: errors (every run's result and files are checked), the wall time from spawning
//! the first `pictl` to the last one's exit, the daemon's CPU time and peak RSS (`VmHWM`),
//! the most its allocator had handed out and the most its sessions kept for replay
//! (`daemon/status` `memory`, sampled every 200 ms), its RSS when empty, with the sessions
//! loaded, and after they unloaded (`VmRSS`). Then, on a
//! fresh daemon, 1,000 sessions created by 50 clients at once: the daemon's RSS with them
//! loaded and idle, and once they unloaded.
//!
//! Run: `cargo build --release --bins && cargo bench -p pi-e2e --bench scale`
//! (`PI_BENCH_SESSIONS`, `PI_BENCH_ROUNDS` change the size and rounds; `PI_BENCH_PART`
//! `no-session`, `kept` or `created` runs one part; `PI_BENCH_PID` runs another daemon binary). Prints a Markdown table for `docs/benchmarks.md` and one JSON line.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "bench binary"
)]

use std::time::{Duration, Instant};

use pi_protocol::v1::{DaemonStatus, DaemonStatusParams};
use pi_test_support::bench::{daemon_binary, env_number};
use pi_test_support::daemon::TempDaemon;
use pi_test_support::model_server::ModelServer;
use pi_test_support::procfs::{cpu_seconds, status_value};
use pi_test_support::{scenario, workspace_binary};
use serde_json::json;

/// How long an idle session stays loaded in the bench's daemon: longer than the runs take,
/// so all of them are loaded at the end, short enough to see them unload.
const SESSION_IDLE_SECS: u64 = 45;

fn sessions() -> usize {
    env_number("PI_BENCH_SESSIONS").unwrap_or(1000)
}

fn round_count() -> usize {
    env_number("PI_BENCH_ROUNDS").unwrap_or(1)
}

/// 1,000 sessions created (loaded, idle) on a fresh daemon, then unloaded.
struct Created {
    empty_rss_kib: u64,
    loaded: u32,
    loaded_rss_kib: u64,
    unloaded_rss_kib: u64,
}

async fn created() -> Created {
    use pi_protocol::v1::{SessionCreate, SessionCreateParams};
    let server = ModelServer::start().await;
    let models = serde_json::to_string(&server.models_json("openai-completions")).unwrap();
    // Unloaded 5 s after they went idle: long enough to measure them loaded.
    let config = "[limits]\nsession_idle_secs = 5\n";
    let mut daemon = TempDaemon::start_with_files(
        &daemon_binary(),
        config,
        &[(".pi/agent/models.json", models)],
    )
    .await;
    let empty_rss_kib = status_value(daemon.pid(), "VmRSS:");
    let workspace = tempfile::tempdir().unwrap();
    // 50 clients creating 20 sessions each, at once.
    let creators = (0..50).map(|_| {
        let daemon = &daemon;
        let cwd = workspace.path().display().to_string();
        async move {
            let (client, _events) = daemon.client().await;
            for _ in 0..sessions() / 50 {
                client
                    .call::<SessionCreate>(&SessionCreateParams {
                        cwd: cwd.clone(),
                        model: Some("scripted/scripted-model".to_owned()),
                        ..SessionCreateParams::default()
                    })
                    .await
                    .unwrap();
            }
            client.close().await;
        }
    });
    futures_util::future::join_all(creators).await;
    let loaded = loaded_sessions(&daemon).await;
    let loaded_rss_kib = status_value(daemon.pid(), "VmRSS:");
    let started = Instant::now();
    while loaded_sessions(&daemon).await > 0 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the sessions did not unload"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // Allocators give freed memory back after a delay (jemalloc decays dirty pages over 10 s).
    tokio::time::sleep(Duration::from_secs(15)).await;
    let unloaded_rss_kib = status_value(daemon.pid(), "VmRSS:");
    daemon.signal(rustix::process::Signal::TERM);
    daemon.wait_exit(Duration::from_secs(60)).await;
    Created {
        empty_rss_kib,
        loaded,
        loaded_rss_kib,
        unloaded_rss_kib,
    }
}

/// How the runs treat their sessions.
#[derive(Clone, Copy, PartialEq)]
enum Form {
    /// `pictl run --no-session`, as L1 runs the scenario: each session goes with its run.
    NoSession,
    /// `pictl run`: each session stays stored and loaded (idle) after its run.
    Kept,
}

impl Form {
    fn label(self) -> &'static str {
        match self {
            Form::NoSession => "`--no-session`",
            Form::Kept => "sessions kept",
        }
    }
}

struct Round {
    form: Form,
    wall: f64,
    daemon_cpu: f64,
    empty_rss_kib: u64,
    peak_rss_kib: u64,
    peak_threads: u64,
    // The most `daemon/status` reported while the runs went (bytes).
    peak_heap: u64,
    peak_recent: u64,
    // The heap with the kept sessions loaded and idle, and once they unloaded (bytes).
    loaded_heap: u64,
    unloaded_heap: u64,
    loaded: u32,
    loaded_rss_kib: u64,
    unloaded_rss_kib: u64,
    unload_wait: f64,
}

async fn status(daemon: &TempDaemon) -> pi_protocol::v1::DaemonStatusResponse {
    let (client, _events) = daemon.client().await;
    let status = client
        .call::<DaemonStatus>(&DaemonStatusParams {})
        .await
        .unwrap();
    client.close().await;
    status
}

async fn loaded_sessions(daemon: &TempDaemon) -> u32 {
    status(daemon).await.sessions.loaded
}

/// What the daemon's allocator has handed out now.
async fn heap_bytes(daemon: &TempDaemon) -> u64 {
    status(daemon).await.memory.unwrap().heap_bytes.unwrap()
}

async fn round(form: Form) -> Round {
    let server = ModelServer::start().await;
    server.respond_with(scenario::respond);
    let models = serde_json::to_string(&server.models_json("openai-completions")).unwrap();
    let config = format!("[limits]\nsession_idle_secs = {SESSION_IDLE_SECS}\n");
    let mut daemon = TempDaemon::start_with_files(
        &daemon_binary(),
        &config,
        &[(".pi/agent/models.json", models)],
    )
    .await;
    let pictl = workspace_binary("pictl");
    let workspaces: Vec<tempfile::TempDir> = (0..sessions())
        .map(|_| tempfile::tempdir().unwrap())
        .collect();
    let empty_rss_kib = status_value(daemon.pid(), "VmRSS:");
    let cpu_before = cpu_seconds(daemon.pid());
    // The daemon's thread count every 10 ms and its heap every 200 ms, while the runs go.
    let daemon_pid = daemon.pid();
    let (stop, mut stopped) = tokio::sync::watch::channel(false);
    let (status_client, _events) = daemon.client().await;
    let sampler = tokio::spawn(async move {
        let (mut threads, mut heap, mut recent) = (0, 0, 0);
        for tick in 0u64.. {
            threads = threads.max(status_value(daemon_pid, "Threads:"));
            if tick % 20 == 0 {
                let status = status_client
                    .call::<DaemonStatus>(&DaemonStatusParams {})
                    .await
                    .unwrap();
                let memory = status.memory.unwrap();
                heap = heap.max(memory.heap_bytes.unwrap());
                recent = recent.max(memory.recent_events_bytes);
            }
            tokio::select! {
                _ = stopped.changed() => break,
                () = tokio::time::sleep(Duration::from_millis(10)) => {}
            }
        }
        status_client.close().await;
        (threads, heap, recent)
    });
    let started = Instant::now();
    let runs = workspaces.iter().enumerate().map(|(n, dir)| {
        let marker = format!("s{n}");
        let mut command = tokio::process::Command::from(match form {
            Form::NoSession => scenario::pictl_run(&pictl, &marker, dir.path(), daemon.env(), &[]),
            Form::Kept => scenario::pictl_run_kept(&pictl, &marker, dir.path(), daemon.env()),
        });
        command.kill_on_drop(true);
        async move { (n, command.output().await.unwrap()) }
    });
    let outputs = futures_util::future::join_all(runs).await;
    let wall = started.elapsed().as_secs_f64();
    let daemon_cpu = cpu_seconds(daemon.pid()) - cpu_before;
    let peak_rss_kib = status_value(daemon.pid(), "VmHWM:");
    stop.send_replace(true);
    let (peak_threads, peak_heap, peak_recent) = sampler.await.unwrap();
    let mut failures = Vec::new();
    for (n, output) in &outputs {
        let finished = String::from_utf8_lossy(&output.stdout).contains(scenario::FINISHED);
        let checked = scenario::check_workspace(workspaces[*n].path(), &format!("s{n}"));
        if !output.status.success() || !finished || checked.is_err() {
            failures.push(format!(
                "s{n}: {} {}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} runs failed: {:#?}",
        failures.len(),
        sessions(),
        &failures[..failures.len().min(5)]
    );
    server.assert_done(sessions() * scenario::TURNS);
    let after = match form {
        // Nothing stays loaded: the memory once the runs are over.
        Form::NoSession => {
            let rss_kib = status_value(daemon.pid(), "VmRSS:");
            After {
                loaded: loaded_sessions(&daemon).await,
                loaded_rss_kib: rss_kib,
                loaded_heap: 0,
                unloaded_rss_kib: rss_kib,
                unloaded_heap: 0,
                unload_wait: 0.0,
            }
        }
        Form::Kept => kept_sessions(&daemon).await,
    };
    daemon.signal(rustix::process::Signal::TERM);
    daemon.wait_exit(Duration::from_secs(60)).await;
    Round {
        form,
        wall,
        daemon_cpu,
        empty_rss_kib,
        peak_rss_kib,
        peak_threads,
        peak_heap,
        peak_recent,
        loaded: after.loaded,
        loaded_heap: after.loaded_heap,
        unloaded_heap: after.unloaded_heap,
        loaded_rss_kib: after.loaded_rss_kib,
        unloaded_rss_kib: after.unloaded_rss_kib,
        unload_wait: after.unload_wait,
    }
}

/// The daemon's memory after the runs: with the sessions loaded, and once they unloaded.
struct After {
    loaded: u32,
    loaded_rss_kib: u64,
    loaded_heap: u64,
    unloaded_rss_kib: u64,
    unloaded_heap: u64,
    unload_wait: f64,
}

/// [`After`] for kept sessions: loaded and idle once every client is gone, then unloaded.
async fn kept_sessions(daemon: &TempDaemon) -> After {
    tokio::time::sleep(Duration::from_secs(2)).await;
    let loaded = loaded_sessions(daemon).await;
    let loaded_rss_kib = status_value(daemon.pid(), "VmRSS:");
    let loaded_heap = heap_bytes(daemon).await;
    let unload_started = Instant::now();
    while loaded_sessions(daemon).await > 0 {
        assert!(
            unload_started.elapsed() < Duration::from_secs(SESSION_IDLE_SECS * 3),
            "the sessions did not unload"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let unload_wait = unload_started.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_secs(15)).await;
    After {
        loaded,
        loaded_rss_kib,
        loaded_heap,
        unloaded_rss_kib: status_value(daemon.pid(), "VmRSS:"),
        unloaded_heap: heap_bytes(daemon).await,
        unload_wait,
    }
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return; // `cargo test --benches` probes bench binaries this way.
    }
    // A thousand children's pipes: raise this process's open-files limit as far as it goes.
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    let _ = rustix::process::setrlimit(
        rustix::process::Resource::Nofile,
        rustix::process::Rlimit {
            current: limit.maximum,
            maximum: limit.maximum,
        },
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut rounds = Vec::new();
        let mut creations = Vec::new();
        // `PI_BENCH_PART=created|no-session|kept` measures only that part.
        let part = std::env::var("PI_BENCH_PART").unwrap_or_default();
        let wanted = |name: &str| part.is_empty() || part == name;
        for _ in 0..round_count() {
            if wanted("no-session") {
                rounds.push(round(Form::NoSession).await);
            }
            if wanted("kept") {
                rounds.push(round(Form::Kept).await);
            }
            if wanted("created") {
                creations.push(created().await);
            }
        }
        let mb = |kib: u64| kib as f64 / 1024.0;
        let n = sessions();
        println!("| measure | value | target |");
        println!("|---|---|---|");
        for round in &rounds {
            println!(
                "| {n} concurrent `pictl run`s × {} turns, {}: errors, wall | 0, {:.1} s | 0, < 30 s |",
                scenario::TURNS,
                round.form.label(),
                round.wall
            );
            println!("| the same: daemon CPU (user+sys) | {:.1} s | |", round.daemon_cpu);
            println!(
                "| daemon peak RSS (`VmHWM`) | {:.1} MB | < 150 MB |",
                mb(round.peak_rss_kib)
            );
            println!(
                "| the most the allocator had handed out; of it, events kept for replay (sampled every 200 ms) | {:.1} MB; {:.1} MB | |",
                round.peak_heap as f64 / 1048576.0,
                round.peak_recent as f64 / 1048576.0
            );
            println!(
                "| daemon threads at most (sampled every 10 ms) | {} | |",
                round.peak_threads
            );
            if round.form == Form::NoSession {
                println!(
                    "| daemon RSS: empty → after the runs ({} sessions loaded) | {:.1} → {:.1} MB | |",
                    round.loaded,
                    mb(round.empty_rss_kib),
                    mb(round.loaded_rss_kib)
                );
                continue;
            }
            println!(
                "| daemon RSS: empty → {} sessions loaded and idle after their runs → all unloaded ({:.0} s after the check) | {:.1} → {:.1} → {:.1} MB | (measured; the targets are the created sessions') |",
                round.loaded,
                round.unload_wait,
                mb(round.empty_rss_kib),
                mb(round.loaded_rss_kib),
                mb(round.unloaded_rss_kib)
            );
            println!(
                "| the allocator's heap: loaded and idle → unloaded | {:.1} → {:.1} MB | |",
                round.loaded_heap as f64 / 1048576.0,
                round.unloaded_heap as f64 / 1048576.0
            );
        }
        for created in &creations {
            println!(
                "| daemon RSS: empty → {} sessions created, loaded and idle → all unloaded | {:.1} → {:.1} → {:.1} MB | loaded < 40 MB, unloaded within 10 MB of empty |",
                created.loaded,
                mb(created.empty_rss_kib),
                mb(created.loaded_rss_kib),
                mb(created.unloaded_rss_kib)
            );
        }
        println!(
            "{}",
            json!({
                "bench": "scale",
                "createdRssKiB": creations.iter().map(|c| [c.empty_rss_kib, c.loaded_rss_kib, c.unloaded_rss_kib]).collect::<Vec<_>>(), "sessions": n, "turns": scenario::TURNS,
                "forms": rounds.iter().map(|round| round.form.label()).collect::<Vec<_>>(),
                "wallSeconds": rounds.iter().map(|round| round.wall).collect::<Vec<_>>(),
                "peakHeapBytes": rounds.iter().map(|round| round.peak_heap).collect::<Vec<_>>(),
                "peakRecentEventsBytes": rounds.iter().map(|round| round.peak_recent).collect::<Vec<_>>(),
                "loadedHeapBytes": rounds.iter().map(|round| round.loaded_heap).collect::<Vec<_>>(),
                "unloadedHeapBytes": rounds.iter().map(|round| round.unloaded_heap).collect::<Vec<_>>(),
                "daemonCpuSeconds": rounds.iter().map(|round| round.daemon_cpu).collect::<Vec<_>>(),
                "emptyRssKiB": rounds.iter().map(|round| round.empty_rss_kib).collect::<Vec<_>>(),
                "peakRssKiB": rounds.iter().map(|round| round.peak_rss_kib).collect::<Vec<_>>(),
                "loadedRssKiB": rounds.iter().map(|round| round.loaded_rss_kib).collect::<Vec<_>>(),
                "unloadedRssKiB": rounds.iter().map(|round| round.unloaded_rss_kib).collect::<Vec<_>>(),
            })
        );
    });
}
