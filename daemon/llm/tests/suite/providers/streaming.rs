//! Replies streamed in each wire format decode to pi's events and message: text, thinking,
//! one and several tool calls whose argument JSON is split anywhere (inside strings, between
//! multi-byte characters, and — with the body cut into 1..7-byte pieces — inside them), usage
//! priced from the model, and every stop reason.

use pi_llm::StopReason;
use pi_test_support::model_server::{Reply, ScriptStop, ScriptUsage, Turn};
use serde_json::json;

use super::{APIS, event_line, run_turn, sections, transcript};

/// Streams `reply` in every format and returns the transcripts as sections.
async fn check(reply: impl Fn() -> Reply) -> String {
    let mut parts = Vec::new();
    for api in APIS {
        let run = run_turn(api, reply()).await;
        parts.push((api, transcript(&run)));
    }
    sections(parts)
}

#[tokio::test]
async fn text() {
    let transcripts = check(|| {
        Turn::reply()
            .text("Grüße aus 日本 😀 — fertig.")
            .delta_chars(3)
    })
    .await;
    insta::assert_snapshot!(transcripts);
}

#[tokio::test]
async fn thinking_then_text() {
    let transcripts = check(|| {
        Turn::reply()
            .thinking_signed("Zuerst überlegen… 🤔", "sig-thinking-1")
            .text("Die Antwort ist 42.")
    })
    .await;
    insta::assert_snapshot!(transcripts);
}

/// Arguments with multi-byte characters: `ö`, `ü` (2 bytes), `✓`, `語` (3), `😀` (4).
const ARGUMENTS: &str = r#"{"path":"nötes/ü.md","content":"✓ 日本語 😀","line":3}"#;

fn tool_calls_reply() -> Reply {
    Turn::reply()
        .text("Ich lese beide.")
        .tool_call_raw("call_1", "read", ARGUMENTS)
        // Inside the key, right after `ö`, between `日` and `本語`, before the last brace.
        .arg_splits(vec![3, 11, 35, 49])
        .tool_call("call_2", "ls", json!({"dir": "ü/😀"}))
        .delta_chars(1)
}

#[tokio::test]
async fn one_and_several_tool_calls() {
    let one = check(|| Turn::reply().tool_call("call_1", "bash", json!({"cmd": "ls -la"}))).await;
    insta::assert_snapshot!("one_tool_call", one);
    let several = check(tool_calls_reply).await;
    insta::assert_snapshot!("several_tool_calls", several);
}

#[tokio::test]
async fn any_body_split_yields_the_same_events() {
    for api in APIS {
        let whole = run_turn(api, tool_calls_reply()).await;
        assert_eq!(whole.message.stop_reason, StopReason::ToolUse, "{api}");
        for piece_len in 1..=7 {
            let split = run_turn(api, tool_calls_reply().body_split_bytes(piece_len)).await;
            assert_eq!(
                split.events, whole.events,
                "{api} in {piece_len}-byte pieces"
            );
        }
    }
}

#[tokio::test]
async fn usage_and_cost_follow_each_format_and_the_model_prices() {
    let usage = ScriptUsage {
        input: 1_000,
        output: 500,
        cache_read: 20_000,
        cache_write: 4_000,
        reasoning: 120,
    };
    let mut parts = Vec::new();
    for api in APIS {
        let run = run_turn(api, Turn::reply().text("ok").usage(usage)).await;
        let usage = run.message.usage;
        // Only Anthropic reports cache writes; every format reports the rest exactly.
        let cache_write = if api == "anthropic-messages" {
            4_000
        } else {
            0
        };
        assert_eq!(
            (
                usage.input,
                usage.output,
                usage.cache_read,
                usage.cache_write
            ),
            (1_000, 500, 20_000, cache_write),
            "{api}"
        );
        assert_eq!(usage.total_tokens, 21_500 + cache_write, "{api}");
        let cost = usage.cost;
        assert_eq!(
            cost.total,
            cost.input + cost.output + cost.cache_read + cost.cache_write
        );
        parts.push((api, serde_json::to_string_pretty(&usage).unwrap()));
    }
    insta::assert_snapshot!(sections(parts));
}

#[tokio::test]
async fn stop_reasons() {
    let mut lines = Vec::new();
    for api in APIS {
        for stop in [
            ScriptStop::Stop,
            ScriptStop::Length,
            ScriptStop::ToolUse,
            ScriptStop::Refusal,
        ] {
            let reply = Turn::reply().text("partial answer").stop(stop);
            let reply = match stop {
                ScriptStop::ToolUse => reply.tool_call("call_1", "read", json!({"path": "a"})),
                ScriptStop::Stop | ScriptStop::Length | ScriptStop::Refusal => reply,
            };
            let run = run_turn(api, reply).await;
            lines.push(format!(
                "{api} {stop:?} -> {:?}: {}",
                run.message.stop_reason,
                event_line(run.events.last().unwrap())
            ));
        }
    }
    insta::assert_snapshot!(lines.join("\n"));
}
