//! `prepare_compaction`, the summarization requests (snapshotted: pi's prompt structure) and
//! the merged result.

use pi_llm::{AssistantContent, ThinkingContent};
use serde_json::json;

use super::{assistant, branch, compaction_entry, entry, text_block, tool_call, tool_result, user};
use crate::compaction::prompt::SUMMARIZATION_SYSTEM_PROMPT;
use crate::compaction::{
    CompactionSettings, FileLists, NothingToCompact, estimate_tokens, prepare_compaction,
};

fn settings(keep_recent_tokens: u64) -> CompactionSettings {
    CompactionSettings {
        enabled: true,
        reserve_tokens: 1000,
        keep_recent_tokens,
    }
}

/// A coding conversation: two turns, the second with tool calls.
fn conversation() -> Vec<crate::compaction::BranchEntry> {
    vec![
        entry("u1", user("Fix the parser in src/parse.rs")),
        entry(
            "a1",
            assistant(vec![
                AssistantContent::Thinking(ThinkingContent {
                    thinking: "Look at the file first.".into(),
                    thinking_signature: None,
                    redacted: false,
                }),
                text_block("Reading it."),
                tool_call("c1", "read", json!({"path": "src/parse.rs"})),
                tool_call(
                    "c2",
                    "bash",
                    json!({"command": "cargo test", "timeout": 60}),
                ),
            ]),
        ),
        entry("r1", tool_result("c1", "fn parse() {}")),
        entry("r2", tool_result("c2", "test result: FAILED. 1 failed")),
        entry(
            "a2",
            assistant(vec![tool_call(
                "c3",
                "edit",
                json!({"path": "src/parse.rs", "oldText": "a", "newText": "b"}),
            )]),
        ),
        entry("r3", tool_result("c3", "Edited.")),
        entry("a3", assistant(vec![text_block("Fixed.")])),
        entry("u2", user("Now add a test")),
        entry(
            "a4",
            assistant(vec![tool_call(
                "c4",
                "write",
                json!({"path": "tests/parse.rs", "content": "#[test] fn t() {}"}),
            )]),
        ),
        entry("r4", tool_result("c4", "Wrote.")),
        entry("a5", assistant(vec![text_block("Added tests/parse.rs.")])),
    ]
}

#[test]
fn nothing_to_compact() {
    assert_eq!(
        prepare_compaction(&branch("u10 a10 C"), &settings(10)),
        Err(NothingToCompact::AlreadyCompacted)
    );
    assert_eq!(
        prepare_compaction(&[], &settings(10)),
        Err(NothingToCompact::TooSmall)
    );
}

#[test]
fn a_clean_cut_summarizes_whole_turns() {
    let mut entries = conversation();
    if let crate::compaction::BranchEntryKind::Message(pi_agent::AgentMessage::Assistant(a4)) =
        &mut entries[8].kind
    {
        a4.usage.total_tokens = 1234;
    }
    // Keep the second turn: a5, r4 and a4 estimate to 23 tokens, u2 brings it to 27.
    let preparation = prepare_compaction(&entries, &settings(25)).unwrap();
    assert_eq!(preparation.first_kept_entry_id, "u2");
    assert!(!preparation.is_split_turn);
    assert_eq!(preparation.messages_to_summarize.len(), 7);
    assert!(preparation.turn_prefix_messages.is_empty());
    assert_eq!(preparation.previous_summary, None);
    // The last successful assistant message's usage (a5: none reported, so 0 by pi's rule)
    // plus estimates after it; a4's 1234 is superseded.
    assert_eq!(preparation.tokens_before, 0);
    entries.truncate(10);
    let preparation_before_a5 = prepare_compaction(&entries, &settings(25)).unwrap();
    assert_eq!(
        preparation_before_a5.tokens_before,
        1234 + estimate_tokens(&entries[9].message().unwrap()),
        "a4's usage plus the estimate of r4"
    );
    let preparation = prepare_compaction(&conversation(), &settings(25)).unwrap();

    let plan = preparation.plan(Some("Focus on the parser."), true);
    let history = plan.history.clone().unwrap();
    assert_eq!(history.system_prompt, SUMMARIZATION_SYSTEM_PROMPT);
    assert_eq!(history.max_tokens, 800, "floor(0.8 × reserveTokens)");
    assert!(history.reasoning);
    assert!(plan.turn_prefix.is_none());
    insta::assert_snapshot!("history_prompt_initial", history.prompt);

    let result = plan.finish("## Goal\nFix the parser.".into(), None);
    assert_eq!(result.first_kept_entry_id, "u2");
    assert_eq!(
        result.details,
        FileLists {
            read_files: vec![],
            modified_files: vec!["src/parse.rs".into()],
        },
        "the edited file is modified, not read; the write is kept, not summarized"
    );
    insta::assert_snapshot!("history_result", result.summary);
}

#[test]
fn a_split_turn_is_summarized_in_two_parts() {
    let entries = conversation();
    // The budget is reached inside the second turn, at the final assistant message.
    let preparation = prepare_compaction(&entries, &settings(5)).unwrap();
    assert_eq!(preparation.first_kept_entry_id, "a5");
    assert!(preparation.is_split_turn);
    assert_eq!(preparation.messages_to_summarize.len(), 7);
    assert_eq!(preparation.turn_prefix_messages.len(), 3, "u2 a4 r4");

    let plan = preparation.plan(None, false);
    let history = plan.history.clone().unwrap();
    assert!(!history.reasoning, "the model does not reason");
    let prefix = plan.turn_prefix.clone().unwrap();
    assert_eq!(prefix.max_tokens, 500, "floor(0.5 × reserveTokens)");
    assert!(!prefix.reasoning);
    insta::assert_snapshot!("turn_prefix_prompt", prefix.prompt);

    let result = plan.finish("HISTORY".into(), Some("PREFIX".into()));
    assert_eq!(
        result.details.modified_files,
        ["src/parse.rs", "tests/parse.rs"],
        "the prefix's write counts too"
    );
    insta::assert_snapshot!("split_turn_result", result.summary);
}

#[test]
fn a_split_first_turn_has_no_prior_history() {
    let entries = branch("u10 t10 r10 a10");
    let preparation = prepare_compaction(&entries, &settings(5)).unwrap();
    assert!(preparation.is_split_turn);
    assert!(preparation.messages_to_summarize.is_empty());
    let plan = preparation.plan(None, true);
    assert!(plan.history.is_none());
    let result = plan.finish(String::new(), Some("PREFIX".into()));
    assert_eq!(
        result.summary,
        "No prior history.\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX"
    );
}

#[test]
fn a_second_compaction_updates_the_previous_summary() {
    let previous = FileLists {
        read_files: vec!["README.md".into()],
        modified_files: vec!["Cargo.toml".into()],
    };
    let mut entries = vec![
        entry("u0", user("old")),
        compaction_entry("c0", "## Goal\nOld goal.", Some(previous)),
    ];
    entries.extend(conversation());
    let preparation = prepare_compaction(&entries, &settings(25)).unwrap();
    assert_eq!(
        preparation.previous_summary.as_deref(),
        Some("## Goal\nOld goal.")
    );
    assert_eq!(
        preparation.messages_to_summarize.len(),
        7,
        "only what follows the previous compaction"
    );
    let plan = preparation.plan(None, false);
    insta::assert_snapshot!(
        "history_prompt_update",
        plan.history.clone().unwrap().prompt
    );
    let result = plan.finish("UPDATED".into(), None);
    assert_eq!(
        result.details,
        FileLists {
            read_files: vec!["README.md".into()],
            modified_files: vec!["Cargo.toml".into(), "src/parse.rs".into()],
        },
        "lists carry over from the previous compaction"
    );
}

#[test]
fn an_extension_compaction_does_not_seed_file_lists() {
    let mut entries = vec![compaction_entry(
        "c0",
        "S",
        Some(FileLists {
            read_files: vec!["secret.txt".into()],
            modified_files: vec![],
        }),
    )];
    if let crate::compaction::BranchEntryKind::Compaction { from_hook, .. } = &mut entries[0].kind {
        *from_hook = true;
    }
    entries.extend(branch("u10 a10 u10 a10"));
    let preparation = prepare_compaction(&entries, &settings(5)).unwrap();
    assert!(preparation.file_ops.read.is_empty());
}
