//! Tool calls, rendered per tool: `edit` as a coloured diff, `bash` as the command and the
//! last lines of output, `read` as path and range, `write` as path and size, anything else as
//! compact JSON arguments and the start of its output. Ctrl+O expands every tool's output.

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use serde_json::Value;

use super::wrap::{truncate, wrap_text};
use crate::transcript::{ToolItem, ToolStatus};

/// Output lines shown per tool when collapsed.
const COLLAPSED_OUTPUT_LINES: usize = 5;
/// Diff lines shown when collapsed.
const COLLAPSED_DIFF_LINES: usize = 12;
/// Lines shown when expanded, at most (the rest is summarized).
const EXPANDED_MAX_LINES: usize = 400;

/// Renders a tool call.
pub fn tool_lines(
    tool: &ToolItem,
    width: usize,
    expanded: bool,
    spinner: usize,
) -> Vec<Line<'static>> {
    let dim = Style::default().add_modifier(Modifier::DIM);
    let (glyph, glyph_style) = match tool.status {
        ToolStatus::Pending => ("○", dim),
        ToolStatus::Running => (
            ["◐", "◓", "◑", "◒"][spinner % 4],
            Style::default().fg(crate::theme::role(crate::theme::Role::Warning)),
        ),
        ToolStatus::Done => (
            "●",
            Style::default().fg(crate::theme::role(crate::theme::Role::Success)),
        ),
        ToolStatus::Failed => (
            "●",
            Style::default().fg(crate::theme::role(crate::theme::Role::Error)),
        ),
    };
    let arg = |name: &str| {
        tool.args
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let summary = match tool.tool_name.as_str() {
        "bash" => format!("$ {}", arg("command").lines().next().unwrap_or_default()),
        "read" => {
            let offset = tool.args.get("offset").and_then(Value::as_u64);
            let limit = tool.args.get("limit").and_then(Value::as_u64);
            match (offset, limit) {
                (Some(offset), Some(limit)) => {
                    format!("{}:{offset}-{}", arg("path"), offset + limit - 1)
                }
                (Some(offset), None) => format!("{}:{offset}-", arg("path")),
                (None, Some(limit)) => format!("{}:1-{limit}", arg("path")),
                (None, None) => arg("path").to_owned(),
            }
        }
        "write" => {
            let content = arg("content");
            format!(
                "{} ({} lines, {} bytes)",
                arg("path"),
                content.lines().count(),
                content.len()
            )
        }
        "edit" => arg("path").to_owned(),
        "ls" | "find" | "grep" => {
            let pattern = arg("pattern");
            let path = arg("path");
            [pattern, path]
                .iter()
                .filter(|part| !part.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join(" in ")
        }
        _ => compact_json(&tool.args),
    };
    let header_room = width.saturating_sub(tool.tool_name.len() + 3);
    let mut lines = vec![Line::from(vec![
        Span::styled(format!("{glyph} "), glyph_style),
        Span::styled(
            tool.tool_name.clone(),
            Style::default().add_modifier(Modifier::BOLD),
        ),
        Span::raw(" "),
        Span::styled(
            truncate(&summary, header_room),
            Style::default().fg(crate::theme::role(crate::theme::Role::Accent)),
        ),
    ])];
    let indent = [Span::raw("  ")];
    let body_width = width.max(4);
    let output = tool.output.trim_end_matches('\n');
    let failed = tool.status == ToolStatus::Failed;

    match tool.tool_name.as_str() {
        "edit" if !failed => {
            if let Some(diff) = tool.details.get("diff").and_then(Value::as_str) {
                let diff_lines: Vec<&str> = diff.lines().collect();
                let shown = if expanded {
                    EXPANDED_MAX_LINES
                } else {
                    COLLAPSED_DIFF_LINES
                };
                for line in diff_lines.iter().take(shown) {
                    let style = if line.starts_with('+') {
                        Style::default().fg(crate::theme::role(crate::theme::Role::ToolDiffAdded))
                    } else if line.starts_with('-') {
                        Style::default().fg(crate::theme::role(crate::theme::Role::ToolDiffRemoved))
                    } else {
                        dim
                    };
                    lines.extend(wrap_text(line, style, body_width, &indent, &indent));
                }
                more(&mut lines, diff_lines.len(), shown);
            } else if tool.status == ToolStatus::Running || tool.status == ToolStatus::Pending {
                lines.push(Line::from(Span::styled("  editing…", dim)));
            }
        }
        "read" | "write" if !failed => {
            if expanded && !output.is_empty() {
                output_lines(
                    &mut lines,
                    output,
                    body_width,
                    dim,
                    EXPANDED_MAX_LINES,
                    false,
                );
            } else if tool.tool_name == "read" && !output.is_empty() {
                lines.push(Line::from(Span::styled(
                    format!("  {} lines", output.lines().count()),
                    dim,
                )));
            }
        }
        "bash" => {
            let command = arg("command");
            if command.lines().count() > 1 {
                for line in command
                    .lines()
                    .skip(1)
                    .take(if expanded { usize::MAX } else { 3 })
                {
                    lines.extend(wrap_text(
                        line,
                        Style::default().fg(crate::theme::role(crate::theme::Role::BashMode)),
                        body_width,
                        &indent,
                        &indent,
                    ));
                }
            }
            let style = if failed {
                Style::default().fg(crate::theme::role(crate::theme::Role::Error))
            } else {
                dim
            };
            let shown = if expanded {
                EXPANDED_MAX_LINES
            } else {
                COLLAPSED_OUTPUT_LINES
            };
            // The last lines matter for commands (errors, summaries): show the tail.
            output_lines(&mut lines, output, body_width, style, shown, true);
        }
        _ => {
            let style = if failed {
                Style::default().fg(crate::theme::role(crate::theme::Role::Error))
            } else {
                dim
            };
            let shown = if expanded {
                EXPANDED_MAX_LINES
            } else {
                COLLAPSED_OUTPUT_LINES
            };
            output_lines(&mut lines, output, body_width, style, shown, false);
        }
    }
    lines
}

/// Output, `shown` lines at most, from the start or (`tail`) the end.
fn output_lines(
    lines: &mut Vec<Line<'static>>,
    output: &str,
    width: usize,
    style: Style,
    shown: usize,
    tail: bool,
) {
    if output.is_empty() {
        return;
    }
    let indent = [Span::raw("  ")];
    let all: Vec<&str> = output.lines().collect();
    let hidden = all.len().saturating_sub(shown);
    let dim = Style::default().add_modifier(Modifier::DIM);
    if tail && hidden > 0 {
        lines.push(Line::from(Span::styled(
            format!("  … {hidden} earlier lines ({})", expand_hint()),
            dim,
        )));
    }
    let range = if tail {
        hidden..all.len()
    } else {
        0..all.len().min(shown)
    };
    for line in &all[range] {
        // Each output line takes at most one row when collapsed.
        let line = if shown < EXPANDED_MAX_LINES {
            truncate(line, width.saturating_sub(2))
        } else {
            (*line).to_owned()
        };
        lines.extend(wrap_text(&line, style, width, &indent, &indent));
    }
    if !tail {
        more(lines, all.len(), shown);
    }
}

thread_local! {
    // The expand key as `keybindings.json` left it, set by each frame (the renderer is one
    // thread's).
    static EXPAND_KEY: std::cell::RefCell<String> = std::cell::RefCell::new("ctrl+o".to_owned());
}

/// Sets the key the "to expand" hints name (each frame, from the key map); whether it
/// changed (laid-out items then name the old one).
pub(crate) fn set_expand_key(key: Option<String>) -> bool {
    let key = key.unwrap_or_else(|| "/hotkeys".to_owned());
    EXPAND_KEY.with(|cell| {
        let changed = *cell.borrow() != key;
        if changed {
            *cell.borrow_mut() = key;
        }
        changed
    })
}

/// `ctrl+o to expand`, with the key bound now.
pub(crate) fn expand_hint() -> String {
    EXPAND_KEY.with(|cell| format!("{} to expand", cell.borrow()))
}

fn more(lines: &mut Vec<Line<'static>>, total: usize, shown: usize) {
    if total > shown {
        lines.push(Line::from(Span::styled(
            format!("  … {} more lines ({})", total - shown, expand_hint()),
            Style::default().add_modifier(Modifier::DIM),
        )));
    }
}

/// Arguments as one line of JSON.
fn compact_json(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}
