//! Language servers on the real `pid` with real servers from npm (pyright,
//! typescript-language-server; installed by `tests/install-peers`): the model's `lsp` tool
//! finds definitions and references across files, hovers, lists symbols and renames across
//! files; a `write` that introduces a type error comes back with it; sessions in one root
//! share one server process; a server that stops reading its input is ended and starts again
//! on the next use.

use std::collections::BTreeMap;
use std::path::Path;

use pi_client::{Client, Notifications};
use pi_protocol::v1::{
    SessionAttach, SessionAttachParams, SessionCreate, SessionCreateParams, SessionEventParams,
};
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
    let written = reported(&client, &mut events, &id, &seen, "pyright", "mathlib.py").await;
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
    let edited = reported(
        &client,
        &mut events,
        &id,
        &seen,
        "typescript",
        "src/math.ts",
    )
    .await;
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

/// The first tool result of `seen` once it carries `server`'s diagnostics. A result waits
/// 500 ms for them, as omp's does; a server slower than that (a loaded machine) has them
/// delivered with the session's next tool result, here a `read` of `other` (30 s at most).
async fn reported(
    client: &Client,
    events: &mut Notifications,
    id: &str,
    seen: &[SessionEventParams],
    server: &str,
    other: &str,
) -> String {
    let mut result = tool_results(seen).remove(0).1;
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    while !result.contains(&format!("Language server {server} reports:")) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no diagnostics, inline or late: {result}"
        );
        let read = format!("call read {}", json!({"path": other}));
        let seen = run(client, events, id, &read).await;
        result = tool_results(&seen).remove(0).1;
    }
    result
}

/// Waits (20 s at most) until `lsp/list` shows a server for which `done` holds.
async fn wait_for_lsp(
    client: &Client,
    what: &str,
    done: impl Fn(&pi_protocol::v1::LspServerStatus) -> bool,
) -> pi_protocol::v1::LspServerStatus {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        if let Some(server) = servers(client)
            .await
            .into_iter()
            .find(|server| done(server))
        {
            return server;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no language server became {what}: {:?}",
            servers(client).await
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_code_actions_apply_and_bash_changes_reach_the_server() {
    let world = World::start_with(
        "anthropic-messages",
        &[
            (
                "ts/tsconfig.json",
                r#"{"compilerOptions": {"strict": true, "target": "es2020", "module": "commonjs"}}"#
                    .to_owned(),
            ),
            (
                "ts/src/util.ts",
                "export function double(x: number): number {\n  return x * 2;\n}\n\nexport function triple(x: number): number {\n  return x * 3;\n}\n"
                    .to_owned(),
            ),
            (
                "ts/src/main.ts",
                "import { triple } from \"./util\";\nimport { double } from \"./util\";\n\nconsole.log(double(2));\n"
                    .to_owned(),
            ),
        ],
    )
    .await;
    world.server.respond_with(caller);
    let root = world.daemon.home.path().join("ts");
    let main = root.join("src/main.ts");
    let (client, mut events, id) = lsp_session(&world, &root).await;

    // Fixes, refactorings and the file's source actions, numbered.
    let (listed, failed) = lsp(
        &client,
        &mut events,
        &id,
        json!({"action": "code_actions", "file": "src/main.ts", "line": 1, "symbol": "triple"}),
    )
    .await;
    assert!(!failed, "{listed}");
    assert!(
        listed.starts_with("1. Remove import from './util' (quickfix) [preferred]\n"),
        "{listed}"
    );
    assert!(
        listed.contains(". Organize Imports (source.organizeImports.ts)"),
        "{listed}"
    );
    assert!(
        listed.ends_with("Apply one with `index` (or `title`)."),
        "{listed}"
    );

    // A fix with an edit, previewed: the diff, the file untouched.
    let before = std::fs::read_to_string(&main).unwrap();
    let (preview, failed) = lsp(
        &client,
        &mut events,
        &id,
        json!({"action": "code_actions", "file": "src/main.ts", "line": 1, "symbol": "triple",
            "index": 1, "apply": false}),
    )
    .await;
    assert!(!failed, "{preview}");
    assert!(
        preview
            .starts_with("Would apply (not applied) \"Remove import from './util'\" to 1 file(s)"),
        "{preview}"
    );
    assert!(
        preview.contains("-import { triple } from \"./util\";\n"),
        "{preview}"
    );
    assert_eq!(std::fs::read_to_string(&main).unwrap(), before);

    // A refactoring the server runs as a command: its edit comes back through
    // `workspace/applyEdit`, is written, and shown.
    let (applied, failed) = lsp(
        &client,
        &mut events,
        &id,
        json!({"action": "code_actions", "file": "src/main.ts", "line": 1, "symbol": "triple",
            "title": "convert named imports to namespace"}),
    )
    .await;
    assert!(!failed, "{applied}");
    assert!(
        applied
            .starts_with("Applied \"Convert named imports to namespace import\" to 1 file(s).\n"),
        "{applied}"
    );
    assert!(
        applied.contains("+import * as util from \"./util\";\n"),
        "{applied}"
    );
    assert_eq!(
        std::fs::read_to_string(&main).unwrap(),
        "import * as util from \"./util\";\nimport { double } from \"./util\";\n\nconsole.log(double(2));\n"
    );
    let (wrong, failed) = lsp(
        &client,
        &mut events,
        &id,
        json!({"action": "code_actions", "file": "src/main.ts", "line": 1, "index": 40}),
    )
    .await;
    assert!(failed);
    assert!(
        wrong.starts_with("there is no code action 40 here ("),
        "{wrong}"
    );

    // util.ts open in the server; a `bash` command renames its function on disk: the server
    // hears of it, so main.ts's import is now an error.
    let (hover, failed) = lsp(
        &client,
        &mut events,
        &id,
        json!({"action": "hover", "file": "src/util.ts", "line": 1, "symbol": "double"}),
    )
    .await;
    assert!(
        !failed && hover.contains("double(x: number): number"),
        "{hover}"
    );
    run(
        &client,
        &mut events,
        &id,
        &format!(
            "call bash {}",
            json!({"command": "sed -i 's/function double/function twice/' src/util.ts"})
        ),
    )
    .await;
    let (diagnostics, failed) = lsp(
        &client,
        &mut events,
        &id,
        json!({"action": "diagnostics", "file": "src/main.ts"}),
    )
    .await;
    assert!(!failed, "{diagnostics}");
    assert!(
        diagnostics.contains(
            "src/main.ts:2:10 error: Module '\"./util\"' has no exported member 'double'."
        ),
        "{diagnostics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_configure_disable_and_time_out_language_servers() {
    let world = World::start_with(
        "anthropic-messages",
        &[
            (
                "py/pyproject.toml",
                "[project]\nname = \"demo\"\n".to_owned(),
            ),
            (
                "py/.pi/settings.json",
                json!({"lsp": {"idleTimeoutMs": 300, "servers": {
                    "pyright": {"settings": {"python": {"analysis": {"typeCheckingMode": "strict"}}}},
                    "typescript": {"disabled": true}}}})
                .to_string(),
            ),
            ("py/loose.py", "def ident(x):\n    return x\n".to_owned()),
            ("py/web/app.ts", "export const x = 1;\n".to_owned()),
        ],
    )
    .await;
    world.server.respond_with(caller);
    let root = world.daemon.home.path().join("py");
    let (client, mut events, id) = lsp_session(&world, &root).await;

    // pyright asks for its configuration (`workspace/configuration`): strict mode, from
    // settings, reports what basic mode does not.
    let (diagnostics, failed) = lsp(
        &client,
        &mut events,
        &id,
        json!({"action": "diagnostics", "file": "loose.py"}),
    )
    .await;
    assert!(!failed, "{diagnostics}");
    assert!(
        diagnostics.contains("loose.py:1:11 error: Type annotation is missing for parameter \"x\""),
        "{diagnostics}"
    );

    // A glob checks every matching file.
    let (globbed, failed) = lsp(
        &client,
        &mut events,
        &id,
        json!({"action": "diagnostics", "file": "**/*.py"}),
    )
    .await;
    assert!(!failed, "{globbed}");
    assert!(
        globbed.starts_with("1 file(s) matching `**/*.py`:\n"),
        "{globbed}"
    );
    assert!(
        globbed.contains("loose.py:1:11 error: Type annotation is missing"),
        "{globbed}"
    );

    let (disabled, failed) = lsp(
        &client,
        &mut events,
        &id,
        json!({"action": "hover", "file": "web/app.ts", "line": 1, "symbol": "x"}),
    )
    .await;
    assert!(failed);
    assert_eq!(
        disabled,
        "the language servers for .ts files (typescript) are disabled in settings \
         (lsp.servers.<name>.disabled)"
    );

    // No session uses it any more: it stops after `lsp.idleTimeoutMs`.
    let running = wait_for_lsp(&client, "ready", |server| server.state == "ready").await;
    assert_eq!(running.sessions, std::slice::from_ref(&id));
    client
        .call::<pi_protocol::v1::SessionDelete>(&pi_protocol::v1::SessionIdParams {
            session_id: id.clone(),
        })
        .await
        .unwrap();
    let stopped = wait_for_lsp(&client, "stopped", |server| server.state == "stopped").await;
    assert!(
        stopped.sessions.is_empty() && stopped.pid.is_none(),
        "{stopped:?}"
    );
}

/// A language server (Python, Content-Length framing) that answers `initialize` and then, the
/// first time it runs (no marker file yet), stops reading its input; later runs answer
/// `textDocument/hover` with "a fake hover".
const STOPS_READING: &str = r#"
import json, os, sys, time
marker = sys.argv[1]
first = not os.path.exists(marker)
open(marker, "a").close()
stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
def read():
    length = 0
    while True:
        line = stdin.readline()
        if not line:
            sys.exit(0)
        line = line.strip()
        if not line:
            break
        name, value = line.split(b":", 1)
        if name.lower() == b"content-length":
            length = int(value)
    return json.loads(stdin.read(length))
def send(message):
    body = json.dumps(message).encode()
    stdout.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    stdout.flush()
while True:
    message = read()
    method = message.get("method")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": message["id"],
              "result": {"capabilities": {"hoverProvider": True, "textDocumentSync": 1}}})
    elif method == "initialized" and first:
        time.sleep(600)
    elif method == "textDocument/hover":
        send({"jsonrpc": "2.0", "id": message["id"], "result": {"contents": "a fake hover"}})
    elif method == "exit":
        sys.exit(0)
    elif "id" in message and method:
        send({"jsonrpc": "2.0", "id": message["id"], "result": None})
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_stops_reading_is_ended_and_the_next_use_starts_it_again() {
    let home_marker = "stuck/started-once";
    let world = World::start_with_config(
        "anthropic-messages",
        "[limits]\nlsp_write_timeout_secs = 2\n",
        &[
            ("stuck/fake_ls.py", STOPS_READING.to_owned()),
            // More than a pipe holds: its `didOpen` cannot be written to a server that does
            // not read.
            (
                "stuck/big.fake",
                format!("x = 1\n{}", "# padding\n".repeat(100_000)),
            ),
        ],
    )
    .await;
    let root = world.daemon.home.path().join("stuck");
    std::fs::create_dir_all(root.join(".pi")).unwrap();
    std::fs::write(
        root.join(".pi/settings.json"),
        json!({"lsp": {"servers": {"fakels": {
            "command": "/usr/bin/python3",
            "args": [root.join("fake_ls.py"), world.daemon.home.path().join(home_marker)],
            "fileTypes": ["fake"]}}}})
        .to_string(),
    )
    .unwrap();
    world.server.respond_with(caller);
    let (client, mut events, id) = lsp_session(&world, &root).await;
    let hover = json!({"action": "hover", "file": "big.fake", "line": 1, "symbol": "x"});

    // The first server never takes the file: after 2 s it is stuck, the call fails saying
    // so, and the pool ends its process.
    let (stuck, failed) = lsp(&client, &mut events, &id, hover.clone()).await;
    assert!(failed, "{stuck}");
    assert!(stuck.contains("stopped reading its input"), "{stuck}");
    let ended = wait_for_lsp(&client, "ended", |server| {
        server.name == "fakels" && server.pid.is_none()
    })
    .await;
    assert!(
        ended
            .last_error
            .as_deref()
            .is_some_and(|error| error.contains("stopped reading its input")),
        "{ended:?}"
    );

    // The next use starts it again, and this one answers.
    let (answer, failed) = lsp(&client, &mut events, &id, hover).await;
    assert!(!failed, "{answer}");
    assert!(answer.contains("a fake hover"), "{answer}");
    let running = wait_for_lsp(&client, "ready again", |server| {
        server.name == "fakels" && server.state == "ready"
    })
    .await;
    assert_eq!(running.starts, 2, "{running:?}");
}
