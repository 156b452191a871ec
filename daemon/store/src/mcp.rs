//! What the daemon remembers about MCP servers: the user's answer about each server a
//! project file defines (by file and definition hash: an edited definition is asked about
//! again), and each server's last tool list (by its sharing key, stored in the column
//! `definition_hash`).

use sqlx::Row as _;

use crate::writer::Statements;
use crate::{Store, StoreError};

/// The user's answer about one project server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpTrustRow {
    /// The project file that defines it.
    pub file: String,
    /// The definition's hash.
    pub definition_hash: String,
    /// Start it (`true`) or never (`false`).
    pub approved: bool,
    /// When, Unix ms.
    pub decided_at: i64,
}

impl Store {
    /// Records the user's answer about a project server (a later answer replaces it).
    #[tracing::instrument(level = "trace", skip_all, err)]
    pub async fn record_mcp_trust(&self, row: &McpTrustRow) -> Result<(), StoreError> {
        let mut write = Statements::default();
        write.push(
            "INSERT INTO mcp_trust (file, definition_hash, approved, decided_at) \
             VALUES (?, ?, ?, ?) ON CONFLICT (file, definition_hash) DO UPDATE SET \
             approved = excluded.approved, decided_at = excluded.decided_at",
            [
                row.file.as_str().into(),
                row.definition_hash.as_str().into(),
                row.approved.into(),
                row.decided_at.into(),
            ],
        );
        self.write_statements(write).await
    }

    /// Forgets the answer about a project server (it is asked about again).
    #[tracing::instrument(level = "trace", skip_all, err)]
    pub async fn forget_mcp_trust(
        &self,
        file: &str,
        definition_hash: &str,
    ) -> Result<(), StoreError> {
        let mut write = Statements::default();
        write.push(
            "DELETE FROM mcp_trust WHERE file = ? AND definition_hash = ?",
            [file.into(), definition_hash.into()],
        );
        self.write_statements(write).await
    }

    /// Every recorded answer.
    #[tracing::instrument(level = "trace", skip_all, err)]
    pub async fn mcp_trust(&self) -> Result<Vec<McpTrustRow>, StoreError> {
        let rows = sqlx::query("SELECT file, definition_hash, approved, decided_at FROM mcp_trust")
            .fetch_all(&self.reader)
            .await?;
        rows.iter()
            .map(|row| {
                Ok(McpTrustRow {
                    file: row.try_get("file")?,
                    definition_hash: row.try_get("definition_hash")?,
                    approved: row.try_get::<i64, _>("approved")? != 0,
                    decided_at: row.try_get("decided_at")?,
                })
            })
            .collect()
    }

    /// Stores a server's tool list (JSON) under its sharing key.
    #[tracing::instrument(level = "trace", skip_all, err)]
    pub async fn cache_mcp_tools(
        &self,
        definition_hash: &str,
        tools: &str,
        updated_at: i64,
    ) -> Result<(), StoreError> {
        let mut write = Statements::default();
        write.push(
            "INSERT INTO mcp_tool_cache (definition_hash, tools, updated_at) VALUES (?, ?, ?) \
             ON CONFLICT (definition_hash) DO UPDATE SET tools = excluded.tools, \
             updated_at = excluded.updated_at",
            [definition_hash.into(), tools.into(), updated_at.into()],
        );
        self.write_statements(write).await
    }

    /// Every cached tool list updated at or after `since` (Unix ms), as (hash, JSON).
    #[tracing::instrument(level = "trace", skip_all, err)]
    pub async fn cached_mcp_tools(&self, since: i64) -> Result<Vec<(String, String)>, StoreError> {
        let rows =
            sqlx::query("SELECT definition_hash, tools FROM mcp_tool_cache WHERE updated_at >= ?")
                .bind(since)
                .fetch_all(&self.reader)
                .await?;
        rows.iter()
            .map(|row| Ok((row.try_get("definition_hash")?, row.try_get("tools")?)))
            .collect()
    }
}

impl Store {
    /// Marks server `server` as disabled (or enabled again) for session `session_id`.
    #[tracing::instrument(level = "trace", skip_all, err)]
    pub async fn set_session_mcp_disabled(
        &self,
        session_id: &str,
        server: &str,
        disabled: bool,
    ) -> Result<(), StoreError> {
        let mut write = Statements::default();
        if disabled {
            write.push(
                "INSERT OR IGNORE INTO session_mcp_disabled (session_id, server) VALUES (?, ?)",
                [session_id.into(), server.into()],
            );
        } else {
            write.push(
                "DELETE FROM session_mcp_disabled WHERE session_id = ? AND server = ?",
                [session_id.into(), server.into()],
            );
        }
        self.write_statements(write).await
    }

    /// Every session's disabled servers, as (session, server).
    #[tracing::instrument(level = "trace", skip_all, err)]
    pub async fn session_mcp_disabled(&self) -> Result<Vec<(String, String)>, StoreError> {
        let rows = sqlx::query("SELECT session_id, server FROM session_mcp_disabled")
            .fetch_all(&self.reader)
            .await?;
        rows.iter()
            .map(|row| Ok((row.try_get("session_id")?, row.try_get("server")?)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn answers_and_tool_lists_are_kept_and_replaced() {
        let (_dir, store) = crate::temp_store().await;
        let row = McpTrustRow {
            file: "/p/.mcp.json".to_owned(),
            definition_hash: "abc".to_owned(),
            approved: false,
            decided_at: 1,
        };
        store.record_mcp_trust(&row).await.unwrap();
        store
            .record_mcp_trust(&McpTrustRow {
                approved: true,
                decided_at: 2,
                ..row.clone()
            })
            .await
            .unwrap();
        assert_eq!(
            store.mcp_trust().await.unwrap(),
            [McpTrustRow {
                approved: true,
                decided_at: 2,
                ..row
            }]
        );
        store.forget_mcp_trust("/p/.mcp.json", "abc").await.unwrap();
        assert!(store.mcp_trust().await.unwrap().is_empty());

        store.cache_mcp_tools("h1", "[1]", 10).await.unwrap();
        store.cache_mcp_tools("h1", "[2]", 20).await.unwrap();
        store.cache_mcp_tools("h2", "[3]", 5).await.unwrap();
        assert_eq!(
            store.cached_mcp_tools(10).await.unwrap(),
            [("h1".to_owned(), "[2]".to_owned())]
        );
    }
}
