//! Word wrapping of styled text to a width in terminal cells, with prefixes for the first and
//! following lines (bullets, quote bars, indentation). Exact, so heights are known before
//! drawing, which the transcript's virtual scrolling relies on.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::{UnicodeWidthChar as _, UnicodeWidthStr as _};

/// Wraps `spans` (no newlines inside) to `width` cells. `first` prefixes the first line and
/// `rest` the others; both count toward the width.
pub fn wrap(
    spans: &[Span<'static>],
    width: usize,
    first: &[Span<'static>],
    rest: &[Span<'static>],
) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let mut current: Vec<Span<'static>> = first.to_vec();
    let mut used = spans_width(first);
    let mut limit = width.max(spans_width(first) + 1);
    let rest_width = spans_width(rest);
    let mut line_has_text = false;

    // Split into words and runs of spaces, keeping styles.
    let mut pieces: Vec<(String, Style, bool)> = Vec::new();
    for span in spans {
        let mut word = String::new();
        let mut in_space = None;
        for c in span.content.chars() {
            let is_space = c == ' ';
            if in_space.is_some_and(|was| was != is_space) {
                pieces.push((
                    std::mem::take(&mut word),
                    span.style,
                    in_space == Some(true),
                ));
            }
            in_space = Some(is_space);
            word.push(c);
        }
        if !word.is_empty() {
            pieces.push((word, span.style, in_space == Some(true)));
        }
    }

    let new_line = |current: &mut Vec<Span<'static>>,
                    used: &mut usize,
                    limit: &mut usize,
                    lines: &mut Vec<Line<'static>>| {
        lines.push(Line::from(std::mem::replace(current, rest.to_vec())));
        *used = rest_width;
        *limit = width.max(rest_width + 1);
    };

    for (text, style, is_space) in pieces {
        let text_width = text.width();
        if is_space {
            // Leading spaces of the first line are indentation (code, diffs): keep them.
            // Spaces where a line was wrapped are dropped.
            let leading = !line_has_text && lines.is_empty();
            if (line_has_text || leading) && used + text_width <= limit {
                current.push(Span::styled(text, style));
                used += text_width;
            } else if line_has_text {
                new_line(&mut current, &mut used, &mut limit, &mut lines);
                line_has_text = false;
            }
            continue;
        }
        if used + text_width > limit && line_has_text {
            // Drop trailing spaces before breaking.
            while current.last().is_some_and(|span| {
                span.content.chars().all(|c| c == ' ') && !span.content.is_empty()
            }) {
                if let Some(span) = current.pop() {
                    used -= span.content.width();
                }
            }
            new_line(&mut current, &mut used, &mut limit, &mut lines);
        }
        if used + text_width <= limit {
            current.push(Span::styled(text, style));
            used += text_width;
            line_has_text = true;
            continue;
        }
        // A word longer than a line: break it by characters.
        let mut chunk = String::new();
        for c in text.chars() {
            let char_width = c.width().unwrap_or(0);
            if used + char_width > limit && (line_has_text || !chunk.is_empty()) {
                if !chunk.is_empty() {
                    current.push(Span::styled(std::mem::take(&mut chunk), style));
                }
                new_line(&mut current, &mut used, &mut limit, &mut lines);
            }
            chunk.push(c);
            used += char_width;
            line_has_text = true;
        }
        if !chunk.is_empty() {
            current.push(Span::styled(chunk, style));
        }
    }
    lines.push(Line::from(current));
    lines
}

/// Wraps plain text with one style, honouring newlines.
pub fn wrap_text(
    text: &str,
    style: Style,
    width: usize,
    first: &[Span<'static>],
    rest: &[Span<'static>],
) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    for (index, line) in text.split('\n').enumerate() {
        let prefix = if index == 0 { first } else { rest };
        let line = line.replace('\t', "    ");
        lines.extend(wrap(&[Span::styled(line, style)], width, prefix, rest));
    }
    lines
}

/// Width in cells of spans.
pub fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|span| span.content.width()).sum()
}

/// Cuts a string to at most `width` cells, adding `…` when cut.
pub fn truncate(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let char_width = c.width().unwrap_or(0);
        if used + char_width + 1 > width {
            break;
        }
        out.push(c);
        used += char_width;
    }
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|line| line.to_string()).collect()
    }

    #[test]
    fn wraps_words_breaks_long_ones_and_keeps_prefixes() {
        let spans = [Span::raw(
            "the quick brown fox jumps over averyveryverylongword end",
        )];
        let lines = wrap(&spans, 12, &[Span::raw("- ")], &[Span::raw("  ")]);
        assert_eq!(
            texts(&lines),
            [
                "- the quick",
                "  brown fox",
                "  jumps over",
                "  averyveryv",
                "  erylongwor",
                "  d end"
            ]
        );
        assert!(lines.iter().all(|line| line.width() <= 12));
        assert_eq!(texts(&wrap(&[], 10, &[], &[])), [""]);
        assert_eq!(truncate("héllo wörld", 6), "héllo…");
    }
}
