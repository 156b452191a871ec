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

use super::items::{ImageSlot, item_layout, item_lines, streaming_lines};
use crate::keymap::Action;
use crate::state::{State, ViewOptions};
use crate::transcript::{ItemKind, ToolStatus};

/// Cached layouts of transcript items; lives in the state, written only by rendering.
#[derive(Clone, Debug, Default)]
pub struct LayoutCache {
    items: Vec<Option<CachedItem>>,
    /// The largest useful scroll offset seen by the last frame (for clamping scrolls).
    pub max_scroll: usize,
    // The line at the top of the last frame, while scrolled up.
    anchor: Option<Anchor>,
    // (the state's scroll offset, the offset the last frame showed): they differ while an
    // anchor holds the view in place as output arrives.
    shown_scroll: (usize, usize),
    // The images the last frame left room for, wholly on screen.
    placed: Vec<Placement>,
}

/// An image the last frame left room for: its top-left cell and size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Column of its top-left cell.
    pub x: u16,
    /// Row of its top-left cell.
    pub y: u16,
    /// Width in cells.
    pub cols: u16,
    /// Height in cells.
    pub rows: u16,
    /// The image.
    pub picture: crate::transcript::Picture,
}

/// The item line at the top of the viewport, and the scroll offset that showed it.
#[derive(Clone, Copy, Debug)]
struct Anchor {
    item: usize,
    line: usize,
    // The state's scroll offset and scroll serial when the anchor was set.
    requested: (usize, u64),
}

#[derive(Clone, Debug)]
struct CachedItem {
    key: (u64, usize, ViewOptions, usize),
    lines: Vec<Line<'static>>,
    images: Vec<ImageSlot>,
}

thread_local! {
    // Per-thread cache keyed by nothing but the state it was built from (see the invariant):
    // a `State` is rendered from one thread, and a fresh thread starts cold.
    static CACHE: RefCell<LayoutCache> = RefCell::new(LayoutCache::default());
}

/// Drops the cached item layouts (something they show changed: the expand key).
pub(crate) fn forget_layouts() {
    CACHE.with(|cache| cache.borrow_mut().items.clear());
}

/// pi's startup header over an empty transcript: the name, the main keys, and what the
/// session loaded (`[Context]`, `[Skills]`, `[Prompts]`, `[Extensions]`); nothing with
/// `quietStartup` (unless `--verbose`).
fn header_lines(state: &State, width: usize) -> Vec<Line<'static>> {
    if state.prefs.quiet_startup {
        return Vec::new();
    }
    let dim = Style::default().add_modifier(Modifier::DIM);
    let mut lines = vec![
        Line::from(Span::styled(
            "pi".to_owned(),
            Style::default().add_modifier(Modifier::BOLD),
        )),
        Line::from(Span::styled(
            hints(
                state,
                &[(Action::Submit, "send"), (Action::NewLine, "newline")],
                &["/ commands", "@ files"],
                &[],
            ),
            dim,
        )),
        Line::from(Span::styled(
            hints(
                state,
                &[
                    (Action::HistorySearch, "history"),
                    (Action::SelectModel, "model"),
                ],
                &["/hotkeys all keys"],
                &[(Action::Exit, "detach")],
            ),
            dim,
        )),
    ];
    let home = state.environment.home.as_str();
    let shown_path = |path: &str| match path.strip_prefix(home) {
        Some(rest) if !home.is_empty() && (rest.is_empty() || rest.starts_with('/')) => {
            format!("~{rest}")
        }
        _ => path.to_owned(),
    };
    let named = |source: &str| -> Vec<String> {
        let mut names: Vec<String> = state
            .session_commands
            .iter()
            .filter(|command| command.source == source)
            .map(|command| match source {
                "skill" => command.name.trim_start_matches("skill:").to_owned(),
                _ => format!("/{}", command.name),
            })
            .collect();
        names.sort();
        names
    };
    let extensions: Vec<String> = state
        .loaded
        .extensions
        .iter()
        .map(|path| shown_path(path))
        .collect();
    let sections = [
        (
            "Context",
            state
                .loaded
                .context_files
                .iter()
                .map(|path| shown_path(path))
                .collect::<Vec<_>>(),
        ),
        ("Skills", named("skill")),
        ("Prompts", named("template")),
        ("Extensions", extensions),
        ("Themes", state.loaded.themes.clone()),
    ];
    for (title, items) in sections {
        if items.is_empty() {
            continue;
        }
        lines.push(Line::default());
        lines.push(Line::from(Span::styled(
            format!("[{title}]"),
            Style::default().fg(crate::theme::role(crate::theme::Role::MdHeading)),
        )));
        lines.extend(super::wrap::wrap_text(
            &items.join(", "),
            dim,
            width,
            &[Span::raw("  ".to_owned())],
            &[Span::raw("  ".to_owned())],
        ));
    }
    lines
}

/// The images the last frame drew room for (wholly visible, no dialog over them): where the
/// terminal's graphics protocol is to draw them.
pub fn placed_images() -> Vec<Placement> {
    CACHE.with(|cache| cache.borrow().placed.clone())
}

/// Forgets the last frame's images (a frame without a transcript, or with a dialog over it).
pub fn clear_placed_images() {
    CACHE.with(|cache| cache.borrow_mut().placed.clear());
}

/// Draws the transcript into `area`.
pub fn render_transcript(state: &State, frame: &mut Frame<'_>, area: Rect) {
    clear_placed_images();
    let width = area.width as usize;
    let height = area.height as usize;
    if width == 0 || height == 0 {
        return;
    }
    let view = ViewOptions {
        scroll_from_bottom: 0,
        scroll_serial: 0,
        ..state.view.clone()
    };
    let items = state.transcript.items();
    // A session without messages yet: pi's header, then any notices (warnings at start).
    let only_notices = items.iter().all(|item| match &item.kind {
        ItemKind::Notice { .. } => true,
        // The changelog, at the start or asked for, keeps the header above it.
        ItemKind::Custom { custom_type, .. } => custom_type == crate::changelog::TITLE,
        _ => false,
    });
    if only_notices && state.transcript.streaming().is_none() && state.session.is_some() {
        let mut header = header_lines(state, width);
        for item in items {
            header.extend(item_lines(item, width, &view, state.spinner));
        }
        let top = area.y + area.height.saturating_sub(header.len() as u16 + 1);
        let skipped = header.len().saturating_sub(usize::from(area.height));
        frame.render_widget(
            Paragraph::new(header.into_iter().skip(skipped).collect::<Vec<_>>()),
            Rect {
                y: top,
                height: area.y + area.height - top,
                ..area
            },
        );
        return;
    }
    let requested = state.view.scroll_from_bottom;

    // Lines from the bottom up, as (chunk, line index) so only visible lines get cloned.
    let streaming = state
        .transcript
        .streaming()
        .map(|message| streaming_lines(message, width, &view, state.spinner));
    let (window, more_below) = CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        cache.items.resize(items.len(), None);
        // Reading scrolled up while output arrives: keep the same line at the top. The anchor
        // holds while the user has not scrolled since the frame that set it.
        let anchor = cache.anchor.filter(|anchor| {
            requested > 0
                && anchor.requested == (requested, state.view.scroll_serial)
                && anchor.item < items.len()
        });
        let mut wanted = height + requested;
        let mut anchored_scroll = None;
        let mut chunks: Vec<(Option<usize>, usize)> = Vec::new();
        let mut collected = 0;
        if let Some(lines) = &streaming {
            chunks.push((None, lines.len()));
            collected += lines.len();
        }
        let mut index = items.len();
        while index > 0 && (collected < wanted || anchor.is_some_and(|anchor| index > anchor.item))
        {
            index -= 1;
            let item = &items[index];
            let running_tool = matches!(
                &item.kind,
                ItemKind::Tool(tool) if tool.status == ToolStatus::Running
            );
            let key = (
                item.revision(),
                width,
                view.clone(),
                if running_tool { state.spinner % 4 } else { 0 },
            );
            let fresh = cache.items[index]
                .as_ref()
                .is_some_and(|cached| cached.key == key);
            if !fresh {
                let (lines, images) = item_layout(item, width, &view, state.spinner);
                cache.items[index] = Some(CachedItem { key, lines, images });
            }
            let len = cache.items[index]
                .as_ref()
                .map_or(0, |cached| cached.lines.len());
            chunks.push((Some(index), len));
            collected += len;
            if let Some(anchor) = anchor
                && anchor.item == index
            {
                let below_anchor = collected - anchor.line.min(len);
                let scroll = below_anchor.saturating_sub(height);
                anchored_scroll = Some(scroll);
                wanted = height + scroll;
            }
        }
        let reached_top = index == 0;
        let max_scroll = if reached_top {
            collected.saturating_sub(height)
        } else {
            usize::MAX
        };
        let scroll = anchored_scroll.unwrap_or(requested).min(max_scroll);
        // Skip `scroll` lines from the bottom, then take `height` lines.
        let mut window: Vec<Line<'static>> = Vec::with_capacity(height);
        let mut skip = scroll;
        let mut top_line = None;
        // Images wholly in the window: (lines from the window's bottom to the image's last
        // line, exclusive of it..., the slot), positioned once the window's length is known.
        let mut images: Vec<(usize, ImageSlot)> = Vec::new();
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
            if let Some(index) = chunk
                && let Some(cached) = &cache.items[*index]
            {
                for slot in &cached.images {
                    let last = slot.line + usize::from(slot.rows);
                    if slot.line >= start && last <= end {
                        // Lines of the window below the image's bottom.
                        images.push((window.len() + (end - last), slot.clone()));
                    }
                }
            }
            for line in lines[start..end].iter().rev() {
                window.push(line.clone());
            }
            if start < end {
                top_line = Some((*chunk, start));
            }
            if window.len() >= height {
                break;
            }
        }
        window.reverse();
        // Short transcripts sit at the bottom, next to the editor.
        let top = area.y + (height - window.len().min(height)) as u16;
        cache.placed = images
            .into_iter()
            .map(|(below, slot)| Placement {
                // Under the tool's output, which is indented two columns.
                x: area.x + 2,
                y: top + (window.len() - below - usize::from(slot.rows)) as u16,
                cols: slot.cols,
                rows: slot.rows,
                picture: slot.picture,
            })
            .collect();
        cache.max_scroll = max_scroll;
        cache.anchor = match top_line {
            Some((Some(item), line)) if scroll > 0 => Some(Anchor {
                item,
                line,
                requested: (requested, state.view.scroll_serial),
            }),
            _ => None,
        };
        cache.shown_scroll = (requested, scroll);
        (window, scroll)
    });
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

/// Where scrolling from `requested` really starts: the offset the last frame showed (an
/// anchored view shows more lines below than requested), clamped to the largest offset it
/// allowed.
pub fn shown_scroll(requested: usize) -> usize {
    CACHE.with(|cache| {
        let cache = cache.borrow();
        let (last_requested, shown) = cache.shown_scroll;
        let current = if last_requested == requested {
            shown
        } else {
            requested
        };
        current.min(cache.max_scroll)
    })
}

/// The startup header's key hints: each action's first key as `keybindings.json` left it
/// (an action without a key is left out), with fixed hints between.
fn hints(
    state: &State,
    before: &[(Action, &str)],
    fixed: &[&str],
    after: &[(Action, &str)],
) -> String {
    let keyed = |actions: &[(Action, &str)]| -> Vec<String> {
        actions
            .iter()
            .filter_map(|(action, what)| {
                let key = state.keymap.keys(*action).first()?;
                Some(format!("{} {what}", key.label()))
            })
            .collect()
    };
    let mut parts = keyed(before);
    parts.extend(fixed.iter().map(|hint| (*hint).to_owned()));
    parts.extend(keyed(after));
    parts.join(" · ")
}
