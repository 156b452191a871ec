//! The system prompt, assembled as pi 0.73.1's `buildSystemPrompt` does (§4.10), as a pure
//! function of its inputs so it can be snapshot-tested.
//!
//! Default body: identity, `Available tools:` with one line per tool that has a prompt
//! snippet (pi's `promptSnippet`: every built-in has one; a tool without one is not listed),
//! the custom-tools note, and the guidelines: the exploration hint that depends on which tools
//! are active, each active tool's own guidelines (pi's `promptGuidelines`, in tool order,
//! each once), and the two pi always adds. A custom prompt (`SYSTEM.md` or the `systemPrompt`
//! setting) replaces that body. Both are followed by the appended prompt, the `# Project
//! Context` section with each context file, the skills block (only when `read` is active)
//! and the date and working directory.
//!
//! The default body points to pi's own documentation as pi's does, at pi's package the
//! extension host runs on, when it is installed (a path to nothing would send the model
//! looking).

use crate::context_files::ContextFile;
use crate::skills::{self, Skill};

/// A tool as the prompt lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolSummary {
    /// The name the model calls it by.
    pub name: String,
    /// Its line under `Available tools:`; `None`: not listed.
    pub snippet: Option<String>,
    /// What it adds to the guidelines.
    pub guidelines: Vec<String>,
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
    /// Rules (oh-my-pi's): those always applied in full, the rulebook listed.
    pub rules: &'a [crate::rules::Rule],
    /// Replaces the default body.
    pub custom_prompt: Option<&'a str>,
    /// Appended after the body.
    pub append_prompt: Option<&'a str>,
    /// pi's package (`README.md`, `docs/`, `examples/`) for the default body's pointers.
    pub pi_docs: Option<&'a std::path::Path>,
}

/// The prompt's view of a session's tools.
pub fn tool_summaries(tools: &[std::sync::Arc<dyn pi_agent::Tool>]) -> Vec<ToolSummary> {
    tools
        .iter()
        .map(|tool| ToolSummary {
            name: tool.name().to_owned(),
            snippet: tool.prompt_snippet().map(str::to_owned),
            guidelines: tool.prompt_guidelines().to_vec(),
        })
        .collect()
}

/// Builds the system prompt.
pub fn build(input: &SystemPromptInput<'_>) -> String {
    let has = |name: &str| input.tools.iter().any(|tool| tool.name == name);
    let mut prompt = match input.custom_prompt {
        Some(custom) => custom.to_owned(),
        None => default_body(input.tools, &has, input.pi_docs),
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
    prompt.push_str(&crate::rules::format_for_prompt(input.rules));
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

fn default_body(
    tools: &[ToolSummary],
    has: &dyn Fn(&str) -> bool,
    pi_docs: Option<&std::path::Path>,
) -> String {
    let tool_lines: Vec<String> = tools
        .iter()
        .filter_map(|tool| {
            let snippet = tool.snippet.as_deref()?;
            Some(format!("- {}: {snippet}", tool.name))
        })
        .collect();
    let tools_list = if tool_lines.is_empty() {
        "(none)".to_owned()
    } else {
        tool_lines.join("\n")
    };

    let mut guidelines: Vec<String> = Vec::new();
    let mut add = |guideline: &str| {
        let guideline = guideline.trim();
        if !guideline.is_empty() && !guidelines.iter().any(|known| known == guideline) {
            guidelines.push(guideline.to_owned());
        }
    };
    let explorers = has("grep") || has("find") || has("ls");
    if has("bash") && !explorers {
        add("Use bash for file operations like ls, rg, find");
    } else if has("bash") {
        add(
            "Prefer grep/find/ls tools over bash for file exploration (faster, respects .gitignore)",
        );
    }
    for tool in tools {
        for guideline in &tool.guidelines {
            add(guideline);
        }
    }
    add("Be concise in your responses");
    add("Show file paths clearly when working with files");
    let guidelines: Vec<String> = guidelines.iter().map(|line| format!("- {line}")).collect();

    let mut body = format!(
        "You are an expert coding assistant operating inside pi, a coding agent harness. You help \
         users by reading files, executing commands, editing code, and writing new files.\n\n\
         Available tools:\n{tools_list}\n\n\
         In addition to the tools above, you may have access to other custom tools depending on \
         the project.\n\n\
         Guidelines:\n{}",
        guidelines.join("\n")
    );
    if let Some(dir) = pi_docs {
        let dir = dir.display();
        body.push_str(&format!(
            "\n\nPi documentation (read only when the user asks about pi itself, its SDK, \
             extensions, themes, skills, or TUI):\n\
             - Main documentation: {dir}/README.md\n\
             - Additional docs: {dir}/docs\n\
             - Examples: {dir}/examples (extensions, custom tools, SDK)\n\
             - When asked about: extensions (docs/extensions.md, examples/extensions/), themes \
             (docs/themes.md), skills (docs/skills.md), prompt templates \
             (docs/prompt-templates.md), TUI components (docs/tui.md), keybindings \
             (docs/keybindings.md), SDK integrations (docs/sdk.md), custom providers \
             (docs/custom-provider.md), adding models (docs/models.md), pi packages \
             (docs/packages.md)\n\
             - When working on pi topics, read the docs and examples, and follow .md \
             cross-references before implementing\n\
             - Always read pi .md files completely and follow links to related docs (e.g., tui.md \
             for TUI API details)"
        ));
    }
    body
}
