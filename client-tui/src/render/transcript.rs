//! The transcript viewport: virtual scrolling over cached item layouts.
//!
//! Each item's wrapped lines are cached by (item revision, width, view toggles, spinner
//! frame for running tools). A frame walks items from the bottom only until the viewport
//! (plus the scroll offset) is filled, so drawing a 10,000-message session costs about as
//! much as drawing a short one once layouts are cached.
//!
//! Invariant: the cache is memoization only: the lines drawn are exactly
//! `items::item_lines(item, ...)` for the same inputs, cached or not.

use std::cell::RefCell;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::items::{item_lines, streaming_lines};
use crate::state::{State, ViewOptions};
use crate::transcript::{ItemKind, ToolStatus};

/// Cached layouts of transcript items; lives in the state, written only by rendering.
#[derive(Clone, Debug, Default)]
pub struct LayoutCache {
    items: Vec<Option<CachedItem>>,
    /// The largest useful scroll offset seen by the last frame (for clamping scrolls).
    pub max_scroll: usize,
}

#[derive(Clone, Debug)]
struct CachedItem {
    key: (u64, usize, ViewOptions, usize),
    lines: Vec<Line<'static>>,
}

thread_local! {
    // Per-thread cache keyed by nothing but the state it was built from (see the invariant):
    // a `State` is rendered from one thread, and a fresh thread starts cold.
    static CACHE: RefCell<LayoutCache> = RefCell::new(LayoutCache::default());
}

/// Draws the transcript into `area`.
pub fn render_transcript(state: &State, frame: &mut Frame<'_>, area: Rect) {
    let width = area.width as usize;
    let height = area.height as usize;
    if width == 0 || height == 0 {
        return;
    }
    let view = ViewOptions {
        scroll_from_bottom: 0,
        ..state.view
    };
    let items = state.transcript.items();
    if items.is_empty() && state.transcript.streaming().is_none() && state.session.is_some() {
        let dim = Style::default().add_modifier(Modifier::DIM);
        let welcome = vec![
            Line::from(Span::styled(
                "pi".to_owned(),
                Style::default().add_modifier(Modifier::BOLD),
            )),
            Line::from(Span::styled(
                "enter send · shift+enter newline · / commands · @ files".to_owned(),
                dim,
            )),
            Line::from(Span::styled(
                "ctrl+r history · ctrl+l model · /hotkeys all keys · ctrl+d detach".to_owned(),
                dim,
            )),
        ];
        let top = area.y + area.height.saturating_sub(welcome.len() as u16 + 1);
        frame.render_widget(
            Paragraph::new(welcome),
            Rect {
                y: top,
                height: area.y + area.height - top,
                ..area
            },
        );
        return;
    }
    let wanted = height + state.view.scroll_from_bottom;

    // Lines from the bottom up, as (chunk, line index) so only visible lines get cloned.
    let streaming = state
        .transcript
        .streaming()
        .map(|message| streaming_lines(message, width, view, state.spinner));
    let (window, more_below, max_scroll) = CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        cache.items.resize(items.len(), None);
        let mut chunks: Vec<(Option<usize>, usize)> = Vec::new();
        let mut collected = 0;
        if let Some(lines) = &streaming {
            chunks.push((None, lines.len()));
            collected += lines.len();
        }
        let mut index = items.len();
        while collected < wanted && index > 0 {
            index -= 1;
            let item = &items[index];
            let running_tool = matches!(
                &item.kind,
                ItemKind::Tool(tool) if tool.status == ToolStatus::Running
            );
            let key = (
                item.revision(),
                width,
                view,
                if running_tool { state.spinner % 4 } else { 0 },
            );
            let fresh = cache.items[index]
                .as_ref()
                .is_some_and(|cached| cached.key == key);
            if !fresh {
                cache.items[index] = Some(CachedItem {
                    key,
                    lines: item_lines(item, width, view, state.spinner),
                });
            }
            let len = cache.items[index]
                .as_ref()
                .map_or(0, |cached| cached.lines.len());
            chunks.push((Some(index), len));
            collected += len;
        }
        let reached_top = index == 0;
        let max_scroll = if reached_top {
            collected.saturating_sub(height)
        } else {
            usize::MAX
        };
        let scroll = state.view.scroll_from_bottom.min(max_scroll);
        // Skip `scroll` lines from the bottom, then take `height` lines.
        let mut window: Vec<Line<'static>> = Vec::with_capacity(height);
        let mut skip = scroll;
        for (chunk, len) in &chunks {
            let lines: &[Line<'static>] = match chunk {
                None => streaming.as_deref().unwrap_or_default(),
                Some(index) => cache.items[*index]
                    .as_ref()
                    .map(|cached| cached.lines.as_slice())
                    .unwrap_or_default(),
            };
            let end = len.saturating_sub(skip);
            skip = skip.saturating_sub(*len);
            let start = end.saturating_sub(height - window.len());
            for line in lines[start..end].iter().rev() {
                window.push(line.clone());
            }
            if window.len() >= height {
                break;
            }
        }
        window.reverse();
        cache.max_scroll = max_scroll;
        (window, scroll, max_scroll)
    });
    let _ = max_scroll;
    // Short transcripts sit at the bottom, next to the editor.
    let top = area.y + (height - window.len().min(height)) as u16;
    let draw_area = Rect {
        y: top,
        height: window.len() as u16,
        ..area
    };
    frame.render_widget(Paragraph::new(window), draw_area);
    if more_below > 0 {
        let label = format!(" ↓ {more_below} more lines (esc to follow) ");
        let label_width = label.chars().count() as u16;
        let indicator = Rect {
            x: area.x + area.width.saturating_sub(label_width),
            y: area.y + area.height - 1,
            width: label_width.min(area.width),
            height: 1,
        };
        frame.render_widget(
            Paragraph::new(Line::from(Span::styled(
                label,
                Style::default().add_modifier(Modifier::REVERSED),
            ))),
            indicator,
        );
    }
}

/// The largest scroll offset the last frame allowed (`usize::MAX` when it did not reach the
/// top of the transcript).
pub fn max_scroll() -> usize {
    CACHE.with(|cache| cache.borrow().max_scroll)
}
