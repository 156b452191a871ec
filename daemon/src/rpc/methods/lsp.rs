//! `lsp/list`, `lsp/restart` and `lsp/logs`: the language servers every session shares;
//! `lsp/changed` to every connection when they change.

use pi_protocol::v1::{
    LspChanged, LspChangedParams, LspListParams, LspListResponse, LspLog, LspLogsParams,
    LspLogsResponse, LspRestartParams, LspRestartResponse, LspServerStatus,
};
use pi_protocol::{ErrorKind, ErrorObject, NotificationMethod as _};

use crate::rpc::dispatch::RequestContext;

fn pool(context: &RequestContext) -> Result<&std::sync::Arc<crate::lsp::LspPool>, ErrorObject> {
    context.state.lsp.as_ref().ok_or_else(|| {
        ErrorObject::new(
            ErrorKind::Internal,
            "this daemon runs no language servers (started without a language server pool)",
        )
    })
}

/// Every server's status as the protocol shows it.
pub fn server_statuses(pool: &crate::lsp::LspPool) -> Vec<LspServerStatus> {
    pool.list()
        .into_iter()
        .map(|server| LspServerStatus {
            name: server.name,
            root: server.root.display().to_string(),
            state: server.state.to_owned(),
            pid: server.pid,
            sessions: server.sessions,
            open_files: server.open_files as u32,
            last_error: server.last_error,
            log_path: server.log_path.display().to_string(),
            starts: server.starts,
        })
        .collect()
}

/// Lists the servers.
pub async fn list(
    context: &RequestContext,
    _params: LspListParams,
) -> Result<LspListResponse, ErrorObject> {
    Ok(LspListResponse {
        servers: server_statuses(pool(context)?),
    })
}

/// Restarts the servers named `params.name`.
pub async fn restart(
    context: &RequestContext,
    params: LspRestartParams,
) -> Result<LspRestartResponse, ErrorObject> {
    let restarted = pool(context)?.restart(&params.name);
    if restarted == 0 {
        return Err(ErrorObject::new(
            ErrorKind::NotFound,
            format!(
                "no language server named \"{}\" has run in this daemon; `pictl lsp list` shows \
                 those that have",
                params.name
            ),
        ));
    }
    Ok(LspRestartResponse {
        restarted: restarted as u32,
    })
}

/// Sends `lsp/changed` to every connection whenever the servers change, until shutdown.
pub async fn announce_changes(state: std::sync::Arc<crate::state::DaemonState>) {
    let Some(pool) = state.lsp.clone() else {
        return;
    };
    let mut changes = pool.subscribe_changes();
    loop {
        tokio::select! {
            () = state.shutdown.cancelled() => return,
            changed = changes.changed() => {
                if changed.is_err() {
                    return;
                }
            }
        }
        let params = LspChangedParams {
            servers: server_statuses(&pool),
        };
        let Ok(frame) = crate::frame::notification(LspChanged::NAME, &params) else {
            continue;
        };
        for (sink, _) in state.clients() {
            if sink.is_initialized() {
                let _ = sink.notify(
                    LspChanged::NAME,
                    crate::outbound::Outbound::Frame(frame.clone()),
                );
            }
        }
    }
}

/// The last lines of the logs of the servers named `params.name` (of `params.root`).
pub async fn logs(
    context: &RequestContext,
    params: LspLogsParams,
) -> Result<LspLogsResponse, ErrorObject> {
    let pool = pool(context)?;
    let servers: Vec<_> = pool
        .list()
        .into_iter()
        .filter(|server| {
            server.name == params.name
                && params
                    .root
                    .as_deref()
                    .is_none_or(|root| server.root == std::path::Path::new(root))
        })
        .collect();
    if servers.is_empty() {
        return Err(ErrorObject::new(
            ErrorKind::NotFound,
            format!(
                "no language server named \"{}\" has run in this daemon{}; `pictl lsp list` \
                 shows those that have",
                params.name,
                params
                    .root
                    .as_deref()
                    .map(|root| format!(" for {root}"))
                    .unwrap_or_default()
            ),
        )
        .with_field("name"));
    }
    let lines = params.lines.unwrap_or(100).clamp(1, 10_000) as usize;
    let mut logs = Vec::new();
    for server in servers {
        let path = server.log_path.clone();
        let text = tokio::task::spawn_blocking(move || super::mcp::tail(&path, lines))
            .await
            .unwrap_or_default();
        logs.push(LspLog {
            root: server.root.display().to_string(),
            path: server.log_path.display().to_string(),
            text,
        });
    }
    Ok(LspLogsResponse { logs })
}
