//! Compaction preparation on a 20,000-entry session (synthetic coding turns: a user message,
//! assistant messages calling `read`, `edit`, `write` and `bash`, their tool results, a final
//! answer), excluding the model call:
//!
//! - prepare: pi's `prepareCompaction` (token accounting, cut point, split turn, file
//!   tracking) plus the plan (`convertToLlm`, the `<conversation>` transcript and prompt);
//! - load: reading the stored entries (pi's JSON) into the branch compaction works on, which
//!   the session pays before preparing.
//!
//! Run: `cargo bench -p pi-daemon --bench compaction`. Prints a Markdown table and a JSON line.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "bench binary"
)]

use std::time::{Duration, Instant};

use pi_agent::AgentMessage;
use pi_daemon::compaction::{BranchEntry, BranchEntryKind, CompactionSettings, prepare_compaction};
use pi_daemon::session::entries::{EntryBase, EntryIds, message_entry, new_entry};
use pi_daemon::session::summarize::branch_entries;
use pi_daemon::store::StoredEntry;
use pi_llm::{
    AssistantContent, AssistantMessage, StopReason, TextContent, ToolCall, ToolResultMessage,
    Usage, UserContent, UserMessage,
};
use serde_json::json;

const ENTRIES: usize = 20_000;
const RUNS: usize = 30;

fn text(text: String) -> AssistantContent {
    AssistantContent::Text(TextContent {
        text,
        text_signature: None,
    })
}

fn assistant(content: Vec<AssistantContent>, stop_reason: StopReason) -> AgentMessage {
    AgentMessage::Assistant(AssistantMessage {
        content,
        api: "anthropic-messages".into(),
        provider: "anthropic".into(),
        model: "claude-sonnet-4-5".into(),
        usage: Usage {
            input: 40_000,
            output: 500,
            total_tokens: 40_500,
            ..Usage::default()
        },
        stop_reason,
        timestamp: 1_700_000_000_000,
        ..AssistantMessage::default()
    })
}

/// Turns of: user, then 3 × (assistant with 2 tool calls, 2 results), then a final answer.
fn session_messages() -> Vec<AgentMessage> {
    let mut messages = Vec::with_capacity(ENTRIES);
    let mut turn = 0;
    while messages.len() < ENTRIES {
        messages.push(AgentMessage::User(UserMessage {
            content: vec![UserContent::text(format!(
                "Turn {turn}: please fix the failing test in src/module_{turn}.rs and explain the \
                 cause. {}",
                "Context sentence. ".repeat(10)
            ))],
            timestamp: 1_700_000_000_000,
        }));
        for step in 0..3 {
            let path = format!("src/module_{turn}_{step}.rs");
            let (name, arguments) = match step {
                0 => ("read", json!({"path": path})),
                1 => (
                    "edit",
                    json!({"path": path, "oldText": "let x = 1;", "newText": "let x = 2;"}),
                ),
                _ => (
                    "write",
                    json!({"path": path, "content": "fn main() {}\n".repeat(20)}),
                ),
            };
            let calls = [
                (format!("call_{turn}_{step}_a"), name, arguments),
                (
                    format!("call_{turn}_{step}_b"),
                    "bash",
                    json!({"command": "cargo test --workspace", "timeout": 120}),
                ),
            ];
            let content = std::iter::once(text("Let me look.".into()))
                .chain(calls.iter().map(|(id, name, arguments)| {
                    AssistantContent::ToolCall(ToolCall {
                        id: id.clone(),
                        name: (*name).into(),
                        arguments: arguments.clone().into(),
                        thought_signature: None,
                    })
                }))
                .collect();
            messages.push(assistant(content, StopReason::ToolUse));
            for (id, name, _) in &calls {
                messages.push(AgentMessage::ToolResult(ToolResultMessage {
                    tool_call_id: id.clone(),
                    tool_name: (*name).into(),
                    content: vec![UserContent::text("test output line\n".repeat(60))],
                    details: None,
                    is_error: false,
                    timestamp: 1_700_000_000_000,
                }));
            }
        }
        messages.push(assistant(
            vec![text(format!(
                "Fixed turn {turn}. {}",
                "Explanation. ".repeat(20)
            ))],
            StopReason::Stop,
        ));
        turn += 1;
    }
    messages.truncate(ENTRIES);
    messages
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    samples[((samples.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let messages = session_messages();
    let mut ids = EntryIds::default();
    let mut parent = None;
    let mut stored = Vec::with_capacity(ENTRIES);
    for (index, message) in messages.iter().enumerate() {
        let base = EntryBase::new(&mut ids, parent.clone(), 1_700_000_000_000);
        parent = Some(base.id.clone());
        let entry = message_entry(base, message).unwrap();
        let new = new_entry(&entry, index as u64 + 1).unwrap();
        stored.push(StoredEntry {
            id: new.id,
            parent_id: new.parent_id,
            ordinal: index as i64,
            seq: new.seq,
            kind: new.kind,
            body: new.body,
        });
    }
    let settings = CompactionSettings::default();

    let mut load = Vec::with_capacity(RUNS);
    let mut prepare = Vec::with_capacity(RUNS);
    let mut prepare_only = Vec::with_capacity(RUNS);
    let mut summary = (0, 0, 0, 0, false);
    for _ in 0..RUNS {
        let started = Instant::now();
        let entries: Vec<BranchEntry> = branch_entries(&stored).unwrap();
        load.push(started.elapsed());

        let started = Instant::now();
        let preparation = prepare_compaction(&entries, &settings).unwrap();
        let prepared = started.elapsed();
        let plan = preparation.plan(None, true);
        prepare.push(started.elapsed());
        prepare_only.push(prepared);

        let history = plan
            .history
            .as_ref()
            .map_or(0, |request| request.prompt.len());
        let kept = entries.len()
            - entries
                .iter()
                .position(|entry| entry.id == preparation.first_kept_entry_id)
                .unwrap();
        let files = preparation.file_ops.lists();
        summary = (
            preparation.messages_to_summarize.len(),
            kept,
            history,
            files.read_files.len() + files.modified_files.len(),
            preparation.is_split_turn,
        );
        assert!(matches!(entries[0].kind, BranchEntryKind::Message(_)));
    }
    let (summarized, kept, prompt_bytes, files, split) = summary;
    let prepare_p50 = percentile(&mut prepare, 0.5);
    let prepare_p95 = percentile(&mut prepare, 0.95);
    let load_p50 = percentile(&mut load, 0.5);
    let prepare_only_p50 = percentile(&mut prepare_only, 0.5);
    println!("| measure | value | target |");
    println!("|---|---|---|");
    println!(
        "| prepare {ENTRIES} entries (cut point, file tracking, prompt), p50 ({RUNS} runs) | {:.1} ms | < 50 ms |",
        prepare_p50.as_secs_f64() * 1000.0
    );
    println!(
        "| prepare, p95 | {:.1} ms | |",
        prepare_p95.as_secs_f64() * 1000.0
    );
    println!(
        "| of which `prepareCompaction` (cut point, file tracking), p50 | {:.1} ms | |",
        prepare_only_p50.as_secs_f64() * 1000.0
    );
    println!(
        "| load {ENTRIES} stored entries into the branch, p50 | {:.1} ms | |",
        load_p50.as_secs_f64() * 1000.0
    );
    println!(
        "| summarized / kept entries, split turn, files, prompt size | {summarized} / {kept}, {split}, {files}, {:.1} MB | |",
        prompt_bytes as f64 / 1e6
    );
    println!(
        "{}",
        json!({
            "entries": ENTRIES,
            "prepare_p50_ms": prepare_p50.as_secs_f64() * 1000.0,
            "prepare_p95_ms": prepare_p95.as_secs_f64() * 1000.0,
            "prepare_only_p50_ms": prepare_only_p50.as_secs_f64() * 1000.0,
            "load_p50_ms": load_p50.as_secs_f64() * 1000.0,
            "summarized": summarized,
            "kept": kept,
            "prompt_bytes": prompt_bytes,
        })
    );
}
