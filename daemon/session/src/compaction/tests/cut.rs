//! Cut points: walking back to `keepRecentTokens`, valid boundaries only, split turns. The
//! expectation marks the first kept entry with `|` and the start of a split turn with `^`.

use pi_agent::AgentMessage;

use super::{assistant, branch, entry, tool_call, tool_result, user};
use crate::compaction::cut::find_cut_point;
use crate::compaction::{BranchEntry, BranchEntryKind};

fn check(notation: &str, keep_recent_tokens: u64, expect: &str) {
    let entries = branch(notation);
    let start = entries
        .iter()
        .rposition(BranchEntry::is_compaction)
        .map_or(0, |index| index + 1);
    let cut = find_cut_point(&entries, start, entries.len(), keep_recent_tokens);
    let mut rendered = Vec::new();
    for (index, token) in notation.split_whitespace().enumerate() {
        if index == cut.first_kept_entry_index {
            rendered.push("|".to_owned());
        }
        let marked = cut.is_split_turn && cut.turn_start_index == Some(index);
        rendered.push(format!("{}{token}", if marked { "^" } else { "" }));
    }
    assert_eq!(
        rendered.join(" "),
        expect,
        "{notation} keeping {keep_recent_tokens}"
    );
}

#[test]
fn cut_points_follow_pi() {
    let cases = [
        // The budget is never reached: everything is kept from the first valid cut point.
        ("u10 a10", 100, "| u10 a10"),
        ("r5 u10 a10", 100, "r5 | u10 a10"),
        // The budget is reached on a user message: a clean cut, no split.
        ("u10 a10 u10 a10", 20, "u10 a10 | u10 a10"),
        // Reached on an assistant message: the turn is split at it.
        ("u10 a10 u10 t10 r10 a10", 15, "u10 a10 ^u10 t10 r10 | a10"),
        // Reached on a tool result: the cut moves forward to the next assistant message.
        ("u10 t10 r30 a10", 35, "^u10 t10 r30 | a10"),
        // Parallel results are never separated from each other or their call.
        ("u10 t10 r10 r10 r10 a5", 12, "^u10 t10 r10 r10 r10 | a5"),
        ("u10 t10 r10 r10 r10 u5", 12, "u10 t10 r10 r10 r10 | u5"),
        // No valid cut point after the budget: the default keeps everything.
        ("u10 t10 r10 r10", 5, "| u10 t10 r10 r10"),
        // Settings changes right before the cut are kept with it. As in pi, a cut that lands on
        // such an entry is not "at a user message", so the turn before counts as split.
        ("u10 a10 m m u10 a10", 20, "^u10 a10 | m m u10 a10"),
        // Custom messages and branch summaries are kept with the cut (they are not `message`
        // entries) and start turns; a turn that starts at the cut has no prefix.
        ("u10 a10 cm10 u10 a10", 20, "u10 a10 | ^cm10 u10 a10"),
        ("u10 a10 bs10 a10 a10", 15, "u10 a10 | ^bs10 a10 a10"),
        // Bash executions are valid cuts and start turns.
        ("u10 a10 x10 a10", 20, "u10 a10 | ^x10 a10"),
        ("u10 a10 x10 a10 a10", 15, "u10 a10 ^x10 | a10 a10"),
        // Only the window after the last compaction counts.
        (
            "u50 a50 C u10 a10 u10 a10",
            20,
            "u50 a50 C u10 a10 | u10 a10",
        ),
        ("u50 a50 C a10 a10", 15, "u50 a50 C | a10 a10"),
        ("u50 a50 C m", 10, "u50 a50 C | m"),
    ];
    for (notation, keep, expect) in cases {
        check(notation, keep, expect);
    }
}

/// Builds turns of `[user, (assistant with n calls, n results)*, assistant]` from a seed and
/// checks that no kept tool result lost its call, for every budget.
#[test]
fn kept_tool_results_always_keep_their_calls() {
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move |modulo: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % modulo
    };
    for _ in 0..200 {
        let mut entries = Vec::new();
        for turn in 0..(1 + next(4)) {
            entries.push(entry(
                &format!("u{turn}"),
                user(&"q".repeat(next(80) as usize)),
            ));
            for step in 0..next(4) {
                let calls = 1 + next(3);
                let ids: Vec<String> = (0..calls).map(|c| format!("c{turn}-{step}-{c}")).collect();
                let content = ids
                    .iter()
                    .map(|id| tool_call(id, "bash", serde_json::json!({"command": "ls"})))
                    .collect();
                entries.push(entry(&format!("a{turn}-{step}"), assistant(content)));
                for id in &ids {
                    let output = "o".repeat(next(200) as usize);
                    entries.push(entry(&format!("r{id}"), tool_result(id, &output)));
                }
            }
            entries.push(entry(&format!("f{turn}"), assistant(vec![])));
        }
        for keep in [0, 1, 5, 20, 50, 100, 400] {
            let cut = find_cut_point(&entries, 0, entries.len(), keep);
            let kept = &entries[cut.first_kept_entry_index..];
            let kept_calls: Vec<&str> = kept
                .iter()
                .filter_map(|entry| match &entry.kind {
                    BranchEntryKind::Message(AgentMessage::Assistant(message)) => {
                        Some(message.tool_calls().map(|call| call.id.as_str()))
                    }
                    _ => None,
                })
                .flatten()
                .collect();
            for entry in kept {
                if let BranchEntryKind::Message(AgentMessage::ToolResult(result)) = &entry.kind {
                    assert!(
                        kept_calls.contains(&result.tool_call_id.as_str()),
                        "result {} kept without its call (keep {keep})",
                        result.tool_call_id
                    );
                }
            }
            assert!(!matches!(
                kept.first().map(|entry| &entry.kind),
                Some(BranchEntryKind::Message(AgentMessage::ToolResult(_)))
            ));
        }
    }
}
