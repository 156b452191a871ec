//! What `pictl` writes: JSON lines, aligned tables for humans, times, and colour.
//!
//! Colour is used only when stdout is a terminal and `NO_COLOR` is unset or empty (and never
//! in `--json` output). Human times are UTC (`2026-03-15 10:20`), so output does not depend on
//! the machine's time zone.

use std::io::{IsTerminal as _, Write as _};

use pi_util::time::iso_from_millis;
use serde_json::Value;

/// Writes one JSON value as a line on stdout.
pub fn print_json(value: &Value) {
    print_line(&value.to_string());
}

/// Writes one line on stdout. A closed stdout (`pictl ... | head`) ends output quietly.
pub fn print_line(line: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{line}");
}

/// Writes text without a newline and flushes (streaming output).
pub fn print_text(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}

/// Writes one line on stderr (status sentences, warnings).
pub fn eprint_line(line: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{line}");
}

/// Whether stdout gets colour: a terminal, and `NO_COLOR` unset or empty.
pub fn colour_enabled() -> bool {
    let no_colour = std::env::var_os("NO_COLOR").is_some_and(|value| !value.is_empty());
    !no_colour && std::io::stdout().is_terminal()
}

/// Named ANSI styles for human output.
#[derive(Clone, Copy, Debug)]
pub struct Style {
    enabled: bool,
}

impl Style {
    /// Styles for stdout (see [`colour_enabled`]).
    pub fn stdout() -> Style {
        Style {
            enabled: colour_enabled(),
        }
    }

    /// Secondary text.
    pub fn dim(self, text: &str) -> String {
        self.wrap("2", text)
    }

    /// Headers.
    pub fn bold(self, text: &str) -> String {
        self.wrap("1", text)
    }

    /// Failures.
    pub fn red(self, text: &str) -> String {
        self.wrap("31", text)
    }

    /// Success.
    pub fn green(self, text: &str) -> String {
        self.wrap("32", text)
    }

    /// Tool calls.
    pub fn cyan(self, text: &str) -> String {
        self.wrap("36", text)
    }

    fn wrap(self, code: &str, text: &str) -> String {
        if self.enabled {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }
}

/// A table for humans: a header row and left-aligned columns separated by two spaces.
#[derive(Debug, Default)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column names.
    pub fn new(header: &[&str]) -> Table {
        Table {
            header: header.iter().map(|name| (*name).to_owned()).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row (one cell per column).
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// Renders the table; the header is bold when `style` is enabled. Trailing spaces are
    /// trimmed from every line.
    pub fn render(&self, style: Style) -> String {
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (index, cell) in row.iter().enumerate() {
                if let Some(width) = widths.get_mut(index) {
                    *width = (*width).max(cell.chars().count());
                }
            }
        }
        let line = |cells: &[String]| {
            let mut text = String::new();
            for (index, cell) in cells.iter().enumerate() {
                let width = widths.get(index).copied().unwrap_or(0);
                let pad = width.saturating_sub(cell.chars().count());
                text.push_str(cell);
                text.push_str(&" ".repeat(pad + 2));
            }
            text.trim_end().to_owned()
        };
        let mut out = style.bold(&line(&self.header));
        out.push('\n');
        for row in &self.rows {
            out.push_str(&line(row));
            out.push('\n');
        }
        out
    }
}

/// Unix milliseconds as `YYYY-MM-DD HH:MM` (UTC).
pub fn human_time(millis: i64) -> String {
    let iso = iso_from_millis(millis);
    format!("{} {}", &iso[..10], &iso[11..16])
}

/// Shortens `text` to one line of at most `max` characters, ending in `…` when cut.
pub fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let mut cut: String = flat.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// A line for a person following a run on a terminal: a tool starting (`→ bash ls`) and
/// ending (`✓ bash`, `✗ bash: the error`), a retry with its wait; `None` for other events.
pub fn progress_notice(event: &pi_protocol::v1::SessionEvent) -> Option<String> {
    use pi_protocol::v1::SessionEvent;
    match event {
        SessionEvent::ToolExecutionStart {
            tool_name, args, ..
        } => {
            let shown = ["command", "path", "pattern", "query", "url"]
                .iter()
                .find_map(|key| args[*key].as_str().map(str::to_owned))
                .unwrap_or_else(|| {
                    if args.as_object().is_some_and(serde_json::Map::is_empty) {
                        String::new()
                    } else {
                        args.to_string()
                    }
                });
            Some(
                format!("→ {tool_name} {}", one_line(&shown, 80))
                    .trim_end()
                    .to_owned(),
            )
        }
        SessionEvent::ToolExecutionEnd {
            tool_name,
            is_error: true,
            result,
            ..
        } => {
            let text = result
                .content
                .iter()
                .find_map(|block| match block {
                    pi_protocol::v1::message::UserContent::Text(text) => Some(text.text.as_str()),
                    pi_protocol::v1::message::UserContent::Image(_) => None,
                })
                .unwrap_or_default();
            Some(format!("✗ {tool_name}: {}", one_line(text, 100)))
        }
        SessionEvent::ToolExecutionEnd { tool_name, .. } => Some(format!("✓ {tool_name}")),
        SessionEvent::AutoRetryStart {
            attempt,
            max_attempts,
            delay_ms,
            error_message,
        } => Some(format!(
            "Retrying in {} s (attempt {attempt} of {max_attempts}): {}",
            delay_ms.div_ceil(1000),
            one_line(error_message, 100)
        )),
        _ => None,
    }
}

/// The sentence for a run's wait for new MCP servers (`tools_wait_start` / `tools_wait_end`),
/// `None` for other events and for a wait that ended well.
pub fn tools_wait_notice(event: &pi_protocol::v1::SessionEvent) -> Option<String> {
    use pi_protocol::v1::SessionEvent;
    let servers = |names: &[String]| {
        format!(
            "MCP {} {}",
            if names.len() == 1 {
                "server"
            } else {
                "servers"
            },
            names.join(", ")
        )
    };
    match event {
        SessionEvent::ToolsWaitStart {
            sources,
            timeout_ms,
        } => Some(format!(
            "Waiting for {} to start (at most {} s).",
            servers(sources),
            timeout_ms.div_ceil(1000)
        )),
        SessionEvent::ToolsWaitEnd {
            not_ready,
            aborted: false,
        } if !not_ready.is_empty() => Some(format!(
            "{} not ready; the model goes without {} tools until {} ready.",
            servers(not_ready),
            if not_ready.len() == 1 { "its" } else { "their" },
            if not_ready.len() == 1 {
                "it is"
            } else {
                "they are"
            },
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_for_new_mcp_servers_is_told_in_sentences() {
        use pi_protocol::v1::SessionEvent;
        let start = SessionEvent::ToolsWaitStart {
            sources: vec!["git".to_owned(), "time".to_owned()],
            timeout_ms: 29_500,
        };
        assert_eq!(
            tools_wait_notice(&start).as_deref(),
            Some("Waiting for MCP servers git, time to start (at most 30 s).")
        );
        let late = SessionEvent::ToolsWaitEnd {
            not_ready: vec!["time".to_owned()],
            aborted: false,
        };
        assert_eq!(
            tools_wait_notice(&late).as_deref(),
            Some("MCP server time not ready; the model goes without its tools until it is ready.")
        );
        let fine = SessionEvent::ToolsWaitEnd {
            not_ready: Vec::new(),
            aborted: false,
        };
        assert_eq!(tools_wait_notice(&fine), None);
        let aborted = SessionEvent::ToolsWaitEnd {
            not_ready: vec!["time".to_owned()],
            aborted: true,
        };
        assert_eq!(tools_wait_notice(&aborted), None);
    }

    #[test]
    fn human_times_are_minutes_utc() {
        assert_eq!(human_time(1_773_570_030_123), "2026-03-15 10:20");
    }

    #[test]
    fn tables_align_columns_and_trim() {
        let mut table = Table::new(&["ID", "NAME"]);
        table.row(vec!["a".to_owned(), "first".to_owned()]);
        table.row(vec!["longer".to_owned(), String::new()]);
        assert_eq!(
            table.render(Style { enabled: false }),
            "ID      NAME\na       first\nlonger\n"
        );
    }

    #[test]
    fn one_line_flattens_and_cuts() {
        assert_eq!(one_line("a\n  b", 10), "a b");
        assert_eq!(one_line("abcdefgh", 5), "abcd…");
    }
}
