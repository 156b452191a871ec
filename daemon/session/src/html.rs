//! `session/export {format: html}`: one self-contained HTML page (inline CSS, no scripts, no
//! external resources) showing the session's current branch.

use pi_protocol::v1::SessionEntry;
use pi_protocol::v1::message::{AgentMessage, AssistantContent, UserContent};

use pi_store::SessionRow;
use pi_util::time::iso_from_millis;

/// Renders the branch (root first) of `row` as a page.
pub fn export_html(row: &SessionRow, branch: &[SessionEntry]) -> String {
    let title = row
        .name
        .clone()
        .or_else(|| row.first_message.clone())
        .unwrap_or_else(|| row.id.clone());
    let mut body = String::new();
    for entry in branch {
        match entry {
            SessionEntry::Message { message, .. } => render_message(&mut body, message),
            SessionEntry::Compaction { summary, .. } => section(
                &mut body,
                "summary",
                "Compaction summary",
                &paragraphs(summary),
            ),
            SessionEntry::BranchSummary { summary, .. } => {
                section(&mut body, "summary", "Branch summary", &paragraphs(summary))
            }
            SessionEntry::ModelChange {
                provider, model_id, ..
            } => {
                body.push_str(&format!(
                    "<p class=\"meta\">Model: {}/{}</p>\n",
                    escape(provider),
                    escape(model_id)
                ));
            }
            SessionEntry::ThinkingLevelChange { thinking_level, .. } => {
                body.push_str(&format!(
                    "<p class=\"meta\">Thinking: {}</p>\n",
                    escape(thinking_level)
                ));
            }
            SessionEntry::CustomMessage {
                content,
                display: true,
                ..
            } => section(&mut body, "user", "Message", &user_content(content)),
            SessionEntry::CustomMessage { .. }
            | SessionEntry::Custom { .. }
            | SessionEntry::Label { .. }
            | SessionEntry::SessionInfo { .. } => {}
        }
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <header><h1>{title}</h1><p class=\"meta\">{cwd} · created {created} · session {id}</p></header>\n<main>\n{body}</main>\n</body>\n</html>\n",
        title = escape(&title),
        cwd = escape(&row.cwd),
        created = iso_from_millis(row.created_at),
        id = escape(&row.id),
    )
}

const STYLE: &str = "body{font:15px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f}\
h1{font-size:1.4rem}.meta{color:#6e6e73;font-size:.85rem}section{border-left:3px solid #ccc;margin:1rem 0;padding:.25rem 1rem}\
section.user{border-color:#0a84ff}section.assistant{border-color:#30d158}section.tool{border-color:#ff9f0a}\
section.error{border-color:#ff453a}section.summary{border-color:#bf5af2}h2{font-size:.8rem;text-transform:uppercase;color:#6e6e73;margin:.25rem 0}\
pre{background:#f5f5f7;padding:.5rem;overflow-x:auto;white-space:pre-wrap}details summary{cursor:pointer;color:#6e6e73}img{max-width:100%}";

fn render_message(body: &mut String, message: &AgentMessage) {
    match message {
        AgentMessage::User(user) => section(body, "user", "User", &user_content(&user.content)),
        AgentMessage::Assistant(assistant) => {
            let mut html = String::new();
            for block in &assistant.content {
                match block {
                    AssistantContent::Text(text) => html.push_str(&paragraphs(&text.text)),
                    AssistantContent::Thinking(thinking) => {
                        html.push_str(&format!(
                            "<details><summary>Thinking</summary>{}</details>",
                            paragraphs(&thinking.thinking)
                        ));
                    }
                    AssistantContent::ToolCall(call) => {
                        let arguments =
                            serde_json::to_string_pretty(&call.arguments).unwrap_or_default();
                        html.push_str(&format!(
                            "<p class=\"meta\">Tool call: {}</p><pre>{}</pre>",
                            escape(&call.name),
                            escape(&arguments)
                        ));
                    }
                }
            }
            if let Some(error) = &assistant.error_message {
                html.push_str(&format!("<p class=\"meta\">{}</p>", escape(error)));
            }
            let heading = format!("Assistant · {}", escape(&assistant.model));
            section(body, "assistant", &heading, &html);
        }
        AgentMessage::ToolResult(result) => {
            let class = if result.is_error { "error" } else { "tool" };
            let heading = format!("Result · {}", escape(&result.tool_name));
            section(body, class, &heading, &user_content(&result.content));
        }
        AgentMessage::BashExecution(bash) => {
            let html = format!(
                "<pre>$ {}\n{}</pre>",
                escape(&bash.command),
                escape(&bash.output)
            );
            section(body, "tool", "Shell", &html);
        }
        AgentMessage::Custom(custom) if custom.display => {
            section(body, "user", "Message", &user_content(&custom.content))
        }
        AgentMessage::Custom(_) => {}
        AgentMessage::BranchSummary(summary) => section(
            body,
            "summary",
            "Branch summary",
            &paragraphs(&summary.summary),
        ),
        AgentMessage::CompactionSummary(summary) => section(
            body,
            "summary",
            "Compaction summary",
            &paragraphs(&summary.summary),
        ),
    }
}

fn section(body: &mut String, class: &str, heading: &str, html: &str) {
    body.push_str(&format!(
        "<section class=\"{class}\"><h2>{heading}</h2>{html}</section>\n"
    ));
}

fn user_content(content: &[UserContent]) -> String {
    content
        .iter()
        .map(|block| match block {
            UserContent::Text(text) => paragraphs(&text.text),
            UserContent::Image(image) => format!(
                "<img alt=\"image\" src=\"data:{};base64,{}\">",
                escape(&image.mime_type),
                escape(&image.data)
            ),
        })
        .collect()
}

fn paragraphs(text: &str) -> String {
    format!("<pre>{}</pre>", escape(text))
}

/// Escapes text for HTML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            other => out.push(other),
        }
    }
    out
}
