//! What `pictl` writes: JSON lines, aligned tables for humans, times, and colour.
//!
//! Colour is used only when stdout is a terminal and `NO_COLOR` is unset or empty (and never
//! in `--json` output). Human times are UTC (`2026-03-15 10:20`), so output does not depend on
//! the machine's time zone.

use std::io::{IsTerminal as _, Write as _};

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

/// Unix milliseconds as ISO-8601 `YYYY-MM-DDTHH:MM:SS.mmmZ` (UTC), as pi writes timestamps.
pub fn iso_from_millis(millis: i64) -> String {
    let seconds = millis.div_euclid(1000);
    let millis = millis.rem_euclid(1000);
    let (year, month, day) = civil_from_days(seconds.div_euclid(86_400));
    let second_of_day = seconds.rem_euclid(86_400);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        second_of_day / 3600,
        second_of_day % 3600 / 60,
        second_of_day % 60
    )
}

/// Parses `YYYY-MM-DD` (UTC midnight) into Unix milliseconds.
pub fn millis_from_date(text: &str) -> Option<i64> {
    let mut parts = text.trim().split('-');
    let year: i64 = parts.next()?.parse().ok()?;
    let month: i64 = parts.next()?.parse().ok()?;
    let day: i64 = parts.next()?.parse().ok()?;
    if parts.next().is_some() || !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400_000)
}

// Howard Hinnant's civil-from-days algorithm (proleptic Gregorian calendar).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

// The inverse of `civil_from_days`.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year.rem_euclid(400);
    let month_index = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * month_index + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
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
    fn times_round_trip_through_dates() {
        assert_eq!(iso_from_millis(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(human_time(1_773_570_030_123), "2026-03-15 10:20");
        let midnight = millis_from_date("2026-03-15").unwrap();
        assert_eq!(iso_from_millis(midnight), "2026-03-15T00:00:00.000Z");
        assert_eq!(millis_from_date("2026-13-01"), None);
        assert_eq!(millis_from_date("yesterday"), None);
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
