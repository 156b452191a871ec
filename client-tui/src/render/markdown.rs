//! Markdown to terminal lines: headings, emphasis, inline code, links, lists (nested, ordered,
//! task lists), block quotes, rules, tables and fenced code blocks with syntax highlighting.
//! Output is wrapped to the given width, so its length is the rendered height.

use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr as _;

use super::highlight::highlight;
use super::wrap::{truncate, wrap};

/// Renders `text` as Markdown, `width` cells wide, code block lines indented with
/// `code_indent` (pi's `markdown.codeBlockIndent`; tabs count as four spaces).
pub fn render_markdown(text: &str, width: usize, code_indent: &str) -> Vec<Line<'static>> {
    let mut renderer = Renderer {
        width: width.max(8),
        code_indent: code_indent.replace('\t', "    "),
        lines: Vec::new(),
        inline: Vec::new(),
        styles: vec![Style::default()],
        lists: Vec::new(),
        quote_depth: 0,
        pending_item_marker: None,
        code: None,
        table: None,
        link_targets: Vec::new(),
    };
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    for event in Parser::new_ext(text, options) {
        renderer.event(event);
    }
    renderer.flush_paragraph();
    while renderer.lines.last().is_some_and(|line| line.width() == 0) {
        renderer.lines.pop();
    }
    renderer.lines
}

struct CodeBlock {
    language: String,
    text: String,
}

struct Table {
    alignments: Vec<Alignment>,
    rows: Vec<Vec<Vec<Span<'static>>>>,
    header_rows: usize,
}

struct Renderer {
    width: usize,
    code_indent: String,
    lines: Vec<Line<'static>>,
    // The paragraph (or heading, or table cell) being collected.
    inline: Vec<Span<'static>>,
    // Inline style stack; the top applies to text.
    styles: Vec<Style>,
    // One entry per open list: the next number for ordered lists.
    lists: Vec<Option<u64>>,
    quote_depth: usize,
    // The bullet of a list item whose first paragraph has not started yet.
    pending_item_marker: Option<String>,
    code: Option<CodeBlock>,
    table: Option<Table>,
    link_targets: Vec<String>,
}

impl Renderer {
    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => {
                if let Some(code) = &mut self.code {
                    code.text.push_str(&text);
                } else {
                    self.push_text(&text);
                }
            }
            Event::Code(code) => {
                let style = self
                    .style()
                    .fg(crate::theme::role(crate::theme::Role::MdCode));
                self.inline.push(Span::styled(code.to_string(), style));
            }
            Event::InlineMath(math) | Event::DisplayMath(math) => {
                self.push_text(&math);
            }
            Event::Html(html) | Event::InlineHtml(html) => {
                let style = self.style().add_modifier(Modifier::DIM);
                for (index, line) in html.lines().enumerate() {
                    if index > 0 {
                        self.flush_paragraph();
                    }
                    self.inline.push(Span::styled(line.to_owned(), style));
                }
            }
            Event::SoftBreak => self.push_text(" "),
            Event::HardBreak => self.flush_paragraph_tight(),
            Event::Rule => {
                self.flush_paragraph();
                let rule = "─".repeat(self.width.saturating_sub(self.indent_width()).min(80));
                let mut spans = self.prefix(false);
                spans.push(Span::styled(
                    rule,
                    Style::default().add_modifier(Modifier::DIM),
                ));
                self.lines.push(Line::from(spans));
                self.blank();
            }
            Event::TaskListMarker(done) => {
                self.inline
                    .push(Span::raw(if done { "[x] " } else { "[ ] " }.to_owned()));
            }
            Event::FootnoteReference(name) => {
                self.inline.push(Span::raw(format!("[^{name}]")));
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => {}
            Tag::Heading { level, .. } => {
                self.flush_paragraph();
                let style = match level {
                    HeadingLevel::H1 => Style::default()
                        .add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
                        .fg(crate::theme::role(crate::theme::Role::MdHeading)),
                    HeadingLevel::H2 => Style::default()
                        .add_modifier(Modifier::BOLD)
                        .fg(crate::theme::role(crate::theme::Role::MdHeading)),
                    _ => Style::default().add_modifier(Modifier::BOLD),
                };
                self.styles.push(style);
            }
            Tag::BlockQuote(_) => {
                self.flush_paragraph();
                self.quote_depth += 1;
            }
            Tag::CodeBlock(kind) => {
                self.flush_paragraph();
                let language = match kind {
                    CodeBlockKind::Fenced(language) => language.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some(CodeBlock {
                    language,
                    text: String::new(),
                });
            }
            Tag::List(start) => {
                self.flush_paragraph();
                self.lists.push(start);
            }
            Tag::Item => {
                self.flush_paragraph_tight();
                let marker = match self.lists.last_mut() {
                    Some(Some(number)) => {
                        let marker = format!("{number}. ");
                        *number += 1;
                        marker
                    }
                    _ => "• ".to_owned(),
                };
                self.pending_item_marker = Some(marker);
            }
            Tag::Table(alignments) => {
                self.flush_paragraph();
                self.table = Some(Table {
                    alignments,
                    rows: Vec::new(),
                    header_rows: 0,
                });
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(table) = &mut self.table {
                    table.rows.push(Vec::new());
                }
            }
            Tag::TableCell => self.inline.clear(),
            Tag::Emphasis => self.push_style(Modifier::ITALIC, None),
            Tag::Strong => self.push_style(Modifier::BOLD, None),
            Tag::Strikethrough => self.push_style(Modifier::CROSSED_OUT, None),
            Tag::Link { dest_url, .. } => {
                self.link_targets.push(dest_url.to_string());
                self.push_style(
                    Modifier::UNDERLINED,
                    Some(crate::theme::role(crate::theme::Role::MdLink)),
                );
            }
            Tag::Image { dest_url, .. } => {
                self.link_targets.push(dest_url.to_string());
                self.push_style(Modifier::ITALIC, None);
                self.inline.push(Span::raw("[image: ".to_owned()));
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => self.flush_paragraph(),
            TagEnd::Heading(level) => {
                let hashes = match level {
                    HeadingLevel::H1 | HeadingLevel::H2 => String::new(),
                    other => format!("{} ", "#".repeat(other as usize)),
                };
                if !hashes.is_empty() {
                    self.inline.insert(
                        0,
                        Span::styled(hashes, Style::default().add_modifier(Modifier::DIM)),
                    );
                }
                self.styles.pop();
                self.flush_paragraph();
            }
            TagEnd::BlockQuote(_) => {
                self.flush_paragraph();
                self.quote_depth = self.quote_depth.saturating_sub(1);
            }
            TagEnd::CodeBlock => {
                if let Some(code) = self.code.take() {
                    self.code_block(&code);
                }
            }
            TagEnd::List(_) => {
                self.flush_paragraph_tight();
                self.lists.pop();
                if self.lists.is_empty() {
                    self.blank();
                }
            }
            TagEnd::Item => self.flush_paragraph_tight(),
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    self.table_lines(&table);
                    self.blank();
                }
            }
            TagEnd::TableHead => {
                if let Some(table) = &mut self.table {
                    table.header_rows = table.rows.len();
                }
            }
            TagEnd::TableRow => {}
            TagEnd::TableCell => {
                let cell = std::mem::take(&mut self.inline);
                if let Some(row) = self.table.as_mut().and_then(|table| table.rows.last_mut()) {
                    row.push(cell);
                }
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                self.styles.pop();
            }
            TagEnd::Link => {
                self.styles.pop();
                if let Some(url) = self.link_targets.pop() {
                    let shown: String = self
                        .inline
                        .iter()
                        .map(|span| span.content.as_ref())
                        .collect();
                    if !shown.ends_with(&url) && !url.starts_with('#') {
                        self.inline.push(Span::styled(
                            format!(" ({url})"),
                            Style::default().add_modifier(Modifier::DIM),
                        ));
                    }
                }
            }
            TagEnd::Image => {
                self.styles.pop();
                let url = self.link_targets.pop().unwrap_or_default();
                self.inline.push(Span::raw(format!(" {url}]")));
            }
            _ => {}
        }
    }

    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }

    fn push_style(&mut self, modifier: Modifier, color: Option<Color>) {
        let mut style = self.style().add_modifier(modifier);
        if let Some(color) = color {
            style = style.fg(color);
        }
        self.styles.push(style);
    }

    fn push_text(&mut self, text: &str) {
        let style = self.style();
        self.inline.push(Span::styled(text.to_owned(), style));
    }

    fn indent_width(&self) -> usize {
        self.quote_depth * 2 + self.lists.len() * 2
    }

    /// The prefix of a line: quote bars, then list indentation (with the bullet on an item's
    /// first line).
    fn prefix(&mut self, first_line_of_item: bool) -> Vec<Span<'static>> {
        let mut spans = Vec::new();
        for _ in 0..self.quote_depth {
            spans.push(Span::styled(
                "│ ".to_owned(),
                Style::default().add_modifier(Modifier::DIM),
            ));
        }
        if !self.lists.is_empty() {
            let nesting = self.lists.len() - 1;
            if first_line_of_item && let Some(marker) = self.pending_item_marker.take() {
                spans.push(Span::raw("  ".repeat(nesting)));
                spans.push(Span::styled(
                    marker,
                    Style::default().fg(crate::theme::role(crate::theme::Role::MdListBullet)),
                ));
            } else {
                spans.push(Span::raw("  ".repeat(nesting + 1)));
            }
        }
        spans
    }

    fn flush_paragraph(&mut self) {
        if self.flush_inline() && self.lists.is_empty() {
            self.blank();
        }
    }

    fn flush_paragraph_tight(&mut self) {
        self.flush_inline();
    }

    /// Wraps and emits the collected inline spans; `true` if anything was emitted.
    fn flush_inline(&mut self) -> bool {
        if self.inline.is_empty() && self.pending_item_marker.is_none() {
            return false;
        }
        let spans = std::mem::take(&mut self.inline);
        let first = self.prefix(true);
        let rest = self.prefix(false);
        let quote_style =
            (self.quote_depth > 0).then(|| Style::default().add_modifier(Modifier::ITALIC));
        let spans: Vec<Span<'static>> = match quote_style {
            Some(style) => spans
                .into_iter()
                .map(|span| span.patch_style(style))
                .collect(),
            None => spans,
        };
        self.lines.extend(wrap(&spans, self.width, &first, &rest));
        true
    }

    fn blank(&mut self) {
        if self.lines.last().is_some_and(|line| line.width() > 0) {
            self.lines.push(Line::default());
        }
    }

    fn code_block(&mut self, code: &CodeBlock) {
        let dim = Style::default().add_modifier(Modifier::DIM);
        let mut fence = self.prefix(false);
        fence.push(Span::styled(format!("```{}", code.language), dim));
        self.lines.push(Line::from(fence));
        let text = code.text.trim_end_matches('\n');
        for spans in highlight(text, &code.language) {
            let mut line = self.prefix(false);
            line.push(Span::raw(self.code_indent.clone()));
            // Code is not word-wrapped: long lines wrap by characters with the same indent.
            let indent = line.clone();
            let mut expanded: Vec<Span<'static>> = Vec::new();
            for span in spans {
                expanded.push(Span::styled(span.content.replace('\t', "    "), span.style));
            }
            self.lines
                .extend(wrap(&expanded, self.width, &line, &indent));
        }
        let mut fence = self.prefix(false);
        fence.push(Span::styled("```".to_owned(), dim));
        self.lines.push(Line::from(fence));
        if self.lists.is_empty() {
            self.blank();
        }
    }

    fn table_lines(&mut self, table: &Table) {
        let columns = table.rows.iter().map(Vec::len).max().unwrap_or(0);
        if columns == 0 {
            return;
        }
        let cell_text = |cell: &Vec<Span<'static>>| -> String {
            cell.iter().map(|span| span.content.as_ref()).collect()
        };
        let mut widths = vec![1usize; columns];
        for row in &table.rows {
            for (index, cell) in row.iter().enumerate() {
                widths[index] = widths[index].max(cell_text(cell).width());
            }
        }
        // Shrink the widest columns until the table fits.
        let available = self
            .width
            .saturating_sub(self.indent_width() + 3 * columns + 1);
        while widths.iter().sum::<usize>() > available {
            let Some(widest) = widths.iter_mut().max() else {
                break;
            };
            if *widest <= 3 {
                break;
            }
            *widest -= 1;
        }
        let dim = Style::default().add_modifier(Modifier::DIM);
        let border = |left: &str, middle: &str, right: &str| -> Span<'static> {
            let parts: Vec<String> = widths.iter().map(|width| "─".repeat(width + 2)).collect();
            Span::styled(format!("{left}{}{right}", parts.join(middle)), dim)
        };
        let mut top = self.prefix(false);
        top.push(border("┌", "┬", "┐"));
        self.lines.push(Line::from(top));
        for (row_index, row) in table.rows.iter().enumerate() {
            let mut spans = self.prefix(false);
            spans.push(Span::styled("│".to_owned(), dim));
            for (index, width) in widths.iter().enumerate() {
                let cell = row.get(index).cloned().unwrap_or_default();
                let style = cell.first().map(|span| span.style).unwrap_or_default();
                let style = if row_index < table.header_rows {
                    style.add_modifier(Modifier::BOLD)
                } else {
                    style
                };
                let text = truncate(&cell_text(&cell), *width);
                let pad = width.saturating_sub(text.width());
                let (left, right) = match table.alignments.get(index) {
                    Some(Alignment::Right) => (pad, 0),
                    Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                    _ => (0, pad),
                };
                spans.push(Span::styled(
                    format!(" {}{text}{} ", " ".repeat(left), " ".repeat(right)),
                    style,
                ));
                spans.push(Span::styled("│".to_owned(), dim));
            }
            self.lines.push(Line::from(spans));
            if row_index + 1 == table.header_rows && table.rows.len() > table.header_rows {
                let mut separator = self.prefix(false);
                separator.push(border("├", "┼", "┤"));
                self.lines.push(Line::from(separator));
            }
        }
        let mut bottom = self.prefix(false);
        bottom.push(border("└", "┴", "┘"));
        self.lines.push(Line::from(bottom));
    }
}
