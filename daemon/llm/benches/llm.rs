//! pi-llm throughput: SSE parsing alone (MB/s), and decoding a whole Anthropic-format
//! response into pi events (tokens/s), from memory, consumed by a task on the runtime as the
//! daemon consumes it. End-to-end numbers over HTTP from the scripted model server are
//! measured by `benches/e2e.rs`.
//!
//! Run: `cargo bench -p pi-llm --bench llm`.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "a benchmark binary"
)]

use std::time::{Duration, Instant};

use bytes::Bytes;
use pi_llm::http::replay;
use pi_llm::model::{InputKind, Model, ModelCost};
use pi_llm::providers::anthropic::AnthropicDecoder;
use pi_llm::sse::SseParser;

/// Tokens (one text delta each, as Anthropic streams them) in the synthetic response.
const TOKENS: usize = 200_000;

fn body() -> String {
    let mut body = String::from(concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",",
        "\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,",
        "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
    ));
    let words = [
        "the ", "quick ", "brøwn ", "fox ", "jumps ", "över ", "lazy ", "dogs. ",
    ];
    for i in 0..TOKENS {
        body.push_str("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"");
        body.push_str(words[i % words.len()]);
        body.push_str("\"}}\n\n");
    }
    body.push_str(concat!(
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},",
        "\"usage\":{\"output_tokens\":200000}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
    ));
    body
}

fn chunks(body: &str, size: usize) -> Vec<Bytes> {
    body.as_bytes()
        .chunks(size)
        .map(Bytes::copy_from_slice)
        .collect()
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let body = body();
    let megabytes = body.len() as f64 / 1e6;
    let pieces = chunks(&body, 16 * 1024);

    let parse = median(
        (0..9)
            .map(|_| {
                let start = Instant::now();
                let mut parser = SseParser::new();
                let mut events = Vec::new();
                let mut count = 0;
                for piece in &pieces {
                    parser.feed(piece, &mut events);
                    count += events.len();
                    events.clear();
                }
                assert_eq!(count, TOKENS + 5);
                start.elapsed()
            })
            .collect(),
    );
    println!(
        "sse parsing: {megabytes:.1} MB in {:.1} ms = {:.0} MB/s",
        parse.as_secs_f64() * 1e3,
        megabytes / parse.as_secs_f64()
    );

    let model = Model {
        id: "claude-bench".into(),
        name: "Bench".into(),
        api: "anthropic-messages".into(),
        provider: "anthropic".into(),
        base_url: "http://127.0.0.1:9".into(),
        reasoning: false,
        input: vec![InputKind::Text],
        cost: ModelCost::default(),
        context_window: 200_000,
        max_tokens: 64_000,
        headers: Default::default(),
        compat: None,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let decode = median(
        (0..5)
            .map(|_| {
                let pieces = pieces.clone();
                let model = model.clone();
                let consume = runtime.spawn(async move {
                    let start = Instant::now();
                    let mut stream = replay(&model, pieces, 0, AnthropicDecoder::default());
                    let mut deltas = 0;
                    while let Some(event) = stream.next().await {
                        if matches!(event, pi_llm::StreamEvent::TextDelta { .. }) {
                            deltas += 1;
                        }
                    }
                    assert_eq!(deltas, TOKENS);
                    start.elapsed()
                });
                runtime.block_on(consume).unwrap()
            })
            .collect(),
    );
    println!(
        "decode to events (anthropic): {TOKENS} tokens in {:.1} ms = {:.0} tokens/s ({:.0} MB/s)",
        decode.as_secs_f64() * 1e3,
        TOKENS as f64 / decode.as_secs_f64(),
        megabytes / decode.as_secs_f64()
    );
}
