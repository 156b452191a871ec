//! pi's summarization prompts, byte for byte, and the requests built from them: a system
//! prompt that forbids continuing the conversation, and one user message holding the
//! transcript in `<conversation>` tags, the previous summary in `<previous-summary>` tags when
//! updating, and the instructions with the structured Markdown format.

use pi_agent::AgentMessage;
use pi_llm::{Context, Message, UserContent, UserMessage};

use crate::compaction::serialize::write_agent_conversation;

/// The system prompt of every summarization request.
pub const SUMMARIZATION_SYSTEM_PROMPT: &str = "You are a context summarization assistant. Your task is to read a conversation between a user and an AI coding assistant, then produce a structured summary following the exact format specified.

Do NOT continue the conversation. Do NOT respond to any questions in the conversation. ONLY output the structured summary.";

/// Instructions of a first compaction.
pub const SUMMARIZATION_PROMPT: &str = r#"The messages above are a conversation to summarize. Create a structured context checkpoint summary that another LLM will use to continue the work.

Use this EXACT format:

## Goal
[What is the user trying to accomplish? Can be multiple items if the session covers different tasks.]

## Constraints & Preferences
- [Any constraints, preferences, or requirements mentioned by user]
- [Or "(none)" if none were mentioned]

## Progress
### Done
- [x] [Completed tasks/changes]

### In Progress
- [ ] [Current work]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [Ordered list of what should happen next]

## Critical Context
- [Any data, examples, or references needed to continue]
- [Or "(none)" if not applicable]

Keep each section concise. Preserve exact file paths, function names, and error messages."#;

/// Instructions of a compaction that updates the previous summary.
pub const UPDATE_SUMMARIZATION_PROMPT: &str = r#"The messages above are NEW conversation messages to incorporate into the existing summary provided in <previous-summary> tags.

Update the existing structured summary with new information. RULES:
- PRESERVE all existing information from the previous summary
- ADD new progress, decisions, and context from the new messages
- UPDATE the Progress section: move items from "In Progress" to "Done" when completed
- UPDATE "Next Steps" based on what was accomplished
- PRESERVE exact file paths, function names, and error messages
- If something is no longer relevant, you may remove it

Use this EXACT format:

## Goal
[Preserve existing goals, add new ones if the task expanded]

## Constraints & Preferences
- [Preserve existing, add new ones discovered]

## Progress
### Done
- [x] [Include previously done items AND newly completed items]

### In Progress
- [ ] [Current work - update based on progress]

### Blocked
- [Current blockers - remove if resolved]

## Key Decisions
- **[Decision]**: [Brief rationale] (preserve all previous, add new)

## Next Steps
1. [Update based on current state]

## Critical Context
- [Preserve important context, add new if needed]

Keep each section concise. Preserve exact file paths, function names, and error messages."#;

/// Instructions for the prefix of a turn split by the cut.
pub const TURN_PREFIX_SUMMARIZATION_PROMPT: &str =
    "This is the PREFIX of a turn that was too large to keep. The SUFFIX (recent work) is retained.

Summarize the prefix to provide context for the retained suffix:

## Original Request
[What did the user ask for in this turn?]

## Early Progress
- [Key decisions and work done in the prefix]

## Context for Suffix
- [Information needed to understand the retained recent work]

Be concise. Focus on what's needed to understand the kept suffix.";

/// Instructions of a branch summary.
pub const BRANCH_SUMMARY_PROMPT: &str = r#"Create a structured summary of this conversation branch for context when returning later.

Use this EXACT format:

## Goal
[What was the user trying to accomplish in this branch?]

## Constraints & Preferences
- [Any constraints, preferences, or requirements mentioned]
- [Or "(none)" if none were mentioned]

## Progress
### Done
- [x] [Completed tasks/changes]

### In Progress
- [ ] [Work that was started but not finished]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [What should happen next to continue this work]

Keep each section concise. Preserve exact file paths, function names, and error messages."#;

/// What precedes a branch summary's text in the stored summary.
pub const BRANCH_SUMMARY_PREAMBLE: &str = "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n";

/// The history part of a split-turn summary when nothing precedes the turn.
pub const NO_PRIOR_HISTORY: &str = "No prior history.";

/// Output cap of a branch summary.
pub const BRANCH_SUMMARY_MAX_TOKENS: u64 = 2048;

/// The caller's instructions for a summary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Instructions {
    /// pi's instructions alone.
    #[default]
    Default,
    /// pi's instructions, then `Additional focus: <text>`.
    Focus(String),
    /// The text instead of pi's instructions (branch summaries only).
    Replace(String),
}

impl Instructions {
    /// These instructions with an extension's changes (pi's `session_before_tree` result:
    /// `customInstructions`, `replaceInstructions`); what it leaves out stays.
    pub fn overridden(&self, text: Option<String>, replace: Option<bool>) -> Instructions {
        let (current, replacing) = match self {
            Instructions::Default => (None, false),
            Instructions::Focus(text) => (Some(text.clone()), false),
            Instructions::Replace(text) => (Some(text.clone()), true),
        };
        match (text.or(current), replace.unwrap_or(replacing)) {
            (None, _) => Instructions::Default,
            (Some(text), true) => Instructions::Replace(text),
            (Some(text), false) => Instructions::Focus(text),
        }
    }
}

/// One summarization call: what to send and how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SummaryRequest {
    /// The system prompt ([`SUMMARIZATION_SYSTEM_PROMPT`]).
    pub system_prompt: &'static str,
    /// The single user message.
    pub prompt: String,
    /// Output token cap.
    pub max_tokens: u64,
    /// Ask for high reasoning (history summaries on reasoning models).
    pub reasoning: bool,
}

impl SummaryRequest {
    /// The model context: the system prompt and one user message, no tools.
    pub fn context(&self, timestamp: i64) -> Context {
        Context {
            system_prompt: Some(self.system_prompt.to_owned()),
            messages: vec![Message::User(UserMessage {
                content: vec![UserContent::text(self.prompt.clone())],
                timestamp,
            })],
            tools: Vec::new(),
        }
    }
}

/// pi's `generateSummary` request: `maxTokens = floor(0.8 × reserveTokens)`, the update
/// prompt when there is a previous summary, custom instructions as `Additional focus`.
pub fn history_request(
    messages: &[AgentMessage],
    previous_summary: Option<&str>,
    custom_instructions: Option<&str>,
    reserve_tokens: u64,
    model_reasons: bool,
) -> SummaryRequest {
    let base = match previous_summary {
        Some(_) => UPDATE_SUMMARIZATION_PROMPT,
        None => SUMMARIZATION_PROMPT,
    };
    let mut prompt = conversation_block(messages);
    if let Some(previous) = previous_summary {
        prompt.push_str(&format!(
            "<previous-summary>\n{previous}\n</previous-summary>\n\n"
        ));
    }
    prompt.push_str(base);
    if let Some(custom) = custom_instructions.filter(|custom| !custom.is_empty()) {
        prompt.push_str(&format!("\n\nAdditional focus: {custom}"));
    }
    SummaryRequest {
        system_prompt: SUMMARIZATION_SYSTEM_PROMPT,
        prompt,
        max_tokens: reserve_tokens * 8 / 10,
        reasoning: model_reasons,
    }
}

/// pi's `generateTurnPrefixSummary` request: `maxTokens = floor(0.5 × reserveTokens)`.
pub fn turn_prefix_request(messages: &[AgentMessage], reserve_tokens: u64) -> SummaryRequest {
    let mut prompt = conversation_block(messages);
    prompt.push_str(TURN_PREFIX_SUMMARIZATION_PROMPT);
    SummaryRequest {
        system_prompt: SUMMARIZATION_SYSTEM_PROMPT,
        prompt,
        max_tokens: reserve_tokens / 2,
        reasoning: false,
    }
}

/// pi's branch summary request: `maxTokens = 2048`, no reasoning.
pub fn branch_request(messages: &[AgentMessage], instructions: &Instructions) -> SummaryRequest {
    let mut prompt = conversation_block(messages);
    match instructions {
        Instructions::Default => prompt.push_str(BRANCH_SUMMARY_PROMPT),
        Instructions::Focus(focus) if focus.is_empty() => prompt.push_str(BRANCH_SUMMARY_PROMPT),
        Instructions::Focus(focus) => {
            prompt.push_str(BRANCH_SUMMARY_PROMPT);
            prompt.push_str(&format!("\n\nAdditional focus: {focus}"));
        }
        Instructions::Replace(text) if text.is_empty() => prompt.push_str(BRANCH_SUMMARY_PROMPT),
        Instructions::Replace(text) => prompt.push_str(text),
    }
    SummaryRequest {
        system_prompt: SUMMARIZATION_SYSTEM_PROMPT,
        prompt,
        max_tokens: BRANCH_SUMMARY_MAX_TOKENS,
        reasoning: false,
    }
}

/// `<conversation>\n{transcript}\n</conversation>\n\n`.
fn conversation_block(messages: &[AgentMessage]) -> String {
    let mut block = String::from("<conversation>\n");
    write_agent_conversation(&mut block, messages);
    block.push_str("\n</conversation>\n\n");
    block
}
