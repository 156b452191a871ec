//! `pictl sessions`, `pictl session ...` and `pictl models`: human and `--json` output,
//! snapshotted with ids, times and paths redacted.

use pi_test_support::model_server::Turn;

use super::world::{MODEL, World, assert_exit, json_lines, stderr, stdout};

/// A world with one session that holds one exchange; returns the session id.
async fn world_with_session() -> (World, String) {
    let world = World::start().await;
    world.server.push(Turn::reply().text("The answer is 42."));
    let output = world
        .pictl(&["run", "--json", "--model", MODEL, "what is the answer?"])
        .await;
    assert_exit(&output, 0);
    let id = json_lines(&output)[0]["id"].as_str().unwrap().to_owned();
    (world, id)
}

async fn ok(world: &World, args: &[&str]) -> String {
    let output = world.pictl(args).await;
    assert_exit(&output, 0);
    assert_eq!(stderr(&output), "", "quiet on success");
    stdout(&output)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_lists_as_a_table_or_json_lines() {
    let (world, id) = world_with_session().await;
    let table = ok(&world, &["sessions"]).await;
    insta::assert_snapshot!("sessions_table", world.redact(&table));
    let json = ok(&world, &["sessions", "--json"]).await;
    insta::assert_snapshot!("sessions_json", world.redact(&json));
    assert!(json.contains(&id));

    // pi's own session files of this directory are listed with them (by pi's id, which
    // `--session` opens), until one is opened in the daemon.
    pi_test_support::pi_session::write(
        &world.daemon.home.path().join(".pi/agent"),
        world.workdir.path(),
        "c0ffee00-1111",
        "a question from pi",
    );
    let table = ok(&world, &["sessions"]).await;
    let pi_row = table
        .lines()
        .find(|line| line.starts_with("c0ffee00-1111"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(pi_row.contains("a question from pi"), "{pi_row}");
    assert!(
        pi_row.contains("pi's file (--session ID opens it)"),
        "{pi_row}"
    );
    let json = ok(&world, &["sessions", "--json"]).await;
    assert!(json.contains("\"piFile\""), "{json}");

    // Another directory has none; --all shows every directory (the daemon's and pi's).
    let elsewhere = tempfile::tempdir().unwrap();
    let other = elsewhere.path().display().to_string();
    assert_eq!(ok(&world, &["sessions", "--cwd", &other]).await, "");
    assert_eq!(
        ok(&world, &["sessions", "--all", "--json"])
            .await
            .lines()
            .count(),
        2
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn show_rename_label_and_rm() {
    let (world, id) = world_with_session().await;
    let prefix = &id[..8];
    assert_eq!(
        ok(&world, &["session", "rename", prefix, "answers"]).await,
        ""
    );

    let shown = ok(&world, &["session", "show", &id, "--json"]).await;
    let value: serde_json::Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(value["info"]["name"], "answers");
    let user_entry = value["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|entry| entry["type"] == "message" && entry["message"]["role"] == "user")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        ok(
            &world,
            &["session", "label", prefix, &user_entry, "question"]
        )
        .await,
        ""
    );

    let human = ok(&world, &["session", "show", prefix]).await;
    insta::assert_snapshot!("session_show", world.redact(&human));
    let json = ok(&world, &["session", "show", prefix, "--json"]).await;
    let mut value: serde_json::Value = serde_json::from_str(&json).unwrap();
    // The prompt text belongs to the coding layer's own snapshots.
    assert!(
        value["systemPrompt"]
            .as_str()
            .unwrap()
            .contains("Current working directory")
    );
    value["systemPrompt"] = serde_json::json!("[SYSTEM PROMPT]");
    insta::assert_snapshot!("session_show_json", world.redact(&value.to_string()));

    let missing = world.pictl(&["session", "show", "ffffffff"]).await;
    assert_exit(&missing, 1);
    assert_eq!(
        stderr(&missing),
        "pictl: error: no session matches \"ffffffff\"\nhint: `pictl sessions --all` lists the stored sessions\n"
    );

    assert_eq!(ok(&world, &["session", "rm", prefix]).await, "");
    assert_eq!(ok(&world, &["sessions", "--json"]).await, "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fork_export_and_import() {
    let (world, id) = world_with_session().await;
    let forked = ok(&world, &["session", "fork", &id, "--json"]).await;
    insta::assert_snapshot!("session_fork_json", world.redact(&forked));
    let forked: serde_json::Value = serde_json::from_str(&forked).unwrap();
    assert_eq!(forked["text"], "what is the answer?");
    assert_ne!(forked["session"]["id"], id.as_str());

    let exported = ok(&world, &["session", "export", &id]).await;
    insta::assert_snapshot!("session_export_jsonl", world.redact(&exported));
    assert_eq!(
        exported
            .lines()
            .next()
            .map(|line| line.contains("\"type\":\"session\"")),
        Some(true)
    );

    let file = world.workdir.path().join("export.jsonl");
    assert_eq!(
        ok(
            &world,
            &["session", "export", &id, "--jsonl", "-o", "export.jsonl"]
        )
        .await,
        ""
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), exported);
    assert_eq!(
        ok(
            &world,
            &["session", "export", &id, "--html", "-o", "page.html"]
        )
        .await,
        ""
    );
    let html = std::fs::read_to_string(world.workdir.path().join("page.html")).unwrap();
    assert!(html.contains("The answer is 42."));

    let imported = ok(&world, &["session", "import", "export.jsonl"]).await;
    let imported_id = imported.trim();
    assert_eq!(
        imported_id.len(),
        36,
        "prints the new session's id: {imported}"
    );
    let json = ok(&world, &["session", "import", "export.jsonl", "--json"]).await;
    insta::assert_snapshot!("session_import_json", world.redact(&json));
    assert_eq!(
        ok(&world, &["sessions", "--json"]).await.lines().count(),
        4,
        "original, fork and two imports"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn models_lists_key_status() {
    let world = World::start().await;
    let table = ok(&world, &["models", "scripted"]).await;
    insta::assert_snapshot!("models_table", world.redact(&table));
    let json = ok(&world, &["models", "scripted", "--json"]).await;
    insta::assert_snapshot!("models_json", world.redact(&json));
    let available = ok(&world, &["models", "--available", "--json"]).await;
    assert!(
        available
            .lines()
            .all(|line| line.contains("\"hasKey\":true"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stats_sums_tokens_and_cost_by_model_and_day() {
    let world = World::start().await;
    let usage = pi_test_support::model_server::ScriptUsage {
        input: 1000,
        output: 200,
        cache_read: 300,
        cache_write: 0,
        reasoning: 0,
    };
    world.server.push(Turn::reply().text("One.").usage(usage));
    world.server.push(Turn::reply().text("Two.").usage(usage));
    assert_exit(&world.pictl(&["run", "--model", MODEL, "a", "b"]).await, 0);
    let json = ok(&world, &["stats", "--json"]).await;
    insta::assert_snapshot!("stats_json", world.redact(&json));
    let table = ok(&world, &["stats"]).await;
    insta::assert_snapshot!("stats_table", world.redact(&table));
    let future = ok(&world, &["stats", "--since", "2999-01-01", "--json"]).await;
    assert!(future.contains("\"messages\":0"), "{future}");
    let bad = world.pictl(&["stats", "--since", "yesterday"]).await;
    assert_exit(&bad, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_tree_shows_subagents_under_their_parent() {
    let world = World::start().await;
    // The parent delegates one task; the child answers; the parent finishes.
    world.server.push(Turn::reply().tool_call(
        "t1",
        "task",
        serde_json::json!({"context": "", "tasks": [{"name": "worker", "task": "say hi"}]}),
    ));
    world.server.push(Turn::reply().text("hi"));
    world.server.push(Turn::reply().text("Done."));
    let output = world
        .pictl(&[
            "run",
            "--json",
            "--model",
            MODEL,
            "--tools",
            "read,task",
            "delegate",
        ])
        .await;
    assert_exit(&output, 0);
    let parent = json_lines(&output)[0]["id"].as_str().unwrap().to_owned();

    let tree = ok(&world, &["sessions", "--tree"]).await;
    let lines: Vec<&str> = tree.lines().collect();
    assert_eq!(lines.len(), 3, "{tree}");
    assert!(lines[1].starts_with(&parent), "{tree}");
    assert!(lines[2].contains("└ worker"), "{tree}");
    // Without --tree the child is a row like any other, newest first.
    let flat = ok(&world, &["sessions"]).await;
    assert!(!flat.contains('└'), "{flat}");
    let json = ok(&world, &["sessions", "--json"]).await;
    let child = json_lines_of(&json)
        .into_iter()
        .find(|session| session["taskName"] == "worker")
        .expect("the child is listed with its task name");
    assert_eq!(child["parentSessionId"], parent.as_str());
}

fn json_lines_of(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// What bash asks `pictl` for when the user presses Tab after `words` (the last one being
/// completed), through `source <(COMPLETE=bash pictl)`'s protocol: the candidates.
async fn tab(world: &World, words: &[&str]) -> Vec<String> {
    let mut args = vec!["--", "pictl"];
    args.extend(words);
    let output = world
        .command(&args)
        .env("COMPLETE", "bash")
        .env("_CLAP_COMPLETE_INDEX", words.len().to_string())
        .env("_CLAP_COMPLETE_COMP_TYPE", "9")
        .env("_CLAP_COMPLETE_SPACE", "true")
        .env("_CLAP_IFS", "\n")
        .output()
        .await
        .unwrap();
    assert_exit(&output, 0);
    stdout(&output).lines().map(str::to_owned).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tab_completes_model_ids_and_session_ids_from_the_daemon() {
    let (world, id) = world_with_session().await;
    let models = tab(&world, &["run", "--model", "scripted/"]).await;
    assert_eq!(models, ["scripted/scripted-model"]);
    let sessions = tab(&world, &["attach", &id[..4]]).await;
    assert_eq!(sessions, std::slice::from_ref(&id));
    let sessions = tab(&world, &["--session", ""]).await;
    assert!(sessions.contains(&id), "{sessions:?}");
    // Without a daemon there is nothing to offer, and none is started.
    let home = super::Home::new();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_pictl"))
        .args(["--", "pictl", "attach", ""])
        .env("PI_HOME", home.path())
        .env("COMPLETE", "bash")
        .env("_CLAP_COMPLETE_INDEX", "2")
        .env("_CLAP_COMPLETE_COMP_TYPE", "9")
        .env("_CLAP_COMPLETE_SPACE", "true")
        .env("_CLAP_IFS", "\n")
        .output()
        .unwrap();
    assert!(output.status.success());
    assert!(
        !home.path().join("run/pid.sock").exists(),
        "no daemon was started"
    );
}
