//! MCP servers that misbehave, on the real `pid`: a server written with the official Python
//! SDK (`tests/peers/fault_server.py`, its SDK installed by `tests/install-peers`) crashes,
//! hangs, returns a megabyte, changes its tools and fails at start on request. Sessions go on:
//! a crashed server starts again by itself, one that keeps failing trips the circuit breaker,
//! and the tool lists follow the server.

use std::collections::BTreeSet;

use pi_client::{Client, Notifications};
use pi_protocol::v1::{
    ArtifactRead, ArtifactReadParams, McpList, McpListParams, McpLogs, McpLogsParams, McpRestart,
    McpRestartParams, McpSessionServer, McpSetSessionServers, McpSetSessionServersParams,
    SessionAttach, SessionAttachParams, SessionCreate, SessionCreateParams, SessionEvent,
    SessionEventParams, SessionGet, SessionIdParams, SessionPrompt,
};
use pi_test_support::events::run_events;
use pi_test_support::model_server::{RecordedRequest, Turn};
use pi_test_support::{peers, procfs};
use serde_json::{Value, json};

use super::harness::{MODEL, World, prompt};
use super::mcp::{ready, wait_for_server};

/// A `mcpServers` entry running the fault server with `env`.
pub(super) fn fault_server(env: Value) -> Value {
    json!({
        "command": peers::python().display().to_string(),
        "args": [peers::fault_server().display().to_string()],
        "env": env,
    })
}

/// The model: a prompt `call TOOL ARGS` makes it call TOOL with the JSON ARGS when TOOL is
/// offered, and say which tools it has when not; after the result it says "Done.".
pub(super) fn caller(request: &RecordedRequest) -> Result<Turn, String> {
    let messages = request.body["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let last = messages.last().cloned().unwrap_or(Value::Null);
    let blocks = last["content"].as_array().cloned().unwrap_or_default();
    if blocks.iter().any(|block| block["type"] == "tool_result") {
        return Ok(Turn::reply().text("Done.").into());
    }
    let text: String = blocks
        .iter()
        .filter_map(|block| block["text"].as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let text = last["content"].as_str().map_or(text, str::to_owned);
    let Some(rest) = text.strip_prefix("call ") else {
        return Err(format!("not a `call` prompt: {text:?}"));
    };
    let (tool, args) = rest.split_once(' ').unwrap_or((rest, "{}"));
    let offered: Vec<&str> = request.body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    if !offered.contains(&tool) {
        return Ok(Turn::reply()
            .text(format!("NO TOOL {tool}; offered: {offered:?}"))
            .into());
    }
    let args: Value = serde_json::from_str(args).map_err(|error| error.to_string())?;
    Ok(Turn::reply().tool_call("call_1", tool, args).into())
}

/// A daemon whose user `mcp.json` has the fault server as `fault`, its model the `caller`.
async fn fault_world() -> World {
    let mcp_json = json!({"mcpServers": {
        "fault": fault_server(json!({})),
    }});
    let world = World::start_with(
        "anthropic-messages",
        &[(".pi/agent/mcp.json", mcp_json.to_string())],
    )
    .await;
    world.server.respond_with(caller);
    world
}

/// A session in `cwd` on a client of its own, attached.
pub(super) async fn session(world: &World, cwd: &str) -> (Client, Notifications, String) {
    let (client, events) = world.client().await;
    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: cwd.to_owned(),
            model: Some(MODEL.to_owned()),
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

/// Sends `text` and reads the run's events.
pub(super) async fn run(
    client: &Client,
    events: &mut Notifications,
    session_id: &str,
    text: &str,
) -> Vec<SessionEventParams> {
    client
        .call::<SessionPrompt>(&prompt(session_id, text))
        .await
        .unwrap();
    run_events(events, session_id).await
}

/// The run's tool results: (tool, content as JSON text, is_error, details).
pub(super) fn tool_results(events: &[SessionEventParams]) -> Vec<(String, String, bool, Value)> {
    events
        .iter()
        .filter_map(|event| match &event.event {
            SessionEvent::ToolExecutionEnd {
                tool_name,
                result,
                is_error,
                ..
            } => Some((
                tool_name.clone(),
                serde_json::to_string(&result.content).unwrap(),
                *is_error,
                result.details.clone().unwrap_or(Value::Null),
            )),
            _ => None,
        })
        .collect()
}

/// The model's last text of the run.
pub(super) fn final_text(events: &[SessionEventParams]) -> String {
    events
        .iter()
        .rev()
        .find_map(|event| match &event.event {
            SessionEvent::MessageEnd { message, .. } => {
                let value = serde_json::to_value(message).unwrap();
                (value["role"] == "assistant").then(|| value["content"].to_string())
            }
            _ => None,
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_server_starts_again_and_hangs_and_big_results_do_not_harm_sessions() {
    let world = fault_world().await;
    let cwd = world.daemon.home.path().display().to_string();
    let (client, mut events, id) = session(&world, &cwd).await;
    let (other, mut other_events, other_id) = session(&world, &cwd).await;
    let first = wait_for_server(&client, "ready", ready).await;
    let first_pid = first.pid.unwrap();

    // A call in flight when the server crashes fails, naming the server and what happened;
    // the other session is unharmed and the server comes back by itself.
    let crashed = run(&client, &mut events, &id, "call mcp__fault__crash {}").await;
    let results = tool_results(&crashed);
    assert_eq!(results.len(), 1, "{crashed:?}");
    let (_, content, is_error, _) = &results[0];
    assert!(is_error);
    assert!(
        content.contains("MCP server \\\"fault\\\" stopped while running crash"),
        "{content}"
    );
    let restarted = wait_for_server(&client, "restarted", |server| {
        server.state == "ready" && server.starts == 2
    })
    .await;
    assert_ne!(restarted.pid, Some(first_pid));
    let logs = std::fs::read_to_string(&restarted.log_path).unwrap();
    assert!(logs.contains("crashing on request"), "{logs}");
    let echoed = run(
        &other,
        &mut other_events,
        &other_id,
        r#"call mcp__fault__echo {"text": "after the crash"}"#,
    )
    .await;
    let results = tool_results(&echoed);
    assert_eq!(results.len(), 1, "{echoed:?}");
    assert!(!results[0].2, "{results:?}");
    assert!(results[0].1.contains("after the crash"), "{results:?}");

    // A megabyte of text keeps its head for the model and goes whole to an artifact.
    let big = run(
        &client,
        &mut events,
        &id,
        r#"call mcp__fault__big {"kilobytes": 1024}"#,
    )
    .await;
    let (_, content, is_error, details) = tool_results(&big).remove(0);
    assert!(!is_error);
    assert!(content.len() < 60_000, "{} bytes", content.len());
    assert!(content.contains("line 000001"));
    assert!(content.contains("Full output: artifact://"), "{content}");
    let reference = details["fullOutputPath"].as_str().unwrap();
    let stored = client
        .call::<ArtifactRead>(&ArtifactReadParams {
            session_id: id.clone(),
            artifact_id: reference.to_owned(),
            offset: None,
            limit: Some(4 << 20),
        })
        .await
        .unwrap();
    assert!(stored.total_bytes >= 1 << 20, "{}", stored.total_bytes);
    assert!(stored.data.ends_with("\n"), "whole lines");

    // The server changes its tools: the sessions' next runs offer them. Two tools whose names
    // clean to the same model name get distinct, stable names.
    for name in ["greet.x", "greet_x"] {
        let added = run(
            &client,
            &mut events,
            &id,
            &format!(r#"call mcp__fault__add_tool {{"name": "{name}"}}"#),
        )
        .await;
        assert!(tool_results(&added)[0].1.contains("added"), "{added:?}");
    }
    let listed = wait_for_server(&client, "with the new tools", |server| {
        server.tools.contains(&"greet_x".to_owned())
    })
    .await;
    assert!(listed.tools.contains(&"greet.x".to_owned()));
    let offered = run(&other, &mut other_events, &other_id, "call nothing").await;
    let text = final_text(&offered);
    let names: Vec<String> = text
        .split('"')
        .filter(|part| part.starts_with("mcp__fault__greet"))
        .map(|part| part.trim_end_matches('\\').to_owned())
        .collect();
    assert_eq!(names.len(), 2, "{text}");
    assert!(
        names
            .iter()
            .all(|name| name.len() == "mcp__fault__greet_x".len() + 9),
        "both carry a hash suffix: {names:?}"
    );
    assert_ne!(names[0], names[1]);
    let greeted = run(
        &other,
        &mut other_events,
        &other_id,
        &format!("call {} {{}}", names[0]),
    )
    .await;
    assert!(
        tool_results(&greeted)[0].1.contains("hello from greet"),
        "{greeted:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_past_the_timeout_fails_and_the_server_serves_the_next() {
    let mut server = fault_server(json!({}));
    server["timeout"] = json!(1000);
    let mcp_json = json!({"mcpServers": {"fault": server}});
    let world = World::start_with(
        "anthropic-messages",
        &[(".pi/agent/mcp.json", mcp_json.to_string())],
    )
    .await;
    world.server.respond_with(caller);
    let cwd = world.daemon.home.path().display().to_string();
    let (client, mut events, id) = session(&world, &cwd).await;
    wait_for_server(&client, "ready", ready).await;
    let hung = run(&client, &mut events, &id, "call mcp__fault__hang {}").await;
    let (_, content, is_error, _) = tool_results(&hung).remove(0);
    assert!(is_error);
    assert!(
        content.contains("MCP server \\\"fault\\\" did not answer hang within 1 s"),
        "{content}"
    );
    let echoed = run(
        &client,
        &mut events,
        &id,
        r#"call mcp__fault__echo {"text": "still serving"}"#,
    )
    .await;
    assert!(tool_results(&echoed)[0].1.contains("still serving"));
    let list = client
        .call::<McpList>(&McpListParams::default())
        .await
        .unwrap();
    assert_eq!(list.servers[0].starts, 1, "the hang cost no restart");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_keeps_failing_trips_the_circuit_breaker_until_restarted() {
    let dir = tempfile::tempdir().unwrap();
    let count = dir.path().join("starts");
    let mcp_json = json!({"mcpServers": {
        "flaky": fault_server(json!({
            "FAULT_SERVER_EXIT_AT_START": "1",
            "FAULT_SERVER_COUNT_FILE": count.display().to_string(),
        })),
    }});
    let world = World::start_with(
        "anthropic-messages",
        &[(".pi/agent/mcp.json", mcp_json.to_string())],
    )
    .await;
    world.server.respond_with(caller);
    let cwd = world.daemon.home.path().display().to_string();
    let (client, mut events, id) = session(&world, &cwd).await;

    // Started at session creation, then again with a growing backoff, five times in all.
    let tripped = wait_for_server(&client, "tripped", |server| {
        server
            .last_error
            .as_deref()
            .is_some_and(|error| error.contains("times in a row"))
    })
    .await;
    assert_eq!(tripped.state, "failed");
    assert_eq!(tripped.starts, 5);
    let error = tripped.last_error.unwrap();
    assert!(
        error.contains(
            "it failed 5 times in a row, so it stays stopped for 60 s (`pictl mcp restart \
             flaky` starts it now)"
        ),
        "{error}"
    );
    let starts = || std::fs::read_to_string(&count).unwrap().lines().count();
    assert_eq!(starts(), 5);

    // While the breaker is open, runs go on without the server and do not start it.
    let without = run(&client, &mut events, &id, "call mcp__flaky__echo {}").await;
    assert!(
        final_text(&without).contains("NO TOOL mcp__flaky__echo"),
        "{without:?}"
    );
    assert_eq!(starts(), 5);

    // A restart closes the breaker: the server is tried again.
    let restarted = client
        .call::<McpRestart>(&McpRestartParams {
            name: "flaky".to_owned(),
        })
        .await
        .unwrap();
    assert_eq!(restarted.restarted, 1);
    wait_for_server(&client, "tried again", |server| server.starts > 5).await;
    let logs = std::fs::read_to_string(&tripped.log_path).unwrap();
    assert!(logs.contains("exiting at start"), "{logs}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_daemon_offers_a_starting_servers_cached_tools() {
    let mcp_json = json!({"mcpServers": {"fault": fault_server(json!({}))}});
    let mut world = World::start_with(
        "anthropic-messages",
        &[(".pi/agent/mcp.json", mcp_json.to_string())],
    )
    .await;
    world.server.respond_with(caller);
    let cwd = world.daemon.home.path().display().to_string();
    {
        let (client, _events, _id) = session(&world, &cwd).await;
        wait_for_server(&client, "ready", ready).await;
    }
    // Killed: the cache was written before the server showed as ready.
    world.daemon.kill9().await;
    world.daemon.restart().await;
    // The new daemon starts the server with the session, and the first run offers its tools
    // from the cache at once (it was seen: no wait), and the call waits for the server.
    let (client, mut events, id) = session(&world, &cwd).await;
    let echoed = run(
        &client,
        &mut events,
        &id,
        r#"call mcp__fault__echo {"text": "from the cache"}"#,
    )
    .await;
    let results = tool_results(&echoed);
    assert_eq!(results.len(), 1, "{}", final_text(&echoed));
    assert!(!results[0].2, "{results:?}");
    assert!(results[0].1.contains("from the cache"), "{results:?}");
    assert!(
        !echoed
            .iter()
            .any(|event| matches!(event.event, SessionEvent::ToolsWaitStart { .. })),
        "a server seen before is not waited for"
    );
}

/// The MCP tools the model was offered, from its "NO TOOL" answer.
fn offered_mcp_tools(events: &[SessionEventParams]) -> Vec<String> {
    let text = final_text(events);
    assert!(text.contains("NO TOOL"), "{text}");
    let mut names: Vec<String> = text
        .split('"')
        .filter(|part| part.starts_with("mcp__"))
        .map(|part| part.trim_end_matches('\\').to_owned())
        .collect();
    names.sort();
    names.dedup();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_are_turned_off_per_session_and_by_settings() {
    let mcp_json = json!({"mcpServers": {
        "fault": fault_server(json!({})),
        "other": fault_server(json!({"WHICH": "other"})),
    }});
    let world = World::start_with(
        "anthropic-messages",
        &[
            (".pi/agent/mcp.json", mcp_json.to_string()),
            (
                "off/.pi/settings.json",
                json!({"mcp": {"enabled": false}}).to_string(),
            ),
            (
                "partial/.pi/settings.json",
                json!({"mcp": {"disabledServers": ["other"]}}).to_string(),
            ),
        ],
    )
    .await;
    world.server.respond_with(caller);
    let home = world.daemon.home.path();
    let cwd = home.display().to_string();
    let (client, mut events, id) = session(&world, &cwd).await;
    let both = |server: &pi_protocol::v1::McpServerStatus| server.state == "ready";
    wait_for_server(&client, "fault ready", |s| s.name == "fault" && both(s)).await;
    wait_for_server(&client, "other ready", |s| s.name == "other" && both(s)).await;
    let all = offered_mcp_tools(&run(&client, &mut events, &id, "call nothing").await);
    assert!(all.contains(&"mcp__fault__echo".to_owned()), "{all:?}");
    assert!(all.contains(&"mcp__other__echo".to_owned()), "{all:?}");

    // Off for this session: its next run goes without it, and it no longer holds it.
    let off = client
        .call::<pi_protocol::v1::McpSetEnabled>(&pi_protocol::v1::McpSetEnabledParams {
            session_id: id.clone(),
            name: "other".to_owned(),
            enabled: false,
        })
        .await
        .unwrap();
    assert_eq!(off.disabled_servers, ["other"]);
    let without = offered_mcp_tools(&run(&client, &mut events, &id, "call nothing").await);
    assert!(
        without.iter().all(|name| name.starts_with("mcp__fault__")),
        "{without:?}"
    );
    let list = client
        .call::<McpList>(&McpListParams::default())
        .await
        .unwrap();
    let other = list.servers.iter().find(|s| s.name == "other").unwrap();
    assert!(other.sessions.is_empty(), "{other:?}");

    // On again.
    let on = client
        .call::<pi_protocol::v1::McpSetEnabled>(&pi_protocol::v1::McpSetEnabledParams {
            session_id: id.clone(),
            name: "other".to_owned(),
            enabled: true,
        })
        .await
        .unwrap();
    assert!(on.disabled_servers.is_empty());
    let back = offered_mcp_tools(&run(&client, &mut events, &id, "call nothing").await);
    assert!(back.contains(&"mcp__other__echo".to_owned()), "{back:?}");

    // A project's settings turn MCP off, or one server.
    let off_cwd = home.join("off").display().to_string();
    let (off_client, mut off_events, off_id) = session(&world, &off_cwd).await;
    let none = offered_mcp_tools(&run(&off_client, &mut off_events, &off_id, "call nothing").await);
    assert!(none.is_empty(), "{none:?}");
    let partial_cwd = home.join("partial").display().to_string();
    let (p_client, mut p_events, p_id) = session(&world, &partial_cwd).await;
    // A server without a `cwd` runs in its session's directory: this one is a new process.
    wait_for_server(&p_client, "partial's fault ready", |s| {
        s.name == "fault" && both(s) && s.sessions.contains(&p_id)
    })
    .await;
    let partial = offered_mcp_tools(&run(&p_client, &mut p_events, &p_id, "call nothing").await);
    assert!(
        partial.contains(&"mcp__fault__echo".to_owned()),
        "{partial:?}"
    );
    assert!(
        partial.iter().all(|name| !name.starts_with("mcp__other__")),
        "{partial:?}"
    );

    // An unknown session is refused.
    let error = client
        .call::<pi_protocol::v1::McpSetEnabled>(&pi_protocol::v1::McpSetEnabledParams {
            session_id: "nope".to_owned(),
            name: "other".to_owned(),
            enabled: false,
        })
        .await
        .unwrap_err();
    assert!(error.to_string().contains("nope"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_filesystem_server_is_shared_by_sessions_in_different_directories() {
    let dir = tempfile::tempdir().unwrap();
    let allowed = dir.path().canonicalize().unwrap();
    // A `cwd` in the definition makes it one server whatever the session's directory.
    let mcp_json = json!({"mcpServers": {"fs": {
        "command": peers::npm_bin("mcp-server-filesystem").display().to_string(),
        "args": [allowed.display().to_string()],
        "cwd": "/",
    }}});
    let world = World::start_with(
        "anthropic-messages",
        &[
            (".pi/agent/mcp.json", mcp_json.to_string()),
            ("one/.keep", String::new()),
            ("two/.keep", String::new()),
        ],
    )
    .await;
    world.server.respond_with(caller);
    let home = world.daemon.home.path();
    let (writer, mut writer_events, writer_id) =
        session(&world, &home.join("one").display().to_string()).await;
    let (reader, mut reader_events, reader_id) =
        session(&world, &home.join("two").display().to_string()).await;
    wait_for_server(&writer, "ready", ready).await;

    let file = allowed.join("notes.md");
    let written = run(
        &writer,
        &mut writer_events,
        &writer_id,
        &format!(
            "call mcp__fs__write_file {}",
            json!({"path": file.display().to_string(), "content": "shared by two sessions\n"})
        ),
    )
    .await;
    let results = tool_results(&written);
    assert!(!results[0].2, "{results:?}");
    let read = run(
        &reader,
        &mut reader_events,
        &reader_id,
        &format!(
            "call mcp__fs__read_text_file {}",
            json!({"path": file.display().to_string()})
        ),
    )
    .await;
    let results = tool_results(&read);
    assert!(!results[0].2, "{results:?}");
    assert!(
        results[0].1.contains("shared by two sessions"),
        "{results:?}"
    );
    // The server's own refusal reaches the model as an error.
    let outside = run(
        &reader,
        &mut reader_events,
        &reader_id,
        r#"call mcp__fs__read_text_file {"path": "/etc/hostname"}"#,
    )
    .await;
    let results = tool_results(&outside);
    assert!(results[0].2, "{results:?}");
    assert!(results[0].1.contains("denied"), "{results:?}");

    let list = writer
        .call::<McpList>(&McpListParams::default())
        .await
        .unwrap();
    assert_eq!(list.servers.len(), 1, "{list:?}");
    let mut sessions = list.servers[0].sessions.clone();
    sessions.sort();
    let mut expected = vec![writer_id, reader_id];
    expected.sort();
    assert_eq!(sessions, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_connection_hears_servers_change() {
    let mcp_json = json!({"mcpServers": {"fault": fault_server(json!({}))}});
    let world = World::start_with(
        "anthropic-messages",
        &[(".pi/agent/mcp.json", mcp_json.to_string())],
    )
    .await;
    world.server.respond_with(caller);
    let cwd = world.daemon.home.path().display().to_string();
    // A connection with no session of its own (a status bar, `pictl mcp list --watch`).
    let (_watcher, mut heard) = world.client().await;
    let (client, mut events, id) = session(&world, &cwd).await;
    let mut next = async || {
        tokio::time::timeout(
            std::time::Duration::from_secs(20),
            heard.next_of::<pi_protocol::v1::McpChanged>(),
        )
        .await
        .expect("mcp/changed arrives")
        .unwrap()
        .unwrap()
    };
    let ready_pid = loop {
        let changed = next().await;
        if let Some(server) = changed.servers.iter().find(|s| s.state == "ready") {
            assert_eq!(server.sessions, std::slice::from_ref(&id));
            break server.pid;
        }
    };
    // A crash is heard too, and the restart after it.
    run(&client, &mut events, &id, "call mcp__fault__crash {}").await;
    let mut saw_down = false;
    loop {
        let changed = next().await;
        let server = &changed.servers[0];
        if server.state != "ready" {
            saw_down = true;
        } else if saw_down && server.pid != ready_pid {
            assert_eq!(server.starts, 2);
            break;
        }
    }
}

/// An editor gives sessions the `mcp.json` server's command under another name (ACP
/// `mcpServers` become `mcp/setSessionServers`): one process serves both names, and both
/// names' tools work; a session given nothing sees only the file's name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_names_for_one_command_share_one_process_and_both_work() {
    let mcp_json = json!({"mcpServers": {"fault": fault_server(json!({}))}});
    let world = World::start_with(
        "anthropic-messages",
        &[(".pi/agent/mcp.json", mcp_json.to_string())],
    )
    .await;
    world.server.respond_with(caller);
    let cwd = world.daemon.home.path().display().to_string();
    let mut editors = Vec::new();
    for _ in 0..2 {
        let (client, events, id) = session(&world, &cwd).await;
        let given = client
            .call::<McpSetSessionServers>(&McpSetSessionServersParams {
                session_id: id.clone(),
                servers: vec![McpSessionServer {
                    name: "again".to_owned(),
                    command: Some(peers::python().display().to_string()),
                    args: vec![peers::fault_server().display().to_string()],
                    ..McpSessionServer::default()
                }],
            })
            .await
            .unwrap();
        assert_eq!(given.servers, ["again"]);
        editors.push((client, events, id));
    }
    let (plain, mut plain_events, plain_id) = session(&world, &cwd).await;
    wait_for_server(&plain, "ready", ready).await;

    let pid_of = |events: &[SessionEventParams]| -> String {
        let results = tool_results(events);
        assert_eq!(results.len(), 1, "{}", final_text(events));
        assert!(!results[0].2, "{results:?}");
        results[0].1.clone()
    };
    let runs = editors.iter_mut().map(|(client, events, id)| async move {
        let by_file = run(client, events, id, "call mcp__fault__pid {}").await;
        let by_editor = run(client, events, id, "call mcp__again__pid {}").await;
        (by_file, by_editor)
    });
    let mut pids = BTreeSet::new();
    for (by_file, by_editor) in futures_util::future::join_all(runs).await {
        pids.insert(pid_of(&by_file));
        pids.insert(pid_of(&by_editor));
    }
    let by_plain = run(
        &plain,
        &mut plain_events,
        &plain_id,
        "call mcp__fault__pid {}",
    )
    .await;
    pids.insert(pid_of(&by_plain));
    assert_eq!(pids.len(), 1, "one process answers every name: {pids:?}");
    // The session given nothing has only the file's name.
    let unknown = run(
        &plain,
        &mut plain_events,
        &plain_id,
        "call mcp__again__pid {}",
    )
    .await;
    let offered = offered_mcp_tools(&unknown);
    assert_eq!(
        offered
            .iter()
            .filter(|name| name.starts_with("mcp__again__"))
            .count(),
        0
    );
    // `session/get` lists the MCP tools runs offer, apart from the session's own.
    let mcp_tools = |client: &Client, id: &str| {
        let client = client.clone();
        let id = id.to_owned();
        async move {
            let got = client
                .call::<SessionGet>(&SessionIdParams { session_id: id })
                .await
                .unwrap();
            assert!(got.tools.iter().all(|name| !name.starts_with("mcp__")));
            let mut names = got.mcp_tools;
            names.sort();
            names
        }
    };
    assert_eq!(mcp_tools(&plain, &plain_id).await, offered);
    let editor = mcp_tools(&editors[0].0, &editors[0].2).await;
    assert_eq!(editor.len(), 2 * offered.len(), "{editor:?}");
    assert!(editor.contains(&"mcp__again__pid".to_owned()));
    assert!(editor.contains(&"mcp__fault__pid".to_owned()));

    let list = plain
        .call::<McpList>(&McpListParams::default())
        .await
        .unwrap();
    assert_eq!(list.servers.len(), 1, "{list:?}");
    let server = &list.servers[0];
    assert_eq!(server.name, "fault");
    assert_eq!(server.aliases, ["again"]);
    assert_eq!(server.starts, 1);
    assert_eq!(server.sessions.len(), 3);
    // `mcp/logs` and `mcp/restart` take the other name too.
    let logs = plain
        .call::<McpLogs>(&McpLogsParams {
            name: "again".to_owned(),
            lines: None,
        })
        .await
        .unwrap();
    assert_eq!(logs.logs.len(), 1);
    assert_eq!(logs.logs[0].key, server.key);
    let restarted = plain
        .call::<McpRestart>(&McpRestartParams {
            name: "again".to_owned(),
        })
        .await
        .unwrap();
    assert_eq!(restarted.restarted, 1);
    wait_for_server(&plain, "started again", |server| {
        server.starts == 2 && server.state == "ready"
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_flooding_progress_leaves_the_daemons_memory_flat() {
    let world = fault_world().await;
    let cwd = world.daemon.home.path().display().to_string();
    let (client, mut events, id) = session(&world, &cwd).await;
    wait_for_server(&client, "ready", ready).await;
    // A warm-up call, so what the first call allocates once is in the baseline.
    run(
        &client,
        &mut events,
        &id,
        r#"call mcp__fault__flood {"count": 100, "kilobytes": 4}"#,
    )
    .await;
    let pid = world.daemon.pid();
    let before = procfs::status_value(pid, "VmRSS:");

    // 64 MiB of progress: 16,384 notifications of 4 KiB.
    let flooded = run(
        &client,
        &mut events,
        &id,
        r#"call mcp__fault__flood {"count": 16384, "kilobytes": 4}"#,
    )
    .await;
    let results = tool_results(&flooded);
    assert_eq!(results.len(), 1, "{flooded:?}");
    assert!(!results[0].2, "{results:?}");
    assert!(results[0].1.contains("flooded 16384"), "{results:?}");
    // Progress reached the client, newest last (each update says how far the server got).
    let updates: Vec<&SessionEventParams> = flooded
        .iter()
        .filter(|params| matches!(params.event, SessionEvent::ToolExecutionUpdate { .. }))
        .collect();
    assert!(!updates.is_empty(), "no progress reached the client");
    let after = procfs::status_value(pid, "VmRSS:");
    let peak = procfs::status_value(pid, "VmHWM:");
    // The flood is 64 MiB; the daemon holds a bounded part of it at any time.
    assert!(
        peak.saturating_sub(before) < 32 * 1024,
        "the daemon grew from {before} KiB to a peak of {peak} KiB (now {after} KiB)"
    );
}
