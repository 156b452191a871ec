//! `session/stats`: pi's `SessionStats` over the current context.

use pi_agent::AgentMessage;
use pi_protocol::v1::{SessionStatsResponse, TokenTotals};

/// Counts messages, tool calls, tokens and cost over `context`.
pub fn context_stats<M: std::borrow::Borrow<AgentMessage>>(
    session_id: &str,
    context: &[M],
) -> SessionStatsResponse {
    let mut stats = SessionStatsResponse {
        session_id: session_id.to_owned(),
        user_messages: 0,
        assistant_messages: 0,
        tool_calls: 0,
        tool_results: 0,
        total_messages: context.len() as u64,
        tokens: TokenTotals::default(),
        cost: 0.0,
    };
    for message in context {
        match message.borrow() {
            AgentMessage::User(_) => stats.user_messages += 1,
            AgentMessage::Assistant(assistant) => {
                stats.assistant_messages += 1;
                stats.tool_calls += assistant.tool_calls().count() as u64;
                let usage = &assistant.usage;
                stats.tokens.input += usage.input;
                stats.tokens.output += usage.output;
                stats.tokens.cache_read += usage.cache_read;
                stats.tokens.cache_write += usage.cache_write;
                stats.cost += usage.cost.total;
            }
            AgentMessage::ToolResult(_) => stats.tool_results += 1,
            AgentMessage::BashExecution(_)
            | AgentMessage::Custom(_)
            | AgentMessage::BranchSummary(_)
            | AgentMessage::CompactionSummary(_) => {}
        }
    }
    let tokens = &mut stats.tokens;
    tokens.total = tokens.input + tokens.output + tokens.cache_read + tokens.cache_write;
    stats
}
