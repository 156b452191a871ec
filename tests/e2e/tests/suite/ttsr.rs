//! oh-my-pi's time-traveling stream rules on the real `pid`: a rule in each scope (text,
//! thinking, a tool's arguments on matching paths) interrupts the streaming reply; the next
//! request carries the rule as a hidden injection and not the interrupted reply; each rule
//! fires once per session; a rule that does not interrupt in a scope reminds instead.

use pi_protocol::v1::SessionEvent;
use pi_test_support::model_server::{RecordedRequest, Turn};
use serde_json::json;

use super::harness::World;
use super::mcp_faults::{run, session};

fn rule(condition: &str, scope: &str, extra: &str, body: &str) -> String {
    format!("---\ncondition: \"{condition}\"\nscope: \"{scope}\"\n{extra}---\n{body}\n")
}

/// The text of every message of a request, in order.
fn messages(request: &RecordedRequest) -> String {
    request.body["messages"].to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_rules_interrupt_in_each_scope_and_the_next_request_carries_the_rule() {
    let world = World::start_with(
        "anthropic-messages",
        &[
            (
                "proj/.pi/settings.json",
                json!({"ompTools": ["todo"]}).to_string(),
            ),
            (
                "proj/.pi/rules/no-ai-talk.md",
                rule(
                    "(?i)as an ai",
                    "text",
                    "",
                    "Never say \\\"as an AI\\\"; just answer.",
                ),
            ),
            (
                "proj/.pi/rules/no-shortcuts.md",
                rule(
                    "shortcut",
                    "thinking",
                    "",
                    "Do not plan shortcuts; do the work.",
                ),
            ),
            (
                "proj/.pi/rules/no-unwrap.md",
                rule(
                    "\\\\.unwrap\\\\(\\\\)",
                    "tool:write(**/*.rs)",
                    "",
                    "Use ? instead of unwrap() in library code.",
                ),
            ),
            (
                "proj/.pi/rules/no-force.md",
                rule(
                    "--force",
                    "tool:bash",
                    "interruptMode: never\n",
                    "Say why before forcing anything.",
                ),
            ),
            (
                "proj/.pi/rules/no-todo.md",
                rule(
                    "TODO",
                    "text",
                    "interruptMode: never\n",
                    "Leave no TODO in answers.",
                ),
            ),
        ],
    )
    .await;
    let project = world.daemon.home.path().join("proj");
    let (client, mut events, id) = session(&world, &project.display().to_string()).await;

    // Text: the reply is cut where the rule matched; the run goes on with the injection.
    world.server.push(
        Turn::reply()
            .text("Sure. As an AI model I cannot really say, but here is a long answer that never finishes streaming")
            .delta_chars(3),
    );
    world.server.push(Turn::reply().text("Here is the answer."));
    let seen = run(&client, &mut events, &id, "explain it").await;
    let requests = world.server.requests();
    let after = messages(requests.last().unwrap());
    assert!(
        after.contains("<system-interrupt reason=\\\"rule_violation\\\" rule=\\\"no-ai-talk\\\""),
        "{after}"
    );
    assert!(after.contains("just answer."), "{after}");
    assert!(
        !after.contains("As an AI model"),
        "the interrupted reply is gone: {after}"
    );
    assert!(!after.contains("never finishes"), "{after}");
    let aborted = seen.iter().any(|event| {
        matches!(&event.event, SessionEvent::MessageEnd { message, .. }
            if serde_json::to_value(message).unwrap()["errorMessage"] == "Interrupted by the rule no-ai-talk")
    });
    assert!(aborted, "clients see the reply end, interrupted");

    // Once per session: the same words again stream through, in one request.
    let before = world.server.requests().len();
    world.server.push(Turn::reply().text("As an AI, fine."));
    let seen = run(&client, &mut events, &id, "again").await;
    assert_eq!(world.server.requests().len(), before + 1);
    assert!(!seen.iter().any(|event| {
        matches!(&event.event, SessionEvent::MessageEnd { message, .. }
            if serde_json::to_value(message).unwrap()["stopReason"] == "aborted")
    }));
    let count = world.server.requests().len();

    // Thinking.
    world.server.push(
        Turn::reply()
            .thinking("Let me take a shortcut here and skip the tests")
            .text("Done quickly.")
            .delta_chars(4),
    );
    world.server.push(Turn::reply().text("Done properly."));
    run(&client, &mut events, &id, "fix it").await;
    let requests = world.server.requests();
    assert_eq!(requests.len(), count + 2);
    let after = messages(requests.last().unwrap());
    assert!(after.contains("rule=\\\"no-shortcuts\\\""), "{after}");
    assert!(!after.contains("Done quickly"), "{after}");

    // A tool's arguments on a matching path.
    world.server.push(
        Turn::reply()
            .tool_call(
                "w1",
                "write",
                json!({"path": "src/lib.rs", "content": "fn f() { x.unwrap() }"}),
            )
            .delta_chars(5),
    );
    world.server.push(Turn::reply().text("Rewritten with ?."));
    run(&client, &mut events, &id, "write the library").await;
    let after = messages(world.server.requests().last().unwrap());
    assert!(after.contains("rule=\\\"no-unwrap\\\""), "{after}");
    assert!(
        !project.join("src/lib.rs").exists(),
        "the interrupted call never ran"
    );

    // A rule that never interrupts reminds after the reply.
    world.server.push(Turn::reply().text("Plan: TODO later."));
    world
        .server
        .push(Turn::reply().text("Plan without loose ends."));
    run(&client, &mut events, &id, "plan it").await;
    let requests = world.server.requests();
    let after = messages(requests.last().unwrap());
    assert!(
        after.contains("<system-reminder rule=\\\"no-todo\\\""),
        "{after}"
    );
    assert!(
        after.contains("Plan: TODO later."),
        "the reply stays: {after}"
    );

    // A tool call's reminder comes first in that call's result; the call runs.
    world.server.push(
        Turn::reply()
            .tool_call("b1", "bash", json!({"command": "echo pushed --force"}))
            .delta_chars(4),
    );
    world.server.push(Turn::reply().text("Pushed."));
    run(&client, &mut events, &id, "push it").await;
    let request = world.server.requests().last().unwrap().clone();
    let result = request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|message| message["content"].as_array().cloned().unwrap_or_default())
        .find(|block| block["type"] == "tool_result" && block["tool_use_id"] == "b1")
        .expect("the bash call's result");
    let text = result["content"].to_string();
    let reminder = text
        .find("<system-reminder rule=\\\"no-force\\\"")
        .unwrap_or_else(|| panic!("{text}"));
    let output = text
        .find("pushed --force")
        .unwrap_or_else(|| panic!("{text}"));
    assert!(reminder < output, "the reminder comes first: {text}");
}

/// `pictl ARGS` in `dir`: (exit code, stdout, stderr).
async fn pictl(
    world: &World,
    dir: &std::path::Path,
    args: &[&str],
) -> (Option<i32>, String, String) {
    let out = tokio::process::Command::new(pi_test_support::workspace_binary("pictl"))
        .args(args)
        .envs(world.daemon.env())
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pictl_rules_test_says_what_would_fire_and_how() {
    let world = World::start_with(
        "anthropic-messages",
        &[
            (
                "proj/.pi/settings.json",
                json!({"ompTools": ["todo"]}).to_string(),
            ),
            (
                "proj/.pi/rules/no-ai-talk.md",
                rule("(?i)as an ai", "text", "", "Just answer."),
            ),
            (
                "proj/.pi/rules/no-force.md",
                rule("--force", "tool:bash", "interruptMode: never\n", "Say why."),
            ),
            ("proj/draft.md", rule("([", "text", "", "Broken.")),
            (
                "proj/book.md",
                "---\ndescription: style\n---\nWrite short sentences.\n".to_owned(),
            ),
        ],
    )
    .await;
    let project = world.daemon.home.path().join("proj");

    // One file: fires and interrupts (exit 0).
    let (code, stdout, stderr) = pictl(
        &world,
        &project,
        &[
            "rules",
            "test",
            ".pi/rules/no-ai-talk.md",
            "Well, as an AI I think",
        ],
    )
    .await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains("no-ai-talk") && stdout.contains("interrupts"),
        "{stdout}"
    );

    // Nothing fires: exit 1, the rule listed as not firing.
    let (code, stdout, _) = pictl(
        &world,
        &project,
        &[
            "rules",
            "test",
            ".pi/rules/no-ai-talk.md",
            "Here is the answer.",
        ],
    )
    .await;
    assert_eq!(code, Some(1));
    assert!(
        stdout.contains("no-ai-talk") && stdout.contains(" - "),
        "{stdout}"
    );

    // Every project rule, as a tool's arguments: the bash rule reminds; JSON out.
    let (code, stdout, stderr) = pictl(
        &world,
        &project,
        &[
            "rules",
            "test",
            "--all",
            "--source",
            "tool:bash",
            "--json",
            r#"{"command": "git push --force"}"#,
        ],
    )
    .await;
    assert_eq!(code, Some(0), "{stderr}");
    let tested: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let rules = tested["rules"].as_array().unwrap();
    assert_eq!(rules.len(), 2, "{stdout}");
    let force = rules
        .iter()
        .find(|rule| rule["name"] == "no-force")
        .unwrap();
    assert_eq!(force["fires"], true);
    assert_eq!(force["interrupts"], false);
    let talk = rules
        .iter()
        .find(|rule| rule["name"] == "no-ai-talk")
        .unwrap();
    assert_eq!(
        talk["fires"], false,
        "a text rule does not look at tool arguments"
    );

    // A broken condition, a rulebook rule, a missing file and a bad source are explained.
    let (code, _, stderr) = pictl(&world, &project, &["rules", "test", "draft.md", "(["]).await;
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains("is not a regular expression; the rule is skipped"),
        "{stderr}"
    );
    let (_, _, stderr) = pictl(&world, &project, &["rules", "test", "book.md", "text"]).await;
    assert!(
        stderr.contains("has no condition, so it never fires on the stream"),
        "{stderr}"
    );
    let (code, _, stderr) = pictl(&world, &project, &["rules", "test", "gone.md", "text"]).await;
    assert_eq!(code, Some(2), "a bad call, not \"nothing fires\": {stderr}");
    assert!(stderr.contains("no rule file at"), "{stderr}");
    let (code, _, stderr) = pictl(
        &world,
        &project,
        &["rules", "test", "--source", "stdout", "book.md", "text"],
    )
    .await;
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("source \"stdout\" is not text, thinking or tool:NAME"),
        "{stderr}"
    );
    let (code, _, stderr) = pictl(
        &world,
        &project,
        &["rules", "test", "--all", "book.md", "text"],
    )
    .await;
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("give a rule FILE or --all, not both"),
        "{stderr}"
    );
}
