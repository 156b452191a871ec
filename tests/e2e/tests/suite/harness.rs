//! Shared setup: a scripted model server and a real daemon configured (the pi way, through
//! `PI_HOME/.pi/agent/models.json`) to reach it.

use pi_client::{Client, Notifications};
use pi_protocol::v1::{
    SessionAttach, SessionAttachParams, SessionCreate, SessionCreateParams, SessionInfo,
    SessionList, SessionListParams, SessionMessageParams,
};
use pi_test_support::daemon::TempDaemon;
use pi_test_support::model_server::ModelServer;
use pi_test_support::workspace_binary;

/// The scripted model as sessions name it.
pub const MODEL: &str = "scripted/scripted-model";

/// A daemon and the model server it talks to.
pub struct World {
    pub server: ModelServer,
    pub daemon: TempDaemon,
}

impl World {
    /// A daemon whose provider `scripted` speaks `api` to a fresh model server.
    pub async fn start(api: &str) -> World {
        World::start_with(api, &[]).await
    }

    /// Like [`World::start`], with more files in `PI_HOME` (e.g. `.pi/agent/settings.json`).
    pub async fn start_with(api: &str, files: &[(&str, String)]) -> World {
        World::start_with_config(api, "", files).await
    }

    /// Like [`World::start_with`], with `config_toml` as the daemon's `config.toml`.
    pub async fn start_with_config(
        api: &str,
        config_toml: &str,
        files: &[(&str, String)],
    ) -> World {
        let server = ModelServer::start().await;
        let models = serde_json::to_string_pretty(&server.models_json(api)).unwrap();
        let mut all = vec![(".pi/agent/models.json", models)];
        all.extend(files.iter().cloned());
        let daemon =
            TempDaemon::start_with_files(&workspace_binary("pid"), config_toml, &all).await;
        World { server, daemon }
    }

    /// A new session on the scripted model in the daemon's home, attached by `client`.
    pub async fn attached_session(&self, client: &Client) -> SessionInfo {
        let session = client
            .call::<SessionCreate>(&SessionCreateParams {
                cwd: self.daemon.home.path().display().to_string(),
                model: Some(MODEL.to_owned()),
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
        session
    }

    pub async fn client(&self) -> (Client, Notifications) {
        self.daemon.client().await
    }

    /// The daemon's sessions (`session/list`), asked on a connection of their own.
    pub async fn sessions(&self) -> Vec<SessionInfo> {
        let (client, _events) = self.client().await;
        client
            .call::<SessionList>(&SessionListParams::default())
            .await
            .unwrap()
            .sessions
    }
}

/// A text prompt.
pub fn prompt(session_id: &str, text: &str) -> SessionMessageParams {
    SessionMessageParams {
        session_id: session_id.to_owned(),
        text: text.to_owned(),
        images: Vec::new(),
    }
}
