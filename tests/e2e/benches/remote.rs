//! What `pictl --remote` costs: whole-process `pictl daemon status` against a warm daemon
//! locally, through `--remote` to the same daemon over a real sshd on loopback (with ssh's
//! connection sharing, `ControlMaster`, as docs/cli.md recommends, and without), and the SSH
//! round trip itself (`ssh host true` over the shared connection), and through the shared link
//! `pictl --remote` leaves (`client/link.rs` in pi-client). Target: a remote command
//! costs less than one SSH round trip beyond the local one.
//!
//! Run: `cargo build --release --bins && cargo bench -p pi-e2e --bench remote` (needs
//! openssh-server: `tests/install-peers`).

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "bench binary"
)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use pi_test_support::sshd::{Sshd, user, wait_for_link};
use pi_test_support::workspace_binary;

const RUNS: usize = 100;
const WARMUP: usize = 10;

fn timed(command: &mut Command) -> Duration {
    let started = Instant::now();
    let output = command.output().unwrap();
    let took = started.elapsed();
    assert!(
        output.status.success(),
        "{command:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    took
}

fn samples(mut make: impl FnMut() -> Command) -> Vec<Duration> {
    for _ in 0..WARMUP {
        timed(&mut make());
    }
    let mut samples: Vec<Duration> = (0..RUNS).map(|_| timed(&mut make())).collect();
    samples.sort();
    samples
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index].as_secs_f64() * 1000.0
}

fn ssh(ssh_command: &str, port: u16, args: &[&str]) -> Command {
    let mut words = ssh_command.split_whitespace();
    let mut command = Command::new(words.next().unwrap());
    command
        .args(words)
        .args([
            "-T",
            "-p",
            &port.to_string(),
            &format!("{}@127.0.0.1", user()),
        ])
        .args(args);
    command
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return; // `cargo test --benches` probes bench binaries this way.
    }
    let pid = workspace_binary("pid");
    let pictl = workspace_binary("pictl");
    let far = tempfile::Builder::new()
        .prefix("pi-bench-far-")
        .tempdir()
        .unwrap();
    let near = tempfile::Builder::new()
        .prefix("pi-bench-near-")
        .tempdir()
        .unwrap();
    let local = |args: &[&str], home: &Path| {
        let mut command = Command::new(&pictl);
        command
            .args(args)
            .env("PI_HOME", home)
            .env("PI_DAEMON_BIN", &pid);
        command
    };
    timed(&mut local(&["daemon", "start"], far.path()));
    let env = vec![
        ("PI_HOME".to_owned(), far.path().display().to_string()),
        ("PI_DAEMON_BIN".to_owned(), pid.display().to_string()),
    ];
    let sshd = Sshd::start(near.path(), &env);
    let shared = format!(
        "-o ControlMaster=auto -o ControlPath={}/cm-%C -o ControlPersist=120",
        near.path().display()
    );
    let plain_ssh = sshd.ssh_command("");
    let shared_ssh = sshd.ssh_command(&shared);
    let remote = sshd.remote(&pictl);
    // Through `pictl bridge` (no shared link), or the shared link when `link`.
    let through = |ssh_command: &str, link: bool| {
        let mut command = local(&["--remote", &remote, "daemon", "status"], near.path());
        command.env("PI_REMOTE_SSH", ssh_command);
        if !link {
            command.env("PI_REMOTE_LINK", "off");
        }
        command
    };

    let local_status = samples(|| local(&["daemon", "status"], far.path()));
    let rtt_shared = samples(|| ssh(&shared_ssh, sshd.port, &["true"]));
    let remote_shared = samples(|| through(&shared_ssh, false));
    let rtt_plain = samples(|| ssh(&plain_ssh, sshd.port, &["true"]));
    let remote_plain = samples(|| through(&plain_ssh, false));
    // The first command opens the link in the background; once it is up, the rest use it.
    let first = timed(&mut through(&plain_ssh, true));
    wait_for_link(&near.path().join("run/remote"));
    let remote_link = samples(|| through(&plain_ssh, true));

    // The shared connection's master, and the daemon.
    let _ = ssh(&shared_ssh, sshd.port, &["-O", "exit"]).output();
    timed(&mut local(&["daemon", "stop"], far.path()));

    let p50 = |samples: &[Duration]| percentile(samples, 0.5);
    let p95 = |samples: &[Duration]| percentile(samples, 0.95);
    println!("| measure ({RUNS} runs each) | p50 | p95 |");
    println!("|---|---|---|");
    for (label, samples) in [
        ("local `pictl daemon status`", &local_status),
        (
            "`ssh host true`, shared connection (one SSH round trip)",
            &rtt_shared,
        ),
        (
            "`pictl --remote … daemon status`, through the shared link (the default)",
            &remote_link,
        ),
        (
            "`pictl --remote … daemon status`, `PI_REMOTE_LINK=off`, shared connection",
            &remote_shared,
        ),
        ("`ssh host true`, new connection each time", &rtt_plain),
        (
            "`pictl --remote … daemon status`, `PI_REMOTE_LINK=off`, new connection each time",
            &remote_plain,
        ),
    ] {
        println!(
            "| {label} | {:.2} ms | {:.2} ms |",
            p50(samples),
            p95(samples)
        );
    }
    let beyond = p50(&remote_link) - p50(&local_status);
    let bridged = p50(&remote_shared) - p50(&local_status);
    println!(
        "remote − local: {beyond:.2} ms through the link, {bridged:.2} ms through the bridge \
         (shared connection); one SSH command (`ssh host true`, shared connection): {:.2} ms; \
         the first command, which opens the link: {:.2} ms",
        p50(&rtt_shared),
        first.as_secs_f64() * 1000.0
    );
    println!(
        "{}",
        serde_json::json!({
            "bench": "remote", "localP50Ms": p50(&local_status),
            "sshTrueSharedP50Ms": p50(&rtt_shared), "remoteSharedP50Ms": p50(&remote_shared),
            "sshTruePlainP50Ms": p50(&rtt_plain), "remotePlainP50Ms": p50(&remote_plain),
            "remoteLinkP50Ms": p50(&remote_link), "firstMs": first.as_secs_f64() * 1000.0,
        })
    );
}
