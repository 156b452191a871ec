//! One transcript item (or the streaming message) as wrapped lines.

use pi_protocol::v1::message::{AssistantContent, AssistantMessage, StopReason};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::markdown::render_markdown;
use super::tools::tool_lines;
use super::wrap::{truncate, wrap_text};
use crate::state::ViewOptions;
use crate::transcript::{AssistantBlock, Item, ItemKind, NoticeLevel, ToolItem, ToolStatus};

/// The lines of an item, followed by one blank separator line.
pub fn item_lines(
    item: &Item,
    width: usize,
    view: &ViewOptions,
    spinner: usize,
) -> Vec<Line<'static>> {
    item_layout(item, width, view, spinner).0
}

/// Where an image goes in an item's lines: `rows` blank lines from `line`, `cols` wide.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageSlot {
    /// The first of its lines.
    pub line: usize,
    /// Its width in cells.
    pub cols: u16,
    /// Its height in cells (lines).
    pub rows: u16,
    /// The image.
    pub picture: crate::transcript::Picture,
}

/// The most lines an image takes; a taller one is drawn narrower.
const IMAGE_MAX_ROWS: u32 = 30;

/// The cells `picture` takes at most `cols` wide on cells of `cell` pixels (pi's
/// `calculateImageRows`: the width given, as many rows as the aspect ratio needs).
pub fn image_cells(
    picture: &crate::transcript::Picture,
    cols: u16,
    cell: (u16, u16),
) -> (u16, u16) {
    let (width, height) = (picture.size.0.max(1), picture.size.1.max(1));
    let (cell_width, cell_height) = (u32::from(cell.0.max(1)), u32::from(cell.1.max(1)));
    let cols = u32::from(cols.max(1));
    let rows = (u64::from(height) * u64::from(cols * cell_width))
        .div_ceil(u64::from(width) * u64::from(cell_height))
        .max(1);
    if rows <= u64::from(IMAGE_MAX_ROWS) {
        return (cols as u16, rows as u16);
    }
    let cols = (u64::from(width) * u64::from(IMAGE_MAX_ROWS * cell_height))
        .div_ceil(u64::from(height) * u64::from(cell_width))
        .clamp(1, u64::from(cols));
    (cols as u16, IMAGE_MAX_ROWS as u16)
}

/// [`item_lines`], with where its images go (only with inline images on).
pub fn item_layout(
    item: &Item,
    width: usize,
    view: &ViewOptions,
    spinner: usize,
) -> (Vec<Line<'static>>, Vec<ImageSlot>) {
    let mut slots = Vec::new();
    let dim = Style::default().add_modifier(Modifier::DIM);
    let mut lines = match &item.kind {
        ItemKind::User { text, images } => {
            let prompt = Style::default()
                .fg(crate::theme::role(crate::theme::Role::Accent))
                .add_modifier(Modifier::BOLD);
            let mut lines = wrap_text(
                text,
                Style::default().add_modifier(Modifier::BOLD),
                width,
                &[Span::styled("› ".to_owned(), prompt)],
                &[Span::raw("  ".to_owned())],
            );
            if *images > 0 {
                lines.push(Line::from(Span::styled(
                    format!("  [{images} image{}]", if *images == 1 { "" } else { "s" }),
                    dim,
                )));
            }
            lines
        }
        ItemKind::Assistant {
            blocks,
            error,
            stop_reason,
        } => {
            let mut lines = blocks_lines(blocks, width, view);
            lines.extend(stop_lines(*stop_reason, error.as_deref(), width));
            lines
        }
        ItemKind::Tool(tool) => {
            let mut lines = tool_lines(tool, width, view.expand_tools, spinner);
            if view.inline_images.is_none() {
                // No graphics protocol (or `terminal.showImages` off): pi's placeholder.
                for picture in &tool.images {
                    lines.push(Line::from(Span::styled(
                        format!(
                            "  [Image: [{}] {}x{}]",
                            picture.mime, picture.size.0, picture.size.1
                        ),
                        dim,
                    )));
                }
            }
            if let Some(inline) = &view.inline_images {
                // pi's: each image under the output, after a blank line, at most
                // `terminal.imageWidthCells` wide.
                let room = width.saturating_sub(2).min(usize::from(u16::MAX)) as u16;
                for picture in &tool.images {
                    let (cols, rows) =
                        image_cells(picture, inline.width_cells.min(room), inline.cell);
                    lines.push(Line::default());
                    slots.push(ImageSlot {
                        line: lines.len(),
                        cols,
                        rows,
                        picture: picture.clone(),
                    });
                    lines.extend((0..rows).map(|_| Line::default()));
                }
            }
            lines
        }
        ItemKind::Bash {
            command,
            output,
            exit_code,
        } => {
            let tool = ToolItem {
                call_id: String::new(),
                tool_name: "bash".to_owned(),
                args: serde_json::json!({ "command": command }),
                status: if exit_code.unwrap_or(0) == 0 {
                    ToolStatus::Done
                } else {
                    ToolStatus::Failed
                },
                output: output.clone(),
                details: serde_json::Value::Null,
                images: Vec::new(),
            };
            tool_lines(&tool, width, view.expand_tools, spinner)
        }
        ItemKind::CompactionSummary {
            summary,
            tokens_before,
        } => summary_lines(
            &format!(
                "Compacted ({} tokens summarized)",
                super::chrome::compact_number(*tokens_before)
            ),
            summary,
            width,
            view.expand_tools,
        ),
        ItemKind::BranchSummary { summary } => {
            summary_lines("Branch summary", summary, width, view.expand_tools)
        }
        ItemKind::Custom { custom_type, text } => {
            let mut lines = vec![Line::from(Span::styled(
                format!("[{custom_type}]"),
                Style::default().fg(crate::theme::role(crate::theme::Role::CustomMessageLabel)),
            ))];
            lines.extend(render_markdown(text, width, &view.code_indent));
            lines
        }
        ItemKind::Notice { level, text } => {
            let style = match level {
                NoticeLevel::Info => dim,
                NoticeLevel::Warning => {
                    Style::default().fg(crate::theme::role(crate::theme::Role::Warning))
                }
                NoticeLevel::Error => {
                    Style::default().fg(crate::theme::role(crate::theme::Role::Error))
                }
            };
            wrap_text(text, style, width, &[], &[])
        }
    };
    lines.push(Line::default());
    (lines, slots)
}

/// The lines of the message being streamed (text, thinking, tool calls being written).
pub fn streaming_lines(
    message: &AssistantMessage,
    width: usize,
    view: &ViewOptions,
    spinner: usize,
) -> Vec<Line<'static>> {
    let blocks = crate::transcript::assistant_blocks(&message.content);
    let mut lines = blocks_lines(&blocks, width, view);
    for block in &message.content {
        if let AssistantContent::ToolCall(call) = block {
            let tool = ToolItem {
                call_id: call.id.clone(),
                tool_name: call.name.clone(),
                args: call.arguments.value().clone(),
                status: ToolStatus::Pending,
                output: String::new(),
                details: serde_json::Value::Null,
                images: Vec::new(),
            };
            lines.extend(tool_lines(&tool, width, view.expand_tools, spinner));
        }
    }
    if lines.is_empty() {
        lines.push(Line::default());
    }
    lines.push(Line::default());
    lines
}

fn blocks_lines(blocks: &[AssistantBlock], width: usize, view: &ViewOptions) -> Vec<Line<'static>> {
    let dim = Style::default().add_modifier(Modifier::DIM);
    let mut lines = Vec::new();
    for block in blocks {
        match block {
            AssistantBlock::Text(text) => {
                if !lines.is_empty() {
                    lines.push(Line::default());
                }
                lines.extend(render_markdown(text, width, &view.code_indent));
            }
            AssistantBlock::Thinking(thinking) => {
                if !lines.is_empty() {
                    lines.push(Line::default());
                }
                let style = dim.add_modifier(Modifier::ITALIC);
                if view.hide_thinking {
                    // pi's `hideThinkingBlock`: the label only, expanded or not.
                    lines.push(Line::from(Span::styled("Thinking...".to_owned(), style)));
                } else if view.show_thinking {
                    lines.push(Line::from(Span::styled("▾ Thinking".to_owned(), dim)));
                    lines.extend(wrap_text(
                        thinking.trim(),
                        style,
                        width,
                        &[Span::raw("  ".to_owned())],
                        &[Span::raw("  ".to_owned())],
                    ));
                } else {
                    let count = thinking.trim().lines().count();
                    let first = thinking.trim().lines().next().unwrap_or_default();
                    let label = format!(
                        "▸ Thinking: {} ({count} line{}, ctrl+t to show)",
                        truncate(first, width.saturating_sub(40).max(10)),
                        if count == 1 { "" } else { "s" }
                    );
                    lines.push(Line::from(Span::styled(truncate(&label, width), style)));
                }
            }
        }
    }
    lines
}

fn stop_lines(stop_reason: StopReason, error: Option<&str>, width: usize) -> Vec<Line<'static>> {
    match stop_reason {
        StopReason::Error => wrap_text(
            &format!("✗ {}", error.unwrap_or("The model failed.")),
            Style::default().fg(crate::theme::role(crate::theme::Role::Error)),
            width,
            &[],
            &[Span::raw("  ".to_owned())],
        ),
        StopReason::Aborted => wrap_text(
            &format!("⊘ {}", error.unwrap_or("Aborted.")),
            Style::default().fg(crate::theme::role(crate::theme::Role::Warning)),
            width,
            &[],
            &[Span::raw("  ".to_owned())],
        ),
        StopReason::Length => vec![Line::from(Span::styled(
            "… stopped at the output limit".to_owned(),
            Style::default().fg(crate::theme::role(crate::theme::Role::Warning)),
        ))],
        StopReason::Stop | StopReason::ToolUse => Vec::new(),
    }
}

fn summary_lines(title: &str, summary: &str, width: usize, expanded: bool) -> Vec<Line<'static>> {
    let mut lines = vec![Line::from(vec![
        Span::styled(
            "◆ ".to_owned(),
            Style::default().fg(crate::theme::role(crate::theme::Role::CustomMessageLabel)),
        ),
        Span::styled(
            title.to_owned(),
            Style::default()
                .fg(crate::theme::role(crate::theme::Role::CustomMessageLabel))
                .add_modifier(Modifier::BOLD),
        ),
    ])];
    let dim = Style::default().add_modifier(Modifier::DIM);
    if expanded {
        lines.extend(
            render_markdown(summary, width.saturating_sub(2), "  ")
                .into_iter()
                .map(|line| {
                    let mut spans = vec![Span::raw("  ".to_owned())];
                    spans.extend(line.spans);
                    Line::from(spans)
                }),
        );
    } else {
        // The first line of prose: heading and list markers are dropped.
        let first = summary
            .lines()
            .map(|line| {
                line.trim()
                    .trim_start_matches('#')
                    .trim_start_matches(['-', '*'])
                    .trim()
            })
            .find(|line| !line.is_empty())
            .unwrap_or_default();
        lines.push(Line::from(Span::styled(
            format!("  {}", truncate(first, width.saturating_sub(2))),
            dim,
        )));
        lines.push(Line::from(Span::styled(
            format!("  ({})", super::tools::expand_hint()),
            dim,
        )));
    }
    lines
}
