//! Prompt templates (pi §7.5): discovery, descriptions, and `/name args` expansion.
//!
//! Sources, in precedence order (the first template of a name wins; later ones are
//! collisions): settings `prompts` entries (project, then global) → the project's
//! `.pi/prompts/` → ours `<config_dir>/prompts/`, then pi's `<pi_agent_dir>/prompts/` →
//! explicit paths. Directories are read non-recursively (`*.md`, in name order).
//!
//! Expansion substitutes in one pass over the template, so text that an argument brings in is
//! never substituted again: `$1`…`$n` (missing → empty), `${@:N}` and `${@:N:L}` (1-based, `0`
//! counts as 1), `$ARGUMENTS` and `$@` (all arguments joined by single spaces).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::settings::PathEntry;
use crate::{Diagnostic, DiagnosticKind, frontmatter};

/// A loaded template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptTemplate {
    /// The file name without `.md`; invoked as `/name`.
    pub name: String,
    /// Frontmatter `description`, else the first non-empty line (cut at 60 characters), then
    /// the source in parentheses, as pi shows it.
    pub description: String,
    /// The body, frontmatter removed.
    pub content: String,
    /// The template's file.
    pub file_path: PathBuf,
}

/// Where a template comes from; shown after its description.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TemplateSource {
    /// A global prompts directory.
    User,
    /// The project's `.pi/prompts/`.
    Project,
    /// A settings entry or an explicit path.
    Path,
}

/// Where to look for templates.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TemplateSources {
    /// Settings entries (project first); `exclude` entries hide templates under them.
    pub entries: Vec<PathEntry>,
    /// The project's prompts directory.
    pub project_dir: Option<PathBuf>,
    /// Global prompts directories, highest precedence first.
    pub user_dirs: Vec<PathBuf>,
    /// Explicit files or directories, added last.
    pub explicit: Vec<PathBuf>,
}

/// Loads the templates of `sources`.
pub fn load_templates(
    sources: &TemplateSources,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<PromptTemplate> {
    let mut found = Vec::new();
    // Settings entries and explicit paths must exist; default directories may be missing.
    let mut load = |path: &Path, source: TemplateSource| {
        if path.is_dir() {
            let mut files: Vec<PathBuf> = match std::fs::read_dir(path) {
                Ok(entries) => entries.filter_map(|e| e.ok().map(|e| e.path())).collect(),
                Err(error) => {
                    diagnostics.push(Diagnostic::warning(
                        path,
                        format!("cannot be read ({error}); its templates are skipped"),
                    ));
                    return;
                }
            };
            files.sort();
            for file in files {
                if file.is_file() && file.extension().is_some_and(|ext| ext == "md") {
                    found.extend(load_template_file(&file, source, diagnostics));
                }
            }
        } else if path.is_file() && path.extension().is_some_and(|ext| ext == "md") {
            found.extend(load_template_file(path, source, diagnostics));
        } else if source == TemplateSource::Path {
            diagnostics.push(Diagnostic::warning(
                path,
                "is not a markdown file or a directory; it is ignored",
            ));
        }
    };
    for entry in sources.entries.iter().filter(|entry| !entry.exclude) {
        load(&entry.path, TemplateSource::Path);
    }
    if let Some(dir) = &sources.project_dir {
        load(dir, TemplateSource::Project);
    }
    for dir in &sources.user_dirs {
        load(dir, TemplateSource::User);
    }
    for path in &sources.explicit {
        load(path, TemplateSource::Path);
    }
    let mut winners: HashMap<String, PathBuf> = HashMap::new();
    let mut templates = Vec::new();
    for template in found {
        let excluded = sources
            .entries
            .iter()
            .any(|entry| entry.exclude && template.file_path.starts_with(&entry.path));
        if excluded {
            continue;
        }
        if let Some(winner) = winners.get(&template.name) {
            if winner != &template.file_path {
                diagnostics.push(Diagnostic {
                    kind: DiagnosticKind::Collision,
                    path: template.file_path.clone(),
                    key: None,
                    message: format!(
                        "prompt template name \"{}\" is already taken by {}; this one is ignored",
                        template.name,
                        winner.display()
                    ),
                });
            }
            continue;
        }
        winners.insert(template.name.clone(), template.file_path.clone());
        templates.push(template);
    }
    templates
}

/// Reads one template file.
pub fn load_template_file(
    path: &Path,
    source: TemplateSource,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<PromptTemplate> {
    let text = crate::context_files::read_text(path, diagnostics)?;
    let parsed = match frontmatter::parse(&text) {
        Ok(parsed) => parsed,
        Err(error) => {
            diagnostics.push(Diagnostic::warning(
                path,
                format!("{error}; the template is skipped"),
            ));
            return None;
        }
    };
    let name = path.file_stem()?.to_string_lossy().into_owned();
    let mut description = parsed
        .fields
        .get("description")
        .and_then(|value| value.as_text())
        .map(str::trim)
        .filter(|text| !text.is_empty())
        .map(str::to_owned)
        .unwrap_or_else(|| {
            let first = parsed.body.lines().find(|line| !line.trim().is_empty());
            match first {
                Some(line) if line.chars().count() > 60 => {
                    format!("{}...", line.chars().take(60).collect::<String>())
                }
                Some(line) => line.to_owned(),
                None => String::new(),
            }
        });
    let suffix = match source {
        TemplateSource::User => "(user)".to_owned(),
        TemplateSource::Project => "(project)".to_owned(),
        TemplateSource::Path => format!(
            "(path:{})",
            path.file_name().unwrap_or_default().to_string_lossy()
        ),
    };
    if description.is_empty() {
        description = suffix;
    } else {
        description = format!("{description} {suffix}");
    }
    Some(PromptTemplate {
        name,
        description,
        content: parsed.body,
        file_path: path.to_path_buf(),
    })
}

/// Expands `/name args` when `name` is a template; `None` otherwise (the text is sent as is).
pub fn expand(text: &str, templates: &[PromptTemplate]) -> Option<String> {
    let command = text.strip_prefix('/')?;
    let (name, args) = match command.split_once(' ') {
        Some((name, args)) => (name, args),
        None => (command, ""),
    };
    let template = templates.iter().find(|template| template.name == name)?;
    Some(substitute(&template.content, &parse_args(args)))
}

/// Splits arguments like a shell without escapes: spaces and tabs separate, `'…'` and `"…"`
/// group (the quotes are removed).
pub fn parse_args(text: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut current = String::new();
    let mut in_arg = false;
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match quote {
            Some(open) if c == open => quote = None,
            Some(_) => current.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                in_arg = true;
            }
            None if c == ' ' || c == '\t' => {
                if in_arg {
                    args.push(std::mem::take(&mut current));
                    in_arg = false;
                }
            }
            None => {
                current.push(c);
                in_arg = true;
            }
        }
    }
    if in_arg {
        args.push(current);
    }
    args
}

/// Substitutes the argument placeholders of `content` in one pass.
pub fn substitute(content: &str, args: &[String]) -> String {
    let all = args.join(" ");
    let mut out = String::with_capacity(content.len());
    let mut rest = content;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 {
            let index: usize = after[..digits].parse().unwrap_or(0);
            if let Some(arg) = index.checked_sub(1).and_then(|i| args.get(i)) {
                out.push_str(arg);
            }
            rest = &after[digits..];
        } else if let Some((replacement, used)) = slice_placeholder(after, args) {
            out.push_str(&replacement);
            rest = &after[used..];
        } else if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(&all);
            rest = tail;
        } else if let Some(tail) = after.strip_prefix('@') {
            out.push_str(&all);
            rest = tail;
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// `{@:N}` or `{@:N:L}` at the start of `after`: the replacement and the bytes it used.
fn slice_placeholder(after: &str, args: &[String]) -> Option<(String, usize)> {
    let inner = after.strip_prefix("{@:")?;
    let close = inner.find('}')?;
    let mut parts = inner[..close].split(':');
    let start: usize = parts.next()?.parse().ok()?;
    let length: Option<usize> = match parts.next() {
        Some(text) => Some(text.parse().ok()?),
        None => None,
    };
    if parts.next().is_some() {
        return None;
    }
    let from = start.max(1) - 1;
    let selected: Vec<&str> = args
        .iter()
        .skip(from)
        .take(length.unwrap_or(usize::MAX))
        .map(String::as_str)
        .collect();
    Some((selected.join(" "), "{@:".len() + close + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(template: &str, input: &str, expect: &str) {
        let templates = [PromptTemplate {
            name: "t".to_owned(),
            description: String::new(),
            content: template.to_owned(),
            file_path: PathBuf::from("/p/t.md"),
        }];
        let actual = expand(input, &templates).unwrap_or_else(|| format!("unchanged: {input}"));
        assert_eq!(actual, expect, "template {template:?} with {input:?}");
    }

    #[test]
    fn argument_expansion() {
        let cases: &[(&str, &str, &str)] = &[
            ("Review $1 then $2", "/t a.rs b.rs", "Review a.rs then b.rs"),
            ("Missing: [$3]", "/t a", "Missing: []"),
            ("All: $@ | $ARGUMENTS", "/t a b  c", "All: a b c | a b c"),
            (
                "Quoted: $1/$2",
                "/t \"two words\" 'x y'",
                "Quoted: two words/x y",
            ),
            ("Rest: ${@:2}", "/t a b c", "Rest: b c"),
            ("Window: ${@:2:1}", "/t a b c", "Window: b"),
            ("Zero: ${@:0}", "/t a b", "Zero: a b"),
            ("Past end: [${@:5}]", "/t a", "Past end: []"),
            ("No recursion: $1 $2", "/t $2 x", "No recursion: $2 x"),
            (
                "No recursion: $@",
                "/t $1 $ARGUMENTS",
                "No recursion: $1 $ARGUMENTS",
            ),
            (
                "Price: $ 5 and $x and ${@:a}",
                "/t",
                "Price: $ 5 and $x and ${@:a}",
            ),
            ("$10th", "/t 1 2 3 4 5 6 7 8 9 ten", "tenth"),
            ("Empty quotes: [$1] [$2]", "/t '' b", "Empty quotes: [] [b]"),
            ("no args", "/t", "no args"),
            ("x", "/other a", "unchanged: /other a"),
            ("x", "/t\ta", "unchanged: /t\ta"),
            ("x", "t a", "unchanged: t a"),
        ];
        for (template, input, expect) in cases {
            check(template, input, expect);
        }
    }
}
