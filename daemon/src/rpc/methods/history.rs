//! `history/search`: the prompt history shared by all clients.

use pi_protocol::ErrorObject;
use pi_protocol::v1::{HistoryEntry, HistorySearchParams, HistorySearchResponse};

use crate::rpc::dispatch::RequestContext;

/// Default and largest page of `history/search`.
const DEFAULT_LIMIT: u32 = 100;
const MAX_LIMIT: u32 = 1000;

/// Searches the prompt history, newest first.
pub async fn search(
    context: &RequestContext,
    params: HistorySearchParams,
) -> Result<HistorySearchResponse, ErrorObject> {
    let limit = params.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
    let cwd = params
        .cwd
        .as_deref()
        .map(|cwd| crate::session::params::absolute_path("cwd", cwd))
        .transpose()
        .map_err(crate::rpc::errors::session)?
        .map(|cwd| cwd.display().to_string());
    let rows = context
        .state
        .store
        .search_prompts(params.query.as_deref(), cwd.as_deref(), limit)
        .await
        .map_err(crate::rpc::errors::storage(&context.state.store))?;
    Ok(HistorySearchResponse {
        entries: rows
            .into_iter()
            .map(|row| HistoryEntry {
                text: row.text,
                cwd: row.cwd,
                sent_at: row.sent_at,
            })
            .collect(),
    })
}
