//! pi's `auth.json`: credentials keyed by provider id, either an API key
//! (`{"type": "api_key", "key": "sk-…"}`, where `key` may be a `!command` or an environment
//! variable name) or OAuth tokens (`{"type": "oauth", "access": …, "refresh": …, "expires": ms,
//! …}`).
//!
//! Guarantees: reading never fails on a missing file (no credentials); a file that does not
//! parse is an error naming the file and the JSON path of the bad field, never its value; a
//! file readable by others is flagged ([`AuthFile::insecure_mode`]). Writing replaces the file
//! atomically (temporary file in the same directory, then rename) with mode 0600, creating the
//! directory with mode 0700. There is no lock: of two concurrent writers the last one wins.
//! OAuth tokens are used while unexpired; refreshing them is not implemented yet.

use std::collections::BTreeMap;
use std::fmt;
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config_value::{json_path, redact_serde_message};

/// One provider's credential. `Debug` never shows secrets.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    expecting = "an object with \"type\": \"api_key\" or \"oauth\""
)]
pub enum AuthCredential {
    /// An API key, or a `!command` / environment variable name that yields one.
    ApiKey {
        /// The key as written in the file (resolved when used).
        key: String,
    },
    /// OAuth tokens from a subscription login.
    Oauth(OAuthCredential),
}

/// OAuth tokens as pi stores them.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct OAuthCredential {
    /// The access token, sent as the key.
    pub access: String,
    /// The refresh token.
    #[serde(default)]
    pub refresh: String,
    /// When `access` expires, Unix milliseconds.
    #[serde(default)]
    pub expires: i64,
    /// Provider-specific extras (`projectId`, `enterpriseUrl`, `accountId`, …), kept on rewrite.
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

impl fmt::Debug for AuthCredential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AuthCredential::ApiKey { .. } => f.write_str("ApiKey(***)"),
            AuthCredential::Oauth(oauth) => oauth.fmt(f),
        }
    }
}

impl fmt::Debug for OAuthCredential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthCredential")
            .field("expires", &self.expires)
            .field("extra", &self.extra.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// Why `auth.json` could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// Another user could have written the file (its commands and addresses would be used
    /// with our keys); the message says how to fix its owner or mode.
    #[error("{path} is refused: {source}", path = .path.display())]
    Untrusted {
        /// The file.
        path: PathBuf,
        /// Who could have written it.
        source: pi_paths::UntrustedFile,
    },
    /// The file exists but cannot be read; fix its permissions.
    #[error("cannot read {path}: {source}", path = .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// The file is not valid `auth.json`; fix the named field (values are not shown).
    #[error(
        "{path}: {field}: {message}; each entry must look like {{\"<provider>\": {{\"type\": \"api_key\", \"key\": \"...\"}}}}",
        path = .path.display()
    )]
    Parse {
        /// The file.
        path: PathBuf,
        /// JSON path of the bad field (`anthropic.key`), or `(root)`.
        field: String,
        /// What is wrong, with values redacted.
        message: String,
    },
    /// There is no `auth.json` to write to; configure one (the daemon passes its path).
    #[error("no auth.json is configured to store keys in")]
    NotConfigured,
    /// The file could not be written; check the directory's permissions and free space.
    #[error("cannot write {path}: {source}", path = .path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
}

/// The credentials of one `auth.json`.
#[derive(Clone, Debug, PartialEq)]
pub struct AuthFile {
    path: PathBuf,
    credentials: BTreeMap<String, AuthCredential>,
    // Invariant: `Some(mode)` when the file on disk was readable or writable by group/others.
    insecure_mode: Option<u32>,
}

impl AuthFile {
    /// An empty file at `path` (nothing is written until [`AuthFile::save`]).
    pub fn empty(path: impl Into<PathBuf>) -> Self {
        AuthFile {
            path: path.into(),
            credentials: BTreeMap::new(),
            insecure_mode: None,
        }
    }

    /// Reads `path`; a missing file has no credentials. A file another user could have
    /// written is refused.
    pub fn load(path: &Path) -> Result<AuthFile, AuthError> {
        pi_paths::check_trusted(path).map_err(|source| AuthError::Untrusted {
            path: path.to_owned(),
            source,
        })?;
        let text = match fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                return Ok(AuthFile::empty(path));
            }
            Err(source) => {
                return Err(AuthError::Read {
                    path: path.to_owned(),
                    source,
                });
            }
        };
        let mut file = AuthFile::parse(path, &text)?;
        file.insecure_mode = fs::metadata(path)
            .ok()
            .map(|metadata| metadata.permissions().mode() & 0o777)
            .filter(|mode| mode & 0o077 != 0);
        Ok(file)
    }

    /// Parses `text` as the contents of `path`. Whitespace-only text has no credentials.
    pub fn parse(path: &Path, text: &str) -> Result<AuthFile, AuthError> {
        if text.trim().is_empty() {
            return Ok(AuthFile::empty(path));
        }
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let credentials: BTreeMap<String, AuthCredential> =
            serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
                AuthError::Parse {
                    path: path.to_owned(),
                    field: json_path(error.path()),
                    message: redact_serde_message(&error.into_inner().to_string()),
                }
            })?;
        Ok(AuthFile {
            path: path.to_owned(),
            credentials,
            insecure_mode: None,
        })
    }

    /// Where the file lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The permission bits when the file was readable or writable by group or others.
    pub fn insecure_mode(&self) -> Option<u32> {
        self.insecure_mode
    }

    /// The credential for `provider`.
    pub fn get(&self, provider: &str) -> Option<&AuthCredential> {
        self.credentials.get(provider)
    }

    /// Providers with a credential.
    pub fn providers(&self) -> impl Iterator<Item = &str> {
        self.credentials.keys().map(String::as_str)
    }

    /// Sets `provider`'s credential (in memory; call [`AuthFile::save`]).
    pub fn set(&mut self, provider: impl Into<String>, credential: AuthCredential) {
        self.credentials.insert(provider.into(), credential);
    }

    /// Removes `provider`'s credential (in memory; call [`AuthFile::save`]).
    pub fn remove(&mut self, provider: &str) -> Option<AuthCredential> {
        self.credentials.remove(provider)
    }

    /// Writes the file atomically with mode 0600, creating its directory (0700) if needed.
    pub fn save(&mut self) -> Result<(), AuthError> {
        let write_error = |source| AuthError::Write {
            path: self.path.clone(),
            source,
        };
        let directory = self
            .path
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(directory)
            .map_err(write_error)?;
        let mut text = serde_json::to_string_pretty(&self.credentials)
            .map_err(|error| write_error(io::Error::other(error)))?;
        text.push('\n');
        let file_name = self
            .path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_else(|| "auth.json".to_owned());
        let temporary = directory.join(format!(".{file_name}.{}.tmp", std::process::id()));
        let written = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&temporary)
            .and_then(|mut file| {
                // `mode` only applies to new files; a stale temporary keeps its old bits.
                file.set_permissions(fs::Permissions::from_mode(0o600))?;
                file.write_all(text.as_bytes())?;
                file.sync_all()
            })
            .and_then(|()| fs::rename(&temporary, &self.path));
        if let Err(error) = written {
            let _ = fs::remove_file(&temporary);
            return Err(write_error(error));
        }
        self.insecure_mode = None;
        Ok(())
    }
}
