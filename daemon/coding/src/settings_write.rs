//! Changes the global defaults: writes our config dir's `settings.json` (never pi's, never a
//! project's), keeping every key it does not change, atomically (a temporary file renamed
//! over the old one, so a reader sees the old or the new file, never half of one).
//!
//! Changes are validated as a settings layer first; a change with any problem writes nothing.
//! Nested objects (`compaction`, `retry`, ...) merge one level, as layers do.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value};

use crate::Diagnostic;
use crate::settings_parse::parse_layer;

/// Serializes read-modify-write cycles of settings files within the daemon. A sync mutex,
/// held only around synchronous file operations, never across an await.
static WRITE_LOCK: Mutex<()> = Mutex::new(());

/// Makes temporary file names unique within the process.
static NEXT_TEMP: AtomicU64 = AtomicU64::new(0);

/// Why the defaults were not changed.
#[derive(Debug, thiserror::Error)]
pub enum SettingsWriteError {
    /// A value is invalid or a key unknown; fix the request (each diagnostic names the key).
    #[error("invalid settings: {}", join(.0))]
    Invalid(Vec<Diagnostic>),
    /// The existing file is not a JSON object; fix or remove it by hand (it is never
    /// overwritten, so nothing in it is lost).
    #[error("{path} is not a JSON object ({problem}); fix or remove it first", path = .path.display())]
    ExistingInvalid {
        /// The settings file.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
    },
    /// Reading or writing failed; check the config directory's permissions and free space.
    #[error("cannot update {path}: {source}", path = .path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// Sets `values` (settings.json keys to values) and removes `unset` keys (`retry` or dotted
/// `retry.maxRetries`) in the settings file at `path`.
pub fn set_defaults(
    path: &Path,
    values: &Map<String, Value>,
    unset: &[String],
) -> Result<(), SettingsWriteError> {
    let mut diagnostics = Vec::new();
    let text = Value::Object(values.clone()).to_string();
    parse_layer(path, &text, None, &mut diagnostics);
    if !diagnostics.is_empty() {
        return Err(SettingsWriteError::Invalid(diagnostics));
    }
    // A poisoned lock only means another write panicked; the file itself is still whole.
    let _guard = WRITE_LOCK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let io = |source| SettingsWriteError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut object = match std::fs::read_to_string(path) {
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(object)) => object,
            Ok(_) => {
                return Err(SettingsWriteError::ExistingInvalid {
                    path: path.to_path_buf(),
                    problem: "not an object".to_owned(),
                });
            }
            Err(error) => {
                return Err(SettingsWriteError::ExistingInvalid {
                    path: path.to_path_buf(),
                    problem: error.to_string(),
                });
            }
        },
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Map::new(),
        Err(error) => return Err(io(error)),
    };
    for (key, value) in values {
        match (object.get_mut(key), value) {
            (Some(Value::Object(existing)), Value::Object(changes)) => {
                for (sub, value) in changes {
                    existing.insert(sub.clone(), value.clone());
                }
            }
            _ => {
                object.insert(key.clone(), value.clone());
            }
        }
    }
    for key in unset {
        match key.split_once('.') {
            Some((parent, sub)) => {
                if let Some(Value::Object(nested)) = object.get_mut(parent) {
                    nested.shift_remove(sub);
                    if nested.is_empty() {
                        object.shift_remove(parent);
                    }
                }
            }
            None => {
                object.shift_remove(key);
            }
        }
    }
    let dir = path.parent().unwrap_or(path);
    std::fs::create_dir_all(dir).map_err(io)?;
    let mut text = serde_json::to_string_pretty(&Value::Object(object))
        .map_err(|error| io(std::io::Error::other(error)))?;
    text.push('\n');
    let temp = dir.join(format!(
        ".settings.json.{}.{}.tmp",
        std::process::id(),
        NEXT_TEMP.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&temp, text).map_err(io)?;
    std::fs::rename(&temp, path).map_err(|error| {
        let _ = std::fs::remove_file(&temp);
        io(error)
    })?;
    Ok(())
}

fn join(diagnostics: &[Diagnostic]) -> String {
    diagnostics
        .iter()
        .map(|diagnostic| match &diagnostic.key {
            Some(key) => format!("`{key}`: {}", diagnostic.message),
            None => diagnostic.message.clone(),
        })
        .collect::<Vec<_>>()
        .join("; ")
}
