//! A run's MCP tools, as the run's [`ToolSource`]: the servers its session uses are acquired
//! (started if they were not) when the run starts, and the agent loop asks for their tools
//! before each model request, so a server that became ready during the run joins its next
//! turn.
//!
//! A server that has never listed its tools (a definition's first use in a directory, or a
//! fresh daemon: the `ToolCache` has no list under its key) has nothing to offer while it
//! starts, so a request waits for it — until it is ready or fails, or `[mcp]
//! first_start_wait_secs` after its first start. A server whose list is known offers that
//! list at once; its calls wait for it.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use pi_agent::{Tool, ToolSource, ToolWait};

use super::{Binding, McpPool, Phase, Server};

/// The MCP tools of one run of one session.
#[derive(Debug)]
pub struct RunTools {
    pool: Arc<McpPool>,
    session_id: String,
    // The session's servers when the run started, under its names for them.
    bindings: Vec<Binding>,
}

impl McpPool {
    /// The MCP tools of a run of session `session_id` (in `cwd`, with `env`) about to start:
    /// the servers it sees are now used by it and started if they were not (project servers
    /// not answered about yet are asked about through `approver`).
    pub fn run_tools(
        self: &Arc<Self>,
        session_id: &str,
        cwd: &Path,
        env: &BTreeMap<String, String>,
        approver: &Arc<dyn super::trust::Approver>,
    ) -> RunTools {
        RunTools {
            bindings: self.acquire(session_id, cwd, env, approver),
            pool: self.clone(),
            session_id: session_id.to_owned(),
        }
    }

    /// The names of the MCP tools session `session_id`'s runs offer now, from the servers
    /// it uses (from its creation or its first run in this daemon on).
    pub fn tool_names(&self, session_id: &str) -> Vec<String> {
        let bindings: Vec<Binding> = self
            .servers_of(session_id)
            .into_iter()
            .map(|(name, server)| Binding {
                name,
                timeout: server.call_timeout(),
                server,
            })
            .collect();
        super::tool::session_tools(&bindings, &self.artifacts, session_id)
            .iter()
            .map(|tool| tool.name().to_owned())
            .collect()
    }
}

impl ToolSource for RunTools {
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        super::tool::session_tools(&self.bindings, &self.pool.artifacts, &self.session_id)
    }

    fn awaited(&self) -> Option<ToolWait> {
        let now = Instant::now();
        // The starting servers that never listed their tools and are still waited for.
        let mut waits: Vec<(Arc<Server>, Instant)> = Vec::new();
        let mut named: Vec<(String, Arc<Server>)> = Vec::new();
        for binding in &self.bindings {
            let server = &binding.server;
            let until = {
                let state = server.state();
                if state.listed {
                    continue;
                }
                state.awaited_until
            };
            let Some(until) = until.filter(|until| *until > now) else {
                continue;
            };
            if !server.starting() {
                continue;
            }
            named.push((binding.name.clone(), server.clone()));
            if !waits.iter().any(|(waited, _)| Arc::ptr_eq(waited, server)) {
                waits.push((server.clone(), until));
            }
        }
        let timeout = waits.iter().map(|(_, until)| *until - now).max()?;
        let sources = named.iter().map(|(name, _)| name.clone()).collect();
        let done = async move {
            let each = waits.into_iter().map(|(server, until)| async move {
                let mut phase = server.subscribe_phase();
                let _ = tokio::time::timeout_at(
                    until.into(),
                    phase.wait_for(|phase| *phase != Phase::Starting),
                )
                .await;
            });
            futures_util::future::join_all(each).await;
            named
                .into_iter()
                .filter(|(_, server)| server.phase() != Phase::Ready)
                .map(|(name, _)| name)
                .collect()
        };
        Some(ToolWait {
            sources,
            timeout,
            done: Box::pin(done),
        })
    }
}
