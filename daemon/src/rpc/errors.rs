//! The one place session errors become JSON-RPC errors: each [`SessionError`] variant's
//! kind (and so its code), the field it names and its details. The message is the error's
//! text, bounded by [`ErrorObject::new`].
//!
//! Architecture invariant: the match is exhaustive, so a new variant does not compile until
//! it has a kind here.

use std::path::Path;

use pi_protocol::{ErrorKind, ErrorObject};
use serde_json::json;

use crate::session::error::SessionError;
use crate::session::summarize::SummaryError;
use crate::store::{StorageFailure, Store, StoreError};

/// `error` as the JSON-RPC error a client receives.
pub fn session(error: SessionError) -> ErrorObject {
    let (kind, field, details) = match &error {
        SessionError::InvalidParams { field, .. } => (ErrorKind::InvalidParams, *field, None),
        SessionError::SessionNotFound(_) => (ErrorKind::NotFound, Some("sessionId"), None),
        SessionError::EntryNotFound(_) => (ErrorKind::NotFound, Some("entryId"), None),
        SessionError::ModelNotFound { field, .. } => (ErrorKind::NotFound, *field, None),
        SessionError::FileNotFound(_) => (ErrorKind::NotFound, Some("path"), None),
        SessionError::NotAttached => (ErrorKind::InvalidParams, None, None),
        SessionError::Busy(_) => (ErrorKind::Busy, None, None),
        SessionError::Closing => (ErrorKind::ShuttingDown, None, None),
        SessionError::Resync(_) => (ErrorKind::ResyncRequired, None, None),
        SessionError::NoKey(_) => (ErrorKind::Unauthorized, None, None),
        SessionError::Summary { error, .. } => {
            let kind = match error {
                SummaryError::Nothing(_) => ErrorKind::InvalidParams,
                SummaryError::Failed(_) => ErrorKind::ProviderError,
                SummaryError::Aborted | SummaryError::Corrupt(_) => ErrorKind::Internal,
            };
            (kind, None, None)
        }
        SessionError::Provider(_) => (ErrorKind::ProviderError, None, None),
        SessionError::Storage { error, .. } => {
            let (kind, name) = match error.failure() {
                StorageFailure::DiskFull => (ErrorKind::Storage, "disk_full"),
                StorageFailure::ReadOnly => (ErrorKind::Storage, "read_only"),
                StorageFailure::Corrupt => (ErrorKind::Storage, "corrupt"),
                StorageFailure::Io => (ErrorKind::Storage, "io"),
                StorageFailure::Locked => (ErrorKind::Storage, "locked"),
                StorageFailure::Closed => (ErrorKind::ShuttingDown, "closed"),
                StorageFailure::Other => (ErrorKind::Storage, "other"),
            };
            (kind, None, Some(json!({ "failure": name })))
        }
        SessionError::KeepsStopping(_) => (ErrorKind::Internal, None, None),
        SessionError::CancelledByExtension(_) => (ErrorKind::Cancelled, None, None),
        SessionError::Internal(_) => (ErrorKind::Internal, None, None),
    };
    let mut object = ErrorObject::new(kind, error.to_string());
    if let Some(field) = field {
        object = object.with_field(field);
    }
    if let Some(details) = details {
        object = object.with_details(details);
    }
    object
}

/// A failure of `store` as the JSON-RPC error a client receives (for handlers that use the
/// store directly); logged.
pub fn storage(store: &Store) -> impl Fn(StoreError) -> ErrorObject + '_ {
    move |error| storage_at(store.path(), error)
}

/// A failure of the database at `database` as the JSON-RPC error a client receives; logged.
pub fn storage_at(database: &Path, error: StoreError) -> ErrorObject {
    session(SessionError::storage(database, error))
}

/// A bug as the JSON-RPC error a client receives; logged, the detail stays in the log.
pub fn internal(error: impl std::fmt::Display) -> ErrorObject {
    session(SessionError::internal(error))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use pi_protocol::ErrorObject;

    use super::*;
    use crate::compaction::NothingToCompact;
    use crate::session::error::{Busy, Resync};

    /// The error object of `error` as one line: code, kind, field, details, message.
    fn check(error: SessionError, expect: &str) {
        let ErrorObject {
            code,
            message,
            data,
        } = session(error);
        let data = data.expect("pid's errors always carry data");
        let line = format!(
            "{code} {:?} field={:?} details={} | {message}",
            data.kind,
            data.field,
            data.details
                .map_or_else(|| "-".to_owned(), |d| d.to_string()),
        );
        assert_eq!(line, expect);
    }

    #[test]
    fn every_variant_has_its_kind_code_field_and_text() {
        let database = PathBuf::from("/data/pi.db");
        let failure = |failure| StoreError::Database {
            failure,
            message: "sqlite says no".to_owned(),
        };
        check(
            SessionError::invalid("cwd", "cwd must be an existing directory, and /x is not"),
            "-32602 InvalidParams field=Some(\"cwd\") details=- | cwd must be an existing directory, and /x is not",
        );
        check(
            SessionError::InvalidParams {
                field: None,
                message: "no model".to_owned(),
            },
            "-32602 InvalidParams field=None details=- | no model",
        );
        check(
            SessionError::SessionNotFound("s1".to_owned()),
            "-32010 NotFound field=Some(\"sessionId\") details=- | session s1 does not exist; `session/list` shows the stored sessions",
        );
        check(
            SessionError::EntryNotFound("e1".to_owned()),
            "-32010 NotFound field=Some(\"entryId\") details=- | entry e1 does not exist in this session",
        );
        check(
            SessionError::ModelNotFound {
                field: Some("model"),
                message: "no model x".to_owned(),
            },
            "-32010 NotFound field=Some(\"model\") details=- | no model x",
        );
        check(
            SessionError::FileNotFound(PathBuf::from("/tmp/s.jsonl")),
            "-32010 NotFound field=Some(\"path\") details=- | /tmp/s.jsonl does not exist; check the path of the session file",
        );
        check(
            SessionError::NotAttached,
            "-32602 InvalidParams field=None details=- | this connection is not attached to the session; call `session/attach` first",
        );
        check(
            SessionError::Busy(Busy::Navigating),
            "-32011 Busy field=None details=- | the session is running; abort it before moving in the tree",
        );
        check(
            SessionError::Closing,
            "-32006 ShuttingDown field=None details=- | the session is closing",
        );
        check(
            SessionError::Resync(Resync::TooMany {
                limit: 10,
                after: 3,
            }),
            "-32012 ResyncRequired field=None details=- | more than 10 events happened after seq 3; re-read the session with `session/read` and attach without `afterSeq`",
        );
        check(
            SessionError::Resync(Resync::Ahead {
                after: 9,
                last_seq: 4,
            }),
            "-32012 ResyncRequired field=None details=- | cursor 9 is ahead of this session's history (last seq 4), so the daemon restarted since; re-read the session with `session/read` and attach without `afterSeq`",
        );
        check(
            SessionError::NoKey("set ANTHROPIC_API_KEY".to_owned()),
            "-32007 Unauthorized field=None details=- | set ANTHROPIC_API_KEY",
        );
        check(
            SessionError::Summary {
                prefix: "Compaction failed",
                error: SummaryError::Nothing(NothingToCompact::AlreadyCompacted),
            },
            "-32602 InvalidParams field=None details=- | Compaction failed: Already compacted",
        );
        check(
            SessionError::Summary {
                prefix: "Auto-compaction failed",
                error: SummaryError::Failed("Summarization failed: 500".to_owned()),
            },
            "-32014 ProviderError field=None details=- | Auto-compaction failed: Summarization failed: 500",
        );
        check(
            SessionError::Summary {
                prefix: "Compaction failed",
                error: SummaryError::Aborted,
            },
            "-32603 Internal field=None details=- | Compaction failed: Compaction cancelled",
        );
        check(
            SessionError::Provider("Summarization failed: 429".to_owned()),
            "-32014 ProviderError field=None details=- | Summarization failed: 429",
        );
        check(
            SessionError::KeepsStopping("s1".to_owned()),
            "-32603 Internal field=None details=- | session s1 keeps stopping; the daemon log has details",
        );
        check(
            SessionError::Internal("no entry was committed".to_owned()),
            "-32603 Internal field=None details=- | internal error: no entry was committed",
        );
        check(
            SessionError::storage(&database, failure(StorageFailure::DiskFull)),
            "-32015 Storage field=None details={\"failure\":\"disk_full\"} | cannot save to the database /data/pi.db: the disk is full (sqlite says no). Free some disk space and try again; nothing of this request was saved and the session is as it was",
        );
        check(
            SessionError::storage(&database, failure(StorageFailure::Closed)),
            "-32006 ShuttingDown field=None details={\"failure\":\"closed\"} | the daemon is shutting down and has closed its database; retry once it is back",
        );
        for (failure_kind, name) in [
            (StorageFailure::ReadOnly, "read_only"),
            (StorageFailure::Corrupt, "corrupt"),
            (StorageFailure::Io, "io"),
            (StorageFailure::Locked, "locked"),
            (StorageFailure::Other, "other"),
        ] {
            let object = session(SessionError::storage(&database, failure(failure_kind)));
            let data = object.data.expect("data");
            assert_eq!(data.kind, ErrorKind::Storage);
            assert_eq!(data.details, Some(json!({ "failure": name })));
            assert!(object.message.contains("/data/pi.db"), "{}", object.message);
        }
    }
}
