//! Servers a project file defines are code the project asks to run: on the real `pid`, one
//! starts only after the user approved it, asked through the session's clients (`ui/request`)
//! or answered by `mcp/trust` (`pictl mcp trust`), and the answer is remembered.

use std::time::Duration;

use pi_protocol::v1::{
    McpList, McpListParams, McpTrust, McpTrustParams, TrustDecision, UiAnswer, UiRequest,
    UiRequestParams, UiRespond, UiRespondParams,
};
use serde_json::json;

use super::harness::World;
use super::mcp::wait_for_server;
use super::mcp_faults::{caller, fault_server, final_text, run, session, tool_results};

/// The next `ui/request`.
async fn next_request(events: &mut pi_client::Notifications) -> UiRequestParams {
    tokio::time::timeout(
        Duration::from_secs(20),
        events.next_of::<pi_protocol::v1::UiRequestNotification>(),
    )
    .await
    .expect("a question arrives")
    .unwrap()
    .unwrap()
}

async fn approval(client: &pi_client::Client, cwd: &str, name: &str) -> String {
    let list = client
        .call::<McpList>(&McpListParams {
            cwd: Some(cwd.to_owned()),
        })
        .await
        .unwrap();
    list.definitions
        .iter()
        .find(|definition| definition.name == name)
        .unwrap_or_else(|| panic!("{name} is defined: {list:?}"))
        .approval
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_server_starts_only_once_approved() {
    let project = json!({"mcpServers": {"proj": fault_server(json!({}))}}).to_string();
    let other = json!({"mcpServers": {"other": fault_server(json!({"WHICH": "other"}))}});
    let world = World::start_with(
        "anthropic-messages",
        &[
            ("work/.mcp.json", project),
            ("work2/.pi/mcp.json", other.to_string()),
        ],
    )
    .await;
    world.server.respond_with(caller);
    let home = world.daemon.home.path();
    let cwd = home.join("work").display().to_string();

    // The session's clients are asked; the server does not start meanwhile.
    let (client, mut events, id) = session(&world, &cwd).await;
    let question = next_request(&mut events).await;
    assert_eq!(question.session_id, id);
    let UiRequest::Confirm { title, message } = &question.request else {
        panic!("{question:?}");
    };
    assert!(
        title.starts_with("Start MCP server \"proj\" from ") && title.ends_with("work/.mcp.json?"),
        "{title}"
    );
    assert!(message.contains("fault_server.py"), "{message}");
    assert_eq!(approval(&client, &cwd, "proj").await, "not approved yet");
    let refused = client
        .call::<UiRespond>(&UiRespondParams {
            session_id: id.clone(),
            request_id: question.request_id.clone(),
            answer: UiAnswer {
                confirmed: Some(false),
                ..UiAnswer::default()
            },
        })
        .await
        .unwrap();
    assert!(refused.accepted);

    // Refused: remembered, never started, and not asked again.
    let denied = async {
        loop {
            if approval(&client, &cwd, "proj").await == "denied" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(20), denied)
        .await
        .expect("the answer is recorded");
    let without = run(&client, &mut events, &id, "call mcp__proj__echo {}").await;
    assert!(
        final_text(&without).contains("NO TOOL mcp__proj__echo"),
        "{without:?}"
    );
    let list = client
        .call::<McpList>(&McpListParams::default())
        .await
        .unwrap();
    assert!(list.servers.is_empty(), "{list:?}");

    // A script approves it: the next run starts it, and the one after uses it.
    let trusted = client
        .call::<McpTrust>(&McpTrustParams {
            cwd: cwd.clone(),
            name: "proj".to_owned(),
            decision: TrustDecision::Approve,
        })
        .await
        .unwrap();
    assert_eq!(trusted.approval, "approved");
    assert!(trusted.file.ends_with("work/.mcp.json"), "{trusted:?}");
    let _ = run(&client, &mut events, &id, "call mcp__proj__pid {}").await;
    wait_for_server(&client, "approved and ready", |server| {
        server.name == "proj" && server.state == "ready"
    })
    .await;
    let echoed = run(
        &client,
        &mut events,
        &id,
        r#"call mcp__proj__echo {"text": "approved"}"#,
    )
    .await;
    assert!(
        tool_results(&echoed)[0].1.contains("approved"),
        "{echoed:?}"
    );

    // Approving in the dialog starts the server at once.
    let cwd2 = home.join("work2").display().to_string();
    let (client2, mut events2, id2) = session(&world, &cwd2).await;
    let question = next_request(&mut events2).await;
    client2
        .call::<UiRespond>(&UiRespondParams {
            session_id: id2.clone(),
            request_id: question.request_id.clone(),
            answer: UiAnswer {
                confirmed: Some(true),
                ..UiAnswer::default()
            },
        })
        .await
        .unwrap();
    let started = wait_for_server(&client2, "approved in the dialog", |server| {
        server.name == "other" && server.state == "ready"
    })
    .await;
    assert_eq!(started.sessions, std::slice::from_ref(&id2));
    let echoed = run(
        &client2,
        &mut events2,
        &id2,
        r#"call mcp__other__echo {"text": "from work2"}"#,
    )
    .await;
    assert!(tool_results(&echoed)[0].1.contains("from work2"));

    // User-level servers need no approval; unknown names are refused with a pointer.
    let unknown = client
        .call::<McpTrust>(&McpTrustParams {
            cwd: cwd.clone(),
            name: "nope".to_owned(),
            decision: TrustDecision::Approve,
        })
        .await
        .unwrap_err();
    let expected = format!(
        "no MCP server named \"nope\" is defined for {cwd}; `pictl mcp list` in that \
         directory shows its definitions"
    );
    assert!(unknown.to_string().contains(&expected), "{unknown}");
    let forgotten = client
        .call::<McpTrust>(&McpTrustParams {
            cwd: cwd.clone(),
            name: "proj".to_owned(),
            decision: TrustDecision::Forget,
        })
        .await
        .unwrap();
    assert_eq!(forgotten.approval, "not approved yet");
    // Its approval withdrawn, the running server stops, and nothing starts it again.
    let stopped = wait_for_server(&client, "stopped", |server| {
        server.name == "proj" && server.state == "stopped"
    })
    .await;
    assert!(stopped.pid.is_none(), "{stopped:?}");
    let restarted = client
        .call::<pi_protocol::v1::McpRestart>(&pi_protocol::v1::McpRestartParams {
            name: "proj".to_owned(),
        })
        .await
        .unwrap();
    assert_eq!(restarted.restarted, 1);
    let list = client
        .call::<McpList>(&McpListParams::default())
        .await
        .unwrap();
    let proj = list.servers.iter().find(|s| s.name == "proj").unwrap();
    assert_eq!(
        proj.state, "stopped",
        "a restart does not start an unapproved server"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_entries_are_diagnostics_naming_file_and_key_and_the_rest_loads() {
    let user = json!({"mcpServers": {
        "good": {"command": "some-server", "args": ["--x", "${HOME}"], "timeout": 30},
        "bad name": {"command": "x"},
        "nothing": {"args": []},
    }});
    let project = json!({"servers": {
        "web": {"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"X-Token": "${MISSING:-none}"}},
        "good": {"command": "shadowed"},
    }});
    let world = World::start_with(
        "anthropic-messages",
        &[
            (".pi/agent/mcp.json", user.to_string()),
            ("work/.mcp.json", project.to_string()),
            ("work/.pi/mcp.json", "{ not json".to_owned()),
        ],
    )
    .await;
    let home = world.daemon.home.path();
    let cwd = home.join("work").display().to_string();
    let (client, _events) = world.client().await;
    let list = client
        .call::<McpList>(&McpListParams {
            cwd: Some(cwd.clone()),
        })
        .await
        .unwrap();
    let names: Vec<(&str, bool, &str)> = list
        .definitions
        .iter()
        .map(|d| (d.name.as_str(), d.trusted, d.transport.as_str()))
        .collect();
    assert_eq!(names, [("good", true, "stdio"), ("web", false, "http")]);
    let shown: Vec<String> = list
        .diagnostics
        .iter()
        .map(|d| {
            format!(
                "{} {} {}",
                d.path.rsplit('/').take(2).collect::<Vec<_>>().join("<"),
                d.key.clone().unwrap_or_default(),
                d.message
            )
        })
        .collect();
    let all = shown.join("\n");
    for expected in [
        "\"timeout\" is in milliseconds: 30 ms looks like seconds; write 30000 for 30 seconds",
        "mcpServers.bad name a server name must be letters, digits, '-' or '_'; rename it",
        "mcpServers.nothing",
        "servers.good server \"good\" is already defined by a file that takes precedence",
        "is not valid JSON",
    ] {
        assert!(all.contains(expected), "missing {expected:?} in\n{all}");
    }
}
