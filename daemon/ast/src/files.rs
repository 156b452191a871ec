//! Which files a request reads, and reading them within the limits.
//!
//! Paths are resolved against the root and must exist. A path named explicitly is searched
//! whatever `.gitignore` says (as ripgrep does); a file so named is parsed in the language asked
//! for (else the one its extension says, else an error); a directory is walked with `ignore` as the `find` and `grep` tools walk (`.gitignore`,
//! `.ignore` and `.git/info/exclude` respected, in or out of a Git repository, hidden files
//! included, `.git` skipped, symlinks not followed), in sorted order so results are the same
//! every time, keeping the files whose extension is of a language the pattern compiled for. A
//! file is visited once however many paths reach it.
//!
//! A file over the size limit or not UTF-8 is an error when named explicitly, and is skipped
//! (and reported) when met in a directory.

use std::collections::HashSet;
use std::ops::ControlFlow;
use std::path::{Component, Path, PathBuf};

use ignore::WalkBuilder;

use crate::Limits;
use crate::error::AstError;
use crate::lang::Lang;
use crate::pattern::Patterns;

/// A file a search or rewrite passed over, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedFile {
    /// The file, relative to the root.
    pub path: PathBuf,
    /// Why it was not searched.
    pub reason: SkipReason,
}

/// Why a file met in a directory was not searched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SkipReason {
    /// It is larger than [`Limits::max_file_bytes`].
    TooLarge {
        /// Its size.
        bytes: u64,
    },
    /// It is not UTF-8 text.
    NotText,
    /// It could not be read.
    Unreadable {
        /// The error, as text.
        error: String,
    },
}

/// A file to search: where it is and which grammar parses it.
pub(crate) struct SourceFile {
    /// Relative to the root when under it (as reports show it), else absolute.
    pub(crate) path: PathBuf,
    /// Where it is.
    pub(crate) absolute: PathBuf,
    /// The grammar that parses it.
    pub(crate) lang: Lang,
    /// Whether the caller named it (errors instead of skips).
    pub(crate) explicit: bool,
}

/// Calls `visit` with each file to search under `paths` (relative to `root`; none means the
/// root), until it breaks. Errors when a path does not exist, when an explicitly named file's
/// language is unknown or the pattern is not valid code in it, and when there is no file to
/// search at all.
pub(crate) fn for_each_file(
    root: &Path,
    paths: &[PathBuf],
    requested: Option<Lang>,
    patterns: &Patterns,
    mut visit: impl FnMut(SourceFile) -> Result<ControlFlow<()>, AstError>,
) -> Result<(), AstError> {
    let default_paths = [PathBuf::from(".")];
    let paths = if paths.is_empty() {
        &default_paths[..]
    } else {
        paths
    };
    let mut starts = Vec::with_capacity(paths.len());
    for path in paths {
        let absolute = without_dots(&root.join(path));
        match std::fs::metadata(&absolute) {
            Ok(metadata) => starts.push((absolute, metadata.is_dir())),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Err(AstError::PathNotFound { path: path.clone() });
            }
            Err(source) => {
                return Err(AstError::Read {
                    path: path.clone(),
                    source,
                });
            }
        }
    }

    let mut seen = HashSet::new();
    let mut any_file = false;
    for (start, is_dir) in starts {
        if !is_dir {
            let path = relative(root, &start);
            let lang = match (requested, Lang::from_path(&start)) {
                (Some(requested), Some(own)) if requested.covers(own) => own,
                (Some(requested), _) => requested,
                (None, Some(own)) => own,
                (None, None) => return Err(AstError::UnknownFileLanguage { path }),
            };
            patterns.check(lang)?;
            any_file = true;
            if seen.insert(start.clone()) {
                let file = SourceFile {
                    path,
                    absolute: start,
                    lang,
                    explicit: true,
                };
                if visit(file)?.is_break() {
                    return Ok(());
                }
            }
            continue;
        }
        let mut walk = WalkBuilder::new(&start);
        walk.hidden(false)
            .git_ignore(true)
            .git_global(false)
            .git_exclude(true)
            .require_git(false)
            .ignore(true)
            .parents(true)
            .follow_links(false)
            .filter_entry(|entry| entry.file_name() != ".git")
            .sort_by_file_name(|a, b| a.cmp(b));
        for entry in walk.build() {
            // An unreadable directory is passed over: the rest of the walk goes on.
            let Ok(entry) = entry else { continue };
            if !entry.file_type().is_some_and(|kind| kind.is_file()) {
                continue;
            }
            let Some(own) = Lang::from_path(entry.path()) else {
                continue;
            };
            let covered = requested.is_none_or(|requested| requested.covers(own));
            if !covered || patterns.get(own).is_none() {
                continue;
            }
            any_file = true;
            let absolute = entry.into_path();
            if !seen.insert(absolute.clone()) {
                continue;
            }
            let file = SourceFile {
                path: relative(root, &absolute),
                absolute,
                lang: own,
                explicit: false,
            };
            if visit(file)?.is_break() {
                return Ok(());
            }
        }
    }
    if !any_file {
        let what = match requested {
            Some(lang) => format!("{lang} files"),
            None => {
                let langs: Vec<String> = patterns.langs().map(|lang| lang.to_string()).collect();
                format!(
                    "files in a language the pattern parses in ({})",
                    langs.join(", ")
                )
            }
        };
        let quoted: Vec<String> = paths
            .iter()
            .map(|path| format!("`{}`", path.display()))
            .collect();
        return Err(AstError::NoFiles {
            what,
            where_: quoted.join(", "),
        });
    }
    Ok(())
}

/// The text of `file`, within `limits`: `Err` with the reason it is skipped (the caller turns
/// it into an error for an explicitly named file, see [`skip_error`]).
pub(crate) fn read(file: &SourceFile, limits: &Limits) -> Result<String, SkipReason> {
    let unreadable = |error: std::io::Error| SkipReason::Unreadable {
        error: error.to_string(),
    };
    let metadata = std::fs::metadata(&file.absolute).map_err(unreadable)?;
    if metadata.len() > limits.max_file_bytes {
        return Err(SkipReason::TooLarge {
            bytes: metadata.len(),
        });
    }
    let bytes = std::fs::read(&file.absolute).map_err(unreadable)?;
    // The file may have grown between the two calls.
    if bytes.len() as u64 > limits.max_file_bytes {
        return Err(SkipReason::TooLarge {
            bytes: bytes.len() as u64,
        });
    }
    String::from_utf8(bytes).map_err(|_| SkipReason::NotText)
}

/// The error for an explicitly named file that [`read`] skipped.
pub(crate) fn skip_error(file: &SourceFile, reason: SkipReason, limits: &Limits) -> AstError {
    let path = file.path.clone();
    match reason {
        SkipReason::TooLarge { bytes } => AstError::FileTooLarge {
            path,
            bytes,
            limit: limits.max_file_bytes,
        },
        SkipReason::NotText => AstError::NotText { path },
        SkipReason::Unreadable { error } => AstError::Read {
            path,
            source: std::io::Error::other(error),
        },
    }
}

/// `path` relative to `root` when under it, else as it is.
pub(crate) fn relative(root: &Path, path: &Path) -> PathBuf {
    match path.strip_prefix(root) {
        Ok(inner) if inner.as_os_str().is_empty() => PathBuf::from("."),
        Ok(inner) => without_dots(inner),
        Err(_) => path.to_path_buf(),
    }
}

/// `path` without its `.` components (`./src/.` is `src`).
fn without_dots(path: &Path) -> PathBuf {
    path.components()
        .filter(|component| !matches!(component, Component::CurDir))
        .collect()
}
