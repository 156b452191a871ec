//! Why the store failed, classified so that callers can tell a user what happened and what to
//! do: a full disk, a read-only or damaged database, an I/O error, a lock held by another
//! program, or the store having been closed.
//!
//! `StoreError` is `Clone`: one failed group commit answers every write of the group with the
//! same error.

use std::sync::Arc;

/// What kind of storage failure happened, from SQLite's result code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StorageFailure {
    /// `SQLITE_FULL`: the disk (or the database's page cap) is full. Free space, then retry.
    DiskFull,
    /// `SQLITE_READONLY` or `SQLITE_PERM`/`SQLITE_CANTOPEN`: the database cannot be written.
    /// Fix the permissions of the file and its directory, or remount read-write.
    ReadOnly,
    /// `SQLITE_CORRUPT`/`SQLITE_NOTADB`, or a stored value that does not parse. Keep a copy of
    /// the file and recover it (`sqlite3 FILE .recover`) or move it aside.
    Corrupt,
    /// `SQLITE_IOERR`: the operating system failed a read or write. Check the disk.
    Io,
    /// `SQLITE_BUSY`/`SQLITE_LOCKED`: another program holds a lock on the database for longer
    /// than the busy timeout. Close it (a `sqlite3` shell in a transaction, a backup tool).
    Locked,
    /// The store was closed (the daemon is shutting down). Retry once it is back.
    Closed,
    /// Anything else (constraint violations, misuse): a bug. The daemon log has details.
    Other,
}

/// Why the store failed.
#[derive(Clone, Debug, thiserror::Error)]
pub enum StoreError {
    /// The database directory cannot be created; check permissions of the data dir.
    #[error("cannot create {path}: {source}", path = .path.display())]
    CreateDir {
        /// The directory.
        path: std::path::PathBuf,
        /// The I/O error.
        source: Arc<std::io::Error>,
    },
    /// A migration failed or an applied one was edited (sqlx compares checksums).
    #[error("database migration failed: {0}")]
    Migrate(Arc<sqlx::migrate::MigrateError>),
    /// SQLite (or the connection to it) failed; `failure` says how.
    #[error("{message}")]
    Database {
        /// The classified kind.
        failure: StorageFailure,
        /// SQLite's explanation, with its result code.
        message: String,
    },
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

    /// The store was closed before the operation could run.
    pub fn closed() -> StoreError {
        StoreError::Database {
            failure: StorageFailure::Closed,
            message: "the database is closed".to_owned(),
        }
    }

    /// What kind of failure this is.
    pub fn failure(&self) -> StorageFailure {
        match self {
            StoreError::CreateDir { source, .. } => match source.kind() {
                std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem => {
                    StorageFailure::ReadOnly
                }
                std::io::ErrorKind::StorageFull => StorageFailure::DiskFull,
                _ => StorageFailure::Io,
            },
            StoreError::Migrate(error) => match error.as_ref() {
                sqlx::migrate::MigrateError::Execute(error)
                | sqlx::migrate::MigrateError::ExecuteMigration(error, _) => classify(error),
                _ => StorageFailure::Other,
            },
            StoreError::Database { failure, .. } => *failure,
            StoreError::Corrupt { .. } => StorageFailure::Corrupt,
        }
    }
}

impl From<sqlx::Error> for StoreError {
    fn from(error: sqlx::Error) -> Self {
        StoreError::Database {
            failure: classify(&error),
            message: error.to_string(),
        }
    }
}

impl From<sqlx::migrate::MigrateError> for StoreError {
    fn from(error: sqlx::migrate::MigrateError) -> Self {
        StoreError::Migrate(Arc::new(error))
    }
}

/// Classifies a sqlx error by SQLite's primary result code (the low byte of the extended
/// code sqlx reports).
fn classify(error: &sqlx::Error) -> StorageFailure {
    match error {
        sqlx::Error::Database(database) => {
            let code = database
                .code()
                .and_then(|code| code.parse::<i32>().ok())
                .unwrap_or(1);
            match code & 0xff {
                // SQLITE_FULL
                13 => StorageFailure::DiskFull,
                // SQLITE_READONLY, SQLITE_PERM, SQLITE_CANTOPEN, SQLITE_AUTH
                8 | 3 | 14 | 23 => StorageFailure::ReadOnly,
                // SQLITE_CORRUPT, SQLITE_NOTADB
                11 | 26 => StorageFailure::Corrupt,
                // SQLITE_IOERR
                10 => StorageFailure::Io,
                // SQLITE_BUSY, SQLITE_LOCKED
                5 | 6 => StorageFailure::Locked,
                _ => StorageFailure::Other,
            }
        }
        sqlx::Error::Io(error) => match error.kind() {
            std::io::ErrorKind::StorageFull => StorageFailure::DiskFull,
            std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem => {
                StorageFailure::ReadOnly
            }
            _ => StorageFailure::Io,
        },
        sqlx::Error::PoolClosed | sqlx::Error::WorkerCrashed => StorageFailure::Closed,
        sqlx::Error::PoolTimedOut => StorageFailure::Locked,
        _ => StorageFailure::Other,
    }
}
