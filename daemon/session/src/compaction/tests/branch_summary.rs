//! Branch summaries: what is abandoned, what fits the budget, the prompt and the result.

use pi_agent::AgentMessage;
use serde_json::json;

use super::{assistant, branch, entry, text_block, tool_call, tool_result, user};
use crate::compaction::branch::{
    NO_CONTENT, abandoned_start, branch_token_budget, finish_branch_summary, prepare_branch_entries,
};
use crate::compaction::{BranchEntryKind, FileLists, Instructions};

fn roles(messages: &[AgentMessage]) -> Vec<&'static str> {
    messages.iter().map(AgentMessage::role).collect()
}

#[test]
fn the_abandoned_part_starts_after_the_deepest_common_ancestor() {
    let old = branch("u1 a1 u1 a1");
    let cases: [(&[&str], usize); 4] = [
        (&["e0", "e1", "x2"], 2),
        (&["e0", "x1"], 1),
        (&["y0"], 0),
        (&["e0", "e1", "e2", "e3"], 4),
    ];
    for (target, start) in cases {
        assert_eq!(abandoned_start(&old, target), start, "{target:?}");
    }
}

#[test]
fn newest_messages_fill_the_budget_and_tool_results_are_skipped() {
    // Sizes in tokens: u10 t10 r10 a10 bs10 u10 a10.
    let entries = branch("u10 t10 r10 a10 bs10 u10 a10");
    let all = prepare_branch_entries(&entries, 0);
    assert_eq!(
        roles(&all.messages),
        [
            "user",
            "assistant",
            "assistant",
            "branchSummary",
            "user",
            "assistant"
        ]
    );
    assert_eq!(all.total_tokens, 60);

    let budgeted = prepare_branch_entries(&entries, 15);
    assert_eq!(roles(&budgeted.messages), ["assistant"]);

    // A summary that does not fit is still taken while under 90 % of the budget (20 < 22.5),
    // and ends the walk.
    let squeezed = prepare_branch_entries(&entries, 25);
    assert_eq!(
        roles(&squeezed.messages),
        ["branchSummary", "user", "assistant"]
    );
    let not_squeezed = prepare_branch_entries(&entries, 22);
    assert_eq!(roles(&not_squeezed.messages), ["user", "assistant"]);
}

#[test]
fn branch_summaries_carry_file_lists() {
    let mut entries = vec![
        entry("u", user("try another approach")),
        entry(
            "a",
            assistant(vec![
                text_block("Reading."),
                tool_call("c1", "read", json!({"path": "src/lib.rs"})),
            ]),
        ),
        entry("r", tool_result("c1", "pub fn x() {}")),
    ];
    entries.extend(branch("bs10"));
    if let BranchEntryKind::BranchSummary { details, .. } = &mut entries[3].kind {
        *details = Some(FileLists {
            read_files: vec![],
            modified_files: vec!["old.rs".into()],
        });
    }
    let preparation = prepare_branch_entries(&entries, branch_token_budget(0, 16_384));
    let request = preparation
        .request(&Instructions::Focus("the failed approach".into()))
        .unwrap();
    assert_eq!(request.max_tokens, 2048);
    assert!(!request.reasoning);
    insta::assert_snapshot!("branch_prompt_focus", request.prompt);

    let replaced = preparation
        .request(&Instructions::Replace("Just list the files.".into()))
        .unwrap();
    assert!(
        replaced
            .prompt
            .ends_with("</conversation>\n\nJust list the files.")
    );

    let summary = finish_branch_summary(Some("## Goal\nX".into()), &preparation.file_ops);
    assert_eq!(
        summary.details,
        FileLists {
            read_files: vec!["src/lib.rs".into()],
            modified_files: vec!["old.rs".into()],
        }
    );
    insta::assert_snapshot!("branch_summary", summary.summary);
}

#[test]
fn an_empty_branch_needs_no_request() {
    let preparation = prepare_branch_entries(&branch("m m"), 100);
    assert!(preparation.request(&Instructions::Default).is_none());
    let summary = finish_branch_summary(None, &preparation.file_ops);
    assert_eq!(summary.summary, NO_CONTENT);
    assert_eq!(summary.details, FileLists::default());
    assert_eq!(branch_token_budget(0, 16_384), 128_000 - 16_384);
    assert_eq!(branch_token_budget(1000, 16_384), 0, "no limit, as pi");
}
