//! `extensions/list`, `extensions/restart` and `extensions/trust`: the extension host every
//! session shares, each session's pi extensions, and the user's answers about the extensions
//! projects bring.

use pi_protocol::v1::{
    ExtensionApproval, ExtensionDiagnostic, ExtensionHostStatus, ExtensionInfo,
    ExtensionsListParams, ExtensionsListResponse, ExtensionsRestartParams,
    ExtensionsRestartResponse, ExtensionsTrustParams, ExtensionsTrustResponse, SessionExtensions,
};
use pi_protocol::{ErrorKind, ErrorObject};

use crate::rpc::dispatch::RequestContext;

fn host(
    context: &RequestContext,
) -> Result<&std::sync::Arc<crate::extensions::ExtensionHost>, ErrorObject> {
    context.state.extensions.as_ref().ok_or_else(|| {
        ErrorObject::new(
            ErrorKind::Internal,
            "this daemon runs no extensions (started without an extension host)",
        )
    })
}

fn diagnostics(list: &[crate::extensions::Diagnostic]) -> Vec<ExtensionDiagnostic> {
    list.iter()
        .map(|diagnostic| ExtensionDiagnostic {
            path: diagnostic.path.clone(),
            error: diagnostic.error.clone(),
        })
        .collect()
}

/// The host's status and each session's extensions.
pub async fn list(
    context: &RequestContext,
    params: ExtensionsListParams,
) -> Result<ExtensionsListResponse, ErrorObject> {
    let status = host(context)?.status();
    let version = |key: &str| {
        status
            .versions
            .as_ref()
            .and_then(|versions| versions[key].as_str())
            .map(str::to_owned)
    };
    Ok(ExtensionsListResponse {
        host: ExtensionHostStatus {
            state: status.state.to_owned(),
            pid: status.pid,
            last_error: status.last_error.clone(),
            starts: status.starts,
            log_path: status.log_path.display().to_string(),
            pi_version: version("piVersion"),
            node_version: version("node"),
        },
        sessions: status
            .sessions
            .iter()
            .filter(|(id, _)| {
                params
                    .session_id
                    .as_ref()
                    .is_none_or(|wanted| wanted == *id)
            })
            .map(|(id, set)| SessionExtensions {
                session_id: id.clone(),
                extensions: set
                    .extensions
                    .iter()
                    .map(|extension| ExtensionInfo {
                        path: extension.path.clone(),
                        handlers: extension.handlers.clone(),
                        tools: extension.tools.clone(),
                        commands: extension.commands.clone(),
                    })
                    .collect(),
                diagnostics: diagnostics(&set.diagnostics),
                skipped: diagnostics(&set.skipped),
                models: set
                    .models
                    .iter()
                    .map(|provided| format!("{}/{}", provided.model.provider, provided.model.id))
                    .collect(),
            })
            .collect(),
    })
}

/// Ends the host; the next use starts it again.
pub async fn restart(
    context: &RequestContext,
    _params: ExtensionsRestartParams,
) -> Result<ExtensionsRestartResponse, ErrorObject> {
    let host = host(context)?;
    let running = host.status().pid.is_some();
    host.restart();
    Ok(ExtensionsRestartResponse { restarted: running })
}

/// Runs the handler of a shortcut the session's extensions registered.
pub async fn shortcut(
    context: &RequestContext,
    params: pi_protocol::v1::ExtensionsShortcutParams,
) -> Result<pi_protocol::v1::ExtensionsShortcutResponse, ErrorObject> {
    host(context)?
        .shortcut(&params.session_id, &params.key)
        .await
        .map_err(|error| match error {
            crate::extensions::ExtensionError::NotOpen(_) => ErrorObject::new(
                ErrorKind::NotFound,
                format!(
                    "session {} has no extensions loaded, so no shortcut to run",
                    params.session_id
                ),
            ),
            crate::extensions::ExtensionError::Host(message) => {
                ErrorObject::new(ErrorKind::InvalidParams, message)
            }
            other => ErrorObject::new(ErrorKind::Internal, other.to_string()),
        })?;
    Ok(pi_protocol::v1::ExtensionsShortcutResponse {})
}

/// Approves, refuses or forgets the extensions the project in `params.cwd` brings (all of
/// them, or those under `params.paths`).
pub async fn trust(
    context: &RequestContext,
    params: ExtensionsTrustParams,
) -> Result<ExtensionsTrustResponse, ErrorObject> {
    let host = host(context)?;
    let cwd = crate::session::params::absolute_path("cwd", &params.cwd)
        .map_err(crate::rpc::errors::session)?;
    let found = host.project_extensions(&cwd).await.map_err(|error| {
        ErrorObject::new(
            ErrorKind::Internal,
            format!("cannot find the project's extensions: {error}"),
        )
    })?;
    if found.is_empty() {
        return Err(ErrorObject::new(
            ErrorKind::NotFound,
            format!(
                "{} brings no pi extensions (none in .pi/extensions/, none named by \
                 .pi/settings.json `extensions` or installed `packages`)",
                cwd.display()
            ),
        ));
    }
    let mut chosen: Vec<String> = Vec::new();
    for wanted in &params.paths {
        let wanted = cwd.join(wanted);
        let matching: Vec<&String> = found
            .iter()
            .map(|(path, _)| path)
            .filter(|path| std::path::Path::new(path).starts_with(&wanted))
            .collect();
        if matching.is_empty() {
            let known: Vec<&str> = found.iter().map(|(path, _)| path.as_str()).collect();
            return Err(ErrorObject::new(
                ErrorKind::NotFound,
                format!(
                    "{} is not an extension {} brings; its extensions are: {}",
                    wanted.display(),
                    cwd.display(),
                    known.join(", ")
                ),
            ));
        }
        chosen.extend(matching.into_iter().cloned());
    }
    if params.paths.is_empty() {
        chosen = found.iter().map(|(path, _)| path.clone()).collect();
    }
    chosen.dedup();
    let approved = params.decision.approval();
    context
        .state
        .extension_trust
        .answer(&chosen, approved)
        .await
        .map_err(crate::rpc::errors::storage(&context.state.store))?;
    if let Some(approved) = approved {
        host.reconsider(&chosen, approved);
    }
    let approval = match approved {
        Some(true) => "approved",
        Some(false) => "refused",
        None => "not asked yet",
    };
    Ok(ExtensionsTrustResponse {
        extensions: chosen
            .into_iter()
            .map(|path| ExtensionApproval {
                path,
                approval: approval.to_owned(),
            })
            .collect(),
    })
}
