//! [`apply`]: writes a previewed [`EditPlan`], only over the exact texts it was made from.
//!
//! Every file is checked before any is written: when one changed (or vanished) since the
//! preview, nothing is written. Each file is then replaced atomically (a temporary file in the
//! same directory renamed over it, its permissions kept, a symlink written through), so a reader
//! sees the old text or the new one. The check and the writes race other writers unless the
//! caller holds the files' locks around the call, as the daemon's tools do.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::error::AstError;
use crate::rewrite::EditPlan;
use crate::search::{display, plural};

/// What [`apply`] wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    /// The files written, in the plan's order.
    pub files: Vec<AppliedFile>,
}

/// One file [`apply`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppliedFile {
    /// The file, relative to the root.
    pub path: PathBuf,
    /// How many matches were replaced in it.
    pub replacements: usize,
}

/// Writes each file of `plan` (its new text, atomically) if every one still holds exactly the
/// text the plan was made from.
///
/// Errors: a file changed or deleted since the preview (nothing written), a file unreadable
/// (nothing written), a write that failed (the error lists the files already written).
pub fn apply(plan: &EditPlan) -> Result<Applied, AstError> {
    for file in &plan.files {
        match std::fs::read(file.absolute_path()) {
            Ok(current) if current == file.original().as_bytes() => {}
            Ok(_) => {
                return Err(AstError::ChangedSincePreview {
                    path: file.path().to_path_buf(),
                    what: "its content differs",
                });
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Err(AstError::ChangedSincePreview {
                    path: file.path().to_path_buf(),
                    what: "it no longer exists",
                });
            }
            Err(source) => {
                return Err(AstError::Read {
                    path: file.path().to_path_buf(),
                    source,
                });
            }
        }
    }
    let mut applied = Applied::default();
    for file in &plan.files {
        if let Err(source) = write_atomically(file.absolute_path(), file.new_text().as_bytes()) {
            return Err(AstError::Write {
                path: file.path().to_path_buf(),
                source,
                written: applied.files.into_iter().map(|file| file.path).collect(),
            });
        }
        applied.files.push(AppliedFile {
            path: file.path().to_path_buf(),
            replacements: file.replacements(),
        });
    }
    Ok(applied)
}

impl Applied {
    /// How many matches were replaced, in all files.
    pub fn replacements(&self) -> usize {
        self.files.iter().map(|file| file.replacements).sum()
    }

    /// What was written, as the tool's text: a summary line, then each file with its count.
    pub fn to_text(&self) -> String {
        let mut text = format!(
            "Applied {} in {}:\n",
            plural(self.replacements(), "replacement", "replacements"),
            plural(self.files.len(), "file", "files")
        );
        for file in &self.files {
            let _ = writeln!(text, "  {} ({})", display(&file.path), file.replacements);
        }
        text
    }
}

/// Replaces the file at `path` (following symlinks) with `bytes` atomically, keeping its
/// permissions.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let target = std::fs::canonicalize(path)?;
    let Some((directory, name)) = target.parent().zip(target.file_name()) else {
        return Err(std::io::Error::other("the path names no file"));
    };
    let permissions = std::fs::metadata(&target)?.permissions();
    let mut random = [0u8; 6];
    // Without randomness the name is still unique enough with the process id; `create_new`
    // refuses a clash rather than overwrite.
    let _ = getrandom::fill(&mut random);
    let suffix: String = random.iter().map(|byte| format!("{byte:02x}")).collect();
    let temporary = directory.join(format!(
        ".{}.pi-ast-{}-{suffix}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)?;
        file.write_all(bytes)?;
        file.set_permissions(permissions)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&temporary, &target)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    result
}
