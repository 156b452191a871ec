//! `extensions/list` and `extensions/restart`: the extension host every session shares, and
//! each session's pi extensions.

use pi_protocol::v1::{
    ExtensionDiagnostic, ExtensionHostStatus, ExtensionInfo, ExtensionsListParams,
    ExtensionsListResponse, ExtensionsRestartParams, ExtensionsRestartResponse, SessionExtensions,
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
