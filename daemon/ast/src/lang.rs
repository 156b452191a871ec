//! The languages `pi-ast` parses: one closed enum implementing ast-grep's `Language`, each
//! variant backed by its tree-sitter grammar crate. Names and file extensions follow
//! `ast-grep-language` (the `sg` CLI's table), so a pattern means here what it means to `sg`.
//!
//! Meta-variables: ast-grep writes them `$NAME`, `$$$NAME` and `$$$`. Rust, Python and Go do not
//! accept `$` in identifiers, so before parsing a pattern in them every `$` that starts a
//! meta-variable becomes `µ` (a letter in all three, the same "expando" character
//! `ast-grep-language` uses); JavaScript and TypeScript parse `$A` as an identifier as it is.

use std::borrow::Cow;
use std::fmt;
use std::path::Path;

use ast_grep_core::Language;
use ast_grep_core::matcher::{Pattern, PatternBuilder, PatternError};
use ast_grep_core::tree_sitter::{LanguageExt, StrDoc, TSLanguage};

/// A language `pi-ast` can search and rewrite.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lang {
    /// Rust (`.rs`).
    Rust,
    /// TypeScript without JSX (`.ts`, `.mts`, `.cts`).
    TypeScript,
    /// TypeScript with JSX (`.tsx`).
    Tsx,
    /// JavaScript, JSX included (`.js`, `.mjs`, `.cjs`, `.jsx`).
    JavaScript,
    /// Python (`.py`, `.pyi`, `.py3`).
    Python,
    /// Go (`.go`).
    Go,
}

/// Every language, in the order [`Lang::all`] names them.
const ALL: [Lang; 6] = [
    Lang::Rust,
    Lang::TypeScript,
    Lang::Tsx,
    Lang::JavaScript,
    Lang::Python,
    Lang::Go,
];

impl Lang {
    /// Every supported language.
    pub fn all() -> &'static [Lang] {
        &ALL
    }

    /// The language a name or alias stands for, ignoring ASCII case (`str::parse` gives the
    /// error listing the supported ones instead of `None`): `rust`/`rs`,
    /// `typescript`/`ts`, `tsx`, `javascript`/`js`/`jsx`, `python`/`py`, `go`/`golang`.
    pub fn from_name(name: &str) -> Option<Lang> {
        let name = name.trim();
        ALL.into_iter().find(|lang| {
            lang.aliases()
                .iter()
                .any(|alias| alias.eq_ignore_ascii_case(name))
        })
    }

    /// The language of a file, by its extension; `None` for any other file.
    pub fn from_path(path: &Path) -> Option<Lang> {
        let extension = path.extension()?.to_str()?;
        ALL.into_iter().find(|lang| {
            lang.extensions()
                .iter()
                .any(|known| known.eq_ignore_ascii_case(extension))
        })
    }

    /// The canonical name (the first of [`Lang::aliases`]).
    pub fn name(self) -> &'static str {
        self.aliases()[0]
    }

    /// The names [`Lang::from_name`] accepts for this language, canonical name first.
    pub fn aliases(self) -> &'static [&'static str] {
        match self {
            Lang::Rust => &["rust", "rs"],
            Lang::TypeScript => &["typescript", "ts"],
            Lang::Tsx => &["tsx"],
            Lang::JavaScript => &["javascript", "js", "jsx"],
            Lang::Python => &["python", "py"],
            Lang::Go => &["go", "golang"],
        }
    }

    /// The name people write it with: `Rust`, `TypeScript`, `TSX`, `JavaScript`, `Python`, `Go`
    /// (also what `Display` writes).
    pub fn display_name(self) -> &'static str {
        match self {
            Lang::Rust => "Rust",
            Lang::TypeScript => "TypeScript",
            Lang::Tsx => "TSX",
            Lang::JavaScript => "JavaScript",
            Lang::Python => "Python",
            Lang::Go => "Go",
        }
    }

    /// The file extensions (without the dot) of this language's files.
    pub fn extensions(self) -> &'static [&'static str] {
        match self {
            Lang::Rust => &["rs"],
            Lang::TypeScript => &["ts", "mts", "cts"],
            Lang::Tsx => &["tsx"],
            Lang::JavaScript => &["js", "mjs", "cjs", "jsx"],
            Lang::Python => &["py", "pyi", "py3"],
            Lang::Go => &["go"],
        }
    }

    /// Whether a file of language `file` belongs to a search asked for in `self`: the same
    /// language, or a `.tsx` file in a TypeScript search (parsed with the TSX grammar).
    pub(crate) fn covers(self, file: Lang) -> bool {
        self == file || (self == Lang::TypeScript && file == Lang::Tsx)
    }

    /// The character that stands for `$` in patterns parsed in this language.
    fn expando(self) -> char {
        match self {
            Lang::Rust | Lang::Python | Lang::Go => 'µ',
            Lang::TypeScript | Lang::Tsx | Lang::JavaScript => '$',
        }
    }
}

impl fmt::Display for Lang {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.display_name())
    }
}

impl Language for Lang {
    fn kind_to_id(&self, kind: &str) -> u16 {
        self.get_ts_language().id_for_node_kind(kind, true)
    }

    fn field_to_id(&self, field: &str) -> Option<u16> {
        self.get_ts_language()
            .field_id_for_name(field)
            .map(|id| id.get())
    }

    fn expando_char(&self) -> char {
        self.expando()
    }

    fn pre_process_pattern<'q>(&self, query: &'q str) -> Cow<'q, str> {
        let expando = self.expando();
        if expando == '$' {
            return Cow::Borrowed(query);
        }
        // As ast-grep-language's `pre_process_pattern`: a run of `$` becomes expandos when a
        // meta-variable name follows (`$A`, `$$$ARGS`, `$_`) or when it is the anonymous `$$$`;
        // any other `$` (in a string, say) stays.
        let mut processed = String::with_capacity(query.len());
        let mut dollars = 0;
        for character in query.chars() {
            if character == '$' {
                dollars += 1;
                continue;
            }
            let starts_meta_variable = matches!(character, 'A'..='Z' | '_') || dollars == 3;
            let sigil = if starts_meta_variable { expando } else { '$' };
            processed.extend(std::iter::repeat_n(sigil, dollars));
            dollars = 0;
            processed.push(character);
        }
        let sigil = if dollars == 3 { expando } else { '$' };
        processed.extend(std::iter::repeat_n(sigil, dollars));
        Cow::Owned(processed)
    }

    fn from_path<P: AsRef<Path>>(path: P) -> Option<Self> {
        Lang::from_path(path.as_ref())
    }

    fn build_pattern(&self, builder: &PatternBuilder<'_>) -> Result<Pattern, PatternError> {
        builder.build(|source| StrDoc::try_new(source, *self))
    }
}

impl LanguageExt for Lang {
    fn get_ts_language(&self) -> TSLanguage {
        match self {
            Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
            Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
            Lang::Go => tree_sitter_go::LANGUAGE.into(),
        }
    }
}
