//! What the guard costs a command: `bash` with `true`, started directly and under the guard
//! (`pid __guard --exec`, the release `pid` next to this bench), alternating, 200 calls each.
//!
//! Run: `cargo build --release --bins && cargo bench -p pi-tools --bench guard`.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "bench binary"
)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_agent::{ProgressSink, ToolInvocation};
use pi_tools::spawn::Spawner;
use pi_tools::{Artifacts, PathLocks, ShellConfig, ToolContext};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const CALLS: usize = 200;

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    // target/release/deps/guard-* → target/release/pid
    let pid = std::env::current_exe()
        .unwrap()
        .parent()
        .and_then(|deps| deps.parent())
        .unwrap()
        .join("pid");
    assert!(
        pid.is_file(),
        "{} is missing: run `cargo build --release --bins` first",
        pid.display()
    );
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().canonicalize().unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let context = |spawner: Spawner| {
        Arc::new(ToolContext {
            session_id: "bench".to_owned(),
            cwd: root.clone(),
            env: Arc::new(std::env::vars().collect::<BTreeMap<_, _>>()),
            shell: ShellConfig::default(),
            artifacts: Artifacts::new(root.join("artifacts"))
                .session("bench")
                .unwrap(),
            locks: PathLocks::new(),
            uris: None,
            places: None,
            files: None,
            sandbox: None,
            spawner,
            resize_images: true,
        })
    };
    let direct = context(Spawner::direct());
    let guarded = context(Spawner::guarded(pid, Some(0o022)));
    let call = |context: &Arc<ToolContext>| -> Duration {
        let tool = pi_tools::create_tool("bash", context).unwrap();
        let started = Instant::now();
        let output = runtime.block_on(tool.execute(ToolInvocation {
            call_id: "bench".to_owned(),
            arguments: json!({"command": "true"}),
            cancel: CancellationToken::new(),
            progress: ProgressSink::discard(),
        }));
        assert!(!output.is_error);
        started.elapsed()
    };
    let (mut plain, mut under_guard) = (Vec::new(), Vec::new());
    for _ in 0..CALLS {
        plain.push(call(&direct));
        under_guard.push(call(&guarded));
    }
    plain.sort();
    under_guard.sort();
    let ms = |d: Duration| format!("{:.2} ms", d.as_secs_f64() * 1000.0);
    let p = |v: &[Duration], q: f64| v[((v.len() - 1) as f64 * q) as usize];
    println!("| measure | value | target |\n|---|---|---|");
    println!(
        "| `bash` `true`, started directly, p50 / p95 of {CALLS} | {} / {} | |",
        ms(p(&plain, 0.5)),
        ms(p(&plain, 0.95))
    );
    println!(
        "| the same under the guard (`pid __guard --exec`), p50 / p95 | {} / {} | |",
        ms(p(&under_guard, 0.5)),
        ms(p(&under_guard, 0.95))
    );
}
