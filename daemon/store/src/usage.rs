//! The usage ledger: token and cost sums of stored assistant messages, grouped by model and
//! UTC day, read from the entries' JSON (no table of its own: the entries are the ledger).

use crate::{Store, StoreError};

/// Sums of the assistant messages of one model on one UTC day.
#[derive(Clone, Debug, PartialEq)]
pub struct UsageRow {
    /// Provider id (empty when the message has none).
    pub provider: String,
    /// Model id (empty when the message has none).
    pub model: String,
    /// `YYYY-MM-DD`, UTC.
    pub day: String,
    /// The working directory of the message's session (its project).
    pub cwd: String,
    /// Assistant messages.
    pub messages: u64,
    /// Non-cached input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Cache-read tokens.
    pub cache_read: u64,
    /// Cache-write tokens.
    pub cache_write: u64,
    /// Cost, USD.
    pub cost: f64,
}

/// One grouped row as SQLite returns it: provider, model, day, cwd, count, the four token
/// sums, cost.
type RawUsageRow = (String, String, String, String, i64, i64, i64, i64, i64, f64);

impl Store {
    /// Usage of every stored assistant message at or after `since` (Unix ms), per model, day
    /// and session directory, ordered by day, provider, model, directory. Costs are summed
    /// with `TOTAL` (always a float): a model without prices writes integer zeros, which
    /// `SUM` would give back as an integer.
    pub async fn usage(&self, since: Option<i64>) -> Result<Vec<UsageRow>, StoreError> {
        let rows: Vec<RawUsageRow> = sqlx::query_as(
            "SELECT COALESCE(json_extract(body, '$.message.provider'), '') AS provider, \
                    COALESCE(json_extract(body, '$.message.model'), '') AS model, \
                    strftime('%Y-%m-%d', json_extract(body, '$.message.timestamp') / 1000, 'unixepoch') AS day, \
                    sessions.cwd AS cwd, \
                    COUNT(*), \
                    COALESCE(SUM(json_extract(body, '$.message.usage.input')), 0), \
                    COALESCE(SUM(json_extract(body, '$.message.usage.output')), 0), \
                    COALESCE(SUM(json_extract(body, '$.message.usage.cacheRead')), 0), \
                    COALESCE(SUM(json_extract(body, '$.message.usage.cacheWrite')), 0), \
                    TOTAL(json_extract(body, '$.message.usage.cost.total')) \
             FROM entries JOIN sessions ON sessions.id = entries.session_id \
             WHERE type = 'message' \
               AND json_extract(body, '$.message.role') = 'assistant' \
               AND (?1 IS NULL OR json_extract(body, '$.message.timestamp') >= ?1) \
             GROUP BY provider, model, day, cwd \
             ORDER BY day, provider, model, cwd",
        )
        .bind(since)
        .fetch_all(&self.reader)
        .await?;
        Ok(rows
            .into_iter()
            .map(
                |(
                    provider,
                    model,
                    day,
                    cwd,
                    messages,
                    input,
                    output,
                    cache_read,
                    cache_write,
                    cost,
                )| {
                    UsageRow {
                        provider,
                        model,
                        day,
                        cwd,
                        messages: messages.max(0) as u64,
                        input: input.max(0) as u64,
                        output: output.max(0) as u64,
                        cache_read: cache_read.max(0) as u64,
                        cache_write: cache_write.max(0) as u64,
                        cost,
                    }
                },
            )
            .collect())
    }
}
