//! Rules and instructions from the project's and the user's agent config directories, as
//! oh-my-pi discovers them (omp §7.7): its own `.omp/rules` and ours `.pi/rules`, `RULES.md`,
//! `.agents/rules`, Cursor's `.cursor/rules/*.mdc`, Windsurf's `.windsurf/rules`, Cline's
//! `.clinerules`, GitHub Copilot's `.github/instructions/**/*.instructions.md` (`applyTo`),
//! and the instruction files other tools keep (`.github/copilot-instructions.md`,
//! `.claude/CLAUDE.md`, `GEMINI.md`) as context files. Prompt commands of other tools
//! (`.claude/commands`, `.codex/prompts`) are template directories.
//!
//! On for sessions in projects whose settings turn oh-my-pi's tools on (`ompTools`); pi's
//! sessions see none of it. `disabledProviders` turns a source off by its id.
//!
//! Invariant: for one rule name the source of the highest priority wins (omp's: native 100,
//! agents 70, cursor and windsurf 50, cline 40, github 30); within one source the project's
//! file beats the user's.

use std::path::{Path, PathBuf};

use crate::Diagnostic;
use crate::context_files::ContextFile;
use crate::frontmatter;

/// A rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// Its name (the file's stem; `RULES` for `RULES.md`).
    pub name: String,
    /// What it is about (frontmatter `description`).
    pub description: Option<String>,
    /// The files it is about (Cursor's `globs`, Copilot's `applyTo`); empty: any.
    pub globs: Vec<String>,
    /// Always in the system prompt whole (Cursor's `alwaysApply`, Windsurf's `always_on`,
    /// `.clinerules`, `RULES.md`); otherwise listed in the rulebook and read with `rule://`.
    pub always: bool,
    /// Patterns that make it fire mid-stream (oh-my-pi's `condition`, TTSR).
    pub condition: Vec<String>,
    /// Where a condition looks (`text`, `thinking`, `tool`, `tool:NAME(GLOB)`).
    pub scope: Vec<String>,
    /// Whether a match interrupts the stream (`always`, `prose-only`, `tool-only`, `never`).
    pub interrupt_mode: Option<String>,
    /// When it may fire again (`once`, `after-gap`; oh-my-pi's `repeat`).
    pub repeat: Option<String>,
    /// Completed turns after which an `after-gap` rule may fire again (`repeatGap`).
    pub repeat_gap: Option<u64>,
    /// The text.
    pub body: String,
    /// The file.
    pub path: PathBuf,
    /// Which source it came from.
    pub provider: &'static str,
}

/// What a rule is to a session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleKind {
    /// In the system prompt whole.
    Always,
    /// Listed in the rulebook, read with `rule://NAME`.
    Rulebook,
    /// Fires on the stream when its condition matches.
    Stream,
}

impl Rule {
    /// What the rule is to a session.
    pub fn kind(&self) -> RuleKind {
        if !self.condition.is_empty() {
            RuleKind::Stream
        } else if self.always {
            RuleKind::Always
        } else {
            RuleKind::Rulebook
        }
    }
}

/// The sources by id, highest priority first.
pub const PROVIDERS: [&str; 9] = [
    "native", "claude", "agents", "codex", "gemini", "cursor", "windsurf", "cline", "github",
];

/// What discovery found for one working directory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Discovered {
    /// Rules, by name (one per name), in priority order.
    pub rules: Vec<Rule>,
    /// Other tools' instruction files, for the system prompt's context.
    pub context_files: Vec<ContextFile>,
    /// Other tools' prompt directories, for templates.
    pub template_dirs: Vec<PathBuf>,
}

/// Discovers what `cwd` (the project: `cwd` and its ancestors up to the repository root) and
/// `home` hold, leaving out the sources in `disabled`; `agent_dirs` are pi's and ours (their
/// `rules/` and `RULES.md` are the user's native rules).
pub fn discover(
    cwd: &Path,
    home: Option<&Path>,
    agent_dirs: &[PathBuf],
    disabled: &[String],
    diagnostics: &mut Vec<Diagnostic>,
) -> Discovered {
    let on = |provider: &str| !disabled.iter().any(|name| name == provider);
    let project: Vec<&Path> = {
        let mut dirs = Vec::new();
        for dir in cwd.ancestors() {
            dirs.push(dir);
            if dir.join(".git").exists() {
                break;
            }
        }
        dirs
    };
    let mut found = Vec::new();
    if on("native") {
        for dir in &project {
            for sub in [".pi", ".omp"] {
                rules_in(
                    &dir.join(sub).join("rules"),
                    "native",
                    &mut found,
                    diagnostics,
                );
                sticky(&dir.join(sub).join("RULES.md"), &mut found, diagnostics);
            }
        }
        for dir in agent_dirs.iter().rev() {
            rules_in(&dir.join("rules"), "native", &mut found, diagnostics);
            sticky(&dir.join("RULES.md"), &mut found, diagnostics);
        }
    }
    if on("agents") {
        for dir in &project {
            for sub in [".agents", ".agent"] {
                rules_in(
                    &dir.join(sub).join("rules"),
                    "agents",
                    &mut found,
                    diagnostics,
                );
            }
        }
    }
    if on("cursor") {
        for dir in &project {
            rules_in(
                &dir.join(".cursor").join("rules"),
                "cursor",
                &mut found,
                diagnostics,
            );
        }
    }
    if on("windsurf") {
        for dir in &project {
            rules_in(
                &dir.join(".windsurf").join("rules"),
                "windsurf",
                &mut found,
                diagnostics,
            );
        }
        if let Some(home) = home {
            let global = home.join(".codeium/windsurf/memories/global_rules.md");
            if let Some(mut rule) = rule_file(&global, "windsurf", diagnostics) {
                rule.always = true;
                found.push(rule);
            }
        }
    }
    if on("cline") {
        for dir in &project {
            let rules = dir.join(".clinerules");
            if rules.is_dir() {
                let before = found.len();
                rules_in(&rules, "cline", &mut found, diagnostics);
                for rule in &mut found[before..] {
                    rule.always = true;
                }
            } else if let Some(mut rule) = rule_file(&rules, "cline", diagnostics) {
                rule.name = "clinerules".to_owned();
                rule.always = true;
                found.push(rule);
            }
        }
    }
    if on("github") {
        for dir in &project {
            instructions_in(
                &dir.join(".github").join("instructions"),
                &mut found,
                diagnostics,
            );
        }
    }
    // One rule per name: the highest priority source, the nearest file within one.
    let priority = |provider: &str| PROVIDERS.iter().position(|known| *known == provider);
    let mut rules: Vec<Rule> = Vec::new();
    for rule in found {
        match rules.iter().position(|kept| kept.name == rule.name) {
            Some(at) if priority(rule.provider) < priority(rules[at].provider) => {
                rules[at] = rule;
            }
            Some(_) => {}
            None => rules.push(rule),
        }
    }
    rules.sort_by_key(|rule| priority(rule.provider));

    let mut context_files = Vec::new();
    let mut context = |path: PathBuf| {
        if let Ok(content) = std::fs::read_to_string(&path)
            && !content.trim().is_empty()
            && !context_files
                .iter()
                .any(|file: &ContextFile| file.path == path)
        {
            context_files.push(ContextFile { path, content });
        }
    };
    // Root first, as pi orders context files.
    for dir in project.iter().rev() {
        if on("claude") {
            context(dir.join(".claude").join("CLAUDE.md"));
        }
        if on("gemini") {
            context(dir.join("GEMINI.md"));
            context(dir.join(".gemini").join("GEMINI.md"));
        }
        if on("github") {
            context(dir.join(".github").join("copilot-instructions.md"));
        }
    }
    let mut template_dirs = Vec::new();
    if on("claude") {
        template_dirs.push(cwd.join(".claude").join("commands"));
        template_dirs.extend(home.map(|home| home.join(".claude").join("commands")));
    }
    if on("codex") {
        template_dirs.push(cwd.join(".codex").join("prompts"));
        template_dirs.extend(home.map(|home| home.join(".codex").join("prompts")));
    }
    template_dirs.retain(|dir| dir.is_dir());
    Discovered {
        rules,
        context_files,
        template_dirs,
    }
}

/// The `.md` and `.mdc` rules directly in `dir`, by name.
fn rules_in(
    dir: &Path,
    provider: &'static str,
    found: &mut Vec<Rule>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            path.is_file()
                && matches!(
                    path.extension().and_then(|ext| ext.to_str()),
                    Some("md" | "mdc")
                )
        })
        .collect();
    paths.sort();
    found.extend(
        paths
            .iter()
            .filter_map(|path| rule_file(path, provider, diagnostics)),
    );
}

/// `RULES.md`: a rule always in the prompt.
fn sticky(path: &Path, found: &mut Vec<Rule>, diagnostics: &mut Vec<Diagnostic>) {
    if let Some(mut rule) = rule_file(path, "native", diagnostics) {
        rule.name = "RULES".to_owned();
        rule.always = true;
        found.push(rule);
    }
}

/// Copilot's `*.instructions.md` files under `dir`, at any depth.
fn instructions_in(dir: &Path, found: &mut Vec<Rule>, diagnostics: &mut Vec<Diagnostic>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            instructions_in(&path, found, diagnostics);
        } else if let Some(name) = path
            .file_name()
            .and_then(|name| name.to_str())
            .and_then(|name| name.strip_suffix(".instructions.md"))
            && let Some(mut rule) = rule_file(&path, "github", diagnostics)
        {
            rule.name = name.to_owned();
            found.push(rule);
        }
    }
}

/// The rule in the file at `path` (oh-my-pi's format), for testing one; `None` when it cannot
/// be read, is empty or has a broken frontmatter (then with a diagnostic).
pub fn rule_at(path: &Path, diagnostics: &mut Vec<Diagnostic>) -> Option<Rule> {
    rule_file(path, "native", diagnostics)
}

/// One rule file, or nothing (missing, empty, or a diagnostic for a broken frontmatter).
fn rule_file(
    path: &Path,
    provider: &'static str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Rule> {
    let text = std::fs::read_to_string(path).ok()?;
    let parsed = match frontmatter::parse(&text) {
        Ok(parsed) => parsed,
        Err(error) => {
            diagnostics.push(Diagnostic::warning(
                path,
                format!("{error}; the rule is skipped"),
            ));
            return None;
        }
    };
    let opened = text.trim_start();
    if parsed.fields.is_empty() && opened.starts_with("---") && !opened[3..].contains("\n---") {
        diagnostics.push(Diagnostic::warning(
            path,
            "its frontmatter opened with `---` is not closed by a `---` line; the whole file \
             is read as the rule's text, without conditions or globs",
        ));
    }
    if parsed.body.trim().is_empty() {
        return None;
    }
    let field = |key: &str| parsed.fields.get(key);
    let list = |key: &str| -> Vec<String> {
        match field(key) {
            Some(frontmatter::Value::List(items)) => items.clone(),
            Some(value) => value
                .as_text()
                .map(|text| {
                    text.split(',')
                        .map(str::trim)
                        .filter(|item| !item.is_empty())
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default(),
            None => Vec::new(),
        }
    };
    let mut globs = list("globs");
    globs.extend(list("applyTo"));
    let trigger = field("trigger").and_then(frontmatter::Value::as_text);
    let mut condition = list("condition");
    condition.extend(list("ttsr_trigger"));
    Some(Rule {
        name: path
            .file_stem()
            .and_then(|stem| stem.to_str())
            .unwrap_or_default()
            .to_owned(),
        description: field("description")
            .and_then(frontmatter::Value::as_text)
            .map(str::to_owned),
        always: field("alwaysApply").and_then(frontmatter::Value::as_bool) == Some(true)
            || trigger == Some("always_on")
            || (globs.is_empty() && list("applyTo").is_empty() && provider == "github"),
        globs,
        condition,
        scope: list("scope"),
        interrupt_mode: field("interruptMode")
            .and_then(frontmatter::Value::as_text)
            .map(str::to_owned),
        repeat: field("repeat")
            .and_then(frontmatter::Value::as_text)
            .map(str::to_owned),
        repeat_gap: field("repeatGap")
            .and_then(frontmatter::Value::as_text)
            .and_then(|gap| gap.trim().parse().ok()),
        body: parsed.body,
        path: path.to_path_buf(),
        provider,
    })
}

/// The system prompt's section for `rules`: those always applied in full, then the
/// rulebook's list. Empty without rules of either kind.
pub fn format_for_prompt(rules: &[Rule]) -> String {
    let always: Vec<&Rule> = rules
        .iter()
        .filter(|rule| rule.kind() == RuleKind::Always)
        .collect();
    let book: Vec<&Rule> = rules
        .iter()
        .filter(|rule| rule.kind() == RuleKind::Rulebook)
        .collect();
    let mut text = String::new();
    if !always.is_empty() {
        text.push_str("\n\n# Rules\n\nFollow these rules:\n");
        for rule in always {
            text.push_str(&format!("\n## {}\n\n{}\n", rule.name, rule.body.trim()));
        }
    }
    if !book.is_empty() {
        text.push_str(
            "\n\n# Rulebook\n\nRules that apply in some situations. Read a rule with the read \
             tool (path `rule://NAME`) before work it is about:\n",
        );
        for rule in book {
            let mut line = format!("- {}", rule.name);
            if let Some(description) = &rule.description {
                line.push_str(&format!(": {description}"));
            }
            if !rule.globs.is_empty() {
                line.push_str(&format!(" (files: {})", rule.globs.join(", ")));
            }
            text.push_str(&line);
            text.push('\n');
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, path: &str, text: &str) {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn an_unclosed_frontmatter_is_named() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "open.md", "---\ncondition: \"x\"\nDo not.\n");
        write(dir.path(), "empty.md", "---\n---\nFine.\n");
        let mut diagnostics = Vec::new();
        let open = rule_at(&dir.path().join("open.md"), &mut diagnostics).unwrap();
        assert!(open.condition.is_empty());
        assert!(rule_at(&dir.path().join("empty.md"), &mut diagnostics).is_some());
        let messages: Vec<&str> = diagnostics.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "its frontmatter opened with `---` is not closed by a `---` line; the whole file is read as the rule's text, without conditions or globs"
            ]
        );
    }

    #[test]
    fn other_tools_rules_are_found_with_omps_precedence() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join(".git")).unwrap();
        write(
            root,
            ".cursor/rules/react.mdc",
            "---\ndescription: React conventions\nglobs: src/**/*.tsx, src/**/*.jsx\nalwaysApply: false\n---\nUse function components.\n",
        );
        write(
            root,
            ".cursor/rules/style.mdc",
            "---\nalwaysApply: true\n---\nTwo spaces.\n",
        );
        write(root, ".pi/rules/style.md", "Four spaces (ours wins).\n");
        write(
            root,
            ".github/instructions/py/python.instructions.md",
            "---\napplyTo: \"**/*.py\"\n---\nType hints everywhere.\n",
        );
        write(root, ".github/copilot-instructions.md", "Be brief.\n");
        write(root, ".clinerules", "No emojis.\n");
        write(root, ".omp/RULES.md", "Never push to main.\n");
        write(
            root,
            ".windsurf/rules/empty.md",
            "---\ndescription: x\n---\n",
        );
        write(
            root,
            ".cursor/rules/broken.mdc",
            "---\nglobs: [unclosed\n---\nx\n",
        );
        let mut diagnostics = Vec::new();
        let found = discover(root, None, &[], &[], &mut diagnostics);
        let names: Vec<(&str, &str, RuleKind)> = found
            .rules
            .iter()
            .map(|rule| (rule.name.as_str(), rule.provider, rule.kind()))
            .collect();
        assert_eq!(
            names,
            [
                ("style", "native", RuleKind::Rulebook),
                ("RULES", "native", RuleKind::Always),
                ("react", "cursor", RuleKind::Rulebook),
                ("clinerules", "cline", RuleKind::Always),
                ("python", "github", RuleKind::Rulebook),
            ]
        );
        let react = &found.rules[2];
        assert_eq!(react.globs, ["src/**/*.tsx", "src/**/*.jsx"]);
        assert_eq!(react.description.as_deref(), Some("React conventions"));
        assert_eq!(found.rules[4].globs, ["**/*.py"]);
        assert_eq!(found.context_files.len(), 1);
        assert!(
            found.context_files[0]
                .path
                .ends_with(".github/copilot-instructions.md")
        );
        assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
        assert!(diagnostics[0].message.contains("the rule is skipped"));

        let prompt = format_for_prompt(&found.rules);
        assert!(
            prompt.contains("# Rules\n\nFollow these rules:\n\n## RULES\n\nNever push to main.\n")
        );
        assert!(prompt.contains("- react: React conventions (files: src/**/*.tsx, src/**/*.jsx)"));
        assert!(prompt.contains("- python (files: **/*.py)"));

        let without = discover(
            root,
            None,
            &[],
            &["cursor".to_owned(), "github".to_owned()],
            &mut Vec::new(),
        );
        assert!(without.rules.iter().all(|rule| rule.provider != "cursor"));
        assert!(without.context_files.is_empty());
    }
}
