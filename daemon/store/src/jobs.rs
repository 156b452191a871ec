//! Background jobs: a row per job, written when it starts and when it ends. At start the
//! daemon marks the rows still `running` as `lost` (their processes died with the daemon
//! before).

use crate::writer::Statements;
use crate::{Store, StoreError};

/// A stored job.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct JobRow {
    /// Its id (also its output artifact's).
    pub id: String,
    /// The session that started it.
    pub session_id: String,
    /// The command line.
    pub command: String,
    /// Its working directory.
    pub cwd: String,
    /// Under a terminal.
    pub tty: bool,
    /// `running`, `exited`, `killed` or `lost`.
    pub state: String,
    /// Once exited.
    pub exit_code: Option<i64>,
    /// Unix milliseconds.
    pub started_at: i64,
    /// Unix milliseconds, once ended.
    pub ended_at: Option<i64>,
    /// The output file.
    pub spool: String,
}

impl Store {
    /// Records a job that started.
    #[tracing::instrument(level = "trace", skip_all, err)]
    pub async fn insert_job(&self, job: &JobRow) -> Result<(), StoreError> {
        let mut write = Statements::default();
        write.push(
            "INSERT INTO jobs (id, session_id, command, cwd, tty, state, exit_code, started_at, \
             ended_at, spool) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                job.id.clone().into(),
                job.session_id.clone().into(),
                job.command.clone().into(),
                job.cwd.clone().into(),
                i64::from(job.tty).into(),
                job.state.clone().into(),
                job.exit_code.into(),
                job.started_at.into(),
                job.ended_at.into(),
                job.spool.clone().into(),
            ],
        );
        self.write_statements(write).await
    }

    /// Records how job `id` ended.
    #[tracing::instrument(level = "trace", skip_all, err)]
    pub async fn end_job(
        &self,
        id: &str,
        state: &str,
        exit_code: Option<i64>,
        ended_at: i64,
    ) -> Result<(), StoreError> {
        let mut write = Statements::default();
        write.push(
            "UPDATE jobs SET state = ?, exit_code = ?, ended_at = ? WHERE id = ?",
            [state.into(), exit_code.into(), ended_at.into(), id.into()],
        );
        self.write_statements(write).await
    }

    /// Marks every job still `running` as `lost` (at start: its process died with the
    /// daemon); how many.
    #[tracing::instrument(level = "trace", skip_all, err)]
    pub async fn mark_jobs_lost(&self, now: i64) -> Result<u64, StoreError> {
        self.write(move |connection| {
            Box::pin(async move {
                let result = sqlx::query(
                    "UPDATE jobs SET state = 'lost', ended_at = ?1 WHERE state = 'running'",
                )
                .bind(now)
                .execute(&mut *connection)
                .await?;
                Ok(result.rows_affected())
            })
        })
        .await
    }

    /// Jobs, oldest first: of one session, or of all.
    #[tracing::instrument(level = "trace", skip_all, err)]
    pub async fn jobs(&self, session_id: Option<&str>) -> Result<Vec<JobRow>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT id, session_id, command, cwd, tty, state, exit_code, started_at, ended_at, \
             spool FROM jobs WHERE ?1 IS NULL OR session_id = ?1 ORDER BY started_at, id",
        )
        .bind(session_id)
        .fetch_all(&self.reader)
        .await?)
    }
}
