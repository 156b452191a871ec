//! `pictl run` against the scripted model server: print mode, JSON mode (checked against
//! pi's event schema), stdin, `@file` text and images, several messages, session options,
//! failures and Ctrl+C.

use pi_protocol::v1::message::{AgentMessage, StopReason};
use pi_protocol::v1::{
    ReadScope, SessionEntry, SessionList, SessionListParams, SessionRead, SessionReadParams,
};
use pi_test_support::model_server::{Gate, ScriptErrorKind, Turn};

use super::world::{World, assert_exit, json_lines, stderr, stdout};

/// The user texts the model received in request `index` (0-based), in order.
fn request_user_texts(world: &World, index: usize) -> Vec<String> {
    let request = &world.server.requests()[index];
    request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "user")
        .flat_map(|message| match &message["content"] {
            serde_json::Value::String(text) => vec![text.clone()],
            serde_json::Value::Array(blocks) => blocks
                .iter()
                .filter_map(|block| block["text"].as_str().map(str::to_owned))
                .collect(),
            _ => Vec::new(),
        })
        .collect()
}

fn pi_event_validator() -> jsonschema::Validator {
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("fixtures/pi-events.schema.json")).unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn print_mode_prints_the_final_text_blocks() {
    let world = World::start().await;
    world
        .server
        .push(Turn::reply().thinking("hidden").text("Hello there."));
    let output = world
        .pictl(&["run", "--model", super::world::MODEL, "say hello"])
        .await;
    assert_exit(&output, 0);
    assert_eq!(stdout(&output), "Hello there.\n");
    assert_eq!(stderr(&output), "");
    assert_eq!(request_user_texts(&world, 0), ["say hello"]);
    world.server.assert_done(1);
}

/// Like pi, an id its provider does not list runs as a custom model id with the provider's
/// defaults and a warning on stderr; the session keeps it when continued.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unlisted_model_id_runs_with_a_warning() {
    let world = World::start().await;
    world
        .server
        .push(Turn::reply().text("Hi from the new model."));
    let output = world
        .pictl(&["run", "--model", "scripted/brand-new-model", "hello"])
        .await;
    assert_exit(&output, 0);
    assert_eq!(stdout(&output), "Hi from the new model.\n");
    assert!(
        stderr(&output).starts_with(
            "Warning: model \"brand-new-model\" is not listed for provider \"scripted\"; \
             using it as a custom model id with the provider's defaults"
        ),
        "{}",
        stderr(&output)
    );
    assert_eq!(world.server.requests()[0].body["model"], "brand-new-model");

    // Continued (the session's actor may be reloaded from the store): the same model, and
    // no warning, since nothing new was chosen.
    world.server.push(Turn::reply().text("Still me."));
    let output = world.pictl(&["run", "-c", "again"]).await;
    assert_exit(&output, 0);
    assert_eq!(stdout(&output), "Still me.\n");
    assert_eq!(stderr(&output), "");
    assert_eq!(world.server.requests()[1].body["model"], "brand-new-model");
    world.server.assert_done(2);

    // The warning stays on the session while it holds: in session/get, for every client.
    let (client, _notifications) = world.client().await;
    let listed = client
        .call::<pi_protocol::v1::SessionList>(&pi_protocol::v1::SessionListParams::default())
        .await
        .unwrap();
    let got = client
        .call::<pi_protocol::v1::SessionGet>(&pi_protocol::v1::SessionIdParams {
            session_id: listed.sessions[0].id.clone(),
        })
        .await
        .unwrap();
    assert_eq!(got.info.warnings.len(), 1, "{:?}", got.info);
    assert!(
        got.info.warnings[0].starts_with("model \"brand-new-model\" is not listed"),
        "{:?}",
        got.info.warnings
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_mode_prints_a_header_and_pi_shaped_events() {
    let world = World::start().await;
    world
        .server
        .push(Turn::reply().text("Let me look.").tool_call(
            "call_1",
            "read",
            serde_json::json!({"path": "README.md"}),
        ));
    world.server.push(Turn::reply().text("Done."));
    let output = world
        .pictl(&["run", "--json", "--model", super::world::MODEL, "look"])
        .await;
    assert_exit(&output, 0);
    let lines = json_lines(&output);
    let header = &lines[0];
    assert_eq!(header["type"], "session");
    assert_eq!(header["version"], 3);
    assert_eq!(header["protocolVersion"], pi_protocol::PROTOCOL_VERSION);
    assert_eq!(header["cwd"], world.cwd());
    let validator = pi_event_validator();
    for line in &lines[1..] {
        if let Err(error) = validator.validate(line) {
            panic!("not a pi event ({error}): {line}");
        }
        assert!(line.get("message").is_none() || line["type"] != "message_update");
    }
    let types: Vec<&str> = lines[1..]
        .iter()
        .map(|line| line["type"].as_str().unwrap())
        .filter(|kind| *kind != "message_update")
        .collect();
    insta::assert_snapshot!("run_json_event_types", types.join("\n"));
    let end = lines.last().unwrap();
    assert_eq!(end["type"], "agent_end");
    let roles: Vec<&str> = end["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| message["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "toolResult", "assistant"]);
    world.server.assert_done(2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_compat_mode_repeats_the_partial_message() {
    let world = World::start().await;
    world
        .server
        .push(Turn::reply().text("abcdefgh").delta_chars(3));
    let output = world
        .pictl(&[
            "run",
            "--json",
            "--pi-compat",
            "--model",
            super::world::MODEL,
            "go",
        ])
        .await;
    assert_exit(&output, 0);
    let validator = pi_event_validator();
    let lines = json_lines(&output);
    let partial_texts: Vec<String> = lines[1..]
        .iter()
        .inspect(|line| assert!(validator.is_valid(line), "not a pi event: {line}"))
        .filter(|line| line["type"] == "message_update")
        .map(|line| {
            assert_eq!(
                line["message"], line["assistantMessageEvent"]["partial"],
                "pi repeats the partial in both places"
            );
            line["message"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert_eq!(partial_texts, ["", "abc", "abcdef", "abcdefgh", "abcdefgh"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn piped_stdin_goes_before_the_first_message_as_pi_joins_it_and_each_message_is_a_prompt() {
    let world = World::start().await;
    world.server.push(Turn::reply().text("One."));
    world.server.push(Turn::reply().text("Two."));
    let output = world
        .pictl_with_stdin(
            &["run", "--model", super::world::MODEL, "first", "second"],
            "  piped text\n",
        )
        .await;
    assert_exit(&output, 0);
    assert_eq!(stdout(&output), "Two.\n", "only the final reply is printed");
    // pi joins stdin and the first message with nothing between them.
    assert_eq!(request_user_texts(&world, 0), ["piped textfirst"]);
    assert_eq!(request_user_texts(&world, 1), ["piped textfirst", "second"]);
    world.server.assert_done(2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_arguments_attach_text_and_images() {
    let world = World::start().await;
    std::fs::write(world.workdir.path().join("notes.txt"), "remember this").unwrap();
    let mut png = std::io::Cursor::new(Vec::new());
    image::RgbImage::from_pixel(2, 2, image::Rgb([200, 10, 10]))
        .write_to(&mut png, image::ImageFormat::Png)
        .unwrap();
    let png = png.into_inner();
    std::fs::write(world.workdir.path().join("shot.png"), &png).unwrap();
    world.server.push(Turn::reply().text("Seen."));
    let output = world
        .pictl(&[
            "run",
            "--model",
            super::world::MODEL,
            "@notes.txt",
            "@shot.png",
            "what is this?",
        ])
        .await;
    assert_exit(&output, 0);
    let cwd = world.cwd();
    assert_eq!(
        request_user_texts(&world, 0),
        [format!(
            "<file name=\"{cwd}/notes.txt\">\nremember this\n</file>\n<file name=\"{cwd}/shot.png\"></file>\nwhat is this?"
        )]
    );
    let request = &world.server.requests()[0];
    let blocks = request.body["messages"][0]["content"].as_array().unwrap();
    let image = blocks
        .iter()
        .find(|block| block["type"] == "image")
        .expect("the image is sent");
    assert_eq!(image["source"]["media_type"], "image/png");
    // Within the limits: sent byte for byte.
    use base64::Engine as _;
    assert_eq!(
        image["source"]["data"],
        base64::engine::general_purpose::STANDARD.encode(&png)
    );

    let missing = world
        .pictl(&["run", "--model", super::world::MODEL, "@nope.txt", "x"])
        .await;
    assert_exit(&missing, 1);
    assert_eq!(
        stderr(&missing),
        format!("pictl: error: File not found: {cwd}/nope.txt\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_run_exits_1_with_the_error_on_stderr() {
    let world = World::start().await;
    world.server.push(Turn::api_error(
        400,
        ScriptErrorKind::InvalidRequest,
        "the scripted request was refused",
    ));
    let output = world
        .pictl(&["run", "--model", super::world::MODEL, "fail please"])
        .await;
    assert_exit(&output, 1);
    assert_eq!(stdout(&output), "");
    assert!(
        stderr(&output).contains("the scripted request was refused"),
        "{}",
        stderr(&output)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn print_mode_waits_for_automatic_retries() {
    let world = World::start_with_settings(
        serde_json::json!({"retry": {"baseDelayMs": 1, "maxDelayMs": 5}}),
    )
    .await;
    world.server.push(Turn::api_error(
        529,
        ScriptErrorKind::Overloaded,
        "the scripted service is overloaded",
    ));
    world
        .server
        .push(Turn::reply().text("Worked the second time."));
    let output = world
        .pictl(&["run", "--json", "--model", super::world::MODEL, "try"])
        .await;
    assert_exit(&output, 0);
    let lines = json_lines(&output);
    let validator = pi_event_validator();
    for line in &lines[1..] {
        assert!(validator.is_valid(line), "not a pi event: {line}");
    }
    let kinds: Vec<&str> = lines[1..]
        .iter()
        .map(|line| line["type"].as_str().unwrap())
        .filter(|kind| {
            [
                "agent_start",
                "agent_end",
                "auto_retry_start",
                "auto_retry_end",
            ]
            .contains(kind)
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "agent_start",
            "agent_end",
            "auto_retry_start",
            "agent_start",
            "auto_retry_end",
            "agent_end"
        ]
    );
    world.server.push(Turn::api_error(
        529,
        ScriptErrorKind::Overloaded,
        "the scripted service is overloaded",
    ));
    world.server.push(Turn::reply().text("Printed."));
    let printed = world
        .pictl(&["run", "--model", super::world::MODEL, "again"])
        .await;
    assert_exit(&printed, 0);
    assert_eq!(stdout(&printed), "Printed.\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_and_model_errors_say_what_to_do() {
    let world = World::start().await;
    let nothing = world.pictl(&["run"]).await;
    assert_exit(&nothing, 2);
    insta::assert_snapshot!("run_nothing_to_send", stderr(&nothing));

    let unknown = world
        .pictl(&["run", "--model", "scripted-modl", "hi"])
        .await;
    assert_exit(&unknown, 1);
    let message = stderr(&unknown);
    assert!(
        message.starts_with(
            "pictl: error: no model matches \"scripted-modl\"; closest: scripted/scripted-model"
        ),
        "{message}"
    );
    assert!(
        message.ends_with("\nhint: `pictl models` lists the models the daemon knows\n"),
        "{message}"
    );

    // pi's rule: `--no-session` wins over `-c` (a new session, not kept).
    world.server.push(Turn::reply().text("Fresh."));
    let both = world
        .pictl(&[
            "run",
            "-c",
            "--no-session",
            "--model",
            super::world::MODEL,
            "hi",
        ])
        .await;
    assert_exit(&both, 0);
    assert_eq!(stdout(&both), "Fresh.\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_and_no_session_choose_the_session() {
    let world = World::start().await;
    world.server.push(Turn::reply().text("First."));
    world.server.push(Turn::reply().text("Second."));
    world.server.push(Turn::reply().text("Ephemeral."));
    let first = world
        .pictl(&["run", "--model", super::world::MODEL, "one"])
        .await;
    assert_exit(&first, 0);
    let second = world.pictl(&["run", "-c", "two"]).await;
    assert_exit(&second, 0);
    assert_eq!(stdout(&second), "Second.\n");
    assert_eq!(request_user_texts(&world, 1), ["one", "two"], "continued");

    let ephemeral = world
        .pictl(&[
            "run",
            "--no-session",
            "--model",
            super::world::MODEL,
            "three",
        ])
        .await;
    assert_exit(&ephemeral, 0);
    assert_eq!(request_user_texts(&world, 2), ["three"], "a new session");
    let (client, _events) = world.client().await;
    let sessions = client
        .call::<SessionList>(&SessionListParams::default())
        .await
        .unwrap()
        .sessions;
    assert_eq!(sessions.len(), 1, "the --no-session session was deleted");
    assert_eq!(sessions[0].message_count, 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn system_prompt_options_reach_the_model() {
    let world = World::start().await;
    std::fs::write(world.workdir.path().join("SYSTEM.txt"), "You are terse.").unwrap();
    world.server.push(Turn::reply().text("Ok."));
    let output = world
        .pictl(&[
            "run",
            "--model",
            super::world::MODEL,
            "--system-prompt",
            "SYSTEM.txt",
            "--append-system-prompt",
            "Answer in French.",
            "hi",
        ])
        .await;
    assert_exit(&output, 0);
    let system = world.server.requests()[0].body["system"].to_string();
    assert!(
        system.contains("You are terse.\\n\\nAnswer in French.\\nCurrent date: "),
        "{system}"
    );
    assert!(!system.contains("expert coding assistant"), "{system}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_aborts_the_run_and_exits_130() {
    let world = World::start().await;
    let gate = Gate::new();
    world.server.push(
        Turn::reply()
            .text("This reply is interrupted")
            .delta_chars(4)
            .hold_after(4, &gate),
    );
    let child = world
        .command(&["run", "--model", super::world::MODEL, "long task"])
        .spawn()
        .unwrap();
    gate.reached().await;
    let pid = rustix::process::Pid::from_raw(child.id().unwrap() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let output = tokio::time::timeout(std::time::Duration::from_secs(20), child.wait_with_output())
        .await
        .expect("pictl exits after Ctrl+C")
        .unwrap();
    assert_exit(&output, 130);
    assert_eq!(
        stderr(&output),
        "pictl: error: interrupted; the run was aborted\n"
    );
    gate.release();

    // The session is consistent: the aborted assistant message is stored after the prompt.
    let (client, _events) = world.client().await;
    let session = client
        .call::<SessionList>(&SessionListParams::default())
        .await
        .unwrap()
        .sessions
        .remove(0);
    let read = client
        .call::<SessionRead>(&SessionReadParams {
            session_id: session.id,
            scope: ReadScope::Branch,
            limit: None,
            cursor: None,
        })
        .await
        .unwrap();
    let last = read
        .entries
        .iter()
        .rev()
        .find_map(|record| match &record.entry {
            SessionEntry::Message {
                message: AgentMessage::Assistant(message),
                ..
            } => Some(message.clone()),
            _ => None,
        })
        .expect("an assistant message was stored");
    assert_eq!(last.stop_reason, StopReason::Aborted);
}
