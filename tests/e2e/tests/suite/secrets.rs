//! Secrets at rest on the real `pid`: variables of the client's environment that look like
//! secrets reach the session's tools in memory but never the database files, the logs, the
//! exports or the events; after a daemon restart the session says what it lacks, and a
//! client supplies it (`session/setEnv`).

use std::collections::BTreeMap;
use std::path::Path;

use pi_protocol::v1::{
    ExportFormat, SessionAttach, SessionAttachParams, SessionCreate, SessionCreateParams,
    SessionExport, SessionExportParams, SessionGet, SessionIdParams, SessionSetEnv,
    SessionSetEnvParams,
};
use serde_json::json;

use super::harness::{MODEL, World};
use super::mcp_faults::{caller, run, tool_results};

const SENTINEL_KEY: &str = "sentinel-7f3a9e";
const SENTINEL_TOKEN: &str = "sentinel-b2c4d1";

/// Every file under `dir` whose bytes contain `needle`.
fn files_containing(dir: &Path, needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        for entry in std::fs::read_dir(&current).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(bytes) = std::fs::read(&path)
                && bytes
                    .windows(needle.len())
                    .any(|window| window == needle.as_bytes())
            {
                found.push(path.display().to_string());
            }
        }
    }
    found
}

/// The bash check: both secrets there (by length, so no value is ever written in a call).
fn check() -> String {
    format!(
        "call bash {}",
        json!({"command": format!(
            "if [ ${{#PI_TEST_API_KEY}} -eq {} ] && [ ${{#DEPLOY_TOKEN}} -eq {} ]; then echo present; else echo absent; fi",
            SENTINEL_KEY.len(), SENTINEL_TOKEN.len()
        )})
    )
}

fn output(seen: &[pi_protocol::v1::SessionEventParams]) -> String {
    let (_, content, _, _) = tool_results(seen).remove(0);
    let content: serde_json::Value = serde_json::from_str(&content).unwrap();
    content[0]["text"]
        .as_str()
        .unwrap_or_default()
        .trim()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secret_variables_stay_in_memory_and_a_later_client_supplies_them() {
    let mut world = World::start_with("anthropic-messages", &[]).await;
    world.server.respond_with(caller);
    let home = world.daemon.home.path().to_path_buf();
    let (client, mut events) = world.client().await;
    let mut env: BTreeMap<String, String> = world.daemon.env().into_iter().collect();
    env.insert("PATH".to_owned(), std::env::var("PATH").unwrap_or_default());
    env.insert("PI_TEST_API_KEY".to_owned(), SENTINEL_KEY.to_owned());
    env.insert("DEPLOY_TOKEN".to_owned(), SENTINEL_TOKEN.to_owned());
    env.insert("PLAIN_SETTING".to_owned(), "visible-5d1e".to_owned());
    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: home.display().to_string(),
            model: Some(MODEL.to_owned()),
            env: Some(env),
            tools: Some(vec!["bash".to_owned()]),
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

    // The tools have them.
    let seen = run(&client, &mut events, &session.id, &check()).await;
    assert_eq!(output(&seen), "present");
    let events_text = serde_json::to_string(&seen).unwrap();
    // Nothing holds them: not the database (and its WAL), not the logs, not the exports,
    // not the events.
    let jsonl = client
        .call::<SessionExport>(&SessionExportParams {
            session_id: session.id.clone(),
            format: ExportFormat::Jsonl,
            path: None,
        })
        .await
        .unwrap();
    let html = client
        .call::<SessionExport>(&SessionExportParams {
            session_id: session.id.clone(),
            format: ExportFormat::Html,
            path: None,
        })
        .await
        .unwrap();
    for sentinel in [SENTINEL_KEY, SENTINEL_TOKEN] {
        assert_eq!(files_containing(&home, sentinel), Vec::<String>::new());
        assert!(!events_text.contains(sentinel));
        assert!(!serde_json::to_string(&jsonl).unwrap().contains(sentinel));
        assert!(!serde_json::to_string(&html).unwrap().contains(sentinel));
    }
    // The search is real: the plain variable is stored.
    assert!(!files_containing(&home, "visible-5d1e").is_empty());

    // After a restart the session knows what it lacks and says so.
    drop(client);
    world.daemon.kill9().await;
    world.daemon.restart().await;
    let (client, mut events) = world.client().await;
    let got = client
        .call::<SessionGet>(&SessionIdParams {
            session_id: session.id.clone(),
        })
        .await
        .unwrap();
    assert_eq!(got.info.missing_env, ["DEPLOY_TOKEN", "PI_TEST_API_KEY"]);
    assert!(
        got.info.warnings.iter().any(|warning| warning.starts_with(
            "this session lacks DEPLOY_TOKEN, PI_TEST_API_KEY (secret variables of the client \
             that created it are never stored"
        )),
        "{:?}",
        got.info.warnings
    );
    client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: session.id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    let seen = run(&client, &mut events, &session.id, &check()).await;
    assert_eq!(output(&seen), "absent");

    // A client supplies them; only what the session lacks is taken.
    let supplied = client
        .call::<SessionSetEnv>(&SessionSetEnvParams {
            session_id: session.id.clone(),
            env: [
                ("PI_TEST_API_KEY", SENTINEL_KEY),
                ("DEPLOY_TOKEN", SENTINEL_TOKEN),
                ("PLAIN_SETTING", "changed"),
            ]
            .map(|(name, value)| (name.to_owned(), value.to_owned()))
            .into(),
        })
        .await
        .unwrap();
    assert_eq!(supplied.accepted, ["DEPLOY_TOKEN", "PI_TEST_API_KEY"]);
    assert!(supplied.missing_env.is_empty());
    let seen = run(&client, &mut events, &session.id, &check()).await;
    assert_eq!(output(&seen), "present");
    for sentinel in [SENTINEL_KEY, SENTINEL_TOKEN] {
        assert_eq!(files_containing(&home, sentinel), Vec::<String>::new());
    }
}
