//! The system prompt, assembled as pi's `buildSystemPrompt` does (§4.10), as a pure function
//! of its inputs so it can be snapshot-tested.
//!
//! Default body: identity, `Available tools:` with one line per tool (pi's one-liners for the
//! built-ins, the first line of the description otherwise), the custom-tools note, and the
//! guidelines that depend on which tools are active. A custom prompt (`SYSTEM.md` or the
//! `systemPrompt` setting) replaces that body. Both are followed by the appended prompt, the
//! `# Project Context` section with each context file, the skills block (only when `read` is
//! active) and the date and working directory.
//!
//! Unlike pi, the default body has no pointers to pi's own documentation: the daemon does not
//! ship it, and a path to nothing would send the model looking.

use crate::context_files::ContextFile;
use crate::skills::{self, Skill};

/// A tool as the prompt lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolSummary {
    /// The name the model calls it by.
    pub name: String,
    /// Its description (only the first line is used, and only for non-built-ins).
    pub description: String,
}

/// Everything the system prompt is built from.
#[derive(Clone, Copy, Debug)]
pub struct SystemPromptInput<'a> {
    /// Active tools, in order.
    pub tools: &'a [ToolSummary],
    /// The session's working directory.
    pub cwd: &'a str,
    /// Today, `YYYY-MM-DD`.
    pub date: &'a str,
    /// Context files, in order.
    pub context_files: &'a [ContextFile],
    /// Loaded skills (those that disable model invocation are left out here).
    pub skills: &'a [Skill],
    /// Replaces the default body.
    pub custom_prompt: Option<&'a str>,
    /// Appended after the body.
    pub append_prompt: Option<&'a str>,
}

/// pi's one-line descriptions of its built-in tools.
const BUILTIN_ONE_LINERS: &[(&str, &str)] = &[
    ("read", "Read file contents"),
    ("bash", "Execute bash commands (ls, grep, find, etc.)"),
    (
        "edit",
        "Make surgical edits to files (find exact text and replace)",
    ),
    ("write", "Create or overwrite files"),
    (
        "grep",
        "Search file contents for patterns (respects .gitignore)",
    ),
    ("find", "Find files by glob pattern (respects .gitignore)"),
    ("ls", "List directory contents"),
];

/// The prompt's view of a session's tools.
pub fn tool_summaries(tools: &[std::sync::Arc<dyn pi_agent::Tool>]) -> Vec<ToolSummary> {
    tools
        .iter()
        .map(|tool| ToolSummary {
            name: tool.name().to_owned(),
            description: tool.description().to_owned(),
        })
        .collect()
}

/// Builds the system prompt.
pub fn build(input: &SystemPromptInput<'_>) -> String {
    let has = |name: &str| input.tools.iter().any(|tool| tool.name == name);
    let mut prompt = match input.custom_prompt {
        Some(custom) => custom.to_owned(),
        None => default_body(input.tools, &has),
    };
    if let Some(append) = input.append_prompt.filter(|text| !text.is_empty()) {
        prompt.push_str("\n\n");
        prompt.push_str(append);
    }
    if !input.context_files.is_empty() {
        prompt
            .push_str("\n\n# Project Context\n\nProject-specific instructions and guidelines:\n\n");
        for file in input.context_files {
            prompt.push_str(&format!(
                "## {}\n\n{}\n\n",
                file.path.display(),
                file.content
            ));
        }
    }
    if has("read") {
        prompt.push_str(&skills::format_for_prompt(input.skills));
    }
    prompt.push_str(&format!("\nCurrent date: {}", input.date));
    prompt.push_str(&format!(
        "\nCurrent working directory: {}",
        input.cwd.replace('\\', "/")
    ));
    prompt
}

fn default_body(tools: &[ToolSummary], has: &dyn Fn(&str) -> bool) -> String {
    let tool_lines: Vec<String> = tools
        .iter()
        .map(|tool| {
            let builtin = BUILTIN_ONE_LINERS
                .iter()
                .find(|(name, _)| *name == tool.name)
                .map(|(_, line)| *line);
            let line = builtin.unwrap_or_else(|| {
                tool.description
                    .lines()
                    .map(str::trim)
                    .find(|line| !line.is_empty())
                    .unwrap_or("Custom tool")
            });
            format!("- {}: {line}", tool.name)
        })
        .collect();
    let tools_list = if tool_lines.is_empty() {
        "(none)".to_owned()
    } else {
        tool_lines.join("\n")
    };

    let mut guidelines = Vec::new();
    let explorers = has("grep") || has("find") || has("ls");
    if has("bash") && !explorers {
        guidelines.push("Use bash for file operations like ls, rg, find");
    } else if has("bash") {
        guidelines.push(
            "Prefer grep/find/ls tools over bash for file exploration (faster, respects .gitignore)",
        );
    }
    if has("read") && has("edit") {
        guidelines.push(
            "Use read to examine files before editing. You must use this tool instead of cat or sed.",
        );
    }
    if has("edit") {
        guidelines.push("Use edit for precise changes (old text must match exactly)");
    }
    if has("write") {
        guidelines.push("Use write only for new files or complete rewrites");
    }
    if has("edit") || has("write") {
        guidelines.push(
            "When summarizing your actions, output plain text directly - do NOT use cat or bash \
             to display what you did",
        );
    }
    guidelines.push("Be concise in your responses");
    guidelines.push("Show file paths clearly when working with files");
    let guidelines: Vec<String> = guidelines.iter().map(|line| format!("- {line}")).collect();

    format!(
        "You are an expert coding assistant operating inside pi, a coding agent harness. You help \
         users by reading files, executing commands, editing code, and writing new files.\n\n\
         Available tools:\n{tools_list}\n\n\
         In addition to the tools above, you may have access to other custom tools depending on \
         the project.\n\n\
         Guidelines:\n{}",
        guidelines.join("\n")
    )
}
