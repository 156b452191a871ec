//! Secrets at rest on the real `pid`: variables of the client's environment that are not
//! known to be harmless (or whose value looks like a credential) reach the session's tools in
//! memory but never the database files, the logs, the exports or the events — checked for two
//! dozen realistic credential shapes; after a daemon restart the session says what it lacks,
//! and a client supplies it (`session/setEnv`).

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
    env.insert("PLAIN_SETTING".to_owned(), "plain-9c2b".to_owned());
    env.insert("EDITOR".to_owned(), "visible-5d1e".to_owned());
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
    // The search is real: a variable known to be harmless is stored; one that is not known
    // is not.
    assert!(!files_containing(&home, "visible-5d1e").is_empty());
    assert_eq!(files_containing(&home, "plain-9c2b"), Vec::<String>::new());

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
    assert_eq!(
        got.info.missing_env,
        [
            "DEPLOY_TOKEN",
            "PI_HOME",
            "PI_TEST_API_KEY",
            "PLAIN_SETTING"
        ]
    );
    assert!(
        got.info.warnings.iter().any(|warning| warning.starts_with(
            "this session lacks DEPLOY_TOKEN, PI_HOME, PI_TEST_API_KEY, PLAIN_SETTING (only \
             variables known to hold no secret are stored"
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
                ("EDITOR", "changed"),
            ]
            .map(|(name, value)| (name.to_owned(), value.to_owned()))
            .into(),
        })
        .await
        .unwrap();
    assert_eq!(supplied.accepted, ["DEPLOY_TOKEN", "PI_TEST_API_KEY"]);
    assert_eq!(supplied.missing_env, ["PI_HOME", "PLAIN_SETTING"]);
    let seen = run(&client, &mut events, &session.id, &check()).await;
    assert_eq!(output(&seen), "present");
    for sentinel in [SENTINEL_KEY, SENTINEL_TOKEN] {
        assert_eq!(files_containing(&home, sentinel), Vec::<String>::new());
    }
}

/// Realistic credentials under the names they go by; every value is unique to this test.
const CREDENTIALS: [(&str, &str); 25] = [
    (
        "DATABASE_URL",
        "postgres://app:Pg-pass-41c7@db.internal:5432/app",
    ),
    (
        "REDIS_URL",
        "redis://:Redis-pass-9d02@cache.internal:6379/0",
    ),
    (
        "AMQP_URL",
        "amqps://rabbit:Amqp-pass-5e11@mq.internal/vhost",
    ),
    (
        "MONGODB_URI",
        "mongodb+srv://mongo:Mongo-pass-77a3@cluster0.example.net/db",
    ),
    ("SMTP_PASS", "smtp-pass-3b8f"),
    ("MYSQL_PWD", "mysql-pwd-c0d4"),
    ("PGPASSWORD", "pg-password-1a9e"),
    (
        "SENTRY_DSN",
        "https://0123456789abcdef0123456789abcdef@o1.ingest.sentry.io/42",
    ),
    ("AWS_ACCESS_KEY_ID", "AKIAIOSFODNN7EX41C7Q"),
    (
        "AWS_SECRET_ACCESS_KEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLE41c7",
    ),
    (
        "AWS_SESSION_TOKEN",
        "IQoJb3JpZ2luX2VjEXAMPLEsessiontoken41c7",
    ),
    ("GITHUB_TOKEN", "ghp_41c7abcdefghijklmnopqrstuvwxyz012345"),
    (
        "GH_ENTERPRISE_TOKEN",
        "github_pat_11AB41C7_abcdefghijklmnopqrstuvwxyz",
    ),
    ("GITLAB_TOKEN", "glpat-41c7abcdefghijklmnop"),
    (
        "SLACK_BOT_TOKEN",
        "xoxb-41c7123456-1234567890123-abcdefghijklmnop",
    ),
    ("OPENAI_API_KEY", "sk-proj-41c7abcdefghijklmnopqrstuvwxyz"),
    ("STRIPE_SECRET_KEY", "sk_live_41c7abcdefghijklmnopqrstu"),
    ("GOOGLE_API_KEY", "AIzaSyD-41c7abcdefghijklmnopqrstuvwxyz"),
    ("NPM_TOKEN", "npm_41c7abcdefghijklmnopqrstuvwxyz0123456"),
    ("HF_TOKEN", "hf_41c7abcdefghijklmnopqrstuvwxyz"),
    (
        "SESSION_JWT",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI0MWM3In0.S2lnbmF0dXJlLTQxYzc",
    ),
    (
        "DEPLOY_SSH_KEY",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA41c7\n-----END OPENSSH PRIVATE KEY-----",
    ),
    (
        "HTTPS_PROXY",
        "http://proxyuser:Proxy-pass-41c7@proxy.internal:3128",
    ),
    // A name known to be harmless carrying a credential anyway.
    (
        "PYTHONPATH",
        "https://pypi-user:Index-pass-41c7@pypi.internal/simple",
    ),
    // ... and one glued inside a word.
    ("EDITOR", "vim-ghp_41c7abcdefghijklmnopqrstuvwxyz012345"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_credential_shape_reaches_any_file_of_the_daemon() {
    let mut world = World::start_with("anthropic-messages", &[]).await;
    world.server.respond_with(caller);
    let home = world.daemon.home.path().to_path_buf();
    let (client, mut events) = world.client().await;
    let mut env: BTreeMap<String, String> = CREDENTIALS
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect();
    env.insert("PATH".to_owned(), std::env::var("PATH").unwrap_or_default());
    env.insert("HOME".to_owned(), home.display().to_string());
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
    // The tools have every one of them (counted, so no value is ever printed).
    let count = CREDENTIALS
        .iter()
        .map(|(name, _)| format!("[ -n \"${name}\" ] && echo x"))
        .collect::<Vec<_>>()
        .join("; ");
    let seen = run(
        &client,
        &mut events,
        &session.id,
        &format!(
            "call bash {}",
            json!({"command": format!("({count}) | wc -l")})
        ),
    )
    .await;
    assert_eq!(output(&seen), CREDENTIALS.len().to_string());
    // A restart, so the store has been read back and written again, then a clean stop, so
    // the WAL is folded into the database.
    drop(client);
    world.daemon.kill9().await;
    world.daemon.restart().await;
    let (client, _events) = world.client().await;
    let got = client
        .call::<SessionGet>(&SessionIdParams {
            session_id: session.id.clone(),
        })
        .await
        .unwrap();
    let mut expected: Vec<&str> = CREDENTIALS.iter().map(|(name, _)| *name).collect();
    expected.sort_unstable();
    assert_eq!(got.info.missing_env, expected);
    drop(client);
    world.daemon.signal(rustix::process::Signal::TERM);
    world
        .daemon
        .wait_exit(std::time::Duration::from_secs(10))
        .await;
    let leaked: Vec<(&str, Vec<String>)> = CREDENTIALS
        .iter()
        .map(|(name, value)| {
            // The distinctive part of each value (a PEM's first line is public knowledge).
            let needle = value.lines().nth(1).unwrap_or(value);
            (*name, files_containing(&home, needle))
        })
        .filter(|(_, files)| !files.is_empty())
        .collect();
    assert!(leaked.is_empty(), "credentials in files: {leaked:#?}");
    // The search is real: the names are stored (so the session can say what it lacks).
    assert!(!files_containing(&home, "DATABASE_URL").is_empty());
}
