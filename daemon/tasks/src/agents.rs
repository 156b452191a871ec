//! Agent definitions for `task`: markdown files whose YAML frontmatter says what the child
//! is (`name`, `description`, `tools`, `model`, `thinking`, `output`, `blocking`) and whose
//! body is its system prompt; pi-subagents' profiles (`agent-profiles/*.md`: `provider`,
//! `model`, `thinkingLevel`, `tools`, `noTools`, `excludeTools`, `appendSystemPrompt`) read
//! into the same shape.
//!
//! Discovery, the first found by name wins: the project's `.pi/agents/` and
//! `.pi/agent-profiles/`, our config dir's `agents/` and `agent-profiles/`, pi's agent dir's,
//! then the bundled agents (`explore`, `plan`, `reviewer`, `task`). A file that cannot be read
//! as an agent is a diagnostic naming it; the others load.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use pi_coding::Diagnostic;
use pi_coding::frontmatter::{self, Value as Field};

/// One agent a task can run as.
#[derive(Clone, Debug, PartialEq)]
pub struct Agent {
    /// Its name.
    pub name: String,
    /// What it is for (shown in the `task` tool's description).
    pub description: String,
    /// The tools it gets (`None`: the session's default set).
    pub tools: Option<Vec<String>>,
    /// Tools taken out of the default set (profiles' `excludeTools`).
    pub exclude_tools: Vec<String>,
    /// Its model (`provider/id`, an id, `:level` allowed); `None`: the parent's.
    pub model: Option<String>,
    /// Its thinking level; `None`: the parent's.
    pub thinking: Option<String>,
    /// Its output's JSON Schema, unless the task gives one.
    pub output: Option<Value>,
    /// Its system prompt (the file's body); replaces the default prompt's body.
    pub system_prompt: Option<String>,
    /// Appended to the system prompt (bundled agents; profiles' `appendSystemPrompt`).
    pub append_system_prompt: Option<String>,
    /// No skills in its system prompt (profiles' `noSkills`).
    pub no_skills: bool,
    /// No context files in its system prompt (profiles' `noContextFiles`).
    pub no_context_files: bool,
    /// Where it came from (a file, or `bundled`).
    pub source: String,
}

/// The bundled agents: (name, description, tools, role appended to the default prompt).
const BUNDLED: &[(&str, &str, Option<&[&str]>, &str)] = &[
    (
        "explore",
        "Read-only exploration: finds files, reads code, answers questions about the codebase. \
         Changes nothing.",
        Some(&["read", "grep", "find", "ls", "submit_result"]),
        "You are an exploration subagent. Find what the task asks about by reading, \
         searching and listing; change nothing. Report concrete findings: paths, line numbers, \
         names, short excerpts.",
    ),
    (
        "plan",
        "Plans a change: reads the code and returns a step-by-step implementation plan. \
         Changes nothing.",
        Some(&["read", "grep", "find", "ls", "task", "submit_result"]),
        "You are a planning subagent. Read the relevant code (delegate exploration with `task` \
         when it helps) and return a concrete, ordered implementation plan naming files and \
         functions. Change nothing.",
    ),
    (
        "reviewer",
        "Reviews code or a change for bugs, risks and missing tests; reports findings with \
         locations. Changes nothing.",
        Some(&["read", "grep", "find", "ls", "bash", "submit_result"]),
        "You are a code-review subagent. Examine the code or change the task names; report \
         each finding with its file and line, why it matters, and a suggested fix. Run \
         read-only commands only; change nothing.",
    ),
    (
        "task",
        "General-purpose worker with every tool: implements, fixes, runs commands.",
        None,
        "You are a subagent working on one task for a parent agent. Do the task completely \
         with the tools you have, then report what you did and what you found.",
    ),
];

/// The bundled agents.
pub fn bundled() -> Vec<Agent> {
    BUNDLED
        .iter()
        .map(|(name, description, tools, role)| Agent {
            name: (*name).to_owned(),
            description: (*description).to_owned(),
            tools: tools.map(|tools| tools.iter().map(|&tool| tool.to_owned()).collect()),
            exclude_tools: Vec::new(),
            model: None,
            thinking: None,
            output: None,
            system_prompt: None,
            append_system_prompt: Some((*role).to_owned()),
            no_skills: false,
            no_context_files: false,
            source: "bundled".to_owned(),
        })
        .collect()
}

/// The directories searched, highest precedence first: the project's, ours, pi's.
pub fn search_dirs(
    cwd: &Path,
    config_dir: Option<&Path>,
    pi_agent_dir: Option<&Path>,
) -> Vec<PathBuf> {
    let mut dirs = vec![cwd.join(".pi")];
    dirs.extend(config_dir.map(Path::to_path_buf));
    dirs.extend(pi_agent_dir.map(Path::to_path_buf));
    dirs
}

/// The agents found under `dirs` (each dir's `agents/` and `agent-profiles/`) over the
/// bundled ones, by name, and the problems met.
pub fn discover(dirs: &[PathBuf]) -> (BTreeMap<String, Agent>, Vec<Diagnostic>) {
    let mut agents: BTreeMap<String, Agent> = BTreeMap::new();
    let mut diagnostics = Vec::new();
    for dir in dirs {
        for (sub, profile) in [("agents", false), ("agent-profiles", true)] {
            let Ok(entries) = std::fs::read_dir(dir.join(sub)) else {
                continue;
            };
            let mut files: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
                .collect();
            files.sort();
            for file in files {
                match read_agent(&file, profile) {
                    Ok(agent) => {
                        agents.entry(agent.name.clone()).or_insert(agent);
                    }
                    Err(message) => diagnostics.push(Diagnostic::warning(&file, message)),
                }
            }
        }
    }
    for agent in bundled() {
        agents.entry(agent.name.clone()).or_insert(agent);
    }
    (agents, diagnostics)
}

/// Reads one agent file (`profile`: pi-subagents' profile format).
pub fn read_agent(file: &Path, profile: bool) -> Result<Agent, String> {
    let text = std::fs::read_to_string(file).map_err(|error| format!("cannot read it: {error}"))?;
    let parsed = frontmatter::parse(&text).map_err(|error| error.to_string())?;
    let fields = &parsed.fields;
    let text_of = |key: &str| -> Option<String> {
        fields
            .get(key)
            .and_then(Field::as_text)
            .map(str::trim)
            .filter(|text| !text.is_empty())
            .map(str::to_owned)
    };
    let list_of = |key: &str| -> Option<Vec<String>> {
        match fields.get(key)? {
            Field::List(items) => Some(items.clone()),
            Field::Scalar { text, .. } => Some(
                text.split(',')
                    .map(str::trim)
                    .filter(|item| !item.is_empty())
                    .map(str::to_owned)
                    .collect(),
            ),
            Field::Null | Field::Map(_) => None,
        }
    };
    let stem = file
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = text_of("name").unwrap_or(stem);
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(format!(
            "`name` must be letters, digits, `-` and `_` (found \"{name}\")"
        ));
    }
    let body = parsed.body.trim();
    let mut agent = Agent {
        name,
        description: text_of("description").unwrap_or_default(),
        tools: list_of("tools"),
        exclude_tools: Vec::new(),
        model: text_of("model"),
        thinking: text_of("thinking")
            .or_else(|| text_of("thinking-level"))
            .or_else(|| text_of("thinkingLevel")),
        output: None,
        system_prompt: (!body.is_empty()).then(|| body.to_owned()),
        append_system_prompt: text_of("appendSystemPrompt"),
        no_skills: fields.get("noSkills").and_then(Field::as_bool) == Some(true),
        no_context_files: fields.get("noContextFiles").and_then(Field::as_bool) == Some(true),
        source: file.display().to_string(),
    };
    if profile {
        if let (Some(provider), Some(model)) = (text_of("provider"), agent.model.clone()) {
            agent.model = Some(format!("{provider}/{model}"));
        }
        if fields.get("noTools").and_then(Field::as_bool) == Some(true) {
            agent.tools = Some(Vec::new());
        }
        agent.exclude_tools = list_of("excludeTools").unwrap_or_default();
    } else if agent.description.is_empty() {
        return Err("`description` is required (the `task` tool shows it)".to_owned());
    }
    match fields.get("output") {
        None | Some(Field::Null) => {}
        Some(Field::Scalar { text, .. }) => {
            let schema: Value = serde_json::from_str(text).map_err(|error| {
                format!("`output` must be a JSON Schema written as JSON: {error}")
            })?;
            if !schema.is_object() {
                return Err("`output` must be a JSON Schema object".to_owned());
            }
            agent.output = Some(schema);
        }
        Some(_) => {
            return Err(
                "`output` must be a JSON Schema written as JSON on one line (quoted)".to_owned(),
            );
        }
    }
    if let Some(thinking) = &agent.thinking
        && thinking.parse::<pi_llm::ThinkingLevel>().is_err()
    {
        return Err(format!(
            "`thinking` must be off, minimal, low, medium, high or xhigh (found \"{thinking}\")"
        ));
    }
    Ok(agent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_and_profiles_are_read_and_bad_ones_are_diagnostics() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project/.pi");
        std::fs::create_dir_all(project.join("agents")).unwrap();
        std::fs::create_dir_all(project.join("agent-profiles")).unwrap();
        std::fs::write(
            project.join("agents/scout.md"),
            "---\nname: scout\ndescription: Finds things\ntools: read, grep\nmodel: \
             anthropic/claude-x\nthinking: low\noutput: '{\"type\": \"object\", \"required\": \
             [\"files\"]}'\n---\nYou scout.\n",
        )
        .unwrap();
        std::fs::write(
            project.join("agents/explore.md"),
            "---\ndescription: The project's explore\n---\nExplore this project.\n",
        )
        .unwrap();
        std::fs::write(
            project.join("agents/bad.md"),
            "---\nname: bad\ndescription: x\nthinking: lots\n---\n",
        )
        .unwrap();
        std::fs::write(
            project.join("agent-profiles/fast.md"),
            "---\nprovider: openai\nmodel: gpt-x\nthinkingLevel: minimal\nexcludeTools: [bash]\n\
             appendSystemPrompt: Be quick.\nnoSkills: true\nnoContextFiles: true\n---\nYou are fast.\n",
        )
        .unwrap();
        let (agents, diagnostics) = discover(std::slice::from_ref(&project));
        let scout = &agents["scout"];
        assert_eq!(
            scout.tools.as_deref(),
            Some(&["read".to_owned(), "grep".to_owned()][..])
        );
        assert_eq!(scout.model.as_deref(), Some("anthropic/claude-x"));
        assert_eq!(scout.output.as_ref().unwrap()["required"][0], "files");
        assert_eq!(scout.system_prompt.as_deref(), Some("You scout."));
        // The project's explore wins over the bundled one.
        assert_eq!(agents["explore"].description, "The project's explore");
        assert_eq!(agents["plan"].source, "bundled");
        let fast = &agents["fast"];
        assert_eq!(fast.model.as_deref(), Some("openai/gpt-x"));
        assert_eq!(fast.thinking.as_deref(), Some("minimal"));
        assert_eq!(fast.exclude_tools, ["bash"]);
        assert_eq!(fast.append_system_prompt.as_deref(), Some("Be quick."));
        assert!(fast.no_skills && fast.no_context_files);
        assert!(!scout.no_skills && !scout.no_context_files);
        assert!(!agents.contains_key("bad"));
        let shown: Vec<String> = diagnostics.iter().map(ToString::to_string).collect();
        assert_eq!(shown.len(), 1, "{shown:?}");
        assert!(
            shown[0].ends_with(
                "bad.md: `thinking` must be off, minimal, low, medium, high or xhigh (found \
                 \"lots\")"
            ),
            "{shown:?}"
        );
    }
}
