//! Everything below the transcript: the status and queue lines, other clients' presence, the
//! completion popup, the editor and the footer.

use ratatui::Frame;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};
use unicode_width::{UnicodeWidthChar as _, UnicodeWidthStr as _};

use super::wrap::truncate;
use crate::state::{Connection, State};

/// Editor rows shown at most (it scrolls beyond).
pub const EDITOR_MAX_ROWS: usize = 10;
const SPINNER: &[&str] = &["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// Lines above the editor: connection, activity, queued messages, other clients.
pub fn status_lines(state: &State, width: usize) -> Vec<Line<'static>> {
    let dim = Style::default().add_modifier(Modifier::DIM);
    let mut lines = Vec::new();
    match &state.connection {
        Connection::Live => {}
        Connection::Connecting => lines.push(Line::from(Span::styled(
            "Connecting to the daemon…".to_owned(),
            Style::default().fg(crate::theme::role(crate::theme::Role::Warning)),
        ))),
        Connection::Reconnecting { attempt, reason } => {
            let mut text = "⟳ Reconnecting to the daemon…".to_owned();
            if *attempt > 0 {
                text.push_str(&format!(" (attempt {})", attempt + 1));
            }
            if let Some(reason) = reason {
                text.push_str(&format!(" {reason}"));
            }
            lines.push(Line::from(Span::styled(
                truncate(&text, width),
                Style::default().fg(crate::theme::role(crate::theme::Role::Warning)),
            )));
        }
    }
    lines.extend(todo_lines(&state.todos, width));
    if state.running {
        let activity = match &state.tools_wait {
            Some(servers) => truncate(
                &format!(
                    "Waiting for MCP {} {}… (esc to abort)",
                    if servers.len() == 1 {
                        "server"
                    } else {
                        "servers"
                    },
                    servers.join(", ")
                ),
                width.saturating_sub(2),
            ),
            None => "Working… (esc to abort)".to_owned(),
        };
        lines.push(Line::from(vec![
            Span::styled(
                format!("{} ", SPINNER[state.spinner % SPINNER.len()]),
                Style::default().fg(crate::theme::role(crate::theme::Role::Accent)),
            ),
            Span::styled(activity, dim),
        ]));
    }
    for text in &state.queue.steering {
        lines.push(queued_line("steer", text, width));
    }
    for text in &state.queue.follow_up {
        lines.push(queued_line("follow-up", text, width));
    }
    let others: Vec<_> = state.other_clients().collect();
    let typing: Vec<_> = others
        .iter()
        .filter(|client| !client.draft.is_empty())
        .collect();
    for client in &typing {
        let draft = client.draft.lines().last().unwrap_or_default();
        let text = format!("✎ {} is typing: {draft}", client.name);
        lines.push(Line::from(Span::styled(truncate(&text, width), dim)));
    }
    if !others.is_empty() && typing.is_empty() {
        let text = if others.len() == 1 {
            "◦ 1 other client attached".to_owned()
        } else {
            format!("◦ {} other clients attached", others.len())
        };
        lines.push(Line::from(Span::styled(text, dim)));
    }
    if let Some(status) = &state.status {
        lines.push(Line::from(Span::styled(
            truncate(status, width),
            Style::default().fg(crate::theme::role(crate::theme::Role::Warning)),
        )));
    }
    lines.extend(widget_lines(state, true, width));
    lines
}

/// Most tasks of the todo list shown above the editor.
const TODO_ROWS: usize = 6;

/// The todo list while a task is open: a header with the count and the phase at work, then
/// the tasks around the one in progress.
fn todo_lines(todos: &pi_protocol::v1::TodoList, width: usize) -> Vec<Line<'static>> {
    use pi_protocol::v1::TodoStatus;
    if todos.open().next().is_none() {
        return Vec::new();
    }
    let dim = Style::default().add_modifier(Modifier::DIM);
    let accent = Style::default().fg(crate::theme::role(crate::theme::Role::Accent));
    let tasks: Vec<(&str, &pi_protocol::v1::TodoTask)> = todos
        .phases
        .iter()
        .flat_map(|phase| {
            phase
                .tasks
                .iter()
                .map(move |task| (phase.name.as_str(), task))
        })
        .collect();
    let done = tasks
        .iter()
        .filter(|(_, task)| task.status == TodoStatus::Completed)
        .count();
    let current = tasks
        .iter()
        .position(|(_, task)| task.status == TodoStatus::InProgress)
        .or_else(|| tasks.iter().position(|(_, task)| task.status.is_open()))
        .unwrap_or(0);
    let phase = tasks.get(current).map_or("", |(phase, _)| *phase);
    let mut lines = vec![Line::from(Span::styled(
        truncate(&format!("Todo {done}/{} · {phase}", tasks.len()), width),
        dim,
    ))];
    let start = current
        .saturating_sub(1)
        .min(tasks.len().saturating_sub(TODO_ROWS));
    for (_, task) in tasks.iter().skip(start).take(TODO_ROWS) {
        let (mark, style) = match task.status {
            TodoStatus::Completed => ("✓", dim),
            TodoStatus::InProgress => ("▸", accent),
            TodoStatus::Abandoned => ("✗", dim.add_modifier(Modifier::CROSSED_OUT)),
            TodoStatus::Blocked => (
                "!",
                Style::default().fg(crate::theme::role(crate::theme::Role::Warning)),
            ),
            TodoStatus::Pending => ("○", Style::default()),
        };
        let mut text = format!("  {mark} {}", task.content);
        if let Some(blocker) = &task.blocker {
            text.push_str(&format!(" (blocked: {blocker})"));
        }
        lines.push(Line::from(Span::styled(truncate(&text, width), style)));
    }
    let hidden = tasks.len().saturating_sub(start + TODO_ROWS);
    if hidden > 0 {
        lines.push(Line::from(Span::styled(format!("  … {hidden} more"), dim)));
    }
    lines
}

/// The attached session's extensions' widgets above (`above`) or below the editor.
fn widget_lines(state: &State, above: bool, width: usize) -> Vec<Line<'static>> {
    let Some(ui) = extension_ui(state) else {
        return Vec::new();
    };
    ui.widgets
        .values()
        .filter(|(_, placed_above)| *placed_above == above)
        .flat_map(|(lines, _)| lines.iter())
        .map(|line| Line::from(truncate(line, width)))
        .collect()
}

/// What the attached session's extensions show, if any.
fn extension_ui(state: &State) -> Option<&crate::state::ExtensionUi> {
    let session = state.session.as_ref()?;
    Some(&state.extension_ui).filter(|ui| ui.session_id == session.id)
}

fn queued_line(kind: &str, text: &str, width: usize) -> Line<'static> {
    let first = text.lines().next().unwrap_or_default();
    Line::from(vec![
        Span::styled(
            format!("↳ queued {kind}: "),
            Style::default().fg(crate::theme::role(crate::theme::Role::Warning)),
        ),
        Span::raw(truncate(first, width.saturating_sub(kind.len() + 12))),
    ])
}

/// The editor's visual rows (hard-wrapped to its text width in a terminal `columns` wide:
/// the prompt's two columns and `editorPaddingX` on each side off) and the cursor's (row,
/// column) among them.
pub fn editor_rows(state: &State, columns: usize) -> (Vec<String>, (usize, usize)) {
    let padding = usize::from(state.prefs.editor_padding_x);
    let width = columns.saturating_sub(2 + 2 * padding).max(2);
    let (cursor_row, cursor_byte) = state.editor.cursor();
    let mut rows = Vec::new();
    let mut cursor = (0, 0);
    for (line_index, line) in state.editor.lines().iter().enumerate() {
        let mut row = String::new();
        let mut used = 0;
        for (byte, c) in line.char_indices() {
            if line_index == cursor_row && byte == cursor_byte {
                cursor = (rows.len(), used);
            }
            let char_width = c.width().unwrap_or(0);
            if used + char_width > width - 1 {
                rows.push(std::mem::take(&mut row));
                used = 0;
                if line_index == cursor_row && byte == cursor_byte {
                    cursor = (rows.len(), 0);
                }
            }
            row.push(c);
            used += char_width;
        }
        if line_index == cursor_row && cursor_byte >= line.len() {
            cursor = (rows.len(), used);
        }
        rows.push(row);
    }
    (rows, cursor)
}

/// Draws the editor (between two rules) and places the terminal cursor.
pub fn render_editor(state: &State, frame: &mut Frame<'_>, area: Rect) {
    let dim = Style::default().add_modifier(Modifier::DIM);
    let width = area.width as usize;
    let (rows, (cursor_row, cursor_column)) = editor_rows(state, width);
    let padding = " ".repeat(usize::from(state.prefs.editor_padding_x));
    let visible = (area.height as usize).saturating_sub(2).max(1);
    let first = (cursor_row + 1).saturating_sub(visible);
    let hint = if state.running {
        " enter: steer · alt+enter: follow-up · esc: abort "
    } else {
        ""
    };
    let rule_width = width.saturating_sub(hint.width());
    let mut lines = vec![Line::from(vec![
        Span::styled("─".repeat(rule_width.min(2)), dim),
        Span::styled(hint.to_owned(), dim),
        Span::styled("─".repeat(rule_width.saturating_sub(2)), dim),
    ])];
    let placeholder = state.editor.is_empty() && state.connection == Connection::Live;
    for (index, row) in rows.iter().enumerate().skip(first).take(visible) {
        let prompt = if index == 0 { "› " } else { "  " };
        let mut spans = vec![
            Span::styled(
                prompt.to_owned(),
                Style::default().fg(crate::theme::role(crate::theme::Role::Accent)),
            ),
            Span::raw(padding.clone()),
        ];
        if placeholder {
            let text = "Type a message, / for commands, @ for files";
            if !state.prefs.hardware_cursor && cursor_shown(state) {
                spans.push(Span::styled(
                    text[..1].to_owned(),
                    dim.add_modifier(Modifier::REVERSED),
                ));
                spans.push(Span::styled(text[1..].to_owned(), dim));
            } else {
                spans.push(Span::styled(text.to_owned(), dim));
            }
        } else if index == cursor_row && !state.prefs.hardware_cursor && cursor_shown(state) {
            // pi's drawn cursor (`showHardwareCursor` off): the cell under it reversed.
            let split = row
                .char_indices()
                .scan(0, |used, (byte, c)| {
                    let at = *used;
                    *used += c.width().unwrap_or(0);
                    Some((byte, at))
                })
                .find(|(_, at)| *at >= cursor_column)
                .map_or(row.len(), |(byte, _)| byte);
            let (before, rest) = row.split_at(split);
            let mut rest = rest.chars();
            let under = rest.next().map_or_else(|| " ".to_owned(), String::from);
            spans.push(Span::raw(before.to_owned()));
            spans.push(Span::styled(
                under,
                Style::default().add_modifier(Modifier::REVERSED),
            ));
            spans.push(Span::raw(rest.as_str().to_owned()));
        } else {
            spans.push(Span::raw(row.clone()));
        }
        lines.push(Line::from(spans));
    }
    lines.push(Line::from(Span::styled("─".repeat(width), dim)));
    frame.render_widget(Paragraph::new(lines), area);
    if state.prefs.hardware_cursor && cursor_shown(state) {
        frame.set_cursor_position(Position {
            x: area.x + 2 + state.prefs.editor_padding_x + cursor_column as u16,
            y: area.y + 1 + (cursor_row - first) as u16,
        });
    }
}

/// Whether the editor has the cursor (no dialog over it, not leaving).
fn cursor_shown(state: &State) -> bool {
    state.overlay.is_none() && !state.exiting
}

/// Draws the completion popup with its bottom edge at `bottom` (exclusive).
pub fn render_completion(state: &State, frame: &mut Frame<'_>, area: Rect, bottom: u16) {
    let Some(completion) = &state.completion else {
        return;
    };
    let rows = completion
        .items
        .len()
        .min(state.prefs.autocomplete_max_visible) as u16;
    if rows == 0 || bottom < area.y + rows {
        return;
    }
    let width = area.width.min(72);
    let popup = Rect {
        x: area.x,
        y: bottom - rows,
        width,
        height: rows,
    };
    let first = (completion.selected + 1).saturating_sub(rows as usize);
    let column = completion
        .items
        .iter()
        .map(|(shown, _, _)| shown.width())
        .max()
        .unwrap_or(0)
        .min(width as usize / 2);
    let lines: Vec<Line<'static>> = completion
        .items
        .iter()
        .enumerate()
        .skip(first)
        .take(rows as usize)
        .map(|(index, (shown, detail, _))| {
            let selected = index == completion.selected;
            let style = if selected {
                Style::default().add_modifier(Modifier::REVERSED)
            } else {
                Style::default()
            };
            let shown = truncate(shown, column);
            let pad = column.saturating_sub(shown.width());
            let detail_room = (width as usize).saturating_sub(column + 4);
            Line::from(vec![
                Span::styled(format!(" {shown}{} ", " ".repeat(pad)), style),
                Span::styled(
                    format!(" {}", truncate(detail, detail_room)),
                    Style::default().add_modifier(Modifier::DIM),
                ),
            ])
        })
        .collect();
    let cleared = Rect {
        width: area.width,
        ..popup
    };
    frame.render_widget(Clear, cleared);
    frame.render_widget(Paragraph::new(lines), popup);
}

/// The two footer lines: where (cwd, branch, session) and what (model, usage).
pub fn footer_lines(state: &State, width: usize) -> Vec<Line<'static>> {
    let dim = Style::default().add_modifier(Modifier::DIM);
    let mut place = state.environment.cwd_display.clone();
    if let Some(branch) = &state.environment.git_branch {
        place.push_str(&format!(" ({branch})"));
    }
    if let Some(session) = &state.session {
        // The short id `pictl attach` takes.
        place.push_str(&format!(" · {}", short_id(&session.id)));
        if let Some(name) = &session.name {
            place.push_str(&format!(" · {name}"));
        }
    }
    let usage = &state.usage;
    let mut stats = format!(
        "↑{} ↓{} ${:.3}",
        compact_number(usage.input),
        compact_number(usage.output),
        usage.cost
    );
    if let Some(model) = state.model()
        && model.context_window > 0
    {
        let percent = usage.context_tokens as f64 * 100.0 / model.context_window as f64;
        stats.push_str(&format!(
            " {percent:.1}%/{}",
            compact_number(model.context_window)
        ));
    }
    let model = match state
        .session
        .as_ref()
        .and_then(|session| session.model.as_ref())
    {
        Some(model) => format!("{}/{}", model.provider, model.id),
        None => "no model".to_owned(),
    };
    let mut right = format!("{model} · {}", state.thinking_level());
    if let Some(mcp) = mcp_indicator(state) {
        right = format!("{mcp} · {right}");
    }
    if let Some(lsp) = lsp_indicator(state) {
        right = format!("{lsp} · {right}");
    }
    if let Some(pools) = pools_indicator(state) {
        right = format!("{pools} · {right}");
    }
    if state.plan_mode {
        right = format!("plan · {right}");
    }
    let gap = width.saturating_sub(stats.width() + right.width());
    let second = if gap >= 2 {
        format!("{stats}{}{right}", " ".repeat(gap))
    } else {
        truncate(&format!("{stats} · {right}"), width)
    };
    let mut lines = widget_lines(state, false, width);
    lines.push(Line::from(Span::styled(truncate(&place, width), dim)));
    lines.push(Line::from(Span::styled(second, dim)));
    // Extensions' status texts, by key, as pi's footer shows them.
    if let Some(ui) = extension_ui(state)
        && !ui.statuses.is_empty()
    {
        let statuses: Vec<&str> = ui.statuses.values().map(String::as_str).collect();
        lines.push(Line::from(Span::styled(
            truncate(&statuses.join("  "), width),
            dim,
        )));
    }
    lines
}

/// The first 8 characters of a session id: unique enough for `pictl attach`.
pub fn short_id(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

fn trim_zero(text: String) -> String {
    text.strip_suffix(".0").map(str::to_owned).unwrap_or(text)
}

/// `1234` → `1.2k`, `1234567` → `1.2M`.
pub fn compact_number(number: u64) -> String {
    match number {
        0..1_000 => number.to_string(),
        1_000..1_000_000 => trim_zero(format!("{:.1}", number as f64 / 1_000.0)) + "k",
        _ => trim_zero(format!("{:.1}", number as f64 / 1_000_000.0)) + "M",
    }
}

/// `MCP 2/3` (ready of the servers this session uses), with `1 failed` when some failed.
fn mcp_indicator(state: &State) -> Option<String> {
    let session = state.session.as_ref()?;
    let ours: Vec<&pi_protocol::v1::McpServerStatus> = state
        .mcp_servers
        .iter()
        .filter(|server| server.sessions.contains(&session.id))
        .collect();
    if ours.is_empty() {
        return None;
    }
    let ready = ours.iter().filter(|server| server.state == "ready").count();
    let failed = ours
        .iter()
        .filter(|server| server.state == "failed")
        .count();
    Some(if failed > 0 {
        format!("MCP {ready}/{} ({failed} failed)", ours.len())
    } else {
        format!("MCP {ready}/{}", ours.len())
    })
}

/// `2 jobs · kernel busy`: what the attached session keeps running.
fn pools_indicator(state: &State) -> Option<String> {
    let session = state.session.as_ref()?;
    let running = state
        .jobs
        .iter()
        .filter(|job| job.session_id == session.id && job.state == "running")
        .count();
    let kernel = state
        .kernels
        .iter()
        .find(|kernel| kernel.session_id == session.id)
        .map(|kernel| format!("kernel {}", kernel.state));
    let jobs = match running {
        0 => None,
        1 => Some("1 job".to_owned()),
        count => Some(format!("{count} jobs")),
    };
    let parts: Vec<String> = jobs.into_iter().chain(kernel).collect();
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// `LSP 1/1` (ready of the language servers this session uses), with failures.
fn lsp_indicator(state: &State) -> Option<String> {
    let session = state.session.as_ref()?;
    let ours: Vec<&pi_protocol::v1::LspServerStatus> = state
        .lsp_servers
        .iter()
        .filter(|server| server.sessions.contains(&session.id))
        .collect();
    if ours.is_empty() {
        return None;
    }
    let ready = ours.iter().filter(|server| server.state == "ready").count();
    let failed = ours
        .iter()
        .filter(|server| server.state == "failed")
        .count();
    Some(if failed > 0 {
        format!("LSP {ready}/{} ({failed} failed)", ours.len())
    } else {
        format!("LSP {ready}/{}", ours.len())
    })
}
