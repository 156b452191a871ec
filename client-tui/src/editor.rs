//! The prompt editor's buffer: multi-line text with a cursor, emacs-style editing, large pastes
//! collapsed to markers, and the token under the cursor for `@` and `/` completion.
//!
//! Invariant: `lines` is never empty and `column` is a char boundary of `lines[row]`.

use unicode_segmentation::UnicodeSegmentation as _;

/// Pastes with more lines than this, or more characters than [`PASTE_MAX_CHARS`], are shown
/// as a marker and expanded on submit.
pub const PASTE_MAX_LINES: usize = 10;
/// See [`PASTE_MAX_LINES`].
pub const PASTE_MAX_CHARS: usize = 1000;

/// The editor buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Editor {
    lines: Vec<String>,
    row: usize,
    column: usize,
    // Collapsed pastes; marker `[paste #N +L lines]` refers to `pastes[N - 1]`.
    pastes: Vec<String>,
}

impl Default for Editor {
    fn default() -> Self {
        Editor {
            lines: vec![String::new()],
            row: 0,
            column: 0,
            pastes: Vec::new(),
        }
    }
}

impl Editor {
    /// An editor holding `text`, cursor at the end.
    pub fn with_text(text: &str) -> Editor {
        let mut editor = Editor::default();
        editor.set_text(text);
        editor
    }

    /// The lines.
    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// Cursor row and byte column.
    pub fn cursor(&self) -> (usize, usize) {
        (self.row, self.column)
    }

    /// The text as shown (paste markers unexpanded).
    pub fn text(&self) -> String {
        self.lines.join("\n")
    }

    /// The text to send: paste markers replaced by their content.
    pub fn expanded_text(&self) -> String {
        let mut text = self.text();
        for (index, paste) in self.pastes.iter().enumerate() {
            text = text.replace(&paste_marker(index + 1, paste), paste);
        }
        text
    }

    /// Whether there is no text.
    pub fn is_empty(&self) -> bool {
        self.lines.len() == 1 && self.lines[0].is_empty()
    }

    /// Replaces everything; cursor at the end.
    pub fn set_text(&mut self, text: &str) {
        self.lines = text.split('\n').map(str::to_owned).collect();
        self.row = self.lines.len() - 1;
        self.column = self.lines[self.row].len();
        self.pastes.clear();
    }

    /// Empties the editor; returns what it held (expanded).
    pub fn take(&mut self) -> String {
        let text = self.expanded_text();
        *self = Editor::default();
        text
    }

    /// Inserts text at the cursor (newlines split lines).
    pub fn insert(&mut self, text: &str) {
        // Tabs become four spaces, as in pi's editor: a cell grid has no tab stops.
        let text = text
            .replace("\r\n", "\n")
            .replace('\r', "\n")
            .replace('\t', "    ");
        let mut parts = text.split('\n');
        let first = parts.next().unwrap_or_default();
        let rest: Vec<&str> = parts.collect();
        let line = &mut self.lines[self.row];
        let tail = line.split_off(self.column);
        line.push_str(first);
        self.column = line.len();
        for part in rest {
            self.row += 1;
            self.lines.insert(self.row, part.to_owned());
            self.column = part.len();
        }
        self.lines[self.row].push_str(&tail);
    }

    /// Inserts a paste: small ones as text, large ones as a marker.
    pub fn paste(&mut self, text: &str) {
        let text = text
            .replace("\r\n", "\n")
            .replace('\r', "\n")
            .replace('\t', "    ");
        let line_count = text.lines().count();
        if line_count > PASTE_MAX_LINES || text.chars().count() > PASTE_MAX_CHARS {
            self.pastes.push(text);
            let marker = paste_marker(self.pastes.len(), &self.pastes[self.pastes.len() - 1]);
            self.insert(&marker);
        } else {
            self.insert(&text);
        }
    }

    /// Inserts a newline.
    pub fn newline(&mut self) {
        self.insert("\n");
    }

    /// Deletes the grapheme before the cursor (joining lines at a line start).
    pub fn backspace(&mut self) {
        if self.column > 0 {
            let start = self.previous_boundary();
            self.lines[self.row].replace_range(start..self.column, "");
            self.column = start;
        } else if self.row > 0 {
            let line = self.lines.remove(self.row);
            self.row -= 1;
            self.column = self.lines[self.row].len();
            self.lines[self.row].push_str(&line);
        }
    }

    /// Deletes the grapheme under the cursor (joining lines at a line end).
    pub fn delete(&mut self) {
        if self.column < self.lines[self.row].len() {
            let end = self.next_boundary();
            self.lines[self.row].replace_range(self.column..end, "");
        } else if self.row + 1 < self.lines.len() {
            let line = self.lines.remove(self.row + 1);
            self.lines[self.row].push_str(&line);
        }
    }

    /// Moves left one grapheme (to the previous line's end at a line start).
    pub fn left(&mut self) {
        if self.column > 0 {
            self.column = self.previous_boundary();
        } else if self.row > 0 {
            self.row -= 1;
            self.column = self.lines[self.row].len();
        }
    }

    /// Moves right one grapheme.
    pub fn right(&mut self) {
        if self.column < self.lines[self.row].len() {
            self.column = self.next_boundary();
        } else if self.row + 1 < self.lines.len() {
            self.row += 1;
            self.column = 0;
        }
    }

    /// Moves up a line; `false` on the first line (the caller may browse history).
    pub fn up(&mut self) -> bool {
        if self.row == 0 {
            return false;
        }
        let chars = self.lines[self.row][..self.column].chars().count();
        self.row -= 1;
        self.column = byte_of_char(&self.lines[self.row], chars);
        true
    }

    /// Moves down a line; `false` on the last line.
    pub fn down(&mut self) -> bool {
        if self.row + 1 >= self.lines.len() {
            return false;
        }
        let chars = self.lines[self.row][..self.column].chars().count();
        self.row += 1;
        self.column = byte_of_char(&self.lines[self.row], chars);
        true
    }

    /// To the start of the line.
    pub fn home(&mut self) {
        self.column = 0;
    }

    /// To the end of the line.
    pub fn end(&mut self) {
        self.column = self.lines[self.row].len();
    }

    /// Back one word.
    pub fn word_left(&mut self) {
        let line = &self.lines[self.row];
        let before = &line[..self.column];
        let trimmed = before.trim_end();
        self.column = trimmed
            .rfind(|c: char| c.is_whitespace())
            .map(|index| index + 1)
            .unwrap_or(0);
    }

    /// Forward one word.
    pub fn word_right(&mut self) {
        let line = &self.lines[self.row];
        let after = &line[self.column..];
        let skipped = after.len() - after.trim_start().len();
        let rest = &after[skipped..];
        let word = rest.find(char::is_whitespace).unwrap_or(rest.len());
        self.column += skipped + word;
    }

    /// Deletes the word before the cursor (Ctrl+W).
    pub fn delete_word_before(&mut self) {
        let end = self.column;
        self.word_left();
        self.lines[self.row].replace_range(self.column..end, "");
    }

    /// Deletes to the end of the line (Ctrl+K).
    pub fn kill_to_end(&mut self) {
        self.lines[self.row].truncate(self.column);
    }

    /// Deletes to the start of the line (Ctrl+U).
    pub fn kill_to_start(&mut self) {
        self.lines[self.row].replace_range(..self.column, "");
        self.column = 0;
    }

    /// The whitespace-free token ending at the cursor and where it starts, for completion.
    pub fn token_at_cursor(&self) -> (usize, &str) {
        let before = &self.lines[self.row][..self.column];
        let start = before
            .rfind(char::is_whitespace)
            .map(|index| index + 1)
            .unwrap_or(0);
        (start, &before[start..])
    }

    /// Replaces the token ending at the cursor by `replacement`.
    pub fn replace_token(&mut self, replacement: &str) {
        let (start, _) = self.token_at_cursor();
        self.lines[self.row].replace_range(start..self.column, replacement);
        self.column = start + replacement.len();
    }

    fn previous_boundary(&self) -> usize {
        self.lines[self.row][..self.column]
            .grapheme_indices(true)
            .next_back()
            .map(|(index, _)| index)
            .unwrap_or(0)
    }

    fn next_boundary(&self) -> usize {
        let line = &self.lines[self.row];
        line[self.column..]
            .graphemes(true)
            .next()
            .map(|grapheme| self.column + grapheme.len())
            .unwrap_or(line.len())
    }
}

fn paste_marker(number: usize, text: &str) -> String {
    let lines = text.lines().count();
    if lines > 1 {
        format!("[paste #{number} +{lines} lines]")
    } else {
        format!("[paste #{number} {} chars]", text.chars().count())
    }
}

fn byte_of_char(line: &str, chars: usize) -> usize {
    line.char_indices()
        .nth(chars)
        .map(|(index, _)| index)
        .unwrap_or(line.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn editing_keeps_lines_and_cursor_consistent() {
        let mut editor = Editor::default();
        editor.insert("héllo wörld");
        editor.word_left();
        editor.insert("big ");
        editor.end();
        editor.newline();
        editor.insert("second");
        editor.backspace();
        editor.up();
        editor.home();
        editor.delete();
        assert_eq!(editor.text(), "éllo big wörld\nsecon");
        assert_eq!(editor.cursor(), (0, 0));
        editor.end();
        editor.delete();
        assert_eq!(editor.text(), "éllo big wörldsecon");
        editor.delete_word_before();
        assert_eq!(editor.text(), "éllo big secon");
        editor.kill_to_start();
        assert_eq!(editor.text(), "secon");
    }

    #[test]
    fn large_pastes_collapse_to_a_marker_and_expand_on_submit() {
        let mut editor = Editor::default();
        editor.insert("look: ");
        let big: String = (1..=40).map(|n| format!("line {n}\n")).collect();
        editor.paste(&big);
        editor.paste("sm\tall");
        assert_eq!(editor.text(), "look: [paste #1 +40 lines]sm    all");
        assert_eq!(editor.take(), format!("look: {big}sm    all"));
        assert!(editor.is_empty());
    }

    #[test]
    fn completion_token_is_the_word_before_the_cursor() {
        let mut editor = Editor::with_text("explain @src/ma");
        assert_eq!(editor.token_at_cursor(), (8, "@src/ma"));
        editor.replace_token("@src/main.rs ");
        assert_eq!(editor.text(), "explain @src/main.rs ");
    }
}
