//! Key bindings: every action of pi 0.73's interactive mode under its namespaced id
//! (`app.model.select`, `tui.editor.cursorUp`), its default keys and where it applies, and
//! pi's `keybindings.json` (`{"id": "ctrl+x" | ["ctrl+x", "f2"]}`), which replaces the
//! defaults of the ids it names. pi's older flat ids (`selectModel`, `cursorUp`) are read as
//! the namespaced ones, as pi migrates them.
//!
//! Invariant: [`Keymap::actions`] is a pure lookup.

use std::collections::BTreeMap;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Where an action's keys apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Context {
    /// The prompt editor and the app around it.
    Main,
    /// Lists: selectors, the session tree.
    Select,
    /// The session tree's own keys (over [`Context::Select`]).
    Tree,
    /// pi's session picker's own keys (`/resume`).
    Sessions,
    /// pi's `/scoped-models` selector's keys.
    Models,
}

/// Something a key can do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    /// Abort the run (or close an overlay).
    Interrupt,
    /// Clear the editor; twice quits.
    Clear,
    /// Detach on an empty editor.
    Exit,
    /// Suspend to the shell (`fg` comes back).
    Suspend,
    /// Next thinking level.
    CycleThinkingLevel,
    /// Next model.
    CycleModelForward,
    /// Previous model.
    CycleModelBackward,
    /// Open the model selector.
    SelectModel,
    /// Expand or collapse tool output.
    ExpandTools,
    /// Show or hide thinking blocks.
    ToggleThinking,
    /// Edit the message in `$VISUAL`/`$EDITOR`.
    ExternalEditor,
    /// Queue a follow-up.
    FollowUp,
    /// Put queued messages back into the editor.
    Dequeue,
    /// Paste an image from the clipboard.
    PasteImage,
    /// Start a new session.
    NewSession,
    /// Open the session tree.
    Tree,
    /// Fork the session.
    Fork,
    /// Open the session picker.
    Resume,
    /// Search prompt history (ours).
    HistorySearch,
    /// Scroll the transcript up a line (ours).
    ScrollUp,
    /// Scroll the transcript down a line (ours).
    ScrollDown,
    /// Cursor up (at the top: older prompts).
    CursorUp,
    /// Cursor down (at the bottom: newer prompts).
    CursorDown,
    /// Cursor left.
    CursorLeft,
    /// Cursor right.
    CursorRight,
    /// Word left.
    CursorWordLeft,
    /// Word right.
    CursorWordRight,
    /// Line start.
    CursorLineStart,
    /// Line end.
    CursorLineEnd,
    /// Jump forward to the next character typed.
    JumpForward,
    /// Jump backward to the next character typed.
    JumpBackward,
    /// Scroll the transcript up a page.
    PageUp,
    /// Scroll the transcript down a page.
    PageDown,
    /// Delete the character before the cursor.
    DeleteCharBackward,
    /// Delete the character under the cursor.
    DeleteCharForward,
    /// Delete the word before the cursor.
    DeleteWordBackward,
    /// Delete the word after the cursor.
    DeleteWordForward,
    /// Delete to the line's start.
    DeleteToLineStart,
    /// Delete to the line's end.
    DeleteToLineEnd,
    /// Paste the last deleted text.
    Yank,
    /// Replace what was just pasted with the text deleted before it.
    YankPop,
    /// Undo the last edit.
    Undo,
    /// Do again what undo took back (ours; pi has no redo).
    Redo,
    /// Insert a newline.
    NewLine,
    /// Send.
    Submit,
    /// Complete.
    Tab,
    /// Copy the selection (the terminal's own selection, with Shift, serves).
    Copy,
    /// Selection up.
    SelectUp,
    /// Selection down.
    SelectDown,
    /// Selection a page up.
    SelectPageUp,
    /// Selection a page down.
    SelectPageDown,
    /// Choose.
    SelectConfirm,
    /// Close the list.
    SelectCancel,
    /// Tree: fold the branch, or up to the previous segment's start.
    TreeFoldOrUp,
    /// Tree: unfold, or down to the next segment's start.
    TreeUnfoldOrDown,
    /// Tree: edit the selected entry's label.
    TreeEditLabel,
    /// Tree: show labels' times.
    TreeToggleLabelTimestamp,
    /// Tree filter: default.
    TreeFilterDefault,
    /// Tree filter: no tool results.
    TreeFilterNoTools,
    /// Tree filter: user messages only.
    TreeFilterUserOnly,
    /// Tree filter: labeled entries only.
    TreeFilterLabeledOnly,
    /// Tree filter: everything.
    TreeFilterAll,
    /// Tree filter: next.
    TreeFilterCycleForward,
    /// Tree filter: previous.
    TreeFilterCycleBackward,
    /// pi's session picker keys.
    SessionTogglePath,
    /// See [`Action::SessionTogglePath`].
    SessionToggleSort,
    /// See [`Action::SessionTogglePath`].
    SessionToggleNamedFilter,
    /// See [`Action::SessionTogglePath`].
    SessionRename,
    /// See [`Action::SessionTogglePath`].
    SessionDelete,
    /// See [`Action::SessionTogglePath`].
    SessionDeleteNoninvasive,
    /// pi's `/scoped-models` keys.
    ModelsSave,
    /// See [`Action::ModelsSave`].
    ModelsEnableAll,
    /// See [`Action::ModelsSave`].
    ModelsClearAll,
    /// See [`Action::ModelsSave`].
    ModelsToggleProvider,
    /// See [`Action::ModelsSave`].
    ModelsReorderUp,
    /// See [`Action::ModelsSave`].
    ModelsReorderDown,
}

/// One action: its id, pi's older flat id, what it does, its default keys, where they apply,
/// and whether this TUI does it (the others are known ids, accepted and listed as such).
#[derive(Clone, Copy, Debug)]
pub struct Binding {
    /// The action.
    pub action: Action,
    /// pi's namespaced id.
    pub id: &'static str,
    /// pi's id before namespacing, if it had one.
    pub legacy: Option<&'static str>,
    /// For `/hotkeys`.
    pub description: &'static str,
    /// Default keys.
    pub defaults: &'static [&'static str],
    /// Where the keys apply.
    pub context: Context,
    /// Whether this TUI does it.
    pub active: bool,
}

const fn bind(
    action: Action,
    id: &'static str,
    legacy: Option<&'static str>,
    description: &'static str,
    defaults: &'static [&'static str],
    context: Context,
) -> Binding {
    Binding {
        action,
        id,
        legacy,
        description,
        defaults,
        context,
        active: true,
    }
}

const fn known(binding: Binding) -> Binding {
    Binding {
        active: false,
        ..binding
    }
}

use Action as A;
use Context::{Main, Models, Select, Sessions, Tree};

/// Every action, in pi's order (its `docs/keybindings.md`), then ours.
pub const BINDINGS: &[Binding] = &[
    bind(
        A::CursorUp,
        "tui.editor.cursorUp",
        Some("cursorUp"),
        "Cursor up / older prompt",
        &["up"],
        Main,
    ),
    bind(
        A::CursorDown,
        "tui.editor.cursorDown",
        Some("cursorDown"),
        "Cursor down / newer prompt",
        &["down"],
        Main,
    ),
    bind(
        A::CursorLeft,
        "tui.editor.cursorLeft",
        Some("cursorLeft"),
        "Cursor left",
        &["left", "ctrl+b"],
        Main,
    ),
    bind(
        A::CursorRight,
        "tui.editor.cursorRight",
        Some("cursorRight"),
        "Cursor right",
        &["right", "ctrl+f"],
        Main,
    ),
    bind(
        A::CursorWordLeft,
        "tui.editor.cursorWordLeft",
        Some("cursorWordLeft"),
        "Word left",
        &["alt+left", "ctrl+left", "alt+b"],
        Main,
    ),
    bind(
        A::CursorWordRight,
        "tui.editor.cursorWordRight",
        Some("cursorWordRight"),
        "Word right",
        &["alt+right", "ctrl+right", "alt+f"],
        Main,
    ),
    bind(
        A::CursorLineStart,
        "tui.editor.cursorLineStart",
        Some("cursorLineStart"),
        "Line start",
        &["home", "ctrl+a"],
        Main,
    ),
    bind(
        A::CursorLineEnd,
        "tui.editor.cursorLineEnd",
        Some("cursorLineEnd"),
        "Line end",
        &["end", "ctrl+e"],
        Main,
    ),
    bind(
        A::JumpForward,
        "tui.editor.jumpForward",
        Some("jumpForward"),
        "Jump forward to a character",
        &["ctrl+]"],
        Main,
    ),
    bind(
        A::JumpBackward,
        "tui.editor.jumpBackward",
        Some("jumpBackward"),
        "Jump backward to a character",
        &["ctrl+alt+]"],
        Main,
    ),
    bind(
        A::PageUp,
        "tui.editor.pageUp",
        Some("pageUp"),
        "Scroll up a page",
        &["pageUp"],
        Main,
    ),
    bind(
        A::PageDown,
        "tui.editor.pageDown",
        Some("pageDown"),
        "Scroll down a page",
        &["pageDown"],
        Main,
    ),
    bind(
        A::DeleteCharBackward,
        "tui.editor.deleteCharBackward",
        Some("deleteCharBackward"),
        "Delete character backward",
        &["backspace"],
        Main,
    ),
    bind(
        A::DeleteCharForward,
        "tui.editor.deleteCharForward",
        Some("deleteCharForward"),
        "Delete character forward",
        &["delete", "ctrl+d"],
        Main,
    ),
    bind(
        A::DeleteWordBackward,
        "tui.editor.deleteWordBackward",
        Some("deleteWordBackward"),
        "Delete word backward",
        &["ctrl+w", "alt+backspace"],
        Main,
    ),
    bind(
        A::DeleteWordForward,
        "tui.editor.deleteWordForward",
        Some("deleteWordForward"),
        "Delete word forward",
        &["alt+d", "alt+delete"],
        Main,
    ),
    bind(
        A::DeleteToLineStart,
        "tui.editor.deleteToLineStart",
        Some("deleteToLineStart"),
        "Delete to line start",
        &["ctrl+u"],
        Main,
    ),
    bind(
        A::DeleteToLineEnd,
        "tui.editor.deleteToLineEnd",
        Some("deleteToLineEnd"),
        "Delete to line end",
        &["ctrl+k"],
        Main,
    ),
    bind(
        A::NewLine,
        "tui.input.newLine",
        Some("newLine"),
        "New line",
        &["shift+enter", "ctrl+j"],
        Main,
    ),
    bind(
        A::Submit,
        "tui.input.submit",
        Some("submit"),
        "Send (while running: steer)",
        &["enter"],
        Main,
    ),
    bind(
        A::Tab,
        "tui.input.tab",
        Some("tab"),
        "Complete paths and commands",
        &["tab"],
        Main,
    ),
    bind(
        A::Yank,
        "tui.editor.yank",
        Some("yank"),
        "Paste the last deleted text",
        &["ctrl+y"],
        Main,
    ),
    bind(
        A::YankPop,
        "tui.editor.yankPop",
        Some("yankPop"),
        "Cycle through deleted text after pasting",
        &["alt+y"],
        Main,
    ),
    bind(
        A::Undo,
        "tui.editor.undo",
        Some("undo"),
        "Undo",
        &["ctrl+-"],
        Main,
    ),
    bind(
        A::Redo,
        "tui.editor.redo",
        None,
        "Redo (ours)",
        &["alt+-"],
        Main,
    ),
    known(bind(
        A::Copy,
        "tui.input.copy",
        Some("copy"),
        "Copy selection",
        &["ctrl+c"],
        Main,
    )),
    bind(
        A::SelectUp,
        "tui.select.up",
        Some("selectUp"),
        "Move selection up",
        &["up"],
        Select,
    ),
    bind(
        A::SelectDown,
        "tui.select.down",
        Some("selectDown"),
        "Move selection down",
        &["down"],
        Select,
    ),
    bind(
        A::SelectPageUp,
        "tui.select.pageUp",
        Some("selectPageUp"),
        "Selection page up",
        &["pageUp"],
        Select,
    ),
    bind(
        A::SelectPageDown,
        "tui.select.pageDown",
        Some("selectPageDown"),
        "Selection page down",
        &["pageDown"],
        Select,
    ),
    bind(
        A::SelectConfirm,
        "tui.select.confirm",
        Some("selectConfirm"),
        "Choose",
        &["enter"],
        Select,
    ),
    bind(
        A::SelectCancel,
        "tui.select.cancel",
        Some("selectCancel"),
        "Close the list",
        &["escape", "ctrl+c"],
        Select,
    ),
    bind(
        A::Interrupt,
        "app.interrupt",
        Some("interrupt"),
        "Abort the run (twice on an empty editor: the tree)",
        &["escape"],
        Main,
    ),
    bind(
        A::Clear,
        "app.clear",
        Some("clear"),
        "Clear the editor (twice: quit)",
        &["ctrl+c"],
        Main,
    ),
    bind(
        A::Exit,
        "app.exit",
        Some("exit"),
        "Detach (empty editor)",
        &["ctrl+d"],
        Main,
    ),
    bind(
        A::Suspend,
        "app.suspend",
        Some("suspend"),
        "Suspend to the shell (fg returns)",
        &["ctrl+z"],
        Main,
    ),
    bind(
        A::CycleThinkingLevel,
        "app.thinking.cycle",
        Some("cycleThinkingLevel"),
        "Next thinking level",
        &["shift+tab"],
        Main,
    ),
    bind(
        A::CycleModelForward,
        "app.model.cycleForward",
        Some("cycleModelForward"),
        "Next model",
        &["ctrl+p"],
        Main,
    ),
    bind(
        A::CycleModelBackward,
        "app.model.cycleBackward",
        Some("cycleModelBackward"),
        "Previous model",
        &["shift+ctrl+p"],
        Main,
    ),
    bind(
        A::SelectModel,
        "app.model.select",
        Some("selectModel"),
        "Choose a model",
        &["ctrl+l"],
        Main,
    ),
    bind(
        A::ExpandTools,
        "app.tools.expand",
        Some("expandTools"),
        "Expand tool output",
        &["ctrl+o"],
        Main,
    ),
    bind(
        A::ToggleThinking,
        "app.thinking.toggle",
        Some("toggleThinking"),
        "Show thinking",
        &["ctrl+t"],
        Main,
    ),
    bind(
        A::ExternalEditor,
        "app.editor.external",
        Some("externalEditor"),
        "Edit in $VISUAL / $EDITOR",
        &["ctrl+g"],
        Main,
    ),
    bind(
        A::FollowUp,
        "app.message.followUp",
        Some("followUp"),
        "Queue a follow-up",
        &["alt+enter"],
        Main,
    ),
    bind(
        A::Dequeue,
        "app.message.dequeue",
        Some("dequeue"),
        "Take queued messages back to edit",
        &["alt+up"],
        Main,
    ),
    bind(
        A::PasteImage,
        "app.clipboard.pasteImage",
        Some("pasteImage"),
        "Paste an image from the clipboard",
        &["ctrl+v"],
        Main,
    ),
    bind(
        A::NewSession,
        "app.session.new",
        Some("newSession"),
        "New session",
        &[],
        Main,
    ),
    bind(
        A::Tree,
        "app.session.tree",
        Some("tree"),
        "Session tree",
        &[],
        Main,
    ),
    bind(
        A::Fork,
        "app.session.fork",
        Some("fork"),
        "Fork the session",
        &[],
        Main,
    ),
    bind(
        A::Resume,
        "app.session.resume",
        Some("resume"),
        "Resume a session",
        &[],
        Main,
    ),
    bind(
        A::SessionTogglePath,
        "app.session.togglePath",
        Some("toggleSessionPath"),
        "Session picker: show paths",
        &["ctrl+p"],
        Sessions,
    ),
    bind(
        A::SessionToggleSort,
        "app.session.toggleSort",
        Some("toggleSessionSort"),
        "Session picker: sort",
        &["ctrl+s"],
        Sessions,
    ),
    bind(
        A::SessionToggleNamedFilter,
        "app.session.toggleNamedFilter",
        Some("toggleSessionNamedFilter"),
        "Session picker: named only",
        &["ctrl+n"],
        Sessions,
    ),
    bind(
        A::SessionRename,
        "app.session.rename",
        Some("renameSession"),
        "Session picker: rename",
        &["ctrl+r"],
        Sessions,
    ),
    bind(
        A::SessionDelete,
        "app.session.delete",
        Some("deleteSession"),
        "Session picker: delete",
        &["ctrl+d"],
        Sessions,
    ),
    bind(
        A::SessionDeleteNoninvasive,
        "app.session.deleteNoninvasive",
        Some("deleteSessionNoninvasive"),
        "Session picker: delete (empty query)",
        &["ctrl+backspace"],
        Sessions,
    ),
    bind(
        A::TreeFoldOrUp,
        "app.tree.foldOrUp",
        Some("treeFoldOrUp"),
        "Tree: fold, or previous segment",
        &["ctrl+left", "alt+left"],
        Tree,
    ),
    bind(
        A::TreeUnfoldOrDown,
        "app.tree.unfoldOrDown",
        Some("treeUnfoldOrDown"),
        "Tree: unfold, or next segment",
        &["ctrl+right", "alt+right"],
        Tree,
    ),
    bind(
        A::TreeEditLabel,
        "app.tree.editLabel",
        Some("treeEditLabel"),
        "Tree: edit the label",
        &["shift+l"],
        Tree,
    ),
    bind(
        A::TreeToggleLabelTimestamp,
        "app.tree.toggleLabelTimestamp",
        Some("treeToggleLabelTimestamp"),
        "Tree: label times",
        &["shift+t"],
        Tree,
    ),
    bind(
        A::TreeFilterDefault,
        "app.tree.filter.default",
        None,
        "Tree: default view",
        &["ctrl+d"],
        Tree,
    ),
    bind(
        A::TreeFilterNoTools,
        "app.tree.filter.noTools",
        None,
        "Tree: hide tool results",
        &["ctrl+t"],
        Tree,
    ),
    bind(
        A::TreeFilterUserOnly,
        "app.tree.filter.userOnly",
        None,
        "Tree: user messages only",
        &["ctrl+u"],
        Tree,
    ),
    bind(
        A::TreeFilterLabeledOnly,
        "app.tree.filter.labeledOnly",
        None,
        "Tree: labeled entries only",
        &["ctrl+l"],
        Tree,
    ),
    bind(
        A::TreeFilterAll,
        "app.tree.filter.all",
        None,
        "Tree: every entry",
        &["ctrl+a"],
        Tree,
    ),
    bind(
        A::TreeFilterCycleForward,
        "app.tree.filter.cycleForward",
        None,
        "Tree: next filter",
        &["ctrl+o"],
        Tree,
    ),
    bind(
        A::TreeFilterCycleBackward,
        "app.tree.filter.cycleBackward",
        None,
        "Tree: previous filter",
        &["shift+ctrl+o"],
        Tree,
    ),
    bind(
        A::ModelsSave,
        "app.models.save",
        None,
        "Scoped models: save",
        &["ctrl+s"],
        Models,
    ),
    bind(
        A::ModelsEnableAll,
        "app.models.enableAll",
        None,
        "Scoped models: enable all",
        &["ctrl+a"],
        Models,
    ),
    bind(
        A::ModelsClearAll,
        "app.models.clearAll",
        None,
        "Scoped models: clear all",
        &["ctrl+x"],
        Models,
    ),
    bind(
        A::ModelsToggleProvider,
        "app.models.toggleProvider",
        None,
        "Scoped models: toggle provider",
        &["ctrl+p"],
        Models,
    ),
    bind(
        A::ModelsReorderUp,
        "app.models.reorderUp",
        None,
        "Scoped models: move up",
        &["alt+up"],
        Models,
    ),
    bind(
        A::ModelsReorderDown,
        "app.models.reorderDown",
        None,
        "Scoped models: move down",
        &["alt+down"],
        Models,
    ),
    bind(
        A::HistorySearch,
        "app.history.search",
        Some("historySearch"),
        "Search prompt history",
        &["ctrl+r"],
        Main,
    ),
    bind(
        A::ScrollUp,
        "app.transcript.scrollUp",
        Some("scrollUp"),
        "Scroll up a line",
        &["shift+up"],
        Main,
    ),
    bind(
        A::ScrollDown,
        "app.transcript.scrollDown",
        Some("scrollDown"),
        "Scroll down a line",
        &["shift+down"],
        Main,
    ),
];

/// The binding of `action`.
pub fn binding(action: Action) -> &'static Binding {
    BINDINGS
        .iter()
        .find(|binding| binding.action == action)
        .unwrap_or(&BINDINGS[0])
}

/// A key with modifiers, as written in `keybindings.json` (`ctrl+shift+p`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeyChord {
    /// The key.
    pub code: KeyCode,
    /// Ctrl, Alt, Shift.
    pub modifiers: KeyModifiers,
}

impl KeyChord {
    /// Parses pi's key syntax; `None` for unknown keys.
    pub fn parse(text: &str) -> Option<KeyChord> {
        let mut modifiers = KeyModifiers::NONE;
        let lower = text.trim().to_ascii_lowercase();
        let mut parts: Vec<&str> = lower.split('+').collect();
        // `ctrl++` names the plus key.
        if lower.ends_with("++") {
            parts.pop();
            parts.pop();
            parts.push("+");
        }
        let key = parts.pop()?;
        for modifier in parts {
            match modifier {
                "ctrl" | "control" => modifiers |= KeyModifiers::CONTROL,
                "alt" | "meta" | "option" => modifiers |= KeyModifiers::ALT,
                "shift" => modifiers |= KeyModifiers::SHIFT,
                _ => return None,
            }
        }
        let code = match key {
            "escape" | "esc" => KeyCode::Esc,
            "enter" | "return" => KeyCode::Enter,
            "tab" => KeyCode::Tab,
            "space" => KeyCode::Char(' '),
            "backspace" => KeyCode::Backspace,
            "delete" => KeyCode::Delete,
            "insert" => KeyCode::Insert,
            "clear" => KeyCode::KeypadBegin,
            "home" => KeyCode::Home,
            "end" => KeyCode::End,
            "pageup" => KeyCode::PageUp,
            "pagedown" => KeyCode::PageDown,
            "up" => KeyCode::Up,
            "down" => KeyCode::Down,
            "left" => KeyCode::Left,
            "right" => KeyCode::Right,
            other if other.starts_with('f') && other.len() > 1 => {
                KeyCode::F(other[1..].parse().ok()?)
            }
            other => {
                let mut chars = other.chars();
                let first = chars.next()?;
                if chars.next().is_some() {
                    return None;
                }
                KeyCode::Char(first)
            }
        };
        // Shift+Tab arrives as BackTab.
        if code == KeyCode::Tab && modifiers.contains(KeyModifiers::SHIFT) {
            return Some(KeyChord {
                code: KeyCode::BackTab,
                modifiers: modifiers - KeyModifiers::SHIFT,
            });
        }
        Some(KeyChord { code, modifiers })
    }

    /// The chord of a key event, normalized (letters lower-case, shift folded into
    /// `BackTab`, the control characters terminals send for Ctrl+symbols named).
    pub fn from_event(event: &KeyEvent) -> KeyChord {
        let mut modifiers =
            event.modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT);
        let code = match event.code {
            KeyCode::Char(c) if c.is_ascii_uppercase() => {
                modifiers |= KeyModifiers::SHIFT;
                KeyCode::Char(c.to_ascii_lowercase())
            }
            KeyCode::BackTab => {
                modifiers -= KeyModifiers::SHIFT;
                KeyCode::BackTab
            }
            // Without the keyboard protocol Ctrl+] is GS (0x1d), Ctrl+- / Ctrl+_ is US (0x1f).
            KeyCode::Char('\u{1d}') => {
                modifiers |= KeyModifiers::CONTROL;
                KeyCode::Char(']')
            }
            KeyCode::Char('\u{1f}') => {
                modifiers |= KeyModifiers::CONTROL;
                KeyCode::Char('-')
            }
            // crossterm reports Ctrl+] and Ctrl+- that way as Ctrl+5 and Ctrl+7.
            KeyCode::Char('5') if modifiers.contains(KeyModifiers::CONTROL) => KeyCode::Char(']'),
            KeyCode::Char('7') if modifiers.contains(KeyModifiers::CONTROL) => KeyCode::Char('-'),
            other => other,
        };
        // A shifted symbol (`?`, `@`) carries SHIFT on some terminals; bindings never use it.
        if let KeyCode::Char(c) = code
            && !c.is_ascii_alphanumeric()
            && !modifiers.contains(KeyModifiers::CONTROL)
        {
            modifiers -= KeyModifiers::SHIFT;
        }
        KeyChord { code, modifiers }
    }

    /// pi's spelling of the chord (`ctrl+shift+p`).
    pub fn label(&self) -> String {
        let mut parts = Vec::new();
        if self.modifiers.contains(KeyModifiers::CONTROL) {
            parts.push("ctrl".to_owned());
        }
        if self.modifiers.contains(KeyModifiers::ALT) {
            parts.push("alt".to_owned());
        }
        if self.modifiers.contains(KeyModifiers::SHIFT) || self.code == KeyCode::BackTab {
            parts.push("shift".to_owned());
        }
        parts.push(match self.code {
            KeyCode::Esc => "escape".to_owned(),
            KeyCode::Enter => "enter".to_owned(),
            KeyCode::Tab | KeyCode::BackTab => "tab".to_owned(),
            KeyCode::Char(' ') => "space".to_owned(),
            KeyCode::Char(c) => c.to_string(),
            KeyCode::Backspace => "backspace".to_owned(),
            KeyCode::Delete => "delete".to_owned(),
            KeyCode::Up => "up".to_owned(),
            KeyCode::Down => "down".to_owned(),
            KeyCode::Left => "left".to_owned(),
            KeyCode::Right => "right".to_owned(),
            KeyCode::PageUp => "pageUp".to_owned(),
            KeyCode::PageDown => "pageDown".to_owned(),
            KeyCode::Home => "home".to_owned(),
            KeyCode::End => "end".to_owned(),
            KeyCode::F(n) => format!("f{n}"),
            other => format!("{other:?}").to_ascii_lowercase(),
        });
        parts.join("+")
    }
}

/// Keys by action.
#[derive(Clone, Debug)]
pub struct Keymap {
    bindings: BTreeMap<Action, Vec<KeyChord>>,
}

impl Default for Keymap {
    /// pi 0.73's defaults.
    fn default() -> Self {
        let bindings = BINDINGS
            .iter()
            .map(|binding| {
                let chords = binding
                    .defaults
                    .iter()
                    .filter_map(|key| KeyChord::parse(key))
                    .collect();
                (binding.action, chords)
            })
            .collect();
        Keymap { bindings }
    }
}

impl Keymap {
    /// The defaults with `keybindings.json` applied, and what to tell the user about it:
    /// ids and keys it does not know, values that are neither a key nor a list, and keys
    /// it gives two actions that apply in the same place. Nothing is fatal.
    pub fn with_overrides(json: &str) -> (Keymap, Vec<String>) {
        let mut keymap = Keymap::default();
        let mut warnings = Vec::new();
        let value: serde_json::Value = match serde_json::from_str(json) {
            Ok(value) => value,
            Err(error) => {
                warnings.push(format!("keybindings.json is not valid JSON: {error}"));
                return (keymap, warnings);
            }
        };
        let Some(object) = value.as_object() else {
            warnings.push("keybindings.json must be an object of action ids to keys".to_owned());
            return (keymap, warnings);
        };
        let mut set: Vec<Action> = Vec::new();
        for (name, keys) in object {
            let found = BINDINGS
                .iter()
                .find(|binding| binding.id == name)
                .map(|binding| (binding, false))
                .or_else(|| {
                    BINDINGS
                        .iter()
                        .find(|binding| binding.legacy == Some(name.as_str()))
                        .map(|binding| (binding, true))
                });
            let Some((binding, legacy)) = found else {
                warnings.push(format!(
                    "keybindings.json: unknown id `{name}` (ids are pi's, like app.model.select \
                     or tui.editor.cursorUp, as in pi's docs/keybindings.md)"
                ));
                continue;
            };
            // pi's migration: a namespaced id beats its older name given too.
            if legacy && object.contains_key(binding.id) {
                continue;
            }
            let texts: Vec<&str> = match keys {
                serde_json::Value::String(key) => vec![key.as_str()],
                serde_json::Value::Array(keys) if keys.iter().all(|k| k.is_string()) => {
                    keys.iter().filter_map(|k| k.as_str()).collect()
                }
                _ => {
                    warnings.push(format!(
                        "keybindings.json: `{name}` needs a key or a list of keys"
                    ));
                    continue;
                }
            };
            let texts_empty = texts.is_empty();
            let mut chords = Vec::new();
            for text in texts {
                match KeyChord::parse(text) {
                    Some(chord) => chords.push(chord),
                    None => warnings.push(format!(
                        "keybindings.json: unknown key `{text}` for `{name}`"
                    )),
                }
            }
            if chords.is_empty() && !texts_empty {
                // Nothing usable: the action keeps its keys rather than losing them all.
                let kept: Vec<String> = keymap
                    .keys(binding.action)
                    .iter()
                    .map(KeyChord::label)
                    .collect();
                warnings.push(format!(
                    "keybindings.json: `{name}` keeps its default keys ({})",
                    if kept.is_empty() {
                        "none".to_owned()
                    } else {
                        kept.join(", ")
                    }
                ));
                continue;
            }
            keymap.bindings.insert(binding.action, chords);
            set.push(binding.action);
        }
        // A key the file gives that another action of the same place also has: one wins,
        // and the other no longer claims it (so help texts show what keys do).
        let mut said = std::collections::BTreeSet::new();
        let mut lost: Vec<(Action, KeyChord)> = Vec::new();
        for action in &set {
            let context = binding(*action).context;
            for chord in keymap.keys(*action) {
                for other in BINDINGS.iter().filter(|other| {
                    other.action != *action
                        && other.context == context
                        && keymap.keys(other.action).contains(chord)
                        && !shared_by_default(*action, other.action)
                }) {
                    let pair = (
                        binding(*action).id.min(other.id),
                        binding(*action).id.max(other.id),
                        chord.label(),
                    );
                    let winner = first_of(*action, other.action);
                    let loser = if winner == other.id {
                        *action
                    } else {
                        other.action
                    };
                    lost.push((loser, *chord));
                    if said.insert(pair) {
                        warnings.push(format!(
                            "keybindings.json: {} is bound to both `{}` and `{}`; `{}` wins",
                            chord.label(),
                            binding(*action).id,
                            other.id,
                            winner
                        ));
                    }
                }
            }
        }
        for (action, chord) in lost {
            if let Some(chords) = keymap.bindings.get_mut(&action) {
                chords.retain(|own| *own != chord);
            }
        }
        (keymap, warnings)
    }

    /// The actions bound to a key event in `context`, in the order they are tried (pi's: the
    /// app's before the editor's).
    pub fn actions(&self, event: &KeyEvent, context: Context) -> Vec<Action> {
        let chord = KeyChord::from_event(event);
        let mut found: Vec<Action> = BINDINGS
            .iter()
            .filter(|binding| binding.context == context && binding.active)
            .filter(|binding| self.keys(binding.action).contains(&chord))
            .map(|binding| binding.action)
            .collect();
        found.sort_by_key(|action| !binding(*action).id.starts_with("app."));
        found
    }

    /// The first action bound to a key event in the main context, if any.
    pub fn action(&self, event: &KeyEvent) -> Option<Action> {
        self.actions(event, Context::Main).into_iter().next()
    }

    /// The keys of an action, for help texts.
    pub fn keys(&self, action: Action) -> &[KeyChord] {
        self.bindings.get(&action).map(Vec::as_slice).unwrap_or(&[])
    }
}

/// pi's defaults give these pairs one key on purpose: the first applies only sometimes
/// (Ctrl+D detaches on an empty editor, else deletes; Ctrl+C clears, there being no selection
/// to copy).
fn shared_by_default(a: Action, b: Action) -> bool {
    let pair = |x, y| (a == x && b == y) || (a == y && b == x);
    pair(A::Exit, A::DeleteCharForward) || pair(A::Clear, A::Copy)
}

/// The id of whichever of two actions a shared key runs.
fn first_of(a: Action, b: Action) -> &'static str {
    let (a, b) = (binding(a), binding(b));
    match (a.id.starts_with("app."), b.id.starts_with("app.")) {
        (false, true) => b.id,
        (true, false) => a.id,
        _ => {
            let position = |id| BINDINGS.iter().position(|binding| binding.id == id);
            if position(a.id) <= position(b.id) {
                a.id
            } else {
                b.id
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, modifiers)
    }

    #[test]
    fn defaults_follow_pi() {
        let keymap = Keymap::default();
        let cases = [
            (key(KeyCode::Esc, KeyModifiers::NONE), Some(A::Interrupt)),
            (
                key(KeyCode::Char('c'), KeyModifiers::CONTROL),
                Some(A::Clear),
            ),
            (
                key(KeyCode::Char('p'), KeyModifiers::CONTROL),
                Some(A::CycleModelForward),
            ),
            (
                key(
                    KeyCode::Char('P'),
                    KeyModifiers::CONTROL | KeyModifiers::SHIFT,
                ),
                Some(A::CycleModelBackward),
            ),
            (
                key(KeyCode::BackTab, KeyModifiers::SHIFT),
                Some(A::CycleThinkingLevel),
            ),
            (key(KeyCode::Enter, KeyModifiers::ALT), Some(A::FollowUp)),
            (key(KeyCode::Enter, KeyModifiers::SHIFT), Some(A::NewLine)),
            (key(KeyCode::Enter, KeyModifiers::NONE), Some(A::Submit)),
            (
                key(KeyCode::Char('y'), KeyModifiers::CONTROL),
                Some(A::Yank),
            ),
            (
                key(KeyCode::Char('g'), KeyModifiers::CONTROL),
                Some(A::ExternalEditor),
            ),
            (
                key(KeyCode::Char('z'), KeyModifiers::CONTROL),
                Some(A::Suspend),
            ),
            (key(KeyCode::Char('a'), KeyModifiers::NONE), None),
            (key(KeyCode::Char('@'), KeyModifiers::SHIFT), None),
        ];
        for (event, expected) in cases {
            assert_eq!(keymap.action(&event), expected, "{event:?}");
        }
        // Ctrl+D: detach on an empty editor, else delete forward (app first).
        assert_eq!(
            keymap.actions(
                &key(KeyCode::Char('d'), KeyModifiers::CONTROL),
                Context::Main
            ),
            [A::Exit, A::DeleteCharForward]
        );
        // Terminals without the keyboard protocol send Ctrl+] as GS.
        assert_eq!(
            keymap.action(&key(KeyCode::Char('\u{1d}'), KeyModifiers::NONE)),
            Some(A::JumpForward)
        );
        // The tree's own keys, over the lists'.
        assert_eq!(
            keymap.actions(
                &key(KeyCode::Char('u'), KeyModifiers::CONTROL),
                Context::Tree
            ),
            [A::TreeFilterUserOnly]
        );
        assert_eq!(
            keymap.actions(&key(KeyCode::Enter, KeyModifiers::NONE), Context::Select),
            [A::SelectConfirm]
        );
    }

    #[test]
    fn keybindings_json_takes_pis_ids_and_its_older_names() {
        let (keymap, warnings) = Keymap::with_overrides(
            r#"{"tui.input.submit": ["ctrl+s", "enter"], "expandTools": "f2",
                "tui.editor.cursorUp": ["up", "ctrl+k"], "app.clear": "hyper+x",
                "app.model.sellect": "f3", "app.exit": 4}"#,
        );
        assert_eq!(
            warnings,
            [
                "keybindings.json: unknown key `hyper+x` for `app.clear`",
                "keybindings.json: `app.clear` keeps its default keys (ctrl+c)",
                "keybindings.json: unknown id `app.model.sellect` (ids are pi's, like app.model.select or tui.editor.cursorUp, as in pi's docs/keybindings.md)",
                "keybindings.json: `app.exit` needs a key or a list of keys",
                "keybindings.json: ctrl+k is bound to both `tui.editor.cursorUp` and `tui.editor.deleteToLineEnd`; `tui.editor.cursorUp` wins",
            ]
        );
        assert_eq!(
            keymap.action(&key(KeyCode::Char('s'), KeyModifiers::CONTROL)),
            Some(A::Submit)
        );
        // A key that parses nowhere leaves the action its keys; the loser of a conflict no
        // longer claims the key, so help texts show what keys do.
        assert_eq!(
            keymap.actions(
                &key(KeyCode::Char('c'), KeyModifiers::CONTROL),
                Context::Main
            ),
            [A::Clear]
        );
        assert!(
            !keymap
                .keys(A::DeleteToLineEnd)
                .contains(&KeyChord::parse("ctrl+k").unwrap())
        );
        assert_eq!(
            keymap.action(&key(KeyCode::F(2), KeyModifiers::NONE)),
            Some(A::ExpandTools)
        );
        assert_eq!(
            keymap.action(&key(KeyCode::Char('o'), KeyModifiers::CONTROL)),
            None
        );
        assert_eq!(
            keymap.action(&key(KeyCode::Char('c'), KeyModifiers::CONTROL)),
            Some(A::Clear)
        );
        let labels: Vec<String> = keymap.keys(A::Submit).iter().map(KeyChord::label).collect();
        assert_eq!(labels, ["ctrl+s", "enter"]);
    }

    #[test]
    fn a_namespaced_id_beats_its_older_name() {
        let (keymap, warnings) =
            Keymap::with_overrides(r#"{"selectModel": "f4", "app.model.select": "f5"}"#);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(
            keymap.action(&key(KeyCode::F(5), KeyModifiers::NONE)),
            Some(A::SelectModel)
        );
        assert_eq!(keymap.action(&key(KeyCode::F(4), KeyModifiers::NONE)), None);
    }

    #[test]
    fn every_id_is_unique_and_every_default_parses() {
        let mut ids = std::collections::HashSet::new();
        for binding in BINDINGS {
            assert!(ids.insert(binding.id), "{} twice", binding.id);
            if let Some(legacy) = binding.legacy {
                assert!(ids.insert(legacy), "{legacy} twice");
            }
            for key in binding.defaults {
                assert!(KeyChord::parse(key).is_some(), "{}: {key}", binding.id);
            }
        }
    }
}
