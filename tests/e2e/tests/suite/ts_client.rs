//! The TypeScript client (`clients/typescript`) against the real `pid`: its generated types
//! match `protocol/schema` (drift), it compiles with tsc (strict), and its Node test creates
//! a session, prompts, disconnects mid-run, resumes with `afterSeq` (no gap, no duplicate) and
//! answers a `ui/request`. json-schema-to-typescript, typescript and @types/node come from npm
//! through `tests/install-peers`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::harness::{MODEL, World};
use super::mcp_faults::caller;

fn client_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../clients/typescript")
}

fn peer(path: &str) -> PathBuf {
    let path = pi_test_support::peers::dir().join(path);
    assert!(
        path.exists(),
        "{} is not installed; run tests/install-peers",
        path.display()
    );
    path
}

#[test]
fn generated_types_match_the_protocol_schema() {
    let output = std::process::Command::new("node")
        .arg(client_dir().join("scripts/generate.mjs"))
        .arg("--check")
        .env("PI_PEERS_DIR", pi_test_support::peers::dir())
        .output()
        .expect("node runs (tests/install-peers installs it)");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_client_resumes_without_gaps_and_answers_questions() {
    let dist = tempfile::tempdir().unwrap();
    let tsc = std::process::Command::new(peer("node_modules/.bin/tsc"))
        .arg("-p")
        .arg(client_dir())
        .arg("--outDir")
        .arg(dist.path())
        .arg("--typeRoots")
        .arg(peer("node_modules/@types"))
        .output()
        .unwrap();
    assert!(
        tsc.status.success(),
        "tsc failed:\n{}",
        String::from_utf8_lossy(&tsc.stdout)
    );

    // The example a plugin copies type-checks against the client.
    let example = std::process::Command::new(peer("node_modules/.bin/tsc"))
        .args([
            "--strict",
            "--noEmit",
            "--skipLibCheck",
            "--module",
            "NodeNext",
        ])
        .args([
            "--moduleResolution",
            "NodeNext",
            "--target",
            "ES2022",
            "--types",
            "node",
        ])
        .arg("--typeRoots")
        .arg(peer("node_modules/@types"))
        .arg(client_dir().join("examples/plugin.ts"))
        .output()
        .unwrap();
    assert!(
        example.status.success(),
        "the example does not type-check:\n{}",
        String::from_utf8_lossy(&example.stdout)
    );

    let world = World::start_with("anthropic-messages", &[("proj/.keep", String::new())]).await;
    world.server.respond_with(caller);
    let project = world.daemon.home.path().join("proj");
    // Node 22 has a global WebSocket; Node 20 behind a flag.
    let version = std::process::Command::new("node")
        .arg("--version")
        .output()
        .unwrap();
    let major: u32 = String::from_utf8_lossy(&version.stdout)
        .trim()
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|major| major.parse().ok())
        .unwrap_or(0);
    let mut node = tokio::process::Command::new("node");
    if major < 22 {
        node.arg("--experimental-websocket");
    }
    let output = node
        .arg(client_dir().join("test/client.test.mjs"))
        .envs(world.daemon.env())
        .env("CLIENT_DIST", dist.path())
        .env("PROJECT", &project)
        .env("MODEL", MODEL)
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the client test failed:\n{stderr}");
    let seen: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|error| panic!("{error}: {}", String::from_utf8_lossy(&output.stdout)));

    // Every event of the run exactly once across the two connections, in order.
    let seqs: Vec<u64> = seen["seqs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|seq| seq.as_u64().unwrap())
        .collect();
    let types: Vec<&str> = seen["types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|kind| kind.as_str().unwrap())
        .collect();
    let disconnected = seen["disconnectedAt"].as_u64().unwrap();
    assert!(seqs.contains(&disconnected) && seqs.last() > Some(&disconnected));
    assert!(
        seqs.windows(2).all(|pair| pair[1] == pair[0] + 1),
        "a gap or a duplicate: {seqs:?} (disconnected at {disconnected}): {types:?}"
    );
    assert_eq!(types.first(), Some(&"agent_start"), "{types:?}");
    assert_eq!(types.last(), Some(&"agent_end"), "{types:?}");
    assert!(types.contains(&"tool_execution_end"), "{types:?}");

    // The question, answered by this client.
    assert_eq!(seen["question"]["method"], "select");
    assert_eq!(seen["answer"]["accepted"], true, "{}", seen["answer"]);
    assert_eq!(
        seen["secondToolResult"]["isError"], false,
        "{}",
        seen["secondToolResult"]
    );
    assert!(project.join("made.txt").exists());

    // Errors carry the daemon's kind.
    assert_eq!(seen["error"]["name"], "DaemonError");
    assert_eq!(seen["error"]["kind"], "not_found", "{}", seen["error"]);
}
