//! Event order of plain and tool-using runs, tool failures, result ordering.

use pi_agent::{AgentEvent, AgentMessage, ToolExecution};
use pi_llm::faux::FauxReply;
use pi_llm::{Message, StopReason, UserContent};
use serde_json::json;

use super::{EchoTool, GatedTool, Harness, PanicTool, ProgressTool, config, sequence, text_of};

#[tokio::test]
async fn a_prompt_without_tools_follows_pis_sequence() {
    let mut harness = Harness::new();
    harness.faux.push(FauxReply::text("Hello there"));
    harness.start(
        config(&harness.faux, vec![], ToolExecution::default()),
        vec![],
        Some("hi"),
    );
    let (outcome, events) = harness.finish().await;
    assert_eq!(
        sequence(&events),
        [
            "agent_start",
            "turn_start",
            "message_start(user)",
            "message_end(user)",
            "message_start(assistant)",
            "message_update*",
            "message_end(assistant)",
            "turn_end(0)",
            "agent_end(2)",
        ]
    );
    assert_eq!(outcome.last_assistant.unwrap().text(), "Hello there");
    // The model saw the system prompt and the user message.
    let request = &harness.faux.requests()[0];
    assert_eq!(
        request.context.system_prompt.as_deref(),
        Some("You are a test.")
    );
    assert!(matches!(&request.context.messages[..], [Message::User(_)]));
}

#[tokio::test]
async fn parallel_tool_calls_end_as_they_finish_and_report_results_in_call_order() {
    let mut harness = Harness::new();
    let gated = GatedTool::new(&["a", "b", "c"]);
    harness.faux.push(
        FauxReply::tool_call("gated", json!({"key": "a"}))
            .then_tool_call("gated", json!({"key": "b"}))
            .then_tool_call("gated", json!({"key": "c"})),
    );
    harness.faux.push(FauxReply::text("all done"));
    harness.start(
        config(&harness.faux, vec![gated.clone()], ToolExecution::default()),
        vec![],
        Some("go"),
    );
    gated.wait_started(3).await;
    // Finish in reverse order: each call ends when it finishes (pi's order), and the result
    // messages follow once all have, in call order.
    gated.release("c");
    gated.release("b");
    gated.release("a");
    let (outcome, events) = harness.finish().await;
    let names = sequence(&events);
    let tool_part: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .skip_while(|name| *name != "message_end(assistant)")
        .skip(1)
        .take_while(|name| !name.starts_with("turn_end"))
        .collect();
    assert_eq!(
        tool_part,
        [
            "tool_execution_start(gated)",
            "tool_execution_start(gated)",
            "tool_execution_start(gated)",
            "tool_execution_end(gated)",
            "tool_execution_end(gated)",
            "tool_execution_end(gated)",
            "message_start(toolResult)",
            "message_end(toolResult)",
            "message_start(toolResult)",
            "message_end(toolResult)",
            "message_start(toolResult)",
            "message_end(toolResult)",
        ]
    );
    let mut ended: Vec<String> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolExecutionEnd { result, .. } => Some(text_of(result)),
            _ => None,
        })
        .collect();
    ended.sort();
    assert_eq!(ended, ["done a", "done b", "done c"]);
    let messages: Vec<String> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::MessageEnd { message } => Some(&**message),
            _ => None,
        })
        .filter_map(|message| match message {
            AgentMessage::ToolResult(result) => Some(
                result
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        UserContent::Text(text) => Some(text.text.clone()),
                        UserContent::Image(_) => None,
                    })
                    .collect::<String>(),
            ),
            _ => None,
        })
        .collect();
    assert_eq!(messages, ["done a", "done b", "done c"]);
    assert_eq!(outcome.last_assistant.unwrap().text(), "all done");
    // The second request carried the three results after the assistant message, in order.
    let second = &harness.faux.requests()[1].context.messages;
    let ids: Vec<&str> = second
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) => Some(r.tool_call_id.as_str()),
            _ => None,
        })
        .collect();
    let first_calls: Vec<String> = harness.faux.requests()[1]
        .context
        .messages
        .iter()
        .find_map(|m| match m {
            Message::Assistant(a) => Some(a.tool_calls().map(|c| c.id.clone()).collect()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        ids,
        first_calls.iter().map(String::as_str).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn unknown_tools_and_invalid_arguments_fail_at_start_and_the_model_reads_why() {
    let mut harness = Harness::new();
    harness.faux.push(
        FauxReply::tool_call("nope", json!({}))
            .then_tool_call("echo", json!({"text": 5, "extra": true}))
            .then_tool_call("echo", json!({})),
    );
    harness.faux.push(FauxReply::text("ok"));
    harness.start(
        config(
            &harness.faux,
            vec![EchoTool::new()],
            ToolExecution::default(),
        ),
        vec![],
        Some("go"),
    );
    let (_, events) = harness.finish().await;
    let names = sequence(&events);
    let start = names
        .iter()
        .position(|n| n == "message_end(assistant)")
        .unwrap()
        + 1;
    assert_eq!(
        &names[start..start + 5],
        [
            "tool_execution_start(nope)",
            "tool_execution_end(nope,error)",
            "tool_execution_start(echo)",
            "tool_execution_start(echo)",
            "tool_execution_end(echo,error)",
        ]
    );
    // Tool result messages come in call order.
    let results: Vec<(String, bool)> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::MessageEnd { message } => Some(&**message),
            _ => None,
        })
        .filter_map(|message| match message {
            AgentMessage::ToolResult(result) => {
                let output = pi_agent::ToolOutput {
                    content: result.content.clone(),
                    details: json!({}),
                    is_error: result.is_error,
                    terminate: false,
                };
                Some((text_of(&output), result.is_error))
            }
            _ => None,
        })
        .collect();
    assert_eq!(results[0], ("Tool nope not found".to_owned(), true));
    // `5` is coerced to "5" as AJV would.
    assert_eq!(results[1], ("echo: 5".to_owned(), false));
    assert!(results[2].1);
    assert!(
        results[2].0.starts_with(
            "Validation failed for tool \"echo\":\n  - root: \"text\" is a required property"
        ),
        "{}",
        results[2].0
    );
}

#[tokio::test]
async fn a_panicking_tool_becomes_an_error_result_and_the_run_continues() {
    let mut harness = Harness::new();
    harness.faux.push(FauxReply::tool_call("boom", json!({})));
    harness.faux.push(FauxReply::text("recovered"));
    harness.start(
        config(
            &harness.faux,
            vec![PanicTool::new()],
            ToolExecution::default(),
        ),
        vec![],
        Some("go"),
    );
    let (outcome, events) = harness.finish().await;
    let result = events
        .iter()
        .find_map(|event| match event {
            AgentEvent::ToolExecutionEnd { result, .. } => Some(result.clone()),
            _ => None,
        })
        .unwrap();
    assert!(result.is_error);
    assert_eq!(text_of(&result), "Tool boom failed with an internal error");
    assert_eq!(outcome.last_assistant.unwrap().text(), "recovered");
}

#[tokio::test]
async fn progress_updates_arrive_before_the_end() {
    let mut harness = Harness::new();
    let tool = ProgressTool::new();
    harness
        .faux
        .push(FauxReply::tool_call("progress", json!({})));
    harness.faux.push(FauxReply::text("ok"));
    harness.start(
        config(&harness.faux, vec![tool.clone()], ToolExecution::default()),
        vec![],
        Some("go"),
    );
    let seen = harness
        .until(|event| matches!(event, AgentEvent::ToolExecutionUpdate { .. }))
        .await;
    let AgentEvent::ToolExecutionUpdate { partial_result, .. } = seen.last().unwrap() else {
        unreachable!()
    };
    assert_eq!(text_of(partial_result), "halfway");
    tool.gate.add_permits(1);
    let (_, events) = harness.finish().await;
    assert!(events.iter().any(|e| matches!(e, AgentEvent::ToolExecutionEnd { result, .. } if text_of(result) == "finished")));
}

#[tokio::test]
async fn continuing_reruns_the_loop_without_a_new_message() {
    let mut harness = Harness::new();
    harness.faux.push(FauxReply::text("second try"));
    let context = vec![AgentMessage::user("question", Vec::new(), 1)];
    harness.start(
        config(&harness.faux, vec![], ToolExecution::default()),
        context,
        None,
    );
    let (outcome, events) = harness.finish().await;
    assert_eq!(
        sequence(&events),
        [
            "agent_start",
            "turn_start",
            "message_start(assistant)",
            "message_update*",
            "message_end(assistant)",
            "turn_end(0)",
            "agent_end(1)"
        ]
    );
    assert_eq!(
        outcome.last_assistant.unwrap().stop_reason,
        StopReason::Stop
    );
    let Message::User(user) = &harness.faux.requests()[0].context.messages[0] else {
        panic!()
    };
    assert!(matches!(&user.content[0], UserContent::Text(t) if t.text == "question"));
}

#[tokio::test]
async fn a_context_hook_changes_each_request_and_not_the_conversation() {
    let mut harness = Harness::new();
    harness
        .faux
        .push(FauxReply::tool_call("echo", json!({"text": "x"})));
    harness.faux.push(FauxReply::text("done"));
    let mut config = config(
        &harness.faux,
        vec![EchoTool::new()],
        ToolExecution::default(),
    );
    // Every request gets a reminder after the conversation.
    config.context_hook = Some(std::sync::Arc::new(
        |mut messages: Vec<std::sync::Arc<AgentMessage>>| {
            Box::pin(async move {
                messages.push(std::sync::Arc::new(AgentMessage::user(
                    "reminder",
                    Vec::new(),
                    0,
                )));
                messages
            }) as std::pin::Pin<Box<dyn std::future::Future<Output = _> + Send>>
        },
    ));
    harness.start(config, vec![], Some("hi"));
    let (outcome, _) = harness.finish().await;
    assert_eq!(outcome.last_assistant.unwrap().text(), "done");
    let requests = harness.faux.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        let Some(Message::User(last)) = request.context.messages.last() else {
            panic!("{:?}", request.context.messages);
        };
        assert!(
            matches!(&last.content[..], [UserContent::Text(text)] if text.text == "reminder"),
            "{last:?}"
        );
    }
    // The second request carries the first's messages without their reminder: the hook
    // saw the conversation, not its own earlier output.
    let reminders = requests[1]
        .context
        .messages
        .iter()
        .filter(|message| matches!(message, Message::User(user) if matches!(&user.content[..], [UserContent::Text(text)] if text.text == "reminder")))
        .count();
    assert_eq!(reminders, 1);
}

/// pi's `terminate`: when every result of an assistant message's calls ends the run, the
/// model is not asked again; one result that does not is enough to go on.
#[tokio::test]
async fn results_that_all_terminate_end_the_run_without_another_request() {
    let mut harness = Harness::new();
    harness.faux.push(
        FauxReply::tool_call("final", json!({"text": "a"}))
            .then_tool_call("final", json!({"text": "b"})),
    );
    let tools: Vec<std::sync::Arc<dyn pi_agent::Tool>> =
        vec![EchoTool::terminating("final"), EchoTool::new()];
    harness.start(
        config(&harness.faux, tools.clone(), ToolExecution::default()),
        vec![],
        Some("go"),
    );
    let (outcome, events) = harness.finish().await;
    assert_eq!(harness.faux.requests().len(), 1);
    assert!(!outcome.aborted());
    let names = sequence(&events);
    assert_eq!(
        names[names.len() - 2..],
        ["turn_end(2)".to_owned(), "agent_end(4)".to_owned()],
        "{names:?}"
    );

    let mut harness = Harness::new();
    harness.faux.push(
        FauxReply::tool_call("final", json!({"text": "a"}))
            .then_tool_call("echo", json!({"text": "b"})),
    );
    harness.faux.push(FauxReply::text("went on"));
    harness.start(
        config(&harness.faux, tools, ToolExecution::default()),
        vec![],
        Some("go"),
    );
    let (outcome, _) = harness.finish().await;
    assert_eq!(harness.faux.requests().len(), 2);
    assert_eq!(outcome.last_assistant.unwrap().text(), "went on");
}
