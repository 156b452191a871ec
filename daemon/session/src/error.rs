//! What can go wrong in a session operation: one closed enum, [`SessionError`], whose text is
//! the sentence a person reads (what was wrong and what to do). The session core never builds
//! a wire error; the RPC edge maps each variant to its kind, code, field and details
//! (pi-daemon's `rpc::errors`), and in-process callers (subagents, approvals) use the text.
//!
//! Constructors that stand for a failure of the daemon itself ([`SessionError::internal`],
//! [`SessionError::storage`]) log it where it is made, as the daemon always did.

use std::fmt;
use std::path::{Path, PathBuf};

use pi_protocol::error::echo;

use crate::summarize::SummaryError;
use pi_store::{StorageFailure, StoreError};

/// Why a session operation failed. Each variant's doc says what the caller should do.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// A request parameter is wrong (`field` names it when one does). Fix the request.
    #[error("{message}")]
    InvalidParams {
        field: Option<&'static str>,
        message: String,
    },
    /// The session does not exist. Check the id; `session/list` shows the stored sessions.
    #[error("session {} does not exist; `session/list` shows the stored sessions", echo(.0))]
    SessionNotFound(String),
    /// The entry does not exist in the session. Check the id against `session/read`.
    #[error("entry {} does not exist in this session", echo(.0))]
    EntryNotFound(String),
    /// The model is unknown; the message names the closest matches. Choose one of
    /// `model/list`.
    #[error("{message}")]
    ModelNotFound {
        field: Option<&'static str>,
        message: String,
    },
    /// The file to import does not exist. Check the path.
    #[error("{} does not exist; check the path of the session file", .0.display())]
    FileNotFound(PathBuf),
    /// The connection is not attached to the session. Call `session/attach` first.
    #[error("this connection is not attached to the session; call `session/attach` first")]
    NotAttached,
    /// The session is doing something that excludes this. Wait for it, queue, or abort it;
    /// the text says which.
    #[error("{0}")]
    Busy(Busy),
    /// The session is closing. Try again: the next command loads it afresh.
    #[error("the session is closing")]
    Closing,
    /// A replay cursor the session cannot serve. Re-read the session (`session/read`) and
    /// attach without `afterSeq`.
    #[error("{0}")]
    Resync(Resync),
    /// The model's provider has no key; the text says what to set. Configure the key.
    #[error("{0}")]
    NoKey(String),
    /// A compaction failed; `error` says why (nothing to compact, the model failed, it was
    /// cancelled, a stored entry did not read). Report it.
    #[error("{prefix}: {error}")]
    Summary {
        prefix: &'static str,
        error: SummaryError,
    },
    /// The model failed (a branch summary). Report it; retrying may work.
    #[error("{0}")]
    Provider(String),
    /// The database failed; the text says how and what to do (free disk space, fix
    /// permissions, repair the file). Nothing of the request was saved.
    #[error("{}", storage_message(.database, .error))]
    Storage {
        database: PathBuf,
        error: StoreError,
    },
    /// The session's actor stopped three times in a row while answering. Read the daemon
    /// log.
    #[error("session {0} keeps stopping; the daemon log has details")]
    KeepsStopping(String),
    /// An extension of the session cancelled it (pi's `session_before_*` handlers).
    #[error("the session's extensions cancelled the {0}")]
    CancelledByExtension(&'static str),
    /// A bug in the daemon (logged where it was made). Report it.
    #[error("internal error: {0}")]
    Internal(String),
}

/// What keeps a session from taking a request now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Busy {
    /// A run is going (prompt).
    Running,
    /// A compaction or branch summary is going, or waits for the run it aborted (prompt).
    Compacting,
    /// A failed request waits to be retried (prompt).
    RetryPending,
    /// Already compacting or summarizing (compact).
    AlreadyCompacting,
    /// A run or a summary is going (navigate).
    Navigating,
}

/// Why a replay cursor cannot be served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resync {
    /// The cursor is past the session's last seq: the daemon restarted since.
    Ahead { after: u64, last_seq: u64 },
    /// More events happened after the cursor than a replay carries.
    TooMany { limit: u32, after: u64 },
}

impl SessionError {
    /// A bug: logged here, reported as `internal error: …`.
    pub fn internal(error: impl fmt::Display) -> SessionError {
        tracing::error!(%error, "internal error");
        SessionError::Internal(error.to_string())
    }

    /// A failure of the database at `database`: logged here with how it failed.
    pub fn storage(database: &Path, error: StoreError) -> SessionError {
        tracing::error!(%error, failure = ?error.failure(), "database failure");
        SessionError::Storage {
            database: database.to_path_buf(),
            error,
        }
    }

    /// A wrong parameter named `field`.
    pub fn invalid(field: &'static str, message: impl Into<String>) -> SessionError {
        SessionError::InvalidParams {
            field: Some(field),
            message: message.into(),
        }
    }
}

impl fmt::Display for Busy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Busy::Running => {
                "the session is running; steer it with `session/steer`, queue a message with \
                 `session/followUp`, or stop it with `session/abort`"
            }
            Busy::Compacting => {
                "the session is compacting or summarizing; wait for `compaction_end`, queue a \
                 message with `session/followUp`, or stop it with `session/abort`"
            }
            Busy::RetryPending => {
                "the session is waiting to retry a failed request; cancel the retry with \
                 `session/abortRetry` (or `session/abort`) first"
            }
            Busy::AlreadyCompacting => {
                "the session is already compacting or summarizing; wait for it, or stop it with \
                 `session/abort`"
            }
            Busy::Navigating => "the session is running; abort it before moving in the tree",
        })
    }
}

impl fmt::Display for Resync {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Resync::Ahead { after, last_seq } => write!(
                f,
                "cursor {after} is ahead of this session's history (last seq {last_seq}), so the \
                 daemon restarted since; re-read the session with `session/read` and attach \
                 without `afterSeq`"
            ),
            Resync::TooMany { limit, after } => write!(
                f,
                "more than {limit} events happened after seq {after}; re-read the session with \
                 `session/read` and attach without `afterSeq`"
            ),
        }
    }
}

/// What a store failure means for the person reading it, by how it failed.
fn storage_message(database: &Path, error: &StoreError) -> String {
    let path = database.display();
    match error.failure() {
        StorageFailure::DiskFull => format!(
            "cannot save to the database {path}: the disk is full ({error}). Free some disk \
             space and try again; nothing of this request was saved and the session is as it was"
        ),
        StorageFailure::ReadOnly => format!(
            "cannot write the database {path}: it is read-only ({error}). Make the file and \
             its directory writable for your user and the file system read-write, then try \
             again; nothing of this request was saved and the session is as it was"
        ),
        StorageFailure::Corrupt => format!(
            "the database {path} is damaged ({error}). Stop the daemon (`pictl daemon stop`), \
             keep a copy of the file, then repair it with `sqlite3 {path} .recover` or move it \
             aside to start with an empty one"
        ),
        StorageFailure::Io => format!(
            "the disk failed while reading or writing the database {path} ({error}). Check the \
             disk (free space, the kernel log), then try again; nothing of this request was \
             saved and the session is as it was"
        ),
        StorageFailure::Locked => format!(
            "the database {path} is locked by another program ({error}). Close programs that \
             hold it open (a `sqlite3` shell inside a transaction, a backup tool), then try \
             again; nothing of this request was saved"
        ),
        StorageFailure::Closed => {
            "the daemon is shutting down and has closed its database; retry once it is back"
                .to_owned()
        }
        StorageFailure::Other => format!(
            "the database {path} refused an operation ({error}); this is a bug in the daemon, \
             and its log has details. Nothing of this request was saved"
        ),
    }
}
