//! The SQLite store (sqlx, WAL): the daemon's source of truth and the only module with SQL.
//!
//! Migrations live in `migrations/` at the repository root, are embedded at compile time and
//! applied at open. They are append-only: `migrations/ledger.txt` records the checksum of
//! every committed migration and a test fails when one changes.
//!
//! Durability: WAL with `synchronous=NORMAL` makes every committed transaction survive a crash
//! of the daemon (kill -9); only an OS crash can lose the newest commits
//! (`docs/decisions/0003-sqlite-durability.md`).

mod entries;
mod history;
mod sessions;
mod usage;

pub use entries::{NewEntry, StoredEntry};
pub use history::HistoryRow;
pub use sessions::{ListCursor, SessionRow};
pub use usage::UsageRow;

use std::path::Path;
use std::str::FromStr as _;
use std::time::Duration;

use sqlx::migrate::Migrator;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};

/// Every migration, embedded from `migrations/`.
pub static MIGRATOR: Migrator = sqlx::migrate!("../migrations");

/// A handle to the database; cheap to clone.
#[derive(Clone, Debug)]
pub struct Store {
    pool: SqlitePool,
    // Invariant: the version of the newest applied migration; migrations only run at open.
    schema_version: i64,
}

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database directory cannot be created; check permissions of the data dir.
    #[error("cannot create {path}: {source}", path = .path.display())]
    CreateDir {
        /// The directory.
        path: std::path::PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A migration failed or an applied one was edited (sqlx compares checksums).
    #[error("database migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// A query failed.
    #[error("database error: {0}")]
    Sqlx(#[from] sqlx::Error),
    /// A stored value does not parse (a bug or a hand-edited database).
    #[error("corrupt value in {what}: {message}")]
    Corrupt {
        /// The column.
        what: &'static str,
        /// The parse error.
        message: String,
    },
}

impl StoreError {
    /// Wraps a parse error of a stored value.
    pub fn corrupt<E: std::fmt::Display>(what: &'static str) -> impl Fn(E) -> StoreError {
        move |error| StoreError::Corrupt {
            what,
            message: error.to_string(),
        }
    }
}

impl Store {
    /// Opens (creating if needed) the database at `path` and applies pending migrations.
    pub async fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| StoreError::CreateDir {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        let options = SqliteConnectOptions::from_str("sqlite:")?
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(5));
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .min_connections(1)
            .connect_with(options)
            .await?;
        Store::from_pool(pool).await
    }

    /// Opens a private in-memory database (tests).
    pub async fn open_in_memory() -> Result<Store, StoreError> {
        let options = SqliteConnectOptions::from_str("sqlite::memory:")?.foreign_keys(true);
        // One connection: every in-memory connection would be its own empty database.
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options)
            .await?;
        Store::from_pool(pool).await
    }

    async fn from_pool(pool: SqlitePool) -> Result<Store, StoreError> {
        MIGRATOR.run(&pool).await?;
        let schema_version: Option<i64> =
            sqlx::query_scalar("SELECT MAX(version) FROM _sqlx_migrations WHERE success = 1")
                .fetch_one(&pool)
                .await?;
        let store = Store {
            pool,
            schema_version: schema_version.unwrap_or(0),
        };
        store.record_start().await?;
        Ok(store)
    }

    /// Version of the newest applied migration.
    pub fn schema_version(&self) -> i64 {
        self.schema_version
    }

    /// How many times a daemon has opened this database, this open included.
    pub async fn start_count(&self) -> Result<i64, StoreError> {
        let count: Option<String> =
            sqlx::query_scalar("SELECT value FROM daemon_meta WHERE key = 'start_count'")
                .fetch_optional(&self.pool)
                .await?;
        Ok(count.and_then(|count| count.parse().ok()).unwrap_or(0))
    }

    /// Number of applied migrations (tests check they are applied exactly once).
    pub async fn applied_migration_count(&self) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar("SELECT COUNT(*) FROM _sqlx_migrations")
            .fetch_one(&self.pool)
            .await?)
    }

    /// Writes a consistent copy of the database to `path` (`VACUUM INTO`), e.g. for backups.
    pub async fn backup_to(&self, path: &Path) -> Result<(), StoreError> {
        sqlx::query("VACUUM INTO ?1")
            .bind(path.to_string_lossy().into_owned())
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Waits for every connection to finish and closes the pool.
    pub async fn close(&self) {
        self.pool.close().await;
    }

    async fn record_start(&self) -> Result<(), StoreError> {
        let now = crate::state::unix_millis().to_string();
        let mut transaction = self.pool.begin().await?;
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn in_memory_store_migrates_and_counts_starts() {
        let store = Store::open_in_memory().await.unwrap();
        assert!(store.schema_version() > 0);
        assert_eq!(store.start_count().await.unwrap(), 1);
        assert_eq!(
            store.applied_migration_count().await.unwrap(),
            MIGRATOR.iter().count() as i64
        );
    }

    #[tokio::test]
    async fn reopening_a_file_applies_nothing_twice() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested").join("pi.db");
        let first = Store::open(&path).await.unwrap();
        let version = first.schema_version();
        first.close().await;
        let second = Store::open(&path).await.unwrap();
        assert_eq!(second.schema_version(), version);
        assert_eq!(second.start_count().await.unwrap(), 2);
        assert_eq!(
            second.applied_migration_count().await.unwrap(),
            MIGRATOR.iter().count() as i64
        );
    }
}
