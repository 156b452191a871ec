//! Live configuration on the real `pid`: `models.json`, `auth.json` and `settings.json` edited
//! while the daemon runs apply to the next `session/create` without a restart; a bad edit keeps
//! the last good version and reaches every client as a `config/changed` diagnostic.

use std::path::Path;
use std::time::Duration;

use pi_client::{Client, Notifications};
use pi_protocol::v1::{
    ConfigChanged, ConfigChangedParams, DaemonStatus, DaemonStatusParams, SessionAttach,
    SessionAttachParams, SessionCreate, SessionCreateParams, SessionInfo, SessionPrompt,
};
use pi_test_support::daemon::{TempDaemon, paths_for};
use pi_test_support::events::run_events;
use pi_test_support::model_server::{ModelServer, Turn};
use pi_test_support::workspace_binary;

use super::harness::{MODEL, prompt};

/// Waits for the `config/changed` that satisfies `wanted` (earlier ones, from the same burst of
/// writes, are skipped). The deadline only turns a missing notification into a failure.
async fn changed(
    notifications: &mut Notifications,
    wanted: impl Fn(&ConfigChangedParams) -> bool,
) -> ConfigChangedParams {
    let wait = async {
        loop {
            let params = notifications
                .next_of::<ConfigChanged>()
                .await
                .expect("the connection stays open")
                .expect("config/changed decodes");
            if wanted(&params) {
                return params;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(20), wait)
        .await
        .expect("config/changed arrives after the edit")
}

fn mentions(params: &ConfigChangedParams, path: &Path) -> bool {
    let path = path.display().to_string();
    params.files.contains(&path)
}

/// Writes `text` the way editors do: to a temporary file, renamed over the target.
fn save(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let temporary = path.with_extension("json.tmp");
    std::fs::write(&temporary, text).unwrap();
    std::fs::rename(&temporary, path).unwrap();
}

async fn create(client: &Client, cwd: &str, model: Option<&str>) -> Result<SessionInfo, String> {
    client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: cwd.to_owned(),
            model: model.map(str::to_owned),
            ..SessionCreateParams::default()
        })
        .await
        .map_err(|error| error.to_string())
}

/// Runs one prompt on `session` and waits for its end.
async fn run_once(
    client: &Client,
    events: &mut Notifications,
    server: &ModelServer,
    session: &SessionInfo,
) {
    client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: session.id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    server.push(Turn::reply().text("Configured live."));
    client
        .call::<SessionPrompt>(&prompt(&session.id, "hi"))
        .await
        .unwrap();
    run_events(events, &session.id).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_edits_apply_without_a_restart_and_bad_edits_keep_the_last_good_version() {
    let server = ModelServer::start().await;
    // No pi agent directory at start: the daemon watches its way to it once it appears.
    let daemon = TempDaemon::start_with_files(&workspace_binary("pid"), "", &[]).await;
    let paths = paths_for(daemon.home.path());
    let models_json = paths.pi_agent_dir.join("models.json");
    let settings_json = paths.config_dir.join("settings.json");
    let cwd = daemon.home.path().display().to_string();
    // Two clients: each gets every config/changed.
    let (client, mut notifications) = daemon.client().await;
    let (other, mut other_notifications) = daemon.client().await;

    let error = create(&client, &cwd, Some(MODEL)).await.unwrap_err();
    assert!(error.contains("scripted"), "{error}");

    // The user adds the provider: the next creates see it, from both clients at once.
    save(
        &models_json,
        &serde_json::to_string_pretty(&server.models_json("anthropic-messages")).unwrap(),
    );
    let reloaded = changed(&mut notifications, |params| mentions(params, &models_json)).await;
    assert_eq!(reloaded.diagnostics, Vec::new());
    changed(&mut other_notifications, |params| {
        mentions(params, &models_json)
    })
    .await;
    let (first, second) = tokio::join!(
        create(&client, &cwd, Some(MODEL)),
        create(&other, &cwd, Some(MODEL))
    );
    let (first, second) = (first.unwrap(), second.unwrap());
    assert_eq!(first.model.as_ref().unwrap().id, "scripted-model");
    let (first_client, mut first_events) = daemon.client().await;
    let (second_client, mut second_events) = daemon.client().await;
    tokio::join!(
        run_once(&first_client, &mut first_events, &server, &first),
        run_once(&second_client, &mut second_events, &server, &second),
    );

    // A half-saved edit: the file's last good version stays, and the clients are told why.
    save(&models_json, r#"{"providers": {"scripted": {"baseUrl": "#);
    let broken = changed(&mut notifications, |params| mentions(params, &models_json)).await;
    assert_eq!(broken.diagnostics.len(), 1, "{broken:?}");
    let diagnostic = &broken.diagnostics[0];
    assert_eq!(diagnostic.path, models_json.display().to_string());
    assert!(
        diagnostic
            .message
            .contains("the daemon keeps using the file's last good version until it is fixed"),
        "{}",
        diagnostic.message
    );
    let third = create(&other, &cwd, Some(MODEL)).await.unwrap();
    run_once(&other, &mut other_notifications, &server, &third).await;

    // Settings: a new default model applies to the next create; a bad edit keeps it.
    save(
        &settings_json,
        r#"{"defaultProvider": "scripted", "defaultModel": "scripted-model"}"#,
    );
    changed(&mut notifications, |params| {
        mentions(params, &settings_json)
    })
    .await;
    let defaulted = create(&client, &cwd, None).await.unwrap();
    assert_eq!(defaulted.model.unwrap().id, "scripted-model");
    save(&settings_json, "{\"defaultModel\": ");
    let broken_settings = changed(&mut notifications, |params| {
        mentions(params, &settings_json)
    })
    .await;
    let messages: Vec<&str> = broken_settings
        .diagnostics
        .iter()
        .filter(|diagnostic| diagnostic.path == settings_json.display().to_string())
        .map(|diagnostic| diagnostic.message.as_str())
        .collect();
    assert_eq!(messages.len(), 1, "{broken_settings:?}");
    assert!(
        messages[0].starts_with("is not valid JSON")
            && messages[0]
                .ends_with("the daemon keeps using the file's last good version until it is fixed"),
        "{}",
        messages[0]
    );
    let still_defaulted = create(&client, &cwd, None).await.unwrap();
    assert_eq!(still_defaulted.model.unwrap().id, "scripted-model");

    // daemon/status reports the watched files, the reloads and the problems left.
    let status = client
        .call::<DaemonStatus>(&DaemonStatusParams {})
        .await
        .unwrap()
        .config;
    assert!(status.files.contains(&models_json.display().to_string()));
    assert!(status.files.contains(&settings_json.display().to_string()));
    assert!(status.reloads >= 4, "{status:?}");
    assert!(status.last_reload_at.is_some());
    assert_eq!(status.watch_error, None);
    assert_eq!(status.diagnostics.len(), 2, "{status:?}");

    // Fixed: the problems are gone.
    save(
        &models_json,
        &serde_json::to_string(&server.models_json("anthropic-messages")).unwrap(),
    );
    save(&settings_json, "{}");
    let fixed = changed(&mut notifications, |params| params.diagnostics.is_empty()).await;
    assert!(!fixed.files.is_empty());
    server.assert_done(3);
}
