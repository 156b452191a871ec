//! End-to-end throughput of one stream: the scripted model server streams a reply of
//! [`TOKENS`] text deltas over real HTTP on loopback, and `pi-llm` (reqwest, SSE parsing, the
//! wire format's decoder, the assembler, the event channel) turns it into events a consumer
//! task reads, for each wire format. Two ways of writing the body: one HTTP chunk per SSE
//! event (each token its own write, the worst case), and 16 KiB pieces (many events per read,
//! as a client far from the server usually sees them).
//!
//! Reports tokens (text deltas) per second from the first event to the terminal one: the
//! scripted server renders the whole reply before it answers, which no real server does, so
//! the time from the request to the first event is reported apart. Target: 200,000 tokens/s.
//!
//! Run: `cargo bench -p pi-llm --bench e2e` (append `-- openai-completions` to measure only
//! the formats named).

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "a benchmark binary"
)]

use std::time::{Duration, Instant};

use pi_llm::model::{InputKind, ModelCost};
use pi_llm::{ApiKey, Model, Provider, ProviderRouter, StreamEvent, StreamOptions, UserContent};
use pi_test_support::model_server::{ModelServer, Turn};

/// Text deltas in the reply.
const TOKENS: usize = 200_000;
/// Characters per delta.
const DELTA_CHARS: usize = 4;
/// Runs per format; the median is reported.
const RUNS: usize = 5;

const APIS: [&str; 4] = [
    "anthropic-messages",
    "openai-completions",
    "openai-responses",
    "google-generative-ai",
];

fn model(server: &ModelServer, api: &str) -> Model {
    Model {
        id: "bench-model".into(),
        name: "Bench".into(),
        api: api.into(),
        provider: "bench".into(),
        base_url: server.base_url(api),
        reasoning: false,
        input: vec![InputKind::Text],
        cost: ModelCost::default(),
        context_window: 200_000,
        max_tokens: 64_000,
        headers: Default::default(),
        compat: None,
    }
}

/// `TOKENS * DELTA_CHARS` characters of text, some of them multi-byte.
fn long_text() -> String {
    let words = [
        "the ", "quick ", "brøwn ", "fox ", "jumps ", "över ", "lazy ", "dogs. ",
    ];
    words
        .iter()
        .cycle()
        .flat_map(|word| word.chars())
        .take(TOKENS * DELTA_CHARS)
        .collect()
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // `cargo bench` passes `--bench`; other arguments name the formats to measure.
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with("--"))
        .collect();
    let apis: Vec<&str> = APIS
        .into_iter()
        .filter(|api| only.is_empty() || only.iter().any(|name| name == api))
        .collect();
    let text = long_text();
    // The consumer is a task on the runtime, as in the daemon, not the thread blocking on it.
    let measure = async move {
        let server = ModelServer::start().await;
        let context = pi_llm::Context {
            system_prompt: None,
            messages: vec![pi_llm::Message::User(pi_llm::UserMessage {
                content: vec![UserContent::text("Write a lot.")],
                timestamp: 0,
            })],
            tools: Vec::new(),
        };
        for api in apis.iter().copied() {
            let model = model(&server, api);
            for piece_len in [None, Some(16 * 1024)] {
                let mut until_first = Vec::new();
                let mut streaming = Vec::new();
                for _ in 0..RUNS {
                    let reply = Turn::reply().text(text.clone()).delta_chars(DELTA_CHARS);
                    server.push(match piece_len {
                        Some(piece_len) => reply.body_split_bytes(piece_len),
                        None => reply,
                    });
                    let options = StreamOptions {
                        api_key: Some(ApiKey::new("sk-bench")),
                        ..StreamOptions::default()
                    };
                    let start = Instant::now();
                    let mut stream = ProviderRouter::new().stream(&model, &context, options);
                    let mut first_event = None;
                    let mut deltas = 0;
                    while let Some(event) = stream.next().await {
                        first_event.get_or_insert_with(Instant::now);
                        match event {
                            StreamEvent::TextDelta { .. } => deltas += 1,
                            StreamEvent::Error { error, .. } => {
                                panic!("{api}: {:?}", error.error_message)
                            }
                            _ => {}
                        }
                    }
                    let first_event = first_event.unwrap();
                    assert_eq!(deltas, TOKENS, "{api}");
                    until_first.push(first_event - start);
                    streaming.push(first_event.elapsed());
                }
                let (until_first, streaming) = (median(until_first), median(streaming));
                let writes = match piece_len {
                    Some(_) => "16 KiB writes",
                    None => "a write per event",
                };
                println!(
                    "e2e {api}, {writes}: {TOKENS} tokens in {:.0} ms = {:.0} tokens/s \
                     (request to first event: {:.0} ms)",
                    streaming.as_secs_f64() * 1e3,
                    TOKENS as f64 / streaming.as_secs_f64(),
                    until_first.as_secs_f64() * 1e3,
                );
            }
        }
        server.assert_done(apis.len() * 2 * RUNS);
    };
    runtime.block_on(runtime.spawn(measure)).unwrap();
}
