//! Calls a person allowed "always in this project" when the approvals policy asked: by
//! project directory, tool, and for `bash` the exact command (empty: any call of the tool).

use crate::store::writer::Statements;
use crate::store::{Store, StoreError};

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
