//! The system prompt a session's runs use: identity, the active tools with one-line
//! descriptions, guidelines, date and working directory (pi's default structure).

use std::sync::Arc;

use pi_agent::Tool;

/// Builds the system prompt for a session in `cwd` with `tools`.
pub fn system_prompt(cwd: &str, tools: &[Arc<dyn Tool>]) -> String {
    let mut prompt = String::from(
        "You are an expert coding assistant operating inside pi, a coding agent harness. You help users by \
         reading files, executing commands, editing code, and writing new files.\n\nAvailable tools:\n",
    );
    for tool in tools {
        let summary = tool.description().lines().next().unwrap_or_default();
        prompt.push_str(&format!("- {}: {summary}\n", tool.name()));
    }
    prompt.push_str("\nGuidelines:\n- Be concise in your responses\n- Show file paths clearly when working with files\n");
    let today = crate::session::time::iso_from_millis(crate::session::now_millis());
    prompt.push_str(&format!(
        "\nCurrent date: {}\nCurrent working directory: {}",
        &today[..10],
        cwd.replace('\\', "/")
    ));
    prompt
}
