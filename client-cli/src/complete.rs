//! Dynamic completions (`source <(COMPLETE=bash pictl)`): `--model <TAB>` offers the ids of
//! the models the running daemon knows (those with a key first), `attach <TAB>` and
//! `--session <TAB>` the ids of its sessions, newest first, with their titles. Completion
//! never starts a daemon and gives up after a second: without a running daemon there is
//! nothing to offer, and the shell falls back to nothing.

use std::time::Duration;

use clap_complete::engine::CompletionCandidate;
use pi_protocol::v1::{ModelList, ModelListParams, SessionList, SessionListParams};

/// How long a completion may wait for the daemon.
const WAIT: Duration = Duration::from_secs(1);

/// Runs `ask` against the running daemon, or gives nothing.
fn with_daemon<T: Default>(ask: impl AsyncFnOnce(pi_client::Client) -> Option<T>) -> T {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return T::default();
    };
    runtime.block_on(async {
        let Ok(paths) = pi_client::Paths::from_env() else {
            return T::default();
        };
        let connected = tokio::time::timeout(WAIT, async {
            let (client, _notifications) =
                pi_client::autostart::connect(&paths, crate::daemon_client::client_info())
                    .await
                    .ok()?;
            ask(client).await
        })
        .await;
        connected.ok().flatten().unwrap_or_default()
    })
}

/// `provider/id` of every model, those with a key first.
pub fn models() -> Vec<CompletionCandidate> {
    with_daemon(async |client| {
        let mut models = client
            .call::<ModelList>(&ModelListParams::default())
            .await
            .ok()?
            .models;
        models.sort_by_key(|model| !model.has_key);
        Some(
            models
                .into_iter()
                .map(|model| {
                    CompletionCandidate::new(format!("{}/{}", model.provider, model.id))
                        .help(Some(model.name.into()))
                })
                .collect(),
        )
    })
}

/// The sessions' ids, newest first, with their titles.
pub fn sessions() -> Vec<CompletionCandidate> {
    with_daemon(async |client| {
        let sessions = client
            .call::<SessionList>(&SessionListParams {
                limit: Some(200),
                ..SessionListParams::default()
            })
            .await
            .ok()?
            .sessions;
        Some(
            sessions
                .into_iter()
                .map(|session| {
                    let title = session
                        .name
                        .or(session.first_message)
                        .map(|text| crate::output::one_line(&text, 60));
                    CompletionCandidate::new(session.id).help(title.map(Into::into))
                })
                .collect(),
        )
    })
}

/// pi's thinking levels.
pub fn thinking_levels() -> Vec<CompletionCandidate> {
    ["off", "minimal", "low", "medium", "high", "xhigh"]
        .iter()
        .map(|level| CompletionCandidate::new(*level))
        .collect()
}

/// pi's output modes.
pub fn output_modes() -> Vec<CompletionCandidate> {
    ["text", "json", "rpc"]
        .iter()
        .map(|mode| CompletionCandidate::new(*mode))
        .collect()
}
