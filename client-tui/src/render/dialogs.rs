//! Dialogs over the transcript: selectors (with their query line), the hotkey list, info
//! panels, questions, a login in progress and the loading placeholder.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::wrap::truncate;
use crate::commands_table::COMMANDS;
use crate::overlay::{Overlay, Selector};
use crate::state::State;

/// Draws the overlay, if any, centered in `area`.
pub fn render_overlay(state: &State, frame: &mut Frame<'_>, area: Rect) {
    let Some(overlay) = &state.overlay else {
        return;
    };
    let width = area.width.saturating_sub(4).min(90).max(20.min(area.width));
    let inner_width = width.saturating_sub(2) as usize;
    let (title, lines) = match overlay {
        Overlay::Select(selector) => (
            selector.title.clone(),
            selector_lines(
                selector,
                inner_width,
                area.height.saturating_sub(6) as usize,
            ),
        ),
        Overlay::Hotkeys { scroll } => {
            let lines = hotkey_lines(state, inner_width);
            let room = dialog_room(area.height);
            let first = (*scroll).min(lines.len().saturating_sub(room));
            let shown = lines.len().min(room);
            (
                if lines.len() > room {
                    format!(
                        "Keys and commands {}–{} of {}",
                        first + 1,
                        first + shown,
                        lines.len()
                    )
                } else {
                    "Keys and commands".to_owned()
                },
                lines.into_iter().skip(first).take(room).collect(),
            )
        }
        Overlay::Info { title, lines } => (
            title.clone(),
            // Wrapped, not cut: a panel may carry a server's error with its URL.
            lines
                .iter()
                .flat_map(|line| {
                    super::wrap::wrap_text(line, Style::default(), inner_width, &[], &[])
                })
                .collect(),
        ),
        Overlay::Question(question) => {
            // A title too long for the frame is written out whole above the choices.
            let title = question.title();
            let fits = title.chars().count() + 2 <= inner_width;
            let mut lines = if fits {
                Vec::new()
            } else {
                let mut wrapped = super::wrap::wrap_text(
                    title,
                    Style::default().add_modifier(Modifier::BOLD),
                    inner_width,
                    &[],
                    &[],
                );
                wrapped.push(Line::from(""));
                wrapped
            };
            let room = dialog_room(area.height).saturating_sub(lines.len());
            lines.extend(question_lines(question, inner_width, room));
            (
                if fits {
                    title.to_owned()
                } else {
                    truncate(title, inner_width.saturating_sub(2))
                },
                lines,
            )
        }
        Overlay::Login(dialog) => (
            if dialog.key_entry {
                format!("API key: {}", dialog.name)
            } else {
                format!("Log in: {}", dialog.name)
            },
            login_lines(dialog, inner_width),
        ),
        Overlay::Rename { text, .. } => ("Rename the session".to_owned(), vec![input_line(text)]),
        Overlay::LabelEdit { text, .. } => {
            ("Label (empty clears)".to_owned(), vec![input_line(text)])
        }
        Overlay::Loading { title, .. } => (
            title.clone(),
            vec![Line::from(Span::styled(
                "Loading…".to_owned(),
                Style::default().add_modifier(Modifier::DIM),
            ))],
        ),
    };
    let height = (lines.len() as u16 + 3).min(area.height);
    let dialog = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + area.height.saturating_sub(height) / 3,
        width,
        height,
    };
    let picker_keys;
    let footer = match overlay {
        // `/resume`: pi's keys for the list, as bound.
        Overlay::Select(selector)
            if selector.kind == crate::overlay::SelectorKind::Session
                && state.session_picker.is_some() =>
        {
            use crate::keymap::Action;
            let key = |action| {
                state
                    .keymap
                    .keys(action)
                    .first()
                    .map_or_else(|| "—".to_owned(), |chord| chord.label())
            };
            picker_keys = format!(
                " {} rename · {} delete · {} named · {} sort · {} paths ",
                key(Action::SessionRename),
                key(Action::SessionDelete),
                key(Action::SessionToggleNamedFilter),
                key(Action::SessionToggleSort),
                key(Action::SessionTogglePath)
            );
            picker_keys.as_str()
        }
        Overlay::Select(selector)
            if selector.kind == crate::overlay::SelectorKind::ScopedModels =>
        {
            " enter toggle · ctrl+a all · ctrl+x none · alt+↑↓ order · ctrl+s save · esc keep "
        }
        Overlay::Select(_) => " ↑↓ move · enter choose · esc close ",
        Overlay::Question(question) if question.choices.is_empty() => {
            " enter answer · esc dismiss "
        }
        Overlay::Question(question) if question.multiple() => {
            " ↑↓ move · space tick · enter send the ticked · esc dismiss "
        }
        Overlay::Question(_) => " ↑↓ move · enter answer · esc dismiss ",
        Overlay::Login(dialog) if dialog.prompt.is_some() => " enter send · esc cancel ",
        Overlay::Login(_) => " esc cancel ",
        Overlay::LabelEdit { .. } => " enter save · esc back to the tree ",
        Overlay::Rename { .. } => " enter rename · esc back ",
        Overlay::Hotkeys { .. } => " ↑↓ pgup pgdn scroll · esc close ",
        Overlay::Info { .. } | Overlay::Loading { .. } => " esc close ",
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(Style::default().fg(crate::theme::role(crate::theme::Role::Border)))
        .title(Span::styled(
            format!(" {title} "),
            Style::default().add_modifier(Modifier::BOLD),
        ))
        .title_bottom(Span::styled(
            footer.to_owned(),
            Style::default().add_modifier(Modifier::DIM),
        ));
    // Clear the dialog's rows edge to edge, so the transcript does not show beside it.
    frame.render_widget(
        Clear,
        Rect {
            x: area.x,
            width: area.width,
            ..dialog
        },
    );
    frame.render_widget(Paragraph::new(lines).block(block), dialog);
}

fn selector_lines(selector: &Selector, width: usize, max_rows: usize) -> Vec<Line<'static>> {
    let dim = Style::default().add_modifier(Modifier::DIM);
    let mut lines = vec![Line::from(vec![
        Span::styled(
            "> ".to_owned(),
            Style::default().fg(crate::theme::role(crate::theme::Role::Accent)),
        ),
        Span::raw(selector.query.clone()),
        Span::styled("▏".to_owned(), dim),
    ])];
    let rows = max_rows.max(1);
    let selected = selector.selected_position();
    let first = (selected + 1).saturating_sub(rows);
    if selector.visible_len() == 0 {
        lines.push(Line::from(Span::styled("No matches.".to_owned(), dim)));
    }
    for (position, item) in selector.visible().enumerate().skip(first).take(rows) {
        let is_selected = position == selected;
        let marker = match (item.current, item.on_path) {
            (true, _) => "● ",
            (false, true) => "• ",
            (false, false) => "  ",
        };
        let indent = item.indent.clone();
        let label_room = width.saturating_sub(marker.chars().count() + indent.chars().count() + 2);
        let label = truncate(&item.label, label_room);
        let label_style = if is_selected {
            Style::default().add_modifier(Modifier::REVERSED)
        } else {
            Style::default()
        };
        let detail_room = width.saturating_sub(
            marker.chars().count() + indent.chars().count() + label.chars().count() + 3,
        );
        let mut spans = vec![
            Span::styled(
                marker.to_owned(),
                Style::default().fg(crate::theme::role(crate::theme::Role::Success)),
            ),
            Span::styled(indent, dim),
            Span::styled(label, label_style),
        ];
        if !item.detail.is_empty() && detail_room > 3 {
            spans.push(Span::styled(
                format!("  {}", truncate(&item.detail, detail_room)),
                dim,
            ));
        }
        lines.push(Line::from(spans));
    }
    lines
}

/// A one-line text field: the prompt, the text, the drawn cursor.
fn input_line(text: &str) -> Line<'static> {
    Line::from(vec![
        Span::styled(
            "> ".to_owned(),
            Style::default().fg(crate::theme::role(crate::theme::Role::Accent)),
        ),
        Span::raw(text.to_owned()),
        Span::styled("▏".to_owned(), Style::default().add_modifier(Modifier::DIM)),
    ])
}

/// Rows a dialog on a terminal `height` rows high shows inside its frame (a page of
/// `/hotkeys`).
pub fn dialog_room(height: u16) -> usize {
    usize::from(height.saturating_sub(5)).max(1)
}

/// How far the hotkeys dialog scrolls at most on a terminal `height` rows high.
pub fn hotkeys_max_scroll(state: &State) -> usize {
    let width = state.size.0.saturating_sub(4).min(90) as usize;
    hotkey_lines(state, width.saturating_sub(2))
        .len()
        .saturating_sub(dialog_room(state.size.1))
}

/// `/hotkeys`: the effective keys (`keybindings.json` applied), by section as pi's, then
/// the extensions' keys and the commands.
fn hotkey_lines(state: &State, width: usize) -> Vec<Line<'static>> {
    use crate::keymap::{Action as A, BINDINGS, Context};
    let accent = Style::default().fg(crate::theme::role(crate::theme::Role::Accent));
    let heading = Style::default()
        .fg(crate::theme::role(crate::theme::Role::MdHeading))
        .add_modifier(Modifier::BOLD);
    let editing = |action: A| {
        matches!(
            action,
            A::DeleteCharBackward
                | A::DeleteCharForward
                | A::DeleteWordBackward
                | A::DeleteWordForward
                | A::DeleteToLineStart
                | A::DeleteToLineEnd
                | A::Yank
                | A::YankPop
                | A::Undo
                | A::Redo
                | A::NewLine
                | A::Submit
                | A::Tab
        )
    };
    type Belongs<'a> = &'a dyn Fn(&crate::keymap::Binding) -> bool;
    let sections: [(&str, Belongs<'_>); 7] = [
        ("Navigation", &|binding| {
            binding.context == Context::Main
                && binding.id.starts_with("tui.")
                && !editing(binding.action)
        }),
        ("Editing", &|binding| editing(binding.action)),
        ("App", &|binding| {
            binding.context == Context::Main && binding.id.starts_with("app.")
        }),
        ("Session tree", &|binding| binding.context == Context::Tree),
        ("Session picker (/resume)", &|binding| {
            binding.context == Context::Sessions
        }),
        ("Lists", &|binding| binding.context == Context::Select),
        ("Scoped models", &|binding| {
            binding.context == Context::Models
        }),
    ];
    let keys_of = |binding: &crate::keymap::Binding| -> String {
        state
            .keymap
            .keys(binding.action)
            .iter()
            .map(|key| key.label())
            .collect::<Vec<_>>()
            .join(" / ")
    };
    // The key column fits the longest keys, up to under half the width.
    let column = BINDINGS
        .iter()
        .filter(|binding| binding.active)
        .map(|binding| keys_of(binding).chars().count())
        .max()
        .unwrap_or(0)
        .clamp(14, (width * 9 / 20).max(14));
    let mut lines = Vec::new();
    for (title, belongs) in sections {
        let rows: Vec<Line<'static>> = BINDINGS
            .iter()
            .filter(|binding| binding.active && belongs(binding))
            .filter_map(|binding| {
                let keys = keys_of(binding);
                if keys.is_empty() {
                    return None;
                }
                Some(Line::from(vec![
                    Span::styled(format!("{:<column$} ", truncate(&keys, column)), accent),
                    Span::raw(truncate(
                        binding.description,
                        width.saturating_sub(column + 1),
                    )),
                ]))
            })
            .collect();
        if rows.is_empty() {
            continue;
        }
        if !lines.is_empty() {
            lines.push(Line::default());
        }
        lines.push(Line::from(Span::styled(title.to_owned(), heading)));
        lines.extend(rows);
    }
    lines.push(Line::default());
    lines.push(Line::from(Span::styled("Shell".to_owned(), heading)));
    lines.push(Line::from(vec![
        Span::styled(format!("{:<column$} ", "!cmd / !!cmd"), accent),
        Span::raw(truncate(
            "Run a shell command (!!: kept out of the context)",
            width.saturating_sub(column + 1),
        )),
    ]));
    if !state.shortcuts.is_empty() {
        lines.push(Line::default());
        lines.push(Line::from(Span::styled("Extensions".to_owned(), heading)));
        for (chord, key) in &state.shortcuts {
            lines.push(Line::from(vec![
                Span::styled(format!("{:<column$} ", chord.label()), accent),
                Span::raw(truncate(key, width.saturating_sub(column + 1))),
            ]));
        }
    }
    lines.push(Line::default());
    lines.push(Line::from(Span::styled("Commands".to_owned(), heading)));
    for (name, args, description) in COMMANDS {
        let command = format!("/{name} {args}");
        lines.push(Line::from(vec![
            Span::styled(format!("{:<24} ", command.trim_end()), accent),
            Span::raw(truncate(description, width.saturating_sub(25))),
        ]));
    }
    lines
}

/// A question: its message, then its choices (the selected one reversed) or the text typed.
/// The dialog's body: a confirmation's message, the text field, or the choices — as many as
/// `room` rows allow, around the highlighted one.
fn question_lines(
    question: &crate::overlay::Question,
    width: usize,
    room: usize,
) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    if let pi_protocol::v1::UiRequest::Confirm { message, .. } = &question.request.request {
        lines.extend(super::wrap::wrap_text(
            message,
            Style::default(),
            width,
            &[],
            &[],
        ));
        lines.push(Line::from(""));
    }
    if question.choices.is_empty() {
        lines.push(Line::from(vec![
            Span::styled(
                "> ".to_owned(),
                Style::default().fg(crate::theme::role(crate::theme::Role::Accent)),
            ),
            Span::raw(question.text.clone()),
            Span::styled("▏".to_owned(), Style::default().add_modifier(Modifier::DIM)),
        ]));
    }
    let rows = room.saturating_sub(lines.len()).max(1);
    let first = question
        .selected
        .map_or(0, |at| (at + 1).saturating_sub(rows))
        .min(question.choices.len().saturating_sub(rows));
    let hidden_above = first;
    let hidden_below = question.choices.len().saturating_sub(first + rows);
    for (index, choice) in question.choices.iter().enumerate().skip(first).take(rows) {
        // Arrows on the edge rows say more choices are out of sight.
        let edge = if index == first && hidden_above > 0 {
            "↑ "
        } else if index + 1 == first + rows && hidden_below > 0 {
            "↓ "
        } else {
            "  "
        };
        let style = if Some(index) == question.selected {
            Style::default().add_modifier(Modifier::REVERSED)
        } else {
            Style::default()
        };
        let mark = match question.checked.get(index) {
            Some(true) if question.multiple() => "[x] ",
            Some(false) if question.multiple() => "[ ] ",
            _ => "",
        };
        lines.push(Line::from(vec![
            Span::styled(
                edge.to_owned(),
                Style::default().add_modifier(Modifier::DIM),
            ),
            Span::styled(
                format!(
                    "{mark}{}",
                    truncate(choice, width.saturating_sub(2 + mark.len()))
                ),
                style,
            ),
        ]));
    }
    lines
}

/// A login in progress: the URL to open (whole, wrapped, so it can be copied), what to do
/// there, progress, then the prompt and the answer typed, or what it waits for.
fn login_lines(dialog: &crate::overlay::LoginDialog, width: usize) -> Vec<Line<'static>> {
    let dim = Style::default().add_modifier(Modifier::DIM);
    let accent = Style::default().fg(crate::theme::role(crate::theme::Role::Accent));
    let wrapped = |text: &str, style: Style| super::wrap::wrap_text(text, style, width, &[], &[]);
    let mut lines: Vec<Line<'static>> = Vec::new();
    if let Some(url) = &dialog.url {
        lines.extend(wrapped(
            "Open this URL in your browser (copied to the clipboard):",
            Style::default(),
        ));
        lines.extend(wrapped(url.as_str(), accent));
        if !dialog.instructions.is_empty() {
            lines.push(Line::default());
            lines.extend(wrapped(dialog.instructions.as_str(), Style::default()));
        }
    }
    if !dialog.progress.is_empty() {
        if !lines.is_empty() {
            lines.push(Line::default());
        }
        for message in &dialog.progress {
            lines.extend(wrapped(message.as_str(), dim));
        }
    }
    if !lines.is_empty() {
        lines.push(Line::default());
    }
    match &dialog.prompt {
        Some(prompt) => {
            let question = match &prompt.placeholder {
                Some(example) => format!("{} (e.g. {example})", prompt.message),
                None => prompt.message.clone(),
            };
            lines.extend(wrapped(
                question.as_str(),
                Style::default().add_modifier(Modifier::BOLD),
            ));
            // A key is never drawn: one dot per character.
            let shown = if dialog.key_entry {
                "•".repeat(dialog.text.chars().count())
            } else {
                dialog.text.clone()
            };
            lines.extend(super::wrap::wrap(
                &[Span::raw(shown), Span::styled("▏".to_owned(), dim)],
                width,
                &[Span::styled("> ".to_owned(), accent)],
                &[Span::raw("  ".to_owned())],
            ));
        }
        None => {
            let waiting = if dialog.login_id.is_none() {
                "Starting the login…"
            } else {
                "Waiting for the login to finish…"
            };
            lines.push(Line::from(Span::styled(waiting.to_owned(), dim)));
        }
    }
    lines
}
