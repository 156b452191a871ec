//! Language servers on the real `pid` with real servers from npm (pyright,
//! typescript-language-server; installed by `tests/install-peers`): the model's `lsp` tool
//! finds definitions and references across files, hovers, lists symbols and renames across
//! files; a `write` that introduces a type error comes back with it; sessions in one root
//! share one server process.

use std::collections::BTreeMap;
use std::path::Path;

use pi_client::{Client, Notifications};
use pi_protocol::v1::{SessionAttach, SessionAttachParams, SessionCreate, SessionCreateParams};
use pi_test_support::peers;
use serde_json::json;

use super::harness::{MODEL, World};
use super::mcp_faults::{caller, run, tool_results};

/// A session in `cwd` with the `lsp` tool, its `PATH` reaching the npm peers' bins.
async fn lsp_session(world: &World, cwd: &Path) -> (Client, Notifications, String) {
    let bin = peers::npm_bin("pyright-langserver")
        .parent()
        .expect("a bin directory")
        .to_path_buf();
    let mut env: BTreeMap<String, String> = world.daemon.env().into_iter().collect();
    let path = std::env::var("PATH").unwrap_or_default();
    env.insert("PATH".to_owned(), format!("{}:{path}", bin.display()));
    let (client, events) = world.client().await;
    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: cwd.display().to_string(),
            model: Some(MODEL.to_owned()),
            env: Some(env),
            tools: Some(
                ["read", "bash", "edit", "write", "lsp"]
                    .map(str::to_owned)
                    .to_vec(),
            ),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: session.id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    (client, events, session.id)
}

/// Runs one `lsp` call; its result text and whether it failed.
async fn lsp(
    client: &Client,
    events: &mut Notifications,
    id: &str,
    args: serde_json::Value,
) -> (String, bool) {
    let seen = run(client, events, id, &format!("call lsp {args}")).await;
    let (_, content, is_error, _) = tool_results(&seen).remove(0);
    let content: serde_json::Value = serde_json::from_str(&content).unwrap();
    (
        content[0]["text"].as_str().unwrap_or_default().to_owned(),
        is_error,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyright_finds_renames_and_reports_type_errors_for_sessions_sharing_it() {
    let world = World::start_with(
        "anthropic-messages",
        &[
            (
                "py/pyproject.toml",
                "[project]\nname = \"demo\"\n".to_owned(),
            ),
            (
                "py/mathlib.py",
                "def add(a: int, b: int) -> int:\n    return a + b\n".to_owned(),
            ),
            (
                "py/main.py",
                "from mathlib import add\n\nresult = add(1, 2)\nprint(result)\n".to_owned(),
            ),
        ],
    )
    .await;
    world.server.respond_with(caller);
    let root = world.daemon.home.path().join("py");
    let (client, mut events, id) = lsp_session(&world, &root).await;

    let (definition, failed) = lsp(
        &client,
        &mut events,
        &id,
        json!({"action": "definition", "file": "main.py", "line": 3, "symbol": "add"}),
    )
    .await;
    assert!(!failed, "{definition}");
    assert!(
        definition.contains("mathlib.py:1:5  def add(a: int, b: int) -> int:"),
        "{definition}"
    );

    let (references, _) = lsp(
        &client,
        &mut events,
        &id,
        json!({"action": "references", "file": "mathlib.py", "line": 1, "symbol": "add"}),
    )
    .await;
    for expected in ["main.py:1:21", "main.py:3:10", "mathlib.py:1:5"] {
        assert!(references.contains(expected), "{expected} in {references}");
    }

    let (hover, _) = lsp(
        &client,
        &mut events,
        &id,
        json!({"action": "hover", "file": "main.py", "line": 3, "symbol": "add"}),
    )
    .await;
    assert!(
        hover.contains("def add(") && hover.contains("a: int") && hover.contains(") -> int"),
        "{hover}"
    );

    let (symbols, _) = lsp(
        &client,
        &mut events,
        &id,
        json!({"action": "symbols", "query": "add"}),
    )
    .await;
    assert!(symbols.contains("function add mathlib.py:1"), "{symbols}");

    // A `write` that breaks the types comes back with the error; the fix comes back clean.
    let seen = run(
        &client,
        &mut events,
        &id,
        &format!(
            "call write {}",
            json!({"path": "main.py", "content": "from mathlib import add\n\nresult: str = add(1, 2)\n"})
        ),
    )
    .await;
    let (_, written, _, _) = tool_results(&seen).remove(0);
    assert!(
        written.contains("Language server pyright reports:"),
        "{written}"
    );
    assert!(written.contains("main.py:3:15 error:"), "{written}");
    let seen = run(
        &client,
        &mut events,
        &id,
        &format!(
            "call write {}",
            json!({"path": "main.py", "content": "from mathlib import add\n\nresult: int = add(1, 2)\n"})
        ),
    )
    .await;
    let (_, fixed, _, _) = tool_results(&seen).remove(0);
    assert!(!fixed.contains("reports"), "{fixed}");
    let (clean, _) = lsp(
        &client,
        &mut events,
        &id,
        json!({"action": "diagnostics", "file": "main.py"}),
    )
    .await;
    assert_eq!(clean, "main.py: no errors or warnings");

    // Rename across files: the files change on disk and the diff comes back.
    let (renamed, failed) = lsp(
        &client,
        &mut events,
        &id,
        json!({"action": "rename", "file": "mathlib.py", "line": 1, "symbol": "add", "new_name": "plus"}),
    )
    .await;
    assert!(!failed, "{renamed}");
    assert!(renamed.starts_with("Renamed in 2 file(s)."), "{renamed}");
    assert!(
        renamed.contains("-def add(a: int, b: int) -> int:"),
        "{renamed}"
    );
    assert!(
        renamed.contains("+def plus(a: int, b: int) -> int:"),
        "{renamed}"
    );
    let main = std::fs::read_to_string(root.join("main.py")).unwrap();
    assert_eq!(
        main,
        "from mathlib import plus\n\nresult: int = plus(1, 2)\n"
    );

    // A second session in the root shares the server: the same process answers.
    let (status, _) = lsp(&client, &mut events, &id, json!({"action": "status"})).await;
    let (other, mut other_events, other_id) = lsp_session(&world, &root).await;
    let (hover, _) = lsp(
        &other,
        &mut other_events,
        &other_id,
        json!({"action": "hover", "file": "main.py", "line": 3, "symbol": "plus"}),
    )
    .await;
    assert!(hover.contains("def plus("), "{hover}");
    let (other_status, _) = lsp(
        &other,
        &mut other_events,
        &other_id,
        json!({"action": "status"}),
    )
    .await;
    let pid = |status: &str| {
        status
            .split_whitespace()
            .skip_while(|word| *word != "pid")
            .nth(1)
            .map(str::to_owned)
    };
    assert!(pid(&status).is_some(), "{status}");
    assert_eq!(
        pid(&status),
        pid(&other_status),
        "{status} / {other_status}"
    );
}

/// The children of process `pid`.
fn children(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|child| child.parse().ok())
        .collect()
}

async fn servers(client: &Client) -> Vec<pi_protocol::v1::LspServerStatus> {
    client
        .call::<pi_protocol::v1::LspList>(&pi_protocol::v1::LspListParams::default())
        .await
        .unwrap()
        .servers
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_reports_edit_errors_and_a_crashed_server_comes_back() {
    let world = World::start_with(
        "anthropic-messages",
        &[
            (
                "ts/tsconfig.json",
                r#"{"compilerOptions": {"strict": true, "target": "es2020", "module": "commonjs"}}"#
                    .to_owned(),
            ),
            (
                "ts/.pi/settings.json",
                r#"{"lsp": {"diagnosticsOnEdit": true}}"#.to_owned(),
            ),
            (
                "ts/src/math.ts",
                "export function add(a: number, b: number): number {\n  return a + b;\n}\n"
                    .to_owned(),
            ),
            (
                "ts/src/main.ts",
                "import { add } from \"./math\";\n\nconst total: number = add(1, 2);\nconsole.log(total);\n"
                    .to_owned(),
            ),
            ("other/main.go", "package main\n".to_owned()),
        ],
    )
    .await;
    world.server.respond_with(caller);
    let root = world.daemon.home.path().join("ts");
    let (client, mut events, id) = lsp_session(&world, &root).await;

    let (definition, failed) = lsp(
        &client,
        &mut events,
        &id,
        json!({"action": "definition", "file": "src/main.ts", "line": 3, "symbol": "add"}),
    )
    .await;
    assert!(!failed, "{definition}");
    assert!(
        definition
            .contains("src/math.ts:1:17  export function add(a: number, b: number): number {"),
        "{definition}"
    );

    // With `lsp.diagnosticsOnEdit`, an `edit` that breaks the types comes back with the error.
    let edit = |old: &str, new: &str| {
        format!(
            "call edit {}",
            json!({"path": "src/main.ts", "edits": [{"oldText": old, "newText": new}]})
        )
    };
    let seen = run(
        &client,
        &mut events,
        &id,
        &edit("total: number", "total: string"),
    )
    .await;
    let (_, edited, _, _) = tool_results(&seen).remove(0);
    assert!(
        edited.contains("Language server typescript reports:"),
        "{edited}"
    );
    assert!(
        edited.contains("src/main.ts:3:7 error: Type 'number' is not assignable to type 'string'."),
        "{edited}"
    );
    let seen = run(
        &client,
        &mut events,
        &id,
        &edit("total: string", "total: number"),
    )
    .await;
    let (_, fixed, _, _) = tool_results(&seen).remove(0);
    assert!(!fixed.contains("reports"), "{fixed}");

    // One server for the root, used by the session; killed, it comes back on the next use.
    let listed = servers(&client).await;
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0].name, "typescript");
    assert_eq!(listed[0].state, "ready");
    assert_eq!(listed[0].sessions, std::slice::from_ref(&id));
    let guard = listed[0].pid.expect("a running server has a process");
    for child in children(guard) {
        rustix::process::kill_process(
            rustix::process::Pid::from_raw(child as i32).unwrap(),
            rustix::process::Signal::KILL,
        )
        .unwrap();
    }
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    while servers(&client).await[0].state == "ready" {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the crash is noticed"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let failed_server = servers(&client).await.remove(0);
    assert!(
        failed_server
            .last_error
            .as_deref()
            .is_some_and(|error| error.contains("it starts again on the next use")),
        "{failed_server:?}"
    );
    let (hover, failed) = lsp(
        &client,
        &mut events,
        &id,
        json!({"action": "hover", "file": "src/main.ts", "line": 3, "symbol": "add"}),
    )
    .await;
    assert!(!failed, "{hover}");
    assert!(
        hover.contains("add(a: number, b: number): number"),
        "{hover}"
    );
    let back = servers(&client).await.remove(0);
    assert_eq!((back.state.as_str(), back.starts), ("ready", 2), "{back:?}");

    // A language without an installed server says what to install.
    let (missing, failed) = lsp(
        &client,
        &mut events,
        &id,
        json!({"action": "definition", "file": "../other/main.go", "line": 1, "symbol": "main"}),
    )
    .await;
    assert!(failed);
    assert_eq!(
        missing,
        "no language server for .go files is installed; install one of: gopls (`go install \
         golang.org/x/tools/gopls@latest`)"
    );
}
