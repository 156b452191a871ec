//! Skills (the Agent Skills standard, read as leniently as pi, §7.4): discovery, `SKILL.md`
//! validation, the `<available_skills>` block of the system prompt and `/skill:name args`
//! expansion.
//!
//! Sources, in precedence order (the first skill of a name wins; later ones are collisions):
//! settings `skills` entries (project, then global) → the project's `.pi/skills/`, then
//! `.agents/skills/` of the working directory and its ancestors up to the git root → ours
//! `<config_dir>/skills/`, pi's `<pi_agent_dir>/skills/`, `~/.agents/skills/` → explicit paths.
//! A file reached twice (same real path) counts once.
//!
//! Directory scan: a directory holding `SKILL.md` is one skill (nothing below it is scanned);
//! otherwise the scanned root's direct `*.md` files are skills and subdirectories are searched
//! for `SKILL.md`, skipping dot entries and `node_modules`. Entries are visited in name order.
//!
//! Invariant: a bad skill is a diagnostic, never an error. Only a missing description (or
//! unreadable frontmatter) drops it; name problems and long descriptions are warnings.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::settings::PathEntry;
use crate::{Diagnostic, DiagnosticKind, frontmatter};

/// Longest valid name.
pub const MAX_NAME_LENGTH: usize = 64;
/// Longest valid description.
pub const MAX_DESCRIPTION_LENGTH: usize = 1024;

/// A loaded skill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skill {
    /// Frontmatter `name`, else the parent directory's name.
    pub name: String,
    /// Frontmatter `description`.
    pub description: String,
    /// The skill's markdown file.
    pub file_path: PathBuf,
    /// The directory its relative references resolve against.
    pub base_dir: PathBuf,
    /// `disable-model-invocation: true`: left out of the system prompt; `/skill:name` still
    /// works.
    pub disable_model_invocation: bool,
}

/// Where to look for skills, in precedence order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SkillSources {
    /// Settings entries (project first); `exclude` entries hide skills under them.
    pub entries: Vec<PathEntry>,
    /// Scanned directories, highest precedence first (project, then global).
    pub dirs: Vec<PathBuf>,
    /// Explicit files or directories, added last.
    pub explicit: Vec<PathBuf>,
}

/// Which level of a scan a directory is: root-level `*.md` files are skills, deeper ones not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ScanLevel {
    Root,
    Nested,
}

/// What `/skill:name args` became.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SkillExpansion {
    /// The text does not start with `/skill:`.
    NotACommand,
    /// No skill has that name; the text is sent unchanged.
    Unknown,
    /// The message to send instead.
    Expanded(String),
    /// The skill's file could not be read; the text is sent unchanged.
    ReadFailed(Diagnostic),
}

/// The project's skill directories for `cwd`: `.pi/skills`, then `.agents/skills` in `cwd` and
/// each ancestor up to the first one holding `.git` (or the root).
pub fn project_skill_dirs(cwd: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![cwd.join(".pi").join("skills")];
    for dir in cwd.ancestors() {
        dirs.push(dir.join(".agents").join("skills"));
        if dir.join(".git").exists() {
            break;
        }
    }
    dirs
}

/// Loads skills from `sources`. A file reached twice is reported once.
pub fn load_skills(sources: &SkillSources, all_diagnostics: &mut Vec<Diagnostic>) -> Vec<Skill> {
    let mut diagnostics = Vec::new();
    let skills = load_skills_reporting(sources, &mut diagnostics);
    for diagnostic in diagnostics {
        if !all_diagnostics.contains(&diagnostic) {
            all_diagnostics.push(diagnostic);
        }
    }
    skills
}

fn load_skills_reporting(sources: &SkillSources, diagnostics: &mut Vec<Diagnostic>) -> Vec<Skill> {
    let excluded: Vec<&Path> = sources
        .entries
        .iter()
        .filter(|entry| entry.exclude)
        .map(|entry| entry.path.as_path())
        .collect();
    let mut found = Vec::new();
    for entry in sources.entries.iter().filter(|entry| !entry.exclude) {
        load_path(&entry.path, &mut found, diagnostics);
    }
    for dir in &sources.dirs {
        if dir.is_dir() {
            scan(dir, ScanLevel::Root, &mut found, diagnostics);
        }
    }
    for path in &sources.explicit {
        load_path(path, &mut found, diagnostics);
    }
    let mut seen_files = HashSet::new();
    let mut by_name: HashMap<String, PathBuf> = HashMap::new();
    let mut skills = Vec::new();
    let mut collisions = Vec::new();
    for skill in found {
        if excluded
            .iter()
            .any(|path| skill.file_path.starts_with(path))
        {
            continue;
        }
        let real =
            std::fs::canonicalize(&skill.file_path).unwrap_or_else(|_| skill.file_path.clone());
        if !seen_files.insert(real) {
            continue;
        }
        if let Some(winner) = by_name.get(&skill.name) {
            collisions.push(Diagnostic {
                kind: DiagnosticKind::Collision,
                path: skill.file_path.clone(),
                key: None,
                message: format!(
                    "skill name \"{}\" is already taken by {}; this one is ignored",
                    skill.name,
                    winner.display()
                ),
            });
            continue;
        }
        by_name.insert(skill.name.clone(), skill.file_path.clone());
        skills.push(skill);
    }
    diagnostics.extend(collisions);
    skills
}

fn load_path(path: &Path, found: &mut Vec<Skill>, diagnostics: &mut Vec<Diagnostic>) {
    if path.is_dir() {
        scan(path, ScanLevel::Root, found, diagnostics);
    } else if path.is_file() && path.extension().is_some_and(|ext| ext == "md") {
        found.extend(load_skill_file(path, diagnostics));
    } else if path.exists() {
        diagnostics.push(Diagnostic::warning(
            path,
            "is not a markdown file or a directory; it is ignored",
        ));
    } else {
        diagnostics.push(Diagnostic::warning(path, "does not exist; it is ignored"));
    }
}

fn scan(dir: &Path, level: ScanLevel, found: &mut Vec<Skill>, diagnostics: &mut Vec<Diagnostic>) {
    let skill_file = dir.join("SKILL.md");
    if skill_file.is_file() {
        found.extend(load_skill_file(&skill_file, diagnostics));
        return;
    }
    let mut entries: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .collect(),
        Err(error) => {
            diagnostics.push(Diagnostic::warning(
                dir,
                format!("cannot be read ({error}); its skills are skipped"),
            ));
            return;
        }
    };
    entries.sort();
    for path in entries {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name.starts_with('.') || name == "node_modules" {
            continue;
        }
        // `is_dir` / `is_file` follow symlinks; broken ones are neither and are skipped.
        if path.is_dir() {
            scan(&path, ScanLevel::Nested, found, diagnostics);
        } else if level == ScanLevel::Root && path.is_file() && name.ends_with(".md") {
            found.extend(load_skill_file(&path, diagnostics));
        }
    }
}

/// Reads and validates one skill file.
pub fn load_skill_file(path: &Path, diagnostics: &mut Vec<Diagnostic>) -> Option<Skill> {
    let content = crate::context_files::read_text(path, diagnostics)?;
    let parsed = match frontmatter::parse(&content) {
        Ok(parsed) => parsed,
        Err(error) => {
            diagnostics.push(Diagnostic::warning(
                path,
                format!("{error}; the skill is skipped"),
            ));
            return None;
        }
    };
    let base_dir = path.parent().unwrap_or(path).to_path_buf();
    let parent_name = base_dir
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let field = |key: &str| parsed.fields.get(key);
    let mut warn = |key: &str, message: String| {
        diagnostics.push(Diagnostic::key_warning(path, key, message));
    };
    let name = match field("name").map(|value| value.as_text()) {
        Some(Some(name)) if !name.trim().is_empty() => name.trim().to_owned(),
        Some(_) | None => parent_name.clone(),
    };
    if name != parent_name {
        warn(
            "name",
            format!("name \"{name}\" does not match its directory \"{parent_name}\""),
        );
    }
    let length = name.chars().count();
    if length > MAX_NAME_LENGTH {
        warn(
            "name",
            format!("name is {length} characters, over the limit of {MAX_NAME_LENGTH}"),
        );
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        warn(
            "name",
            format!("name \"{name}\" may only contain a-z, 0-9 and hyphens"),
        );
    }
    if name.starts_with('-') || name.ends_with('-') {
        warn(
            "name",
            format!("name \"{name}\" must not start or end with a hyphen"),
        );
    }
    if name.contains("--") {
        warn(
            "name",
            format!("name \"{name}\" must not contain consecutive hyphens"),
        );
    }
    let description = field("description")
        .and_then(|value| value.as_text())
        .map(str::trim)
        .filter(|text| !text.is_empty())
        .map(str::to_owned);
    let Some(description) = description else {
        warn(
            "description",
            "description is required; the skill is skipped".to_owned(),
        );
        return None;
    };
    let length = description.chars().count();
    if length > MAX_DESCRIPTION_LENGTH {
        warn(
            "description",
            format!(
                "description is {length} characters, over the limit of {MAX_DESCRIPTION_LENGTH}"
            ),
        );
    }
    let disable_model_invocation = match field("disable-model-invocation") {
        None | Some(frontmatter::Value::Null) => false,
        Some(value) => match value.as_bool() {
            Some(flag) => flag,
            None => {
                warn(
                    "disable-model-invocation",
                    "disable-model-invocation must be true or false; it is taken as false"
                        .to_owned(),
                );
                false
            }
        },
    };
    Some(Skill {
        name,
        description,
        file_path: path.to_path_buf(),
        base_dir,
        disable_model_invocation,
    })
}

/// The skills block of the system prompt: pi's instructions and `<available_skills>`, without
/// the skills that disable model invocation; empty when none is left.
pub fn format_for_prompt(skills: &[Skill]) -> String {
    let visible: Vec<&Skill> = skills
        .iter()
        .filter(|skill| !skill.disable_model_invocation)
        .collect();
    if visible.is_empty() {
        return String::new();
    }
    let mut lines = vec![
        "\n\nThe following skills provide specialized instructions for specific tasks.".to_owned(),
        "Use the read tool to load a skill's file when the task matches its description."
            .to_owned(),
        "When a skill file references a relative path, resolve it against the skill directory \
         (parent of SKILL.md / dirname of the path) and use that absolute path in tool commands."
            .to_owned(),
        String::new(),
        "<available_skills>".to_owned(),
    ];
    for skill in visible {
        lines.push("  <skill>".to_owned());
        lines.push(format!("    <name>{}</name>", escape_xml(&skill.name)));
        lines.push(format!(
            "    <description>{}</description>",
            escape_xml(&skill.description)
        ));
        lines.push(format!(
            "    <location>{}</location>",
            escape_xml(&skill.file_path.to_string_lossy())
        ));
        lines.push("  </skill>".to_owned());
    }
    lines.push("</available_skills>".to_owned());
    lines.join("\n")
}

/// Expands `/skill:name args` into the message pi sends: the skill's body (frontmatter
/// removed) in a `<skill>` element, then the arguments.
pub fn expand(text: &str, skills: &[Skill]) -> SkillExpansion {
    let Some(command) = text.strip_prefix("/skill:") else {
        return SkillExpansion::NotACommand;
    };
    let (name, args) = match command.split_once(' ') {
        Some((name, args)) => (name, args.trim()),
        None => (command, ""),
    };
    let Some(skill) = skills.iter().find(|skill| skill.name == name) else {
        return SkillExpansion::Unknown;
    };
    let content = match std::fs::read_to_string(&skill.file_path) {
        Ok(content) => content,
        Err(error) => {
            return SkillExpansion::ReadFailed(Diagnostic::warning(
                &skill.file_path,
                format!("cannot be read ({error}); `/skill:{name}` is sent unexpanded"),
            ));
        }
    };
    let body = frontmatter::strip(&content);
    let mut message = format!(
        "<skill name=\"{}\" location=\"{}\">\nReferences are relative to {}.\n\n{}\n</skill>",
        skill.name,
        skill.file_path.display(),
        skill.base_dir.display(),
        body.trim()
    );
    if !args.is_empty() {
        message.push_str("\n\n");
        message.push_str(args);
    }
    SkillExpansion::Expanded(message)
}

fn escape_xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}
