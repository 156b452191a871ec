//! MCP on the real `pid` with a real server from npm (`@modelcontextprotocol/server-everything`,
//! installed by `tests/install-peers`): sessions share one connection and one process, their
//! calls go over it concurrently, the model sees the results, `mcp/list` shows it, and the
//! server's process tree dies with the daemon, also on SIGKILL.

use std::collections::BTreeSet;
use std::time::Duration;

use pi_protocol::v1::{
    McpList, McpListParams, McpRestart, McpRestartParams, SessionAttach, SessionAttachParams,
    SessionCreate, SessionCreateParams, SessionPrompt,
};
use pi_test_support::events::run_events;
use pi_test_support::model_server::{Api, RecordedRequest, Turn};
use pi_test_support::peers;
use serde_json::{Value, json};

use super::harness::{MODEL, World, prompt};

const SESSIONS: usize = 20;

/// The pi agent dir's `mcp.json` (a user-level file: trusted) with the everything server.
pub(super) fn mcp_json() -> String {
    json!({"mcpServers": {"everything": {
        "command": peers::npm_bin("mcp-server-everything").display().to_string(),
        "args": ["stdio"],
    }}})
    .to_string()
}

/// The model: call the server's `echo` with the session's marker, then finish with the text
/// the tool answered. Computed from each request, so sessions need no shared order.
fn responder(request: &RecordedRequest) -> Result<Turn, String> {
    assert_eq!(request.api, Api::AnthropicMessages);
    let messages = request.body["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let text_of = |content: &Value| -> String {
        content
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|block| block["text"].as_str().or_else(|| block["content"].as_str()))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let result = messages
        .iter()
        .flat_map(|message| message["content"].as_array().cloned().unwrap_or_default())
        .find(|block| block["type"] == "tool_result");
    match result {
        None => {
            let first = text_of(&messages[0]["content"]);
            let marker = first.rsplit(' ').next().unwrap_or_default().to_owned();
            let tools: Vec<&str> = request.body["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|tool| tool["name"].as_str())
                .collect();
            if !tools.contains(&"mcp__everything__echo") {
                return Err(format!("the MCP tools are not offered: {tools:?}"));
            }
            Ok(Turn::reply()
                .tool_call(
                    "call_1",
                    "mcp__everything__echo",
                    json!({"message": marker}),
                )
                .into())
        }
        Some(block) => Ok(Turn::reply()
            .text(format!("The tool said: {}", text_of(&block["content"])))
            .into()),
    }
}

/// The processes below `root` (children, grandchildren, ...) and their command lines.
fn descendants(root: u32) -> Vec<(u32, String)> {
    let mut parents = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`: the command may hold spaces and parentheses.
        let after = stat
            .rsplit_once(") ")
            .map(|(_, rest)| rest)
            .unwrap_or_default();
        let ppid: u32 = after
            .split(' ')
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|bytes| String::from_utf8_lossy(&bytes).replace('\0', " "))
            .unwrap_or_default();
        parents.push((pid, ppid, cmdline));
    }
    let mut found = Vec::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for (pid, ppid, cmdline) in &parents {
            if *ppid == parent {
                found.push((*pid, cmdline.clone()));
                frontier.push(*pid);
            }
        }
    }
    found
}

fn is_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| {
            let state = stat
                .rsplit_once(") ")
                .map(|(_, rest)| rest)
                .unwrap_or_default();
            !state.starts_with('Z')
        })
        .unwrap_or(false)
}

/// The first server `wanted` holds for, by polling `mcp/list` (simpler here than following
/// `mcp/changed`). The deadline only turns "never" into a failure.
pub(super) async fn wait_for_server(
    client: &pi_client::Client,
    what: &str,
    wanted: impl Fn(&pi_protocol::v1::McpServerStatus) -> bool,
) -> pi_protocol::v1::McpServerStatus {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let list = client
            .call::<McpList>(&McpListParams::default())
            .await
            .unwrap();
        if let Some(server) = list.servers.iter().find(|server| wanted(server)) {
            return server.clone();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never {what}: {list:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub(super) fn ready(server: &pi_protocol::v1::McpServerStatus) -> bool {
    server.state == "ready"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_share_one_server_process_and_it_dies_with_the_daemon() {
    let mut world =
        World::start_with("anthropic-messages", &[(".pi/agent/mcp.json", mcp_json())]).await;
    world.server.respond_with(responder);
    let cwd = world.daemon.home.path().display().to_string();

    // Several sessions, each on its own connection; creating them starts the server.
    let mut created = Vec::new();
    for _ in 0..SESSIONS {
        let (client, events) = world.client().await;
        let session = client
            .call::<SessionCreate>(&SessionCreateParams {
                cwd: cwd.clone(),
                model: Some(MODEL.to_owned()),
                ..SessionCreateParams::default()
            })
            .await
            .unwrap();
        created.push((client, events, session));
    }
    // The server (node) takes longer than a run's 250 ms startup gate: wait until it is
    // ready.
    wait_for_server(&created[0].0, "ready", ready).await;
    // All sessions prompt at once.
    let mut runs = Vec::new();
    for (index, (client, mut events, session)) in created.into_iter().enumerate() {
        client
            .call::<SessionAttach>(&SessionAttachParams {
                session_id: session.id.clone(),
                after_seq: None,
            })
            .await
            .unwrap();
        runs.push(tokio::spawn(async move {
            let marker = format!("marker-{index}");
            client
                .call::<SessionPrompt>(&prompt(&session.id, &format!("Echo {marker}")))
                .await
                .unwrap();
            let seen = run_events(&mut events, &session.id).await;
            (session.id, marker, seen, client)
        }));
    }
    let mut session_ids = BTreeSet::new();
    let mut clients = Vec::new();
    for run in runs {
        let (id, marker, seen, client) = run.await.unwrap();
        let ended: Vec<String> = seen
            .iter()
            .filter_map(|event| match &event.event {
                pi_protocol::v1::SessionEvent::ToolExecutionEnd {
                    result, is_error, ..
                } => {
                    assert!(!is_error, "{result:?}");
                    Some(serde_json::to_string(&result.content).unwrap())
                }
                _ => None,
            })
            .collect();
        assert_eq!(ended.len(), 1, "{id}: one MCP call");
        assert!(
            ended[0].contains(&format!("Echo: {marker}")),
            "{}",
            ended[0]
        );
        session_ids.insert(id);
        clients.push(client);
    }
    // Every second request carried its own session's echo back to the model.
    let answered = world
        .server
        .requests()
        .iter()
        .filter(|request| request.body_text.contains("\"tool_result\""))
        .count();
    assert_eq!(answered, SESSIONS);
    assert!(
        world.server.violations().is_empty(),
        "{:?}",
        world.server.violations()
    );

    // One server, one process (tree), used by every session.
    let list = clients[0]
        .call::<McpList>(&McpListParams::default())
        .await
        .unwrap();
    assert_eq!(list.servers.len(), 1, "{list:?}");
    let server = &list.servers[0];
    assert_eq!(server.name, "everything");
    assert_eq!(server.state, "ready");
    assert_eq!(server.starts, 1);
    assert!(
        server.tools.contains(&"echo".to_owned()),
        "{:?}",
        server.tools
    );
    assert_eq!(
        server.sessions.iter().cloned().collect::<BTreeSet<_>>(),
        session_ids
    );
    let guard = server.pid.expect("a stdio server has a process");
    let status = clients[0]
        .call::<pi_protocol::v1::DaemonStatus>(&pi_protocol::v1::DaemonStatusParams {})
        .await
        .unwrap();
    assert_eq!((status.mcp.servers, status.mcp.running), (1, 1));
    let daemon_pid = world.daemon.pid();
    let children: Vec<(u32, String)> = descendants(daemon_pid);
    let servers: Vec<&(u32, String)> = children
        .iter()
        .filter(|(_, cmdline)| cmdline.contains("mcp-server-everything"))
        .collect();
    // The guard and the node process it runs: one server for all the sessions.
    let guards = servers
        .iter()
        .filter(|(_, cmdline)| cmdline.contains("__guard"))
        .count();
    assert_eq!(guards, 1, "{children:?}");
    assert!(servers.iter().any(|(pid, _)| *pid == guard), "{children:?}");
    assert_eq!(
        servers.len(),
        2,
        "one guard and one server process: {children:?}"
    );

    // The server's stderr is in its log.
    let logs = clients[0]
        .call::<pi_protocol::v1::McpLogs>(&pi_protocol::v1::McpLogsParams {
            name: "everything".to_owned(),
            lines: Some(20),
        })
        .await
        .unwrap();
    assert_eq!(logs.logs.len(), 1);
    assert!(logs.logs[0].text.contains("Starting"), "{:?}", logs.logs[0]);

    // A restart starts a new process the next run uses.
    let restarted = clients[0]
        .call::<McpRestart>(&McpRestartParams {
            name: "everything".to_owned(),
        })
        .await
        .unwrap();
    assert_eq!(restarted.restarted, 1);
    let unknown = clients[0]
        .call::<McpRestart>(&McpRestartParams {
            name: "nope".to_owned(),
        })
        .await
        .unwrap_err()
        .to_string();
    assert!(
        unknown.contains("no MCP server named \"nope\""),
        "{unknown}"
    );
    // Its sessions still use it: it starts again at once, in a new process.
    let restarted = wait_for_server(&clients[0], "restarted", |server| {
        ready(server) && server.starts == 2
    })
    .await;
    assert_ne!(restarted.pid, Some(guard), "a new process");
    assert!(!is_alive(guard), "the old process is gone");

    // The daemon dies without any cleanup: the kernel takes the server's tree down with it.
    let tree: Vec<u32> = descendants(daemon_pid)
        .into_iter()
        .map(|(pid, _)| pid)
        .collect();
    assert!(!tree.is_empty());
    drop(clients);
    world.daemon.kill9().await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let alive: Vec<u32> = tree.iter().copied().filter(|pid| is_alive(*pid)).collect();
        if alive.is_empty() {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "orphans after the daemon's SIGKILL: {alive:?}"
        );
        // Polling: the kernel delivers the death signal with no event a test can await.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A long call reports progress as `tool_execution_update`s; `session/abort` ends it at once
/// (rmcp tells the server `notifications/cancelled`), and the shared server goes on serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_becomes_updates_and_abort_ends_a_call_without_harming_the_server() {
    let world =
        World::start_with("anthropic-messages", &[(".pi/agent/mcp.json", mcp_json())]).await;
    world.server.respond_with(|request| {
        let first = request.body["messages"][0]["content"].to_string();
        let answered = request.body_text.contains("\"tool_result\"");
        Ok(match (first.contains("long"), answered) {
            (true, false) => Turn::reply()
                .tool_call(
                    "call_1",
                    "mcp__everything__trigger-long-running-operation",
                    json!({"duration": 60, "steps": 60}),
                )
                .into(),
            (false, false) => Turn::reply()
                .tool_call(
                    "call_1",
                    "mcp__everything__echo",
                    json!({"message": "still here"}),
                )
                .into(),
            (_, true) => Turn::reply().text("Done.").into(),
        })
    });
    let cwd = world.daemon.home.path().display().to_string();
    let (client, mut events) = world.client().await;
    let create = || SessionCreateParams {
        cwd: cwd.clone(),
        model: Some(MODEL.to_owned()),
        ..SessionCreateParams::default()
    };
    let long = client.call::<SessionCreate>(&create()).await.unwrap();
    wait_for_server(&client, "ready", ready).await;
    client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: long.id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    client
        .call::<SessionPrompt>(&prompt(&long.id, "run the long operation"))
        .await
        .unwrap();
    // The server's progress arrives as updates of the running call.
    let progress = loop {
        let notification = tokio::time::timeout(
            Duration::from_secs(20),
            events.next_of::<pi_protocol::v1::SessionEventNotification>(),
        )
        .await
        .expect("progress arrives")
        .unwrap()
        .unwrap();
        if let pi_protocol::v1::SessionEvent::ToolExecutionUpdate { partial_result, .. } =
            notification.event
        {
            let text = serde_json::to_string(&partial_result.content).unwrap();
            if text.contains("Progress") {
                break text;
            }
        }
    };
    assert!(progress.contains("/60"), "{progress}");
    let started = std::time::Instant::now();
    client
        .call::<pi_protocol::v1::SessionAbort>(&pi_protocol::v1::SessionIdParams {
            session_id: long.id.clone(),
        })
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "abort ended the call"
    );
    let seen = run_events(&mut events, &long.id).await;
    let ended = seen.iter().find_map(|event| match &event.event {
        pi_protocol::v1::SessionEvent::ToolExecutionEnd {
            result, is_error, ..
        } => Some((serde_json::to_string(&result.content).unwrap(), *is_error)),
        _ => None,
    });
    let (text, is_error) = ended.expect("the call ended");
    assert!(is_error && text.contains("Operation aborted"), "{text}");

    // Another session's call on the same server works right after.
    let (other_client, mut other_events) = world.client().await;
    let other = other_client.call::<SessionCreate>(&create()).await.unwrap();
    other_client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: other.id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    other_client
        .call::<SessionPrompt>(&prompt(&other.id, "echo please"))
        .await
        .unwrap();
    let seen = run_events(&mut other_events, &other.id).await;
    let echoed = seen.iter().any(|event| match &event.event {
        pi_protocol::v1::SessionEvent::ToolExecutionEnd {
            result, is_error, ..
        } => {
            !is_error
                && serde_json::to_string(&result.content)
                    .unwrap()
                    .contains("Echo: still here")
        }
        _ => false,
    });
    assert!(echoed, "the server answers after the abort");
    let list = client
        .call::<McpList>(&McpListParams::default())
        .await
        .unwrap();
    assert_eq!(
        list.servers[0].starts, 1,
        "the abort did not restart the server"
    );
}

/// A Streamable HTTP server (the same npm server in its HTTP mode): the session calls it
/// like a stdio one; the daemon starts no process for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_server_serves_sessions_like_a_stdio_one() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server_process = tokio::process::Command::new(peers::npm_bin("mcp-server-everything"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    // It says on stderr when it listens.
    let mut stderr = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(
        server_process.stderr.take().unwrap(),
    ));
    tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = stderr.next_line().await.unwrap() {
            if line.contains("listening on port") {
                return;
            }
        }
        panic!("the HTTP server exited before listening");
    })
    .await
    .expect("the HTTP server listens");
    let mcp_json = json!({"mcpServers": {"web": {
        "type": "http", "url": format!("http://127.0.0.1:{port}/mcp")}}})
    .to_string();
    let world = World::start_with("anthropic-messages", &[(".pi/agent/mcp.json", mcp_json)]).await;
    world.server.respond_with(|request| {
        Ok(if request.body_text.contains("\"tool_result\"") {
            Turn::reply().text("Done.").into()
        } else {
            Turn::reply()
                .tool_call("call_1", "mcp__web__echo", json!({"message": "over http"}))
                .into()
        })
    });
    let (client, mut events) = world.client().await;
    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: world.daemon.home.path().display().to_string(),
            model: Some(MODEL.to_owned()),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    let listed = wait_for_server(&client, "ready", ready).await;
    assert_eq!(listed.transport, "http");
    assert_eq!(listed.pid, None, "no process of ours");
    client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: session.id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    client
        .call::<SessionPrompt>(&prompt(&session.id, "echo over http"))
        .await
        .unwrap();
    let seen = run_events(&mut events, &session.id).await;
    let echoed = seen.iter().any(|event| match &event.event {
        pi_protocol::v1::SessionEvent::ToolExecutionEnd {
            result, is_error, ..
        } => {
            !is_error
                && serde_json::to_string(&result.content)
                    .unwrap()
                    .contains("Echo: over http")
        }
        _ => false,
    });
    assert!(echoed, "{seen:?}");
    drop(server_process);
}

/// A server no session uses any more stops after the linger (`[mcp] linger_secs`, here 0),
/// with its process; a new session starts it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unused_server_stops_after_the_linger_and_comes_back_when_needed() {
    let world = World::start_with_config(
        "anthropic-messages",
        "[mcp]\nlinger_secs = 0\n",
        &[(".pi/agent/mcp.json", mcp_json())],
    )
    .await;
    let cwd = world.daemon.home.path().display().to_string();
    let (client, _events) = world.client().await;
    let create = || SessionCreateParams {
        cwd: cwd.clone(),
        model: Some(MODEL.to_owned()),
        ..SessionCreateParams::default()
    };
    let session = client.call::<SessionCreate>(&create()).await.unwrap();
    let pid = wait_for_server(&client, "ready", ready).await.pid.unwrap();
    client
        .call::<pi_protocol::v1::SessionDelete>(&pi_protocol::v1::SessionIdParams {
            session_id: session.id.clone(),
        })
        .await
        .unwrap();
    let stopped = wait_for_server(&client, "stopped", |server| server.state == "stopped").await;
    assert!(stopped.sessions.is_empty(), "{stopped:?}");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while is_alive(pid) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the stopped server's process lives on"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    client.call::<SessionCreate>(&create()).await.unwrap();
    let again = wait_for_server(&client, "ready", ready).await;
    assert_eq!(again.starts, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_are_slash_commands_and_resources_are_read_with_read() {
    let world =
        World::start_with("anthropic-messages", &[(".pi/agent/mcp.json", mcp_json())]).await;
    world.server.respond_with(|request| {
        let messages = request.body["messages"].as_array().unwrap();
        let last = messages.last().unwrap().to_string();
        if last.contains("What's weather in Paris, Texas?") {
            return Ok(Turn::reply().text("Sunny.").into());
        }
        if last.contains("follow the links") {
            return Ok(Turn::reply()
                .tool_call(
                    "call_1",
                    "mcp__everything__get-resource-links",
                    json!({"count": 2}),
                )
                .into());
        }
        if let Some(start) = last.find("mcp://everything/demo://resource/dynamic/text/2") {
            let link =
                &last[start..start + "mcp://everything/demo://resource/dynamic/text/2".len()];
            return Ok(Turn::reply()
                .tool_call("call_2", "read", json!({"path": link}))
                .into());
        }
        Ok(Turn::reply().text("Done.").into())
    });
    let cwd = world.daemon.home.path().display().to_string();
    let (client, mut events) = world.client().await;
    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: cwd.clone(),
            model: Some(MODEL.to_owned()),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    wait_for_server(&client, "ready", ready).await;
    client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: session.id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();

    // The server's prompts are the session's slash commands.
    let got = client
        .call::<pi_protocol::v1::SessionGet>(&pi_protocol::v1::SessionIdParams {
            session_id: session.id.clone(),
        })
        .await
        .unwrap();
    let command = got
        .commands
        .iter()
        .find(|command| command.name == "mcp:everything:args-prompt")
        .unwrap_or_else(|| panic!("{:?}", got.commands));
    assert_eq!(command.source, "mcp");
    assert!(command.description.contains("two arguments"), "{command:?}");

    // A prompt command becomes the message the server's prompt says.
    client
        .call::<SessionPrompt>(&prompt(
            &session.id,
            "/mcp:everything:args-prompt Paris Texas",
        ))
        .await
        .unwrap();
    run_events(&mut events, &session.id).await;
    let sent = world.server.requests().last().unwrap().body_text.clone();
    assert!(sent.contains("What's weather in Paris, Texas?"), "{sent}");

    // Bad commands are refused with what to do.
    for (text, expected) in [
        (
            "/mcp:everything:args-prompt",
            "the prompt args-prompt of MCP server \"everything\" needs the argument \"city\"; \
             usage: /mcp:everything:args-prompt city=… [state=…]",
        ),
        (
            "/mcp:nope:x",
            "this session uses no MCP server named \"nope\" (it uses: everything); `pictl mcp \
             list` shows the servers",
        ),
        (
            "/mcp:everything:nope",
            "MCP server \"everything\" has no prompt \"nope\" (it has: ",
        ),
        (
            "/mcp:everything",
            "an MCP prompt command is /mcp:<server>:<prompt> [arguments], not /mcp:everything",
        ),
    ] {
        let error = client
            .call::<SessionPrompt>(&prompt(&session.id, text))
            .await
            .unwrap_err();
        assert!(error.to_string().contains(expected), "{text}: {error}");
    }

    // A resource link in a tool result is followed with `read`.
    client
        .call::<SessionPrompt>(&prompt(&session.id, "follow the links"))
        .await
        .unwrap();
    let seen = run_events(&mut events, &session.id).await;
    let read = seen
        .iter()
        .find_map(|event| match &event.event {
            pi_protocol::v1::SessionEvent::ToolExecutionEnd {
                tool_name,
                result,
                is_error,
                ..
            } if tool_name == "read" => {
                Some((serde_json::to_string(&result.content).unwrap(), *is_error))
            }
            _ => None,
        })
        .unwrap_or_else(|| panic!("no read: {seen:?}"));
    assert!(!read.1, "{}", read.0);
    assert!(
        read.0.contains("Resource 2: This is a plaintext resource"),
        "{}",
        read.0
    );
    // The model was told how to read them.
    let requests = world.server.requests();
    let tools = &requests.last().unwrap().body["tools"];
    let read_tool = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "read")
        .unwrap();
    assert!(
        read_tool["description"]
            .as_str()
            .unwrap()
            .contains("mcp://SERVER/URI"),
        "{read_tool}"
    );
}

/// Every keyword of `schema` (recursively, schema-aware) that is not in `allowed`.
fn foreign_keywords(schema: &Value, allowed: &[&str], found: &mut BTreeSet<String>) {
    let Value::Object(map) = schema else {
        return;
    };
    for (key, value) in map {
        if !allowed.contains(&key.as_str()) {
            found.insert(key.clone());
        }
        match (key.as_str(), value) {
            ("properties" | "$defs", Value::Object(children)) => {
                for child in children.values() {
                    foreign_keywords(child, allowed, found);
                }
            }
            ("items" | "additionalProperties", Value::Object(_)) => {
                foreign_keywords(value, allowed, found)
            }
            ("items" | "prefixItems" | "anyOf" | "oneOf", Value::Array(children)) => {
                for child in children {
                    foreign_keywords(child, allowed, found);
                }
            }
            _ => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_schemas_reach_each_api_in_the_subset_it_accepts() {
    let allowed_by_google = [
        "$id",
        "$defs",
        "$ref",
        "$anchor",
        "type",
        "format",
        "title",
        "description",
        "enum",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "anyOf",
        "oneOf",
        "properties",
        "additionalProperties",
        "required",
        "propertyOrdering",
    ];
    for api in [
        "google-generative-ai",
        "anthropic-messages",
        "openai-completions",
    ] {
        let world = World::start_with(api, &[(".pi/agent/mcp.json", mcp_json())]).await;
        world
            .server
            .respond_with(|_| Ok(Turn::reply().text("Hello.").into()));
        let cwd = world.daemon.home.path().display().to_string();
        let (client, mut events) = world.client().await;
        let session = client
            .call::<SessionCreate>(&SessionCreateParams {
                cwd,
                model: Some(MODEL.to_owned()),
                ..SessionCreateParams::default()
            })
            .await
            .unwrap();
        wait_for_server(&client, "ready", ready).await;
        client
            .call::<SessionAttach>(&SessionAttachParams {
                session_id: session.id.clone(),
                after_seq: None,
            })
            .await
            .unwrap();
        client
            .call::<SessionPrompt>(&prompt(&session.id, "hi"))
            .await
            .unwrap();
        run_events(&mut events, &session.id).await;
        let requests = world.server.requests();
        let body = &requests.last().unwrap().body;
        let schemas: Vec<(String, Value)> = match api {
            "google-generative-ai" => body["tools"][0]["functionDeclarations"]
                .as_array()
                .unwrap()
                .iter()
                .map(|tool| {
                    (
                        tool["name"].as_str().unwrap().to_owned(),
                        tool["parametersJsonSchema"].clone(),
                    )
                })
                .collect(),
            "anthropic-messages" => body["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|tool| {
                    (
                        tool["name"].as_str().unwrap().to_owned(),
                        tool["input_schema"].clone(),
                    )
                })
                .collect(),
            _ => body["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|tool| {
                    (
                        tool["function"]["name"].as_str().unwrap().to_owned(),
                        tool["function"]["parameters"].clone(),
                    )
                })
                .collect(),
        };
        let mcp: Vec<&(String, Value)> = schemas
            .iter()
            .filter(|(name, _)| name.starts_with("mcp__everything__"))
            .collect();
        assert!(mcp.len() > 5, "{api}: {schemas:?}");
        for (name, schema) in mcp {
            assert_eq!(schema["type"], "object", "{api} {name}: {schema}");
            for combinator in ["anyOf", "oneOf", "allOf"] {
                assert!(schema.get(combinator).is_none(), "{api} {name}: {schema}");
            }
            if api == "google-generative-ai" {
                let mut found = BTreeSet::new();
                foreign_keywords(schema, &allowed_by_google, &mut found);
                assert!(found.is_empty(), "{name}: {found:?} in {schema}");
            }
            if api == "openai-completions" {
                assert!(schema["properties"].is_object(), "{name}: {schema}");
            }
        }
    }
}
