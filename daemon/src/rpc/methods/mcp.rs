//! `mcp/list`, `mcp/restart`, `mcp/logs` and `mcp/trust`: the MCP servers every session
//! shares.

use pi_protocol::v1::{
    McpDefinition, McpListParams, McpListResponse, McpLog, McpLogsParams, McpLogsResponse,
    McpRestartParams, McpRestartResponse, McpServerStatus, McpSetEnabledParams,
    McpSetEnabledResponse, McpTrustParams, McpTrustResponse,
};
use pi_protocol::{ErrorKind, ErrorObject};

use crate::rpc::dispatch::RequestContext;

fn pool(context: &RequestContext) -> Result<&std::sync::Arc<crate::mcp::McpPool>, ErrorObject> {
    context.state.mcp.as_ref().ok_or_else(|| {
        ErrorObject::new(
            ErrorKind::Internal,
            "this daemon runs no MCP servers (started without an MCP pool)",
        )
    })
}

/// Lists the servers, and with `cwd` the definitions a session there sees.
pub async fn list(
    context: &RequestContext,
    params: McpListParams,
) -> Result<McpListResponse, ErrorObject> {
    let pool = pool(context)?;
    let servers = server_statuses(pool);
    let (definitions, diagnostics) = match params.cwd {
        Some(cwd) => {
            let cwd = crate::session::params::absolute_path("cwd", &cwd)
                .map_err(crate::rpc::errors::session)?;
            let env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
            let (definitions, diagnostics) = pool.definitions(&cwd, &env);
            (
                definitions
                    .iter()
                    .map(|definition| McpDefinition {
                        name: definition.name.clone(),
                        file: definition.file.display().to_string(),
                        transport: definition.transport_name().to_owned(),
                        trusted: definition.trusted,
                        approval: pool.trust().approval(definition).as_str().to_owned(),
                    })
                    .collect(),
                diagnostics
                    .iter()
                    .map(crate::session::convert::diagnostic)
                    .collect(),
            )
        }
        None => (Vec::new(), Vec::new()),
    };
    Ok(McpListResponse {
        servers,
        definitions,
        diagnostics,
    })
}

/// Restarts the servers named `params.name`.
pub async fn restart(
    context: &RequestContext,
    params: McpRestartParams,
) -> Result<McpRestartResponse, ErrorObject> {
    let pool = pool(context)?;
    let restarted = pool.restart(&params.name).await;
    if restarted == 0 {
        return Err(ErrorObject::new(
            ErrorKind::NotFound,
            format!(
                "no MCP server named \"{}\" has run in this daemon; `pictl mcp list` shows those \
                 that have",
                params.name
            ),
        )
        .with_field("name"));
    }
    Ok(McpRestartResponse {
        restarted: restarted as u32,
    })
}

/// The last lines of the logs of the servers named `params.name`.
pub async fn logs(
    context: &RequestContext,
    params: McpLogsParams,
) -> Result<McpLogsResponse, ErrorObject> {
    let pool = pool(context)?;
    let servers: Vec<_> = pool
        .list()
        .into_iter()
        .filter(|server| server.name == params.name || server.aliases.contains(&params.name))
        .collect();
    if servers.is_empty() {
        return Err(ErrorObject::new(
            ErrorKind::NotFound,
            format!(
                "no MCP server named \"{}\" has run in this daemon; `pictl mcp list` shows those \
                 that have",
                params.name
            ),
        )
        .with_field("name"));
    }
    let lines = params.lines.unwrap_or(100).clamp(1, 10_000) as usize;
    let mut logs = Vec::new();
    for server in servers {
        let path = server.log_path.clone();
        let text = tokio::task::spawn_blocking(move || tail(&path, lines))
            .await
            .unwrap_or_default();
        logs.push(McpLog {
            key: server.key,
            path: server.log_path.display().to_string(),
            text,
        });
    }
    Ok(McpLogsResponse { logs })
}

/// The last `lines` lines of the file at `path` (reading at most its last 1 MiB).
pub(super) fn tail(path: &std::path::Path, lines: usize) -> String {
    use std::io::{Read as _, Seek as _, SeekFrom};
    const MOST: u64 = 1024 * 1024;
    let Ok(mut file) = std::fs::File::open(path) else {
        return String::new();
    };
    let length = file.metadata().map(|meta| meta.len()).unwrap_or(0);
    let _ = file.seek(SeekFrom::Start(length.saturating_sub(MOST)));
    let mut bytes = Vec::new();
    let _ = file.read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes);
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Approves, refuses or forgets the project server `params.name` a session in `params.cwd`
/// sees.
pub async fn trust(
    context: &RequestContext,
    params: McpTrustParams,
) -> Result<McpTrustResponse, ErrorObject> {
    let pool = pool(context)?;
    let cwd = crate::session::params::absolute_path("cwd", &params.cwd)
        .map_err(crate::rpc::errors::session)?;
    let env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    let (definitions, _) = pool.definitions(&cwd, &env);
    let Some(definition) = definitions
        .into_iter()
        .find(|definition| definition.name == params.name)
    else {
        return Err(ErrorObject::new(
            ErrorKind::NotFound,
            format!(
                "no MCP server named \"{}\" is defined for {}; `pictl mcp list` in that \
                 directory shows its definitions",
                params.name,
                cwd.display()
            ),
        ));
    };
    if definition.trusted {
        return Err(ErrorObject::new(
            ErrorKind::InvalidParams,
            format!(
                "MCP server \"{}\" is defined by the user-level file {}, which is always \
                 trusted; only servers of a project's .mcp.json or .pi/mcp.json need approval",
                params.name,
                definition.file.display()
            ),
        ));
    }
    let answer = params.decision.approval();
    pool.trust()
        .answer(&definition, answer)
        .await
        .map_err(crate::rpc::errors::storage(&context.state.store))?;
    if answer != Some(true) {
        // Refused or forgotten: a running server of this definition goes now.
        pool.stop_definition(&definition).await;
    }
    Ok(McpTrustResponse {
        name: definition.name.clone(),
        file: definition.file.display().to_string(),
        approval: pool.trust().approval(&definition).as_str().to_owned(),
    })
}

/// Turns server `params.name` off or on for session `params.session_id`.
pub async fn set_enabled(
    context: &RequestContext,
    params: McpSetEnabledParams,
) -> Result<McpSetEnabledResponse, ErrorObject> {
    let pool = pool(context)?;
    // The session must exist (its row holds the choice).
    context
        .state
        .sessions
        .stored_info(&params.session_id)
        .await
        .map_err(crate::rpc::errors::session)?;
    let disabled_servers = pool
        .set_enabled(&params.session_id, &params.name, params.enabled)
        .await
        .map_err(crate::rpc::errors::storage(&context.state.store))?;
    Ok(McpSetEnabledResponse { disabled_servers })
}

/// `mcp/setSessionServers`.
pub async fn set_session_servers(
    context: &RequestContext,
    params: pi_protocol::v1::McpSetSessionServersParams,
) -> Result<pi_protocol::v1::McpSetSessionServersResponse, ErrorObject> {
    let pool = pool(context)?;
    context
        .state
        .sessions
        .stored_info(&params.session_id)
        .await
        .map_err(crate::rpc::errors::session)?;
    let mut servers = Vec::new();
    for (index, server) in params.servers.into_iter().enumerate() {
        let (transport, written) = match (server.command, server.url) {
            (Some(command), None) => {
                let written = std::iter::once(command.clone())
                    .chain(server.args.iter().cloned())
                    .collect::<Vec<_>>()
                    .join(" ");
                (
                    crate::mcp::config::Transport::Stdio {
                        command,
                        args: server.args,
                        env: server.env,
                        cwd: None,
                    },
                    written,
                )
            }
            (None, Some(url)) => (
                crate::mcp::config::Transport::Http {
                    url: url.clone(),
                    headers: server.headers,
                },
                url,
            ),
            _ => {
                return Err(ErrorObject::new(
                    ErrorKind::InvalidParams,
                    format!(
                        "servers[{index}] (\"{}\") needs either `command` (a stdio server) or `url` \
                         (an HTTP server)",
                        server.name
                    ),
                )
                .with_field("servers"));
            }
        };
        servers.push(crate::mcp::ServerDefinition {
            name: server.name,
            file: std::path::PathBuf::from("(given by a client)"),
            trusted: true,
            transport,
            timeout_ms: None,
            definition_hash: String::new(),
            written,
        });
    }
    let names = servers.iter().map(|server| server.name.clone()).collect();
    pool.set_session_servers(&params.session_id, servers);
    Ok(pi_protocol::v1::McpSetSessionServersResponse { servers: names })
}

/// Every server's status as the protocol shows it (`mcp/list`, `mcp/changed`).
pub fn server_statuses(pool: &crate::mcp::McpPool) -> Vec<McpServerStatus> {
    pool.list()
        .into_iter()
        .map(|server| McpServerStatus {
            name: server.name,
            aliases: server.aliases,
            key: server.key,
            transport: server.transport.to_owned(),
            state: server.state.to_owned(),
            pid: server.pid,
            file: server.file.display().to_string(),
            tools: server.tools,
            sessions: server.sessions,
            last_error: server.last_error,
            log_path: server.log_path.display().to_string(),
            starts: server.starts,
        })
        .collect()
}

/// Sends `mcp/changed` to every connection whenever the servers change, until shutdown.
pub async fn announce_changes(state: std::sync::Arc<crate::state::DaemonState>) {
    let Some(pool) = state.mcp.clone() else {
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
        let params = pi_protocol::v1::McpChangedParams {
            servers: server_statuses(&pool),
        };
        let name = <pi_protocol::v1::McpChanged as pi_protocol::NotificationMethod>::NAME;
        let Ok(frame) = crate::frame::notification(name, &params) else {
            continue;
        };
        for (sink, _) in state.clients() {
            if sink.is_initialized() {
                let _ = sink.notify(name, crate::outbound::Outbound::Frame(frame.clone()));
            }
        }
    }
}
