//! Artifacts: tool output too large for the context (bash output past the truncation limit),
//! stored once as a file under `<artifacts root>/<session id>/<artifact id>` and referenced as
//! `artifact://<artifact id>` from tool results and entries. `read` accepts those references;
//! the daemon serves byte ranges of them and deletes a session's directory with the session.
//!
//! Architecture invariant: ids (session and artifact) are checked against `[A-Za-z0-9_-]`
//! before they touch a path, so no reference can escape its session's directory.

use std::fs::File;
use std::io::{Read as _, Seek as _, SeekFrom};
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The prefix of artifact references.
pub const ARTIFACT_SCHEME: &str = "artifact://";

/// Failures of artifact storage.
#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    /// The id has characters other than letters, digits, `-` and `_`; the caller should use
    /// an id it was given.
    #[error("{what} {id:?} is not a valid id")]
    InvalidId {
        /// `session id` or `artifact id`.
        what: &'static str,
        /// The offending id.
        id: String,
    },
    /// No such artifact in this session; it was never created or its session was deleted.
    #[error("artifact {0} does not exist in this session")]
    NotFound(String),
    /// The file system failed; the message names the path. Check the data directory.
    #[error("cannot {action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// Where.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// The daemon's artifact store: one directory, a subdirectory per session. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Artifacts {
    root: Arc<PathBuf>,
}

/// One session's artifacts.
#[derive(Clone, Debug)]
pub struct SessionArtifacts {
    // Invariant: `<root>/<valid session id>`; created on the first artifact.
    dir: PathBuf,
}

/// A byte range of an artifact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArtifactChunk {
    /// The bytes read.
    pub data: Vec<u8>,
    /// Where they start.
    pub offset: u64,
    /// The artifact's size.
    pub total_bytes: u64,
}

impl Artifacts {
    /// The store rooted at `root` (`<data dir>/artifacts`); nothing is created until used.
    pub fn new(root: PathBuf) -> Artifacts {
        Artifacts {
            root: Arc::new(root),
        }
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The artifacts of `session_id`.
    pub fn session(&self, session_id: &str) -> Result<SessionArtifacts, ArtifactError> {
        check_id("session id", session_id)?;
        Ok(SessionArtifacts {
            dir: self.root.join(session_id),
        })
    }

    /// Deletes every artifact of `session_id` (nothing to delete is fine).
    pub fn delete_session(&self, session_id: &str) -> Result<(), ArtifactError> {
        let session = self.session(session_id)?;
        match std::fs::remove_dir_all(&session.dir) {
            Ok(()) => Ok(()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(source) => Err(ArtifactError::Io {
                action: "delete",
                path: session.dir,
                source,
            }),
        }
    }
}

impl SessionArtifacts {
    /// Creates a new, empty artifact named after `kind` (`bash`); returns its id and the file
    /// to write it through.
    pub fn create(&self, kind: &str) -> Result<(String, File), ArtifactError> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .map_err(|source| ArtifactError::Io {
                action: "create",
                path: self.dir.clone(),
                source,
            })?;
        let mut random = [0u8; 8];
        if getrandom::fill(&mut random).is_err() {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|elapsed| elapsed.as_nanos() as u64)
                .unwrap_or(0);
            random = nanos.to_le_bytes();
        }
        let hex: String = random.iter().map(|byte| format!("{byte:02x}")).collect();
        let id = format!("{kind}-{hex}");
        check_id("artifact id", &id)?;
        let path = self.dir.join(&id);
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .map_err(|source| ArtifactError::Io {
                action: "create",
                path,
                source,
            })?;
        Ok((id, file))
    }

    /// The session's artifact directory (it may not exist yet).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of artifact `id`, which must exist.
    pub fn path(&self, id: &str) -> Result<PathBuf, ArtifactError> {
        check_id("artifact id", id)?;
        let path = self.dir.join(id);
        if path.is_file() {
            Ok(path)
        } else {
            Err(ArtifactError::NotFound(id.to_owned()))
        }
    }

    /// Up to `limit` bytes of artifact `id` from `offset`.
    pub fn read_range(
        &self,
        id: &str,
        offset: u64,
        limit: u64,
    ) -> Result<ArtifactChunk, ArtifactError> {
        let path = self.path(id)?;
        let io_error = |source| ArtifactError::Io {
            action: "read",
            path: path.clone(),
            source,
        };
        let mut file = File::open(&path).map_err(io_error)?;
        let total_bytes = file.metadata().map_err(io_error)?.len();
        let offset = offset.min(total_bytes);
        file.seek(SeekFrom::Start(offset)).map_err(io_error)?;
        let mut data = Vec::new();
        file.take(limit).read_to_end(&mut data).map_err(io_error)?;
        Ok(ArtifactChunk {
            data,
            offset,
            total_bytes,
        })
    }
}

/// The artifact id in an `artifact://ID` reference.
pub fn parse_reference(text: &str) -> Option<&str> {
    text.strip_prefix('@')
        .unwrap_or(text)
        .strip_prefix(ARTIFACT_SCHEME)
}

fn check_id(what: &'static str, id: &str) -> Result<(), ArtifactError> {
    let valid = !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_');
    if valid {
        Ok(())
    } else {
        Err(ArtifactError::InvalidId {
            what,
            id: id.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    #[test]
    fn artifacts_are_stored_per_session_and_deleted_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let artifacts = Artifacts::new(dir.path().join("artifacts"));
        let session = artifacts.session("s-1").unwrap();
        let (id, mut file) = session.create("bash").unwrap();
        file.write_all(b"hello world").unwrap();
        let chunk = session.read_range(&id, 6, 100).unwrap();
        assert_eq!(
            (chunk.data.as_slice(), chunk.total_bytes),
            (&b"world"[..], 11)
        );
        assert!(matches!(
            session.path("../s-1"),
            Err(ArtifactError::InvalidId { .. })
        ));
        assert!(matches!(
            artifacts.session("../x"),
            Err(ArtifactError::InvalidId { .. })
        ));
        artifacts.delete_session("s-1").unwrap();
        assert!(matches!(session.path(&id), Err(ArtifactError::NotFound(_))));
        artifacts.delete_session("s-1").unwrap();
        assert_eq!(parse_reference("artifact://bash-1"), Some("bash-1"));
        assert_eq!(parse_reference("src/artifact://x"), None);
    }
}
