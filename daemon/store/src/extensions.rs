//! What the daemon remembers about pi extensions: the user's answer about each extension a
//! project brings (by its resolved path).

use sqlx::Row as _;

use crate::writer::Statements;
use crate::{Store, StoreError};

/// The user's answer about one project extension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtensionTrustRow {
    /// The extension's file (resolved, absolute).
    pub path: String,
    /// Load it (`true`) or never (`false`).
    pub approved: bool,
    /// When, Unix ms.
    pub decided_at: i64,
}

impl Store {
    /// Records the user's answers about project extensions (a later answer replaces one),
    /// in one transaction.
    #[tracing::instrument(level = "trace", skip_all, err)]
    pub async fn record_extension_trust(
        &self,
        rows: &[ExtensionTrustRow],
    ) -> Result<(), StoreError> {
        let mut write = Statements::default();
        for row in rows {
            write.push(
                "INSERT INTO extension_trust (path, approved, decided_at) VALUES (?, ?, ?) \
                 ON CONFLICT (path) DO UPDATE SET approved = excluded.approved, \
                 decided_at = excluded.decided_at",
                [
                    row.path.as_str().into(),
                    row.approved.into(),
                    row.decided_at.into(),
                ],
            );
        }
        self.write_statements(write).await
    }

    /// Forgets the answers about `paths` (they are asked about again).
    #[tracing::instrument(level = "trace", skip_all, err)]
    pub async fn forget_extension_trust(&self, paths: &[String]) -> Result<(), StoreError> {
        let mut write = Statements::default();
        for path in paths {
            write.push(
                "DELETE FROM extension_trust WHERE path = ?",
                [path.as_str().into()],
            );
        }
        self.write_statements(write).await
    }

    /// Every recorded answer.
    #[tracing::instrument(level = "trace", skip_all, err)]
    pub async fn extension_trust(&self) -> Result<Vec<ExtensionTrustRow>, StoreError> {
        let rows = sqlx::query("SELECT path, approved, decided_at FROM extension_trust")
            .fetch_all(&self.reader)
            .await?;
        rows.iter()
            .map(|row| {
                Ok(ExtensionTrustRow {
                    path: row.try_get("path")?,
                    approved: row.try_get::<i64, _>("approved")? != 0,
                    decided_at: row.try_get("decided_at")?,
                })
            })
            .collect()
    }
}
