//! Compiling one pattern for the languages of a request: [`Patterns`], an ast-grep `Pattern` for
//! each language the pattern is valid code in.
//!
//! Tree-sitter never refuses input, so "parses" is decided here: ast-grep must build a pattern
//! from it (one node, not a bare `$$$`), and the node the pattern matches with (ast-grep's, after
//! descending through single-child wrappers such as Rust's top-level `ERROR` around a bare
//! expression) must hold no syntax error and no missing token. A pattern that only parses with
//! errors would match what its error recovery happened to build, which is never what was meant.
//!
//! Go: at the top level of a file `fmt.Println($A)` parses as a type conversion, while the same
//! text inside a function body (where every call in real code sits) is a call. When a Go
//! pattern is a type conversion and the same text in a function body is one call, the call is
//! the pattern (ast-grep's contextual pattern, selector `call_expression`).

use ast_grep_core::matcher::PatternError;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::{AstGrep, Language, Node, Pattern};

use crate::error::{AstError, echo};
use crate::lang::Lang;

/// One pattern, compiled for each language it is valid code in.
pub(crate) struct Patterns {
    /// The pattern as given (bounded), for errors.
    echoed: String,
    /// The languages it compiled for and their patterns, in [`Lang::all`] order.
    compiled: Vec<(Lang, Pattern)>,
    /// The languages it did not compile for, and why.
    failed: Vec<(Lang, String)>,
}

/// The longest part of a pattern a syntax error's reason quotes, in characters.
const REASON_QUOTE_CHARS: usize = 40;

/// How a Go function body starts, for parsing a Go pattern where calls are calls.
const GO_BODY_START: &str = "func _() {\n";

impl Patterns {
    /// Compiles `source` for `requested` (and, for TypeScript, for TSX too, so `.tsx` files are
    /// searched), or with no language for every language it parses in.
    pub(crate) fn compile(source: &str, requested: Option<Lang>) -> Result<Patterns, AstError> {
        let source = source.trim();
        if source.is_empty() {
            return Err(AstError::EmptyPattern);
        }
        let mut compiled = Vec::new();
        let mut failed = Vec::new();
        match requested {
            Some(lang) => {
                let pattern =
                    compile_in(source, lang).map_err(|reason| AstError::PatternSyntax {
                        pattern: echo(source),
                        lang,
                        reason,
                    })?;
                compiled.push((lang, pattern));
                // A TypeScript search covers `.tsx` files when the pattern is valid TSX too (a
                // `<T>value` cast is not).
                if lang == Lang::TypeScript {
                    match compile_in(source, Lang::Tsx) {
                        Ok(pattern) => compiled.push((Lang::Tsx, pattern)),
                        Err(reason) => failed.push((Lang::Tsx, reason)),
                    }
                }
            }
            None => {
                for &lang in Lang::all() {
                    match compile_in(source, lang) {
                        Ok(pattern) => compiled.push((lang, pattern)),
                        Err(reason) => failed.push((lang, reason)),
                    }
                }
                if compiled.is_empty() {
                    return Err(AstError::PatternInNoLanguage {
                        pattern: echo(source),
                    });
                }
            }
        }
        Ok(Patterns {
            echoed: echo(source),
            compiled,
            failed,
        })
    }

    /// Whether the pattern is valid code in `lang`, else the error saying why not.
    pub(crate) fn check(&self, lang: Lang) -> Result<(), AstError> {
        if self.get(lang).is_some() {
            return Ok(());
        }
        let reason = self
            .failed
            .iter()
            .find(|(failed_lang, _)| *failed_lang == lang)
            .map_or_else(
                || format!("it was not compiled for {lang}"),
                |(_, reason)| reason.clone(),
            );
        Err(AstError::PatternSyntax {
            pattern: self.echoed.clone(),
            lang,
            reason,
        })
    }

    /// The pattern for files of `lang`, if it is valid code in it.
    pub(crate) fn get(&self, lang: Lang) -> Option<&Pattern> {
        self.compiled
            .iter()
            .find(|(compiled_lang, _)| *compiled_lang == lang)
            .map(|(_, pattern)| pattern)
    }

    /// The languages the pattern compiled for.
    pub(crate) fn langs(&self) -> impl Iterator<Item = Lang> + '_ {
        self.compiled.iter().map(|(lang, _)| *lang)
    }
}

/// `source` (trimmed, not empty) as a pattern in `lang`, or why it is not valid code in it.
fn compile_in(source: &str, lang: Lang) -> Result<Pattern, String> {
    let pattern = Pattern::try_new(source, lang).map_err(|error| match error {
        PatternError::Parse(_) => "the parser failed".to_owned(),
        PatternError::NoContent(_) => "it holds no code".to_owned(),
        PatternError::MultipleNode(_) => {
            "it is several nodes, and a pattern matches one node: search for one statement or \
             expression at a time"
                .to_owned()
        }
        PatternError::RootMultiMetaVar(_) => {
            "a $$$ list cannot be the whole pattern: use $NAME, or put $$$NAME inside a larger \
             pattern"
                .to_owned()
        }
        other @ (PatternError::InvalidKind(_) | PatternError::NoSelectorInContext { .. }) => {
            other.to_string()
        }
    })?;
    let processed = lang.pre_process_pattern(source);
    let root = parse(&processed, lang)?;
    let matched = matched_node(root.root());
    if let Some(problem) = first_problem(&matched) {
        return Err(problem);
    }
    if lang == Lang::Go
        && matched.kind() == "type_conversion_expression"
        && let Some(call) = go_call(source, &processed)
    {
        return Ok(call);
    }
    Ok(pattern)
}

/// `text` parsed in `lang`.
fn parse(text: &str, lang: Lang) -> Result<AstGrep<StrDoc<Lang>>, String> {
    StrDoc::try_new(text, lang)
        .map(AstGrep::doc)
        .map_err(|error| format!("the parser failed: {error}"))
}

/// The node ast-grep builds a pattern from: down from the root while a node has one child (or
/// one and a missing or empty trailing one, as Go's file terminator and Rust's `;` are).
fn matched_node<'r>(root: Node<'r, StrDoc<Lang>>) -> Node<'r, StrDoc<Lang>> {
    let mut node = root;
    loop {
        let single = match node.children().len() {
            1 => true,
            2 => node
                .child(1)
                .is_some_and(|second| second.is_missing() || second.kind().is_empty()),
            _ => false,
        };
        let Some(first) = node.child(0).filter(|_| single) else {
            return node;
        };
        node = first;
    }
}

/// The first syntax error or missing token in `node`, described for a message.
fn first_problem(node: &Node<'_, StrDoc<Lang>>) -> Option<String> {
    if !node.get_inner_node().has_error() {
        return None;
    }
    let problem = node
        .dfs()
        .find(|descendant| descendant.is_error() || descendant.is_missing());
    Some(match problem {
        Some(missing) if missing.is_missing() => format!("a `{}` is missing", missing.kind()),
        Some(error) => {
            // Quoted as written: meta-variables with their `$`, not the parser's expando.
            let text = error.text().replace(node.lang().expando_char(), "$");
            let quoted: String = text.chars().take(REASON_QUOTE_CHARS).collect();
            let more = if quoted.len() < text.len() { "…" } else { "" };
            format!("syntax error at `{quoted}{more}`")
        }
        None => "syntax error".to_owned(),
    })
}

/// The Go pattern `source` read as a call in a function body, when the whole of it is one call
/// there.
fn go_call(source: &str, processed: &str) -> Option<Pattern> {
    let context = format!("{GO_BODY_START}{source}\n}}");
    let processed_context = format!("{GO_BODY_START}{processed}\n}}");
    let root = parse(&processed_context, Lang::Go).ok()?;
    let call = root
        .root()
        .dfs()
        .find(|node| node.kind() == "call_expression")?;
    let whole = GO_BODY_START.len()..GO_BODY_START.len() + processed.len();
    if call.range() != whole || call.get_inner_node().has_error() {
        return None;
    }
    Pattern::contextual(&context, "call_expression", Lang::Go).ok()
}
