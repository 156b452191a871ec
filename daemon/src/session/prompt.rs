//! The system prompt a session's runs use: identity, the active tools with one-line
//! descriptions, guidelines, date and working directory (pi's default structure). A session
//! may replace the body (identity, tools, guidelines) and append text to it, as pi's
//! `--system-prompt` and `--append-system-prompt` do; the date and directory always follow.

use std::sync::Arc;

use pi_agent::Tool;

/// A session's replacements for the default prompt.
#[derive(Clone, Copy, Debug, Default)]
pub struct PromptOverrides<'a> {
    /// Replaces the default body.
    pub custom: Option<&'a str>,
    /// Appended after the body.
    pub append: Option<&'a str>,
}

/// Builds the system prompt for a session in `cwd` with `tools`.
pub fn system_prompt(cwd: &str, tools: &[Arc<dyn Tool>], overrides: PromptOverrides<'_>) -> String {
    let mut prompt = match overrides.custom {
        Some(custom) => custom.to_owned(),
        None => default_body(tools),
    };
    if let Some(append) = overrides.append.filter(|text| !text.is_empty()) {
        prompt.push_str("\n\n");
        prompt.push_str(append);
    }
    let today = crate::session::time::iso_from_millis(crate::session::now_millis());
    prompt.push_str(&format!(
        "\nCurrent date: {}\nCurrent working directory: {}",
        &today[..10],
        cwd.replace('\\', "/")
    ));
    prompt
}

fn default_body(tools: &[Arc<dyn Tool>]) -> String {
    let mut prompt = String::from(
        "You are an expert coding assistant operating inside pi, a coding agent harness. You help users by \
         reading files, executing commands, editing code, and writing new files.\n\nAvailable tools:\n",
    );
    for tool in tools {
        let summary = tool.description().lines().next().unwrap_or_default();
        prompt.push_str(&format!("- {}: {summary}\n", tool.name()));
    }
    prompt.push_str("\nGuidelines:\n- Be concise in your responses\n- Show file paths clearly when working with files\n");
    prompt
}
