//! oh-my-pi's plan mode on the real `pid`: turned on with `session/setPlanMode`, a planning
//! run's writes outside `local://` are refused while the plan goes to `local://PLAN.md`;
//! `exit_plan_mode` asks the person attached, and the approved plan is executed in a fresh
//! context with every tool back; a refinement keeps plan mode on with the user's note; the
//! state survives a restart of the daemon.

use std::time::Duration;

use pi_client::{Client, Notifications};
use pi_protocol::NotificationMethod as _;
use pi_protocol::v1::{
    EmptyResponse, SessionEvent, SessionEventNotification, SessionEventParams, SessionGet,
    SessionGetResponse, SessionIdParams, SessionPrompt, SessionSetPlanMode,
    SessionSetPlanModeParams, UiAnswer, UiRequest, UiRequestNotification, UiRequestParams,
    UiRespond, UiRespondParams,
};
use pi_test_support::events::run_events;
use pi_test_support::model_server::{RecordedRequest, Turn};
use serde_json::json;

use super::harness::{World, prompt};
use super::mcp_faults::{run, session, tool_results};

async fn set_plan_mode(client: &Client, session_id: &str, enabled: bool) {
    let _: EmptyResponse = client
        .call::<SessionSetPlanMode>(&SessionSetPlanModeParams {
            session_id: session_id.to_owned(),
            enabled,
        })
        .await
        .unwrap();
}

async fn get(client: &Client, session_id: &str) -> SessionGetResponse {
    client
        .call::<SessionGet>(&SessionIdParams {
            session_id: session_id.to_owned(),
        })
        .await
        .unwrap()
}

/// Reads notifications until a question arrives: the question and the session events
/// before it.
async fn next_question(events: &mut Notifications) -> (UiRequestParams, Vec<SessionEventParams>) {
    let mut seen = Vec::new();
    let reading = async {
        loop {
            let notification = events.next().await.expect("the connection stays");
            let params = notification.params.unwrap_or(serde_json::Value::Null);
            if notification.method == UiRequestNotification::NAME {
                return serde_json::from_value(params).unwrap();
            }
            if notification.method == SessionEventNotification::NAME {
                seen.push(serde_json::from_value(params).unwrap());
            }
        }
    };
    let question = tokio::time::timeout(Duration::from_secs(20), reading)
        .await
        .expect("a question arrives");
    (question, seen)
}

async fn answer(client: &Client, question: &UiRequestParams, value: &str) {
    let accepted = client
        .call::<UiRespond>(&UiRespondParams {
            session_id: question.session_id.clone(),
            request_id: question.request_id.clone(),
            answer: UiAnswer {
                value: Some(value.to_owned()),
                ..UiAnswer::default()
            },
        })
        .await
        .unwrap();
    assert!(accepted.accepted);
}

fn tool_names(request: &RecordedRequest) -> Vec<String> {
    request.body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_mode_refuses_writes_until_the_plan_is_approved_then_executes_it_fresh() {
    let world = World::start_with(
        "anthropic-messages",
        &[("proj/README.md", "# Demo\n".to_owned())],
    )
    .await;
    let project = world.daemon.home.path().join("proj");
    let (client, mut events, id) = session(&world, &project.display().to_string()).await;
    set_plan_mode(&client, &id, true).await;
    assert!(get(&client, &id).await.plan_mode);

    // Planning: a write into the project is refused, the plan goes to local://PLAN.md, and
    // exit_plan_mode asks the person attached.
    world.server.push(Turn::reply().tool_call(
        "w1",
        "write",
        json!({"path": "src/main.rs", "content": "fn main() {}\n"}),
    ));
    world.server.push(Turn::reply().tool_call(
        "w2",
        "write",
        json!({"path": "local://PLAN.md", "content": "# Plan\n1. Write src/main.rs with an empty main.\n2. Check it builds.\n"}),
    ));
    world.server.push(Turn::reply().tool_call(
        "x1",
        "exit_plan_mode",
        json!({"title": "Add main"}),
    ));
    // The fresh context executes it.
    world.server.push(Turn::reply().tool_call(
        "w3",
        "write",
        json!({"path": "src/main.rs", "content": "fn main() {}\n"}),
    ));
    world
        .server
        .push(Turn::reply().text("Done: src/main.rs exists."));
    client
        .call::<SessionPrompt>(&prompt(&id, "plan adding a main"))
        .await
        .unwrap();
    let (question, mut planning) = next_question(&mut events).await;
    let UiRequest::Select { title, options, .. } = &question.request else {
        panic!("{:?}", question.request);
    };
    assert_eq!(
        title,
        "Plan \"Add main\" (local://PLAN.md):\n\n# Plan\n1. Write src/main.rs with an empty main.\n2. Check it builds.\n\nWhat now?"
    );
    assert_eq!(
        options,
        &[
            "Approve and execute (fresh context)",
            "Approve and compact context",
            "Approve and keep context",
            "Refine plan",
            "Save and quit",
        ]
    );
    answer(&client, &question, "Approve and execute (fresh context)").await;
    planning.extend(run_events(&mut events, &id).await);
    let results = tool_results(&planning);
    assert_eq!(results[0].0, "write");
    assert!(results[0].2, "the write into the project is refused");
    assert!(
        results[0].1.contains(
            "Plan mode: the working tree is read-only while you plan, so `write` was not run."
        ),
        "{}",
        results[0].1
    );
    assert!(!results[1].2, "the plan file is written: {}", results[1].1);
    assert!(!results[2].2, "{}", results[2].1);
    assert!(
        results[2].1.contains("The user approved the plan."),
        "{}",
        results[2].1
    );
    assert!(planning.iter().any(|event| matches!(
        event.event,
        SessionEvent::PlanModeChanged { enabled: false }
    )));

    // The plan's run: a fresh context that starts with the plan, every tool back.
    let executing = run_events(&mut events, &id).await;
    let results = tool_results(&executing);
    assert_eq!(results.len(), 1);
    assert!(!results[0].2, "{}", results[0].1);
    assert_eq!(
        std::fs::read_to_string(project.join("src/main.rs")).unwrap(),
        "fn main() {}\n"
    );

    let requests = world.server.requests();
    assert_eq!(requests.len(), 5);
    let first = &requests[0];
    assert!(
        first.body_text.contains("# Plan mode"),
        "planning runs are told"
    );
    assert!(tool_names(first).contains(&"exit_plan_mode".to_owned()));
    let fresh = &requests[3];
    assert!(!fresh.body_text.contains("# Plan mode"));
    assert!(!tool_names(fresh).contains(&"exit_plan_mode".to_owned()));
    assert!(
        fresh
            .body_text
            .contains("The user approved the plan \\\"Add main\\\""),
        "{}",
        fresh.body_text
    );
    assert!(
        fresh
            .body_text
            .contains("1. Write src/main.rs with an empty main.")
    );
    assert!(
        !fresh.body_text.contains("plan adding a main"),
        "the planning conversation is left behind"
    );
    assert_eq!(fresh.body["messages"].as_array().unwrap().len(), 1);

    let got = get(&client, &id).await;
    assert!(!got.plan_mode);
    let approved = got.approved_plan.unwrap();
    assert_eq!(approved.title, "Add main");
    assert!(approved.text.starts_with("# Plan\n1. Write src/main.rs"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refined_plan_stays_in_plan_mode_and_the_mode_survives_a_restart() {
    let mut world = World::start("anthropic-messages").await;
    let home = world.daemon.home.path().display().to_string();
    let (client, mut events, id) = session(&world, &home).await;
    set_plan_mode(&client, &id, true).await;

    // No plan written yet: the model is told to write it first.
    world
        .server
        .push(Turn::reply().tool_call("x0", "exit_plan_mode", json!({"title": "Nothing"})));
    world.server.push(Turn::reply().text("I will write it."));
    let seen = run(&client, &mut events, &id, "propose").await;
    let (_, content, is_error, _) = tool_results(&seen).remove(0);
    assert!(is_error);
    assert!(
        content.contains("There is no plan yet: write it to local://PLAN.md (with `write`), then call exit_plan_mode again"),
        "{content}"
    );

    // Read-only commands run; others are refused.
    world.server.push(
        Turn::reply()
            .tool_call("b1", "bash", json!({"command": "ls"}))
            .tool_call(
                "b2",
                "bash",
                json!({"command": "touch made-while-planning"}),
            ),
    );
    world.server.push(Turn::reply().tool_call(
        "w1",
        "write",
        json!({"path": "local://PLAN.md", "content": "1. Do it.\n"}),
    ));
    world
        .server
        .push(Turn::reply().tool_call("x1", "exit_plan_mode", json!({"title": "Do it"})));
    world.server.push(Turn::reply().text("Revising."));
    client
        .call::<SessionPrompt>(&prompt(&id, "look around and plan"))
        .await
        .unwrap();
    let (question, mut seen) = next_question(&mut events).await;
    answer(&client, &question, "Refine plan").await;
    let (note, more) = next_question(&mut events).await;
    seen.extend(more);
    assert!(
        matches!(&note.request, UiRequest::Input { title, .. } if title == "What should change in the plan?")
    );
    answer(&client, &note, "add a rollback step").await;
    seen.extend(run_events(&mut events, &id).await);
    let results = tool_results(&seen);
    // The two commands ran side by side: their ends come in either order.
    let bash: Vec<_> = results.iter().filter(|result| result.0 == "bash").collect();
    assert_eq!(bash.len(), 2);
    assert_eq!(bash.iter().filter(|result| result.2).count(), 1, "{bash:?}");
    assert!(
        bash.iter()
            .any(|result| result.2 && result.1.contains("Plan mode")),
        "touch writes: {bash:?}"
    );
    assert!(
        !world
            .daemon
            .home
            .path()
            .join("made-while-planning")
            .exists()
    );
    let exit = results
        .iter()
        .find(|result| result.0 == "exit_plan_mode")
        .unwrap();
    assert!(
        exit.1
            .contains("The user wants the plan refined: add a rollback step"),
        "{}",
        exit.1
    );
    assert!(
        get(&client, &id).await.plan_mode,
        "refining stays in plan mode"
    );

    // The mode is on the branch: a restarted daemon still plans.
    world.daemon.kill9().await;
    world.daemon.restart().await;
    let (client, _events) = world.client().await;
    assert!(get(&client, &id).await.plan_mode);
    set_plan_mode(&client, &id, false).await;
    assert!(!get(&client, &id).await.plan_mode);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_plan_kept_in_context_opens_the_tools_and_goes_to_subagents() {
    let world = World::start("anthropic-messages").await;
    let home = world.daemon.home.path().display().to_string();
    let (client, mut events) = world.client().await;
    let created = client
        .call::<pi_protocol::v1::SessionCreate>(&pi_protocol::v1::SessionCreateParams {
            cwd: home.clone(),
            model: Some(super::harness::MODEL.to_owned()),
            tools: Some(
                ["read", "write", "bash", "task"]
                    .map(str::to_owned)
                    .to_vec(),
            ),
            ..Default::default()
        })
        .await
        .unwrap();
    let id = created.id;
    client
        .call::<pi_protocol::v1::SessionAttach>(&pi_protocol::v1::SessionAttachParams {
            session_id: id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    set_plan_mode(&client, &id, true).await;
    world.server.push(Turn::reply().tool_call(
        "w1",
        "write",
        json!({"path": "local://PLAN.md", "content": "1. Delegate the first step.\n"}),
    ));
    world
        .server
        .push(Turn::reply().tool_call("x1", "exit_plan_mode", json!({"title": "Ship it"})));
    // Approved in this context: the same run goes on, and a task is allowed again.
    world.server.push(Turn::reply().tool_call(
        "t1",
        "task",
        json!({"context": "", "tasks": [{"name": "step", "task": "do the first step"}]}),
    ));
    world.server.push(Turn::reply().text("step done"));
    world.server.push(Turn::reply().text("All done."));
    client
        .call::<SessionPrompt>(&prompt(&id, "plan and ship"))
        .await
        .unwrap();
    let (question, mut seen) = next_question(&mut events).await;
    answer(&client, &question, "Approve and keep context").await;
    seen.extend(run_events(&mut events, &id).await);
    let results = tool_results(&seen);
    let exit = results
        .iter()
        .find(|result| result.0 == "exit_plan_mode")
        .unwrap();
    assert!(
        exit.1
            .contains("Plan mode is off and every tool is available"),
        "{}",
        exit.1
    );
    let task = results.iter().find(|result| result.0 == "task").unwrap();
    assert!(!task.2, "{}", task.1);
    assert!(task.1.contains("step done"), "{}", task.1);

    let requests = world.server.requests();
    let child = requests
        .iter()
        .find(|request| {
            request.body_text.contains("do the first step")
                && !request.body_text.contains("plan and ship")
        })
        .expect("the subagent's request");
    assert!(child.body_text.contains("§ Plan"), "{}", child.body_text);
    assert!(
        child
            .body_text
            .contains("The approved plan \\\"Ship it\\\""),
        "{}",
        child.body_text
    );
    assert!(child.body_text.contains("1. Delegate the first step."));
}
