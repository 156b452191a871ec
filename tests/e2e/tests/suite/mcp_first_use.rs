//! MCP servers the daemon has never seen (a definition's first use in a directory, a fresh
//! daemon: no cached tool list), on the real `pid` with the fault server held at start by a
//! gate file the test opens: a session's first request waits for them (`tools_wait_start` /
//! `tools_wait_end`) and offers their tools; one slower than `[mcp] first_start_wait_secs`
//! is reported not ready, and its tools join the run's next turn once it is. The outside
//! probe's servers from PyPI serve the first prompt in new directories.

use pi_protocol::v1::{McpList, McpListParams, SessionEvent, SessionEventParams, SessionPrompt};
use pi_test_support::events::{events_until, run_events};
use pi_test_support::model_server::{RecordedRequest, Turn};
use pi_test_support::peers;
use serde_json::json;

use super::harness::{World, prompt};
use super::mcp_faults::{caller, fault_server, final_text, run, session, tool_results};

/// The run's `tools_wait_*` events, as (kind, servers).
fn waits(events: &[SessionEventParams]) -> Vec<(&'static str, Vec<String>)> {
    events
        .iter()
        .filter_map(|event| match &event.event {
            SessionEvent::ToolsWaitStart { sources, .. } => Some(("start", sources.clone())),
            SessionEvent::ToolsWaitEnd { not_ready, aborted } => {
                assert!(!aborted);
                Some(("end", not_ready.clone()))
            }
            _ => None,
        })
        .collect()
}

/// A `mcp.json` with server `slow`: the fault server, held at start until `gate` exists.
fn slow_server(gate: &std::path::Path) -> serde_json::Value {
    json!({"mcpServers": {
        "slow": fault_server(json!({"FAULT_SERVER_START_GATE": gate.display().to_string()})),
    }})
}

/// The tool names a recorded request offered.
fn offered(request: &RecordedRequest) -> Vec<String> {
    request.body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_run_waits_for_servers_never_seen_and_offers_their_tools() {
    let gate_dir = tempfile::tempdir().unwrap();
    let gate = gate_dir.path().join("open");
    let mcp_json = slow_server(&gate);
    let world = World::start_with(
        "anthropic-messages",
        &[
            (".pi/agent/mcp.json", mcp_json.to_string()),
            ("one/.keep", String::new()),
            ("two/.keep", String::new()),
            ("three/.keep", String::new()),
        ],
    )
    .await;
    world.server.respond_with(caller);
    let home = world.daemon.home.path();
    // Three directories: three servers (a definition without `cwd` is one per directory),
    // none seen before.
    let mut sessions = Vec::new();
    for dir in ["one", "two", "three"] {
        let (client, mut events, id) = session(&world, &home.join(dir).display().to_string()).await;
        let text = format!(r#"call mcp__slow__echo {{"text": "first use in {dir}"}}"#);
        client
            .call::<SessionPrompt>(&prompt(&id, &text))
            .await
            .unwrap();
        let before = events_until(&mut events, &id, |event| {
            matches!(event.event, SessionEvent::ToolsWaitStart { .. })
        })
        .await;
        let Some(SessionEvent::ToolsWaitStart {
            sources,
            timeout_ms,
        }) = before.last().map(|event| &event.event)
        else {
            unreachable!("events_until returns the match last");
        };
        assert_eq!(sources, &["slow"]);
        assert!(*timeout_ms > 0 && *timeout_ms <= 30_000, "{timeout_ms}");
        sessions.push((client, events, id, dir, before));
    }
    // Every request is held by its wait: no model request yet.
    assert!(world.server.requests().is_empty());
    std::fs::write(&gate, "").unwrap();
    for (_client, events, id, dir, before) in &mut sessions {
        let mut all = before.clone();
        all.extend(run_events(events, id).await);
        assert_eq!(
            waits(&all),
            [("start", vec!["slow".to_owned()]), ("end", Vec::new())]
        );
        let results = tool_results(&all);
        assert_eq!(results.len(), 1, "{}", final_text(&all));
        assert!(!results[0].2, "{results:?}");
        assert!(
            results[0].1.contains(&format!("first use in {dir}")),
            "{results:?}"
        );
    }
    let list = sessions[0]
        .0
        .call::<McpList>(&McpListParams::default())
        .await
        .unwrap();
    assert_eq!(list.servers.len(), 3, "{list:?}");
    assert!(list.servers.iter().all(|server| server.state == "ready"));

    // Seen now: a new session in one of the directories offers the cached tools at once.
    let (client, mut events, id) = session(&world, &home.join("one").display().to_string()).await;
    client
        .call::<SessionPrompt>(&prompt(&id, r#"call mcp__slow__echo {"text": "again"}"#))
        .await
        .unwrap();
    let again = run_events(&mut events, &id).await;
    assert_eq!(waits(&again), []);
    assert!(!tool_results(&again)[0].2);
}

/// The model: while the slow server's tools are missing, it runs `bash` that opens the gate
/// and polls `pictl mcp list` until every slow server is ready; once they are offered, it
/// calls the server's `echo`; after that result it says "Done.".
fn gate_opener(gate: String, servers: usize) -> impl Fn(&RecordedRequest) -> Result<Turn, String> {
    let pictl = pi_test_support::workspace_binary("pictl");
    move |request| {
        let messages = request.body["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let results: Vec<String> = messages
            .iter()
            .flat_map(|message| message["content"].as_array().cloned().unwrap_or_default())
            .filter(|block| block["type"] == "tool_result")
            .filter_map(|block| block["tool_use_id"].as_str().map(str::to_owned))
            .collect();
        if results.iter().any(|id| id == "echo_1") {
            return Ok(Turn::reply().text("Done.").into());
        }
        if offered(request)
            .iter()
            .any(|name| name == "mcp__slow__echo")
        {
            return Ok(Turn::reply()
                .tool_call("echo_1", "mcp__slow__echo", json!({"text": "joined"}))
                .into());
        }
        if !results.is_empty() {
            return Err(format!(
                "the slow server's tools are still missing after the wait: {:?}",
                offered(request)
            ));
        }
        let command = format!(
            "touch '{gate}'; until [ \"$('{}' mcp list | grep -c '^slow  *ready')\" = {servers} ]; \
             do sleep 0.1; done",
            pictl.display()
        );
        Ok(Turn::reply()
            .tool_call("wait_1", "bash", json!({"command": command, "timeout": 60}))
            .into())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_slower_than_the_wait_joins_the_runs_next_turn() {
    let gate_dir = tempfile::tempdir().unwrap();
    let gate = gate_dir.path().join("open");
    let mcp_json = slow_server(&gate);
    let world = World::start_with_config(
        "anthropic-messages",
        "[mcp]\nfirst_start_wait_secs = 1\n",
        &[
            (".pi/agent/mcp.json", mcp_json.to_string()),
            ("one/.keep", String::new()),
            ("two/.keep", String::new()),
        ],
    )
    .await;
    world
        .server
        .respond_with(gate_opener(gate.display().to_string(), 2));
    let home = world.daemon.home.path();
    let mut sessions = Vec::new();
    for dir in ["one", "two"] {
        let (client, events, id) = session(&world, &home.join(dir).display().to_string()).await;
        client
            .call::<SessionPrompt>(&prompt(&id, "use the slow server"))
            .await
            .unwrap();
        sessions.push((client, events, id));
    }
    for (_client, events, id) in &mut sessions {
        let run = run_events(events, id).await;
        // The wait ran out with the server still starting: reported, and the first request
        // went without its tools.
        assert_eq!(
            waits(&run),
            [
                ("start", vec!["slow".to_owned()]),
                ("end", vec!["slow".to_owned()])
            ]
        );
        let results = tool_results(&run);
        let names: Vec<&str> = results.iter().map(|result| result.0.as_str()).collect();
        assert_eq!(names, ["bash", "mcp__slow__echo"], "{}", final_text(&run));
        assert!(results.iter().all(|result| !result.2), "{results:?}");
        assert!(results[1].1.contains("joined"), "{results:?}");
        assert!(final_text(&run).contains("Done."));
    }
    // Each session's first request lacked the server's tools; its second had them.
    let requests = world.server.requests();
    let with_slow: Vec<bool> = requests
        .iter()
        .map(|request| {
            offered(request)
                .iter()
                .any(|name| name.starts_with("mcp__slow__"))
        })
        .collect();
    assert_eq!(with_slow.iter().filter(|offered| !**offered).count(), 2);
    assert_eq!(with_slow.iter().filter(|offered| **offered).count(), 4);
}

/// The outside probe's case with its servers from PyPI (`mcp-server-git`, `mcp-server-time`:
/// a second or two to start): on a fresh daemon, sessions in two new git repositories call
/// both servers' tools from their first prompt. `git` runs per directory; `time`, with an
/// absolute `cwd`, is one server for both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pypi_git_and_time_servers_serve_the_first_prompt_in_new_directories() {
    let mcp_json = json!({"mcpServers": {
        "git": {"command": peers::pypi_server("mcp-server-git").display().to_string()},
        "time": {
            "command": peers::pypi_server("mcp-server-time").display().to_string(),
            "args": ["--local-timezone", "UTC"],
            "cwd": "/",
        },
    }});
    let world = World::start_with(
        "anthropic-messages",
        &[
            (".pi/agent/mcp.json", mcp_json.to_string()),
            ("one/README.md", "one\n".to_owned()),
            ("two/README.md", "two\n".to_owned()),
        ],
    )
    .await;
    world.server.respond_with(caller);
    let home = world.daemon.home.path();
    let mut sessions = Vec::new();
    for dir in ["one", "two"] {
        let dir = home.join(dir);
        let init = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(&dir)
            .status()
            .expect("git runs");
        assert!(init.success());
        let (client, events, id) = session(&world, &dir.display().to_string()).await;
        sessions.push((client, events, id, dir));
    }
    let runs = sessions
        .iter_mut()
        .map(|(client, events, id, dir)| async move {
            let status = format!(
                "call mcp__git__git_status {}",
                json!({"repo_path": dir.display().to_string()})
            );
            let git = run(client, events, id, &status).await;
            let time = run(
                client,
                events,
                id,
                r#"call mcp__time__get_current_time {"timezone": "UTC"}"#,
            )
            .await;
            (git, time)
        });
    for (git, time) in futures_util::future::join_all(runs).await {
        let results = tool_results(&git);
        assert_eq!(results.len(), 1, "{}", final_text(&git));
        assert!(!results[0].2, "{results:?}");
        assert!(results[0].1.contains("README.md"), "{results:?}");
        let results = tool_results(&time);
        assert_eq!(results.len(), 1, "{}", final_text(&time));
        assert!(!results[0].2, "{results:?}");
        assert!(results[0].1.contains("UTC"), "{results:?}");
    }
    let list = sessions[0]
        .0
        .call::<McpList>(&McpListParams::default())
        .await
        .unwrap();
    let count = |name: &str| {
        list.servers
            .iter()
            .filter(|server| server.name == name)
            .count()
    };
    assert_eq!((count("git"), count("time")), (2, 1), "{list:?}");
}
