//! [`rewrite`]: the preview of replacing every match of a pattern with a template, as an
//! [`EditPlan`] of whole new file texts and their unified diffs. Nothing is written here; see
//! [`crate::apply`].
//!
//! The replacement is ast-grep's template: `$NAME` and `$$$NAME` stand for what the pattern
//! captured (every one used must be captured by the pattern, or the rewrite is refused), and a
//! multi-line replacement is re-indented to the match's indentation. Where matches nest only the
//! outer one is replaced. A file is in the plan whole or not at all: after
//! [`Limits::max_matches`] replacements no further file is taken (the plan says so).

use std::fmt::Write as _;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ast_grep_core::replacer::TemplateFix;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::{AstGrep, Pattern};
use similar::TextDiff;

use crate::Limits;
use crate::error::AstError;
use crate::files::{SkipReason, SkippedFile, for_each_file, read, skip_error};
use crate::lang::Lang;
use crate::pattern::Patterns;
use crate::search::{display, plural, skipped_text};

/// The previewed rewrite: the files it changes, what they hold now and what they would hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EditPlan {
    /// The files that change, in walk order.
    pub files: Vec<FileEdit>,
    /// How many files were parsed and searched.
    pub files_searched: usize,
    /// Whether files with matches were left out after [`Limits::max_matches`] replacements.
    pub truncated: bool,
    /// Files met in a directory and not searched (too large, not text, unreadable).
    pub skipped: Vec<SkippedFile>,
}

/// One file's rewrite. The plan's facts, so read-only: [`crate::apply`] writes `new_text` only
/// over exactly `original`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileEdit {
    /// The file, relative to the root.
    path: PathBuf,
    /// Where the file is (what a caller locks around [`crate::apply`]).
    absolute: PathBuf,
    /// The grammar it was parsed with.
    lang: Lang,
    /// Invariant: the file's whole text when the plan was made.
    original: String,
    /// The whole text it gets.
    new_text: String,
    /// How many matches were replaced.
    replacements: usize,
    /// The unified diff from `original` to `new_text`, headed `a/<path>` and `b/<path>`.
    diff: String,
}

/// How long the diff of one file may take before it settles for a coarser one.
const DIFF_TIMEOUT: Duration = Duration::from_secs(2);

/// Previews replacing each match of `pattern` with `replacement` in the files under `paths`
/// (as [`crate::search`] finds them), in `lang` or by each file's extension.
///
/// Errors: those of [`crate::search`], and a replacement using a meta-variable the pattern does
/// not capture. No match is an empty plan.
pub fn rewrite(
    root: &Path,
    paths: &[PathBuf],
    pattern: &str,
    replacement: &str,
    lang: Option<Lang>,
    limits: &Limits,
) -> Result<EditPlan, AstError> {
    let patterns = Patterns::compile(pattern, lang)?;
    if let Some(first) = patterns.langs().next()
        && let Some(compiled) = patterns.get(first)
    {
        check_replacement(compiled, replacement, first)?;
    }
    let mut plan = EditPlan::default();
    let mut n_replacements = 0;
    for_each_file(root, paths, lang, &patterns, |file| {
        let Some(pattern) = patterns.get(file.lang) else {
            return Ok(ControlFlow::Continue(()));
        };
        let original = match read(&file, limits) {
            Ok(text) => text,
            Err(reason) if file.explicit => return Err(skip_error(&file, reason, limits)),
            Err(reason) => {
                plan.skipped.push(SkippedFile {
                    path: file.path,
                    reason,
                });
                return Ok(ControlFlow::Continue(()));
            }
        };
        let document = match StrDoc::try_new(&original, file.lang) {
            Ok(document) => document,
            Err(error) => {
                let reason = SkipReason::Unreadable { error };
                if file.explicit {
                    return Err(skip_error(&file, reason, limits));
                }
                plan.skipped.push(SkippedFile {
                    path: file.path,
                    reason,
                });
                return Ok(ControlFlow::Continue(()));
            }
        };
        let tree = AstGrep::doc(document);
        plan.files_searched += 1;
        let fix = template(replacement, file.lang);
        // Splice the replacements in, outermost first: a match inside an earlier one (in the
        // order matches start) is left to it.
        let mut new_bytes = Vec::with_capacity(original.len());
        let mut copied_to = 0;
        let mut replacements = 0;
        for found in tree.root().find_all(pattern) {
            // Checked before the replacement is generated: a pattern like `$A` matches every
            // node, and generating each nested one would be quadratic in the file's size.
            if found.range().start < copied_to {
                continue;
            }
            let edit = found.make_edit(pattern, &fix);
            new_bytes.extend_from_slice(&original.as_bytes()[copied_to..edit.position]);
            new_bytes.extend_from_slice(&edit.inserted_text);
            copied_to = edit.position + edit.deleted_length;
            replacements += 1;
        }
        if replacements == 0 {
            return Ok(ControlFlow::Continue(()));
        }
        if n_replacements >= limits.max_matches {
            plan.truncated = true;
            return Ok(ControlFlow::Break(()));
        }
        new_bytes.extend_from_slice(&original.as_bytes()[copied_to..]);
        // Whole characters of the file around whole UTF-8 replacements: never lossy.
        let new_text = String::from_utf8_lossy(&new_bytes).into_owned();
        if new_text == original {
            return Ok(ControlFlow::Continue(()));
        }
        n_replacements += replacements;
        let shown = display(&file.path);
        let diff = TextDiff::configure()
            .timeout(DIFF_TIMEOUT)
            .diff_lines(&original, &new_text)
            .unified_diff()
            .context_radius(3)
            .header(&format!("a/{shown}"), &format!("b/{shown}"))
            .to_string();
        plan.files.push(FileEdit {
            path: file.path,
            absolute: file.absolute,
            lang: file.lang,
            original,
            new_text,
            replacements,
            diff,
        });
        Ok(ControlFlow::Continue(()))
    })?;
    Ok(plan)
}

impl EditPlan {
    /// How many matches the plan replaces, in all its files.
    pub fn replacements(&self) -> usize {
        self.files.iter().map(|file| file.replacements).sum()
    }

    /// The preview as the tool's text: each file's diff, then a summary line, the truncation
    /// and the skipped files.
    pub fn to_text(&self) -> String {
        let mut text = String::new();
        for file in &self.files {
            text.push_str(&file.diff);
            if !file.diff.ends_with('\n') {
                text.push('\n');
            }
        }
        if self.files.is_empty() {
            let _ = writeln!(
                text,
                "No matches in {}; nothing to change.",
                plural(self.files_searched, "file searched", "files searched")
            );
        } else {
            let _ = writeln!(
                text,
                "\n{} in {} ({}).",
                plural(self.replacements(), "replacement", "replacements"),
                plural(self.files.len(), "file", "files"),
                plural(self.files_searched, "file searched", "files searched")
            );
        }
        if self.truncated {
            let _ = writeln!(
                text,
                "Stopped after {} replacements; more files match: narrow the path or the \
                 pattern, or apply this and run the rewrite again.",
                self.replacements()
            );
        }
        skipped_text(&mut text, &self.skipped);
        text
    }
}

impl FileEdit {
    /// The file, relative to the root.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the file is: what a caller locks around [`crate::apply`].
    pub fn absolute_path(&self) -> &Path {
        &self.absolute
    }

    /// The grammar the file was parsed with.
    pub fn lang(&self) -> Lang {
        self.lang
    }

    /// The file's whole text when the plan was made.
    pub fn original(&self) -> &str {
        &self.original
    }

    /// The whole text the file gets.
    pub fn new_text(&self) -> &str {
        &self.new_text
    }

    /// How many matches are replaced in this file.
    pub fn replacements(&self) -> usize {
        self.replacements
    }

    /// The unified diff from the original to the new text, headed `a/<path>` and `b/<path>`.
    pub fn diff(&self) -> &str {
        &self.diff
    }
}

/// `replacement` as ast-grep's template in `lang`.
fn template(replacement: &str, lang: Lang) -> TemplateFix {
    match TemplateFix::try_new(replacement, &lang) {
        Ok(fix) => fix,
        Err(never) => match never {},
    }
}

/// Refuses a replacement using a meta-variable `pattern` does not capture (ast-grep would put
/// nothing in its place).
fn check_replacement(pattern: &Pattern, replacement: &str, lang: Lang) -> Result<(), AstError> {
    let captured = pattern.defined_vars();
    let fix = template(replacement, lang);
    let mut unknown: Vec<&str> = fix
        .used_vars()
        .into_iter()
        .filter(|name| !captured.contains(name))
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    unknown.sort_unstable();
    let mut captured: Vec<&str> = captured.into_iter().collect();
    captured.sort_unstable();
    let names = |names: &[&str]| {
        let names: Vec<String> = names.iter().map(|name| format!("${name}")).collect();
        names.join(", ")
    };
    Err(AstError::UncapturedMetaVariable {
        used: names(&unknown),
        captured: if captured.is_empty() {
            "nothing".to_owned()
        } else {
            names(&captured)
        },
    })
}
