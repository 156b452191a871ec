//! The per-token cost of oh-my-pi's stream rules: 50 rules (text, thinking and tool scopes,
//! typical conditions) watching a 200,000-character reply streamed in deltas of 4 characters,
//! none matching (the common case), then the time from the delta that completes a match to
//! the interruption. Target: ≤ 2 µs of CPU per delta with 50 rules.
//!
//! Run: `cargo bench -p pi-coding --bench ttsr`.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "a benchmark binary"
)]

use std::collections::BTreeSet;
use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use pi_agent::watch::{DeltaSource, StreamWatch, Verdict};
use pi_coding::rules::Rule;
use pi_coding::ttsr::{Ttsr, TtsrSettings, TtsrWatch};

fn rules() -> Vec<Rule> {
    let conditions = [
        r"(?i)as an ai",
        r"\.unwrap\(\)",
        r":\s*any\b",
        r"ioutil\.",
        r"Box::leak",
        r"console\.log\(",
        r"(?i)\bTODO\b",
        r"unsafe\s*\{",
        r"eval\(",
        r"rm -rf /",
    ];
    let scopes = [
        "text",
        "thinking",
        "tool",
        "tool:write(**/*.rs)",
        "tool:edit",
    ];
    (0..50)
        .map(|n| Rule {
            name: format!("rule-{n}"),
            description: None,
            globs: Vec::new(),
            always: false,
            condition: vec![format!(
                "{}{}",
                conditions[n % conditions.len()],
                "x".repeat(n / 10)
            )],
            scope: vec![scopes[n % scopes.len()].to_owned()],
            interrupt_mode: None,
            repeat: None,
            repeat_gap: None,
            body: "Do not.".to_owned(),
            path: PathBuf::from(format!("/rules/rule-{n}.md")),
            provider: "native",
        })
        .collect()
}

fn thread_cpu_ns() -> u128 {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    now.tv_sec as u128 * 1_000_000_000 + now.tv_nsec as u128
}

fn main() {
    let ttsr = Ttsr::new(
        &rules(),
        &TtsrSettings::default(),
        BTreeSet::new(),
        &mut Vec::new(),
    )
    .unwrap();
    let watch = TtsrWatch(ttsr);
    let reply: String = "The parser reads each token and returns a tree of nodes; errors carry \
                         their line and column so the caller can show them. "
        .repeat(1600);
    let deltas: Vec<String> = reply
        .as_bytes()
        .chunks(4)
        .map(|chunk| String::from_utf8_lossy(chunk).into_owned())
        .collect();
    for (label, source) in [
        ("text", DeltaSource::Text),
        ("thinking", DeltaSource::Thinking),
        ("tool arguments", DeltaSource::ToolCall { name: "write" }),
    ] {
        let mut per_delta = Vec::new();
        for _ in 0..5 {
            let mut message = watch.message();
            let started = thread_cpu_ns();
            for delta in &deltas {
                black_box(message.delta(0, source, delta));
            }
            per_delta.push((thread_cpu_ns() - started) as f64 / deltas.len() as f64);
        }
        per_delta.sort_by(f64::total_cmp);
        println!(
            "{label}: {} deltas of 4 characters, 50 rules: {:.0} ns per delta (median of 5; best {:.0} ns)",
            deltas.len(),
            per_delta[2],
            per_delta[0]
        );
    }
    // From the completing delta to the interruption.
    let mut message = watch.message();
    for delta in deltas.iter().take(2000) {
        message.delta(0, DeltaSource::Text, delta);
    }
    let started = Instant::now();
    let verdict = message.delta(0, DeltaSource::Text, " As an AI");
    let took = started.elapsed();
    assert!(matches!(verdict, Verdict::Interrupt { .. }));
    println!("match to interruption: {:.1} µs", took.as_secs_f64() * 1e6);
}
