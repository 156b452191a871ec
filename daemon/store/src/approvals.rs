//! Calls a person allowed "always in this project" when the approvals policy asked: by
//! project directory, tool, and for `bash` the exact command (empty: any call of the tool);
//! and sessions' own approval modes.

use crate::writer::Statements;
use crate::{Store, StoreError};

impl Store {
    /// Remembers that `tool` (with `command`, empty for any) may run in `project`.
    #[tracing::instrument(level = "trace", skip_all, err)]
    pub async fn allow_in_project(
        &self,
        project: &str,
        tool: &str,
        command: &str,
        now: i64,
    ) -> Result<(), StoreError> {
        let mut write = Statements::default();
        write.push(
            "INSERT INTO project_approvals (project, tool, command, created_at) \
             VALUES (?, ?, ?, ?) ON CONFLICT (project, tool, command) DO NOTHING",
            [project.into(), tool.into(), command.into(), now.into()],
        );
        self.write_statements(write).await
    }

    /// Whether `tool` with `command` was allowed always in `project` (that command, or any).
    #[tracing::instrument(level = "trace", skip_all, err)]
    pub async fn allowed_in_project(
        &self,
        project: &str,
        tool: &str,
        command: &str,
    ) -> Result<bool, StoreError> {
        let found: Option<i64> = sqlx::query_scalar(
            "SELECT 1 FROM project_approvals WHERE project = ?1 AND tool = ?2 \
             AND (command = '' OR command = ?3) LIMIT 1",
        )
        .bind(project)
        .bind(tool)
        .bind(command)
        .fetch_optional(&self.reader)
        .await?;
        Ok(found.is_some())
    }
}

impl Store {
    /// Stores session `session_id`'s own approval mode.
    #[tracing::instrument(level = "trace", skip_all, err)]
    pub async fn set_policy_mode(&self, session_id: &str, mode: &str) -> Result<(), StoreError> {
        let mut write = Statements::default();
        write.push(
            "UPDATE sessions SET policy_mode = ? WHERE id = ?",
            [mode.into(), session_id.into()],
        );
        self.write_statements(write).await
    }

    /// Every session's own approval mode: (session id, mode).
    #[tracing::instrument(level = "trace", skip_all, err)]
    pub async fn policy_modes(&self) -> Result<Vec<(String, String)>, StoreError> {
        Ok(
            sqlx::query_as("SELECT id, policy_mode FROM sessions WHERE policy_mode IS NOT NULL")
                .fetch_all(&self.reader)
                .await?,
        )
    }
}
