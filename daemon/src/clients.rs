//! The open connections: counted, and listed with their outbound sinks, for `daemon/status`
//! and for what the daemon tells every client (`config/changed`, `mcp/changed`,
//! `lsp/changed`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::outbound::ConnectionSink;

/// Every open connection.
#[derive(Debug, Default)]
pub struct Clients {
    // Open connections; incremented and decremented only by `ConnectionGuard`.
    connections: AtomicU32,
    // The outbound sinks of open connections by id; entries are added by
    // `ConnectionGuard::register` and removed when the guard drops. A sync mutex, never held
    // across an await.
    sinks: Mutex<BTreeMap<String, (ConnectionSink, &'static str)>>,
    next_id: AtomicU64,
}

impl Clients {
    /// Open connections right now.
    pub fn count(&self) -> u32 {
        self.connections.load(Ordering::Relaxed)
    }

    /// The open connections' sinks and transports, in id order.
    pub fn list(&self) -> Vec<(ConnectionSink, &'static str)> {
        self.sinks().values().cloned().collect()
    }

    /// Counts a new connection; the guard uncounts it when dropped.
    pub fn open(self: &Arc<Self>) -> ConnectionGuard {
        self.connections.fetch_add(1, Ordering::Relaxed);
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        ConnectionGuard {
            clients: self.clone(),
            id: format!("c{id}"),
        }
    }

    fn sinks(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, (ConnectionSink, &'static str)>> {
        self.sinks.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Keeps a connection counted; dropping it uncounts it.
#[derive(Debug)]
pub struct ConnectionGuard {
    clients: Arc<Clients>,
    /// The connection's id, `c1`, `c2`, ... in start order.
    pub id: String,
}

impl ConnectionGuard {
    /// Lists the connection's outbound sink (and transport name).
    pub fn register(&self, sink: ConnectionSink, transport: &'static str) {
        self.clients
            .sinks()
            .insert(self.id.clone(), (sink, transport));
    }
}

impl Drop for ConnectionGuard {
    fn drop(&mut self) {
        self.clients.sinks().remove(&self.id);
        self.clients.connections.fetch_sub(1, Ordering::Relaxed);
    }
}
