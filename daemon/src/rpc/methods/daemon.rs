//! `daemon/status` and `daemon/shutdown`.

use pi_protocol::ErrorObject;
use std::sync::atomic::Ordering;

use pi_protocol::v1::{
    ConnectionStatus, DaemonShutdownParams, DaemonShutdownResponse, DaemonStatusParams,
    DaemonStatusResponse, ProcessMemory, SessionCounts, StoreCounters,
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
        websocket_error: state.websocket_error().map(str::to_owned),
        connections: state.connection_count(),
        sessions: SessionCounts {
            loaded: state.sessions.loaded_count(),
            stored: state.sessions.stored_count().await,
        },
        database_schema_version: state.store.schema_version(),
        database_path: text(&state.paths.database_path()),
        config_dir: text(&state.paths.config_dir),
        data_dir: text(&state.paths.data_dir),
        clients: state
            .clients()
            .into_iter()
            .map(|(sink, transport)| {
                let (queued_messages, queued_bytes) = sink.queued();
                ConnectionStatus {
                    connection_id: sink.id().to_owned(),
                    client: sink.name().to_owned(),
                    transport: transport.to_owned(),
                    queued_messages: queued_messages as u64,
                    queued_bytes: queued_bytes as u64,
                }
            })
            .collect(),
        memory: process_memory(
            state.heap_bytes.and_then(|read| read()),
            state.sessions.recent_events_bytes() as u64,
        ),
        store: StoreCounters {
            transactions: state
                .store
                .writer_stats()
                .transactions
                .load(Ordering::Relaxed),
            writes: state.store.writer_stats().writes.load(Ordering::Relaxed),
        },
        config: state.config_files.status(),
        mcp: state
            .mcp
            .as_ref()
            .map(|pool| pi_protocol::v1::McpCounts {
                servers: pool.list().len() as u32,
                running: pool.running_count() as u32,
            })
            .unwrap_or_default(),
        lsp: state
            .lsp
            .as_ref()
            .map(|pool| pi_protocol::v1::LspCounts {
                servers: pool.list().len() as u32,
                running: pool.running_count() as u32,
            })
            .unwrap_or_default(),
        extensions: state
            .extensions
            .as_ref()
            .map(|host| {
                let status = host.status();
                pi_protocol::v1::ExtensionCounts {
                    host: status.state.to_owned(),
                    pid: status.pid,
                    sessions: status.sessions.len() as u32,
                    // Sets opened in a host that stopped load again on their next use.
                    loaded: status
                        .sessions
                        .values()
                        .filter(|set| set.is_live(&status))
                        .map(|set| set.extensions.len() as u32)
                        .sum(),
                }
            })
            .unwrap_or_default(),
        pools: pi_protocol::v1::PoolCounts {
            jobs_running: state
                .jobs
                .as_ref()
                .map_or(0, |pool| pool.running(None) as u32),
            jobs_limit: state
                .jobs
                .as_ref()
                .map_or(0, |pool| pool.limits().total as u32),
            jobs_per_session_limit: state
                .jobs
                .as_ref()
                .map_or(0, |pool| pool.limits().per_session as u32),
            kernels: state.kernels.as_ref().map_or(0, |pool| pool.count() as u32),
            kernels_limit: state
                .kernels
                .as_ref()
                .map_or(0, |pool| pool.limits().max as u32),
        },
        sandbox: {
            let env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
            let place = std::path::Path::new(super::settings::SESSION_DIRECTORY);
            let sandbox = state
                .policy
                .as_ref()
                .and_then(|policy| policy.default_sandbox(place, &env));
            crate::convert::effective_sandbox(sandbox.as_ref(), place, &env)
        },
    })
}

/// Resident and peak memory from `/proc/self/status` (Linux), with the allocator's `heap`
/// and the sessions' `recent_events` bytes; `None` elsewhere.
fn process_memory(heap: Option<u64>, recent_events: u64) -> Option<ProcessMemory> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib = |key: &str| -> Option<u64> {
        status
            .lines()
            .find_map(|line| line.strip_prefix(key))?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    };
    Some(ProcessMemory {
        rss_bytes: kib("VmRSS:")? * 1024,
        peak_rss_bytes: kib("VmHWM:")? * 1024,
        heap_bytes: heap,
        recent_events_bytes: recent_events,
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
