//! `pictl rpc`: a scripted transcript of every pi RPC command against the scripted model
//! server, asserting each response's shape (redacted snapshot), the event stream (pi's
//! schema, pi's exact `message_update`), framing (U+2028 inside strings) and the exit at EOF.

use std::process::Stdio;
use std::time::Duration;

use pi_test_support::daemon::TempDaemon;
use pi_test_support::model_server::{Gate, ModelServer, Turn};
use pi_test_support::workspace_binary;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

use super::world::redact;

/// A running `pictl rpc` with its pipes.
struct Rpc {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Lines<BufReader<ChildStdout>>,
    /// Every response read, for the transcript snapshot.
    responses: Vec<Value>,
    /// Every event read.
    events: Vec<Value>,
}

impl Rpc {
    async fn send(&mut self, command: Value) {
        let line = format!("{command}\n");
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).await.unwrap();
        stdin.flush().await.unwrap();
    }

    async fn next_line(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(20), self.stdout.next_line())
            .await
            .expect("pictl rpc writes in time")
            .unwrap()
            .expect("pictl rpc is still running");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// Sends a command and reads until its response; events read meanwhile are kept.
    async fn call(&mut self, command: Value) -> Value {
        let id = command["id"].clone();
        self.send(command).await;
        self.response(&id).await
    }

    async fn response(&mut self, id: &Value) -> Value {
        loop {
            let line = self.next_line().await;
            if line["type"] == "response" {
                assert_eq!(&line["id"], id, "responses come in request order: {line}");
                self.responses.push(line.clone());
                return line;
            }
            self.events.push(line);
        }
    }

    /// Reads events until one of type `kind`; returns them.
    async fn events_until(&mut self, kind: &str) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let line = self.next_line().await;
            assert_ne!(line["type"], "response", "unexpected response {line}");
            let done = line["type"] == kind;
            self.events.push(line.clone());
            seen.push(line);
            if done {
                return seen;
            }
        }
    }
}

async fn start_rpc(daemon: &TempDaemon, cwd: &std::path::Path, args: &[&str]) -> Rpc {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_pictl"))
        .arg("rpc")
        .args(args)
        .current_dir(cwd)
        .env("PI_HOME", daemon.home.path())
        .env("HOME", daemon.home.path())
        .env("PI_DAEMON_BIN", workspace_binary("pid"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stdin = child.stdin.take();
    let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    Rpc {
        child,
        stdin,
        stdout,
        responses: Vec::new(),
        events: Vec::new(),
    }
}

/// A daemon whose `scripted` provider has two models: `scripted-model` (reasoning) and
/// `scripted-mini` (no reasoning).
async fn two_model_daemon(server: &ModelServer) -> TempDaemon {
    let mut models = server.models_json("anthropic-messages");
    let list = models["providers"]["scripted"]["models"]
        .as_array_mut()
        .unwrap();
    list.push(
        json!({"id": "scripted-mini", "name": "Scripted mini", "reasoning": false,
                     "contextWindow": 100000, "maxTokens": 8000}),
    );
    TempDaemon::start_with_files(
        &workspace_binary("pid"),
        "",
        &[(
            ".pi/agent/models.json",
            serde_json::to_string(&models).unwrap(),
        )],
    )
    .await
}

fn validator() -> jsonschema::Validator {
    let schema: Value =
        serde_json::from_str(include_str!("fixtures/pi-events.schema.json")).unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_pi_rpc_command_through_the_bridge() {
    let server = ModelServer::start().await;
    let daemon = two_model_daemon(&server).await;
    let workdir = tempfile::tempdir().unwrap();
    // A project template and skill, for `get_commands`.
    let prompts = workdir.path().join(".pi/prompts");
    std::fs::create_dir_all(&prompts).unwrap();
    std::fs::write(
        prompts.join("review.md"),
        "---\ndescription: Review the staged diff\n---\nReview the staged diff. $@\n",
    )
    .unwrap();
    let skill = workdir.path().join(".pi/skills/lint");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: lint\ndescription: Lint the workspace and fix what it finds\n---\nRun the linter.\n",
    )
    .unwrap();
    let mut rpc = start_rpc(
        &daemon,
        workdir.path(),
        &[
            "--ready",
            "--model",
            "scripted/scripted-model",
            "--models",
            "scripted/*",
        ],
    )
    .await;

    let ready = rpc.next_line().await;
    assert_eq!(ready["type"], "ready");
    assert_eq!(ready["protocolVersion"], pi_protocol::PROTOCOL_VERSION);
    let first_session = ready["sessionId"].as_str().unwrap().to_owned();

    // State and models.
    let state = rpc.call(json!({"id": "s1", "type": "get_state"})).await;
    assert_eq!(state["data"]["model"]["id"], "scripted-model");
    assert_eq!(state["data"]["sessionId"], first_session.as_str());
    let models = rpc
        .call(json!({"id": "m1", "type": "get_available_models"}))
        .await;
    assert_eq!(models["data"]["models"].as_array().unwrap().len(), 2);
    let cycled = rpc.call(json!({"id": "m2", "type": "cycle_model"})).await;
    assert_eq!(cycled["data"]["model"]["id"], "scripted-mini");
    assert_eq!(cycled["data"]["isScoped"], true);
    assert_eq!(
        cycled["data"]["thinkingLevel"], "off",
        "no reasoning: clamped"
    );
    let none = rpc
        .call(json!({"id": "t0", "type": "cycle_thinking_level"}))
        .await;
    assert_eq!(
        none["data"],
        Value::Null,
        "a model without reasoning has no levels"
    );
    let set = rpc
        .call(json!({"id": "m3", "type": "set_model", "provider": "scripted", "modelId": "scripted-model"}))
        .await;
    assert_eq!(set["data"]["reasoning"], true);
    let missing = rpc
        .call(json!({"id": "m4", "type": "set_model", "provider": "scripted", "modelId": "nope"}))
        .await;
    assert_eq!(missing["error"], "Model not found: scripted/nope");
    rpc.call(json!({"id": "t1", "type": "set_thinking_level", "level": "high"}))
        .await;
    let cycled = rpc
        .call(json!({"id": "t2", "type": "cycle_thinking_level"}))
        .await;
    assert_eq!(
        cycled["data"]["level"], "off",
        "xhigh is skipped for this model"
    );

    // A prompt: the response first, then pi's events; U+2028 survives the framing.
    server.push(Turn::reply().text("Hi\u{2028}there."));
    let response = rpc
        .call(json!({"id": "p1", "type": "prompt", "message": "hello\u{2028}world"}))
        .await;
    assert_eq!(response["success"], true);
    let events = rpc.events_until("agent_end").await;
    let validator = validator();
    for event in &events {
        assert!(validator.is_valid(event), "not a pi event: {event}");
        if event["type"] == "message_update" {
            assert!(event["message"].is_object(), "pi's exact form: {event}");
            assert_eq!(event["message"], event["assistantMessageEvent"]["partial"]);
        }
    }
    let ended = events.last().unwrap();
    assert_eq!(
        ended["messages"][0]["content"][0]["text"],
        "hello\u{2028}world"
    );
    assert_eq!(
        ended["messages"][1]["content"][0]["text"],
        "Hi\u{2028}there."
    );

    let text = rpc
        .call(json!({"id": "q1", "type": "get_last_assistant_text"}))
        .await;
    assert_eq!(text["data"]["text"], "Hi\u{2028}there.");
    let messages = rpc.call(json!({"id": "q2", "type": "get_messages"})).await;
    let roles: Vec<&str> = messages["data"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| message["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant"]);
    let stats = rpc
        .call(json!({"id": "q3", "type": "get_session_stats"}))
        .await;
    assert_eq!(stats["data"]["userMessages"], 1);
    let forks = rpc
        .call(json!({"id": "q4", "type": "get_fork_messages"}))
        .await;
    let first_user_entry = forks["data"]["messages"][0]["entryId"]
        .as_str()
        .unwrap()
        .to_owned();
    let empty = rpc
        .call(json!({"id": "n1", "type": "set_session_name", "name": "  "}))
        .await;
    assert_eq!(empty["error"], "Session name cannot be empty");
    rpc.call(json!({"id": "n2", "type": "set_session_name", "name": "rpc transcript"}))
        .await;

    // While a run streams: prompt without streamingBehavior fails, steer and follow-ups queue.
    let gate = Gate::new();
    server.push(Turn::reply().text("First part.").hold_after(3, &gate));
    server.push(Turn::reply().text("Steered."));
    server.push(Turn::reply().text("Followed."));
    rpc.call(json!({"id": "r1", "type": "prompt", "message": "go"}))
        .await;
    gate.reached().await;
    let busy = rpc
        .call(json!({"id": "r2", "type": "prompt", "message": "again"}))
        .await;
    assert_eq!(
        busy["error"],
        "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."
    );
    rpc.call(
        json!({"id": "r3", "type": "prompt", "message": "steered", "streamingBehavior": "steer"}),
    )
    .await;
    rpc.call(json!({"id": "r4", "type": "follow_up", "message": "followed"}))
        .await;
    let state = rpc.call(json!({"id": "r5", "type": "get_state"})).await;
    assert_eq!(state["data"]["isStreaming"], true);
    assert_eq!(state["data"]["pendingMessageCount"], 2);
    gate.release();
    let run = rpc.events_until("agent_end").await;
    let users: Vec<&str> = run.last().unwrap()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "user")
        .map(|message| message["content"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(users, ["go", "steered", "followed"]);

    // steer while idle is queued for the next run; abort stops a run.
    rpc.call(json!({"id": "a0", "type": "steer", "message": "later"}))
        .await;
    let gate = Gate::new();
    server.push(Turn::reply().text("Never finished").hold_after(3, &gate));
    rpc.call(json!({"id": "a1", "type": "prompt", "message": "long"}))
        .await;
    gate.reached().await;
    let aborted = rpc.call(json!({"id": "a2", "type": "abort"})).await;
    assert_eq!(aborted["success"], true);
    gate.release();
    // abort answers once the session is idle: the run's end came before the response.
    let end = rpc
        .events
        .iter()
        .rev()
        .find(|event| event["type"] == "agent_end")
        .unwrap();
    let last = end["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["stopReason"], "aborted");

    // Settings pi keeps globally, retries, user shell commands, compaction, clone.
    rpc.call(json!({"id": "g1", "type": "set_auto_compaction", "enabled": false}))
        .await;
    rpc.call(json!({"id": "g2", "type": "set_auto_retry", "enabled": true}))
        .await;
    rpc.call(json!({"id": "g3", "type": "set_steering_mode", "mode": "all"}))
        .await;
    let bad_mode = rpc
        .call(json!({"id": "g4", "type": "set_follow_up_mode", "mode": "sometimes"}))
        .await;
    assert_eq!(bad_mode["success"], false);
    let state = rpc.call(json!({"id": "g5", "type": "get_state"})).await;
    assert_eq!(state["data"]["autoCompactionEnabled"], false);
    assert_eq!(state["data"]["steeringMode"], "all");
    assert_eq!(state["data"]["isCompacting"], false);
    rpc.call(json!({"id": "g6", "type": "abort_retry"})).await;
    let bash = rpc
        .call(json!({"id": "b1", "type": "bash", "command": "echo from-bash"}))
        .await;
    assert_eq!(bash["data"]["output"], "from-bash\n");
    assert_eq!(bash["data"]["exitCode"], 0);
    rpc.call(json!({"id": "b2", "type": "abort_bash"})).await;
    server.push(Turn::reply().text("## Goal\nTalk.\n"));
    let compacted = rpc
        .call(json!({"id": "c1", "type": "compact", "customInstructions": "be brief"}))
        .await;
    assert!(
        compacted["data"]["summary"]
            .as_str()
            .unwrap()
            .contains("Talk."),
        "{compacted}"
    );
    assert!(compacted["data"]["firstKeptEntryId"].is_string());
    let compaction_events: Vec<&str> = rpc
        .events
        .iter()
        .filter_map(|event| event["type"].as_str())
        .filter(|kind| kind.starts_with("compaction_"))
        .collect();
    assert_eq!(compaction_events, ["compaction_start", "compaction_end"]);
    for event in rpc
        .events
        .iter()
        .filter(|e| e["type"].as_str().unwrap().starts_with("compaction_"))
    {
        assert!(validator.is_valid(event), "not a pi event: {event}");
    }
    let cloned = rpc.call(json!({"id": "k1", "type": "clone"})).await;
    assert_eq!(cloned["data"]["cancelled"], false);
    let state = rpc.call(json!({"id": "k2", "type": "get_state"})).await;
    assert_ne!(state["data"]["sessionId"], first_session.as_str());
    let back = rpc
        .call(json!({"id": "k3", "type": "switch_session", "sessionPath": first_session}))
        .await;
    assert_eq!(back["success"], true);

    // Export, fork, switch, new session.
    let exported = rpc
        .call(json!({"id": "e1", "type": "export_html", "outputPath": "out.html"}))
        .await;
    assert_eq!(
        exported["data"]["path"],
        workdir.path().join("out.html").display().to_string()
    );
    assert!(workdir.path().join("out.html").is_file());
    let forked = rpc
        .call(json!({"id": "f1", "type": "fork", "entryId": first_user_entry}))
        .await;
    assert_eq!(
        forked["data"],
        json!({"text": "hello\u{2028}world", "cancelled": false})
    );
    let state = rpc.call(json!({"id": "f2", "type": "get_state"})).await;
    assert_ne!(state["data"]["sessionId"], first_session.as_str());
    assert_eq!(state["data"]["messageCount"], 0);
    let switched = rpc
        .call(json!({"id": "w1", "type": "switch_session", "sessionPath": first_session}))
        .await;
    assert_eq!(switched["data"]["cancelled"], false);
    let state = rpc.call(json!({"id": "w2", "type": "get_state"})).await;
    assert_eq!(state["data"]["sessionId"], first_session.as_str());
    assert_eq!(state["data"]["sessionName"], "rpc transcript");
    let created = rpc.call(json!({"id": "w3", "type": "new_session"})).await;
    assert_eq!(created["data"]["cancelled"], false);

    // The session's templates and skills; unknown commands, bad lines; ids always echoed.
    let commands = rpc.call(json!({"id": "u1", "type": "get_commands"})).await;
    assert_eq!(
        commands["data"]["commands"],
        json!([
            {"name": "review", "description": "Review the staged diff (project)", "source": "prompt"},
            {"name": "skill:lint", "description": "Lint the workspace and fix what it finds", "source": "skill"}
        ]),
        "{commands}"
    );
    let unknown = rpc.call(json!({"id": "x1", "type": "frobnicate"})).await;
    assert_eq!(unknown["error"], "Unknown command: frobnicate");
    rpc.send(json!({"type": "extension_ui_response", "id": "nobody", "value": "x"}))
        .await;
    rpc.stdin
        .as_mut()
        .unwrap()
        .write_all(b"{not json}\r\n")
        .await
        .unwrap();
    let parse = rpc.response(&Value::Null).await;
    assert_eq!(parse["command"], "parse");
    assert!(
        parse["error"]
            .as_str()
            .unwrap()
            .starts_with("Failed to parse command: "),
        "{parse}"
    );

    // End of stdin: the bridge finishes and exits 0.
    drop(rpc.stdin.take());
    let status = tokio::time::timeout(Duration::from_secs(20), rpc.child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    assert!(rpc.stdout.next_line().await.unwrap().is_none());

    let transcript: Vec<String> = rpc
        .responses
        .iter()
        .map(|response| {
            redact(
                &response.to_string(),
                &[(workdir.path(), "[CWD]"), (daemon.home.path(), "[HOME]")],
            )
        })
        .collect();
    insta::assert_snapshot!("rpc_responses", transcript.join("\n"));
    server.assert_done(6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_session_deletes_its_sessions_at_exit() {
    let server = ModelServer::start().await;
    let daemon = two_model_daemon(&server).await;
    let workdir = tempfile::tempdir().unwrap();
    let mut rpc = start_rpc(
        &daemon,
        workdir.path(),
        &["--no-session", "--model", "scripted/scripted-model"],
    )
    .await;
    rpc.call(json!({"id": 1, "type": "new_session"})).await;
    drop(rpc.stdin.take());
    let status = rpc.child.wait().await.unwrap();
    assert_eq!(status.code(), Some(0));
    let (client, _events) = daemon.client().await;
    let sessions = client
        .call::<pi_protocol::v1::SessionList>(&Default::default())
        .await
        .unwrap()
        .sessions;
    assert!(sessions.is_empty(), "{sessions:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extension_ui_round_trip() {
    let server = ModelServer::start().await;
    let daemon = two_model_daemon(&server).await;
    let workdir = tempfile::tempdir().unwrap();
    let mut rpc = start_rpc(
        &daemon,
        workdir.path(),
        &["--ready", "--model", "scripted/scripted-model"],
    )
    .await;
    let ready = rpc.next_line().await;
    assert_eq!(ready["type"], "ready");
    let session_id = ready["sessionId"].as_str().unwrap().to_owned();

    // Another client (a script, an editor) asks whoever watches the session.
    let (asker, _events) = daemon.client().await;
    let question = tokio::spawn({
        let session_id = session_id.clone();
        async move {
            asker
                .call::<pi_protocol::v1::UiAsk>(&pi_protocol::v1::UiAskParams {
                    session_id,
                    request: pi_protocol::v1::UiRequest::Select {
                        title: "Deploy where?".into(),
                        options: vec!["staging".into(), "production".into()],
                        multiple: false,
                    },
                    timeout_ms: None,
                })
                .await
        }
    });
    let request = rpc.next_line().await;
    assert_eq!(request["type"], "extension_ui_request");
    assert_eq!(request["method"], "select");
    assert_eq!(request["title"], "Deploy where?");
    assert_eq!(request["options"], json!(["staging", "production"]));
    let id = request["id"].as_str().unwrap().to_owned();

    // An unknown id is ignored, as pi does; the real answer goes back to the asker.
    rpc.send(json!({"type": "extension_ui_response", "id": "ui-unknown", "value": "nowhere"}))
        .await;
    rpc.send(json!({"type": "extension_ui_response", "id": id, "value": "staging"}))
        .await;
    let answered = question.await.unwrap().unwrap();
    assert_eq!(answered.request_id, id);
    assert_eq!(answered.answer.value.as_deref(), Some("staging"));

    // Commands keep working around it.
    let state = rpc.call(json!({"id": "s", "type": "get_state"})).await;
    assert_eq!(state["success"], true);
    drop(rpc.stdin.take());
    assert_eq!(rpc.child.wait().await.unwrap().code(), Some(0));
    server.assert_done(0);
}

/// A provider pi's `registerProvider` defines, answering locally.
const LOCAL_PROVIDER: &str = r#"import { createAssistantMessageEventStream } from "@mariozechner/pi-ai";
export default function (pi) {
  pi.registerProvider("local", {
    baseUrl: "http://localhost",
    apiKey: "local-key",
    api: "local-api",
    models: [{ id: "local-1", name: "Local", reasoning: false, input: ["text"],
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 }],
    streamSimple: (model) => {
      const stream = createAssistantMessageEventStream();
      const output = { role: "assistant", content: [{ type: "text", text: "local answer" }], api: model.api,
        provider: model.provider, model: model.id, stopReason: "stop", timestamp: Date.now(),
        usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2,
          cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } } };
      queueMicrotask(() => {
        stream.push({ type: "start", partial: output });
        stream.push({ type: "done", reason: "stop", message: output });
        stream.end();
      });
      return stream;
    },
  });
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extensions_keep_the_bridge_in_its_session_and_their_models_are_listed() {
    let server = ModelServer::start().await;
    let daemon = two_model_daemon(&server).await;
    let workdir = tempfile::tempdir().unwrap();
    std::fs::write(workdir.path().join("local.ts"), LOCAL_PROVIDER).unwrap();
    let confirm = pi_test_support::peers::pi_examples().join("confirm-destructive.ts");
    let mut rpc = start_rpc(
        &daemon,
        workdir.path(),
        &[
            "--ready",
            "--model",
            "scripted/scripted-model",
            "-e",
            confirm.to_str().unwrap(),
            "-e",
            "./local.ts",
        ],
    )
    .await;
    let ready = rpc.next_line().await;
    assert_eq!(ready["type"], "ready");

    // The extension's model is listed and chosen like the others; get_state shows it.
    let listed = rpc
        .call(json!({"id": "m", "type": "get_available_models"}))
        .await;
    assert!(
        listed["data"]["models"]
            .as_array()
            .unwrap()
            .iter()
            .any(|model| model["provider"] == "local" && model["id"] == "local-1"),
        "{listed}"
    );
    let set = rpc
        .call(json!({"id": "s", "type": "set_model", "provider": "local", "modelId": "local-1"}))
        .await;
    assert_eq!(set["success"], true, "{set}");
    let state = rpc.call(json!({"id": "g", "type": "get_state"})).await;
    assert_eq!(state["data"]["model"]["provider"], "local", "{state}");

    // pi's confirm-destructive asks before a new session: refused, the bridge stays; then
    // accepted.
    for (confirmed, cancelled) in [(false, true), (true, false)] {
        rpc.send(json!({"id": "n", "type": "new_session"})).await;
        let request = loop {
            let line = rpc.next_line().await;
            if line["type"] == "extension_ui_request" && line["method"] == "confirm" {
                break line;
            }
            assert_ne!(line["type"], "response", "answered without asking: {line}");
        };
        assert_eq!(request["title"], "Clear session?");
        rpc.send(
            json!({"type": "extension_ui_response", "id": request["id"], "confirmed": confirmed}),
        )
        .await;
        let response = rpc.response(&json!("n")).await;
        assert_eq!(response["success"], true, "{response}");
        assert_eq!(response["data"]["cancelled"], cancelled, "{response}");
    }

    // A fork it refuses is pi's `{cancelled: true}`, not a failure.
    rpc.call(json!({"id": "p", "type": "prompt", "message": "hi"}))
        .await;
    rpc.events_until("agent_end").await;
    let messages = rpc
        .call(json!({"id": "f", "type": "get_fork_messages"}))
        .await;
    let entry = messages["data"]["messages"][0]["entryId"].clone();
    rpc.send(json!({"id": "k", "type": "fork", "entryId": entry}))
        .await;
    let request = loop {
        let line = rpc.next_line().await;
        if line["type"] == "extension_ui_request" && line["method"] == "select" {
            break line;
        }
        assert_ne!(line["type"], "response", "answered without asking: {line}");
    };
    rpc.send(json!({"type": "extension_ui_response", "id": request["id"],
        "value": "No, stay in current session"}))
        .await;
    let response = rpc.response(&json!("k")).await;
    assert_eq!(response["success"], true, "{response}");
    assert_eq!(response["data"]["cancelled"], true, "{response}");
    drop(rpc.stdin.take());
    assert_eq!(rpc.child.wait().await.unwrap().code(), Some(0));
}
