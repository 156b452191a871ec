//! Steering, follow-ups and abort.

use pi_agent::{AgentEvent, AgentMessage, SKIPPED_FOR_STEERING, ToolExecution};
use pi_llm::faux::{FauxGate, FauxReply};
use pi_llm::{Message, StopReason, UserContent};
use serde_json::json;

use super::{GatedTool, Harness, config, sequence, text_of};

fn last_user_text(messages: &[Message]) -> String {
    messages
        .iter()
        .rev()
        .find_map(|m| match m {
            Message::User(user) => user.content.iter().find_map(|c| match c {
                UserContent::Text(t) => Some(t.text.clone()),
                UserContent::Image(_) => None,
            }),
            _ => None,
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn steering_mid_tool_skips_the_remaining_calls_and_is_delivered_next() {
    let mut harness = Harness::new();
    let gated = GatedTool::new(&["a", "b", "c"]);
    harness.faux.push(
        FauxReply::tool_call("gated", json!({"key": "a"}))
            .then_tool_call("gated", json!({"key": "b"}))
            .then_tool_call("gated", json!({"key": "c"})),
    );
    harness.faux.push(FauxReply::text("steered"));
    harness.start(
        config(
            &harness.faux,
            vec![gated.clone()],
            ToolExecution::Sequential,
        ),
        vec![],
        Some("go"),
    );
    gated.wait_started(1).await;
    harness
        .queues
        .push_steering(AgentMessage::user("change of plan", Vec::new(), 2));
    gated.release("a");
    let (outcome, events) = harness.finish().await;
    // The calls not started end at once (before the running one); the result messages come
    // in call order.
    let ended: Vec<(String, bool)> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolExecutionEnd { result, .. } => Some((text_of(result), result.is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(
        ended,
        [
            (SKIPPED_FOR_STEERING.to_owned(), true),
            (SKIPPED_FOR_STEERING.to_owned(), true),
            ("done a".to_owned(), false),
        ]
    );
    let results: Vec<(String, bool)> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::MessageEnd { message } => Some(&**message),
            _ => None,
        })
        .filter_map(|message| match message {
            AgentMessage::ToolResult(result) => Some((
                result
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        pi_llm::UserContent::Text(text) => Some(text.text.clone()),
                        pi_llm::UserContent::Image(_) => None,
                    })
                    .collect(),
                result.is_error,
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        [
            ("done a".to_owned(), false),
            (SKIPPED_FOR_STEERING.to_owned(), true),
            (SKIPPED_FOR_STEERING.to_owned(), true)
        ]
    );
    // The steering message is taken off the queue after the turn and opens the next one.
    let names = sequence(&events);
    let second_turn = names.iter().rposition(|n| n == "turn_start").unwrap();
    assert_eq!(
        &names[second_turn - 2..second_turn + 3],
        [
            "turn_end(3)",
            "queue_update(0,0)",
            "turn_start",
            "message_start(user)",
            "message_end(user)"
        ]
    );
    assert_eq!(
        last_user_text(&harness.faux.requests()[1].context.messages),
        "change of plan"
    );
    assert_eq!(outcome.last_assistant.unwrap().text(), "steered");
}

#[tokio::test]
async fn parallel_calls_all_run_before_steering_is_delivered() {
    let mut harness = Harness::new();
    let gated = GatedTool::new(&["a", "b"]);
    harness.faux.push(
        FauxReply::tool_call("gated", json!({"key": "a"}))
            .then_tool_call("gated", json!({"key": "b"})),
    );
    harness.faux.push(FauxReply::text("ok"));
    harness.start(
        config(&harness.faux, vec![gated.clone()], ToolExecution::default()),
        vec![],
        Some("go"),
    );
    gated.wait_started(2).await;
    harness
        .queues
        .push_steering(AgentMessage::user("later", Vec::new(), 2));
    gated.release("a");
    gated.release("b");
    let (_, events) = harness.finish().await;
    let errors = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::ToolExecutionEnd { result, .. } if result.is_error))
        .count();
    assert_eq!(errors, 0, "both calls had started, so neither is skipped");
    assert_eq!(
        last_user_text(&harness.faux.requests()[1].context.messages),
        "later"
    );
}

#[tokio::test]
async fn follow_ups_run_after_the_agent_would_stop() {
    let mut harness = Harness::new();
    let gate = FauxGate::new();
    harness
        .faux
        .push(FauxReply::text("first answer").held_after(0, &gate));
    harness.faux.push(FauxReply::text("second answer"));
    harness.start(
        config(&harness.faux, vec![], ToolExecution::default()),
        vec![],
        Some("one"),
    );
    harness
        .until(|e| {
            matches!(
                e,
                AgentEvent::MessageStart { message }
                    if matches!(**message, AgentMessage::Assistant(_))
            )
        })
        .await;
    harness
        .queues
        .push_follow_up(AgentMessage::user("two", Vec::new(), 2));
    gate.release();
    let (outcome, events) = harness.finish().await;
    assert_eq!(harness.faux.requests().len(), 2);
    assert_eq!(
        last_user_text(&harness.faux.requests()[1].context.messages),
        "two"
    );
    assert_eq!(outcome.last_assistant.unwrap().text(), "second answer");
    assert!(
        matches!(events.last(), Some(AgentEvent::AgentEnd { messages }) if messages.len() == 4)
    );
}

#[tokio::test]
async fn abort_mid_stream_ends_the_run_as_aborted() {
    let mut harness = Harness::new();
    let gate = FauxGate::new();
    harness.faux.push(
        FauxReply::text("partial")
            .then_text("never")
            .held_after(1, &gate),
    );
    harness.start(
        config(&harness.faux, vec![], ToolExecution::default()),
        vec![],
        Some("go"),
    );
    harness.until(|e| matches!(e, AgentEvent::MessageUpdate { event } if matches!(event, pi_llm::StreamEvent::TextEnd { .. }))).await;
    harness.cancel.cancel();
    let (outcome, events) = harness.finish().await;
    assert!(outcome.aborted());
    let assistant = outcome.last_assistant.unwrap();
    assert_eq!(assistant.text(), "partial");
    assert_eq!(
        sequence(&events),
        ["message_end(assistant)", "turn_end(0)", "agent_end(2)"]
    );
}

#[tokio::test]
async fn abort_mid_tool_cancels_it_and_ends_the_run() {
    let mut harness = Harness::new();
    let gated = GatedTool::new(&["a", "b"]);
    harness.faux.push(
        FauxReply::tool_call("gated", json!({"key": "a"}))
            .then_tool_call("gated", json!({"key": "b"})),
    );
    harness.start(
        config(
            &harness.faux,
            vec![gated.clone()],
            ToolExecution::Sequential,
        ),
        vec![],
        Some("go"),
    );
    gated.wait_started(1).await;
    harness.cancel.cancel();
    let (outcome, events) = harness.finish().await;
    let results: Vec<String> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolExecutionEnd { result, .. } => Some(text_of(result)),
            _ => None,
        })
        .collect();
    assert_eq!(results, ["Operation aborted", "Operation aborted"]);
    assert!(outcome.aborted());
    assert_eq!(
        outcome.last_assistant.unwrap().stop_reason,
        StopReason::Aborted
    );
    assert_eq!(
        harness.faux.requests().len(),
        1,
        "no model call after the abort"
    );
    assert!(matches!(events.last(), Some(AgentEvent::AgentEnd { .. })));
}

#[tokio::test]
async fn a_provider_error_ends_the_run_with_the_error_message() {
    let mut harness = Harness::new();
    harness.faux.push(FauxReply::error("529 overloaded"));
    harness.start(
        config(&harness.faux, vec![], ToolExecution::default()),
        vec![],
        Some("go"),
    );
    let (outcome, _) = harness.finish().await;
    assert!(outcome.failed());
    assert_eq!(
        outcome.last_assistant.unwrap().error_message.as_deref(),
        Some("529 overloaded")
    );
}
