//! [`search`]: every node matching a pattern in the files under some paths, with what its
//! meta-variables captured, and [`SearchReport::to_text`], the report as the `ast_grep` tool
//! gives it to the model.
//!
//! Bounded: at most [`Limits::max_matches`] matches (the report says when there were more and
//! the search stops there), a matched text or a capture cut at [`Limits::max_text_bytes`], files
//! over [`Limits::max_file_bytes`] not read. Nested matches are all reported (`$A.unwrap()` finds
//! both calls in `a.unwrap().unwrap()`), in the order they start.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use ast_grep_core::meta_var::MetaVariable;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::{AstGrep, NodeMatch};

use crate::Limits;
use crate::error::AstError;
use crate::files::{SkipReason, SkippedFile, for_each_file, read, skip_error};
use crate::lang::Lang;
use crate::pattern::Patterns;

/// What a search found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SearchReport {
    /// The matches, file by file in walk order, in each file in the order they start.
    pub matches: Vec<AstMatch>,
    /// How many files were parsed and searched.
    pub files_searched: usize,
    /// Whether the search stopped at [`Limits::max_matches`] with more matches left.
    pub truncated: bool,
    /// Files met in a directory and not searched (too large, not text, unreadable).
    pub skipped: Vec<SkippedFile>,
}

/// One node that matched the pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AstMatch {
    /// The file, relative to the root.
    pub path: PathBuf,
    /// The grammar the file was parsed with.
    pub lang: Lang,
    /// Where the match starts: 1-based line.
    pub start_line: usize,
    /// Where the match starts: 1-based column, in characters.
    pub start_col: usize,
    /// Where the match ends (exclusive): 1-based line.
    pub end_line: usize,
    /// Where the match ends (exclusive): 1-based column, in characters.
    pub end_col: usize,
    /// The matched source, cut at [`Limits::max_text_bytes`] (the cut noted at its end).
    pub text: String,
    /// What each named meta-variable captured, by name without the `$`s (`A` for `$A`, `ARGS`
    /// for `$$$ARGS`; a `$$$` list as the source from its first node to its last), each cut as
    /// `text` is.
    pub meta: BTreeMap<String, String>,
}

/// Searches the files under `paths` (relative to `root`, files or directories; none means the
/// root) for `pattern`, in `lang`, or with no language in each file's language by extension
/// (the pattern compiled for every language it is valid code in, files of the others passed
/// over). A TypeScript search covers `.tsx` files too, parsed as TSX; a file named explicitly
/// is parsed in `lang` whatever its extension.
///
/// Errors: the language's or pattern's problems, a path that does not exist, an explicitly
/// named file of unknown language, too large or not text, and no file to search at all (see
/// [`AstError`]). Finding nothing is a report with no matches.
pub fn search(
    root: &Path,
    paths: &[PathBuf],
    pattern: &str,
    lang: Option<Lang>,
    limits: &Limits,
) -> Result<SearchReport, AstError> {
    let patterns = Patterns::compile(pattern, lang)?;
    let mut report = SearchReport::default();
    for_each_file(root, paths, lang, &patterns, |file| {
        let Some(pattern) = patterns.get(file.lang) else {
            return Ok(ControlFlow::Continue(()));
        };
        let text = match read(&file, limits) {
            Ok(text) => text,
            Err(reason) if file.explicit => return Err(skip_error(&file, reason, limits)),
            Err(reason) => {
                report.skipped.push(SkippedFile {
                    path: file.path,
                    reason,
                });
                return Ok(ControlFlow::Continue(()));
            }
        };
        let document = match StrDoc::try_new(&text, file.lang) {
            Ok(document) => document,
            Err(error) => {
                let reason = SkipReason::Unreadable { error };
                if file.explicit {
                    return Err(skip_error(&file, reason, limits));
                }
                report.skipped.push(SkippedFile {
                    path: file.path,
                    reason,
                });
                return Ok(ControlFlow::Continue(()));
            }
        };
        let tree = AstGrep::doc(document);
        report.files_searched += 1;
        for found in tree.root().find_all(pattern) {
            if report.matches.len() >= limits.max_matches {
                report.truncated = true;
                return Ok(ControlFlow::Break(()));
            }
            report
                .matches
                .push(ast_match(&file.path, file.lang, &found, limits));
        }
        Ok(ControlFlow::Continue(()))
    })?;
    Ok(report)
}

impl SearchReport {
    /// The report as the tool's text: matches grouped by file, each `path:line:col: text` (a
    /// multi-line match on the lines after its location, indented), then a summary line, the
    /// truncation and the skipped files.
    pub fn to_text(&self) -> String {
        let mut text = String::new();
        let mut previous: Option<&Path> = None;
        let mut n_files = 0;
        for found in &self.matches {
            if previous != Some(found.path.as_path()) {
                if previous.is_some() {
                    text.push('\n');
                }
                previous = Some(found.path.as_path());
                n_files += 1;
            }
            let location = format!(
                "{}:{}:{}",
                display(&found.path),
                found.start_line,
                found.start_col
            );
            if found.text.contains('\n') {
                let _ = writeln!(text, "{location}:");
                for line in found.text.lines() {
                    let _ = writeln!(text, "    {line}");
                }
            } else {
                let _ = writeln!(text, "{location}: {}", found.text);
            }
            // What each meta-variable captured, on one line.
            if !found.meta.is_empty() {
                let captured: Vec<String> = found
                    .meta
                    .iter()
                    .map(|(name, value)| {
                        let value = value.split_whitespace().collect::<Vec<_>>().join(" ");
                        format!("${name} = {value}")
                    })
                    .collect();
                let _ = writeln!(text, "    {}", captured.join(", "));
            }
        }
        if self.matches.is_empty() {
            let _ = writeln!(
                text,
                "No matches in {}.",
                plural(self.files_searched, "file searched", "files searched")
            );
        } else {
            let _ = writeln!(
                text,
                "\n{} in {} ({}).",
                plural(self.matches.len(), "match", "matches"),
                plural(n_files, "file", "files"),
                plural(self.files_searched, "file searched", "files searched")
            );
        }
        if self.truncated {
            let _ = writeln!(
                text,
                "Stopped at the first {} matches; there are more: narrow the path or the pattern.",
                self.matches.len()
            );
        }
        skipped_text(&mut text, &self.skipped);
        text
    }
}

/// The most skipped files a text names one by one.
const SKIPPED_NAMED: usize = 20;

/// Appends the skipped files (the first [`SKIPPED_NAMED`]) to a tool's text.
pub(crate) fn skipped_text(text: &mut String, skipped: &[SkippedFile]) {
    if skipped.is_empty() {
        return;
    }
    let _ = writeln!(text, "Skipped {}:", plural(skipped.len(), "file", "files"));
    for file in skipped.iter().take(SKIPPED_NAMED) {
        let why = match &file.reason {
            SkipReason::TooLarge { bytes } => format!("{bytes} bytes, over the size limit"),
            SkipReason::NotText => "not UTF-8 text".to_owned(),
            SkipReason::Unreadable { error } => format!("unreadable: {error}"),
        };
        let _ = writeln!(text, "  {} ({why})", display(&file.path));
    }
    if skipped.len() > SKIPPED_NAMED {
        let _ = writeln!(text, "  … and {} more", skipped.len() - SKIPPED_NAMED);
    }
}

/// `n` with the singular or plural noun.
pub(crate) fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// A path as a tool shows it.
pub(crate) fn display(path: &Path) -> String {
    path.display().to_string()
}

/// `text` cut to at most `max_bytes` at a character boundary, the cut noted.
pub(crate) fn bound(text: &str, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text.to_owned();
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} more bytes)", &text[..end], text.len() - end)
}

/// One match as the report holds it.
fn ast_match(
    path: &Path,
    lang: Lang,
    found: &NodeMatch<'_, StrDoc<Lang>>,
    limits: &Limits,
) -> AstMatch {
    let node = found.get_node();
    let start = node.start_pos();
    let end = node.end_pos();
    let environment = found.get_env();
    let mut meta = BTreeMap::new();
    for variable in environment.get_matched_variables() {
        let name = match &variable {
            MetaVariable::Capture(name, _) | MetaVariable::MultiCapture(name) => name.clone(),
            MetaVariable::Dropped(_) | MetaVariable::Multiple => continue,
        };
        let captured = environment
            .get_var_bytes(&variable)
            .map(String::from_utf8_lossy)
            .unwrap_or_default();
        meta.insert(name, bound(&captured, limits.max_text_bytes));
    }
    AstMatch {
        path: path.to_path_buf(),
        lang,
        start_line: start.line() + 1,
        start_col: start.column(node) + 1,
        end_line: end.line() + 1,
        end_col: end.column(node) + 1,
        text: bound(&node.text(), limits.max_text_bytes),
        meta,
    }
}
