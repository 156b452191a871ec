//! `settings/get` and `settings/setDefault`: thin adapters over the coding layer's settings
//! loading and writing.

use std::path::PathBuf;

use pi_protocol::v1::{SettingsGetParams, SettingsGetResponse, SettingsSetDefaultParams};
use pi_protocol::{ErrorKind, ErrorObject};

use crate::coding::settings_write::{self, SettingsWriteError};
use crate::convert::{SettingsFallbacks, effective_settings};
use crate::rpc::dispatch::RequestContext;
use crate::session::convert::diagnostic;

/// `settings/get`.
pub async fn get(
    context: &RequestContext,
    params: SettingsGetParams,
) -> Result<SettingsGetResponse, ErrorObject> {
    let cwd = params
        .cwd
        .as_deref()
        .map(|cwd| crate::session::params::absolute_path("cwd", cwd))
        .transpose()
        .map_err(crate::rpc::errors::session)?;
    Ok(respond(context, cwd).await)
}

/// `settings/setDefault`.
pub async fn set_default(
    context: &RequestContext,
    params: SettingsSetDefaultParams,
) -> Result<SettingsGetResponse, ErrorObject> {
    let roots = &context.state.sessions.services().settings.resources;
    let Some(path) = roots.writable_settings_file() else {
        return Err(ErrorObject::new(
            ErrorKind::Internal,
            "this daemon has no config directory to write settings to",
        ));
    };
    let pi_file = match params.target {
        pi_protocol::v1::SettingsTarget::Daemon => None,
        pi_protocol::v1::SettingsTarget::Pi => Some(roots.pi_settings_file().ok_or_else(|| {
            ErrorObject::new(
                ErrorKind::InvalidParams,
                "this daemon reads no pi agent directory; write the daemon's settings instead",
            )
            .with_field("target")
        })?),
    };
    let written = tokio::task::spawn_blocking(move || match pi_file {
        None => settings_write::set_defaults(&path, &params.values, &params.unset),
        Some(pi_file) => {
            settings_write::set_defaults(&pi_file, &params.values, &params.unset)?;
            // Ours comes later and would override what pi's file now says.
            let keys: Vec<String> = params.values.keys().cloned().collect();
            if path.exists() {
                settings_write::set_defaults(&path, &serde_json::Map::new(), &keys)?;
            }
            Ok(())
        }
    })
    .await
    .map_err(|error| ErrorObject::new(ErrorKind::Internal, error.to_string()))?;
    match written {
        Ok(()) => Ok(respond(context, None).await),
        Err(error @ SettingsWriteError::Invalid(_)) => {
            Err(ErrorObject::new(ErrorKind::InvalidParams, error.to_string()).with_field("values"))
        }
        Err(
            error @ (SettingsWriteError::ExistingInvalid { .. } | SettingsWriteError::Io { .. }),
        ) => {
            tracing::warn!(%error, "settings/setDefault failed");
            Err(ErrorObject::new(ErrorKind::Internal, error.to_string()))
        }
    }
}

async fn respond(context: &RequestContext, cwd: Option<PathBuf>) -> SettingsGetResponse {
    let session_settings = &context.state.sessions.services().settings;
    let roots = session_settings.resources.clone();
    let files = roots.settings_files(cwd.as_deref());
    let writable_file = roots
        .writable_settings_file()
        .map(|path| path.display().to_string())
        .unwrap_or_default();
    let sandbox = {
        let env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
        let place = cwd
            .clone()
            .unwrap_or_else(|| PathBuf::from(SESSION_DIRECTORY));
        let sandbox = context.state.policy.as_ref().and_then(|policy| match &cwd {
            Some(cwd) => policy.sandbox(cwd, &env),
            None => policy.default_sandbox(&place, &env),
        });
        crate::convert::effective_sandbox(sandbox.as_ref(), &place, &env)
    };
    let loaded = tokio::task::spawn_blocking(move || roots.load_settings(cwd.as_deref())).await;
    let (settings, diagnostics) = loaded.unwrap_or_default();
    let fallbacks = SettingsFallbacks {
        thinking: session_settings.default_thinking,
        steering_mode: session_settings.steering_mode,
        follow_up_mode: session_settings.follow_up_mode,
    };
    SettingsGetResponse {
        settings: effective_settings(&settings, fallbacks),
        files: files
            .global
            .iter()
            .chain(&files.project)
            .map(|path| path.display().to_string())
            .collect(),
        writable_file,
        diagnostics: diagnostics.iter().map(diagnostic).collect(),
        sandbox,
    }
}

/// What stands for a session's directory where none was given.
pub const SESSION_DIRECTORY: &str = "<session directory>";
