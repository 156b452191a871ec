//! `session/export {format: html}`: one self-contained HTML page (inline CSS, no scripts, no
//! external resources) with the whole session tree in a sidebar, as pi's export has it. The
//! current branch shows; a node of the tree shows the branch it is on, scrolled to it — every
//! branch (root to leaf) is on the page, one shown at a time with CSS `:target`.

use std::collections::HashMap;

use pi_protocol::v1::SessionEntry;
use pi_protocol::v1::message::{AgentMessage, AssistantContent, UserContent};

use pi_store::SessionRow;
use pi_util::time::iso_from_millis;

/// Renders every entry of `row` (in any order that puts parents first) as a page.
pub fn export_html(row: &SessionRow, entries: &[SessionEntry]) -> String {
    let title = row
        .name
        .clone()
        .or_else(|| row.first_message.clone())
        .unwrap_or_else(|| row.id.clone());
    let tree = Tree::new(entries, row.leaf_id.as_deref());
    let mut branches = String::new();
    for (number, path) in tree.branches.iter().enumerate() {
        let current = if number == tree.current {
            " current"
        } else {
            ""
        };
        branches.push_str(&format!(
            "<section class=\"branch{current}\" id=\"b{number}\">\n"
        ));
        for &index in path {
            let entry = &entries[index];
            branches.push_str(&format!(
                "<div class=\"entry\" id=\"b{number}-{}\">\n",
                escape(entry.id())
            ));
            render_entry(&mut branches, entry);
            branches.push_str("</div>\n");
        }
        branches.push_str("</section>\n");
    }
    let mut outline = String::new();
    tree.outline(entries, &mut outline);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <nav class=\"tree\"><h2>Session tree</h2>\n{outline}</nav>\n<main>\n<header><h1>{title}</h1><p class=\"meta\">{cwd} · created {created} · session {id} · {count} branch{plural}</p></header>\n{branches}</main>\n</body>\n</html>\n",
        title = escape(&title),
        cwd = escape(&row.cwd),
        created = iso_from_millis(row.created_at),
        id = escape(&row.id),
        count = tree.branches.len(),
        plural = if tree.branches.len() == 1 { "" } else { "es" },
    )
}

/// The entries as a tree: children by parent, each branch (root to leaf) as entry indices,
/// and which branch holds each entry (the current one where it does).
struct Tree {
    children: HashMap<Option<String>, Vec<usize>>,
    branches: Vec<Vec<usize>>,
    /// The branch ending at the session's leaf (else the last).
    current: usize,
    /// For each entry index: the branch its tree node shows.
    shown_in: HashMap<usize, usize>,
    labels: HashMap<String, String>,
}

impl Tree {
    fn new(entries: &[SessionEntry], leaf: Option<&str>) -> Tree {
        let mut children: HashMap<Option<String>, Vec<usize>> = HashMap::new();
        let mut labels = HashMap::new();
        for (index, entry) in entries.iter().enumerate() {
            children
                .entry(entry.parent_id().map(str::to_owned))
                .or_default()
                .push(index);
            if let SessionEntry::Label {
                target_id, label, ..
            } = entry
            {
                match label {
                    Some(label) => labels.insert(target_id.clone(), label.clone()),
                    None => labels.remove(target_id),
                };
            }
        }
        // Depth-first from the roots: each leaf closes a branch.
        let mut branches = Vec::new();
        let mut stack: Vec<(usize, Vec<usize>)> = children
            .get(&None)
            .map(|roots| roots.iter().rev().map(|&root| (root, Vec::new())).collect())
            .unwrap_or_default();
        while let Some((index, mut path)) = stack.pop() {
            path.push(index);
            match children.get(&Some(entries[index].id().to_owned())) {
                Some(kids) if !kids.is_empty() => {
                    for &kid in kids.iter().rev() {
                        stack.push((kid, path.clone()));
                    }
                }
                _ => branches.push(path),
            }
        }
        let current = leaf
            .and_then(|leaf| {
                branches
                    .iter()
                    .position(|path| path.iter().any(|&index| entries[index].id() == leaf))
            })
            .unwrap_or(branches.len().saturating_sub(1));
        let mut shown_in = HashMap::new();
        for (number, path) in branches.iter().enumerate() {
            for &index in path {
                shown_in.entry(index).or_insert(number);
            }
        }
        if let Some(path) = branches.get(current) {
            for &index in path {
                shown_in.insert(index, current);
            }
        }
        Tree {
            children,
            branches,
            current,
            shown_in,
            labels,
        }
    }

    /// The sidebar: a line per message or summary, nested where the tree forks.
    fn outline(&self, entries: &[SessionEntry], out: &mut String) {
        out.push_str("<ul>\n");
        if let Some(roots) = self.children.get(&None) {
            for &root in roots {
                self.node(entries, root, out);
            }
        }
        out.push_str("</ul>\n");
    }

    fn node(&self, entries: &[SessionEntry], index: usize, out: &mut String) {
        let entry = &entries[index];
        if let Some(text) = describe(entry) {
            let branch = self.shown_in.get(&index).copied().unwrap_or(0);
            let on_current = branch == self.current
                && self
                    .branches
                    .get(self.current)
                    .is_some_and(|path| path.contains(&index));
            let label = self
                .labels
                .get(entry.id())
                .map(|label| format!(" <span class=\"label\">{}</span>", escape(label)))
                .unwrap_or_default();
            out.push_str(&format!(
                "<li{}><a href=\"#b{branch}-{}\">{}</a>{label}</li>\n",
                if on_current { " class=\"on\"" } else { "" },
                escape(entry.id()),
                escape(&text)
            ));
        }
        let kids = self
            .children
            .get(&Some(entry.id().to_owned()))
            .map(Vec::as_slice)
            .unwrap_or_default();
        match kids {
            [] => {}
            [only] => self.node(entries, *only, out),
            many => {
                for &kid in many {
                    out.push_str("<li class=\"fork\"><ul>\n");
                    self.node(entries, kid, out);
                    out.push_str("</ul></li>\n");
                }
            }
        }
    }
}

/// The sidebar's words for an entry; `None` for bookkeeping entries it leaves out.
fn describe(entry: &SessionEntry) -> Option<String> {
    let first_line = |text: &str| {
        let line = text.lines().next().unwrap_or_default().trim();
        let mut short: String = line.chars().take(60).collect();
        if line.chars().count() > 60 {
            short.push('…');
        }
        short
    };
    let text_of = |content: &[UserContent]| {
        content
            .iter()
            .find_map(|block| match block {
                UserContent::Text(text) => Some(first_line(&text.text)),
                UserContent::Image(_) => None,
            })
            .unwrap_or_else(|| "(image)".to_owned())
    };
    match entry {
        SessionEntry::Message { message, .. } => match message {
            AgentMessage::User(user) => Some(format!("User: {}", text_of(&user.content))),
            AgentMessage::Assistant(assistant) => {
                let text = assistant.content.iter().find_map(|block| match block {
                    AssistantContent::Text(text) if !text.text.trim().is_empty() => {
                        Some(first_line(&text.text))
                    }
                    _ => None,
                });
                let calls: Vec<&str> = assistant
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        AssistantContent::ToolCall(call) => Some(call.name.as_str()),
                        _ => None,
                    })
                    .collect();
                Some(match (text, calls.is_empty()) {
                    (Some(text), _) => format!("Assistant: {text}"),
                    (None, false) => format!("Assistant: {}", calls.join(", ")),
                    (None, true) => "Assistant".to_owned(),
                })
            }
            AgentMessage::ToolResult(result) => Some(format!("Result: {}", result.tool_name)),
            AgentMessage::BashExecution(bash) => Some(format!("$ {}", first_line(&bash.command))),
            AgentMessage::Custom(custom) if custom.display => {
                Some(format!("Message: {}", text_of(&custom.content)))
            }
            AgentMessage::Custom(_) => None,
            AgentMessage::BranchSummary(_) => Some("Branch summary".to_owned()),
            AgentMessage::CompactionSummary(_) => Some("Compaction summary".to_owned()),
        },
        SessionEntry::Compaction { .. } => Some("Compaction summary".to_owned()),
        SessionEntry::BranchSummary { .. } => Some("Branch summary".to_owned()),
        SessionEntry::CustomMessage {
            content,
            display: true,
            ..
        } => Some(format!("Message: {}", text_of(content))),
        _ => None,
    }
}

/// One entry of a branch.
fn render_entry(body: &mut String, entry: &SessionEntry) {
    match entry {
        SessionEntry::Message { message, .. } => render_message(body, message),
        SessionEntry::Compaction { summary, .. } => {
            section(body, "summary", "Compaction summary", &paragraphs(summary))
        }
        SessionEntry::BranchSummary { summary, .. } => {
            section(body, "summary", "Branch summary", &paragraphs(summary))
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
        } => section(body, "user", "Message", &user_content(content)),
        SessionEntry::Label {
            label: Some(label), ..
        } => body.push_str(&format!("<p class=\"meta\">Label: {}</p>\n", escape(label))),
        SessionEntry::Label { label: None, .. } => {
            body.push_str("<p class=\"meta\">Label cleared</p>\n")
        }
        SessionEntry::SessionInfo {
            name: Some(name), ..
        } => body.push_str(&format!("<p class=\"meta\">Named: {}</p>\n", escape(name))),
        SessionEntry::CustomMessage { .. }
        | SessionEntry::Custom { .. }
        | SessionEntry::SessionInfo { name: None, .. } => {}
    }
}

const STYLE: &str = "body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1d1d1f;display:flex;align-items:flex-start}\
main{flex:1;max-width:52rem;margin:2rem auto;padding:0 1rem}\
nav.tree{position:sticky;top:0;width:20rem;max-height:100vh;overflow:auto;font-size:.8rem;border-right:1px solid #ddd;padding:1rem;box-sizing:border-box;background:#fafafa}\
nav.tree ul{list-style:none;margin:0;padding-left:.75rem}nav.tree li.fork{border-left:1px dashed #ccc}\
nav.tree a{color:#1d1d1f;text-decoration:none}nav.tree li.on>a{font-weight:600}nav.tree .label{color:#bf5af2}\
.branch{display:none}.branch.current{display:block}.branch:target,.branch:has(:target){display:block}\
main:has(.branch:target) .branch.current:not(:target),main:has(.entry:target) .branch.current:not(:has(:target)){display:none}\
.entry:target>section{background:#fffbe6}\
h1{font-size:1.4rem}.meta{color:#6e6e73;font-size:.85rem}section{border-left:3px solid #ccc;margin:1rem 0;padding:.25rem 1rem}\
section.user{border-color:#0a84ff}section.assistant{border-color:#30d158}section.tool{border-color:#ff9f0a}\
section.error{border-color:#ff453a}section.summary{border-color:#bf5af2}h2{font-size:.8rem;text-transform:uppercase;color:#6e6e73;margin:.25rem 0}\
pre{background:#f5f5f7;padding:.5rem;overflow-x:auto;white-space:pre-wrap}.md pre{white-space:pre}.md code{background:#f5f5f7;padding:0 .2rem}.md table{border-collapse:collapse}.md td,.md th{border:1px solid #ddd;padding:.2rem .4rem}details summary{cursor:pointer;color:#6e6e73}img{max-width:100%}";

fn render_message(body: &mut String, message: &AgentMessage) {
    match message {
        AgentMessage::User(user) => section(body, "user", "User", &user_content(&user.content)),
        AgentMessage::Assistant(assistant) => {
            let mut html = String::new();
            for block in &assistant.content {
                match block {
                    AssistantContent::Text(text) => html.push_str(&markdown(&text.text)),
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

/// A model's markdown as HTML. What it says is never markup of the page: raw HTML in it is
/// shown as text, and links or images to anything but http(s), mailto or (images) data URLs
/// lose their target.
fn markdown(text: &str) -> String {
    use pulldown_cmark::{CowStr, Event, Options, Parser, Tag};
    let safe = |url: &CowStr<'_>, image: bool| {
        let lower = url.trim().to_ascii_lowercase();
        let scheme = lower.split_once(':').map(|(scheme, _)| scheme);
        match scheme {
            None => true,
            Some(scheme) if scheme.contains('/') || scheme.contains('#') => true,
            Some("http" | "https" | "mailto") => true,
            Some("data") => image && lower.starts_with("data:image/"),
            Some(_) => false,
        }
    };
    let events = Parser::new_ext(text, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH).map(
        |event| match event {
            Event::Html(html) | Event::InlineHtml(html) => Event::Text(html),
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }) if !safe(&dest_url, false) => Event::Start(Tag::Link {
                link_type,
                dest_url: CowStr::Borrowed("#"),
                title,
                id,
            }),
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            }) if !safe(&dest_url, true) => Event::Start(Tag::Image {
                link_type,
                dest_url: CowStr::Borrowed(""),
                title,
                id,
            }),
            other => other,
        },
    );
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, events);
    format!("<div class=\"md\">{html}</div>")
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

#[cfg(test)]
mod tests {
    use super::markdown;

    #[test]
    fn markdown_renders_and_never_becomes_markup_of_the_page() {
        let html = markdown(
            "# Plan\n\n- **one**\n- `two`\n\n```rust\nfn main() {}\n```\n\n\
             <script>alert(1)</script> <img src=x onerror=alert(2)>\n\n\
             [ok](https://example.com) [bad](javascript:alert(3)) [Bad](  JavaScript:alert(4))\n\n\
             ![pic](data:image/png;base64,AAAA) ![evil](data:text/html;base64,AAAA)",
        );
        assert!(html.contains("<h1>Plan</h1>"), "{html}");
        assert!(html.contains("<strong>one</strong>"), "{html}");
        assert!(html.contains("<code>two</code>"), "{html}");
        assert!(
            html.contains("<pre><code class=\"language-rust\">fn main() {}"),
            "{html}"
        );
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{html}"
        );
        assert!(
            html.contains("&lt;img src=x onerror=alert(2)&gt;"),
            "{html}"
        );
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img src=x"), "{html}");
        assert!(
            html.contains("<a href=\"https://example.com\">ok</a>"),
            "{html}"
        );
        assert!(!html.to_ascii_lowercase().contains("javascript:"), "{html}");
        assert!(html.contains("<a href=\"#\">bad</a>"), "{html}");
        assert!(
            html.contains("src=\"data:image/png;base64,AAAA\""),
            "{html}"
        );
        assert!(!html.contains("data:text/html"), "{html}");
    }
}
