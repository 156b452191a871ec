//! The SQLite store (sqlx, WAL): the daemon's source of truth and the only module with SQL.
//!
//! Migrations live in `migrations/` at the repository root, are embedded at compile time and
//! applied at open. They are append-only: `migrations/ledger.txt` records the checksum of
//! every committed migration and a test fails when one changes.
//!
//! Durability: WAL with `synchronous=NORMAL` makes every committed transaction survive a crash
//! of the daemon (kill -9); only an OS crash can lose the newest commits
//! (`docs/decisions/0003-sqlite-durability.md`).
//!
//! Concurrency: one writing connection, owned by the writer task (`writer.rs`), carries every
//! write; reads use a pool of read-only connections
//! (`docs/decisions/0007-one-sqlite-writer.md`).

mod approvals;
mod entries;
mod error;
mod extensions;
mod history;
mod jobs;
mod mcp;
mod sessions;
mod usage;
mod writer;

pub use entries::{NewEntry, StoredEntry};
pub use error::{StorageFailure, StoreError};
pub use extensions::ExtensionTrustRow;
pub use history::HistoryRow;
pub use jobs::JobRow;
pub use mcp::McpTrustRow;
pub use sessions::{Env, ListCursor, SessionRow, StartOptions};
pub use usage::UsageRow;
pub use writer::WriterStats;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use sqlx::migrate::Migrator;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePool, SqlitePoolOptions,
    SqliteSynchronous,
};
use sqlx::{ConnectOptions as _, Connection as _};

use crate::writer::WriterHandle;

/// Every migration, embedded from `migrations/`.
pub static MIGRATOR: Migrator = sqlx::migrate!("../../migrations");

/// How long a statement waits for a lock another process holds before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// A handle to the database; cheap to clone.
///
/// Reads go through a pool of `query_only` connections, which WAL lets read while a write
/// is in progress; writes go through the one writing connection of the writer task
/// (`writer.rs`), which commits whatever is queued in one transaction.
#[derive(Clone, Debug)]
pub struct Store {
    // Read-only by `PRAGMA query_only`: a write sent here fails instead of contending.
    reader: SqlitePool,
    writer: WriterHandle,
    path: Arc<Path>,
    // Invariant: the version of the newest applied migration; migrations only run at open.
    schema_version: i64,
}

/// How to open the store. `Default` is the daemon's configuration.
#[derive(Clone, Debug)]
pub struct StoreOptions {
    /// Connections in the read pool.
    pub readers: u32,
    /// Caps the database at this many pages (SQLite's `max_page_count`), past which writes
    /// fail as if the disk were full. For tests of that failure; `None` in the daemon.
    pub max_page_count: Option<u64>,
    /// How long a statement waits for a lock another program holds before failing.
    pub busy_timeout: Duration,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            readers: 4,
            max_page_count: None,
            busy_timeout: BUSY_TIMEOUT,
        }
    }
}

impl Store {
    /// Opens (creating if needed) the database at `path` and applies pending migrations.
    pub async fn open(path: &Path) -> Result<Store, StoreError> {
        Store::open_with(path, StoreOptions::default()).await
    }

    /// Like [`Store::open`], with `options`.
    pub async fn open_with(path: &Path, options: StoreOptions) -> Result<Store, StoreError> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| StoreError::CreateDir {
                path: parent.to_path_buf(),
                source: Arc::new(source),
            })?;
        }
        let mut writer_options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            // What is deleted or overwritten (a scrubbed secret, a deleted session) is zeroed in
            // the file, not left in free space.
            .pragma("secure_delete", "ON")
            .busy_timeout(options.busy_timeout);
        if let Some(pages) = options.max_page_count {
            writer_options = writer_options.pragma("max_page_count", pages.to_string());
        }
        let mut connection = writer_options.connect().await?;
        MIGRATOR.run(&mut connection).await?;
        // Old page images (from before a migration that scrubbed data) leave the WAL file.
        sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
            .execute(&mut connection)
            .await?;
        let schema_version: Option<i64> =
            sqlx::query_scalar("SELECT MAX(version) FROM _sqlx_migrations WHERE success = 1")
                .fetch_one(&mut connection)
                .await?;
        record_start(&mut connection).await?;
        let writer = WriterHandle::start(connection, writer_options);
        let reader_options = SqliteConnectOptions::new()
            .filename(path)
            .busy_timeout(options.busy_timeout)
            .pragma("query_only", "ON");
        let reader = SqlitePoolOptions::new()
            .max_connections(options.readers.max(1))
            .min_connections(1)
            .connect_with(reader_options)
            .await;
        let reader = match reader {
            Ok(reader) => reader,
            Err(error) => {
                writer.close().await;
                return Err(error.into());
            }
        };
        Ok(Store {
            reader,
            writer,
            path: Arc::from(path),
            schema_version: schema_version.unwrap_or(0),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Version of the newest applied migration.
    pub fn schema_version(&self) -> i64 {
        self.schema_version
    }

    /// Counters of the writer: transactions and the writes they carried.
    pub fn writer_stats(&self) -> &WriterStats {
        self.writer.stats()
    }

    /// How many times a daemon has opened this database, this open included.
    pub async fn start_count(&self) -> Result<i64, StoreError> {
        let count: Option<String> =
            sqlx::query_scalar("SELECT value FROM daemon_meta WHERE key = 'start_count'")
                .fetch_optional(&self.reader)
                .await?;
        Ok(count.and_then(|count| count.parse().ok()).unwrap_or(0))
    }

    /// Number of applied migrations (tests check they are applied exactly once).
    pub async fn applied_migration_count(&self) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar("SELECT COUNT(*) FROM _sqlx_migrations")
            .fetch_one(&self.reader)
            .await?)
    }

    /// SQLite's `PRAGMA integrity_check`: `["ok"]` for a sound database, else the problems.
    pub async fn integrity_check(&self) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar("PRAGMA integrity_check")
            .fetch_all(&self.reader)
            .await?)
    }

    /// `PRAGMA integrity_check` of the database file at `path`, from a connection of its own
    /// (for checks while no daemon runs, e.g. after a crash): `["ok"]` when it is sound.
    pub async fn check_file(path: &Path) -> Result<Vec<String>, StoreError> {
        let mut connection = SqliteConnectOptions::new()
            .filename(path)
            .busy_timeout(BUSY_TIMEOUT)
            .connect()
            .await?;
        let problems = sqlx::query_scalar("PRAGMA integrity_check")
            .fetch_all(&mut connection)
            .await?;
        connection.close().await?;
        Ok(problems)
    }

    /// Writes a consistent copy of the database to `path` (`VACUUM INTO`), e.g. for backups.
    pub async fn backup_to(&self, path: &Path) -> Result<(), StoreError> {
        // On a connection of its own: `VACUUM` cannot run inside the writer's transactions,
        // and the readers are `query_only`.
        let mut connection = SqliteConnectOptions::new()
            .filename(self.path.as_ref())
            .busy_timeout(BUSY_TIMEOUT)
            .connect()
            .await?;
        sqlx::query("VACUUM INTO ?1")
            .bind(path.to_string_lossy().into_owned())
            .execute(&mut connection)
            .await?;
        connection.close().await?;
        Ok(())
    }

    /// Lets queued writes finish, stops the writer and closes every connection.
    pub async fn close(&self) {
        self.writer.close().await;
        self.reader.close().await;
    }

    /// Runs `work` on the writing connection in the writer's next transaction; returns once
    /// that transaction committed (or failed).
    pub(crate) async fn write<T, F>(&self, work: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut SqliteConnection) -> BoxFuture<'c, Result<T, StoreError>>
            + Send
            + 'static,
    {
        self.writer.write(Box::new(work)).await
    }

    /// Runs `statements` in the writer's next transaction; returns once that transaction
    /// committed (or failed). The fast way to write (see [`writer`]).
    pub(crate) async fn write_statements(
        &self,
        statements: writer::Statements,
    ) -> Result<(), StoreError> {
        self.writer.write_statements(statements).await
    }
}

async fn record_start(connection: &mut SqliteConnection) -> Result<(), StoreError> {
    let now = pi_util::time::now_millis().to_string();
    let mut transaction = connection.begin().await?;
    sqlx::query("INSERT OR IGNORE INTO daemon_meta (key, value) VALUES ('created_at', ?1)")
        .bind(&now)
        .execute(&mut *transaction)
        .await?;
    sqlx::query(
        "INSERT INTO daemon_meta (key, value) VALUES ('start_count', '1') \
         ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)",
    )
    .execute(&mut *transaction)
    .await?;
    sqlx::query(
        "INSERT INTO daemon_meta (key, value) VALUES ('last_started_at', ?1) \
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    )
    .bind(&now)
    .execute(&mut *transaction)
    .await?;
    transaction.commit().await?;
    Ok(())
}

/// A temporary database for unit tests: a file in a fresh directory, opened with the
/// daemon's configuration.
#[cfg(test)]
pub(crate) async fn temp_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = Store::open(&dir.path().join("pi.db"))
        .await
        .expect("a fresh database opens");
    (dir, store)
}

#[cfg(test)]
mod tests;
