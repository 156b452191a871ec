//! `pictl acp` driven by an editor we did not write: a Node client built on the official ACP
//! TypeScript SDK (`@agentclientprotocol/sdk` from npm, `tests/peers/acp_driver.mjs` and
//! `acp_writes.mjs`, sharing `acp_client.mjs`), against
//! the real `pid` and the scripted model. The driver initializes, creates a session, switches
//! to `ask-writes`, prompts a turn whose model calls `edit` (the daemon's question arrives as
//! `session/request_permission`, answered "allow once"), cancels a long `bash` mid-turn, and
//! loads the finished session on a second connection. The SDK validates every message it
//! receives against ACP's schema.

use pi_test_support::model_server::Turn;
use serde_json::Value;

use super::harness::{MODEL, World};
use super::mcp_faults::caller;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acp_editor_edits_with_permission_cancels_and_loads_a_session() {
    let world = World::start_with(
        "anthropic-messages",
        &[
            ("proj/notes.txt", "first\nold line\nlast\n".to_owned()),
            // A pi extension's slash command, announced to the editor.
            (
                ".pi/agent/extensions/greet.ts",
                "export default function (pi) { pi.registerCommand(\"greet\", \
                 {description: \"Say hello\", handler: async () => {}}); }\n"
                    .to_owned(),
            ),
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

    // The session's slash commands, its extension's among them (`available_commands`).
    let announced: Vec<&Value> = seen["updates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|update| update["update"]["sessionUpdate"] == "available_commands_update")
        .collect();
    assert!(
        announced.iter().any(|update| {
            update["sessionId"] == session_id.as_str()
                && update["update"]["availableCommands"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|command| {
                        command["name"] == "greet" && command["description"] == "Say hello"
                    })
        }),
        "{announced:?}"
    );

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

/// Files each session's model writes at once: new ones and one that exists.
const NEW_FILES: usize = 12;

/// The model: "write the files" → `NEW_FILES` writes of new files and one overwrite of
/// `existing.txt`, in one message (they run in parallel); then "Done.".
fn writer(request: &pi_test_support::model_server::RecordedRequest) -> Result<Turn, String> {
    let messages = request.body["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let answered = messages.iter().any(|message| {
        message["content"]
            .as_array()
            .is_some_and(|blocks| blocks.iter().any(|block| block["type"] == "tool_result"))
    });
    if answered {
        return Ok(Turn::reply().text("Done.").into());
    }
    let mut reply = Turn::reply();
    for index in 0..NEW_FILES {
        reply = reply.tool_call(
            format!("call_{index}"),
            "write",
            serde_json::json!({"path": format!("new-{index}.txt"), "content": format!("file {index}\n")}),
        );
    }
    Ok(reply
        .tool_call(
            "call_existing",
            "write",
            serde_json::json!({"path": "existing.txt", "content": "rewritten\n"}),
        )
        .into())
}

/// Every `write` an editor sees comes with the diff against the file before the tool ran —
/// none for a new file — however quickly the tool beats the bridge (the before-image is the
/// tool's own, from the result's details): three sessions writing thirteen files each at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_write_diff_an_editor_sees_starts_from_the_file_before_the_tool() {
    let projects = ["a", "b", "c"];
    let files: Vec<(String, String)> = projects
        .iter()
        .map(|name| (format!("{name}/existing.txt"), format!("old in {name}\n")))
        .collect();
    let files: Vec<(&str, String)> = files
        .iter()
        .map(|(path, text)| (path.as_str(), text.clone()))
        .collect();
    let world = World::start_with("anthropic-messages", &files).await;
    world.server.respond_with(writer);
    let home = world.daemon.home.path();
    let dirs: Vec<std::path::PathBuf> = projects.iter().map(|name| home.join(name)).collect();
    let driver = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../peers/acp_writes.mjs");
    let output = tokio::process::Command::new("node")
        .arg(&driver)
        .envs(world.daemon.env())
        .env("PICTL", pi_test_support::workspace_binary("pictl"))
        .env(
            "PROJECTS",
            dirs.iter()
                .map(|dir| dir.display().to_string())
                .collect::<Vec<_>>()
                .join(":"),
        )
        .env("PI_PEERS_DIR", pi_test_support::peers::dir())
        .output()
        .await
        .expect("node runs (tests/install-peers installs it)");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the driver failed:\n{stderr}");
    let seen: Value = serde_json::from_slice(&output.stdout).unwrap();
    for prompt in seen["prompts"].as_array().unwrap() {
        assert_eq!(prompt["stopReason"], "end_turn");
    }
    for session in seen["sessions"].as_array().unwrap() {
        let session_id = &session["sessionId"];
        let dir = std::path::Path::new(session["cwd"].as_str().unwrap());
        let ends: Vec<&Value> = seen["updates"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|update| &update["sessionId"] == session_id)
            .map(|update| &update["update"])
            .filter(|update| {
                update["sessionUpdate"] == "tool_call_update" && update["status"] == "completed"
            })
            .collect();
        assert_eq!(ends.len(), NEW_FILES + 1, "{ends:?}");
        for end in ends {
            let diff = &end["content"][0];
            assert_eq!(diff["type"], "diff", "{end}");
            let path = std::path::Path::new(diff["path"].as_str().unwrap());
            assert_eq!(path.parent(), Some(dir));
            let written = std::fs::read_to_string(path).unwrap();
            assert_eq!(diff["newText"], written.as_str());
            if path.ends_with("existing.txt") {
                let name = dir.file_name().unwrap().to_string_lossy();
                assert_eq!(diff["oldText"], format!("old in {name}\n"), "{end}");
            } else {
                // A new file: no old text, never the new text read too late.
                assert_eq!(diff["oldText"], Value::Null, "{end}");
            }
        }
    }
}

/// What an editor sends that is not a proper request gets a JSON-RPC error, never silence;
/// the daemon's refusals keep their kind (bad params, a missing session) rather than all
/// being "internal"; at the end of stdin every request is answered and the bridge exits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_that_sends_nonsense_gets_an_answer_for_each_line() {
    use tokio::io::AsyncWriteExt as _;
    let world = World::start("anthropic-messages").await;
    let project = world.daemon.home.path().join("proj");
    std::fs::create_dir_all(&project).unwrap();
    let mut acp = tokio::process::Command::new(pi_test_support::workspace_binary("pictl"))
        .arg("acp")
        .envs(world.daemon.env())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#.to_owned(),
        "[1,2]".to_owned(),
        "42".to_owned(),
        r#"{"jsonrpc":"2.0","id":2,"method":5}"#.to_owned(),
        "this is not json".to_owned(),
        serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "session/new",
            "params": {"cwd": project, "mcpServers": []}})
        .to_string(),
        serde_json::json!({"jsonrpc": "2.0", "id": 4, "method": "session/load",
            "params": {"sessionId": "00000000-0000-0000-0000-000000000000", "cwd": project, "mcpServers": []}})
        .to_string(),
        r#"{"jsonrpc":"2.0","id":"five","method":"frobnicate/x"}"#.to_owned(),
    ];
    let mut stdin = acp.stdin.take().unwrap();
    stdin
        .write_all(format!("{}\n", lines.join("\n")).as_bytes())
        .await
        .unwrap();
    drop(stdin);
    let output = tokio::time::timeout(std::time::Duration::from_secs(60), acp.wait_with_output())
        .await
        .expect("pictl acp ends when stdin closes")
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let answers: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .filter(|message: &Value| message.get("method").is_none())
        .collect();
    let error_of = |id: Value| -> (i64, String) {
        let answer = answers
            .iter()
            .find(|answer| answer["id"] == id && answer.get("error").is_some())
            .unwrap_or_else(|| panic!("no error answer with id {id}: {answers:#?}"));
        (
            answer["error"]["code"].as_i64().unwrap(),
            answer["error"]["message"].as_str().unwrap().to_owned(),
        )
    };
    // Two lines of JSON that are no message and one that is not JSON: three answers, id null.
    let nulls: Vec<i64> = answers
        .iter()
        .filter(|answer| answer["id"].is_null())
        .map(|answer| answer["error"]["code"].as_i64().unwrap())
        .collect();
    assert_eq!(nulls, [-32600, -32600, -32700], "{answers:#?}");
    assert_eq!(error_of(serde_json::json!(2)).0, -32600);
    let created = answers
        .iter()
        .find(|answer| answer["id"] == 3)
        .unwrap_or_else(|| panic!("{answers:#?}"));
    assert!(created["result"]["sessionId"].is_string(), "{created}");
    let (code, message) = error_of(serde_json::json!(4));
    assert_eq!(
        code, -32002,
        "a missing session is ACP's resource-not-found: {message}"
    );
    assert_eq!(error_of(serde_json::json!("five")).0, -32601);
    assert!(
        answers
            .iter()
            .any(|answer| answer["id"] == 1 && answer["result"].is_object())
    );
}
