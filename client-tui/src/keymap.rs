//! Key bindings: the app-level actions of pi's interactive mode, their default keys, and pi's
//! `keybindings.json` (`{"action": "ctrl+x" | ["ctrl+x", "f2"]}`), which replaces the
//! defaults of the actions it names.
//!
//! Invariant: [`Keymap::action`] is a pure lookup; editing keys (movement, deletion) are not
//! actions and stay with the editor.

use std::collections::BTreeMap;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Something a key can do outside of plain text editing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    /// Abort the run (or close an overlay).
    Interrupt,
    /// Clear the editor; twice quits.
    Clear,
    /// Detach on an empty editor.
    Exit,
    /// Open the model selector.
    SelectModel,
    /// Next model.
    CycleModelForward,
    /// Previous model.
    CycleModelBackward,
    /// Next thinking level.
    CycleThinkingLevel,
    /// Expand or collapse tool output.
    ExpandTools,
    /// Show or hide thinking blocks.
    ToggleThinking,
    /// Queue a follow-up.
    FollowUp,
    /// Put queued messages back into the editor.
    Dequeue,
    /// Insert a newline.
    NewLine,
    /// Send.
    Submit,
    /// Complete.
    Tab,
    /// Search prompt history.
    HistorySearch,
    /// Scroll the transcript up a page.
    PageUp,
    /// Scroll the transcript down a page.
    PageDown,
    /// Scroll the transcript up a line.
    ScrollUp,
    /// Scroll the transcript down a line.
    ScrollDown,
    /// Open the session tree.
    Tree,
    /// Start a new session.
    NewSession,
    /// Open the session picker.
    Resume,
}

/// Every action with its name in `keybindings.json` and its description for `/hotkeys`.
pub const ACTIONS: &[(Action, &str, &str)] = &[
    (
        Action::Interrupt,
        "interrupt",
        "Abort the run or close a dialog",
    ),
    (Action::Clear, "clear", "Clear the editor (twice: quit)"),
    (Action::Exit, "exit", "Detach (empty editor)"),
    (Action::SelectModel, "selectModel", "Choose a model"),
    (Action::CycleModelForward, "cycleModelForward", "Next model"),
    (
        Action::CycleModelBackward,
        "cycleModelBackward",
        "Previous model",
    ),
    (
        Action::CycleThinkingLevel,
        "cycleThinkingLevel",
        "Next thinking level",
    ),
    (Action::ExpandTools, "expandTools", "Expand tool output"),
    (Action::ToggleThinking, "toggleThinking", "Show thinking"),
    (Action::FollowUp, "followUp", "Queue a follow-up"),
    (
        Action::Dequeue,
        "dequeue",
        "Take queued messages back to edit",
    ),
    (Action::NewLine, "newLine", "New line"),
    (Action::Submit, "submit", "Send (while running: steer)"),
    (Action::Tab, "tab", "Complete"),
    (
        Action::HistorySearch,
        "historySearch",
        "Search prompt history",
    ),
    (Action::PageUp, "pageUp", "Scroll up"),
    (Action::PageDown, "pageDown", "Scroll down"),
    (Action::ScrollUp, "scrollUp", "Scroll up a line"),
    (Action::ScrollDown, "scrollDown", "Scroll down a line"),
    (Action::Tree, "tree", "Session tree"),
    (Action::NewSession, "newSession", "New session"),
    (Action::Resume, "resume", "Resume a session"),
];

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
    /// `BackTab`).
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

/// Action by key.
#[derive(Clone, Debug)]
pub struct Keymap {
    bindings: BTreeMap<Action, Vec<KeyChord>>,
}

impl Default for Keymap {
    /// pi's defaults (spec §7.7), plus Ctrl+R for history search and PageUp/PageDown.
    fn default() -> Self {
        let defaults: &[(Action, &[&str])] = &[
            (Action::Interrupt, &["escape"]),
            (Action::Clear, &["ctrl+c"]),
            (Action::Exit, &["ctrl+d"]),
            (Action::SelectModel, &["ctrl+l"]),
            (Action::CycleModelForward, &["ctrl+p"]),
            (Action::CycleModelBackward, &["shift+ctrl+p"]),
            (Action::CycleThinkingLevel, &["shift+tab"]),
            (Action::ExpandTools, &["ctrl+o"]),
            (Action::ToggleThinking, &["ctrl+t"]),
            (Action::FollowUp, &["alt+enter"]),
            (Action::Dequeue, &["alt+up"]),
            (Action::NewLine, &["shift+enter", "ctrl+j"]),
            (Action::Submit, &["enter"]),
            (Action::Tab, &["tab"]),
            (Action::HistorySearch, &["ctrl+r"]),
            (Action::PageUp, &["pageUp"]),
            (Action::PageDown, &["pageDown"]),
            (Action::ScrollUp, &["shift+up"]),
            (Action::ScrollDown, &["shift+down"]),
            (Action::Tree, &[]),
            (Action::NewSession, &[]),
            (Action::Resume, &[]),
        ];
        let bindings = defaults
            .iter()
            .map(|(action, keys)| {
                let chords = keys.iter().filter_map(|key| KeyChord::parse(key)).collect();
                (*action, chords)
            })
            .collect();
        Keymap { bindings }
    }
}

impl Keymap {
    /// The defaults with `keybindings.json` applied. Unknown actions and keys are reported
    /// and skipped, never fatal.
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
            warnings.push("keybindings.json must be an object of action to key".to_owned());
            return (keymap, warnings);
        };
        for (name, keys) in object {
            let Some(action) = ACTIONS
                .iter()
                .find(|(_, action_name, _)| action_name == name)
                .map(|(action, _, _)| *action)
            else {
                // Editor actions (cursor movement, kill ring) are pi's editor's own; ours
                // keeps its emacs defaults.
                continue;
            };
            let texts: Vec<&str> = match keys {
                serde_json::Value::String(key) => vec![key.as_str()],
                serde_json::Value::Array(keys) => keys.iter().filter_map(|k| k.as_str()).collect(),
                _ => {
                    warnings.push(format!("keybindings.json: `{name}` needs a key or a list"));
                    continue;
                }
            };
            let mut chords = Vec::new();
            for text in texts {
                match KeyChord::parse(text) {
                    Some(chord) => chords.push(chord),
                    None => warnings.push(format!("keybindings.json: unknown key `{text}`")),
                }
            }
            keymap.bindings.insert(action, chords);
        }
        (keymap, warnings)
    }

    /// The action bound to a key event, if any.
    pub fn action(&self, event: &KeyEvent) -> Option<Action> {
        let chord = KeyChord::from_event(event);
        self.bindings
            .iter()
            .find(|(_, chords)| chords.contains(&chord))
            .map(|(action, _)| *action)
    }

    /// The keys of an action, for help texts.
    pub fn keys(&self, action: Action) -> &[KeyChord] {
        self.bindings.get(&action).map(Vec::as_slice).unwrap_or(&[])
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
            (
                key(KeyCode::Esc, KeyModifiers::NONE),
                Some(Action::Interrupt),
            ),
            (
                key(KeyCode::Char('c'), KeyModifiers::CONTROL),
                Some(Action::Clear),
            ),
            (
                key(KeyCode::Char('p'), KeyModifiers::CONTROL),
                Some(Action::CycleModelForward),
            ),
            (
                key(
                    KeyCode::Char('P'),
                    KeyModifiers::CONTROL | KeyModifiers::SHIFT,
                ),
                Some(Action::CycleModelBackward),
            ),
            (
                key(KeyCode::BackTab, KeyModifiers::SHIFT),
                Some(Action::CycleThinkingLevel),
            ),
            (
                key(KeyCode::Enter, KeyModifiers::ALT),
                Some(Action::FollowUp),
            ),
            (
                key(KeyCode::Enter, KeyModifiers::SHIFT),
                Some(Action::NewLine),
            ),
            (
                key(KeyCode::Enter, KeyModifiers::NONE),
                Some(Action::Submit),
            ),
            (key(KeyCode::Char('a'), KeyModifiers::NONE), None),
            (key(KeyCode::Char('@'), KeyModifiers::SHIFT), None),
        ];
        for (event, expected) in cases {
            assert_eq!(keymap.action(&event), expected, "{event:?}");
        }
    }

    #[test]
    fn keybindings_json_replaces_the_named_actions() {
        let (keymap, warnings) = Keymap::with_overrides(
            r#"{"submit": ["ctrl+s", "enter"], "expandTools": "f2", "cursorUp": "ctrl+k", "clear": "hyper+x"}"#,
        );
        assert_eq!(
            warnings,
            vec!["keybindings.json: unknown key `hyper+x`".to_owned()]
        );
        assert_eq!(
            keymap.action(&key(KeyCode::Char('s'), KeyModifiers::CONTROL)),
            Some(Action::Submit)
        );
        assert_eq!(
            keymap.action(&key(KeyCode::F(2), KeyModifiers::NONE)),
            Some(Action::ExpandTools)
        );
        assert_eq!(
            keymap.action(&key(KeyCode::Char('o'), KeyModifiers::CONTROL)),
            None
        );
        assert_eq!(
            keymap.action(&key(KeyCode::Char('c'), KeyModifiers::CONTROL)),
            None
        );
        let labels: Vec<String> = keymap
            .keys(Action::Submit)
            .iter()
            .map(KeyChord::label)
            .collect();
        assert_eq!(labels, ["ctrl+s", "enter"]);
    }
}
