//! The extension host's costs, on the real host (Node and pi 0.73.1's runner from the test
//! peers):
//!
//! - a `tool_call` hook's round trip (pid → host → pid, one handler that returns nothing)
//!   around a no-op tool, p50/p95, against the same tool without extensions;
//! - the host's memory per session with 5 of pi's example extensions, and 20 such sessions
//!   sharing the one host.
//!
//! Run: `cargo bench -p pi-extensions --bench hooks` (after `tests/install-peers`). Prints a
//! Markdown table and a JSON line.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "bench binary"
)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_agent::{Tool, ToolFuture, ToolInvocation, ToolOutput};
use pi_extensions::tool::ExtensionGate;
use pi_extensions::{Choice, ExtensionHost, HostConfig, SessionPort};
use pi_protocol::v1::{ExtensionUi, UiAnswer, UiRequest};
use serde_json::{Value, json};

const CALLS: usize = 2000;
const SESSIONS: usize = 20;

/// A session nobody watches.
struct Quiet;

impl SessionPort for Quiet {
    fn ask(
        &self,
        _request: UiRequest,
        _timeout: Option<Duration>,
    ) -> futures_util::future::BoxFuture<'_, Option<UiAnswer>> {
        Box::pin(async { None })
    }
    fn has_ui(&self) -> futures_util::future::BoxFuture<'_, bool> {
        Box::pin(async { false })
    }
    fn action(&self, _action: Value) {}
    fn show(&self, _ui: ExtensionUi) {}
    fn entries(&self) -> futures_util::future::BoxFuture<'_, (Vec<Value>, Option<String>)> {
        Box::pin(async { (Vec::new(), None) })
    }
}

struct Noop;

static NO_PARAMETERS: std::sync::LazyLock<Value> =
    std::sync::LazyLock::new(|| json!({"type": "object"}));

impl Tool for Noop {
    fn name(&self) -> &str {
        "noop"
    }
    fn label(&self) -> &str {
        "noop"
    }
    fn description(&self) -> &str {
        "does nothing"
    }
    fn parameters(&self) -> &Value {
        &NO_PARAMETERS
    }
    fn execute(self: Arc<Self>, _invocation: ToolInvocation) -> ToolFuture {
        Box::pin(async { ToolOutput::text("ok") })
    }
}

fn invocation(n: usize) -> ToolInvocation {
    ToolInvocation {
        call_id: format!("call-{n}"),
        arguments: json!({}),
        cancel: tokio_util::sync::CancellationToken::new(),
        progress: pi_agent::ProgressSink::new().0,
    }
}

fn host(home: &Path, extensions: &[String]) -> Arc<ExtensionHost> {
    let agent_dir = home.join("agent");
    std::fs::create_dir_all(&agent_dir).unwrap();
    std::fs::write(
        agent_dir.join("settings.json"),
        json!({"extensions": extensions}).to_string(),
    )
    .unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../extensions/host/host.mjs");
    ExtensionHost::new(
        HostConfig {
            node: "node".into(),
            script: script.canonicalize().unwrap(),
            modules: Some(pi_test_support::peers::dir().join("node_modules")),
            log_path: home.join("host.log"),
            agent_dir,
            hook_timeout: pi_extensions::HOOK_TIMEOUT,
        },
        pi_tools::spawn::Spawner::direct(),
        Arc::new(pi_extensions::NoApprovals),
    )
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

async fn timed(tool: &Arc<dyn Tool>) -> (Duration, Duration) {
    let mut times = Vec::with_capacity(CALLS);
    for n in 0..CALLS + 200 {
        let started = Instant::now();
        let output = tool.clone().execute(invocation(n)).await;
        assert!(!output.is_error, "{output:?}");
        if n >= 200 {
            times.push(started.elapsed());
        }
    }
    times.sort();
    (percentile(&times, 0.5), percentile(&times, 0.95))
}

async fn bench() {
    let home = tempfile::tempdir().unwrap();
    let cwd = home.path().join("project");
    std::fs::create_dir_all(&cwd).unwrap();

    // One `tool_call` handler that lets every call through.
    let handler = home.path().join("pass.js");
    std::fs::write(
        &handler,
        "export default function (pi) { pi.on(\"tool_call\", () => undefined); }\n",
    )
    .unwrap();
    let hooked = host(
        &home.path().join("hooked"),
        &[handler.display().to_string()],
    );
    hooked.warm_up("s0", &cwd, &Choice::default(), Arc::new(Quiet));
    let set = hooked.opened("s0").await.unwrap();
    assert_eq!(set.extensions.len(), 1, "{set:?}");
    let plain: Arc<dyn Tool> = Arc::new(Noop);
    let gated = pi_agent::layered(
        plain.clone(),
        ExtensionGate {
            host: hooked.clone(),
            session_id: "s0".to_owned(),
        },
    );
    let (bare_p50, bare_p95) = timed(&plain).await;
    let (hook_p50, hook_p95) = timed(&gated).await;
    hooked.shutdown();

    // Five of pi's examples per session, 20 sessions on one host.
    let examples = pi_test_support::peers::pi_examples();
    let five: Vec<String> = [
        "hello.ts",
        "protected-paths.ts",
        "permission-gate.ts",
        "status-line.ts",
        "input-transform.ts",
    ]
    .iter()
    .map(|name| examples.join(name).display().to_string())
    .collect();
    let shared = host(&home.path().join("shared"), &five);
    shared.warm_up("m0", &cwd, &Choice::default(), Arc::new(Quiet));
    assert_eq!(shared.opened("m0").await.unwrap().extensions.len(), 5);
    let pid = shared.status().pid.unwrap();
    let one = rss_kib(pid);
    for n in 1..=SESSIONS {
        let id = format!("m{n}");
        shared.warm_up(&id, &cwd, &Choice::default(), Arc::new(Quiet));
        assert_eq!(shared.opened(&id).await.unwrap().extensions.len(), 5);
    }
    let many = rss_kib(pid);
    let starts = shared.status().starts;
    shared.shutdown();
    let per_session_mib = (many.saturating_sub(one)) as f64 / SESSIONS as f64 / 1024.0;

    println!("| measure | value |");
    println!("|---|---|");
    println!(
        "| no-op tool, no extensions: p50 / p95 | {:.1} µs / {:.1} µs |",
        bare_p50.as_secs_f64() * 1e6,
        bare_p95.as_secs_f64() * 1e6
    );
    println!(
        "| no-op tool behind one `tool_call` handler: p50 / p95 | {:.1} µs / {:.1} µs |",
        hook_p50.as_secs_f64() * 1e6,
        hook_p95.as_secs_f64() * 1e6
    );
    println!(
        "| hook round trip (difference of p50s) | {:.1} µs |",
        (hook_p50.saturating_sub(bare_p50)).as_secs_f64() * 1e6
    );
    println!(
        "| host RSS, 1 session × 5 extensions | {:.1} MiB |",
        one as f64 / 1024.0
    );
    println!(
        "| host RSS, {} sessions × 5 extensions (one host, {starts} start) | {:.1} MiB |",
        SESSIONS + 1,
        many as f64 / 1024.0
    );
    println!("| added per session with 5 extensions | {per_session_mib:.2} MiB |");
    println!(
        "{}",
        json!({
            "bench": "extension-hooks",
            "bare_p50_us": bare_p50.as_secs_f64() * 1e6,
            "hook_p50_us": hook_p50.as_secs_f64() * 1e6,
            "hook_p95_us": hook_p95.as_secs_f64() * 1e6,
            "round_trip_p50_us": hook_p50.saturating_sub(bare_p50).as_secs_f64() * 1e6,
            "host_rss_one_kib": one,
            "host_rss_many_kib": many,
            "sessions": SESSIONS + 1,
            "per_session_mib": per_session_mib,
        })
    );
}

fn main() {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(bench());
}
