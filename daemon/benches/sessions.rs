//! Session benchmarks on an in-process daemon (real socket, store and actors) with a
//! zero-latency scripted model and a no-op tool:
//!
//! - daemon overhead per agent turn (prompt → events → stored entries), p50/p95;
//! - 100 sessions each running 10 tool turns concurrently: wall and CPU time;
//! - daemon overhead per turn while 100 sessions run at once against a model that takes
//!   100 ms per reply, the sessions' starts spread over those 100 ms (a turn's wall time minus
//!   the time the model actually slept), p50/p95 over the sessions;
//! - memory per idle loaded session, and for 1,000 stored sessions unloaded.
//!
//! Run: `cargo bench -p pi-daemon --bench sessions`. Prints a Markdown table and a JSON line.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "bench binary"
)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pi_agent::{Tool, ToolFuture, ToolInvocation, ToolOutput};
use pi_client::{Client, Endpoint, Notifications};
use pi_daemon::config::Config;
use pi_daemon::session::{SessionServices, SessionSettings};
use pi_daemon::state::DaemonState;
use pi_daemon::store::Store;
use pi_daemon::testing::{FauxModels, StaticTools};
use pi_llm::faux::FauxProvider;
use pi_llm::{
    AssistantMessage, AssistantStream, Context, DoneReason, Message, Model, Provider, StopReason,
    StreamEvent, StreamOptions, ToolCall,
};
use pi_protocol::v1::*;
use serde_json::{Value, json};

/// Answers with a `noop` tool call until the context holds `turns` tool results, then text.
/// Each reply starts after `latency`; the time actually slept is summed per prompt text.
struct TurnsProvider {
    turns: usize,
    latency: Duration,
    slept: Arc<Mutex<HashMap<String, Duration>>>,
}

/// The text of the first user message: the prompt that names the session's run.
fn first_prompt(context: &Context) -> String {
    context
        .messages
        .iter()
        .find_map(|message| match message {
            Message::User(user) => user.content.iter().find_map(|content| match content {
                pi_llm::UserContent::Text(text) => Some(text.text.clone()),
                pi_llm::UserContent::Image(_) => None,
            }),
            _ => None,
        })
        .unwrap_or_default()
}

impl Provider for TurnsProvider {
    fn stream(&self, model: &Model, context: &Context, _options: StreamOptions) -> AssistantStream {
        let (sender, stream) = AssistantStream::channel(model);
        let mut message = stream.partial().clone();
        let results = context
            .messages
            .iter()
            .rev()
            .take_while(|m| !matches!(m, Message::User(_)))
            .filter(|m| matches!(m, Message::ToolResult(_)))
            .count();
        let done_with_tools = results >= self.turns;
        let latency = self.latency;
        let slept = self.slept.clone();
        let prompt = first_prompt(context);
        tokio::spawn(async move {
            if !latency.is_zero() {
                let started = Instant::now();
                tokio::time::sleep(latency).await;
                *slept.lock().unwrap().entry(prompt).or_default() += started.elapsed();
            }
            sender.send(StreamEvent::Start).await;
            if done_with_tools {
                message
                    .content
                    .push(pi_llm::AssistantContent::Text(pi_llm::TextContent {
                        text: "done".into(),
                        text_signature: None,
                    }));
                message.stop_reason = StopReason::Stop;
                sender
                    .send(StreamEvent::TextStart { content_index: 0 })
                    .await;
                sender
                    .send(StreamEvent::TextDelta {
                        content_index: 0,
                        delta: "done".into(),
                    })
                    .await;
                sender
                    .send(StreamEvent::TextEnd {
                        content_index: 0,
                        content: "done".into(),
                        signature: None,
                    })
                    .await;
                sender
                    .send(StreamEvent::Done {
                        reason: DoneReason::Stop,
                        message: Box::new(message),
                    })
                    .await;
            } else {
                let call = ToolCall {
                    id: format!("call-{results}"),
                    name: "noop".into(),
                    arguments: json!({}).into(),
                    thought_signature: None,
                };
                message
                    .content
                    .push(pi_llm::AssistantContent::ToolCall(call.clone()));
                message.stop_reason = StopReason::ToolUse;
                sender
                    .send(StreamEvent::ToolcallStart {
                        content_index: 0,
                        id: call.id.clone(),
                        tool_name: "noop".into(),
                    })
                    .await;
                sender
                    .send(StreamEvent::ToolcallEnd {
                        content_index: 0,
                        tool_call: call,
                    })
                    .await;
                sender
                    .send(StreamEvent::Done {
                        reason: DoneReason::ToolUse,
                        message: Box::new(AssistantMessage { ..message }),
                    })
                    .await;
            }
        });
        stream
    }
}

/// The model's reply latency in the paced run.
const PACED_LATENCY: Duration = Duration::from_millis(100);

struct NoopTool {
    schema: Value,
}

impl Tool for NoopTool {
    fn name(&self) -> &str {
        "noop"
    }
    fn label(&self) -> &str {
        "No-op"
    }
    fn description(&self) -> &str {
        "Does nothing"
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    fn execute(self: Arc<Self>, _invocation: ToolInvocation) -> ToolFuture {
        Box::pin(async { ToolOutput::text("ok") })
    }
}

struct Bench {
    state: Arc<DaemonState>,
    slept: Arc<Mutex<HashMap<String, Duration>>>,
    _home: tempfile::TempDir,
}

async fn start(turns: usize) -> Bench {
    start_paced(turns, Duration::ZERO).await
}

async fn start_paced(turns: usize, latency: Duration) -> Bench {
    start_with(turns, latency, Duration::from_secs(3600)).await
}

async fn start_with(turns: usize, latency: Duration, idle_unload: Duration) -> Bench {
    let slept = Arc::new(Mutex::new(HashMap::new()));
    let home = tempfile::Builder::new()
        .prefix("pi-bench-sessions-")
        .tempdir()
        .unwrap();
    let paths = pi_test_support::daemon::paths_for(home.path());
    pi_daemon::lifecycle::prepare_directories(&paths).unwrap();
    let store = Store::open(&paths.database_path()).await.unwrap();
    let services = SessionServices {
        hooks: std::sync::Arc::new(pi_session::services::NoHooks),
        models: Arc::new(FauxModels {
            faux: FauxProvider::new(),
            provider: Some(Arc::new(TurnsProvider {
                turns,
                latency,
                slept: slept.clone(),
            })),
        }),
        tools: Arc::new(StaticTools {
            tools: vec![Arc::new(NoopTool {
                schema: json!({"type": "object", "properties": {}}),
            })],
        }),
        settings: SessionSettings {
            idle_unload,
            ..SessionSettings::default()
        },
    };
    let mut config = Config::default();
    config.websocket.enabled = false;
    let state = Arc::new(DaemonState::new(
        paths,
        config,
        store,
        Supervisor::Manual,
        services,
    ));
    tokio::spawn(pi_daemon::serve_state(state.clone()));
    let bench = Bench {
        state,
        slept,
        _home: home,
    };
    while bench.try_client().await.is_none() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    bench
}

impl Bench {
    async fn try_client(&self) -> Option<(Client, Notifications)> {
        Client::connect(
            &Endpoint::Unix(self.state.paths.socket_path()),
            pi_client::client_info("bench", "0"),
            ClientCapabilities::default(),
        )
        .await
        .ok()
    }

    async fn session(&self, client: &Client) -> String {
        let cwd = self._home.path().display().to_string();
        client
            .call::<SessionCreate>(&SessionCreateParams {
                cwd,
                ..Default::default()
            })
            .await
            .unwrap()
            .id
    }
}

async fn until_agent_end(notifications: &mut Notifications, session_id: &str) {
    loop {
        let notification = notifications.next().await.unwrap();
        let Some(params) = notification.params else {
            continue;
        };
        if params["sessionId"] == session_id && params["event"]["type"] == "agent_end" {
            return;
        }
    }
}

fn cpu_seconds() -> f64 {
    pi_test_support::procfs::cpu_seconds(std::process::id())
}

fn rss_kib() -> u64 {
    pi_test_support::procfs::status_value(std::process::id(), "VmRSS:")
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize].as_secs_f64() * 1000.0
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        // 1. Overhead per turn: prompts of one tool turn plus a final text turn.
        let bench = start(1).await;
        let (client, mut notifications) = bench.try_client().await.unwrap();
        let session = bench.session(&client).await;
        client.call::<SessionAttach>(&SessionAttachParams { session_id: session.clone(), after_seq: None }).await.unwrap();
        let mut per_turn = Vec::new();
        for index in 0..320 {
            let started = Instant::now();
            client.call::<SessionPrompt>(&SessionMessageParams { session_id: session.clone(), text: format!("prompt {index}"), images: vec![] }).await.unwrap();
            until_agent_end(&mut notifications, &session).await;
            if index >= 20 {
                per_turn.push(started.elapsed() / 2);
            }
        }
        per_turn.sort();

        // 2. 100 sessions × 10 tool turns, concurrently.
        let bench = start(10).await;
        let mut sessions = Vec::new();
        for _ in 0..100 {
            let (client, notifications) = bench.try_client().await.unwrap();
            let id = bench.session(&client).await;
            client.call::<SessionAttach>(&SessionAttachParams { session_id: id.clone(), after_seq: None }).await.unwrap();
            sessions.push((client, notifications, id));
        }
        let cpu_before = cpu_seconds();
        let started = Instant::now();
        let runs = sessions.into_iter().map(|(client, mut notifications, id)| {
            tokio::spawn(async move {
                client.call::<SessionPrompt>(&SessionMessageParams { session_id: id.clone(), text: "go".into(), images: vec![] }).await.unwrap();
                until_agent_end(&mut notifications, &id).await;
            })
        });
        for run in futures_join(runs.collect()).await {
            run.unwrap();
        }
        let concurrent_wall = started.elapsed();
        let concurrent_cpu = cpu_seconds() - cpu_before;

        // 2b. The same 100 sessions × 10 tool turns against a model that takes 100 ms per
        // reply, so the daemon is not saturated: what each turn costs beyond the model.
        let bench = start_paced(10, PACED_LATENCY).await;
        let mut sessions = Vec::new();
        for n in 0..100 {
            let (client, notifications) = bench.try_client().await.unwrap();
            let id = bench.session(&client).await;
            client.call::<SessionAttach>(&SessionAttachParams { session_id: id.clone(), after_seq: None }).await.unwrap();
            sessions.push((client, notifications, id, format!("paced {n}")));
        }
        let paced_cpu_before = cpu_seconds();
        let paced_started = Instant::now();
        // Staggered over one model latency, as independent sessions are: started all at
        // once, every turn of every session would wake on the same timer tick and queue
        // behind the other 99.
        let runs = sessions.into_iter().enumerate().map(|(n, (client, mut notifications, id, prompt))| {
            tokio::spawn(async move {
                tokio::time::sleep(PACED_LATENCY * n as u32 / 100).await;
                let started = Instant::now();
                client.call::<SessionPrompt>(&SessionMessageParams { session_id: id.clone(), text: prompt.clone(), images: vec![] }).await.unwrap();
                until_agent_end(&mut notifications, &id).await;
                (prompt, started.elapsed())
            })
        });
        let mut paced = Vec::new();
        for run in futures_join(runs.collect()).await {
            paced.push(run.unwrap());
        }
        let paced_wall = paced_started.elapsed();
        let paced_cpu = cpu_seconds() - paced_cpu_before;
        let mut paced_per_turn: Vec<Duration> = {
            let slept = bench.slept.lock().unwrap();
            // Ten tool turns and the final text turn: eleven model replies per session.
            paced.iter().map(|(prompt, wall)| wall.saturating_sub(slept[prompt]) / 11).collect()
        };
        paced_per_turn.sort();

        // 3. Memory: 1,000 created sessions, each loaded and idle (a created session starts
        // loaded), then the same after all of them unloaded (after the short idle time set
        // here; freed memory the allocator keeps counts).
        let bench = start_with(1, Duration::ZERO, Duration::from_secs(5)).await;
        let (client, _n) = bench.try_client().await.unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        let rss_start = rss_kib();
        for _ in 0..1000 {
            bench.session(&client).await;
        }
        let loaded = bench.state.sessions.loaded_count();
        let rss_loaded = rss_kib();
        while bench.state.sessions.loaded_count() > 0 {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let rss_stored = rss_kib();
        let database_bytes = std::fs::metadata(bench.state.paths.database_path()).map(|m| m.len()).unwrap_or(0)
            + std::fs::metadata(bench.state.paths.database_path().with_extension("db-wal")).map(|m| m.len()).unwrap_or(0);

        let p50 = percentile(&per_turn, 0.5);
        let p95 = percentile(&per_turn, 0.95);
        let per_idle_session_kib = (rss_loaded.saturating_sub(rss_start)) as f64 / f64::from(loaded.max(1));
        println!("| measure | value | target |");
        println!("|---|---|---|");
        println!("| daemon overhead per agent turn, p50 ({} prompts × 2 turns) | {:.3} ms | < 1 ms |", per_turn.len(), p50);
        println!("| daemon overhead per agent turn, p95 | {:.3} ms | |", p95);
        println!("| 100 sessions × 10 tool turns concurrently: wall | {:.0} ms | |", concurrent_wall.as_secs_f64() * 1000.0);
        println!("| 100 sessions × 10 tool turns concurrently: CPU (user+sys) | {:.2} s | |", concurrent_cpu);
        let paced_p50 = percentile(&paced_per_turn, 0.5);
        let paced_p95 = percentile(&paced_per_turn, 0.95);
        println!("| daemon overhead per turn, 100 concurrent sessions with a 100 ms model, p50 over sessions | {paced_p50:.3} ms | < 2 ms |");
        println!("| daemon overhead per turn, 100 concurrent sessions with a 100 ms model, p95 | {paced_p95:.3} ms | |");
        println!("| the same run: wall, CPU (user+sys) | {:.2} s, {paced_cpu:.2} s | |", paced_wall.as_secs_f64());
        println!("| memory per idle loaded session, its stored rows included ({loaded} created, loaded) | {per_idle_session_kib:.1} KB | < 200 KB |");
        println!("| daemon RSS growth once the 1,000 sessions unloaded | {:.1} MB | |", rss_stored.saturating_sub(rss_start) as f64 / 1024.0);
        println!("| database size with 1,000 sessions | {:.1} MB | |", database_bytes as f64 / 1_048_576.0);
        println!(
            "{}",
            json!({
                "bench": "sessions", "turnP50Ms": p50, "turnP95Ms": p95,
                "concurrentWallMs": concurrent_wall.as_secs_f64() * 1000.0, "concurrentCpuS": concurrent_cpu,
                "pacedTurnP50Ms": paced_p50, "pacedTurnP95Ms": paced_p95,
                "idleSessionKiB": per_idle_session_kib, "storedRssGrowthKiB": rss_stored.saturating_sub(rss_start),
                "databaseBytes": database_bytes,
            })
        );
    });
}

async fn futures_join<T>(
    handles: Vec<tokio::task::JoinHandle<T>>,
) -> Vec<Result<T, tokio::task::JoinError>> {
    let mut out = Vec::with_capacity(handles.len());
    for handle in handles {
        out.push(handle.await);
    }
    out
}
