//! [`AstError`]: everything `search`, `rewrite` and `apply` refuse, each message saying what was
//! wrong and what to do instead (the text reaches the model as the tool's error). A pattern is
//! quoted bounded ([`echo`]); paths are quoted as the caller gave them or relative to the root.
//! Also `Lang`'s `FromStr`, whose error is [`AstError::UnknownLanguage`].

use std::path::PathBuf;
use std::str::FromStr;

use crate::lang::Lang;

/// Why a search, a rewrite or an apply did not happen.
#[derive(Debug, thiserror::Error)]
pub enum AstError {
    /// The language name is none of [`Lang::all`]'s names: pass one of them, or no language.
    #[error("unknown language `{name}`; supported languages: {}", supported())]
    UnknownLanguage {
        /// The name as given (bounded).
        name: String,
    },
    /// The pattern is empty or only whitespace: pass code with meta-variables.
    #[error(
        "the pattern is empty; write code to find, with $NAME for any single node and $$$NAME \
         for any list of nodes (for example `$A.unwrap()`)"
    )]
    EmptyPattern,
    /// The pattern is not one valid piece of code in the language asked for: fix its syntax,
    /// or pass another language.
    #[error(
        "the pattern `{pattern}` does not parse as {lang} code ({reason}); write one complete \
         {lang} expression, statement or item, with $NAME for any single node and $$$NAME for \
         any list of nodes"
    )]
    PatternSyntax {
        /// The pattern (bounded).
        pattern: String,
        /// The language it was parsed in.
        lang: Lang,
        /// What the parser found wrong.
        reason: String,
    },
    /// With no language given, the pattern parses in none of them: fix its syntax, or pass the
    /// language to see that language's complaint.
    #[error(
        "the pattern `{pattern}` does not parse as code in any supported language ({}); check \
         its syntax, or pass `lang` to see why it does not parse in that language",
        supported()
    )]
    PatternInNoLanguage {
        /// The pattern (bounded).
        pattern: String,
    },
    /// The replacement uses a meta-variable the pattern does not capture (it would be replaced
    /// by nothing): capture it in the pattern, or drop it from the replacement.
    #[error(
        "the replacement uses {used}, which the pattern does not capture (the pattern captures \
         {captured}); every $NAME in the replacement must appear in the pattern"
    )]
    UncapturedMetaVariable {
        /// The meta-variables used and not captured: `$B, $C`.
        used: String,
        /// The meta-variables the pattern captures, or `nothing`.
        captured: String,
    },
    /// A path to search does not exist: check it (paths are relative to the root).
    #[error(
        "path `{path}` does not exist; give a file or directory relative to the working directory"
    )]
    PathNotFound {
        /// The path as given.
        path: PathBuf,
    },
    /// A file named explicitly has no extension of a supported language: pass the language.
    #[error(
        "cannot tell the language of `{path}` from its extension; pass `lang` (one of: {})",
        supported()
    )]
    UnknownFileLanguage {
        /// The file, relative to the root.
        path: PathBuf,
    },
    /// No file under the paths is in a language to search (files ignored by `.gitignore` are
    /// skipped): check the paths and the language.
    #[error(
        "no {what} under {where_}; .gitignore'd files are skipped: check the path, or the \
         language (supported: {})",
        supported()
    )]
    NoFiles {
        /// Which files were looked for ("Rust files", "files in a language the pattern parses in").
        what: String,
        /// The paths searched, quoted and joined.
        where_: String,
    },
    /// A file named explicitly is larger than the limit: search a smaller file, or use `grep`.
    #[error(
        "`{path}` is {bytes} bytes, over the {limit}-byte limit for structural search; search a \
         smaller file or use grep"
    )]
    FileTooLarge {
        /// The file, relative to the root.
        path: PathBuf,
        /// Its size.
        bytes: u64,
        /// The limit ([`crate::Limits::max_file_bytes`]).
        limit: u64,
    },
    /// A file named explicitly is not UTF-8 text: it cannot be parsed as code.
    #[error("`{path}` is not UTF-8 text, so it cannot be parsed as code")]
    NotText {
        /// The file, relative to the root.
        path: PathBuf,
    },
    /// A file could not be read: check its permissions.
    #[error("cannot read `{path}`: {source}")]
    Read {
        /// The file, relative to the root.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A file of the plan is not what the preview was made from (edited, or deleted, since):
    /// nothing was written; preview the rewrite again.
    #[error(
        "`{path}` changed since the preview ({what}); nothing was written: run the rewrite \
         again to preview the current content"
    )]
    ChangedSincePreview {
        /// The file, relative to the root.
        path: PathBuf,
        /// "its content differs", "it no longer exists".
        what: &'static str,
    },
    /// Writing a file failed: the files listed as written were written, the others were not.
    #[error("cannot write `{path}`: {source} (already written: {})", list(written))]
    Write {
        /// The file, relative to the root.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
        /// The plan's files written before this one, relative to the root.
        written: Vec<PathBuf>,
    },
}

impl FromStr for Lang {
    type Err = AstError;

    /// As [`Lang::from_name`], with the error listing the supported languages.
    fn from_str(name: &str) -> Result<Lang, AstError> {
        Lang::from_name(name).ok_or_else(|| AstError::UnknownLanguage { name: echo(name) })
    }
}

/// The longest piece of caller input an error quotes, in characters.
const ECHO_CHARS: usize = 200;

/// `input`, cut to [`ECHO_CHARS`] characters with the length noted when longer.
pub(crate) fn echo(input: &str) -> String {
    let total = input.chars().count();
    if total <= ECHO_CHARS {
        return input.to_owned();
    }
    let head: String = input.chars().take(ECHO_CHARS).collect();
    format!("{head}… ({total} characters)")
}

/// The supported languages with their aliases: `rust (rs), typescript (ts), …`.
fn supported() -> String {
    let names: Vec<String> = Lang::all()
        .iter()
        .map(|lang| match lang.aliases() {
            [name] => (*name).to_owned(),
            [name, aliases @ ..] => format!("{name} ({})", aliases.join(", ")),
            [] => String::new(),
        })
        .collect();
    names.join(", ")
}

/// Paths as a list for a message: `a, b`, or `none`.
fn list(paths: &[PathBuf]) -> String {
    if paths.is_empty() {
        return "none".to_owned();
    }
    let names: Vec<String> = paths
        .iter()
        .map(|path| path.display().to_string())
        .collect();
    names.join(", ")
}
