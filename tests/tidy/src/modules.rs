//! The import graph of one crate's top-level modules.
//!
//! The crate's files are found from its root by following `mod x;` declarations (with
//! `#[path]`, and inside inline modules), so a file that only a `#[cfg(test)]` module reaches
//! is not part of it. Each file belongs to the top-level module it is under; the crate root's
//! own code belongs to `ROOT`, which can use modules but is never used (a module naming an
//! item of the root through a root `use` re-export is counted as naming the module the item
//! comes from). An edge `a -> b` is a `crate::b` path, in a `use` tree (grouped or not) or
//! inline, or a `super::…::b` chain that climbs from `a` to the crate root. `$crate` paths in
//! macro bodies are not edges.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::TidyError;
use crate::lexer::{blank, drop_cfg_test, is_ident_byte, skip_whitespace};

/// The name the crate root's own code has in a graph.
pub const ROOT: &str = "ROOT";

/// The top-level modules of one crate and which of them name which.
#[derive(Debug, Default)]
pub struct ModuleGraph {
    /// The crate's top-level modules, and `ROOT`.
    pub modules: BTreeSet<String>,
    /// `(from, to)` → where `from` names `to`, in file order.
    pub edges: BTreeMap<(String, String), Vec<Site>>,
    /// Every file of the crate's non-test code.
    pub files: Vec<PathBuf>,
}

/// Where something is written.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Site {
    /// Relative to the directory given to [`module_graph`] when under it.
    pub file: PathBuf,
    /// 1-based.
    pub line: usize,
}

impl std::fmt::Display for Site {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

/// The graph of the crate whose root file is `root_file`. Sites are shown relative to
/// `display_root`.
pub fn module_graph(root_file: &Path, display_root: &Path) -> Result<ModuleGraph, TidyError> {
    let files = crate_files(root_file)?;
    let mut graph = ModuleGraph::default();
    graph.modules.insert(ROOT.to_string());
    let Some(root) = files.first() else {
        return Ok(graph);
    };
    for declaration in &root.declarations {
        if declaration.inline_parents.is_empty() {
            graph.modules.insert(declaration.name.clone());
        }
    }
    for extent in &root.inline_modules {
        if extent.depth == 0 {
            graph.modules.insert(extent.name.clone());
        }
    }
    let reexports = root_reexports(&root.text, &root.inline_modules, &graph.modules);

    for file in &files {
        let shown = file
            .path
            .strip_prefix(display_root)
            .unwrap_or(&file.path)
            .to_path_buf();
        graph.files.push(file.path.clone());
        let bytes = file.text.as_bytes();
        let mut add = |from: &str, heads: Vec<String>, at: usize| {
            for head in heads {
                let to = if graph.modules.contains(&head) && head != ROOT {
                    head
                } else if let Some(module) = reexports.get(&head) {
                    module.clone()
                } else {
                    continue;
                };
                if to == from {
                    continue;
                }
                let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
                graph
                    .edges
                    .entry((from.to_string(), to))
                    .or_default()
                    .push(Site {
                        file: shown.clone(),
                        line,
                    });
            }
        };
        for (at, word) in words(&file.text) {
            let from = match file.module_path.first() {
                Some(top) => top.clone(),
                None => file
                    .inline_modules
                    .iter()
                    .find(|extent| extent.depth == 0 && extent.contains(at))
                    .map_or_else(|| ROOT.to_string(), |extent| extent.name.clone()),
            };
            match word {
                "crate" => {
                    let before = previous_non_space(bytes, at);
                    if before == Some(b'$') || ends_with_path_separator(bytes, at) {
                        continue;
                    }
                    let Some(after) = path_separator_after(bytes, at + word.len()) else {
                        continue;
                    };
                    add(&from, tree_heads(&file.text[after..]), at);
                }
                "super" => {
                    if ends_with_path_separator(bytes, at) {
                        continue;
                    }
                    // Count the chain `super::super::…`.
                    let mut supers = 0;
                    let mut cursor = at;
                    let rest = loop {
                        let is_super = file.text[cursor..].starts_with("super")
                            && !bytes.get(cursor + 5).is_some_and(|&b| is_ident_byte(b));
                        if !is_super {
                            break Some(cursor);
                        }
                        match path_separator_after(bytes, cursor + "super".len()) {
                            Some(next) => {
                                supers += 1;
                                cursor = skip_whitespace(bytes, next);
                            }
                            None => break None,
                        }
                    };
                    let Some(rest) = rest else { continue };
                    let inline_depth = file
                        .inline_modules
                        .iter()
                        .filter(|extent| extent.contains(at))
                        .count();
                    if supers == file.module_path.len() + inline_depth {
                        add(&from, tree_heads(&file.text[rest..]), at);
                    }
                }
                _ => {}
            }
        }
    }
    for sites in graph.edges.values_mut() {
        sites.sort();
    }
    Ok(graph)
}

/// One file of a crate, blanked, with what it declares.
pub(crate) struct CrateFile {
    pub(crate) path: PathBuf,
    /// The file's module path from the crate root (empty for the root).
    pub(crate) module_path: Vec<String>,
    /// The text with comments, literals and `#[cfg(test)]` items blanked.
    pub(crate) text: String,
    declarations: Vec<Declaration>,
    inline_modules: Vec<InlineModule>,
}

/// `mod name;`
struct Declaration {
    name: String,
    /// The inline modules around it, outermost first.
    inline_parents: Vec<String>,
    /// A `#[path = "…"]` on it.
    path: Option<String>,
}

/// `mod name { … }`, the byte range of its body.
struct InlineModule {
    name: String,
    start: usize,
    end: usize,
    /// How many inline modules enclose this one.
    depth: usize,
}

impl InlineModule {
    fn contains(&self, at: usize) -> bool {
        self.start <= at && at < self.end
    }
}

/// The crate's files from its root, in the order they are reached (the root first).
pub(crate) fn crate_files(root_file: &Path) -> Result<Vec<CrateFile>, TidyError> {
    let mut files = Vec::new();
    let mut queue = vec![(root_file.to_path_buf(), Vec::new(), true)];
    while let Some((path, module_path, mod_rs)) = queue.pop() {
        let original = std::fs::read_to_string(&path).map_err(|source| TidyError::Read {
            path: path.clone(),
            source,
        })?;
        let text = drop_cfg_test(&blank(&original));
        let inline_modules = inline_modules(&text);
        let declarations = declarations(&text, &original, &inline_modules);
        let directory = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let children_directory = if mod_rs {
            directory.clone()
        } else {
            let stem = path.file_stem().unwrap_or_default();
            directory.join(stem)
        };
        for declaration in &declarations {
            let mut child_path = module_path.clone();
            child_path.extend(declaration.inline_parents.iter().cloned());
            child_path.push(declaration.name.clone());
            if let Some(attribute) = &declaration.path {
                queue.push((directory.join(attribute), child_path, true));
                continue;
            }
            let mut base = children_directory.clone();
            for parent in &declaration.inline_parents {
                base.push(parent);
            }
            let flat = base.join(format!("{}.rs", declaration.name));
            let nested = base.join(&declaration.name).join("mod.rs");
            if flat.is_file() {
                queue.push((flat, child_path, false));
            } else if nested.is_file() {
                queue.push((nested, child_path, true));
            } else {
                return Err(TidyError::Shape {
                    path: path.clone(),
                    message: format!(
                        "`mod {};` has neither {} nor {}",
                        declaration.name,
                        flat.display(),
                        nested.display()
                    ),
                });
            }
        }
        files.push(CrateFile {
            path,
            module_path,
            text,
            declarations,
            inline_modules,
        });
    }
    // The queue is a stack; the root was reached first.
    Ok(files)
}

/// Identifiers in `text`, with their offsets.
fn words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            if is_ident_byte(bytes[i]) && (i == 0 || !is_ident_byte(bytes[i - 1])) {
                let start = i;
                while i < bytes.len() && is_ident_byte(bytes[i]) {
                    i += 1;
                }
                // A raw identifier `r#x` is the word `x`; a number is not a word.
                if bytes[start].is_ascii_digit() {
                    continue;
                }
                return Some((start, &text[start..i]));
            }
            i += 1;
        }
        None
    })
}

fn previous_non_space(bytes: &[u8], at: usize) -> Option<u8> {
    bytes[..at]
        .iter()
        .rev()
        .find(|byte| !byte.is_ascii_whitespace())
        .copied()
}

/// Whether the word at `at` follows `::` (so it is not the start of a path).
fn ends_with_path_separator(bytes: &[u8], at: usize) -> bool {
    let before: Vec<u8> = bytes[..at]
        .iter()
        .rev()
        .filter(|byte| !byte.is_ascii_whitespace())
        .take(2)
        .copied()
        .collect();
    before == [b':', b':']
}

/// When `::` follows at `at` (after spaces), the offset just after it.
fn path_separator_after(bytes: &[u8], at: usize) -> Option<usize> {
    let at = skip_whitespace(bytes, at);
    bytes[at..].starts_with(b"::").then_some(at + 2)
}

/// The first segments of the paths a use tree (or an inline path) starts with:
/// `a::b` → `a`; `{a, b::{c, d}, self}` → `a`, `b`.
fn tree_heads(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let start = skip_whitespace(bytes, 0);
    if bytes.get(start) != Some(&b'{') {
        let end = bytes[start..]
            .iter()
            .position(|&b| !is_ident_byte(b))
            .map_or(bytes.len(), |offset| start + offset);
        return match &text[start..end] {
            "" | "self" => Vec::new(),
            head => vec![head.to_string()],
        };
    }
    let Some(end) = matching_brace(bytes, start) else {
        return Vec::new();
    };
    let mut leaves = Vec::new();
    let mut position = 0;
    parse_tree(
        &tokens(&text[start..end]),
        &mut position,
        Vec::new(),
        &mut leaves,
    );
    let mut heads: Vec<String> = leaves
        .into_iter()
        .filter_map(|(path, _)| path.into_iter().next())
        .filter(|head| head != "self" && head != "*")
        .collect();
    heads.sort();
    heads.dedup();
    heads
}

/// The offset just after the `}` that closes the `{` at `open`.
fn matching_brace(bytes: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (offset, &byte) in bytes[open..].iter().enumerate() {
        match byte {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + offset + 1);
                }
            }
            _ => {}
        }
    }
    None
}

#[derive(Debug, PartialEq)]
enum Token {
    Ident(String),
    PathSeparator,
    Open,
    Close,
    Comma,
    Star,
    Other,
}

/// The tokens of a use tree's text.
fn tokens(text: &str) -> Vec<Token> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let byte = bytes[i];
        if byte.is_ascii_whitespace() {
            i += 1;
        } else if is_ident_byte(byte) {
            let start = i;
            while i < bytes.len() && is_ident_byte(bytes[i]) {
                i += 1;
            }
            tokens.push(Token::Ident(text[start..i].to_string()));
        } else if bytes[i..].starts_with(b"::") {
            tokens.push(Token::PathSeparator);
            i += 2;
        } else {
            tokens.push(match byte {
                b'{' => Token::Open,
                b'}' => Token::Close,
                b',' => Token::Comma,
                b'*' => Token::Star,
                _ => Token::Other,
            });
            i += 1;
        }
    }
    tokens
}

/// Parses one use tree at `position` into `(path, bound name)` leaves.
fn parse_tree(
    tokens: &[Token],
    position: &mut usize,
    mut prefix: Vec<String>,
    leaves: &mut Vec<(Vec<String>, Option<String>)>,
) {
    loop {
        match tokens.get(*position) {
            Some(Token::Ident(name)) => {
                prefix.push(name.clone());
                *position += 1;
                if tokens.get(*position) == Some(&Token::PathSeparator) {
                    *position += 1;
                    continue;
                }
                let bound = match (tokens.get(*position), tokens.get(*position + 1)) {
                    (Some(Token::Ident(word)), Some(Token::Ident(alias))) if word == "as" => {
                        *position += 2;
                        Some(alias.clone())
                    }
                    _ => prefix.last().cloned(),
                };
                leaves.push((prefix, bound));
                return;
            }
            Some(Token::Star) => {
                *position += 1;
                prefix.push("*".into());
                leaves.push((prefix, None));
                return;
            }
            Some(Token::Open) => {
                *position += 1;
                loop {
                    match tokens.get(*position) {
                        Some(Token::Close) => {
                            *position += 1;
                            return;
                        }
                        Some(Token::Comma) => *position += 1,
                        None => return,
                        Some(_) => {
                            let before = *position;
                            parse_tree(tokens, position, prefix.clone(), leaves);
                            if *position == before {
                                *position += 1;
                            }
                        }
                    }
                }
            }
            _ => return,
        }
    }
}

/// `mod name {` extents of `text`.
fn inline_modules(text: &str) -> Vec<InlineModule> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    for (at, word) in words(text) {
        if word != "mod" {
            continue;
        }
        let name_start = skip_whitespace(bytes, at + 3);
        let name_end = bytes[name_start..]
            .iter()
            .position(|&b| !is_ident_byte(b))
            .map_or(bytes.len(), |offset| name_start + offset);
        let brace = skip_whitespace(bytes, name_end);
        if name_end == name_start || bytes.get(brace) != Some(&b'{') {
            continue;
        }
        let end = matching_brace(bytes, brace).unwrap_or(bytes.len());
        found.push(InlineModule {
            name: text[name_start..name_end].to_string(),
            start: brace,
            end,
            depth: 0,
        });
    }
    let ranges: Vec<(usize, usize)> = found.iter().map(|m| (m.start, m.end)).collect();
    for module in &mut found {
        module.depth = ranges
            .iter()
            .filter(|(start, end)| *start < module.start && module.end <= *end)
            .count();
    }
    found
}

/// `mod name;` declarations of `text` (blanked), with the `#[path]` read from `original`.
fn declarations(text: &str, original: &str, inline: &[InlineModule]) -> Vec<Declaration> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    for (at, word) in words(text) {
        if word != "mod" {
            continue;
        }
        let name_start = skip_whitespace(bytes, at + 3);
        let name_end = bytes[name_start..]
            .iter()
            .position(|&b| !is_ident_byte(b))
            .map_or(bytes.len(), |offset| name_start + offset);
        if name_end == name_start || bytes.get(skip_whitespace(bytes, name_end)) != Some(&b';') {
            continue;
        }
        let mut parents: Vec<&InlineModule> = inline.iter().filter(|m| m.contains(at)).collect();
        parents.sort_by_key(|m| m.depth);
        // The attributes before `mod`: back to the end of the previous item.
        let item_start = bytes[..at]
            .iter()
            .rposition(|&b| b == b';' || b == b'}' || b == b'{')
            .map_or(0, |position| position + 1);
        let path = text[item_start..at]
            .contains("path")
            .then(|| path_attribute(&original[item_start..at]))
            .flatten();
        found.push(Declaration {
            name: text[name_start..name_end].to_string(),
            inline_parents: parents.iter().map(|m| m.name.clone()).collect(),
            path,
        });
    }
    found
}

/// The value of `#[path = "…"]` in `attributes` (original text).
fn path_attribute(attributes: &str) -> Option<String> {
    let start = attributes.find("path")?;
    let rest = &attributes[start + 4..];
    let open = rest.find('"')?;
    let close = rest[open + 1..].find('"')?;
    Some(rest[open + 1..open + 1 + close].to_string())
}

/// Names the crate root brings in with `use` at its top level, mapped to the top-level module
/// they come from (`pub use session::SessionId;` → `SessionId` → `session`).
fn root_reexports(
    text: &str,
    inline: &[InlineModule],
    modules: &BTreeSet<String>,
) -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    for (at, word) in words(text) {
        if word != "use" || inline.iter().any(|m| m.contains(at)) {
            continue;
        }
        let statement_end = text[at..]
            .find(';')
            .map_or(text.len(), |offset| at + offset);
        let mut leaves = Vec::new();
        let tokens = tokens(&text[at + 3..statement_end]);
        let mut position = 0;
        parse_tree(&tokens, &mut position, Vec::new(), &mut leaves);
        for (path, bound) in leaves {
            let mut segments = path.iter().skip_while(|s| *s == "crate" || *s == "self");
            let (Some(head), Some(bound)) = (segments.next(), bound) else {
                continue;
            };
            if modules.contains(head) && head != &bound {
                found.insert(bound, head.clone());
            }
        }
    }
    found
}
