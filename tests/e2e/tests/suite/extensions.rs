//! pi's extensions on the real `pid`: pi 0.73.1's own example extensions, unmodified from the
//! pinned package, run in the one extension host for several sessions at once — a tool they
//! register (`hello`), `tool_call` handlers that block (`protected-paths`) or ask the
//! session's clients (`permission-gate`, answered from a second client; blocked at once
//! under `pictl run`, which answers no dialogs); a broken extension is a diagnostic naming
//! its file; a project extension loads once approved (asked of the session's clients, or
//! `pictl extensions trust`), and a project's packages are not installed; the host
//! killed mid-call fails that call clearly and the next call starts it again; a daemon whose
//! sessions have no extension never starts the host.

use std::time::Duration;

use pi_client::{Client, Notifications};
use pi_protocol::v1::{
    ExtensionsList, ExtensionsListParams, ExtensionsListResponse, SessionAttach,
    SessionAttachParams, UiAnswer, UiRequest, UiRequestParams, UiRespond, UiRespondParams,
};
use pi_test_support::peers;
use serde_json::json;

use super::approvals::result as first_result;
use super::harness::World;
use super::mcp_faults::{caller, run, session};

/// A user-written extension whose tool says it runs (a partial result) and waits until
/// aborted (for the host killed mid-call).
const WAITER: &str = r#"import { Type } from "typebox";
export default function (pi) {
  pi.registerTool({
    name: "wait_forever",
    label: "Wait",
    description: "Waits until aborted",
    parameters: Type.Object({}),
    async execute(_id, _params, signal, onUpdate) {
      onUpdate?.({ content: [{ type: "text", text: "waiting" }], details: {} });
      await new Promise((resolve) => signal?.addEventListener("abort", resolve));
      return { content: [{ type: "text", text: "aborted" }], details: {} };
    },
  });
}
"#;

/// A user-written extension that throws while loading.
const BROKEN: &str =
    "export default function () { throw new Error(\"this extension is broken\"); }\n";

async fn list(client: &Client) -> ExtensionsListResponse {
    client
        .call::<ExtensionsList>(&ExtensionsListParams::default())
        .await
        .unwrap()
}

/// Waits until session `id`'s extensions are open in the host (`session_start` runs while
/// they open, so its notices may come first); returns the listing that shows them.
async fn until_loaded(client: &Client, id: &str) -> ExtensionsListResponse {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let listed = list(client).await;
        if listed
            .sessions
            .iter()
            .any(|session| session.session_id == id && !session.extensions.is_empty())
        {
            return listed;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the session's extensions never loaded: {listed:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A second client attached to session `id` (it hears the session's questions and notices).
async fn watcher(world: &World, id: &str) -> (Client, Notifications) {
    let (client, events) = world.client().await;
    super::approvals::attach(&client, id).await;
    (client, events)
}

async fn next_question(events: &mut Notifications) -> UiRequestParams {
    tokio::time::timeout(
        Duration::from_secs(30),
        events.next_of::<pi_protocol::v1::UiRequestNotification>(),
    )
    .await
    .expect("a question arrives")
    .unwrap()
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pis_example_extensions_serve_several_sessions_from_one_host() {
    let examples = peers::pi_examples();
    let settings = json!({"extensions": [
        examples.join("hello.ts"),
        examples.join("protected-paths.ts"),
        examples.join("permission-gate.ts"),
        "extensions-of-mine/waiter.ts",
        "extensions-of-mine/broken.ts",
    ]});
    let world = World::start_with(
        "anthropic-messages",
        &[
            (".pi/agent/settings.json", settings.to_string()),
            (".pi/agent/extensions-of-mine/waiter.ts", WAITER.to_owned()),
            (".pi/agent/extensions-of-mine/broken.ts", BROKEN.to_owned()),
            // A project's own extension: code the project brings, not loaded unapproved.
            (
                "proj-a/.pi/extensions/project.ts",
                "export default function (pi) { pi.registerTool({name: \"project_tool\", \
                 label: \"P\", description: \"p\", parameters: {type: \"object\"}, \
                 async execute() { return {content: [], details: {}}; }}); }\n"
                    .to_owned(),
            ),
            // A project that names a package: pid installs nothing for it (a package's
            // install scripts are code), and its failure takes nothing else down.
            (
                "proj-b/.pi/settings.json",
                json!({"packages": ["npm:pi-daemon-test-no-such-package"]}).to_string(),
            ),
        ],
    )
    .await;
    world.server.respond_with(caller);
    let home = world.daemon.home.path();
    let (a_client, mut a_events, a) =
        session(&world, &home.join("proj-a").display().to_string()).await;
    let (b_client, mut b_events, b) =
        session(&world, &home.join("proj-b").display().to_string()).await;

    // A tool an example registers, called by the model like a built-in.
    let seen = run(
        &a_client,
        &mut a_events,
        &a,
        r#"call hello {"name": "Rust"}"#,
    )
    .await;
    assert_eq!(first_result(&seen), ("Hello, Rust!".to_owned(), false));
    // Not shown as an MCP tool of the session (`extensions/list` lists it).
    let shown = a_client
        .call::<pi_protocol::v1::SessionGet>(&pi_protocol::v1::SessionIdParams {
            session_id: a.clone(),
        })
        .await
        .unwrap();
    assert!(shown.mcp_tools.is_empty(), "{:?}", shown.mcp_tools);

    // `protected-paths` blocks a write in the other session; nothing is written.
    let seen = run(
        &b_client,
        &mut b_events,
        &b,
        r#"call write {"path": ".env", "content": "SECRET=1"}"#,
    )
    .await;
    assert_eq!(
        first_result(&seen),
        ("Path \".env\" is protected".to_owned(), true)
    );
    assert!(!home.join("proj-b/.env").exists());

    // `permission-gate` asks the session's clients; a second client answers, first wins.
    let (second, mut second_events) = world.client().await;
    super::approvals::attach(&second, &b).await;
    for (choice, expected) in [
        ("No", ("Blocked by user".to_owned(), true)),
        ("Yes", (String::new(), false)),
    ] {
        b_client
            .call::<pi_protocol::v1::SessionPrompt>(&super::harness::prompt(
                &b,
                r#"call bash {"command": "rm -rf ./nothing-here"}"#,
            ))
            .await
            .unwrap();
        let question = next_question(&mut second_events).await;
        assert_eq!(question.session_id, b);
        let UiRequest::Select { title, options, .. } = &question.request else {
            panic!("not a select: {question:?}");
        };
        assert!(title.contains("rm -rf ./nothing-here"), "{title}");
        assert_eq!(options, &["Yes", "No"]);
        second
            .call::<UiRespond>(&UiRespondParams {
                session_id: b.clone(),
                request_id: question.request_id.clone(),
                answer: UiAnswer {
                    value: Some(choice.to_owned()),
                    ..UiAnswer::default()
                },
            })
            .await
            .unwrap();
        let seen = pi_test_support::events::run_events(&mut b_events, &b).await;
        let (text, is_error) = first_result(&seen);
        assert_eq!(is_error, expected.1, "{choice}: {text}");
        if expected.1 {
            assert_eq!(text, expected.0);
        }
    }

    // `pictl run` answers no dialogs: extensions see `ctx.hasUI` false, as in pi's print
    // mode, and `permission-gate` blocks at once instead of waiting for nobody.
    let printed = tokio::process::Command::new(pi_test_support::workspace_binary("pictl"))
        .args([
            "run",
            "--no-session",
            "--json",
            "--model",
            super::harness::MODEL,
            r#"call bash {"command": "rm -rf ./nothing-here"}"#,
        ])
        .envs(world.daemon.env())
        .current_dir(home.join("proj-b"))
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&printed.stdout);
    assert!(
        stdout.contains("Dangerous command blocked (no UI for confirmation)"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&printed.stderr)
    );
    assert!(
        !home.join("proj-b/.pi/npm").exists(),
        "a project package was installed"
    );
    // What did not load is said on stderr, as pi says it.
    let stderr = String::from_utf8_lossy(&printed.stderr);
    assert!(
        stderr
            .lines()
            .any(|line| line.starts_with("warning: extension ")
                && line.contains("broken.ts")
                && line.contains("this extension is broken")),
        "{stderr}"
    );

    // One host for both sessions; each session's extensions, the broken one named with its
    // error, the project's own waiting for an approval.
    let listed = list(&a_client).await;
    assert_eq!(listed.host.state, "ready", "{listed:?}");
    assert_eq!(listed.host.starts, 1);
    assert_eq!(listed.host.pi_version.as_deref(), Some("0.73.1"));
    let ours: Vec<_> = listed
        .sessions
        .iter()
        .filter(|session| session.session_id == a || session.session_id == b)
        .collect();
    assert_eq!(ours.len(), 2, "{listed:?}");
    for session in ours {
        let loaded: Vec<&str> = session
            .extensions
            .iter()
            .map(|extension| extension.path.rsplit('/').next().unwrap_or_default())
            .collect();
        assert_eq!(
            loaded,
            [
                "hello.ts",
                "protected-paths.ts",
                "permission-gate.ts",
                "waiter.ts"
            ],
            "{session:?}"
        );
        assert!(
            session
                .diagnostics
                .iter()
                .any(|problem| problem.path.ends_with("broken.ts")
                    && problem.error.contains("this extension is broken")),
            "{session:?}"
        );
    }
    let project_b = listed
        .sessions
        .iter()
        .find(|session| session.session_id == b)
        .unwrap();
    assert!(
        project_b.diagnostics.iter().any(|problem| problem.path
            == "npm:pi-daemon-test-no-such-package"
            && problem
                .error
                .contains("`pictl install npm:pi-daemon-test-no-such-package` installs it")),
        "{project_b:?}"
    );
    let project_a = listed
        .sessions
        .iter()
        .find(|session| session.session_id == a)
        .unwrap();
    assert!(
        project_a.skipped.iter().any(|skipped| skipped
            .path
            .ends_with("proj-a/.pi/extensions/project.ts")
            && skipped.error.contains("not approved yet")),
        "{project_a:?}"
    );

    // The host killed mid-call: the call fails saying so, and the next call starts it again.
    a_client
        .call::<pi_protocol::v1::SessionPrompt>(&super::harness::prompt(&a, "call wait_forever {}"))
        .await
        .unwrap();
    loop {
        let event = a_events
            .next_of::<pi_protocol::v1::SessionEventNotification>()
            .await
            .unwrap()
            .unwrap();
        // Its partial result: the call runs in the host now (killed before, the call would
        // go to the next host instead).
        if matches!(
            event.event,
            pi_protocol::v1::SessionEvent::ToolExecutionUpdate { .. }
        ) {
            break;
        }
    }
    let host_pid = listed.host.pid.expect("a running host has a process");
    rustix::process::kill_process_group(
        rustix::process::Pid::from_raw(host_pid as i32).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    let seen = pi_test_support::events::run_events(&mut a_events, &a).await;
    let (text, is_error) = first_result(&seen);
    assert!(is_error, "{text}");
    assert!(
        text.starts_with("the extension tool wait_forever failed: the extension host stopped"),
        "{text}"
    );
    let seen = run(
        &a_client,
        &mut a_events,
        &a,
        r#"call hello {"name": "again"}"#,
    )
    .await;
    assert_eq!(first_result(&seen), ("Hello, again!".to_owned(), false));
    let listed = list(&a_client).await;
    assert_eq!(
        (listed.host.state.as_str(), listed.host.starts),
        ("ready", 2)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_without_extensions_never_start_the_host() {
    let world = World::start("anthropic-messages").await;
    world.server.respond_with(caller);
    let home = world.daemon.home.path().display().to_string();
    let (client, mut events, id) = session(&world, &home).await;
    let seen = run(
        &client,
        &mut events,
        &id,
        r#"call bash {"command": "true"}"#,
    )
    .await;
    assert!(!first_result(&seen).1);
    let listed = list(&client).await;
    assert_eq!(
        (
            listed.host.state.as_str(),
            listed.host.starts,
            listed.host.pid
        ),
        ("stopped", 0, None),
        "{listed:?}"
    );
    assert!(listed.sessions.is_empty());
}

/// The next `extension/ui` notice that `wanted` accepts (others are skipped).
async fn ui_until(
    world: &World,
    events: &mut Notifications,
    wanted: impl Fn(&pi_protocol::v1::ExtensionUi) -> bool,
) -> pi_protocol::v1::ExtensionUiParams {
    let mut seen = Vec::new();
    loop {
        let raw = tokio::time::timeout(Duration::from_secs(30), events.next())
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "no such extension/ui notice in time; saw {seen:?}\ndaemon log:\n{}",
                    world.daemon.stderr()
                )
            })
            .expect("the connection is open");
        if raw.method != "extension/ui" {
            continue;
        }
        let notice: pi_protocol::v1::ExtensionUiParams =
            serde_json::from_value(raw.params.unwrap()).unwrap();
        if wanted(&notice.ui) {
            return notice;
        }
        seen.push(notice.ui);
    }
}

fn status_is(key: &str, contains: &str) -> impl Fn(&pi_protocol::v1::ExtensionUi) -> bool {
    let (key, contains) = (key.to_owned(), contains.to_owned());
    move |ui| matches!(ui, pi_protocol::v1::ExtensionUi::Status { key: k, text: Some(text) } if *k == key && text.contains(&contains))
}

fn notified(contains: &str) -> impl Fn(&pi_protocol::v1::ExtensionUi) -> bool {
    let contains = contains.to_owned();
    move |ui| matches!(ui, pi_protocol::v1::ExtensionUi::Notify { message, .. } if message.contains(&contains))
}

/// The text of the last user message of a model request.
fn last_user_text(body: &serde_json::Value) -> String {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let last = messages
        .iter()
        .rev()
        .find(|message| message["role"] == "user")
        .cloned()
        .unwrap_or_default();
    match &last["content"] {
        serde_json::Value::String(text) => text.clone(),
        blocks => blocks
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|block| block["text"].as_str())
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// The system prompt of a model request (Anthropic's `system` blocks).
fn system_of(body: &serde_json::Value) -> String {
    match &body["system"] {
        serde_json::Value::String(text) => text.clone(),
        blocks => blocks
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|block| block["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pis_example_extensions_hook_the_prompt_and_talk_to_the_clients() {
    let examples = peers::pi_examples();
    let names = [
        "input-transform.ts",
        "pirate.ts",
        "status-line.ts",
        "system-prompt-header.ts",
        "send-user-message.ts",
        "session-name.ts",
        "commands.ts",
    ];
    let settings =
        json!({"extensions": names.iter().map(|name| examples.join(name)).collect::<Vec<_>>()});
    let world = World::start_with(
        "anthropic-messages",
        &[(".pi/agent/settings.json", settings.to_string())],
    )
    .await;
    world.server.respond_with(|request| {
        let text = last_user_text(&request.body);
        if text.starts_with("call ") {
            return caller(request);
        }
        Ok(pi_test_support::model_server::Turn::reply()
            .text(format!("you said: {text}"))
            .into())
    });
    let home = world.daemon.home.path();
    let (client, mut events, id) = session(&world, &home.display().to_string()).await;
    // A second client watches what the extensions show; it attaches after `session_start`
    // may have set a status, and hears the statuses that last.
    let (watcher, mut shown) = watcher(&world, &id).await;
    ui_until(&world, &mut shown, status_is("status-demo", "Ready")).await;

    // The extensions' commands are listed with the session's as soon as they loaded,
    // before any prompt. (`session_start`'s status is sent while they load: wait until the
    // host says the session's set is open.)
    until_loaded(&client, &id).await;
    let got = client
        .call::<pi_protocol::v1::SessionGet>(&pi_protocol::v1::SessionIdParams {
            session_id: id.clone(),
        })
        .await
        .unwrap();
    let commands: Vec<(&str, &str)> = got
        .commands
        .iter()
        .map(|command| (command.name.as_str(), command.source.as_str()))
        .collect();
    for name in [
        "pirate",
        "ask",
        "steer",
        "followup",
        "session-name",
        "commands",
    ] {
        assert!(commands.contains(&(name, "extension")), "{commands:?}");
    }

    // `input` handles a prompt without the model, and the extension's notice reaches every
    // client.
    let calls = world.server.calls();
    let sent = client
        .call::<pi_protocol::v1::SessionPrompt>(&super::harness::prompt(&id, "ping"))
        .await
        .unwrap();
    assert!(!sent.started, "ping started a run");
    let pong = ui_until(&world, &mut shown, notified("pong")).await;
    assert_eq!(pong.session_id, id);
    assert_eq!(world.server.calls(), calls, "ping reached the model");

    // `input` transforms a prompt; turn events drive a status line; `agent_start` reads the
    // system prompt of the run.
    let seen = run(&client, &mut events, &id, "?quick What is Rust?").await;
    assert!(
        super::mcp_faults::final_text(&seen)
            .contains("you said: Respond briefly in 1-2 sentences: What is Rust?"),
        "{seen:?}"
    );
    // (JavaScript's `length` counts UTF-16 units.)
    let request = world.server.requests().pop().unwrap();
    let chars = system_of(&request.body).encode_utf16().count();
    ui_until(
        &world,
        &mut shown,
        status_is("system-prompt", &format!("System: {chars} chars")),
    )
    .await;
    ui_until(
        &world,
        &mut shown,
        status_is("status-demo", "Turn 1 complete"),
    )
    .await;

    // A command registered by an extension runs instead of a prompt;
    // `before_agent_start` changes the system prompt of later runs.
    let calls = world.server.calls();
    let sent = client
        .call::<pi_protocol::v1::SessionPrompt>(&super::harness::prompt(&id, "/pirate"))
        .await
        .unwrap();
    assert!(!sent.started, "a command started a run");
    ui_until(&world, &mut shown, notified("Arrr! Pirate mode enabled!")).await;
    assert_eq!(world.server.calls(), calls, "a command reached the model");
    let seen = run(&client, &mut events, &id, "hello").await;
    assert!(super::mcp_faults::final_text(&seen).contains("you said: hello"));
    let request = world.server.requests().pop().unwrap();
    assert!(
        system_of(&request.body).contains("You are now in PIRATE MODE"),
        "{}",
        system_of(&request.body)
    );

    // A command that sends the session a user message of its own: a run starts with it.
    client
        .call::<pi_protocol::v1::SessionPrompt>(&super::harness::prompt(&id, "/ask What is 2+2?"))
        .await
        .unwrap();
    let seen = pi_test_support::events::run_events(&mut events, &id).await;
    assert!(
        super::mcp_faults::final_text(&seen).contains("you said: What is 2+2?"),
        "{seen:?}"
    );

    // A command that names the session.
    client
        .call::<pi_protocol::v1::SessionPrompt>(&super::harness::prompt(
            &id,
            "/session-name Treasure hunt",
        ))
        .await
        .unwrap();
    ui_until(&world, &mut shown, notified("Session named: Treasure hunt")).await;
    // `pictl run` of a prompt an extension takes ends at once, as `pi -p` does.
    let printed = tokio::time::timeout(
        Duration::from_secs(60),
        tokio::process::Command::new(pi_test_support::workspace_binary("pictl"))
            .args(["run", "--session", &id, "/session-name Treasure map"])
            .envs(world.daemon.env())
            .current_dir(home)
            .output(),
    )
    .await
    .expect("pictl run ends")
    .unwrap();
    assert!(
        printed.status.success(),
        "{}",
        String::from_utf8_lossy(&printed.stderr)
    );
    ui_until(&world, &mut shown, notified("Session named: Treasure map")).await;
    let got = client
        .call::<pi_protocol::v1::SessionGet>(&pi_protocol::v1::SessionIdParams {
            session_id: id.clone(),
        })
        .await
        .unwrap();
    assert_eq!(got.info.name.as_deref(), Some("Treasure map"));

    // A command that asks the session's clients (a select), answered by the watcher; the
    // prompt is answered once the command is done, as pi's is.
    let asking = {
        let client = client.clone();
        let id = id.clone();
        tokio::spawn(async move {
            client
                .call::<pi_protocol::v1::SessionPrompt>(&super::harness::prompt(
                    &id,
                    "/commands extension",
                ))
                .await
        })
    };
    let question = next_question(&mut shown).await;
    let UiRequest::Select { title, options, .. } = &question.request else {
        panic!("not a select: {question:?}");
    };
    assert_eq!(title, "Available Commands");
    assert!(
        options
            .iter()
            .any(|option| option.starts_with("/pirate - ")),
        "{options:?}"
    );
    watcher
        .call::<UiRespond>(&UiRespondParams {
            session_id: id.clone(),
            request_id: question.request_id.clone(),
            answer: UiAnswer {
                cancelled: true,
                ..UiAnswer::default()
            },
        })
        .await
        .unwrap();
    asking.await.unwrap().unwrap();

    // A client that attaches now hears the statuses that last.
    let (late, mut late_shown) = world.client().await;
    late.call::<SessionAttach>(&SessionAttachParams {
        session_id: id.clone(),
        after_seq: None,
    })
    .await
    .unwrap();
    ui_until(
        &world,
        &mut late_shown,
        status_is("status-demo", "complete"),
    )
    .await;

    // A session deleted while a command waits for a person: the prompt is answered (the
    // session is closing), not dropped — a dropped answer would make the client's library
    // send it again to the session's next actor.
    let waiting = {
        let client = client.clone();
        let id = id.clone();
        tokio::spawn(async move {
            client
                .call::<pi_protocol::v1::SessionPrompt>(&super::harness::prompt(&id, "/commands"))
                .await
        })
    };
    let question = next_question(&mut shown).await;
    assert_eq!(question.session_id, id);
    late.call::<pi_protocol::v1::SessionDelete>(&pi_protocol::v1::SessionIdParams {
        session_id: id.clone(),
    })
    .await
    .unwrap();
    let answered = tokio::time::timeout(Duration::from_secs(30), waiting)
        .await
        .expect("the prompt is answered")
        .unwrap();
    let error = answered.expect_err("a deleted session runs no command");
    assert!(error.to_string().contains("clos"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extension_rebuilds_its_state_from_the_session_after_a_daemon_restart() {
    // pi's `todo` keeps its list in its tool results' details and rebuilds it from
    // `ctx.sessionManager.getBranch()` at `session_start`.
    let examples = peers::pi_examples();
    let settings = json!({"extensions": [examples.join("todo.ts")]});
    let mut world = World::start_with(
        "anthropic-messages",
        &[(".pi/agent/settings.json", settings.to_string())],
    )
    .await;
    world.server.respond_with(caller);
    let home = world.daemon.home.path().display().to_string();
    let (client, mut events, id) = session(&world, &home).await;
    for text in ["write the tests", "land the part"] {
        let seen = run(
            &client,
            &mut events,
            &id,
            &format!(r#"call todo {{"action": "add", "text": "{text}"}}"#),
        )
        .await;
        let (result, is_error) = first_result(&seen);
        assert!(!is_error && result.contains(text), "{result}");
    }
    drop((client, events));

    // The daemon dies; the session's extensions start again from what the session stored.
    world.daemon.kill9().await;
    world.daemon.restart().await;
    let (client, mut events) = world.client().await;
    super::approvals::attach(&client, &id).await;
    let seen = run(
        &client,
        &mut events,
        &id,
        r#"call todo {"action": "toggle", "id": 1}"#,
    )
    .await;
    assert!(!first_result(&seen).1, "{seen:?}");
    let seen = run(&client, &mut events, &id, r#"call todo {"action": "list"}"#).await;
    assert_eq!(
        first_result(&seen),
        (
            "[x] #1: write the tests\n[ ] #2: land the part".to_owned(),
            false
        )
    );
}

/// A user-written extension on the request path: `context` adds a message to every model
/// request (not to the session), `before_provider_request` changes the body.
const REQUEST_HOOKS: &str = r#"export default function (pi) {
  pi.on("context", (event) => ({
    messages: [
      ...event.messages,
      { role: "user", content: [{ type: "text", text: "(added by the context hook)" }], timestamp: Date.now() },
    ],
  }));
  pi.on("before_provider_request", (event) => ({ ...event.payload, temperature: 0.25 }));
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn context_and_provider_request_handlers_change_each_model_request() {
    let examples = peers::pi_examples();
    let settings = json!({"extensions": [
        examples.join("provider-payload.ts"),
        "extensions-of-mine/request-hooks.ts",
    ]});
    let world = World::start_with(
        "anthropic-messages",
        &[
            (".pi/agent/settings.json", settings.to_string()),
            (
                ".pi/agent/extensions-of-mine/request-hooks.ts",
                REQUEST_HOOKS.to_owned(),
            ),
            // `provider-payload` logs each payload to the session's `.pi/`.
            ("proj/.pi/.keep", String::new()),
        ],
    )
    .await;
    world.server.respond_with(|request| {
        Ok(pi_test_support::model_server::Turn::reply()
            .text(format!("last: {}", last_user_text(&request.body)))
            .into())
    });
    let proj = world.daemon.home.path().join("proj");
    let (client, mut events, id) = session(&world, &proj.display().to_string()).await;
    let seen = run(&client, &mut events, &id, "hello").await;
    assert!(
        super::mcp_faults::final_text(&seen).contains("last: (added by the context hook)"),
        "{seen:?}"
    );
    let request = world.server.requests().pop().unwrap();
    assert_eq!(request.body["temperature"], json!(0.25), "{}", request.body);
    // The session keeps its own messages: the hook's went to the request only.
    let read = client
        .call::<pi_protocol::v1::SessionRead>(&pi_protocol::v1::SessionReadParams {
            session_id: id.clone(),
            scope: Default::default(),
            limit: None,
            cursor: None,
        })
        .await
        .unwrap();
    let stored = serde_json::to_value(&read).unwrap();
    let users: Vec<String> = stored["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|record| record["entry"]["message"]["role"] == "user")
        .map(|record| record["entry"]["message"]["content"].to_string())
        .collect();
    assert_eq!(users.len(), 1, "{users:?}");
    assert!(users[0].contains("hello"), "{users:?}");
    // pi's `provider-payload` wrote the payload it saw (before the other handler changed it)
    // where `process.cwd()` was at load time: the session's directory, as in pi.
    let logged = std::fs::read_to_string(proj.join(".pi/provider-payload.log")).unwrap();
    assert!(logged.contains("\"model\""), "{logged}");
    assert!(logged.contains("added by the context hook"), "{logged}");
}

/// A user-written extension whose command and `input` handler throw.
const THROWER: &str = r#"export default function (pi) {
  pi.registerCommand("boom", {
    description: "Throws",
    handler: async (args) => { throw new Error(`it broke (${args})`); },
  });
  pi.on("input", () => { throw new Error("the input handler broke"); });
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_chooses_its_own_extensions_and_can_leave_out_the_configured_ones() {
    let examples = peers::pi_examples();
    // The user's own configuration loads `protected-paths` everywhere.
    let settings = json!({"extensions": [examples.join("protected-paths.ts")]});
    let world = World::start_with(
        "anthropic-messages",
        &[
            (".pi/agent/settings.json", settings.to_string()),
            ("proj/tools/waiter.ts", WAITER.to_owned()),
            ("proj/tools/thrower.ts", THROWER.to_owned()),
        ],
    )
    .await;
    world.server.respond_with(caller);
    let home = world.daemon.home.path();
    let proj = home.join("proj");
    let (client, _events) = world.client().await;
    // pi's `-e ./tools/waiter.ts --no-extensions`: a path relative to the session's
    // directory, and none of the configured ones.
    let own = client
        .call::<pi_protocol::v1::SessionCreate>(&pi_protocol::v1::SessionCreateParams {
            cwd: proj.display().to_string(),
            model: Some(super::harness::MODEL.to_owned()),
            extensions: vec![
                "./tools/waiter.ts".to_owned(),
                "tools/thrower.ts".to_owned(),
            ],
            no_extensions: true,
            ..Default::default()
        })
        .await
        .unwrap();
    // Only `--no-extensions`: nothing to load, so nothing starts for it.
    let none = client
        .call::<pi_protocol::v1::SessionCreate>(&pi_protocol::v1::SessionCreateParams {
            cwd: proj.display().to_string(),
            model: Some(super::harness::MODEL.to_owned()),
            no_extensions: true,
            ..Default::default()
        })
        .await
        .unwrap();
    let listed = until_loaded(&client, &own.id).await;
    let loaded: Vec<&str> = listed
        .sessions
        .iter()
        .find(|session| session.session_id == own.id)
        .unwrap()
        .extensions
        .iter()
        .map(|extension| extension.path.as_str())
        .collect();
    assert_eq!(
        loaded,
        [
            proj.join("tools/waiter.ts").display().to_string(),
            proj.join("tools/thrower.ts").display().to_string()
        ],
        "{listed:?}"
    );
    // A command that throws: the prompt fails with its error; nothing reaches the model.
    let calls = world.server.calls();
    let failed = client
        .call::<pi_protocol::v1::SessionPrompt>(&super::harness::prompt(&own.id, "/boom now"))
        .await
        .expect_err("a command that throws fails the prompt");
    assert!(
        failed
            .to_string()
            .contains("the command /boom failed: it broke (now)"),
        "{failed}"
    );
    assert_eq!(world.server.calls(), calls);
    // An `input` handler that throws: a diagnostic naming the file, and the prompt goes on.
    let (watcher, mut watched) = watcher(&world, &own.id).await;
    let seen = run(&watcher, &mut watched, &own.id, "call wait_forever_not {}").await;
    assert!(
        seen.iter()
            .any(|event| pi_test_support::events::kind(event) == "agent_end"),
        "{seen:?}"
    );
    assert!(
        world.server.calls() > calls,
        "the prompt did not reach the model"
    );
    let listed = list(&client).await;
    let problems = &listed
        .sessions
        .iter()
        .find(|session| session.session_id == own.id)
        .unwrap()
        .diagnostics;
    assert!(
        problems
            .iter()
            .any(|problem| problem.path.ends_with("tools/thrower.ts")
                && problem.error == "input: the input handler broke"),
        "{problems:?}"
    );
    assert!(
        !listed
            .sessions
            .iter()
            .any(|session| session.session_id == none.id),
        "{listed:?}"
    );

    // `pictl run -e`: pi's flag, the example's tool offered to the model.
    let printed = tokio::process::Command::new(pi_test_support::workspace_binary("pictl"))
        .args([
            "run",
            "--no-session",
            "--json",
            "--model",
            super::harness::MODEL,
            "-e",
            &examples.join("hello.ts").display().to_string(),
            r#"call hello {"name": "flag"}"#,
        ])
        .envs(world.daemon.env())
        .current_dir(&proj)
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&printed.stdout);
    assert!(
        stdout.contains("Hello, flag!"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&printed.stderr)
    );

    // An `-e` path that does not exist: refused before anything runs, as pi refuses it.
    let (ok, _, stderr) = pictl(
        &world,
        &proj,
        &[
            "run",
            "--model",
            super::harness::MODEL,
            "-e",
            "./missing.ts",
            "hi",
        ],
    )
    .await;
    assert!(!ok);
    let missing = proj.join("missing.ts").display().to_string();
    assert!(
        stderr.contains(&format!(
            "Failed to load extension \"{missing}\": Extension path does not exist: {missing}"
        )),
        "{stderr}"
    );

    // `pictl extensions list --session` takes an id prefix, and says when nothing matches.
    let (ok, stdout, stderr) = pictl(
        &world,
        &proj,
        &["extensions", "list", "--session", &own.id[..8]],
    )
    .await;
    assert!(ok, "{stderr}");
    assert!(stdout.contains("thrower.ts"), "{stdout}");
    let (ok, _, stderr) = pictl(
        &world,
        &proj,
        &["extensions", "list", "--session", "no-such-session"],
    )
    .await;
    assert!(!ok);
    assert!(
        stderr.contains("no session matches \"no-such-session\""),
        "{stderr}"
    );
}

/// A project's own extension: a tool that says where it comes from.
const PROJECT_TOOL: &str = "export default function (pi) { pi.registerTool({name: \"project_tool\", \
     label: \"P\", description: \"p\", parameters: {type: \"object\"}, \
     async execute() { return {content: [{type: \"text\", text: \"from the project\"}], \
     details: {}}; }}); }\n";

/// `pictl extensions trust ARGS` in `dir`: (success, stdout, stderr).
async fn trust(world: &World, dir: &std::path::Path, args: &[&str]) -> (bool, String, String) {
    let out = tokio::process::Command::new(pi_test_support::workspace_binary("pictl"))
        .args(["extensions", "trust"])
        .args(args)
        .envs(world.daemon.env())
        .current_dir(dir)
        .output()
        .await
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn skipped_of(listed: &ExtensionsListResponse, id: &str) -> Vec<(String, String)> {
    listed
        .sessions
        .iter()
        .filter(|session| session.session_id == id)
        .flat_map(|session| &session.skipped)
        .map(|skipped| (skipped.path.clone(), skipped.error.clone()))
        .collect()
}

/// Waits until session `id` lists a skipped extension whose reason contains `reason`.
async fn until_skipped(client: &Client, id: &str, reason: &str) -> Vec<(String, String)> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let skipped = skipped_of(&list(client).await, id);
        if skipped.iter().any(|(_, error)| error.contains(reason)) {
            return skipped;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never skipped for \"{reason}\": {skipped:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_extension_loads_once_approved_by_a_client_or_pictl() {
    let world = World::start_with(
        "anthropic-messages",
        &[
            ("proj-a/.pi/extensions/project.ts", PROJECT_TOOL.to_owned()),
            ("proj-b/.pi/extensions/project.ts", PROJECT_TOOL.to_owned()),
            ("proj-c/README.md", "no extensions here\n".to_owned()),
        ],
    )
    .await;
    world.server.respond_with(caller);
    let home = world.daemon.home.path();
    let proj_a = home.join("proj-a");
    let extension_a = proj_a
        .join(".pi/extensions/project.ts")
        .display()
        .to_string();

    // The first session in the project: the extension is skipped and its clients are asked.
    let (client, mut events, first) = session(&world, &proj_a.display().to_string()).await;
    let (watcher, mut watched) = watcher(&world, &first).await;
    let question = next_question(&mut watched).await;
    let UiRequest::Confirm { title, message } = &question.request else {
        panic!("not a confirm: {question:?}");
    };
    assert!(
        title.contains("Load the pi extensions") && title.contains("proj-a"),
        "{title}"
    );
    assert!(message.contains(&extension_a), "{message}");
    assert_eq!(
        skipped_of(&list(&client).await, &first),
        [(
            extension_a.clone(),
            "a project extension not approved yet: not loaded until you approve it (answer the \
             question in an attached client, or `pictl extensions trust` in the project)"
                .to_owned()
        )]
    );
    // Until approved, the model is not offered its tool.
    let seen = run(&client, &mut events, &first, "call project_tool {}").await;
    assert!(
        super::mcp_faults::tool_results(&seen).is_empty(),
        "an unapproved extension's tool ran: {seen:?}"
    );

    // The watcher approves: the session loads it, says so, and the model can call it.
    watcher
        .call::<UiRespond>(&UiRespondParams {
            session_id: first.clone(),
            request_id: question.request_id.clone(),
            answer: UiAnswer {
                confirmed: Some(true),
                ..UiAnswer::default()
            },
        })
        .await
        .unwrap();
    ui_until(&world, &mut watched, notified("Extensions loaded")).await;
    until_loaded(&client, &first).await;
    let seen = run(&client, &mut events, &first, "call project_tool {}").await;
    assert_eq!(first_result(&seen), ("from the project".to_owned(), false));

    // A second session in the project loads it straight away, asking nobody.
    let (other, _other_events, second) = session(&world, &proj_a.display().to_string()).await;
    let listed = until_loaded(&other, &second).await;
    assert!(skipped_of(&listed, &second).is_empty(), "{listed:?}");

    // Refused later: the sessions running it unload it, and say so.
    let (ok, _, stderr) = trust(&world, &proj_a, &["--deny"]).await;
    assert!(ok, "{stderr}");
    ui_until(
        &world,
        &mut watched,
        notified(&format!("Extensions refused and unloaded: {extension_a}")),
    )
    .await;
    until_skipped(&client, &first, "a project extension you refused").await;
    until_skipped(&other, &second, "a project extension you refused").await;
    let seen = run(&client, &mut events, &first, "call project_tool {}").await;
    assert!(
        super::mcp_faults::tool_results(&seen).is_empty(),
        "a refused extension's tool ran: {seen:?}"
    );
    let (ok, _, stderr) = trust(&world, &proj_a, &[]).await;
    assert!(ok, "{stderr}");

    // Another project: refused from the command line, its question withdrawn; then
    // approved from the command line, it loads into the session that skipped it.
    let proj_b = home.join("proj-b");
    let extension_b = proj_b
        .join(".pi/extensions/project.ts")
        .display()
        .to_string();
    let (b_client, mut b_events, b) = session(&world, &proj_b.display().to_string()).await;
    next_question(&mut b_events).await;
    let (ok, stdout, stderr) = trust(&world, &proj_b, &["--deny"]).await;
    assert!(ok, "{stderr}");
    assert!(
        stdout.ends_with("proj-b/.pi/extensions/project.ts: refused\n"),
        "{stdout}"
    );
    until_skipped(&b_client, &b, "a project extension you refused").await;
    let (ok, stdout, stderr) = trust(&world, &proj_b, &[".pi/extensions"]).await;
    assert!(ok, "{stderr}");
    assert!(stdout.ends_with("project.ts: approved\n"), "{stdout}");
    until_loaded(&b_client, &b).await;
    let seen = run(&b_client, &mut b_events, &b, "call project_tool {}").await;
    assert_eq!(first_result(&seen), ("from the project".to_owned(), false));

    // What the command line refuses, with what to do instead.
    let (ok, _, stderr) = trust(&world, &home.join("proj-c"), &[]).await;
    assert!(!ok);
    assert!(
        stderr.contains(&format!(
            "{} brings no pi extensions (none in .pi/extensions/, none named by \
             .pi/settings.json `extensions` or installed `packages`)",
            home.join("proj-c").display()
        )),
        "{stderr}"
    );
    let (ok, _, stderr) = trust(&world, &proj_b, &["elsewhere.ts"]).await;
    assert!(!ok);
    assert!(
        stderr.contains(&format!(
            "{} is not an extension {} brings; its extensions are: {extension_b}",
            proj_b.join("elsewhere.ts").display(),
            proj_b.display()
        )),
        "{stderr}"
    );
}

/// A user-written extension that narrows the session's tools (pi's `setActiveTools`) and
/// says what is active.
const NARROW: &str = r#"export default function (pi) {
  pi.registerCommand("only-read", {
    description: "Only the read tool",
    handler: async (_args, ctx) => {
      pi.setActiveTools(["read"]);
      ctx.ui.notify(`active: ${pi.getActiveTools().join(",")}`, "info");
    },
  });
  pi.registerCommand("show-tools", {
    description: "Lists the tools",
    handler: async (_args, ctx) => {
      ctx.ui.notify(`all: ${pi.getAllTools().map((tool) => tool.name).join(",")}`, "info");
    },
  });
}
"#;

/// The tool names offered by the model request the daemon sent last.
fn offered_last(world: &World) -> Vec<String> {
    let request = world.server.requests().pop().unwrap();
    request.body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extensions_override_built_in_tools_add_tools_later_and_choose_the_active_ones() {
    let examples = peers::pi_examples();
    let settings = json!({"extensions": [
        examples.join("tool-override.ts"),
        examples.join("dynamic-tools.ts"),
        examples.join("structured-output.ts"),
        "extensions-of-mine/narrow.ts",
    ]});
    let world = World::start_with(
        "anthropic-messages",
        &[
            (".pi/agent/settings.json", settings.to_string()),
            (".pi/agent/extensions-of-mine/narrow.ts", NARROW.to_owned()),
            ("proj/.env", "SECRET=1\n".to_owned()),
            ("proj/notes.txt", "first line\nsecond line\n".to_owned()),
        ],
    )
    .await;
    world.server.respond_with(caller);
    let home = world.daemon.home.path();
    let proj = home.join("proj");
    let (client, mut events, id) = session(&world, &proj.display().to_string()).await;
    let (_watcher, mut shown) = watcher(&world, &id).await;

    // `tool-override` replaces the built-in `read`: its description is what the model sees,
    // and it blocks `.env` and logs each access.
    let seen = run(&client, &mut events, &id, r#"call read {"path": ".env"}"#).await;
    let (text, _) = first_result(&seen);
    assert!(
        text.starts_with("Access denied: \".env\" matches a blocked pattern"),
        "{text}"
    );
    let request = world.server.requests().pop().unwrap();
    let read = request.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "read")
        .cloned()
        .unwrap();
    assert!(
        read["description"]
            .as_str()
            .unwrap()
            .starts_with("Read the contents of a file with access logging"),
        "{read}"
    );
    let seen = run(
        &client,
        &mut events,
        &id,
        r#"call read {"path": "notes.txt"}"#,
    )
    .await;
    assert_eq!(
        first_result(&seen),
        ("first line\nsecond line\n".to_owned(), false)
    );
    let logged = std::fs::read_to_string(home.join(".pi/agent/read-access.log")).unwrap();
    assert!(
        logged.contains("BLOCKED") && logged.contains("ALLOWED"),
        "{logged}"
    );

    // `dynamic-tools` registers a tool at `session_start`, and another from a command.
    let seen = run(
        &client,
        &mut events,
        &id,
        r#"call echo_session {"message": "hi"}"#,
    )
    .await;
    assert_eq!(first_result(&seen), ("[session] hi".to_owned(), false));
    client
        .call::<pi_protocol::v1::SessionPrompt>(&super::harness::prompt(
            &id,
            "/add-echo-tool shout",
        ))
        .await
        .unwrap();
    ui_until(
        &world,
        &mut shown,
        notified("Registered dynamic tool: shout"),
    )
    .await;
    let seen = run(
        &client,
        &mut events,
        &id,
        r#"call shout {"message": "hey"}"#,
    )
    .await;
    assert_eq!(first_result(&seen), ("[shout] hey".to_owned(), false));
    client
        .call::<pi_protocol::v1::SessionPrompt>(&super::harness::prompt(&id, "/show-tools"))
        .await
        .unwrap();
    let all = ui_until(&world, &mut shown, notified("all: ")).await;
    let pi_protocol::v1::ExtensionUi::Notify { message, .. } = all.ui else {
        unreachable!("matched above");
    };
    for name in ["read", "bash", "echo_session", "shout"] {
        assert!(
            message.split([' ', ',']).any(|listed| listed == name),
            "{message}"
        );
    }

    // `structured-output`: its result ends the run (pi's `terminate`), the model is not asked
    // again.
    let calls = world.server.calls();
    let seen = run(
        &client,
        &mut events,
        &id,
        r#"call structured_output {"headline": "Parser plan", "summary": "Three steps.", "actionItems": ["lex", "parse"]}"#,
    )
    .await;
    assert_eq!(
        first_result(&seen),
        ("Saved structured output: Parser plan".to_owned(), false)
    );
    assert_eq!(world.server.calls(), calls + 1, "the model was asked again");
    let details = super::mcp_faults::tool_results(&seen).remove(0).3;
    assert_eq!(details["actionItems"], json!(["lex", "parse"]), "{details}");

    // `setActiveTools`: only `read` is offered from now on.
    client
        .call::<pi_protocol::v1::SessionPrompt>(&super::harness::prompt(&id, "/only-read"))
        .await
        .unwrap();
    ui_until(&world, &mut shown, notified("active: read")).await;
    let seen = run(
        &client,
        &mut events,
        &id,
        r#"call bash {"command": "echo hi"}"#,
    )
    .await;
    assert!(
        super::mcp_faults::tool_results(&seen).is_empty(),
        "a tool left out ran: {seen:?}"
    );
    assert_eq!(offered_last(&world), ["read"]);
}

/// A user-written extension whose handlers never answer: `tool_call` for `bash`, `input` for
/// prompts that read.
const HANGER: &str = r#"export default function (pi) {
  pi.on("tool_call", async (event) => {
    if (event.toolName === "bash") await new Promise(() => {});
  });
  pi.on("input", async (event) => {
    if (event.text.startsWith("call read")) await new Promise(() => {});
    return { action: "continue" };
  });
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_that_hangs_is_given_up_naming_its_extension_and_the_session_goes_on() {
    let settings = json!({"extensions": ["extensions-of-mine/hanger.ts"]});
    let world = World::start_with_config(
        "anthropic-messages",
        "[limits]\nextension_hook_timeout_secs = 1\n",
        &[
            (".pi/agent/settings.json", settings.to_string()),
            (".pi/agent/extensions-of-mine/hanger.ts", HANGER.to_owned()),
            ("proj/notes.txt", "a note\n".to_owned()),
        ],
    )
    .await;
    world.server.respond_with(caller);
    let home = world.daemon.home.path();
    let hanger = home.join(".pi/agent/extensions-of-mine/hanger.ts");
    let (client, mut events, id) = session(&world, &home.join("proj").display().to_string()).await;

    // The call waits for the `tool_call` handler as long as allowed, then fails naming it.
    let seen = run(
        &client,
        &mut events,
        &id,
        r#"call bash {"command": "echo hi"}"#,
    )
    .await;
    assert_eq!(
        first_result(&seen),
        (
            format!(
                "the extension did not answer `tool_call` within 1 s ({})",
                hanger.display()
            ),
            true
        )
    );
    // An `input` handler that hangs: given up, named in a diagnostic, and the prompt goes on.
    let seen = run(
        &client,
        &mut events,
        &id,
        r#"call read {"path": "notes.txt"}"#,
    )
    .await;
    assert_eq!(first_result(&seen), ("a note\n".to_owned(), false));
    let listed = list(&client).await;
    let problems = &listed
        .sessions
        .iter()
        .find(|session| session.session_id == id)
        .unwrap()
        .diagnostics;
    assert!(
        problems
            .iter()
            .any(|problem| problem.path == hanger.display().to_string()
                && problem.error == "input: it did not answer within 1 s and was given up"),
        "{problems:?}"
    );

    // An extension whose factory never returns: loading is given up (twice the hook time,
    // at least 10 s), naming what was loading, and the session runs without extensions.
    let slow = home.join("proj/hang-at-load.ts");
    std::fs::write(
        &slow,
        "export default async function () { await new Promise(() => {}); }\n",
    )
    .unwrap();
    let created = client
        .call::<pi_protocol::v1::SessionCreate>(&pi_protocol::v1::SessionCreateParams {
            cwd: home.join("proj").display().to_string(),
            model: Some(super::harness::MODEL.to_owned()),
            extensions: vec![slow.display().to_string()],
            no_extensions: true,
            ..Default::default()
        })
        .await
        .unwrap();
    super::approvals::attach(&client, &created.id).await;
    let seen = run(
        &client,
        &mut events,
        &created.id,
        r#"call read {"path": "notes.txt"}"#,
    )
    .await;
    assert_eq!(first_result(&seen), ("a note\n".to_owned(), false));
    let listed = list(&client).await;
    let problems = &listed
        .sessions
        .iter()
        .find(|session| session.session_id == created.id)
        .unwrap()
        .diagnostics;
    assert_eq!(
        problems
            .iter()
            .map(|problem| (problem.path.clone(), problem.error.clone()))
            .collect::<Vec<_>>(),
        [(
            slow.display().to_string(),
            format!(
                "the extension did not answer `loading (a factory or session_start)` within 10 s \
                 ({})",
                slow.display()
            )
        )]
    );
}

/// A user-written extension that cancels a compaction asked with the instructions "not now",
/// and says when one was stored.
const COMPACT_WATCH: &str = r#"export default function (pi) {
  pi.on("session_before_compact", (event) =>
    event.customInstructions === "not now" ? { cancel: true } : undefined,
  );
  pi.on("session_compact", (event, ctx) => {
    ctx.ui.notify(
      `compacted (fromExtension: ${event.fromExtension}): ${event.compactionEntry.summary}`,
      "info",
    );
  });
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extension_writes_the_compaction_with_a_model_of_its_choice_or_cancels_it() {
    let examples = peers::pi_examples();
    let settings = json!({"extensions": [
        "extensions-of-mine/compact-watch.ts",
        examples.join("custom-compaction.ts"),
    ]});
    let world = World::start_with(
        "anthropic-messages",
        &[
            (".pi/agent/settings.json", settings.to_string()),
            (
                ".pi/agent/extensions-of-mine/compact-watch.ts",
                COMPACT_WATCH.to_owned(),
            ),
            (
                "proj/.pi/settings.json",
                json!({"compaction": {"keepRecentTokens": 1}}).to_string(),
            ),
        ],
    )
    .await;
    // pi's `custom-compaction` summarizes with Google's Gemini Flash: the user's models.json
    // points pi's `google` provider at the scripted server (with a key), as a pi user would
    // point it at a proxy. The host reads it with pi's own model registry.
    let home = world.daemon.home.path();
    let mut models = world.server.models_json("anthropic-messages");
    models["providers"]["google"] = json!({
        "baseUrl": world.server.base_url("google-generative-ai"),
        "apiKey": "google-key",
    });
    std::fs::write(home.join(".pi/agent/models.json"), models.to_string()).unwrap();
    world.server.respond_with(|request| {
        let text = match request.api {
            pi_test_support::model_server::Api::GoogleGenerativeAi => {
                "THE CUSTOM SUMMARY".to_owned()
            }
            _ => format!("reply to: {}", last_user_text(&request.body)),
        };
        Ok(pi_test_support::model_server::Turn::reply()
            .text(text)
            .into())
    });
    let proj = home.join("proj");
    let (client, mut events, id) = session(&world, &proj.display().to_string()).await;
    let (_watcher, mut shown) = watcher(&world, &id).await;
    for text in ["plan the parser", "write its tests"] {
        run(&client, &mut events, &id, text).await;
    }

    // Cancelled by an extension: the compaction ends aborted, nothing stored.
    let cancelled = client
        .call::<pi_protocol::v1::SessionCompact>(&pi_protocol::v1::SessionCompactParams {
            session_id: id.clone(),
            instructions: Some("not now".to_owned()),
        })
        .await
        .unwrap();
    assert!(
        cancelled.aborted && cancelled.result.is_none(),
        "{cancelled:?}"
    );

    // Written by pi's example with the model it chose.
    let compacted = client
        .call::<pi_protocol::v1::SessionCompact>(&pi_protocol::v1::SessionCompactParams {
            session_id: id.clone(),
            instructions: None,
        })
        .await
        .unwrap();
    let result = compacted.result.expect("a compaction");
    assert_eq!(result.summary, "THE CUSTOM SUMMARY");
    ui_until(
        &world,
        &mut shown,
        notified("Custom compaction extension triggered"),
    )
    .await;
    ui_until(
        &world,
        &mut shown,
        notified("compacted (fromExtension: true): THE CUSTOM SUMMARY"),
    )
    .await;
    let asked = world
        .server
        .requests()
        .into_iter()
        .find(|request| request.api == pi_test_support::model_server::Api::GoogleGenerativeAi)
        .expect("the example asked Gemini Flash");
    assert!(asked.path.contains("gemini-2.5-flash"), "{}", asked.path);
    assert!(
        asked.body_text.contains("plan the parser"),
        "{}",
        asked.body_text
    );
    // The next request of the session starts from the extension's summary.
    run(&client, &mut events, &id, "go on").await;
    let last = world.server.requests().pop().unwrap();
    assert!(
        last.body_text.contains("THE CUSTOM SUMMARY"),
        "{}",
        last.body_text
    );
}

/// `pictl ARGS` in `dir`: (success, stdout, stderr).
async fn pictl(world: &World, dir: &std::path::Path, args: &[&str]) -> (bool, String, String) {
    let out = tokio::time::timeout(
        Duration::from_secs(300),
        tokio::process::Command::new(pi_test_support::workspace_binary("pictl"))
            .args(args)
            .envs(world.daemon.env())
            .current_dir(dir)
            .output(),
    )
    .await
    .expect("pictl ends")
    .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_packages_install_list_and_remove_as_pi_does() {
    let world = World::start_with(
        "anthropic-messages",
        &[
            (
                "pkgs/greeter/package.json",
                json!({"name": "greeter", "keywords": ["pi-package"],
                    "pi": {"extensions": ["./ext"]}})
                .to_string(),
            ),
            (
                "pkgs/greeter/ext/greet.ts",
                "export default function (pi) { pi.registerTool({name: \"greet\", label: \"G\", \
                 description: \"Greets\", parameters: {type: \"object\"}, async execute() { \
                 return {content: [{type: \"text\", text: \"hi from the package\"}], details: {}}; \
                 }}); }\n"
                    .to_owned(),
            ),
            ("proj/README.md", "a project\n".to_owned()),
        ],
    )
    .await;
    world.server.respond_with(caller);
    let home = world.daemon.home.path();
    let proj = home.join("proj");
    let greeter = home.join("pkgs/greeter").display().to_string();

    // A local package, for you: added to your settings, and a new session loads it.
    let (ok, stdout, stderr) = pictl(&world, &proj, &["install", &greeter]).await;
    assert!(ok, "{stderr}");
    assert_eq!(stdout, format!("Installed {greeter}\n"));
    let settings: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(home.join(".pi/agent/settings.json")).unwrap(),
    )
    .unwrap();
    // As pi writes it: relative to the settings file.
    assert_eq!(
        settings["packages"],
        json!(["../../pkgs/greeter"]),
        "{settings}"
    );
    let (client, mut events, id) = session(&world, &proj.display().to_string()).await;
    let seen = run(&client, &mut events, &id, "call greet {}").await;
    assert_eq!(
        first_result(&seen),
        ("hi from the package".to_owned(), false)
    );

    // An npm package for the project (`-l`): installed under .pi/npm/ from the registry, its
    // steps shown as they happen.
    let (ok, stdout, stderr) =
        pictl(&world, &proj, &["install", "-l", "npm:is-number@7.0.0"]).await;
    assert!(ok, "{stderr}");
    assert_eq!(stdout, "Installed npm:is-number@7.0.0\n");
    assert!(
        stderr.contains("npm:is-number@7.0.0"),
        "no progress: {stderr:?}"
    );
    assert!(
        stderr.contains(
            "Its extensions load in this project's sessions once approved: `pictl extensions \
             trust` here (sessions ask too)."
        ),
        "{stderr}"
    );
    assert!(
        proj.join(".pi/npm/node_modules/is-number/package.json")
            .exists(),
        "not installed under the project"
    );
    let (ok, stdout, stderr) = pictl(&world, &proj, &["list"]).await;
    assert!(ok, "{stderr}");
    assert_eq!(
        stdout,
        format!(
            "User packages:\n  ../../pkgs/greeter\n    {greeter}\n\nProject packages:\n  \
             npm:is-number@7.0.0\n    {}\n",
            proj.join(".pi/npm/node_modules/is-number").display()
        )
    );

    // A source pi's package manager cannot use: its words once, and where npm's and git's
    // output went.
    let (ok, _, stderr) = pictl(&world, &proj, &["install", "bogus:thing"]).await;
    assert!(!ok);
    let said = format!(
        "Path does not exist: {} (npm's and git's output: {})",
        proj.join("bogus:thing").display(),
        world
            .daemon
            .paths
            .state_dir
            .join("extension-host.log")
            .display()
    );
    assert_eq!(stderr.matches("Path does not exist").count(), 1, "{stderr}");
    assert!(stderr.contains(&said), "{stderr}");

    // Removing: what settings do not name is an error saying so; the rest goes.
    let (ok, _, stderr) = pictl(&world, &proj, &["remove", "npm:nothing-here"]).await;
    assert!(!ok);
    assert!(
        stderr.contains(
            "No matching package found for npm:nothing-here in your settings; `pictl list` \
             shows the packages"
        ),
        "{stderr}"
    );
    let (ok, stdout, stderr) = pictl(&world, &proj, &["uninstall", &greeter]).await;
    assert!(ok, "{stderr}");
    assert_eq!(stdout, format!("Removed {greeter}\n"));
    let (ok, stdout, stderr) = pictl(&world, &proj, &["remove", "-l", "npm:is-number@7.0.0"]).await;
    assert!(ok, "{stderr}");
    assert_eq!(stdout, "Removed npm:is-number@7.0.0\n");
    let (ok, stdout, _) = pictl(&world, &proj, &["list"]).await;
    assert!(ok);
    assert_eq!(stdout, "No packages installed.\n");
    let (ok, _, stderr) = pictl(&world, &proj, &["update", "--self"]).await;
    assert!(!ok);
    assert!(
        stderr
            .contains("pictl cannot update itself (`--self`); update it the way you installed it"),
        "{stderr}"
    );
}

/// A user-written extension on the session's other events: a user's shell command answered
/// (`canned`) or run through its own operations (`remote …`), the thinking level and the
/// leaf moving.
const SESSION_HOOKS: &str = r#"import { writeFileSync } from "node:fs";
export default function (pi) {
  pi.on("user_bash", (event) => {
    if (event.command === "canned") {
      return { result: { output: "canned output", exitCode: 0, cancelled: false, truncated: false } };
    }
    if (event.command.startsWith("slow ")) {
      return {
        operations: {
          exec: (_command, cwd, { signal }) => {
            writeFileSync(`${cwd}/slow-started`, "");
            return new Promise((resolve) => signal.addEventListener("abort", () => resolve({ exitCode: null })));
          },
        },
      };
    }
    if (event.command.startsWith("remote ")) {
      return {
        operations: {
          exec: async (command, cwd, { onData }) => {
            onData(Buffer.from(`ran ${command} in ${cwd} remotely\n`));
            return { exitCode: 3 };
          },
        },
      };
    }
  });
  pi.on("thinking_level_select", (event, ctx) => {
    ctx.ui.notify(`thinking ${event.previousLevel} -> ${event.level}`, "info");
  });
  pi.on("session_tree", (event, ctx) => {
    ctx.ui.notify(`tree moved to ${event.newLeafId} from ${event.oldLeafId}`, "info");
  });
}
"#;

/// The ids of session `id`'s user messages, oldest first.
async fn user_entries(client: &Client, id: &str) -> Vec<String> {
    entries(client, id, Default::default())
        .await
        .iter()
        .filter(|entry| entry["message"]["role"] == "user")
        .map(|entry| entry["id"].as_str().unwrap().to_owned())
        .collect()
}

/// Session `id`'s entries in `scope` (pi's JSON), in order.
async fn entries(
    client: &Client,
    id: &str,
    scope: pi_protocol::v1::ReadScope,
) -> Vec<serde_json::Value> {
    let read = client
        .call::<pi_protocol::v1::SessionRead>(&pi_protocol::v1::SessionReadParams {
            session_id: id.to_owned(),
            scope,
            limit: None,
            cursor: None,
        })
        .await
        .unwrap();
    serde_json::to_value(&read).unwrap()["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|record| record["entry"].clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extensions_hear_forks_navigation_shell_commands_and_thinking_changes() {
    let examples = peers::pi_examples();
    let settings = json!({"extensions": [
        examples.join("confirm-destructive.ts"),
        examples.join("todo.ts"),
        "extensions-of-mine/session-hooks.ts",
    ]});
    let world = World::start_with(
        "anthropic-messages",
        &[
            (".pi/agent/settings.json", settings.to_string()),
            (
                ".pi/agent/extensions-of-mine/session-hooks.ts",
                SESSION_HOOKS.to_owned(),
            ),
            ("proj/README.md", "a project\n".to_owned()),
        ],
    )
    .await;
    world.server.respond_with(caller);
    let proj = world.daemon.home.path().join("proj");
    let (client, mut events, id) = session(&world, &proj.display().to_string()).await;
    let (watcher, mut watched) = watcher(&world, &id).await;
    for text in ["one", "two"] {
        let seen = run(
            &client,
            &mut events,
            &id,
            &format!(r#"call todo {{"action": "add", "text": "{text}"}}"#),
        )
        .await;
        assert!(!first_result(&seen).1, "{seen:?}");
    }
    let users = user_entries(&client, &id).await;
    assert_eq!(users.len(), 2);

    // Navigating back before the second item: pi's `todo` rebuilds its list from the branch
    // (`session_tree`).
    client
        .call::<pi_protocol::v1::SessionNavigate>(&pi_protocol::v1::SessionNavigateParams {
            session_id: id.clone(),
            entry_id: users[1].clone(),
            ..Default::default()
        })
        .await
        .unwrap();
    ui_until(&world, &mut watched, notified("tree moved to ")).await;
    let seen = run(&client, &mut events, &id, r#"call todo {"action": "list"}"#).await;
    assert_eq!(first_result(&seen), ("[ ] #1: one".to_owned(), false));

    // `confirm-destructive` asks before a fork; the watcher refuses, then accepts.
    for (choice, forks) in [
        ("No, stay in current session", false),
        ("Yes, create fork", true),
    ] {
        let params = pi_protocol::v1::SessionEntryParams {
            session_id: id.clone(),
            entry_id: users[0].clone(),
        };
        let fork = client.call::<pi_protocol::v1::SessionFork>(&params);
        let answer = async {
            let question = next_question(&mut watched).await;
            let UiRequest::Select { title, .. } = &question.request else {
                panic!("not a select: {question:?}");
            };
            assert!(title.starts_with("Fork from entry"), "{title}");
            watcher
                .call::<UiRespond>(&UiRespondParams {
                    session_id: id.clone(),
                    request_id: question.request_id.clone(),
                    answer: UiAnswer {
                        value: Some(choice.to_owned()),
                        ..UiAnswer::default()
                    },
                })
                .await
                .unwrap();
        };
        let (forked, ()) = tokio::join!(fork, answer);
        match forked {
            Ok(forked) => {
                assert!(forks, "forked although refused");
                assert_eq!(forked.text, r#"call todo {"action": "add", "text": "one"}"#);
            }
            Err(error) => {
                assert!(!forks, "{error}");
                assert!(
                    error
                        .to_string()
                        .contains("the session's extensions cancelled the fork"),
                    "{error}"
                );
            }
        }
    }

    // A user's shell command: answered by an extension, run through its operations, or run
    // by pid.
    for (command, output, exit_code) in [
        ("canned", "canned output".to_owned(), Some(0)),
        (
            "remote ls",
            format!("ran remote ls in {} remotely\n", proj.display()),
            Some(3),
        ),
        ("echo plain", "plain\n".to_owned(), Some(0)),
    ] {
        let ran = client
            .call::<pi_protocol::v1::SessionBash>(&pi_protocol::v1::SessionBashParams {
                session_id: id.clone(),
                command: command.to_owned(),
                exclude_from_context: false,
            })
            .await
            .unwrap();
        assert_eq!(
            (ran.output, ran.exit_code),
            (output, exit_code),
            "{command}"
        );
    }

    // Aborted while the extension runs it: recorded as cancelled, and never run by pid.
    let slow = pi_protocol::v1::SessionBashParams {
        session_id: id.clone(),
        command: "slow touch ran-locally".to_owned(),
        exclude_from_context: false,
    };
    let ran = client.call::<pi_protocol::v1::SessionBash>(&slow);
    let abort = async {
        // Once the extension runs the command (it leaves a mark), abort it.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        while !proj.join("slow-started").exists() {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the extension never ran it"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        client
            .call::<pi_protocol::v1::SessionAbort>(&pi_protocol::v1::SessionIdParams {
                session_id: id.clone(),
            })
            .await
            .unwrap();
    };
    let (ran, ()) = tokio::join!(ran, abort);
    let ran = ran.unwrap();
    assert!(ran.cancelled, "{ran:?}");
    assert!(
        !proj.join("ran-locally").exists(),
        "pid ran the command too"
    );

    // The thinking level changes: `thinking_level_select`.
    client
        .call::<pi_protocol::v1::SessionSetThinking>(&pi_protocol::v1::SessionSetThinkingParams {
            session_id: id.clone(),
            level: "high".to_owned(),
        })
        .await
        .unwrap();
    ui_until(&world, &mut watched, notified("-> high")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flags_extensions_register_come_from_pictls_command_line_as_from_pis() {
    let examples = peers::pi_examples();
    let settings = json!({"extensions": [examples.join("plan-mode/index.ts")]});
    let world = World::start_with(
        "anthropic-messages",
        &[
            (".pi/agent/settings.json", settings.to_string()),
            ("proj/README.md", "a project\n".to_owned()),
        ],
    )
    .await;
    // The scripted model reads the prompt, not plan-mode's context message after it.
    world.server.respond_with(|request| {
        let mut request = request.clone();
        if let Some(messages) = request.body["messages"].as_array_mut() {
            while messages.len() > 1
                && messages
                    .last()
                    .is_some_and(|last| last.to_string().contains("[PLAN MODE ACTIVE]"))
            {
                messages.pop();
            }
        }
        caller(&request)
    });
    let proj = world.daemon.home.path().join("proj");
    let model = super::harness::MODEL;

    // `--plan` (pi's plan-mode registers it): read-only tools from the session's start, so
    // the model is not offered `write`, and nothing is written.
    let (ok, stdout, stderr) = pictl(
        &world,
        &proj,
        &[
            "run",
            "--no-session",
            "--json",
            "--model",
            model,
            "--plan",
            "--",
            r#"call write {"path": "x.txt", "content": "y"}"#,
        ],
    )
    .await;
    assert!(ok, "{stderr}");
    assert!(stdout.contains("NO TOOL write"), "{stdout}");
    assert!(!proj.join("x.txt").exists());
    let offered = offered_last(&world);
    for name in ["read", "bash", "grep", "find", "ls"] {
        assert!(offered.iter().any(|tool| tool == name), "{offered:?}");
    }
    // Without the flag the session has its usual tools.
    let (ok, _, stderr) = pictl(
        &world,
        &proj,
        &[
            "run",
            "--no-session",
            "--json",
            "--model",
            model,
            r#"call write {"path": "x.txt", "content": "y"}"#,
        ],
    )
    .await;
    assert!(ok, "{stderr}");
    assert!(proj.join("x.txt").exists());

    // A flag no extension registers: refused as pi refuses it, and no session is left.
    let sessions_before = pictl(&world, &proj, &["sessions", "--json"]).await.1;
    let (ok, _, stderr) = pictl(
        &world,
        &proj,
        &[
            "run",
            "--model",
            model,
            "--no-such-flag",
            "--",
            "call read {}",
        ],
    )
    .await;
    assert!(!ok);
    assert!(
        stderr
            .contains("Unknown option: --no-such-flag (no extension of this session registers it)"),
        "{stderr}"
    );
    assert_eq!(
        pictl(&world, &proj, &["sessions", "--json"]).await.1,
        sessions_before
    );

    // plan-mode's shortcut (Ctrl+Alt+P): listed with the session, run on a client's word.
    let (client, _events, id) = session(&world, &proj.display().to_string()).await;

    // Continuing a session keeps the extensions and flags it was created with: a flag given
    // with `--session` is refused, not dropped without a word.
    let (ok, _, stderr) = pictl(
        &world,
        &proj,
        &["run", "--session", &id, "--plan", "-e", "x.ts", "--", "hi"],
    )
    .await;
    assert!(!ok);
    assert!(
        stderr.contains(
            "-e/--extension, --plan apply to new sessions; an existing session keeps the \
             extensions and extension flags it was created with"
        ),
        "{stderr}"
    );
    let (_watcher, mut watched) = watcher(&world, &id).await;
    until_loaded(&client, &id).await;
    let got = client
        .call::<pi_protocol::v1::SessionGet>(&pi_protocol::v1::SessionIdParams {
            session_id: id.clone(),
        })
        .await
        .unwrap();
    assert_eq!(
        got.shortcuts,
        [pi_protocol::v1::ExtensionShortcut {
            key: "ctrl+alt+p".to_owned(),
            description: "Toggle plan mode".to_owned(),
        }]
    );
    let shortcut = |key: &str| pi_protocol::v1::ExtensionsShortcutParams {
        session_id: id.clone(),
        key: key.to_owned(),
    };
    client
        .call::<pi_protocol::v1::ExtensionsShortcut>(&shortcut("ctrl+alt+p"))
        .await
        .unwrap();
    ui_until(&world, &mut watched, notified("Plan mode enabled")).await;
    let error = client
        .call::<pi_protocol::v1::ExtensionsShortcut>(&shortcut("ctrl+alt+z"))
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("no extension of this session registers the shortcut ctrl+alt+z"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_that_cannot_start_says_where_its_log_is() {
    let world = World::start_with(
        "anthropic-messages",
        &[(
            ".pi/agent/extensions/hello.ts",
            std::fs::read_to_string(peers::pi_examples().join("hello.ts")).unwrap(),
        )],
    )
    .await;
    world.server.respond_with(caller);
    let mut world = world;
    world.daemon.kill9().await;
    // A `node_modules` without pi's package: the host exits while starting.
    world
        .daemon
        .set_launch_env("PI_EXTENSION_HOST_MODULES", "/nonexistent-node-modules");
    world.daemon.restart().await;
    let home = world.daemon.home.path().display().to_string();
    let (client, mut events, id) = session(&world, &home).await;
    let seen = run(&client, &mut events, &id, r#"call hello {"name": "x"}"#).await;
    assert!(
        super::mcp_faults::tool_results(&seen).is_empty(),
        "a tool of a host that did not start ran: {seen:?}"
    );
    let listed = list(&client).await;
    let error = listed.host.last_error.unwrap_or_default();
    assert!(
        error.starts_with("the extension host did not start (")
            && error.contains(&format!(
                "its log says why: {}",
                world
                    .daemon
                    .paths
                    .state_dir
                    .join("extension-host.log")
                    .display()
            ))
            && !error.contains("next use; it starts again on the next use"),
        "{error}"
    );
}

/// An `npm` that stands for the registry's on the host's first start: it waits until the
/// test lets it go, then fails as an unreachable registry makes `npm ci` fail.
const SLOW_NPM: &str = r#"#!/bin/sh
while [ ! -f "$NPM_SHIM_DIR/release" ]; do sleep 0.05; done
echo "npm error code ECONNREFUSED" >&2
exit 1
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hosts_first_start_shows_its_install_and_its_failure() {
    let world = World::start_with(
        "anthropic-messages",
        &[(
            ".pi/agent/extensions/hello.ts",
            std::fs::read_to_string(peers::pi_examples().join("hello.ts")).unwrap(),
        )],
    )
    .await;
    let mut world = world;
    world.daemon.kill9().await;
    let shim = world.daemon.home.path().join("npm-shim");
    std::fs::create_dir_all(&shim).unwrap();
    std::fs::write(shim.join("npm"), SLOW_NPM).unwrap();
    let mut permissions = std::fs::metadata(shim.join("npm")).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(shim.join("npm"), permissions).unwrap();
    // No pinned package given: the host installs it on its first start.
    world.daemon.set_launch_env("PI_EXTENSION_HOST_MODULES", "");
    world.daemon.set_launch_env(
        "PATH",
        &format!(
            "{}:{}",
            shim.display(),
            std::env::var("PATH").unwrap_or_default()
        ),
    );
    world
        .daemon
        .set_launch_env("NPM_SHIM_DIR", &shim.display().to_string());
    world.daemon.restart().await;
    let home = world.daemon.home.path().display().to_string();
    let (client, mut events, id) = session(&world, &home).await;
    let installing = ui_until(
        &world,
        &mut events,
        status_is("extensions", "Installing pi's extension runtime"),
    )
    .await;
    assert_eq!(installing.session_id, id);
    std::fs::write(shim.join("release"), "").unwrap();
    ui_until(&world, &mut events, |ui| {
        matches!(ui, pi_protocol::v1::ExtensionUi::Status { key, text: None } if key == "extensions")
    })
    .await;
    let listed = until_failed(&client).await;
    let error = listed.host.last_error.unwrap_or_default();
    assert!(
        error.contains("`npm ci` in ") && error.contains("extension-host.log"),
        "{error}"
    );
}

/// Waits until the host's start failed; returns the listing that says so.
async fn until_failed(client: &Client) -> ExtensionsListResponse {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let listed = list(client).await;
        if listed.host.last_error.is_some() {
            return listed;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the host's failure was never listed: {listed:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A user-written extension that points the `custom-anthropic` provider another extension
/// registered at the scripted model (pi's override-only `registerProvider`: a base URL for
/// the provider's models).
fn point_at(url: &str) -> String {
    format!(
        "export default function (pi) {{ pi.registerProvider(\"custom-anthropic\", {{ baseUrl: \"{url}\" }}); }}\n"
    )
}

async fn models_of(client: &Client, session_id: Option<&str>) -> Vec<pi_protocol::v1::ModelInfo> {
    client
        .call::<pi_protocol::v1::ModelList>(&pi_protocol::v1::ModelListParams {
            available_only: false,
            session_id: session_id.map(str::to_owned),
            env_names: Vec::new(),
        })
        .await
        .unwrap()
        .models
}

fn assistant_of(events: &[pi_protocol::v1::SessionEventParams]) -> serde_json::Value {
    events
        .iter()
        .rev()
        .find_map(|event| match &event.event {
            pi_protocol::v1::SessionEvent::MessageEnd { message, .. } => {
                let value = serde_json::to_value(message).unwrap();
                (value["role"] == "assistant").then_some(value)
            }
            _ => None,
        })
        .expect("an assistant message")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_an_extension_registers_serves_the_session_through_its_own_stream() {
    // pi's `custom-provider-anthropic`, unmodified, with its dependencies installed as its
    // README says: its own `streamSimple` over the Anthropic SDK, its models, its key.
    let example = peers::pi_examples().join("custom-provider-anthropic");
    let settings = json!({"extensions": [
        "custom-provider-anthropic",
        "extensions-of-mine/point-at-scripted.ts",
    ]});
    let index = std::fs::read_to_string(example.join("index.ts")).unwrap();
    let package = std::fs::read_to_string(example.join("package.json")).unwrap();
    let world = World::start_with(
        "anthropic-messages",
        &[
            (".pi/agent/settings.json", settings.to_string()),
            (".pi/agent/custom-provider-anthropic/index.ts", index),
            (".pi/agent/custom-provider-anthropic/package.json", package),
            // The key pi's registry finds for the provider (its `auth.json`).
            (
                ".pi/agent/auth.json",
                json!({"custom-anthropic": {"type": "api_key", "key": "sk-ant-api03-custom-provider-key"}})
                    .to_string(),
            ),
        ],
    )
    .await;
    let agent = world.daemon.home.path().join(".pi/agent");
    std::os::unix::fs::symlink(
        peers::custom_provider_modules(),
        agent.join("custom-provider-anthropic/node_modules"),
    )
    .unwrap();
    std::fs::create_dir_all(agent.join("extensions-of-mine")).unwrap();
    std::fs::write(
        agent.join("extensions-of-mine/point-at-scripted.ts"),
        point_at(&world.server.url()),
    )
    .unwrap();
    // The model's answer after a tool result comes with usage, for the price.
    world.server.respond_with(|request| {
        let answered_tool = request.body["messages"]
            .as_array()
            .and_then(|messages| messages.last())
            .is_some_and(|last| last["content"].to_string().contains("tool_result"));
        if !answered_tool {
            return caller(request);
        }
        Ok(pi_test_support::model_server::Turn::reply()
            .text("Done.")
            .usage(pi_test_support::model_server::ScriptUsage {
                input: 1000,
                output: 200,
                ..Default::default()
            })
            .into())
    });
    let home = world.daemon.home.path().display().to_string();
    let (client, mut events, id) = session(&world, &home).await;
    until_loaded(&client, &id).await;

    // Its models are the session's: listed for it, chosen like any other.
    let listed = models_of(&client, Some(&id)).await;
    let custom = listed
        .iter()
        .find(|model| model.provider == "custom-anthropic" && model.id == "claude-sonnet-4-5")
        .unwrap_or_else(|| panic!("the extension's model is listed: {listed:?}"));
    assert!(custom.has_key, "{custom:?}");
    assert_eq!(custom.api, "custom-anthropic-api");
    assert_eq!(custom.context_window, 200_000);
    assert!(
        !models_of(&client, None)
            .await
            .iter()
            .any(|model| model.provider == "custom-anthropic"),
        "the daemon's own list has no extension's models"
    );
    let chosen = client
        .call::<pi_protocol::v1::SessionSetModel>(&pi_protocol::v1::SessionSetModelParams {
            session_id: id.clone(),
            model: "custom-anthropic/claude-sonnet-4-5".to_owned(),
        })
        .await
        .unwrap();
    assert_eq!(
        (chosen.model.provider.as_str(), chosen.model.id.as_str()),
        ("custom-anthropic", "claude-sonnet-4-5")
    );

    // A run streams through the extension's provider: text, a tool call and its result.
    std::fs::write(world.daemon.home.path().join("note.txt"), "from the file").unwrap();
    let seen = run(
        &client,
        &mut events,
        &id,
        r#"call read {"path": "note.txt"}"#,
    )
    .await;
    let results = super::mcp_faults::tool_results(&seen);
    assert_eq!(results.len(), 1, "{seen:?}");
    assert!(
        results[0].1.contains("from the file") && !results[0].2,
        "{results:?}"
    );
    let message = assistant_of(&seen);
    assert_eq!(message["provider"], "custom-anthropic", "{message}");
    assert_eq!(message["api"], "custom-anthropic-api", "{message}");
    assert!(
        message["content"].to_string().contains("Done."),
        "{message}"
    );
    // Usage from the provider, priced with the extension's prices ($3 / $15 per million).
    assert_eq!(message["usage"]["input"], 1000, "{message}");
    assert_eq!(message["usage"]["output"], 200, "{message}");
    let cost = message["usage"]["cost"]["total"].as_f64().unwrap();
    assert!((cost - 0.006).abs() < 1e-9, "{message}");
    // What reached the server is the SDK's request, with the key from pi's auth.json and
    // the session's system prompt and tools.
    let requests = world.server.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(request.path, "/v1/messages");
        assert_eq!(request.body["model"], "claude-sonnet-4-5");
        assert_eq!(
            request
                .headers
                .get("x-api-key")
                .and_then(|value| value.to_str().ok()),
            Some("sk-ant-api03-custom-provider-key")
        );
        assert!(
            request.body["system"].to_string().contains("read"),
            "{}",
            request.body["system"]
        );
    }
    assert!(
        requests[1].body.to_string().contains("from the file"),
        "the tool's result went back: {}",
        requests[1].body
    );

    // A session without extensions on the same daemon does not have the provider.
    let (other_client, _other_events) = world.client().await;
    let other = other_client
        .call::<pi_protocol::v1::SessionCreate>(&pi_protocol::v1::SessionCreateParams {
            cwd: home.clone(),
            model: Some(super::harness::MODEL.to_owned()),
            no_extensions: true,
            ..Default::default()
        })
        .await
        .unwrap();
    let refused = other_client
        .call::<pi_protocol::v1::SessionSetModel>(&pi_protocol::v1::SessionSetModelParams {
            session_id: other.id.clone(),
            model: "custom-anthropic/claude-sonnet-4-5".to_owned(),
        })
        .await
        .unwrap_err()
        .to_string();
    assert!(refused.contains("no model matches"), "{refused}");

    // The daemon dies; the session, loaded again, finds its model among its extensions'.
    drop((client, events, other_client));
    let mut world = world;
    world.daemon.kill9().await;
    world.daemon.restart().await;
    let (client, mut events) = world.client().await;
    super::approvals::attach(&client, &id).await;
    let seen = run(
        &client,
        &mut events,
        &id,
        r#"call read {"path": "note.txt"}"#,
    )
    .await;
    let message = assistant_of(&seen);
    assert_eq!(message["provider"], "custom-anthropic", "{message}");
    assert!(
        message["content"].to_string().contains("Done."),
        "{message}"
    );

    // Named when the session is created (`pictl run --model`): chosen once its extensions
    // loaded; a model nobody has is refused and leaves no session behind.
    let home = world.daemon.home.path().to_path_buf();
    let (ok, stdout, stderr) = pictl(
        &world,
        &home,
        &[
            "run",
            "--no-session",
            "--model",
            "custom-anthropic/claude-opus-4-5",
            r#"call read {"path": "note.txt"}"#,
        ],
    )
    .await;
    assert!(ok, "{stderr}");
    assert!(stdout.contains("Done."), "{stdout}");
    assert!(!stderr.contains("not listed"), "a listed model: {stderr}");
    let last = world.server.requests().pop().unwrap();
    assert_eq!(last.body["model"], "claude-opus-4-5");
    // A custom id of the extension's provider, as pi takes one: the provider's settings.
    let (ok, stdout, stderr) = pictl(
        &world,
        &home,
        &[
            "run",
            "--no-session",
            "--model",
            "custom-anthropic/claude-next",
            r#"call read {"path": "note.txt"}"#,
        ],
    )
    .await;
    assert!(ok, "{stderr}");
    assert!(stdout.contains("Done."), "{stdout}");
    assert!(
        stderr.contains("model \"claude-next\" is not listed for provider \"custom-anthropic\""),
        "{stderr}"
    );
    assert_eq!(
        world.server.requests().pop().unwrap().body["model"],
        "claude-next"
    );
    let sessions_before = pictl(&world, &home, &["sessions", "--json"]).await.1;
    let (ok, _, stderr) = pictl(
        &world,
        &home,
        &["run", "--model", "no-such-provider/no-such-model", "hi"],
    )
    .await;
    assert!(!ok);
    assert!(stderr.contains("no model matches"), "{stderr}");
    assert_eq!(
        pictl(&world, &home, &["sessions", "--json"]).await.1,
        sessions_before
    );
}

/// A user-written extension deciding moves in the session tree (pi's
/// `session_before_tree`): instructions "refuse" cancel the move, a move with a summary gets
/// the extension's summary and a label, one without a summary labels its target.
const TREE_GUARD: &str = r#"export default function (pi) {
  pi.on("session_before_tree", async (event) => {
    const p = event.preparation;
    if (p.customInstructions === "refuse") return { cancel: true };
    if (p.userWantsSummary) {
      return {
        summary: { summary: `left ${p.entriesToSummarize.length} entries behind from ${p.oldLeafId}`, details: { from: "guard" } },
        label: "guarded",
      };
    }
    return { label: "moved-here" };
  });
}
"#;

/// Every entry of session `id`, in creation order (pi's JSON).
async fn all_entries(client: &Client, id: &str) -> Vec<serde_json::Value> {
    entries(client, id, pi_protocol::v1::ReadScope::Tree).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extensions_decide_moves_in_the_tree_and_switches_and_hear_responses() {
    let examples = peers::pi_examples();
    let settings = json!({"extensions": [
        examples.join("confirm-destructive.ts"),
        examples.join("provider-payload.ts"),
        "extensions-of-mine/tree-guard.ts",
    ]});
    let world = World::start_with(
        "anthropic-messages",
        &[
            (".pi/agent/settings.json", settings.to_string()),
            (
                ".pi/agent/extensions-of-mine/tree-guard.ts",
                TREE_GUARD.to_owned(),
            ),
            ("proj/.pi/.keep", String::new()),
        ],
    )
    .await;
    world.server.respond_with(|_| {
        Ok(pi_test_support::model_server::Turn::reply()
            .text("ok")
            .into())
    });
    let proj = world.daemon.home.path().join("proj");
    let (client, mut events, id) = session(&world, &proj.display().to_string()).await;
    let (watcher, mut watched) = watcher(&world, &id).await;
    for text in ["first", "second"] {
        run(&client, &mut events, &id, text).await;
    }
    // pi's `provider-payload` logs each response's status and headers
    // (`after_provider_response`), heard before the body was read.
    let logged = std::fs::read_to_string(proj.join(".pi/provider-payload.log")).unwrap();
    assert_eq!(logged.matches("[200] {").count(), 2, "{logged}");
    assert!(logged.contains("text/event-stream"), "{logged}");

    let users = user_entries(&client, &id).await;
    let navigate = |entry_id: &str, summarize: bool, instructions: Option<&str>| {
        let params = pi_protocol::v1::SessionNavigateParams {
            session_id: id.clone(),
            entry_id: entry_id.to_owned(),
            summarize,
            instructions: instructions.map(str::to_owned),
            replace_instructions: false,
        };
        let client = client.clone();
        async move {
            client
                .call::<pi_protocol::v1::SessionNavigate>(&params)
                .await
        }
    };
    // Refused: the leaf stays.
    let before = all_entries(&client, &id).await.len();
    let refused = navigate(&users[1], true, Some("refuse"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("the session's extensions cancelled the move in the session tree"),
        "{refused}"
    );
    assert_eq!(all_entries(&client, &id).await.len(), before);

    // With a summary: the extension's, labelled, no model asked.
    let calls = world.server.calls();
    let moved = navigate(&users[1], true, None).await.unwrap();
    assert_eq!(
        world.server.calls(),
        calls,
        "the extension wrote the summary"
    );
    let summary_id = moved.summary_entry_id.clone().expect("a summary entry");
    let entries = all_entries(&client, &id).await;
    let summary = entries
        .iter()
        .find(|entry| entry["id"] == summary_id.as_str())
        .unwrap();
    assert_eq!(summary["type"], "branch_summary");
    assert!(
        summary["summary"]
            .as_str()
            .unwrap()
            .starts_with("left 1 entries behind from "),
        "{summary}"
    );
    assert_eq!(summary["fromHook"], true, "{summary}");
    assert_eq!(summary["details"], json!({"from": "guard"}), "{summary}");
    let labelled = |target: &str, label: &str| {
        entries.iter().any(|entry| {
            entry["type"] == "label" && entry["targetId"] == target && entry["label"] == label
        })
    };
    assert!(labelled(&summary_id, "guarded"), "{entries:#?}");

    // Without a summary: the target is labelled.
    navigate(&users[0], false, None).await.unwrap();
    let entries = all_entries(&client, &id).await;
    assert!(
        entries.iter().any(|entry| entry["type"] == "label"
            && entry["targetId"] == users[0].as_str()
            && entry["label"] == "moved-here"),
        "{entries:#?}"
    );

    // pi's `confirm-destructive` asks before the client leaves for a new session; the
    // watcher refuses, then accepts.
    for (confirmed, cancelled) in [(false, true), (true, false)] {
        let params = pi_protocol::v1::SessionBeforeSwitchParams {
            session_id: id.clone(),
            reason: pi_protocol::v1::SwitchReason::New,
            target_session_id: None,
        };
        let asked = client.call::<pi_protocol::v1::SessionBeforeSwitch>(&params);
        let answer = async {
            let question = next_question(&mut watched).await;
            let UiRequest::Confirm { title, .. } = &question.request else {
                panic!("not a confirm: {question:?}");
            };
            assert_eq!(title, "Clear session?");
            watcher
                .call::<UiRespond>(&UiRespondParams {
                    session_id: id.clone(),
                    request_id: question.request_id.clone(),
                    answer: UiAnswer {
                        confirmed: Some(confirmed),
                        ..UiAnswer::default()
                    },
                })
                .await
                .unwrap();
        };
        let (asked, ()) = tokio::join!(asked, answer);
        assert_eq!(asked.unwrap().cancelled, cancelled);
    }
    let unknown = client
        .call::<pi_protocol::v1::SessionBeforeSwitch>(&pi_protocol::v1::SessionBeforeSwitchParams {
            session_id: "no-such-session".to_owned(),
            reason: pi_protocol::v1::SwitchReason::Resume,
            target_session_id: None,
        })
        .await
        .unwrap_err()
        .to_string();
    assert!(unknown.contains("no-such-session"), "{unknown}");
}

/// A project's extension that narrows the session's tools to `read` as it starts.
const NARROW_AT_START: &str = r#"export default function (pi) {
  pi.on("session_start", () => pi.setActiveTools(["read"]));
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_a_refused_extension_narrowed_are_the_sessions_own_again() {
    let world = World::start_with(
        "anthropic-messages",
        &[("proj/.pi/extensions/narrow.ts", NARROW_AT_START.to_owned())],
    )
    .await;
    world.server.respond_with(caller);
    let proj = world.daemon.home.path().join("proj");
    let (client, mut events, id) = session(&world, &proj.display().to_string()).await;
    next_question(&mut events).await;
    let (ok, _, stderr) = trust(&world, &proj, &[]).await;
    assert!(ok, "{stderr}");
    until_loaded(&client, &id).await;
    let write = r#"call write {"path": "x.txt", "content": "y"}"#;
    let seen = run(&client, &mut events, &id, write).await;
    assert!(
        super::mcp_faults::final_text(&seen).contains("NO TOOL write"),
        "{seen:?}"
    );
    assert_eq!(offered_last(&world), ["read"]);

    // Refused: unloaded, and the session has its own tools again.
    let (ok, _, stderr) = trust(&world, &proj, &["--deny"]).await;
    assert!(ok, "{stderr}");
    until_skipped(&client, &id, "a project extension you refused").await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let got = client
            .call::<pi_protocol::v1::SessionGet>(&pi_protocol::v1::SessionIdParams {
                session_id: id.clone(),
            })
            .await
            .unwrap();
        if got.tools.iter().any(|tool| tool == "write") {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the session's tools stayed narrowed: {:?}",
            got.tools
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let seen = run(&client, &mut events, &id, write).await;
    let results = super::mcp_faults::tool_results(&seen);
    assert_eq!(results.len(), 1, "{seen:?}");
    assert!(!results[0].2, "{results:?}");
    assert!(proj.join("x.txt").exists());
}

/// A user-written extension on every step of the request path: `before_agent_start` adds to
/// the system prompt and adds a message, `context` adds a message to the request,
/// `before_provider_request` changes the body.
const SHAPER: &str = r#"export default function (pi) {
  pi.on("before_agent_start", (event) => ({
    systemPrompt: event.systemPrompt + "\n\nAlways answer in haiku.",
    message: { customType: "note", content: "a note from the extension", display: false },
  }));
  pi.on("context", (event) => ({
    messages: [
      ...event.messages,
      { role: "user", content: [{ type: "text", text: "(added by the context hook)" }], timestamp: Date.now() },
    ],
  }));
  pi.on("before_provider_request", (event) => ({ ...event.payload, temperature: 0.25 }));
}
"#;

/// What extensions shape in an Anthropic request body: each message's role and texts, the
/// end of the system prompt, the temperature.
fn shaped(body: &serde_json::Value) -> (Vec<(String, Vec<String>)>, String, serde_json::Value) {
    let messages = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| {
            let texts = match &message["content"] {
                serde_json::Value::String(text) => vec![text.clone()],
                blocks => blocks
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|block| block["text"].as_str().map(str::to_owned))
                    .collect(),
            };
            (message["role"].as_str().unwrap().to_owned(), texts)
        })
        .collect();
    let system = system_of(body);
    let tail = system[system.len().saturating_sub(40)..].to_owned();
    (messages, tail, body["temperature"].clone())
}

/// Runs pi 0.73.1 itself in print mode in `dir` (the user's agent directory the daemon
/// reads, the scripted model), then `pictl run` with the same extensions and prompt; each
/// prints `expected`.
async fn pi_then_pid(
    world: &World,
    dir: &std::path::Path,
    extensions: &[&str],
    prompt: &str,
    expected: &str,
) {
    let home = world.daemon.home.path();
    let mut pi_args = vec![
        "-p",
        "--offline",
        "--no-session",
        "--provider",
        "scripted",
        "--model",
        "scripted-model",
    ];
    let mut pid_args = vec!["run", "--no-session", "--model", "scripted/scripted-model"];
    for extension in extensions {
        pi_args.extend(["-e", extension]);
        pid_args.extend(["-e", extension]);
    }
    pi_args.push(prompt);
    pid_args.push(prompt);
    let pi = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::process::Command::new(peers::npm_bin("pi"))
            .args(&pi_args)
            .env("PI_CODING_AGENT_DIR", home.join(".pi/agent"))
            .env("HOME", home)
            .current_dir(dir)
            .stdin(std::process::Stdio::null())
            .output(),
    )
    .await
    .expect("pi ends")
    .unwrap();
    assert!(
        pi.status.success(),
        "pi failed: {}",
        String::from_utf8_lossy(&pi.stderr)
    );
    assert!(
        String::from_utf8_lossy(&pi.stdout).contains(expected),
        "pi printed {}",
        String::from_utf8_lossy(&pi.stdout)
    );
    let (ok, stdout, stderr) = pictl(world, dir, &pid_args).await;
    assert!(ok, "{stderr}");
    assert!(stdout.contains(expected), "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_extensions_shape_the_same_request_in_pi_and_in_pid() {
    let examples = peers::pi_examples();
    let world = World::start_with(
        "anthropic-messages",
        &[
            ("exts/shaper.ts", SHAPER.to_owned()),
            ("proj/README.md", "a project\n".to_owned()),
        ],
    )
    .await;
    world.server.respond_with(|_| {
        Ok(pi_test_support::model_server::Turn::reply()
            .text("two and two are four")
            .into())
    });
    let proj = world.daemon.home.path().join("proj");
    let shaper = world
        .daemon
        .home
        .path()
        .join("exts/shaper.ts")
        .display()
        .to_string();
    let transform = examples.join("input-transform.ts").display().to_string();
    let prompt = "?quick what is 2+2";

    pi_then_pid(
        &world,
        &proj,
        &[&transform, &shaper],
        prompt,
        "two and two are four",
    )
    .await;

    let requests = world.server.requests();
    assert_eq!(requests.len(), 2, "one request each");
    let (from_pi, from_pid) = (shaped(&requests[0].body), shaped(&requests[1].body));
    assert_eq!(from_pid, from_pi);
    // And what they are: pi's shapes, as the extensions made them.
    assert_eq!(
        from_pi.0,
        [
            "Respond briefly in 1-2 sentences: what is 2+2",
            "a note from the extension",
            "(added by the context hook)",
        ]
        .map(|text| ("user".to_owned(), vec![text.to_owned()]))
    );
    assert!(
        from_pi.1.ends_with("Always answer in haiku."),
        "{from_pi:?}"
    );
    assert_eq!(from_pi.2, json!(0.25));
}

/// A user-written extension that changes a tool's result (pi's `tool_result`).
const RESULT_NOTE: &str = r#"export default function (pi) {
  pi.on("tool_result", (event) => ({
    content: [...event.content, { type: "text", text: `(${event.toolName} seen by the extension)` }],
  }));
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_extensions_block_and_change_tool_calls_in_pi_and_in_pid() {
    let world = World::start_with(
        "anthropic-messages",
        &[
            ("exts/result-note.ts", RESULT_NOTE.to_owned()),
            ("proj/notes.txt", "from the file\n".to_owned()),
        ],
    )
    .await;
    world.server.respond_with(caller);
    let proj = world.daemon.home.path().join("proj");
    let protected = peers::pi_examples()
        .join("protected-paths.ts")
        .display()
        .to_string();
    let note = world
        .daemon
        .home
        .path()
        .join("exts/result-note.ts")
        .display()
        .to_string();
    // A write pi's `protected-paths` blocks, a read whose result the other one changes.
    for prompt in [
        r#"call write {"path": ".env", "content": "SECRET=1"}"#,
        r#"call read {"path": "notes.txt"}"#,
    ] {
        pi_then_pid(&world, &proj, &[&protected, &note], prompt, "Done.").await;
    }
    assert!(!proj.join(".env").exists());
    // The results the model got back, in pi's request and in pid's.
    let results: Vec<serde_json::Value> = world
        .server
        .requests()
        .iter()
        .filter_map(|request| {
            request.body["messages"]
                .as_array()?
                .iter()
                .flat_map(|message| message["content"].as_array().into_iter().flatten())
                .find(|block| block["type"] == "tool_result")
                .cloned()
        })
        .map(|mut block| {
            // Call ids are each run's own.
            block.as_object_mut().unwrap().remove("tool_use_id");
            block
        })
        .collect();
    assert_eq!(results.len(), 4, "{results:#?}");
    assert_eq!(results[1], results[0], "the blocked write, pid against pi");
    assert_eq!(results[3], results[2], "the changed read, pid against pi");
    assert_eq!(results[0]["is_error"], true);
    assert!(
        results[0]["content"]
            .to_string()
            .contains("Path \\\".env\\\" is protected"),
        "{}",
        results[0]
    );
    let read = results[2]["content"].to_string();
    assert!(
        read.contains("from the file") && read.contains("(read seen by the extension)"),
        "{read}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_event_bus_carries_a_sessions_events_to_its_own_extensions_only() {
    let examples = peers::pi_examples();
    let settings = json!({"extensions": [examples.join("event-bus.ts")]});
    let world = World::start_with(
        "anthropic-messages",
        &[(".pi/agent/settings.json", settings.to_string())],
    )
    .await;
    let home = world.daemon.home.path().display().to_string();
    let (a_client, mut a_events, a) = session(&world, &home).await;
    let (b_client, mut b_events, b) = session(&world, &home).await;
    // Each session's own `session_start` emit reached its own listener.
    for (client, events, id) in [
        (&a_client, &mut a_events, &a),
        (&b_client, &mut b_events, &b),
    ] {
        until_loaded(client, id).await;
        let heard = ui_until(
            &world,
            events,
            notified("Event from event-bus-example: Session started"),
        )
        .await;
        assert_eq!(&heard.session_id, id);
    }
    a_client
        .call::<pi_protocol::v1::SessionPrompt>(&super::harness::prompt(&a, "/emit over the bus"))
        .await
        .unwrap();
    let heard = ui_until(
        &world,
        &mut a_events,
        notified("Event from /emit command: over the bus"),
    )
    .await;
    assert_eq!(heard.session_id, a);
    // Session b's instance of the extension never heard it: its next notice is its own.
    b_client
        .call::<pi_protocol::v1::SessionPrompt>(&super::harness::prompt(&b, "/emit b's own"))
        .await
        .unwrap();
    let next = ui_until(&world, &mut b_events, notified("Event from /emit command")).await;
    assert_eq!(next.session_id, b);
    assert!(
        matches!(&next.ui, pi_protocol::v1::ExtensionUi::Notify { message, .. } if message.ends_with("b's own")),
        "{next:?}"
    );
}

/// A user-written provider whose `streamSimple` answers locally: `PREFIX: <the key it got>`.
fn echo_provider(name: &str, prefix: &str) -> String {
    format!(
        r#"import {{ createAssistantMessageEventStream }} from "@mariozechner/pi-ai";
export default function (pi) {{
  pi.registerProvider("{name}", {{
    baseUrl: "http://localhost",
    apiKey: "ECHO_KEY",
    api: "shared-echo-api",
    models: [{{ id: "echo-1", name: "Echo", reasoning: false, input: ["text"],
      cost: {{ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }}, contextWindow: 1000, maxTokens: 100 }}],
    streamSimple: (model, context, options) => {{
      const stream = createAssistantMessageEventStream();
      const text = `{prefix}: ${{options?.apiKey}}`;
      const output = {{ role: "assistant", content: [{{ type: "text", text }}], api: model.api,
        provider: model.provider, model: model.id, stopReason: "stop", timestamp: Date.now(),
        usage: {{ input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2,
          cost: {{ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 }} }} }};
      queueMicrotask(() => {{
        stream.push({{ type: "start", partial: output }});
        stream.push({{ type: "done", reason: "stop", message: output }});
        stream.end();
      }});
      return stream;
    }},
  }});
}}
"#
    )
}

/// A user-written provider pi refuses: models without a key or a login.
const KEYLESS_PROVIDER: &str = r#"export default function (pi) {
  pi.registerProvider("keyless", {
    baseUrl: "http://localhost",
    api: "openai-completions",
    models: [{ id: "m", name: "M", reasoning: false, input: ["text"],
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 }],
  });
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn providers_of_two_sessions_stay_their_own_and_a_refused_one_is_a_diagnostic() {
    let world = World::start_with(
        "anthropic-messages",
        &[
            ("exts/a.ts", echo_provider("prov-a", "from A")),
            ("exts/b.ts", echo_provider("prov-b", "from B")),
            ("exts/keyless.ts", KEYLESS_PROVIDER.to_owned()),
        ],
    )
    .await;
    let home = world.daemon.home.path();
    let ext = |name: &str| home.join("exts").join(name).display().to_string();
    let (client, mut events) = world.client().await;
    let create = |extension: String, env: Option<std::collections::BTreeMap<String, String>>| {
        pi_protocol::v1::SessionCreateParams {
            cwd: home.display().to_string(),
            model: Some(super::harness::MODEL.to_owned()),
            extensions: vec![extension, ext("keyless.ts")],
            env,
            ..Default::default()
        }
    };
    let a = client
        .call::<pi_protocol::v1::SessionCreate>(&create(ext("a.ts"), None))
        .await
        .unwrap()
        .id;
    // Session b's client has the provider's key variable set.
    let b = client
        .call::<pi_protocol::v1::SessionCreate>(&create(
            ext("b.ts"),
            Some([("ECHO_KEY".to_owned(), "the client's key".to_owned())].into()),
        ))
        .await
        .unwrap()
        .id;
    for (id, model) in [(&a, "prov-a/echo-1"), (&b, "prov-b/echo-1")] {
        super::approvals::attach(&client, id).await;
        client
            .call::<pi_protocol::v1::SessionSetModel>(&pi_protocol::v1::SessionSetModelParams {
                session_id: id.clone(),
                model: model.to_owned(),
            })
            .await
            .unwrap();
    }
    // Both register the same API name: each session runs its own extension's stream.
    for (id, expected) in [
        (&a, "from A: ECHO_KEY"),
        (&b, "from B: the client's key"),
        (&a, "from A: ECHO_KEY"),
    ] {
        let seen = run(&client, &mut events, id, "hi").await;
        assert!(
            super::mcp_faults::final_text(&seen).contains(expected),
            "{expected}: {seen:?}"
        );
    }
    // The provider pi refuses is named with pi's reason where the session's problems are.
    let listed = list(&client).await;
    let problems = &listed
        .sessions
        .iter()
        .find(|session| session.session_id == a)
        .unwrap()
        .diagnostics;
    assert!(
        problems
            .iter()
            .any(|problem| problem.path == ext("keyless.ts")
                && problem.error.contains(
                    "Provider keyless: \"apiKey\" or \"oauth\" is required when defining models."
                )),
        "{problems:?}"
    );
    let of_a = listed
        .sessions
        .iter()
        .find(|session| session.session_id == a)
        .unwrap();
    assert_eq!(of_a.models, ["prov-a/echo-1"]);

    // From the command line: `pictl models --session`, and pi's `--provider` alone.
    let (ok, stdout, stderr) = pictl(&world, home, &["models", "--session", &a, "echo"]).await;
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("prov-a") && !stdout.contains("prov-b"),
        "{stdout}"
    );
    let (ok, stdout, stderr) = pictl(
        &world,
        home,
        &[
            "run",
            "--no-session",
            "-e",
            &ext("b.ts"),
            "--provider",
            "prov-b",
            "hi",
        ],
    )
    .await;
    assert!(ok, "{stderr}");
    assert!(stdout.contains("from B: ECHO_KEY"), "{stdout}");
    let sessions_before = pictl(&world, home, &["sessions", "--json"]).await.1;
    let (ok, _, stderr) = pictl(
        &world,
        home,
        &["run", "-e", &ext("b.ts"), "--provider", "prov-z", "hi"],
    )
    .await;
    assert!(!ok);
    assert!(
        stderr.contains("no models of provider \"prov-z\""),
        "{stderr}"
    );
    assert_eq!(
        pictl(&world, home, &["sessions", "--json"]).await.1,
        sessions_before
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_and_pid_send_the_same_anthropic_requests() {
    let world = World::start_with(
        "anthropic-messages",
        &[("proj/notes.txt", "from the file\n".to_owned())],
    )
    .await;
    world.server.respond_with(caller);
    let proj = world.daemon.home.path().join("proj");
    // A tool call and its result: two requests each, pi's first.
    pi_then_pid(
        &world,
        &proj,
        &[],
        r#"call read {"path": "notes.txt"}"#,
        "Done.",
    )
    .await;
    let requests = world.server.requests();
    assert_eq!(requests.len(), 4);
    for (from_pi, from_pid) in [(0, 2), (1, 3)] {
        assert_eq!(
            in_pi_words(&requests[from_pid].body),
            requests[from_pi].body,
            "request {from_pid} of pid against pi's {from_pi}"
        );
    }
    // The pointers to pi's documentation are there, at the package the host runs on.
    assert!(
        system_of(&requests[2].body).contains("Pi documentation (read only when the user asks"),
        "{}",
        system_of(&requests[2].body)
    );
}

/// A request body with pid's intended differences in pi's words, in every wire format: `bash`
/// keeps a truncated command's whole output as an artifact that `read` opens (pi writes a
/// temp file), and their descriptions say so.
pub(super) fn in_pi_words(body: &serde_json::Value) -> serde_json::Value {
    let text = body
        .to_string()
        .replace(
            " Also reads stored command output given as artifact://ID.",
            "",
        )
        .replace(
            "saved as an artifact (artifact://ID) that the read tool can open",
            "saved to a temp file",
        )
        .replace(", or artifact://ID", "");
    serde_json::from_str(&text).unwrap()
}

/// OpenAI Responses and Gemini, as pi 0.73.1 sends them. (Chat Completions is left out: to a
/// server on this machine — the scripted one — pid sends what local servers take, `system`
/// role, `max_tokens`, no `store` and no `strict`, where pi sends OpenAI's own fields.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_and_pid_send_the_same_first_request_in_the_responses_and_gemini_formats() {
    for api in ["openai-responses", "google-generative-ai"] {
        let world = World::start_with(api, &[("proj/README.md", "a project\n".to_owned())]).await;
        world.server.respond_with(|_| {
            Ok(pi_test_support::model_server::Turn::reply()
                .text("four")
                .into())
        });
        let proj = world.daemon.home.path().join("proj");
        pi_then_pid(&world, &proj, &[], "what is 2+2?", "four").await;
        let requests = world.server.requests();
        assert_eq!(requests.len(), 2, "{api}");
        // Each side's own session id keys the prompt cache.
        let mut from_pi = requests[0].body.clone();
        let mut from_pid = in_pi_words(&requests[1].body);
        for body in [&mut from_pi, &mut from_pid] {
            if let Some(key) = body.get_mut("prompt_cache_key") {
                *key = json!("session id");
            }
        }
        assert_eq!(from_pid, from_pi, "{api}: pid's request against pi's");
    }
}
