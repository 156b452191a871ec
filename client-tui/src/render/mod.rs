//! `render(state, frame)`: draws the whole screen from the state, top to bottom: transcript,
//! status and queue lines, editor, footer; then the completion popup and any dialog on top.
//!
//! Architecture invariant: rendering reads the state and nothing else (no I/O, no clock);
//! the only thing it writes is its layout cache, which is memoization.

pub(crate) mod chrome;
mod dialogs;
mod highlight;
mod items;
mod markdown;
mod tools;
mod transcript;
mod wrap;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::widgets::Paragraph;

pub use chrome::compact_number;
pub use dialogs::{dialog_room, hotkeys_max_scroll};
pub use highlight::warm_up;
pub use items::image_cells;
pub use markdown::render_markdown;
pub use transcript::{Placement, placed_images, shown_scroll};

/// Draws the state into the frame.
pub fn render(state: &crate::state::State, frame: &mut Frame<'_>) {
    transcript::clear_placed_images();
    if tools::set_expand_key(
        state
            .keymap
            .keys(crate::keymap::Action::ExpandTools)
            .first()
            .map(crate::keymap::KeyChord::label),
    ) {
        transcript::forget_layouts();
    }
    let area = frame.area();
    if area.width < 4 || area.height < 6 {
        return;
    }
    let width = area.width as usize;
    let footer = chrome::footer_lines(state, width);
    let status = chrome::status_lines(state, width);
    let (editor_rows, _) = chrome::editor_rows(state, width);
    let editor_height = (editor_rows.len().min(chrome::EDITOR_MAX_ROWS) + 2) as u16;

    let footer_height = footer.len() as u16;
    // The transcript keeps at least two rows; status lines give way first.
    let budget = area
        .height
        .saturating_sub(footer_height + editor_height + 2);
    let status_height = (status.len() as u16).min(budget);
    let transcript_height = area
        .height
        .saturating_sub(footer_height + editor_height + status_height);

    let transcript_area = Rect {
        height: transcript_height,
        ..area
    };
    let status_area = Rect {
        y: area.y + transcript_height,
        height: status_height,
        ..area
    };
    let editor_area = Rect {
        y: status_area.y + status_height,
        height: editor_height,
        ..area
    };
    let footer_area = Rect {
        y: editor_area.y + editor_height,
        height: footer_height,
        ..area
    };

    transcript::render_transcript(state, frame, transcript_area);
    let skipped = status.len().saturating_sub(status_height as usize);
    frame.render_widget(
        Paragraph::new(status.into_iter().skip(skipped).collect::<Vec<_>>()),
        status_area,
    );
    chrome::render_editor(state, frame, editor_area);
    frame.render_widget(Paragraph::new(footer), footer_area);
    chrome::render_completion(state, frame, transcript_area, status_area.y);
    dialogs::render_overlay(state, frame, area);
    if state.overlay.is_some() || state.completion.is_some() {
        // Images would cover what is drawn over the transcript: none until it closes.
        transcript::clear_placed_images();
    }
    crate::theme::paint(frame.buffer_mut(), &state.theme, state.color_mode);
}
