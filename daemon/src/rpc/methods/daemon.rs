//! `daemon/status` and `daemon/shutdown`.

use pi_protocol::ErrorObject;
use pi_protocol::v1::{
    DaemonShutdownParams, DaemonShutdownResponse, DaemonStatusParams, DaemonStatusResponse,
    SessionCounts,
};

use crate::rpc::dispatch::RequestContext;

/// Reports versions, process, endpoints and counters.
pub async fn status(
    context: &RequestContext,
    _params: DaemonStatusParams,
) -> Result<DaemonStatusResponse, ErrorObject> {
    let state = &context.state;
    let text = |path: &std::path::Path| path.display().to_string();
    Ok(DaemonStatusResponse {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        protocol_version: pi_protocol::PROTOCOL_VERSION,
        pid: std::process::id(),
        started_at: state.started_at,
        uptime_ms: state.uptime_ms(),
        supervisor: state.supervisor,
        socket_path: text(&state.paths.socket_path()),
        websocket_url: state.websocket_url().map(str::to_owned),
        connections: state.connection_count(),
        sessions: SessionCounts {
            loaded: state.sessions.loaded_count(),
            stored: state.sessions.stored_count().await,
        },
        database_schema_version: state.store.schema_version(),
        database_path: text(&state.paths.database_path()),
        config_dir: text(&state.paths.config_dir),
        data_dir: text(&state.paths.data_dir),
    })
}

/// Begins a graceful shutdown. The response still goes out: the connection waits for its
/// in-flight requests before closing.
pub async fn shutdown(
    context: &RequestContext,
    _params: DaemonShutdownParams,
) -> Result<DaemonShutdownResponse, ErrorObject> {
    tracing::info!(connection = context.connection.id(), "shutdown requested");
    context.state.shutdown.cancel();
    Ok(DaemonShutdownResponse {
        pid: std::process::id(),
    })
}
