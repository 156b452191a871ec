//! `pictl run --json --pi-compat` against pi's own JSON mode: the same scripted model, the
//! same files and the same prompt give the same sequence of event types, and the same keys
//! per event, as a transcript recorded from pi 0.73.1 (`fixtures/pi-0.73.1/`).
//!
//! Compared: each event's `type` and its keys, three levels deep (an event's keys, the keys of
//! its objects, the keys of theirs: content blocks, `details`), in pi's order. Values are not
//! compared (ids, times and paths differ by nature), and neither are the insides of the
//! streaming partial message of `message_start`/`message_update`: pi serializes events after
//! the provider has already changed that object, so its recorded partials show a later state.
//!
//! Recording (done once; the fixtures are checked in). Install pi and run this test with
//! `PI_RECORD` set to its binary; it then runs pi instead of `pictl` on each scenario and
//! writes the fixtures:
//!
//! ```text
//! npm install --prefix /tmp/pi-0.73.1 @mariozechner/pi-coding-agent@0.73.1
//! PI_RECORD=/tmp/pi-0.73.1/node_modules/.bin/pi cargo nextest run -p pictl pi_stream
//! ```
//!
//! pi runs offline (`--offline`, `--no-session`, no extensions, skills, templates, themes or
//! context files) with `PI_CODING_AGENT_DIR` holding only the scripted server's `models.json`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use pi_test_support::model_server::{ModelServer, Turn};
use serde_json::{Value, json};

use super::world::{MODEL, World, assert_exit, json_lines};

/// The tools both agents get.
const TOOLS: &str = "read,bash,edit,write,grep,ls";

/// A scenario: files in the working directory, a prompt, and the model's turns.
struct Scenario {
    name: &'static str,
    api: &'static str,
    files: &'static [(&'static str, &'static str)],
    prompt: &'static str,
    turns: fn() -> Vec<Turn>,
    /// Compare the keys of the streaming partial too (its events are spaced out, so pi's
    /// late serialization shows each partial as it was).
    partials: bool,
}

/// Ten tool calls over seven turns: parallel calls, each built-in tool, a fast bash command
/// with output, a failing one, a missing file, an unknown tool, a missing directory.
fn tools10() -> Vec<Turn> {
    vec![
        Turn::reply()
            .text("Looking around.")
            .tool_call("call_1", "ls", json!({"path": "."}))
            .tool_call("call_2", "read", json!({"path": "notes.txt"}))
            .tool_call("call_3", "grep", json!({"pattern": "alpha"}))
            .into(),
        Turn::reply()
            .tool_call(
                "call_4",
                "write",
                json!({"path": "out.txt", "content": "hello world\n"}),
            )
            .into(),
        Turn::reply()
            .tool_call("call_5", "bash", json!({"command": "echo hi"}))
            .into(),
        Turn::reply()
            .tool_call(
                "call_6",
                "edit",
                json!({"path": "out.txt", "edits": [{"oldText": "world", "newText": "pi"}]}),
            )
            .into(),
        Turn::reply()
            .tool_call("call_7", "bash", json!({"command": "echo out; exit 3"}))
            .into(),
        Turn::reply()
            .tool_call("call_8", "read", json!({"path": "missing.txt"}))
            .tool_call("call_9", "nope", json!({}))
            .tool_call("call_10", "ls", json!({"path": "nowhere"}))
            .into(),
        Turn::reply().text("Done.").into(),
    ]
}

/// A bash command whose output comes in three parts, 300 ms apart.
fn slow_bash() -> Vec<Turn> {
    vec![
        Turn::reply()
            .text("Counting.")
            .tool_call(
                "call_1",
                "bash",
                json!({"command": "for i in 1 2 3; do echo line $i; sleep 0.3; done"}),
            )
            .into(),
        Turn::reply().text("Counted.").into(),
    ]
}

/// Text, then two tool calls, streamed slowly enough that pi's recorded partials are exact:
/// the blocks carry the providers' scratch keys while they stream.
fn partials() -> Vec<Turn> {
    vec![
        Turn::reply()
            .text("Two reads.")
            .tool_call("call_1", "read", json!({"path": "a.txt"}))
            .tool_call("call_2", "read", json!({"path": "b.txt"}))
            .delta_chars(6)
            .delay_each(Duration::from_millis(25))
            .into(),
        Turn::reply()
            .text("Read both.")
            .delta_chars(6)
            .delay_each(Duration::from_millis(25))
            .into(),
    ]
}

const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "tools10-openai-completions",
        api: "openai-completions",
        files: &[("notes.txt", "alpha\nbeta\n")],
        prompt: "Look at the notes and make out.txt.",
        turns: tools10,
        partials: false,
    },
    Scenario {
        name: "tools10-anthropic-messages",
        api: "anthropic-messages",
        files: &[("notes.txt", "alpha\nbeta\n")],
        prompt: "Look at the notes and make out.txt.",
        turns: tools10,
        partials: false,
    },
    Scenario {
        name: "slow-bash-anthropic-messages",
        api: "anthropic-messages",
        files: &[],
        prompt: "Count to three slowly.",
        turns: slow_bash,
        partials: false,
    },
    Scenario {
        name: "partials-openai-completions",
        api: "openai-completions",
        files: &[("a.txt", "a\n"), ("b.txt", "b\n")],
        prompt: "Read a and b.",
        turns: partials,
        partials: true,
    },
    Scenario {
        name: "partials-anthropic-messages",
        api: "anthropic-messages",
        files: &[("a.txt", "a\n"), ("b.txt", "b\n")],
        prompt: "Read a and b.",
        turns: partials,
        partials: true,
    },
    Scenario {
        name: "partials-openai-responses",
        api: "openai-responses",
        files: &[("a.txt", "a\n"), ("b.txt", "b\n")],
        prompt: "Read a and b.",
        turns: partials,
        partials: true,
    },
];

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/suite/fixtures/pi-0.73.1")
        .join(format!("{name}.jsonl"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_mode_matches_a_recorded_pi_transcript() {
    if let Ok(pi) = std::env::var("PI_RECORD") {
        for scenario in SCENARIOS {
            record(Path::new(&pi), scenario).await;
        }
        return;
    }
    let mut failures = Vec::new();
    for scenario in SCENARIOS {
        let recorded = std::fs::read_to_string(fixture(scenario.name)).unwrap_or_else(|error| {
            panic!(
                "cannot read the pi transcript {} ({error}); record it as the module \
                 documentation says",
                fixture(scenario.name).display()
            )
        });
        let pi: Vec<Value> = recorded
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        let ours = run_ours(scenario).await;
        match check_bash_updates(&ours) {
            Err(problem) => failures.push(format!("{}: {problem}", scenario.name)),
            Ok(0) if !scenario.partials => {
                failures.push(format!("{}: no bash call", scenario.name));
            }
            Ok(_) => {}
        }
        let (pi_shapes, our_shapes) = (
            shapes(&pi, scenario.partials),
            shapes(&ours, scenario.partials),
        );
        if pi_shapes != our_shapes {
            failures.push(format!(
                "{}: the event streams differ (- pi, + pictl):\n{}",
                scenario.name,
                diff(&pi_shapes, &our_shapes)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Runs `pictl run --json --pi-compat` on the scenario and returns its lines.
async fn run_ours(scenario: &Scenario) -> Vec<Value> {
    let world = World::start_with_api(scenario.api, json!({})).await;
    for (name, text) in scenario.files {
        std::fs::write(world.workdir.path().join(name), text).unwrap();
    }
    for turn in (scenario.turns)() {
        world.server.push(turn);
    }
    let output = world
        .pictl(&[
            "run",
            "--json",
            "--pi-compat",
            "--no-session",
            "--model",
            MODEL,
            "--tools",
            TOOLS,
            scenario.prompt,
        ])
        .await;
    assert_exit(&output, 0);
    world.server.assert_done((scenario.turns)().len());
    json_lines(&output)
}

/// Runs pi on the scenario and writes its transcript as the fixture.
async fn record(pi: &Path, scenario: &Scenario) {
    let server = ModelServer::start().await;
    for turn in (scenario.turns)() {
        server.push(turn);
    }
    let home = tempfile::tempdir().unwrap();
    let agent = home.path().join("agent");
    let work = home.path().join("work");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(
        agent.join("models.json"),
        server.models_json(scenario.api).to_string(),
    )
    .unwrap();
    for (name, text) in scenario.files {
        std::fs::write(work.join(name), text).unwrap();
    }
    let output = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::process::Command::new(pi)
            .args([
                "--offline",
                "--no-session",
                "--mode",
                "json",
                "--model",
                MODEL,
                "--tools",
                TOOLS,
                "--no-extensions",
                "--no-skills",
                "--no-prompt-templates",
                "--no-themes",
                "--no-context-files",
                "-p",
                scenario.prompt,
            ])
            .current_dir(&work)
            .env("PI_CODING_AGENT_DIR", &agent)
            .env("HOME", home.path())
            .env("PI_OFFLINE", "1")
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("pi finishes within two minutes")
    .expect("pi runs");
    assert!(
        output.status.success(),
        "pi failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    server.assert_done((scenario.turns)().len());
    let path = fixture(scenario.name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, &output.stdout).unwrap();
}

/// Our bash calls report as pi's do: an empty update first, then the output as it comes,
/// the last update holding all of it (before any exit-code note). Returns how many bash calls
/// there were.
fn check_bash_updates(ours: &[Value]) -> Result<usize, String> {
    let bash_ids: Vec<&str> = ours
        .iter()
        .filter(|event| event["type"] == "tool_execution_start" && event["toolName"] == "bash")
        .filter_map(|event| event["toolCallId"].as_str())
        .collect();
    for &id in &bash_ids {
        let updates: Vec<&Value> = ours
            .iter()
            .filter(|event| event["type"] == "tool_execution_update" && event["toolCallId"] == id)
            .collect();
        if updates.len() < 2 || updates[0]["partialResult"] != json!({"content": []}) {
            return Err(format!(
                "bash {id}: expected an empty update, then the output: {updates:?}"
            ));
        }
        let end = ours
            .iter()
            .find(|event| event["type"] == "tool_execution_end" && event["toolCallId"] == id)
            .ok_or_else(|| format!("bash {id} never ends"))?;
        let last = updates[updates.len() - 1]["partialResult"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        let result = end["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        if last.is_empty() || !result.starts_with(last) {
            return Err(format!(
                "bash {id}: last update {last:?} is not the start of the result {result:?}"
            ));
        }
    }
    Ok(bash_ids.len())
}

/// One line per event: its type and its keys three levels deep (with `partials`, the keys of
/// the streaming partial's content blocks too). Consecutive updates of one tool call are one
/// line: how many there are depends on how the output reached the pipe.
fn shapes(events: &[Value], partials: bool) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for event in events {
        let kind = event["type"].as_str().unwrap_or("?");
        let line = match kind {
            // The header line: pictl adds `protocolVersion`, on purpose.
            "session" => "session".to_owned(),
            "message_start" | "message_update" => {
                let mut shape = format!("{kind} {}", keys(event, 1));
                if let Some(inner) = event.get("assistantMessageEvent") {
                    shape.push_str(&format!(" assistantMessageEvent{}", keys(inner, 1)));
                }
                if partials && let Some(message) = event.get("message") {
                    shape.push_str(&format!(" content{}", keys(&message["content"], 2)));
                }
                shape
            }
            _ => format!("{kind} {}", keys(event, 3)),
        };
        let line = if kind == "tool_execution_update" {
            format!("tool_execution_update+ {}", event["toolCallId"])
        } else {
            line
        };
        if lines.last() != Some(&line) || !line.starts_with("tool_execution_update+") {
            lines.push(line);
        }
    }
    lines
}

/// `{a,b{c,d},e[{f}]}`: the keys of `value`, `depth` levels deep.
fn keys(value: &Value, depth: usize) -> String {
    match value {
        Value::Object(map) => {
            let inner: Vec<String> = map
                .iter()
                .map(|(key, child)| {
                    if depth > 1 {
                        format!("{key}{}", keys(child, depth - 1))
                    } else {
                        key.clone()
                    }
                })
                .collect();
            format!("{{{}}}", inner.join(","))
        }
        Value::Array(items) if depth > 1 => {
            let inner: Vec<String> = items.iter().map(|item| keys(item, depth - 1)).collect();
            format!("[{}]", inner.join(","))
        }
        _ => String::new(),
    }
}

/// A line diff of the two shape lists.
fn diff(pi: &[String], ours: &[String]) -> String {
    let text = |lines: &[String]| lines.join("\n") + "\n";
    similar::TextDiff::from_lines(&text(pi), &text(ours))
        .unified_diff()
        .context_radius(3)
        .to_string()
}
