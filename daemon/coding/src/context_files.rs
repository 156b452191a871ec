//! Context files and system prompt files (pi §7.3).
//!
//! Context files: at most one per directory, `AGENTS.md` preferred over `CLAUDE.md`. The global
//! directories' files come first (pi's agent dir, then our config dir), then every directory
//! from the filesystem root down to the working directory (not stopping at a git root). A file
//! reached twice (the same path, or a symlink to one already read) appears once, where first
//! found.
//!
//! `SYSTEM.md` / `APPEND_SYSTEM.md`: the project's (`<cwd>/.pi/`) if present, else ours, else
//! pi's: one file each.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::Diagnostic;

/// Names of context files, preferred first.
pub const CONTEXT_FILE_NAMES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// A context file and its content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextFile {
    /// Absolute path, as shown in the system prompt.
    pub path: PathBuf,
    /// The whole file.
    pub content: String,
}

/// The context files for `cwd`: those of `global_dirs` (in order), then root → `cwd`.
pub fn load_context_files(
    global_dirs: &[PathBuf],
    cwd: &Path,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<ContextFile> {
    let mut ancestors: Vec<&Path> = cwd.ancestors().collect();
    ancestors.reverse();
    let mut seen = HashSet::new();
    let mut files = Vec::new();
    for dir in global_dirs.iter().map(PathBuf::as_path).chain(ancestors) {
        let Some(path) = CONTEXT_FILE_NAMES
            .iter()
            .map(|name| dir.join(name))
            .find(|path| path.is_file())
        else {
            continue;
        };
        let identity = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if !seen.insert(identity) {
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(content) => files.push(ContextFile { path, content }),
            Err(error) => diagnostics.push(Diagnostic::warning(
                &path,
                format!("cannot be read ({error}); it is left out of the system prompt"),
            )),
        }
    }
    files
}

/// The text of the first of `<cwd>/.pi/<name>`, then `<dir>/<name>` for each of
/// `global_dirs_highest_first`, that exists.
pub fn load_prompt_file(
    name: &str,
    cwd: &Path,
    global_dirs_highest_first: &[PathBuf],
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<String> {
    let project = cwd.join(".pi");
    let path = std::iter::once(&project)
        .chain(global_dirs_highest_first)
        .map(|dir| dir.join(name))
        .find(|path| path.is_file())?;
    read_text(&path, diagnostics)
}

/// A file's text, or a diagnostic.
pub(crate) fn read_text(path: &Path, diagnostics: &mut Vec<Diagnostic>) -> Option<String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(error) => {
            diagnostics.push(Diagnostic::warning(
                path,
                format!("cannot be read ({error}); it is ignored"),
            ));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a tree of `(relative path, content)` files in a temp dir, then lists the context
    /// files for `cwd` (relative) with global dirs `global` (relative), as relative paths.
    fn check(files: &[(&str, &str)], global: &[&str], cwd: &str, expect: &[&str]) {
        let root = tempfile::tempdir().unwrap();
        for (path, content) in files {
            let path = root.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, content).unwrap();
        }
        let cwd = root.path().join(cwd);
        std::fs::create_dir_all(&cwd).unwrap();
        let global: Vec<PathBuf> = global.iter().map(|dir| root.path().join(dir)).collect();
        let mut diagnostics = Vec::new();
        let found: Vec<String> = load_context_files(&global, &cwd, &mut diagnostics)
            .into_iter()
            .filter_map(|file| {
                let relative = file.path.strip_prefix(root.path()).ok()?;
                Some(format!("{}={}", relative.display(), file.content))
            })
            .collect();
        assert_eq!(found, expect);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
    }

    #[test]
    fn walk_up_order() {
        /// Files, global dirs, cwd, expected context files.
        type Case<'a> = (
            &'a [(&'a str, &'a str)],
            &'a [&'a str],
            &'a str,
            &'a [&'a str],
        );
        let cases: &[Case<'_>] = &[
            // Nothing anywhere.
            (&[], &["agent"], "p", &[]),
            // Root of the tree first, then down to cwd; global first of all.
            (
                &[
                    ("agent/AGENTS.md", "global"),
                    ("AGENTS.md", "top"),
                    ("p/AGENTS.md", "project"),
                    ("p/a/b/AGENTS.md", "deep"),
                ],
                &["agent"],
                "p/a/b",
                &[
                    "agent/AGENTS.md=global",
                    "AGENTS.md=top",
                    "p/AGENTS.md=project",
                    "p/a/b/AGENTS.md=deep",
                ],
            ),
            // CLAUDE.md where there is no AGENTS.md; AGENTS.md wins where both are.
            (
                &[
                    ("p/CLAUDE.md", "claude"),
                    ("p/a/CLAUDE.md", "loser"),
                    ("p/a/AGENTS.md", "agents"),
                ],
                &[],
                "p/a",
                &["p/CLAUDE.md=claude", "p/a/AGENTS.md=agents"],
            ),
            // Files below cwd are not read.
            (&[("p/sub/AGENTS.md", "below")], &[], "p", &[]),
            // pi's global, then ours; a global dir that is also an ancestor appears once.
            (
                &[("pi/AGENTS.md", "pi"), ("ours/CLAUDE.md", "ours")],
                &["pi", "ours"],
                "ours",
                &["pi/AGENTS.md=pi", "ours/CLAUDE.md=ours"],
            ),
        ];
        for (files, global, cwd, expect) in cases {
            check(files, global, cwd, expect);
        }
    }

    #[test]
    fn prompt_files_prefer_project_then_ours_then_pi() {
        let root = tempfile::tempdir().unwrap();
        let cwd = root.path().join("p");
        let ours = root.path().join("ours");
        let pi = root.path().join("pi");
        for dir in [&cwd.join(".pi"), &ours, &pi] {
            std::fs::create_dir_all(dir).unwrap();
        }
        let load = || {
            load_prompt_file(
                "SYSTEM.md",
                &cwd,
                &[ours.clone(), pi.clone()],
                &mut Vec::new(),
            )
        };
        assert_eq!(load(), None);
        std::fs::write(pi.join("SYSTEM.md"), "pi").unwrap();
        assert_eq!(load().as_deref(), Some("pi"));
        std::fs::write(ours.join("SYSTEM.md"), "ours").unwrap();
        assert_eq!(load().as_deref(), Some("ours"));
        std::fs::write(cwd.join(".pi/SYSTEM.md"), "project").unwrap();
        assert_eq!(load().as_deref(), Some("project"));
    }
}
