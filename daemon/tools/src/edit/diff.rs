//! The diff `edit` reports: pi's display diff (`+<n> line`, `-<n> line`, ` <n> line`, four
//! context lines, elided runs as `...`), plus the first changed line.
//!
//! Only the lines around the replaced ranges are diffed (with `similar`); the unchanged lines
//! between them are known equal and are read back only where shown as context, so a diff of
//! a small edit in a 100 MB file costs one newline count, not a diff of the whole file.
//! Unlike pi, a long unchanged run between two changes is elided too (pi shows it whole).

use similar::{Algorithm, DiffOp, capture_diff_slices};

/// Context lines of the display diff.
const DISPLAY_CONTEXT: usize = 4;

/// A replacement of `old[start..end]` (byte offsets into the old text).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replacement {
    /// Start of the replaced range.
    pub start: usize,
    /// End of the replaced range.
    pub end: usize,
    /// The new text for it.
    pub text: String,
}

/// What `edit` reports about its change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EditDiff {
    /// pi's display diff.
    pub display: String,
    /// The first changed line of the new file (1-based).
    pub first_changed_line: Option<usize>,
}

/// A run of the diff over the whole file. Line numbers are 0-based.
#[derive(Clone, Debug)]
enum Run {
    /// `count` unchanged lines, stored in `old[start..end]` (without the final newline).
    Equal {
        count: usize,
        start: usize,
        end: usize,
    },
    /// Old lines removed.
    Delete(Vec<String>),
    /// New lines added.
    Insert(Vec<String>),
}

/// Diffs `old` against `old` with `replacements` (sorted, disjoint) applied.
pub fn diff(old: &str, replacements: &[Replacement]) -> EditDiff {
    let mut runs = runs(old, replacements);
    // The empty "line" after a final newline is not shown as context (as in pi, whose diff
    // works on newline-terminated lines); it still counts for the line-number width.
    if old.ends_with('\n')
        && let Some(Run::Equal { count, end, .. }) = runs.last_mut()
    {
        *count -= 1;
        *end = end.saturating_sub(1);
        if *count == 0 {
            runs.pop();
        }
    }
    let old_total = memchr::memchr_iter(b'\n', old.as_bytes()).count() + 1;
    let delta: isize = runs
        .iter()
        .map(|run| match run {
            Run::Equal { .. } => 0,
            Run::Delete(lines) => -(lines.len() as isize),
            Run::Insert(lines) => lines.len() as isize,
        })
        .sum();
    let new_total = (old_total as isize + delta).max(0) as usize;
    let width = old_total.max(new_total).to_string().len();
    let (display, first_changed_line) = display(old, &runs, width);
    EditDiff {
        display,
        first_changed_line,
    }
}

/// The runs of the whole file: equal stretches between windows of changed lines, each window
/// diffed line by line.
fn runs(old: &str, replacements: &[Replacement]) -> Vec<Run> {
    let bytes = old.as_bytes();
    let mut runs = Vec::new();
    // Byte offset and line number where the next unprocessed old line starts.
    let mut cursor = 0usize;
    let mut cursor_line = 0usize;
    let mut index = 0;
    while index < replacements.len() {
        let first = &replacements[index];
        let window_start = memchr::memrchr(b'\n', &bytes[..first.start]).map_or(0, |i| i + 1);
        let mut window_end = line_end(bytes, replacements[index].end);
        let mut last = index;
        while last + 1 < replacements.len() && replacements[last + 1].start <= window_end {
            last += 1;
            window_end = line_end(bytes, replacements[last].end);
        }
        let mut new_window = String::new();
        let mut copied = window_start;
        for replacement in &replacements[index..=last] {
            new_window.push_str(&old[copied..replacement.start]);
            new_window.push_str(&replacement.text);
            copied = replacement.end;
        }
        new_window.push_str(&old[copied..window_end]);
        let window_line =
            cursor_line + memchr::memchr_iter(b'\n', &bytes[cursor..window_start]).count();
        push_equal(
            &mut runs,
            window_line - cursor_line,
            cursor,
            window_start.saturating_sub(1),
        );
        let old_lines: Vec<&str> = old[window_start..window_end].split('\n').collect();
        let new_lines: Vec<&str> = new_window.split('\n').collect();
        let mut line_starts = Vec::with_capacity(old_lines.len());
        let mut offset = window_start;
        for line in &old_lines {
            line_starts.push(offset);
            offset += line.len() + 1;
        }
        for op in capture_diff_slices(Algorithm::Myers, &old_lines, &new_lines) {
            match op {
                DiffOp::Equal { old_index, len, .. } => {
                    let start = line_starts[old_index];
                    let end =
                        line_starts[old_index + len - 1] + old_lines[old_index + len - 1].len();
                    push_equal(&mut runs, len, start, end);
                }
                DiffOp::Delete {
                    old_index, old_len, ..
                } => {
                    runs.push(Run::Delete(owned(
                        &old_lines[old_index..old_index + old_len],
                    )));
                }
                DiffOp::Insert {
                    new_index, new_len, ..
                } => {
                    runs.push(Run::Insert(owned(
                        &new_lines[new_index..new_index + new_len],
                    )));
                }
                DiffOp::Replace {
                    old_index,
                    old_len,
                    new_index,
                    new_len,
                } => {
                    runs.push(Run::Delete(owned(
                        &old_lines[old_index..old_index + old_len],
                    )));
                    runs.push(Run::Insert(owned(
                        &new_lines[new_index..new_index + new_len],
                    )));
                }
            }
        }
        cursor_line = window_line + old_lines.len();
        cursor = (window_end + 1).min(old.len());
        if window_end == old.len() {
            cursor = old.len() + 1;
        }
        index = last + 1;
    }
    if cursor <= old.len() {
        let count = memchr::memchr_iter(b'\n', &bytes[cursor..]).count() + 1;
        push_equal(&mut runs, count, cursor, old.len());
    }
    runs
}

/// Where the line containing `position` ends (its newline, or the end of the text).
fn line_end(bytes: &[u8], position: usize) -> usize {
    memchr::memchr(b'\n', &bytes[position..]).map_or(bytes.len(), |i| position + i)
}

fn owned(lines: &[&str]) -> Vec<String> {
    lines.iter().map(|line| strip_cr(line).to_owned()).collect()
}

fn strip_cr(line: &str) -> &str {
    line.strip_suffix('\r').unwrap_or(line)
}

/// Appends an equal run, merging it into a preceding equal run.
fn push_equal(runs: &mut Vec<Run>, count: usize, start: usize, end: usize) {
    if count == 0 {
        return;
    }
    if let Some(Run::Equal {
        count: previous,
        end: previous_end,
        ..
    }) = runs.last_mut()
    {
        *previous += count;
        *previous_end = end;
        return;
    }
    runs.push(Run::Equal { count, start, end });
}

/// The first `n` lines of `old[start..end]`.
fn head_lines(old: &str, start: usize, end: usize, n: usize) -> Vec<&str> {
    old[start..end].split('\n').take(n).map(strip_cr).collect()
}

/// The last `n` lines of `old[start..end]`.
fn tail_lines(old: &str, start: usize, end: usize, n: usize) -> Vec<&str> {
    let mut lines: Vec<&str> = old[start..end].rsplit('\n').take(n).map(strip_cr).collect();
    lines.reverse();
    lines
}

/// pi's display diff; also returns the first changed line (1-based, in the new file).
fn display(old: &str, runs: &[Run], width: usize) -> (String, Option<usize>) {
    let mut out: Vec<String> = Vec::new();
    let elided = format!(" {} ...", " ".repeat(width));
    let (mut old_number, mut new_number) = (1usize, 1usize);
    let mut first_changed = None;
    let mut last_was_change = false;
    for (index, run) in runs.iter().enumerate() {
        match run {
            Run::Delete(lines) | Run::Insert(lines) => {
                first_changed.get_or_insert(new_number);
                for line in lines {
                    if let Run::Insert(_) = run {
                        out.push(format!("+{new_number:>width$} {line}"));
                        new_number += 1;
                    } else {
                        out.push(format!("-{old_number:>width$} {line}"));
                        old_number += 1;
                    }
                }
                last_was_change = true;
            }
            Run::Equal {
                count, start, end, ..
            } => {
                let next_is_change = index + 1 < runs.len();
                let count = *count;
                let head = if last_was_change {
                    count.min(DISPLAY_CONTEXT)
                } else {
                    0
                };
                let tail = if next_is_change {
                    (count - head).min(DISPLAY_CONTEXT)
                } else {
                    0
                };
                let context = |number: usize, line: &str| format!(" {number:>width$} {line}");
                if last_was_change && next_is_change && count <= 2 * DISPLAY_CONTEXT {
                    for line in head_lines(old, *start, *end, count) {
                        out.push(context(old_number, line));
                        old_number += 1;
                        new_number += 1;
                    }
                } else if head > 0 || tail > 0 {
                    for line in head_lines(old, *start, *end, head) {
                        out.push(context(old_number, line));
                        old_number += 1;
                        new_number += 1;
                    }
                    let skipped = count - head - tail;
                    if skipped > 0 {
                        out.push(elided.clone());
                        old_number += skipped;
                        new_number += skipped;
                    }
                    for line in tail_lines(old, *start, *end, tail) {
                        out.push(context(old_number, line));
                        old_number += 1;
                        new_number += 1;
                    }
                } else {
                    old_number += count;
                    new_number += count;
                }
                last_was_change = false;
            }
        }
    }
    (out.join("\n"), first_changed)
}
