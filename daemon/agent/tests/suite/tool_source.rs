//! A run's tool source: requests wait for tools on their way, tools that arrive during a run
//! join its next turn, the run's own tools keep their names unless the source overrides
//! them, the source may narrow what is offered, and an abort ends the wait.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_agent::{AgentEvent, Tool, ToolExecution, ToolSource, ToolWait};
use pi_llm::faux::FauxReply;
use serde_json::json;
use tokio::sync::watch;

use super::{EchoTool, GatedTool, Harness, config, sequence};

/// Tools the test hands over while the run runs, and a wait the test ends.
#[derive(Default)]
struct Source {
    tools: Mutex<Vec<Arc<dyn Tool>>>,
    // While set, requests wait until it holds `true`; the wait reports `not_ready`.
    wait: Mutex<Option<(watch::Receiver<bool>, Vec<String>)>>,
    // Its tools replace the run's own of the same name.
    overriding: bool,
    active: Mutex<Option<Vec<String>>>,
}

impl Source {
    fn set_tools(&self, tools: Vec<Arc<dyn Tool>>) {
        *self.tools.lock().unwrap() = tools;
    }
}

impl ToolSource for Source {
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.tools.lock().unwrap().clone()
    }

    fn awaited(&self) -> Option<ToolWait> {
        let (mut ready, not_ready) = self.wait.lock().unwrap().take()?;
        Some(ToolWait {
            sources: vec!["slow".to_owned()],
            timeout: Duration::from_secs(30),
            done: Box::pin(async move {
                let _ = ready.wait_for(|ready| *ready).await;
                not_ready
            }),
        })
    }

    fn overrides(&self, _name: &str) -> bool {
        self.overriding
    }

    fn active(&self) -> Option<Vec<String>> {
        self.active.lock().unwrap().clone()
    }
}

fn offered(harness: &Harness, request: usize) -> Vec<String> {
    harness.faux.requests()[request]
        .context
        .tools
        .iter()
        .map(|tool| tool.name.clone())
        .collect()
}

#[tokio::test]
async fn the_first_request_waits_for_tools_on_their_way_and_offers_them() {
    let mut harness = Harness::new();
    let source = Arc::new(Source::default());
    let (release, ready) = watch::channel(false);
    *source.wait.lock().unwrap() = Some((ready, Vec::new()));
    harness
        .faux
        .push(FauxReply::tool_call("late", json!({"text": "hi"})));
    harness.faux.push(FauxReply::text("done"));
    let mut run_config = config(
        &harness.faux,
        vec![EchoTool::new()],
        ToolExecution::default(),
    );
    run_config.tool_source = Some(source.clone());
    harness.start(run_config, vec![], Some("go"));
    let before = harness
        .until(|event| matches!(event, AgentEvent::ToolsWaitStart { .. }))
        .await;
    assert_eq!(
        sequence(&before),
        [
            "agent_start",
            "turn_start",
            "message_start(user)",
            "message_end(user)",
            "tools_wait_start(slow)",
        ]
    );
    let AgentEvent::ToolsWaitStart { timeout_ms, .. } = before[4] else {
        unreachable!("matched above");
    };
    assert_eq!(timeout_ms, 30_000);
    // The tools arrive, then the wait ends: the request goes out with them.
    source.set_tools(vec![EchoTool::named("late")]);
    assert!(
        harness.faux.requests().is_empty(),
        "no request during the wait"
    );
    release.send_replace(true);
    let (_, rest) = harness.finish().await;
    let names = sequence(&rest);
    assert_eq!(names[0], "tools_wait_end()");
    assert!(
        names.contains(&"tool_execution_end(late)".to_owned()),
        "{names:?}"
    );
    assert_eq!(offered(&harness, 0), ["echo", "late"]);
}

#[tokio::test]
async fn tools_that_arrive_during_a_run_join_its_next_turn_and_own_names_win() {
    let mut harness = Harness::new();
    let source = Arc::new(Source::default());
    let gated = GatedTool::new(&["a"]);
    harness
        .faux
        .push(FauxReply::tool_call("gated", json!({"key": "a"})));
    harness
        .faux
        .push(FauxReply::tool_call("late", json!({"text": "now"})));
    harness.faux.push(FauxReply::text("done"));
    let mut run_config = config(&harness.faux, vec![gated.clone()], ToolExecution::default());
    run_config.tool_source = Some(source.clone());
    harness.start(run_config, vec![], Some("go"));
    gated.wait_started(1).await;
    // While the first turn's tool runs, the source gains a tool, and one named like the
    // run's own.
    source.set_tools(vec![EchoTool::named("late"), EchoTool::named("gated")]);
    gated.release("a");
    let (outcome, events) = harness.finish().await;
    assert_eq!(outcome.last_assistant.unwrap().text(), "done");
    assert_eq!(offered(&harness, 0), ["gated"]);
    assert_eq!(offered(&harness, 1), ["gated", "late"]);
    let names = sequence(&events);
    assert!(
        names.contains(&"tool_execution_end(late)".to_owned()),
        "{names:?}"
    );
    assert!(
        !names.iter().any(|name| name.starts_with("tools_wait")),
        "nothing was awaited: {names:?}"
    );
}

#[tokio::test]
async fn an_abort_ends_the_wait_and_the_run_without_a_request() {
    let mut harness = Harness::new();
    let source = Arc::new(Source::default());
    let (_release, ready) = watch::channel(false);
    *source.wait.lock().unwrap() = Some((ready, Vec::new()));
    let mut run_config = config(&harness.faux, vec![], ToolExecution::default());
    run_config.tool_source = Some(source);
    harness.start(run_config, vec![], Some("go"));
    harness
        .until(|event| matches!(event, AgentEvent::ToolsWaitStart { .. }))
        .await;
    harness.cancel.cancel();
    let (outcome, rest) = harness.finish().await;
    assert!(outcome.aborted());
    assert_eq!(
        sequence(&rest),
        [
            "tools_wait_end(slow,aborted)",
            "message_start(assistant)",
            "message_end(assistant)",
            "turn_end(0)",
            "agent_end(2)",
        ]
    );
    assert!(harness.faux.requests().is_empty());
}

#[tokio::test]
async fn a_source_may_override_the_runs_own_tools_and_narrow_what_is_offered() {
    let mut harness = Harness::new();
    let source = Arc::new(Source {
        overriding: true,
        ..Source::default()
    });
    // The source's `echo` answers in place of the run's own.
    source.set_tools(vec![
        EchoTool::answering("echo", "override"),
        EchoTool::named("extra"),
    ]);
    harness
        .faux
        .push(FauxReply::tool_call("echo", json!({"text": "hi"})));
    harness.faux.push(FauxReply::text("first"));
    let mut run_config = config(
        &harness.faux,
        vec![EchoTool::new()],
        ToolExecution::default(),
    );
    run_config.tool_source = Some(source.clone());
    harness.start(run_config.clone(), vec![], Some("go"));
    let (_, events) = harness.finish().await;
    assert_eq!(offered(&harness, 0), ["echo", "extra"]);
    let results: Vec<String> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolExecutionEnd { result, .. } => Some(format!("{:?}", result.content)),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 1);
    assert!(results[0].contains("override: hi"), "{results:?}");

    // Only what is active is offered.
    *source.active.lock().unwrap() = Some(vec!["extra".to_owned()]);
    let mut harness = Harness::new();
    harness.faux.push(FauxReply::text("done"));
    run_config.provider = Arc::new(harness.faux.clone());
    harness.start(run_config, vec![], Some("go"));
    harness.finish().await;
    assert_eq!(offered(&harness, 0), ["extra"]);
}
