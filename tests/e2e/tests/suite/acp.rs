//! `pictl acp` driven by an editor we did not write: a Node client built on the official ACP
//! TypeScript SDK (`@agentclientprotocol/sdk` from npm, `tests/peers/acp_driver.mjs`), against
//! the real `pid` and the scripted model. The driver initializes, creates a session, switches
//! to `ask-writes`, prompts a turn whose model calls `edit` (the daemon's question arrives as
//! `session/request_permission`, answered "allow once"), cancels a long `bash` mid-turn, and
//! loads the finished session on a second connection. The SDK validates every message it
//! receives against ACP's schema.

use serde_json::Value;

use super::harness::{MODEL, World};
use super::mcp_faults::caller;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acp_editor_edits_with_permission_cancels_and_loads_a_session() {
    let world = World::start_with(
        "anthropic-messages",
        &[
            ("proj/notes.txt", "first\nold line\nlast\n".to_owned()),
            // A question nobody answers fails the test in seconds, not minutes.
            (
                "proj/.pi/settings.json",
                serde_json::json!({"approvals": {"askTimeoutMs": 20000}}).to_string(),
            ),
        ],
    )
    .await;
    world.server.respond_with(caller);
    let project = world.daemon.home.path().join("proj");
    let driver = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../peers/acp_driver.mjs");
    let peers = pi_test_support::peers::dir();
    assert!(
        peers
            .join("node_modules/@agentclientprotocol/sdk/package.json")
            .is_file(),
        "the ACP TypeScript SDK is not installed in {}; run tests/install-peers",
        peers.display()
    );
    let output = tokio::process::Command::new("node")
        .arg(&driver)
        .envs(world.daemon.env())
        .env("PICTL", pi_test_support::workspace_binary("pictl"))
        .env("PROJECT", &project)
        .env("PI_PEERS_DIR", &peers)
        .output()
        .await
        .expect("node runs (tests/install-peers installs it)");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the driver failed:\n{stderr}");
    let seen: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "{error}: {}\n{stderr}",
            String::from_utf8_lossy(&output.stdout)
        )
    });

    // initialize and session/new.
    let capabilities = &seen["initialize"]["agentCapabilities"];
    assert_eq!(capabilities["loadSession"], true);
    assert_eq!(capabilities["promptCapabilities"]["image"], true);
    assert_eq!(capabilities["promptCapabilities"]["embeddedContext"], true);
    let session_id = seen["session"]["sessionId"].as_str().unwrap().to_owned();
    let modes: Vec<&str> = seen["session"]["modes"]["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|mode| mode["id"].as_str().unwrap())
        .collect();
    assert_eq!(modes, ["yolo", "ask-writes", "ask-all", "read-only"]);

    // The model as a configuration option, and changing it.
    let model = &seen["session"]["configOptions"][0];
    assert_eq!(model["category"], "model");
    assert_eq!(model["currentValue"], MODEL);
    assert!(
        model["options"]
            .as_array()
            .unwrap()
            .iter()
            .any(|option| option["value"] == MODEL)
    );
    assert_eq!(seen["setModel"]["configOptions"][0]["currentValue"], MODEL);

    // The edit: asked as a permission request, answered, run, shown as a diff.
    let permissions = seen["permissions"].as_array().unwrap();
    assert_eq!(permissions.len(), 1, "{permissions:?}");
    let permission = &permissions[0];
    assert_eq!(permission["sessionId"], session_id.as_str());
    assert_eq!(permission["toolCall"]["title"], "edit: notes.txt");
    let kinds: Vec<&str> = permission["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|option| option["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["allow_once", "allow_always", "allow_always", "reject_once"]
    );
    assert_eq!(seen["editPrompt"]["stopReason"], "end_turn");
    let updates = seen["updates"].as_array().unwrap();
    let of = |kind: &str| -> Vec<&Value> {
        updates
            .iter()
            .map(|update| &update["update"])
            .filter(|update| update["sessionUpdate"] == kind)
            .collect()
    };
    let edit_call = of("tool_call")
        .into_iter()
        .find(|call| call["kind"] == "edit")
        .expect("a tool_call of kind edit");
    let notes = project.join("notes.txt");
    assert_eq!(
        edit_call["locations"][0]["path"],
        notes.display().to_string()
    );
    let edit_id = edit_call["toolCallId"].clone();
    let edit_end = of("tool_call_update")
        .into_iter()
        .find(|update| update["toolCallId"] == edit_id)
        .expect("the edit's tool_call_update");
    assert_eq!(edit_end["status"], "completed");
    assert_eq!(
        edit_end["content"][0],
        serde_json::json!({
            "type": "diff",
            "path": notes.display().to_string(),
            "oldText": "first\nold line\nlast\n",
            "newText": "first\nnew line\nlast\n",
        })
    );
    assert_eq!(
        std::fs::read_to_string(&notes).unwrap(),
        "first\nnew line\nlast\n"
    );
    assert!(
        of("agent_message_chunk")
            .iter()
            .any(|chunk| chunk["content"]["text"] == "Done."),
        "{updates:?}"
    );
    assert!(
        of("current_mode_update")
            .iter()
            .any(|update| update["currentModeId"] == "ask-writes")
    );

    // The editor's MCP server serves this session.
    assert_eq!(seen["mcpPrompt"]["stopReason"], "end_turn");
    let echoed = of("tool_call_update").into_iter().any(|update| {
        update["status"] == "completed"
            && update["content"][0]["content"]["text"] == "Echo: from the editor"
    });
    assert!(echoed, "{updates:?}");

    // Cancel mid-turn.
    assert_eq!(seen["cancelPrompt"]["stopReason"], "cancelled");
    let bash_call = of("tool_call")
        .into_iter()
        .find(|call| call["kind"] == "execute")
        .expect("the bash tool call");
    // (The scripted model numbers calls per turn, so the ids repeat: the last update is
    // the bash call's.)
    let bash_end = of("tool_call_update")
        .into_iter()
        .rev()
        .find(|update| update["toolCallId"] == bash_call["toolCallId"])
        .expect("the bash tool_call_update");
    assert_eq!(bash_end["status"], "failed", "{bash_end}");

    // session/load replays the stored history.
    let loaded: Vec<&Value> = seen["loadUpdates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|update| &update["update"])
        .collect();
    let user_texts: Vec<&str> = loaded
        .iter()
        .filter(|update| update["sessionUpdate"] == "user_message_chunk")
        .filter_map(|update| update["content"]["text"].as_str())
        .collect();
    assert!(user_texts[0].starts_with("call edit "), "{user_texts:?}");
    assert!(
        user_texts[1].starts_with("call mcp__everything__echo "),
        "{user_texts:?}"
    );
    assert!(user_texts[2].starts_with("call bash "), "{user_texts:?}");
    let replayed_edit = loaded
        .iter()
        .find(|update| update["sessionUpdate"] == "tool_call" && update["kind"] == "edit")
        .expect("the edit call replayed");
    assert_eq!(replayed_edit["toolCallId"], edit_id);
    assert!(
        loaded
            .iter()
            .any(|update| update["sessionUpdate"] == "tool_call_update"
                && update["toolCallId"] == edit_id
                && update["status"] == "completed")
    );
    assert!(
        loaded
            .iter()
            .any(|update| update["sessionUpdate"] == "agent_message_chunk"
                && update["content"]["text"] == "Done.")
    );

    // The editor's session is an ordinary daemon session.
    let (client, _events) = world.client().await;
    let sessions = client
        .call::<pi_protocol::v1::SessionList>(&Default::default())
        .await
        .unwrap();
    assert!(
        sessions
            .sessions
            .iter()
            .any(|session| session.id == session_id)
    );

    // A server with neither a command nor a URL is refused, saying so.
    let error = client
        .call::<pi_protocol::v1::McpSetSessionServers>(
            &pi_protocol::v1::McpSetSessionServersParams {
                session_id: session_id.clone(),
                servers: vec![pi_protocol::v1::McpSessionServer {
                    name: "nothing".to_owned(),
                    ..Default::default()
                }],
            },
        )
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains(
            "servers[0] (\"nothing\") needs either `command` (a stdio server) or `url` (an HTTP server)"
        ),
        "{error}"
    );
}
