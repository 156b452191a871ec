//! The prompt editor's buffer: multi-line text with a cursor, emacs-style editing, pi's kill
//! ring (deletions by word or to a line's end kept; consecutive ones joined; yank and
//! yank-pop), undo (typing undone a word at a time), jumps to a character, large pastes
//! collapsed to markers, and the token under the cursor for `@` and `/` completion.
//!
//! Invariant: `lines` is never empty and `column` is a char boundary of `lines[row]`.

use unicode_segmentation::UnicodeSegmentation as _;

/// Pastes with more lines than this, or more characters than [`PASTE_MAX_CHARS`], are shown
/// as a marker and expanded on submit.
pub const PASTE_MAX_LINES: usize = 10;
/// See [`PASTE_MAX_LINES`].
pub const PASTE_MAX_CHARS: usize = 1000;
/// Deleted texts kept for yanking.
const KILL_RING_SIZE: usize = 30;
/// Edits that can be undone.
const UNDO_DEPTH: usize = 200;

/// What the last edit was: kills next to each other join, typing is undone by the word, and
/// yank-pop follows a yank only.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Last {
    #[default]
    Other,
    /// Typed text (`true`: it ended with whitespace).
    Typed(bool),
    /// A deletion into the kill ring (`true`: backward).
    Killed(bool),
    /// A yank of ring entry `index`, `len` bytes ending at the cursor.
    Yanked { index: usize, len: usize },
}

/// The buffer as it was before an edit.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Snapshot {
    lines: Vec<String>,
    row: usize,
    column: usize,
    pastes: Vec<String>,
}

/// The editor buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Editor {
    lines: Vec<String>,
    row: usize,
    column: usize,
    // Collapsed pastes; marker `[paste #N +L lines]` refers to `pastes[N - 1]`.
    pastes: Vec<String>,
    // Deleted texts, the newest last; kept across messages.
    kill_ring: Vec<String>,
    // Buffers before edits, the newest last.
    undo: Vec<Snapshot>,
    // Buffers undone, the newest last; any new edit clears them.
    redo: Vec<Snapshot>,
    last: Last,
}

impl Default for Editor {
    fn default() -> Self {
        Editor {
            lines: vec![String::new()],
            row: 0,
            column: 0,
            pastes: Vec::new(),
            kill_ring: Vec::new(),
            undo: Vec::new(),
            redo: Vec::new(),
            last: Last::Other,
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

    /// Replaces everything (undoably); cursor at the end.
    pub fn set_text(&mut self, text: &str) {
        self.checkpoint();
        self.last = Last::Other;
        self.lines = text.split('\n').map(str::to_owned).collect();
        self.row = self.lines.len() - 1;
        self.column = self.lines[self.row].len();
        self.pastes.clear();
    }

    /// Empties the editor; returns what it held (expanded). The kill ring stays.
    pub fn take(&mut self) -> String {
        let text = self.expanded_text();
        let kill_ring = std::mem::take(&mut self.kill_ring);
        *self = Editor {
            kill_ring,
            ..Editor::default()
        };
        text
    }

    /// Empties the editor, undoably (pi's Ctrl+C).
    pub fn clear(&mut self) {
        self.set_text("");
        self.pastes.clear();
    }

    /// Types `text` at the cursor: undone a word at a time.
    pub fn type_text(&mut self, text: &str) {
        let ends_with_space = text.ends_with(char::is_whitespace);
        match self.last {
            // Within a word, or the spaces after it: one step.
            Last::Typed(false) => {}
            Last::Typed(true) if ends_with_space => {}
            _ => self.checkpoint(),
        }
        self.put(text);
        self.last = Last::Typed(ends_with_space);
    }

    /// Undoes the last edit; `false` when there is none.
    pub fn undo(&mut self) -> bool {
        let Some(snapshot) = self.undo.pop() else {
            return false;
        };
        let now = self.snapshot();
        self.redo.push(now);
        self.restore(snapshot);
        true
    }

    /// Does again what the last undo took back; `false` when there is nothing.
    pub fn redo(&mut self) -> bool {
        let Some(snapshot) = self.redo.pop() else {
            return false;
        };
        let now = self.snapshot();
        self.undo.push(now);
        self.restore(snapshot);
        true
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            lines: self.lines.clone(),
            row: self.row,
            column: self.column,
            pastes: self.pastes.clone(),
        }
    }

    fn restore(&mut self, snapshot: Snapshot) {
        self.lines = snapshot.lines;
        self.row = snapshot.row.min(self.lines.len() - 1);
        self.column = snapshot.column.min(self.lines[self.row].len());
        self.pastes = snapshot.pastes;
        self.last = Last::Other;
    }

    /// Saves the buffer for undo, before an edit (which makes what was undone final).
    fn checkpoint(&mut self) {
        self.redo.clear();
        let snapshot = self.snapshot();
        if self.undo.last() == Some(&snapshot) {
            return;
        }
        if self.undo.len() >= UNDO_DEPTH {
            self.undo.remove(0);
        }
        self.undo.push(snapshot);
    }

    /// Puts `text` into the kill ring: joined to the last entry when the previous edit was
    /// a kill too (before it when deleting backward), as emacs and pi do.
    fn kill(&mut self, text: String, backward: bool) {
        if text.is_empty() {
            return;
        }
        match (self.last, self.kill_ring.last_mut()) {
            (Last::Killed(_), Some(last)) => {
                if backward {
                    last.insert_str(0, &text);
                } else {
                    last.push_str(&text);
                }
            }
            _ => {
                if self.kill_ring.len() >= KILL_RING_SIZE {
                    self.kill_ring.remove(0);
                }
                self.kill_ring.push(text);
            }
        }
        self.last = Last::Killed(backward);
    }

    /// Pastes the newest deleted text at the cursor (Ctrl+Y); `false` when nothing was
    /// deleted yet.
    pub fn yank(&mut self) -> bool {
        let Some(text) = self.kill_ring.last().cloned() else {
            return false;
        };
        self.checkpoint();
        self.put(&text);
        self.last = Last::Yanked {
            index: self.kill_ring.len() - 1,
            len: text.len(),
        };
        true
    }

    /// Right after a yank: replaces the pasted text with the deleted text before it
    /// (Alt+Y), going round the ring; `false` otherwise.
    pub fn yank_pop(&mut self) -> bool {
        let Last::Yanked { index, len } = self.last else {
            return false;
        };
        if self.kill_ring.len() < 2 {
            return false;
        }
        self.checkpoint();
        // The yanked text ends at the cursor; take it out (it may span lines).
        let text = self.text();
        let offset = self.offset();
        let Some(start) = offset.checked_sub(len) else {
            return false;
        };
        let kept = format!("{}{}", &text[..start], &text[offset..]);
        self.lines = kept.split('\n').map(str::to_owned).collect();
        let before = &kept[..start];
        self.row = before.matches('\n').count();
        self.column = start - before.rfind('\n').map_or(0, |newline| newline + 1);
        let index = (index + self.kill_ring.len() - 1) % self.kill_ring.len();
        let text = self.kill_ring[index].clone();
        self.put(&text);
        self.last = Last::Yanked {
            index,
            len: text.len(),
        };
        true
    }

    /// Moves to the next `target` after the cursor (`forward`), or the previous one before
    /// it, across lines; `false` when there is none.
    pub fn jump_to(&mut self, target: char, forward: bool) -> bool {
        self.last = Last::Other;
        let text = self.text();
        let offset = self.offset();
        let found = if forward {
            let start = offset + text[offset..].chars().next().map_or(0, char::len_utf8);
            text.get(start..)
                .and_then(|rest| rest.find(target))
                .map(|at| start + at)
        } else {
            text[..offset].rfind(target)
        };
        let Some(at) = found else {
            return false;
        };
        let before = &text[..at];
        self.row = before.matches('\n').count();
        self.column = at - before.rfind('\n').map_or(0, |newline| newline + 1);
        true
    }

    /// The cursor's byte offset in [`Editor::text`].
    fn offset(&self) -> usize {
        self.lines[..self.row]
            .iter()
            .map(|line| line.len() + 1)
            .sum::<usize>()
            + self.column
    }

    /// Inserts text at the cursor (newlines split lines), undoably.
    pub fn insert(&mut self, text: &str) {
        self.checkpoint();
        self.put(text);
        self.last = Last::Other;
    }

    /// Inserts text at the cursor.
    fn put(&mut self, text: &str) {
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
        if self.row == 0 && self.column == 0 {
            return;
        }
        match self.last {
            Last::Typed(_) => {}
            _ => self.checkpoint(),
        }
        self.raw_backspace();
        self.last = Last::Typed(false);
    }

    fn raw_backspace(&mut self) {
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
        if self.row + 1 == self.lines.len() && self.column == self.lines[self.row].len() {
            return;
        }
        self.checkpoint();
        self.last = Last::Other;
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

    /// Deletes the word before the cursor into the kill ring (Ctrl+W); at a line's start,
    /// joins it to the line before.
    pub fn delete_word_before(&mut self) {
        if self.column == 0 {
            if self.row > 0 {
                self.checkpoint();
                self.raw_backspace();
                self.kill("\n".to_owned(), true);
            }
            return;
        }
        self.checkpoint();
        let end = self.column;
        let last = self.last;
        self.word_left();
        self.last = last;
        let killed: String = self.lines[self.row].drain(self.column..end).collect();
        self.kill(killed, true);
    }

    /// Deletes the word after the cursor into the kill ring (Alt+D).
    pub fn delete_word_after(&mut self) {
        let start = self.column;
        if start == self.lines[self.row].len() {
            self.kill_line_break();
            return;
        }
        self.checkpoint();
        let last = self.last;
        self.word_right();
        self.last = last;
        let end = self.column;
        self.column = start;
        let killed: String = self.lines[self.row].drain(start..end).collect();
        self.kill(killed, false);
    }

    /// Deletes to the end of the line into the kill ring (Ctrl+K); at the end, joins the
    /// next line.
    pub fn kill_to_end(&mut self) {
        if self.column == self.lines[self.row].len() {
            self.kill_line_break();
            return;
        }
        self.checkpoint();
        let killed = self.lines[self.row].split_off(self.column);
        self.kill(killed, false);
    }

    /// At a line's end: joins the next line to it, the line break going to the kill ring.
    fn kill_line_break(&mut self) {
        if self.row + 1 < self.lines.len() {
            self.checkpoint();
            let line = self.lines.remove(self.row + 1);
            self.lines[self.row].push_str(&line);
            self.kill("\n".to_owned(), false);
        }
    }

    /// Deletes to the start of the line into the kill ring (Ctrl+U).
    pub fn kill_to_start(&mut self) {
        if self.column == 0 {
            return;
        }
        self.checkpoint();
        let killed: String = self.lines[self.row].drain(..self.column).collect();
        self.column = 0;
        self.kill(killed, true);
    }

    /// Notes a cursor move: the next kill starts a new ring entry, the next typing a new
    /// undo step.
    pub fn moved(&mut self) {
        self.last = Last::Other;
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
        self.checkpoint();
        self.last = Last::Other;
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
    fn kills_go_to_the_ring_joined_when_consecutive_and_yank_pop_cycles() {
        let mut editor = Editor::with_text("one two three");
        editor.delete_word_before();
        editor.delete_word_before();
        assert_eq!(editor.text(), "one ");
        // Two backward kills in a row: one entry, in reading order.
        assert!(editor.yank());
        assert_eq!(editor.text(), "one two three");
        editor.moved();
        editor.home();
        editor.delete_word_after();
        assert_eq!(editor.text(), " two three");
        editor.moved();
        editor.end();
        assert!(editor.yank());
        assert_eq!(editor.text(), " two threeone");
        // Alt+Y: the entry before, in place of the one just pasted.
        assert!(editor.yank_pop());
        assert_eq!(editor.text(), " two threetwo three");
        assert!(editor.yank_pop());
        assert_eq!(editor.text(), " two threeone");
        editor.type_text("!");
        assert!(!editor.yank_pop(), "only right after a yank");
    }

    #[test]
    fn undo_takes_back_words_kills_and_pastes() {
        let mut editor = Editor::default();
        editor.type_text("hello");
        editor.type_text(" ");
        editor.type_text("w");
        editor.type_text("orld");
        editor.kill_to_start();
        assert_eq!(editor.text(), "");
        assert!(editor.undo());
        assert_eq!(editor.text(), "hello world");
        assert!(editor.undo());
        assert_eq!(editor.text(), "hello ");
        assert!(editor.undo());
        assert_eq!(editor.text(), "");
        assert!(!editor.undo());
        editor.paste("pasted");
        editor.clear();
        assert!(editor.undo());
        assert_eq!(editor.text(), "pasted");
    }

    #[test]
    fn jumps_find_the_character_across_lines() {
        let mut editor = Editor::with_text("find x here\nand x there");
        editor.moved();
        // From the end, backward: the second x, then the first.
        assert!(editor.jump_to('x', false));
        assert_eq!(editor.cursor(), (1, 4));
        assert!(editor.jump_to('x', false));
        assert_eq!(editor.cursor(), (0, 5));
        assert!(editor.jump_to('x', true));
        assert_eq!(editor.cursor(), (1, 4));
        assert!(!editor.jump_to('q', true));
        assert_eq!(editor.cursor(), (1, 4));
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
