//! oh-my-pi's tools on the real `pid`, opt-in by name: `todo` keeps a phased list in the
//! session (applied one call after another, reminded of at the end of a run, read back after
//! `kill -9`, following navigation), `ask` reaches the people attached (the first answer
//! wins) and says at once when nobody can answer.

use std::time::Duration;

use pi_client::{Client, Endpoint, Notifications};
use pi_protocol::v1::{
    ClientCapabilities, SessionAttach, SessionAttachParams, SessionCreate, SessionCreateParams,
    SessionEvent, SessionGet, SessionIdParams, SessionNavigate, SessionNavigateParams, SessionRead,
    SessionReadParams, SessionSetTodos, SessionSetTodosParams, TodoList, TodoPhase, TodoStatus,
    TodoTask, UiAnswer, UiRequest, UiRequestParams, UiRespond, UiRespondParams,
};
use pi_test_support::events::{events_until, run_events};
use pi_test_support::model_server::{RecordedRequest, Turn};
use serde_json::{Value, json};

use super::harness::{MODEL, World};
use super::mcp_faults::{caller, run, tool_results};

/// The text of the last message of a request, whatever its shape.
fn last_text(request: &RecordedRequest) -> String {
    let messages = request.body["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let last = messages.last().cloned().unwrap_or(Value::Null);
    match &last["content"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|block| block["text"].as_str())
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

/// The `caller` model, and on a todo reminder: every open task marked done, in one message of
/// parallel calls.
fn todo_model(request: &RecordedRequest) -> Result<Turn, String> {
    finishing(request, &["t1", "t2", "t3"])
}

/// The `caller` model, and on a todo reminder: `tasks` marked done in parallel calls.
fn finishing(request: &RecordedRequest, tasks: &[&str]) -> Result<Turn, String> {
    let text = last_text(request);
    if text.contains("<system-reminder>") {
        let mut turn = Turn::reply();
        for (at, id) in tasks.iter().enumerate() {
            turn = turn.tool_call(
                format!("done_{at}"),
                "todo",
                json!({"op": "done", "task": id, "phase": null}),
            );
        }
        return Ok(turn.into());
    }
    caller(request)
}

async fn session_with(client: &Client, cwd: &str, tools: &[&str]) -> String {
    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: cwd.to_owned(),
            model: Some(MODEL.to_owned()),
            tools: Some(tools.iter().map(|name| (*name).to_owned()).collect()),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: session.id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    session.id
}

async fn todos(client: &Client, session_id: &str) -> TodoList {
    client
        .call::<SessionGet>(&SessionIdParams {
            session_id: session_id.to_owned(),
        })
        .await
        .unwrap()
        .todos
}

fn statuses(list: &TodoList) -> Vec<(String, TodoStatus)> {
    list.tasks()
        .map(|task| (task.id.clone(), task.status))
        .collect()
}

fn updates(events: &[pi_protocol::v1::SessionEventParams]) -> Vec<TodoList> {
    events
        .iter()
        .filter_map(|event| match &event.event {
            SessionEvent::TodosUpdated { todos } => Some(todos.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn todo_keeps_a_phased_list_reminds_of_open_tasks_and_survives_kill_9() {
    let mut world = World::start("anthropic-messages").await;
    world.server.respond_with(todo_model);
    let home = world.daemon.home.path().display().to_string();
    let (client, mut events) = world.client().await;
    let session_id = session_with(&client, &home, &["read", "todo"]).await;
    // pi's default set stays pi's: a session that names no tools has no todo.
    let plain = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: home.clone(),
            model: Some(MODEL.to_owned()),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    let plain_tools = client
        .call::<SessionGet>(&SessionIdParams {
            session_id: plain.id.clone(),
        })
        .await
        .unwrap()
        .tools;
    assert_eq!(plain_tools, ["read", "bash", "edit", "write"]);

    let init = json!({"op": "init", "phases": [
        {"name": "Build", "tasks": ["parse the input", "check types"]},
        {"name": "Ship", "tasks": ["cut a release"]}
    ]});
    let seen = run(
        &client,
        &mut events,
        &session_id,
        &format!("call todo {init}"),
    )
    .await;
    let (tool, content, is_error, details) = tool_results(&seen).remove(0);
    assert_eq!(tool, "todo");
    assert!(!is_error, "{content}");
    let content: Value = serde_json::from_str(&content).unwrap();
    assert_eq!(
        content[0]["text"],
        "Build:\n  [>] t1 parse the input\n  [ ] t2 check types\nShip:\n  [ ] t3 cut a release\n0/3 done; in progress: t1 parse the input"
    );
    assert_eq!(
        details["todos"]["phases"][0]["tasks"][0]["status"],
        "in_progress"
    );
    assert_eq!(
        updates(&seen)[0].tasks().count(),
        3,
        "the change is announced"
    );

    // The run would have ended with open tasks: it goes on with one hidden reminder,
    // answered with three parallel `done` calls, which the session applies one after the
    // other.
    let reminded = seen;
    let requests = world.server.requests();
    let reminders: Vec<String> = requests
        .iter()
        .map(last_text)
        .filter(|text| text.contains("<system-reminder>"))
        .collect();
    assert_eq!(reminders.len(), 1, "{reminders:?}");
    assert!(
        reminders[0].contains("You stopped with open items on your todo list:\n- t1 parse the input (in_progress)\n- t2 check types (pending)\n- t3 cut a release (pending)"),
        "{}",
        reminders[0]
    );
    let results = tool_results(&reminded);
    assert_eq!(results.len(), 4);
    assert!(
        results.iter().all(|(_, _, is_error, _)| !is_error),
        "{results:?}"
    );
    let done = todos(&client, &session_id).await;
    assert!(
        done.tasks()
            .all(|task| task.status == TodoStatus::Completed),
        "{done:?}"
    );
    assert_eq!(updates(&reminded).last(), Some(&done));

    // A failed operation changes nothing and says what to do.
    let seen = run(
        &client,
        &mut events,
        &session_id,
        &format!("call todo {}", json!({"op": "start", "task": "t9"})),
    )
    .await;
    let (_, content, is_error, _) = tool_results(&seen).remove(0);
    assert!(is_error);
    assert!(
        content.contains("no task \\\"t9\\\" in the todo list; use a task id (t1, t2, …) or its exact text (op `view` lists them). The todo list is unchanged."),
        "{content}"
    );
    assert_eq!(todos(&client, &session_id).await, done);

    // The list is the branch's: after kill -9 and a restart it is read back.
    drop(client);
    world.daemon.kill9().await;
    world.daemon.restart().await;
    world.server.respond_with(todo_model);
    let (client, mut events) = world.client().await;
    assert_eq!(todos(&client, &session_id).await, done);

    // Back to before the list: empty, and attached clients hear it.
    client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: session_id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    let read = client
        .call::<SessionRead>(&SessionReadParams {
            session_id: session_id.clone(),
            scope: Default::default(),
            limit: None,
            cursor: None,
        })
        .await
        .unwrap();
    let first_user = read
        .entries
        .iter()
        .find(|record| {
            matches!(
                &record.entry,
                pi_protocol::v1::SessionEntry::Message {
                    message: pi_protocol::v1::message::AgentMessage::User(_),
                    ..
                }
            )
        })
        .unwrap()
        .entry
        .id()
        .to_owned();
    client
        .call::<SessionNavigate>(&SessionNavigateParams {
            session_id: session_id.clone(),
            entry_id: first_user,
            summarize: false,
            instructions: None,
            replace_instructions: false,
        })
        .await
        .unwrap();
    let cleared = events_until(&mut events, &session_id, |event| {
        matches!(event.event, SessionEvent::TodosUpdated { .. })
    })
    .await;
    assert_eq!(updates(&cleared), [TodoList::default()]);
    assert!(todos(&client, &session_id).await.is_empty());

    // A client sets the list whole (oh-my-pi's set_todos): numbered, started, stored.
    let task = |content: &str| TodoTask {
        id: String::new(),
        content: content.to_owned(),
        status: TodoStatus::Pending,
        blocker: None,
    };
    client
        .call::<SessionSetTodos>(&SessionSetTodosParams {
            session_id: session_id.clone(),
            todos: TodoList {
                phases: vec![TodoPhase {
                    name: "Review".to_owned(),
                    tasks: vec![task("read the diff"), task("comment")],
                }],
            },
        })
        .await
        .unwrap();
    let set = todos(&client, &session_id).await;
    assert_eq!(
        statuses(&set),
        [
            ("t1".to_owned(), TodoStatus::InProgress),
            ("t2".to_owned(), TodoStatus::Pending)
        ]
    );
    let two = TodoList {
        phases: vec![TodoPhase {
            name: "Review".to_owned(),
            tasks: vec![
                TodoTask {
                    status: TodoStatus::InProgress,
                    ..task("a")
                },
                TodoTask {
                    status: TodoStatus::InProgress,
                    ..task("b")
                },
            ],
        }],
    };
    let error = client
        .call::<SessionSetTodos>(&SessionSetTodosParams {
            session_id: session_id.clone(),
            todos: two,
        })
        .await
        .unwrap_err();
    assert_eq!(
        error.rpc_kind(),
        Some(pi_protocol::ErrorKind::InvalidParams)
    );
    assert_eq!(
        error.to_string(),
        "more than one task is in progress (t1, t2); at most one may be"
    );
    drop(client);
    world.daemon.kill9().await;
    world.daemon.restart().await;
    let (client, _events) = world.client().await;
    assert_eq!(todos(&client, &session_id).await, set);
}

async fn next_question(events: &mut Notifications) -> UiRequestParams {
    tokio::time::timeout(
        Duration::from_secs(20),
        events.next_of::<pi_protocol::v1::UiRequestNotification>(),
    )
    .await
    .expect("a question arrives")
    .unwrap()
    .unwrap()
}

async fn respond(client: &Client, question: &UiRequestParams, answer: UiAnswer) {
    let accepted = client
        .call::<UiRespond>(&UiRespondParams {
            session_id: question.session_id.clone(),
            request_id: question.request_id.clone(),
            answer,
        })
        .await
        .unwrap();
    assert!(accepted.accepted);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_waits_for_a_person_and_says_at_once_when_nobody_can_answer() {
    let world = World::start("anthropic-messages").await;
    world.server.respond_with(caller);
    let home = world.daemon.home.path().display().to_string();
    // A headless client: it hears the run, not questions.
    let (client, mut events) = Client::connect(
        &Endpoint::Unix(world.daemon.paths.socket_path()),
        pi_client::client_info("headless", "0"),
        ClientCapabilities {
            opt_out_notifications: vec!["ui/request".to_owned()],
        },
    )
    .await
    .unwrap();
    let session_id = session_with(&client, &home, &["ask"]).await;
    let question = json!({"question": "Which colour?", "options": ["red", "green"], "other": true});
    let seen = run(
        &client,
        &mut events,
        &session_id,
        &format!("call ask {question}"),
    )
    .await;
    let (_, content, is_error, _) = tool_results(&seen).remove(0);
    assert!(is_error);
    assert!(
        content.contains(
            "Nobody can answer: no client that shows questions is attached to this session."
        ),
        "{content}"
    );

    // A person attaches: the question reaches them, "Other" asks for the text.
    let (person, mut person_events) = world.client().await;
    person
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: session_id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    client
        .call::<pi_protocol::v1::SessionPrompt>(&super::harness::prompt(
            &session_id,
            &format!("call ask {question}"),
        ))
        .await
        .unwrap();
    let asked = next_question(&mut person_events).await;
    assert_eq!(
        asked.request,
        UiRequest::Select {
            title: "Which colour?".to_owned(),
            options: vec![
                "red".to_owned(),
                "green".to_owned(),
                "Other (type an answer)".to_owned()
            ],
            multiple: false,
        }
    );
    respond(
        &person,
        &asked,
        UiAnswer {
            value: Some("Other (type an answer)".to_owned()),
            ..UiAnswer::default()
        },
    )
    .await;
    let typed = next_question(&mut person_events).await;
    assert!(matches!(&typed.request, UiRequest::Input { title, .. } if title == "Which colour?"));
    respond(
        &person,
        &typed,
        UiAnswer {
            value: Some("purple".to_owned()),
            ..UiAnswer::default()
        },
    )
    .await;
    let seen = run_events(&mut events, &session_id).await;
    let (_, content, is_error, details) = tool_results(&seen).remove(0);
    assert!(!is_error, "{content}");
    assert!(content.contains("The user answered: purple"), "{content}");
    assert_eq!(
        details["answeredBy"]
            .as_str()
            .map(|by| by.starts_with("pi-test")),
        Some(true)
    );
    let next = world.server.requests().last().unwrap().body_text.clone();
    assert!(
        next.contains("The user answered: purple"),
        "the model read it"
    );

    // Several choices.
    let several = json!({"question": "Which checks?", "options": ["lint", "test", "bench"], "multiple": true});
    client
        .call::<pi_protocol::v1::SessionPrompt>(&super::harness::prompt(
            &session_id,
            &format!("call ask {several}"),
        ))
        .await
        .unwrap();
    let asked = next_question(&mut person_events).await;
    assert!(matches!(
        asked.request,
        UiRequest::Select { multiple: true, .. }
    ));
    respond(
        &person,
        &asked,
        UiAnswer {
            values: vec!["lint".to_owned(), "bench".to_owned()],
            ..UiAnswer::default()
        },
    )
    .await;
    let seen = run_events(&mut events, &session_id).await;
    let (_, content, _, _) = tool_results(&seen).remove(0);
    assert!(
        content.contains("The user picked: lint; bench"),
        "{content}"
    );
}

/// An editor over ACP, in a project whose settings turn oh-my-pi's tools on: the todo list
/// arrives as `plan` updates, and `ask` as a permission prompt the editor answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acp_editor_sees_the_todo_list_as_a_plan_and_answers_ask() {
    let world = World::start_with(
        "anthropic-messages",
        &[(
            "proj/.pi/settings.json",
            json!({"ompTools": true}).to_string(),
        )],
    )
    .await;
    world
        .server
        .respond_with(|request| finishing(request, &["t1", "t2"]));
    let project = world.daemon.home.path().join("proj");
    let driver = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../peers/acp_omp.mjs");
    let init =
        json!({"op": "init", "phases": [{"name": "Fix", "tasks": ["find the bug", "fix it"]}]});
    let ask = json!({"question": "Ship it?", "options": ["yes, ship", "not yet"]});
    let output = tokio::process::Command::new("node")
        .arg(&driver)
        .envs(world.daemon.env())
        .env("PICTL", pi_test_support::workspace_binary("pictl"))
        .env("PROJECT", &project)
        .env("PI_PEERS_DIR", pi_test_support::peers::dir())
        .env("TODO", format!("call todo {init}"))
        .env("ASK", format!("call ask {ask}"))
        .env("ANSWER", "not yet")
        .output()
        .await
        .expect("node runs (tests/install-peers installs it)");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the driver failed:\n{stderr}");
    let seen: Value = serde_json::from_slice(&output.stdout).unwrap();
    let plans: Vec<&Value> = seen["updates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|update| &update["update"])
        .filter(|update| update["sessionUpdate"] == "plan")
        .collect();
    assert_eq!(
        plans.first().map(|plan| &plan["entries"]),
        Some(&json!([
            {"content": "find the bug", "priority": "medium", "status": "in_progress"},
            {"content": "fix it", "priority": "medium", "status": "pending"}
        ])),
        "{plans:?}"
    );
    // The reminder's calls finished both.
    assert_eq!(
        plans.last().map(|plan| &plan["entries"]),
        Some(&json!([
            {"content": "find the bug", "priority": "medium", "status": "completed"},
            {"content": "fix it", "priority": "medium", "status": "completed"}
        ])),
        "{plans:?}"
    );
    let permission = &seen["permissions"][0];
    let names: Vec<&str> = permission["options"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|option| option["name"].as_str())
        .collect();
    assert_eq!(names, ["yes, ship", "not yet"]);
    assert_eq!(
        permission["toolCall"]["content"][0]["content"]["text"],
        "Ship it?"
    );
    let answer = world
        .server
        .requests()
        .iter()
        .rev()
        .find(|request| request.body_text.contains("The user picked"))
        .map(|request| request.body_text.clone())
        .expect("the answer reached the model");
    assert!(answer.contains("The user picked: not yet"), "{answer}");
    for prompt in seen["prompts"].as_array().unwrap() {
        assert_eq!(prompt["stopReason"], "end_turn");
    }
}
