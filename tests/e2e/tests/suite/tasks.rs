//! Subagents on the real `pid` with the scripted model: the `task` tool's children are real
//! sessions (listed under their parent, attachable, resumable); results come back in order;
//! output schemas are enforced; guards stop children that loop, idle or outlive their parent.
//!
//! The scripted model plays every session: a prompt `call TOOL ARGS` is the parent's (see
//! `caller`); a child is recognized by its first message's `# Your task` and follows its
//! task's script (`answer X`, `schema`, `spawn`, `loop`, `wait N`, `hold`).

use std::time::Duration;

use pi_client::{Client, Notifications};
use pi_protocol::v1::{
    SessionAbort, SessionAttach, SessionAttachParams, SessionCreate, SessionCreateParams,
    SessionEvent, SessionIdParams, SessionInfo, SessionList, SessionListParams, SessionPrompt,
};
use pi_test_support::events::run_events;
use pi_test_support::model_server::{Gate, RecordedRequest, ScriptErrorKind, Turn};

/// Answers of the `flaky` child so far.
static FLAKY: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
use serde_json::{Value, json};

use super::harness::{MODEL, World, prompt};
use super::mcp_faults::{caller, run, tool_results};

/// The first user message's text.
fn first_text(request: &RecordedRequest) -> String {
    let first = &request.body["messages"][0]["content"];
    match first {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|block| block["text"].as_str())
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

/// A child's task (the line after `# Your task`), if `request` is a child's.
pub(super) fn child_task(request: &RecordedRequest) -> Option<String> {
    let text = first_text(request);
    let (_, rest) = text.split_once("# Your task\n\n")?;
    Some(rest.split("\n\n").next().unwrap_or_default().to_owned())
}

/// Tool results in the request's conversation.
fn results_so_far(request: &RecordedRequest) -> usize {
    request.body_text.matches("\"tool_result\"").count()
}

/// The last user message's text (a resumed child's new task).
fn last_user_text(request: &RecordedRequest) -> String {
    let messages = request.body["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    messages
        .iter()
        .rev()
        .find(|message| message["role"] == "user")
        .map(|message| match &message["content"] {
            Value::String(text) => text.clone(),
            Value::Array(blocks) => blocks
                .iter()
                .filter_map(|block| block["text"].as_str())
                .collect::<Vec<_>>()
                .join(" "),
            _ => String::new(),
        })
        .unwrap_or_default()
}

/// The scripted model for parents and children; children's first turns wait at `gate`, and
/// `hold` children wait at `never`.
fn responder(gate: Gate, never: Gate) -> impl Fn(&RecordedRequest) -> Result<Turn, String> {
    move |request| {
        let Some(task) = child_task(request) else {
            return caller(request);
        };
        let done = results_so_far(request);
        let last = last_user_text(request);
        if let Some(again) = last.strip_prefix("# Your task\n\nanswer again ") {
            // A resumed child: it answers its new task.
            let word = again.split("\n\n").next().unwrap_or_default();
            return Ok(Turn::reply().text(format!("again {word}")).into());
        }
        let turn = if let Some(word) = task.strip_prefix("answer ") {
            Turn::reply().text(word).hold_after(0, &gate)
        } else if task == "schema" {
            match done {
                0 => Turn::reply()
                    .tool_call("s1", "submit_result", json!({"data": {"count": "many"}}))
                    .hold_after(0, &gate),
                1 => Turn::reply().tool_call("s2", "submit_result", json!({"data": {"count": 3}})),
                _ => Turn::reply().text("submitted"),
            }
        } else if task == "spawn" {
            match done {
                0 => Turn::reply().tool_call(
                    "t1",
                    "task",
                    json!({"context": "", "tasks": [{"name": "deep", "task": "answer deep"}]}),
                ),
                _ => Turn::reply().text("spawned"),
            }
        } else if task == "loop" {
            Turn::reply().tool_call(format!("l{done}"), "bash", json!({"command": "true"}))
        } else if let Some(seconds) = task.strip_prefix("wait ") {
            match done {
                0 => Turn::reply().tool_call(
                    "w1",
                    "bash",
                    json!({"command": format!("sleep {seconds}")}),
                ),
                // After the long call: silence.
                _ => Turn::reply().text("late").hold_after(0, &never),
            }
        } else if let Some(line) = task.strip_prefix("append ") {
            match done {
                0 => Turn::reply().tool_call(
                    "a1",
                    "bash",
                    json!({"command": format!("echo {line} >> a.txt")}),
                ),
                _ => Turn::reply().text("appended"),
            }
        } else if task == "flaky" {
            // The first answer fails (overloaded); the session's automatic retry gets the second.
            if FLAKY.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                return Ok(Turn::api_error(529, ScriptErrorKind::Overloaded, "Overloaded").into());
            }
            Turn::reply().text("recovered")
        } else if task == "hold" {
            Turn::reply().text("never").hold_after(0, &never)
        } else {
            return Err(format!("unknown child task {task:?}"));
        };
        Ok(turn.into())
    }
}

/// A session in the daemon's home with `task`, `read` and `bash`, attached.
async fn parent(world: &World) -> (Client, Notifications, String) {
    parent_in(world, world.daemon.home.path()).await
}

/// A session in `cwd` with `task`, `read` and `bash`, attached.
async fn parent_in(world: &World, cwd: &std::path::Path) -> (Client, Notifications, String) {
    let (client, events) = world.client().await;
    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: cwd.display().to_string(),
            model: Some(MODEL.to_owned()),
            tools: Some(["read", "bash", "task"].map(str::to_owned).to_vec()),
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
    (client, events, session.id)
}

async fn children(client: &Client, parent: &str) -> Vec<SessionInfo> {
    let mut children = client
        .call::<SessionList>(&SessionListParams {
            parent_id: Some(parent.to_owned()),
            ..SessionListParams::default()
        })
        .await
        .unwrap()
        .sessions;
    children.sort_by(|a, b| a.task_name.cmp(&b.task_name));
    children
}

/// Waits (20 s at most) until `done` holds for the model server's requests.
async fn wait_for_requests(world: &World, what: &str, done: impl Fn(&[RecordedRequest]) -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !done(&world.server.requests()) {
        assert!(tokio::time::Instant::now() < deadline, "never saw {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn the_result(seen: &[pi_protocol::v1::SessionEventParams]) -> (String, bool, Value) {
    let (_, content, is_error, details) = tool_results(seen).remove(0);
    let content: Value = serde_json::from_str(&content).unwrap();
    (
        content[0]["text"].as_str().unwrap_or_default().to_owned(),
        is_error,
        details,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_children_run_at_once_report_in_order_and_are_sessions_of_their_own() {
    let world = World::start_with("anthropic-messages", &[]).await;
    let gate = Gate::new();
    world
        .server
        .respond_with(responder(gate.clone(), Gate::new()));
    let (client, mut events, id) = parent(&world).await;

    let call = json!({"context": "We count things.", "tasks": [
        {"name": "a", "task": "answer alpha"},
        {"name": "b", "task": "schema", "outputSchema": {"type": "object",
            "properties": {"count": {"type": "integer"}}, "required": ["count"]}},
        {"name": "c", "agent": "explore", "task": "answer gamma"},
    ]});
    client
        .call::<SessionPrompt>(&prompt(&id, &format!("call task {call}")))
        .await
        .unwrap();
    // All three children ask the model before any gets an answer: they run at once.
    wait_for_requests(&world, "three children at once", |requests| {
        requests.iter().filter(|r| child_task(r).is_some()).count() >= 3
    })
    .await;
    // A second client attaches to child `a` while it runs and sees it finish.
    let listed = children(&client, &id).await;
    assert_eq!(
        listed
            .iter()
            .map(|child| child.task_name.as_deref().unwrap_or_default())
            .collect::<Vec<_>>(),
        ["a", "b", "c"]
    );
    assert!(
        listed
            .iter()
            .all(|child| child.parent_session_id.as_deref() == Some(id.as_str()))
    );
    let child_a = listed[0].id.clone();
    let (watcher, mut watched) = world.client().await;
    watcher
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: child_a.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    gate.release();
    let seen = run_events(&mut events, &id).await;
    let watched_events = run_events(&mut watched, &child_a).await;
    assert!(
        watched_events.iter().any(|event| matches!(&event.event,
            SessionEvent::MessageEnd { message, .. }
                if serde_json::to_value(message).unwrap()["content"][0]["text"] == "alpha")),
        "the watcher saw the child's answer"
    );

    // Progress reached the parent's clients while the children ran.
    assert!(seen.iter().any(|event| matches!(&event.event,
        SessionEvent::ToolExecutionUpdate { tool_name, partial_result, .. }
            if tool_name == "task"
                && partial_result.details.as_ref().is_some_and(|d| d["tasks"].as_array().is_some_and(|t| t.len() == 3)))));
    let (text, failed, details) = the_result(&seen);
    assert!(!failed, "{text}");
    assert!(text.starts_with("3 task(s): 3 done."), "{text}");
    let a = text.find("## a (task): done").expect("a reported");
    let b = text.find("## b (task): done").expect("b reported");
    let c = text.find("## c (explore): done").expect("c reported");
    assert!(a < b && b < c, "{text}");
    assert!(
        text.contains(&format!("transcript: agent://{child_a}")),
        "{text}"
    );
    // b's first submission broke the schema; the corrected one is its result.
    assert_eq!(details["tasks"][1]["result"], json!({"count": 3}));
    assert_eq!(details["tasks"][0]["result"], "alpha");
    assert_eq!(details["tasks"][2]["result"], "gamma");
    let b_requests: Vec<RecordedRequest> = world
        .server
        .requests()
        .into_iter()
        .filter(|r| child_task(r).as_deref() == Some("schema"))
        .collect();
    assert!(
        b_requests[1].body_text.contains(
            r#"Validation failed for tool \"submit_result\":\n  - /data/count: \"many\" is not of type \"integer\""#
        ),
        "the child read why its result was refused: {}",
        b_requests[1].body_text
    );
    // The explore agent's child has its read-only tools and submit_result.
    let c_request = world
        .server
        .requests()
        .into_iter()
        .find(|r| child_task(r).as_deref() == Some("answer gamma"))
        .unwrap();
    let mut tools: Vec<String> = c_request.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect();
    tools.sort();
    assert_eq!(tools, ["find", "grep", "ls", "read", "submit_result"]);

    // The transcript through `read`.
    let seen = run(
        &client,
        &mut events,
        &id,
        &format!(
            "call read {}",
            json!({"path": format!("agent://{child_a}")})
        ),
    )
    .await;
    let (transcript, failed, _) = the_result(&seen);
    assert!(!failed, "{transcript}");
    assert!(transcript.starts_with("# Subagent a\n"), "{transcript}");
    assert!(transcript.contains("## Assistant\nalpha\n"), "{transcript}");

    // Resumed, the child gets the new task on top of its real history.
    let again =
        json!({"context": "", "tasks": [{"resume": child_a, "task": "answer again please"}]});
    let seen = run(&client, &mut events, &id, &format!("call task {again}")).await;
    let (text, failed, details) = the_result(&seen);
    assert!(!failed, "{text}");
    assert_eq!(details["tasks"][0]["result"], "again please");
    assert_eq!(details["tasks"][0]["sessionId"], child_a.as_str());
    let resumed = world
        .server
        .requests()
        .into_iter()
        .rfind(|r| child_task(r).as_deref() == Some("answer alpha"))
        .unwrap();
    let messages = resumed.body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert!(first_text(&resumed).contains("answer alpha"));
    assert_eq!(messages[1]["content"][0]["text"], "alpha");
    assert_eq!(children(&client, &id).await.len(), 3, "no new child");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guards_stop_children_that_loop_or_idle_and_a_parent_abort_stops_its_children() {
    let world = World::start_with(
        "anthropic-messages",
        &[
            (
                ".pi/settings.json",
                json!({"task": {"loopLimit": 3}, "retry": {"baseDelayMs": 10}}).to_string(),
            ),
            (
                ".pi/agents/broken.md",
                "---\nname: broken\n---\nNo description.\n".to_owned(),
            ),
            ("AGENTS.md", "PROJECT-RULES-MARKER\n".to_owned()),
            (
                ".pi/agent-profiles/bare.md",
                "---\nnoSkills: true\nnoContextFiles: true\n---\n".to_owned(),
            ),
        ],
    )
    .await;
    let gate = Gate::new();
    gate.release();
    world.server.respond_with(responder(gate, Gate::new()));
    let (client, mut events, id) = parent(&world).await;

    // A loop of identical calls is stopped; a long tool call does not count as idle, the
    // silence after it does.
    let call = json!({"context": "", "tasks": [
        {"name": "looper", "task": "loop"},
        {"name": "sleeper", "task": "wait 2", "timeout": 1},
    ]});
    let seen = run(&client, &mut events, &id, &format!("call task {call}")).await;
    let (text, failed, details) = the_result(&seen);
    assert!(failed, "{text}");
    assert!(text.starts_with("2 task(s): 0 done, 2 not."), "{text}");
    // A bad agent file is said, not fatal.
    assert!(
        text.contains("\n\nAgent files with problems (not loaded):\n- warning: ")
            && text.ends_with("broken.md: `description` is required (the `task` tool shows it)"),
        "{text}"
    );
    assert_eq!(details["tasks"][0]["status"], "failed");
    assert_eq!(
        details["tasks"][0]["error"],
        "stopped: the subagent made the same call (`bash` with the same arguments) 3 times in a \
         row"
    );
    assert_eq!(details["tasks"][1]["status"], "timed_out");
    assert_eq!(
        details["tasks"][1]["error"],
        "timed out: the subagent did nothing for 1 s"
    );
    // It got past its 2 s command: the timer waited while the tool ran.
    assert_eq!(details["tasks"][1]["turns"], 1);
    assert!(details["tasks"][1]["durationMs"].as_u64().unwrap() >= 3000);

    // A child whose model fails once is retried by its session; the task waits for the retry
    // instead of taking the first failure as the end.
    let call = json!({"context": "", "tasks": [{"name": "flaky", "task": "flaky"}]});
    let seen = run(&client, &mut events, &id, &format!("call task {call}")).await;
    let (text, failed, details) = the_result(&seen);
    assert!(!failed, "{text}");
    assert_eq!(details["tasks"][0]["result"], "recovered", "{text}");
    assert_eq!(FLAKY.load(std::sync::atomic::Ordering::SeqCst), 2);

    // A pi-subagents profile without context files: its child's prompt lacks AGENTS.md, a
    // default child's has it.
    let call =
        json!({"context": "", "tasks": [{"name": "bare", "agent": "bare", "task": "answer bare"}]});
    let seen = run(&client, &mut events, &id, &format!("call task {call}")).await;
    let (text, failed, _) = the_result(&seen);
    assert!(!failed, "{text}");
    let system_of = |task: &str| -> String {
        let request = world
            .server
            .requests()
            .into_iter()
            .find(|r| child_task(r).as_deref() == Some(task))
            .unwrap();
        request.body["system"].to_string()
    };
    assert!(!system_of("answer bare").contains("PROJECT-RULES-MARKER"));
    assert!(system_of("loop").contains("PROJECT-RULES-MARKER"));

    // Depth: a child may delegate, its child may not (task.maxDepth 2).
    let call = json!({"context": "", "tasks": [{"name": "middle", "task": "spawn"}]});
    let seen = run(&client, &mut events, &id, &format!("call task {call}")).await;
    let (text, failed, _) = the_result(&seen);
    assert!(!failed, "{text}");
    assert!(text.contains("spawned"), "{text}");
    let tools_of = |task: &str| -> Vec<String> {
        let request = world
            .server
            .requests()
            .into_iter()
            .find(|r| child_task(r).as_deref() == Some(task))
            .unwrap();
        request.body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(tools_of("spawn").contains(&"task".to_owned()));
    assert!(!tools_of("answer deep").contains(&"task".to_owned()));
    let middle = children(&client, &id)
        .await
        .into_iter()
        .find(|child| child.task_name.as_deref() == Some("middle"))
        .unwrap();
    let deep = children(&client, &middle.id).await;
    assert_eq!(deep.len(), 1);
    assert_eq!(deep[0].task_name.as_deref(), Some("deep"));

    // Bad requests say what is wrong.
    for (call, expected) in [
        (
            json!({"context": "", "tasks": [{"task": "x", "agent": "nobody"}]}),
            "Unknown agent \"nobody\". Available: bare, explore, plan, reviewer, task",
        ),
        (
            json!({"context": "", "tasks": [{"task": "x", "isolated": true}]}),
            "1 task(s): 0 done, 1 not.",
        ),
    ] {
        let seen = run(&client, &mut events, &id, &format!("call task {call}")).await;
        let (text, failed, _) = the_result(&seen);
        assert!(failed);
        assert!(text.starts_with(expected), "{text}");
    }

    // The parent's abort stops the child it waits for.
    let call = json!({"context": "", "tasks": [{"name": "holder", "task": "hold"}]});
    client
        .call::<SessionPrompt>(&prompt(&id, &format!("call task {call}")))
        .await
        .unwrap();
    wait_for_requests(&world, "the holder's request", |requests| {
        requests
            .iter()
            .any(|r| child_task(r).as_deref() == Some("hold"))
    })
    .await;
    client
        .call::<SessionAbort>(&SessionIdParams {
            session_id: id.clone(),
        })
        .await
        .unwrap();
    let seen = run_events(&mut events, &id).await;
    let (text, failed, details) = the_result(&seen);
    assert!(failed, "{text}");
    assert_eq!(details["tasks"][0]["status"], "aborted", "{text}");
    let holder = children(&client, &id)
        .await
        .into_iter()
        .find(|child| child.task_name.as_deref() == Some("holder"))
        .unwrap();
    assert_eq!(holder.status, pi_protocol::v1::SessionStatus::Idle);
}

/// Runs git in `dir` (with an identity for commits), asserting it succeeds.
fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let output = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=Test", "-c", "user.email=test@example.com"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn isolated_children_bring_their_changes_back_and_a_conflict_keeps_the_patch() {
    let world =
        World::start_with("anthropic-messages", &[("repo/a.txt", "one\n".to_owned())]).await;
    let gate = Gate::new();
    gate.release();
    world.server.respond_with(responder(gate, Gate::new()));
    let repo = world.daemon.home.path().join("repo");
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "a.txt"]);
    git(&repo, &["commit", "-q", "-m", "one"]);
    let (client, mut events, id) = parent_in(&world, &repo).await;

    // The child edits its own worktree; its change comes back to the parent's tree.
    let call = json!({"context": "", "tasks": [{"name": "adder", "task": "append two", "isolated": true}]});
    let seen = run(&client, &mut events, &id, &format!("call task {call}")).await;
    let (text, failed, details) = the_result(&seen);
    assert!(!failed, "{text}");
    let changes = &details["tasks"][0]["changes"];
    assert_eq!(changes["applied"], true, "{text}");
    assert!(
        text.contains(&format!(
            "changes: its changes (1 file(s)) were applied to {}",
            repo.canonicalize().unwrap().display()
        )),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("a.txt")).unwrap(),
        "one\ntwo\n"
    );
    // The worktree is gone, the patch stays.
    let patch = std::path::PathBuf::from(changes["patchPath"].as_str().unwrap());
    assert!(std::fs::read_to_string(&patch).unwrap().contains("+two"));
    let child = details["tasks"][0]["sessionId"].as_str().unwrap();
    let worktree = patch
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("worktrees")
        .join(child);
    assert!(!worktree.exists(), "{} remains", worktree.display());
    assert_eq!(git(&repo, &["worktree", "list"]).lines().count(), 1);

    // The parent's tree changed the same line meanwhile: the child's change conflicts, is
    // not forced, and its patch is kept.
    std::fs::write(repo.join("a.txt"), "uno\n").unwrap();
    let call = json!({"context": "", "tasks": [{"name": "clash", "task": "append three", "isolated": true}]});
    let seen = run(&client, &mut events, &id, &format!("call task {call}")).await;
    let (text, _, details) = the_result(&seen);
    let changes = &details["tasks"][0]["changes"];
    assert_eq!(changes["applied"], false, "{text}");
    assert!(
        text.contains("changes: its changes conflict with"),
        "{text}"
    );
    assert!(text.contains("and were not applied ("), "{text}");
    assert_eq!(
        std::fs::read_to_string(repo.join("a.txt")).unwrap(),
        "uno\n"
    );
    let kept = std::fs::read_to_string(changes["patchPath"].as_str().unwrap()).unwrap();
    assert!(kept.contains("+three"), "{kept}");
    assert!(
        text.contains(&format!(
            "the patch is kept in {}",
            changes["patchPath"].as_str().unwrap()
        )),
        "{text}"
    );

    // Outside a repository, `isolated` says why it cannot.
    let plain = tempfile::tempdir().unwrap();
    let (other, mut other_events, other_id) = parent_in(&world, plain.path()).await;
    let call = json!({"context": "", "tasks": [{"task": "append x", "isolated": true}]});
    let seen = run(
        &other,
        &mut other_events,
        &other_id,
        &format!("call task {call}"),
    )
    .await;
    let (_, failed, details) = the_result(&seen);
    assert!(failed);
    assert_eq!(
        details["tasks"][0]["error"],
        format!(
            "isolated needs a git repository, and {} is not in one",
            plain.path().display()
        )
    );
}
