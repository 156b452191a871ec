//! The keyboard: overlays first, then the completion popup, then bound actions, then editing.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use crate::editor::Editor;
use crate::effect::{Effect, Message, Request, SwitchTo};
use crate::keymap::{Action, Context};
use crate::overlay::{Overlay, Selector, SelectorItem, SelectorKind};
use crate::state::{Connection, DoubleEscape, State, THINKING_LEVELS, TreeFilter};

use super::commands;

/// Two Ctrl+C within this many ms quit; two Esc open the tree (`doubleEscapeAction`).
const DOUBLE_PRESS_MS: u64 = 500;

pub(super) fn on_key(state: &mut State, event: KeyEvent, now_ms: u64, effects: &mut Vec<Effect>) {
    if event.kind == KeyEventKind::Release {
        return;
    }
    if state.overlay.is_some() {
        overlay_key(state, event, effects);
        return;
    }
    if state.completion.is_some() && completion_key(state, &event) {
        return;
    }
    let before = state.editor.text();
    // After a jump key: the character to jump to.
    if let Some(forward) = state.pending_jump.take() {
        if let KeyCode::Char(target) = event.code
            && !event.modifiers.contains(KeyModifiers::CONTROL)
        {
            if !state.editor.jump_to(target, forward) {
                state.status = Some(format!("No {target:?} to jump to."));
            } else {
                state.status = None;
            }
            return;
        }
        state.status = None;
    }
    let actions = state.keymap.actions(&event, Context::Main);
    let handled = actions
        .into_iter()
        .any(|action| on_action(state, action, now_ms, effects));
    if !handled {
        // A key the TUI leaves free that an extension of the session registered.
        let chord = crate::keymap::KeyChord::from_event(&event);
        if let Some((_, key)) = state.shortcuts.iter().find(|(bound, _)| *bound == chord) {
            effects.push(Effect::Request(Request::Shortcut(key.clone())));
            return;
        }
        state.status = None;
        if let KeyCode::Char(c) = event.code
            && !event
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        {
            state.editor.type_text(&c.to_string());
        }
    }
    after_edit(state, &before, effects);
}

/// After any editor change: refresh completion, tell other clients the new draft.
pub(super) fn after_edit(state: &mut State, before: &str, effects: &mut Vec<Effect>) {
    let text = state.editor.text();
    if text != before {
        commands::refresh_completion(state);
        effects.push(Effect::Draft(text));
    }
}

/// Does `action`; `false` when it does not apply now (Ctrl+D on a non-empty editor is the
/// editor's), so the key's next action is tried.
fn on_action(state: &mut State, action: Action, now_ms: u64, effects: &mut Vec<Effect>) -> bool {
    if let Some(applied) = editor_action(state, action, effects) {
        return applied;
    }
    match action {
        Action::Interrupt => {
            let queued = !state.queue.steering.is_empty() || !state.queue.follow_up.is_empty();
            if state.running && queued {
                effects.push(Effect::Request(Request::DequeueAndAbort));
                state.status = Some(super::session::ABORTING.to_owned());
            } else if state.running || state.bash_running || state.compacting {
                effects.push(Effect::Request(Request::Abort));
                state.status = Some(super::session::ABORTING.to_owned());
            } else if state.retry_pending {
                effects.push(Effect::Request(Request::AbortRetry));
            } else {
                state.view.scroll_from_bottom = 0;
                state.view.scroll_serial += 1;
                state.status = None;
                // pi's `doubleEscapeAction`: Esc twice on an empty editor.
                let twice = state
                    .last_escape_at
                    .is_some_and(|at| now_ms.saturating_sub(at) <= DOUBLE_PRESS_MS);
                state.last_escape_at = None;
                if state.editor.is_empty() {
                    if !twice {
                        state.last_escape_at = Some(now_ms);
                    } else {
                        match state.prefs.double_escape {
                            DoubleEscape::Tree => commands::run(state, "/tree", effects),
                            DoubleEscape::Fork => commands::run(state, "/fork", effects),
                            DoubleEscape::None => {}
                        }
                    }
                }
            }
        }
        Action::Clear => {
            let twice = state
                .last_clear_at
                .is_some_and(|at| now_ms.saturating_sub(at) <= DOUBLE_PRESS_MS);
            if twice {
                state.exiting = true;
                effects.push(Effect::Detach);
            } else {
                state.editor.clear();
                state.history.position = None;
                state.last_clear_at = Some(now_ms);
                state.status = Some("Press Ctrl+C again to quit.".to_owned());
            }
        }
        Action::Exit => {
            if !state.editor.is_empty() {
                return false;
            }
            state.exiting = true;
            effects.push(Effect::Detach);
        }
        Action::Suspend => effects.push(Effect::Suspend),
        Action::PasteImage => effects.push(Effect::PasteImage),
        Action::ExternalEditor => {
            effects.push(Effect::ExternalEditor(state.editor.expanded_text()));
        }
        Action::Fork => commands::run(state, "/fork", effects),
        Action::SelectModel => commands::open_model_selector(state, "", effects),
        Action::CycleModelForward => cycle_model(state, 1, effects),
        Action::CycleModelBackward => cycle_model(state, -1, effects),
        Action::CycleThinkingLevel => {
            let current = state.thinking_level();
            let index = THINKING_LEVELS
                .iter()
                .position(|level| *level == current)
                .unwrap_or(0);
            let reasoning = state.model().is_none_or(|model| model.reasoning);
            let next = if reasoning {
                THINKING_LEVELS[(index + 1) % THINKING_LEVELS.len()]
            } else {
                "off"
            };
            effects.push(Effect::Request(Request::SetThinking(next.to_owned())));
        }
        Action::ExpandTools => state.view.expand_tools = !state.view.expand_tools,
        Action::ToggleThinking => state.view.show_thinking = !state.view.show_thinking,
        Action::FollowUp => {
            if state.running {
                submit(state, SubmitAs::FollowUp, effects);
            } else {
                // Idle: Alt+Enter is the newline key of terminals without Shift+Enter.
                state.editor.newline();
            }
        }
        Action::Dequeue => effects.push(Effect::Request(Request::Dequeue)),
        Action::Submit => submit(state, SubmitAs::Enter, effects),
        Action::Tab => {
            if state.completion.is_none() {
                commands::refresh_completion(state);
            }
            if state.completion.is_none() {
                commands::complete_path(state, effects);
            }
        }
        Action::HistorySearch => commands::open_history_search(state, effects),
        Action::PageUp => scroll(state, page(state) as isize),
        Action::PageDown => scroll(state, -(page(state) as isize)),
        Action::ScrollUp => scroll(state, 1),
        Action::ScrollDown => scroll(state, -1),
        Action::Tree => commands::run(state, "/tree", effects),
        Action::NewSession => commands::run(state, "/new", effects),
        Action::Resume => commands::run(state, "/resume", effects),
        // Keys of lists and of pi's dialogs this TUI does not have.
        _ => return false,
    }
    true
}

/// The editor's actions (`tui.editor.*`, `tui.input.newLine`); `None` for the others.
fn editor_action(state: &mut State, action: Action, effects: &mut Vec<Effect>) -> Option<bool> {
    let editor = &mut state.editor;
    match action {
        Action::CursorUp => {
            if !editor.up() {
                history_step(state, 1);
            }
            state.editor.moved();
        }
        Action::CursorDown => {
            if !editor.down() {
                history_step(state, -1);
            }
            state.editor.moved();
        }
        Action::CursorLeft => editor.left(),
        Action::CursorRight => editor.right(),
        Action::CursorWordLeft => editor.word_left(),
        Action::CursorWordRight => editor.word_right(),
        Action::CursorLineStart => editor.home(),
        Action::CursorLineEnd => editor.end(),
        Action::JumpForward | Action::JumpBackward => {
            state.pending_jump = Some(action == Action::JumpForward);
            state.status = Some("Jump to: type the character.".to_owned());
            return Some(true);
        }
        Action::DeleteCharBackward => editor.backspace(),
        Action::DeleteCharForward => editor.delete(),
        Action::DeleteWordBackward => editor.delete_word_before(),
        Action::DeleteWordForward => editor.delete_word_after(),
        Action::DeleteToLineStart => editor.kill_to_start(),
        Action::DeleteToLineEnd => editor.kill_to_end(),
        Action::Yank => {
            editor.yank();
        }
        Action::YankPop => {
            editor.yank_pop();
        }
        Action::Undo => {
            if !editor.undo() {
                state.status = Some("Nothing to undo.".to_owned());
            }
        }
        Action::Redo => {
            if !editor.redo() {
                state.status = Some("Nothing to redo.".to_owned());
            }
        }
        Action::NewLine => editor.newline(),
        _ => return None,
    }
    if matches!(
        action,
        Action::CursorLeft
            | Action::CursorRight
            | Action::CursorWordLeft
            | Action::CursorWordRight
            | Action::CursorLineStart
            | Action::CursorLineEnd
    ) {
        state.editor.moved();
    }
    let _ = effects;
    Some(true)
}

/// The mouse wheel: scrolls the transcript, or moves through a dialog's list.
pub(super) fn wheel(state: &mut State, lines: isize) {
    match &mut state.overlay {
        Some(Overlay::Select(selector)) => selector.move_by(-lines.signum()),
        Some(Overlay::Question(question)) if !question.choices.is_empty() => {
            let last = question.choices.len() - 1;
            question.selected = Some(match question.selected {
                None => 0,
                Some(at) if lines > 0 => at.saturating_sub(1),
                Some(at) => (at + 1).min(last),
            });
        }
        Some(Overlay::Hotkeys { .. }) => {
            let max = crate::render::hotkeys_max_scroll(state);
            if let Some(Overlay::Hotkeys { scroll }) = &mut state.overlay {
                *scroll = if lines > 0 {
                    scroll.saturating_sub(lines.unsigned_abs())
                } else {
                    (*scroll + lines.unsigned_abs()).min(max)
                };
            }
        }
        Some(
            Overlay::Info { .. }
            | Overlay::Loading { .. }
            | Overlay::Question(_)
            | Overlay::Login(_)
            | Overlay::LabelEdit { .. }
            | Overlay::Rename { .. },
        ) => {}
        None => scroll(state, lines),
    }
}

fn page(state: &State) -> usize {
    (state.size.1 as usize).saturating_sub(8).max(1)
}

fn scroll(state: &mut State, lines: isize) {
    // From what the last frame showed (derived layout data, not I/O): clamped at the top,
    // and held in place by the anchor while output arrived.
    let current = crate::render::shown_scroll(state.view.scroll_from_bottom);
    state.view.scroll_from_bottom = (current as isize + lines).max(0) as usize;
    state.view.scroll_serial += 1;
}

fn cycle_model(state: &mut State, direction: isize, effects: &mut Vec<Effect>) {
    let keyed: Vec<_> = state
        .models
        .iter()
        .filter(|model| model.has_key)
        .cloned()
        .collect();
    // Within the scope (`--models`, `enabledModels`) when it holds any, as pi's Ctrl+P.
    let scoped: Vec<_> = pi_client::model_scope::scoped_models(&state.model_scope, &keyed)
        .into_iter()
        .map(|scoped| scoped.model)
        .collect();
    let pool = if scoped.is_empty() { keyed } else { scoped };
    let available: Vec<_> = pool.iter().collect();
    if available.is_empty() {
        state.status = Some("No model with a key is configured.".to_owned());
        return;
    }
    let current = state
        .session
        .as_ref()
        .and_then(|session| session.model.as_ref());
    let index = current
        .and_then(|current| {
            available
                .iter()
                .position(|model| model.provider == current.provider && model.id == current.id)
        })
        .map_or(0, |index| {
            (index as isize + direction).rem_euclid(available.len() as isize) as usize
        });
    let model = available[index];
    if current.is_some_and(|current| current.provider == model.provider && current.id == model.id) {
        // pi: nothing to cycle to, and no model change stored.
        state.status = Some("Only one model in scope".to_owned());
        return;
    }
    effects.push(Effect::Request(Request::SetModel(format!(
        "{}/{}",
        model.provider, model.id
    ))));
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum SubmitAs {
    Enter,
    FollowUp,
}

fn submit(state: &mut State, how: SubmitAs, effects: &mut Vec<Effect>) {
    let text = state.editor.expanded_text();
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return;
    }
    if trimmed.starts_with('/') && commands::is_builtin(trimmed) {
        let command = trimmed.to_owned();
        state.editor = Editor::default();
        commands::run(state, &command, effects);
        return;
    }
    if state.connection != Connection::Live {
        state.status = Some("Not connected; the message stays in the editor.".to_owned());
        return;
    }
    if let Some(command) = trimmed.strip_prefix('!') {
        let (command, exclude_from_context) = match command.strip_prefix('!') {
            Some(command) => (command.trim(), true),
            None => (command.trim(), false),
        };
        if !command.is_empty() {
            remember(state, trimmed);
            state.bash_running = true;
            state.status = Some(format!("Running `{command}`… (esc to stop)"));
            effects.push(Effect::Request(Request::Bash {
                command: command.to_owned(),
                exclude_from_context,
            }));
            return;
        }
    }
    let message = Message {
        text: trimmed.to_owned(),
        image_paths: image_paths(trimmed),
        fit_images: state.prefs.fit_images,
    };
    remember(state, trimmed);
    state.status = None;
    let request = match (state.running, how) {
        (false, _) => Request::Prompt(message),
        (true, SubmitAs::Enter) => Request::Steer(message),
        (true, SubmitAs::FollowUp) => Request::FollowUp(message),
    };
    effects.push(Effect::Request(request));
}

/// Puts a sent text at the front of the history and clears the editor.
fn remember(state: &mut State, text: &str) {
    state.history.entries.retain(|entry| entry != text);
    state.history.entries.insert(0, text.to_owned());
    state.history.position = None;
    state.editor = Editor::default();
    state.view.scroll_from_bottom = 0;
}

/// Words that name image files (`@shot.png`, `./a.jpg`); the runtime reads them.
fn image_paths(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|word| word.trim_start_matches('@'))
        .filter(|word| {
            let lower = word.to_ascii_lowercase();
            [".png", ".jpg", ".jpeg", ".gif", ".webp"]
                .iter()
                .any(|extension| lower.ends_with(extension))
        })
        .map(str::to_owned)
        .collect()
}

/// ↑ (older, `+1`) and ↓ (newer, `-1`) through prompt history.
fn history_step(state: &mut State, direction: isize) {
    let history = &mut state.history;
    let next = match (history.position, direction) {
        (None, 1) if !history.entries.is_empty() => {
            history.draft = state.editor.text();
            Some(0)
        }
        (None, _) => return,
        (Some(position), 1) => Some((position + 1).min(history.entries.len() - 1)),
        (Some(0), _) => None,
        (Some(position), _) => Some(position - 1),
    };
    history.position = next;
    let text = match next {
        Some(position) => history.entries[position].clone(),
        None => std::mem::take(&mut history.draft),
    };
    state.editor.set_text(&text);
}

/// Keys for the completion popup; `true` when consumed.
fn completion_key(state: &mut State, event: &KeyEvent) -> bool {
    let Some(completion) = &mut state.completion else {
        return false;
    };
    let len = completion.items.len();
    match event.code {
        KeyCode::Up => {
            completion.selected = (completion.selected + len - 1) % len.max(1);
            true
        }
        KeyCode::Down => {
            completion.selected = (completion.selected + 1) % len.max(1);
            true
        }
        KeyCode::Esc => {
            state.completion = None;
            true
        }
        KeyCode::Tab | KeyCode::Enter if event.modifiers.is_empty() => {
            let accepted = completion.items.get(completion.selected).cloned();
            state.completion = None;
            let Some((_, _, replacement)) = accepted else {
                return false;
            };
            // Enter on a complete command runs it; Tab (or a partial command) completes.
            let exact = state.editor.token_at_cursor().1 == replacement.trim_end();
            if event.code == KeyCode::Enter && exact {
                return false;
            }
            state.editor.replace_token(&replacement);
            true
        }
        _ => false,
    }
}

fn overlay_key(state: &mut State, event: KeyEvent, effects: &mut Vec<Effect>) {
    if matches!(state.overlay, Some(Overlay::Login(_))) {
        super::login::on_key(state, event, effects);
        return;
    }
    if matches!(state.overlay, Some(Overlay::LabelEdit { .. })) {
        label_edit_key(state, &event, effects);
        return;
    }
    if matches!(state.overlay, Some(Overlay::Rename { .. })) {
        rename_key(state, &event, effects);
        return;
    }
    if matches!(&state.overlay, Some(Overlay::Select(selector)) if selector.kind == SelectorKind::Session)
        && state.session_picker.is_some()
        && session_picker_key(state, &event, effects)
    {
        return;
    }
    if matches!(&state.overlay, Some(Overlay::Select(selector)) if selector.kind == SelectorKind::ScopedModels)
    {
        super::scoped_models::on_key(state, &event, effects);
        return;
    }
    let hotkeys_max = if matches!(state.overlay, Some(Overlay::Hotkeys { .. })) {
        crate::render::hotkeys_max_scroll(state)
    } else {
        0
    };
    let Some(overlay) = &mut state.overlay else {
        return;
    };
    if let Overlay::Question(question) = overlay {
        if let Some(answer) = question_key(question, event) {
            let request_id = question.request.request_id.clone();
            state
                .questions
                .retain(|pending| pending.request_id != request_id);
            let session_id = question.request.session_id.clone();
            state.overlay = None;
            effects.push(Effect::Request(Request::UiRespond {
                session_id,
                request_id,
                answer,
            }));
        }
        return;
    }
    let list_actions = state.keymap.actions(&event, Context::Select);
    if list_actions.contains(&Action::SelectCancel) {
        state.overlay = None;
        state.tree_view = None;
        if state.session.is_none() {
            // The startup picker: nothing to go back to.
            state.exiting = true;
            effects.push(Effect::Detach);
        }
        return;
    }
    let selector = match overlay {
        Overlay::Select(selector) => selector,
        Overlay::Hotkeys { scroll } => {
            // Scrolled by the lists' keys; a page is what the dialog shows.
            let page_rows = crate::render::dialog_room(state.size.1).max(1);
            let next = match list_actions.first() {
                Some(Action::SelectUp) => Some(scroll.saturating_sub(1)),
                Some(Action::SelectDown) => Some(*scroll + 1),
                Some(Action::SelectPageUp) => Some(scroll.saturating_sub(page_rows)),
                Some(Action::SelectPageDown) => Some(*scroll + page_rows),
                Some(Action::SelectConfirm) => None,
                _ if event.code == KeyCode::Char('q') => None,
                _ if event.code == KeyCode::Home => Some(0),
                _ if event.code == KeyCode::End => Some(hotkeys_max),
                _ => Some(*scroll),
            };
            match next {
                Some(next) => *scroll = next.min(hotkeys_max),
                None => state.overlay = None,
            }
            return;
        }
        Overlay::Info { .. } => {
            if matches!(event.code, KeyCode::Enter | KeyCode::Char('q')) {
                state.overlay = None;
            }
            return;
        }
        // Only Esc leaves a dialog that is still loading.
        Overlay::Loading { .. } => return,
        // Handled above.
        Overlay::Question(_)
        | Overlay::Login(_)
        | Overlay::LabelEdit { .. }
        | Overlay::Rename { .. } => return,
    };
    let tree_actions = if selector.kind == SelectorKind::Tree {
        state.keymap.actions(&event, Context::Tree)
    } else {
        Vec::new()
    };
    if tree_actions.contains(&Action::TreeEditLabel)
        && let Some(tree) = &state.tree_view
        && let Some(entry_id) = selector.selected().map(|item| item.value.clone())
    {
        // pi's Shift+L: the selected entry's label, to edit.
        let current = tree
            .entries
            .iter()
            .filter_map(|record| match &record.entry {
                pi_protocol::v1::SessionEntry::Label {
                    target_id, label, ..
                } if *target_id == entry_id => Some(label.clone().unwrap_or_default()),
                _ => None,
            })
            .next_back()
            .unwrap_or_default();
        let tree = Box::new(selector.clone());
        state.overlay = Some(Overlay::LabelEdit {
            entry_id,
            text: current,
            tree,
        });
        return;
    }
    if let Some(fold) = tree_actions.iter().find_map(|action| match action {
        Action::TreeFoldOrUp => Some(true),
        Action::TreeUnfoldOrDown => Some(false),
        _ => None,
    }) {
        let previous = selector.clone();
        super::replies::tree_fold(state, &previous, fold);
        return;
    }
    if tree_actions.contains(&Action::TreeToggleLabelTimestamp)
        && let Some(tree) = &mut state.tree_view
    {
        tree.label_times = !tree.label_times;
        let previous = selector.clone();
        super::replies::show_tree(state, Some(&previous));
        return;
    }
    if selector.kind == SelectorKind::Tree
        && let Some(tree) = &mut state.tree_view
        && let Some(filter) = state
            .keymap
            .actions(&event, Context::Tree)
            .into_iter()
            .find_map(|action| tree_filter(tree.filter, action))
    {
        tree.filter = filter;
        let previous = selector.clone();
        super::replies::show_tree(state, Some(&previous));
        return;
    }
    match list_actions.first().copied() {
        Some(Action::SelectUp) => return selector.move_by(-1),
        Some(Action::SelectDown) => return selector.move_by(1),
        Some(Action::SelectPageUp) => return selector.move_by(-10),
        Some(Action::SelectPageDown) => return selector.move_by(10),
        Some(Action::SelectConfirm) => {
            let kind = selector.kind;
            let chosen = selector.selected().map(|item| item.value.clone());
            state.overlay = None;
            state.tree_view = None;
            if let Some(value) = chosen {
                choose(state, kind, value, effects);
            }
            return;
        }
        _ => {}
    }
    match event.code {
        KeyCode::Backspace => {
            let mut query = selector.query.clone();
            query.pop();
            selector.set_query(query);
            if selector.kind == SelectorKind::History {
                let query = selector.query.clone();
                effects.push(Effect::Request(Request::SearchHistory(query)));
            }
        }
        KeyCode::Char(c) if !event.modifiers.contains(KeyModifiers::CONTROL) => {
            let query = format!("{}{c}", selector.query);
            selector.set_query(query);
            if selector.kind == SelectorKind::History {
                let query = selector.query.clone();
                effects.push(Effect::Request(Request::SearchHistory(query)));
            }
        }
        KeyCode::Char('r')
            if event.modifiers.contains(KeyModifiers::CONTROL)
                && selector.kind == SelectorKind::History =>
        {
            selector.move_by(1);
        }
        _ => {}
    }
}

/// pi's session selector keys in `/resume` (rename, delete with a confirmation, named-only,
/// sort, paths); `false` for keys it leaves to the list.
fn session_picker_key(state: &mut State, event: &KeyEvent, effects: &mut Vec<Effect>) -> bool {
    let actions = state.keymap.actions(event, Context::Sessions);
    let lists = state.keymap.actions(event, Context::Select);
    let Some(Overlay::Select(selector)) = &state.overlay else {
        return false;
    };
    let selector = selector.clone();
    let highlighted = selector.selected().map(|item| item.value.clone());
    let Some(picker) = &mut state.session_picker else {
        return false;
    };
    // Waiting for the deletion's confirmation: Enter deletes, Esc keeps; nothing else.
    if let Some(doomed) = picker.confirming_delete.clone() {
        picker.confirming_delete = None;
        if lists.contains(&Action::SelectConfirm) {
            state.overlay = Some(Overlay::Loading {
                kind: SelectorKind::Session,
                title: "Resume a session".to_owned(),
            });
            effects.push(Effect::Request(Request::DeleteSession(doomed)));
            return true;
        }
        super::replies::show_sessions(state, Some(&selector));
        return true;
    }
    let Some(action) = actions.first().copied() else {
        return false;
    };
    match action {
        Action::SessionToggleNamedFilter => picker.named_only = !picker.named_only,
        Action::SessionToggleSort => picker.by_name = !picker.by_name,
        Action::SessionTogglePath => picker.show_path = !picker.show_path,
        Action::SessionDelete | Action::SessionDeleteNoninvasive => {
            if action == Action::SessionDeleteNoninvasive && !selector.query.is_empty() {
                return false;
            }
            let Some(id) = highlighted else {
                return true;
            };
            if id.starts_with(crate::state::PI_FILE_PREFIX) {
                state.status = Some("That is pi's session file; delete it in pi.".to_owned());
                return true;
            }
            if state
                .session
                .as_ref()
                .is_some_and(|session| session.id == id)
            {
                state.status =
                    Some("This is the session you are in; resume another first.".to_owned());
                return true;
            }
            picker.confirming_delete = Some(id);
        }
        Action::SessionRename => {
            let Some(id) = highlighted else {
                return true;
            };
            if id.starts_with(crate::state::PI_FILE_PREFIX) {
                state.status = Some("That is pi's session file; rename it in pi.".to_owned());
                return true;
            }
            let current = picker
                .sessions
                .iter()
                .find(|session| session.id == id)
                .and_then(|session| session.name.clone())
                .unwrap_or_default();
            state.overlay = Some(Overlay::Rename {
                session_id: id,
                text: current,
                picker: Box::new(selector),
            });
            return true;
        }
        _ => return false,
    }
    super::replies::show_sessions(state, Some(&selector));
    true
}

/// What a key did to a one-line text field.
enum LineKey {
    /// Enter.
    Submit,
    /// Esc.
    Cancel,
    /// Typed, erased, or nothing.
    Edited,
}

/// A key in a one-line text field: characters, Backspace, Ctrl+U to empty it.
fn line_key(text: &mut String, event: &KeyEvent) -> LineKey {
    let control = event.modifiers.contains(KeyModifiers::CONTROL);
    match event.code {
        KeyCode::Esc => return LineKey::Cancel,
        KeyCode::Enter => return LineKey::Submit,
        KeyCode::Backspace => {
            text.pop();
        }
        KeyCode::Char('u') if control => text.clear(),
        KeyCode::Char(c) if !control => text.push(c),
        _ => {}
    }
    LineKey::Edited
}

/// The session's new name: typing, Enter renames (the list read again), Esc back.
fn rename_key(state: &mut State, event: &KeyEvent, effects: &mut Vec<Effect>) {
    let Some(Overlay::Rename {
        session_id,
        text,
        picker,
    }) = &mut state.overlay
    else {
        return;
    };
    match line_key(text, event) {
        LineKey::Cancel => state.overlay = Some(Overlay::Select((**picker).clone())),
        LineKey::Submit if !text.trim().is_empty() => {
            let request = Request::RenameSession {
                session_id: session_id.clone(),
                name: text.trim().to_owned(),
            };
            state.overlay = Some(Overlay::Loading {
                kind: SelectorKind::Session,
                title: "Resume a session".to_owned(),
            });
            effects.push(Effect::Request(request));
        }
        LineKey::Submit | LineKey::Edited => {}
    }
}

/// The label editor over the tree: typing, Enter to set (the tree read again shows it), Esc
/// back to the tree unchanged.
fn label_edit_key(state: &mut State, event: &KeyEvent, effects: &mut Vec<Effect>) {
    let Some(Overlay::LabelEdit {
        entry_id,
        text,
        tree,
    }) = &mut state.overlay
    else {
        return;
    };
    match line_key(text, event) {
        LineKey::Cancel => state.overlay = Some(Overlay::Select((**tree).clone())),
        LineKey::Submit => {
            let request = Request::LabelInTree {
                entry_id: entry_id.clone(),
                label: text.trim().to_owned(),
            };
            state.overlay = Some(Overlay::Loading {
                kind: SelectorKind::Tree,
                title: "Session tree".to_owned(),
            });
            effects.push(Effect::Request(request));
        }
        LineKey::Edited => {}
    }
}

/// pi's `app.tree.filter.*` actions of the tree dialog (by default Ctrl+D the default view;
/// Ctrl+T no tool results, Ctrl+U user messages, Ctrl+L labeled entries and Ctrl+A
/// everything, each toggling with the default; Ctrl+O and Shift+Ctrl+O cycle): the filter
/// they give from `current`.
fn tree_filter(current: TreeFilter, action: Action) -> Option<TreeFilter> {
    let toggle = |mode| {
        if current == mode {
            TreeFilter::Default
        } else {
            mode
        }
    };
    Some(match action {
        Action::TreeFilterDefault => TreeFilter::Default,
        Action::TreeFilterNoTools => toggle(TreeFilter::NoTools),
        Action::TreeFilterUserOnly => toggle(TreeFilter::UserOnly),
        Action::TreeFilterLabeledOnly => toggle(TreeFilter::LabeledOnly),
        Action::TreeFilterAll => toggle(TreeFilter::All),
        Action::TreeFilterCycleBackward => current.cycle(-1),
        Action::TreeFilterCycleForward => current.cycle(1),
        _ => return None,
    })
}

fn choose(state: &mut State, kind: SelectorKind, value: String, effects: &mut Vec<Effect>) {
    match kind {
        SelectorKind::Model => effects.push(Effect::Request(Request::SetModel(value))),
        SelectorKind::Thinking => effects.push(Effect::Request(Request::SetThinking(value))),
        SelectorKind::Approvals => effects.push(Effect::Request(Request::SetPolicy(value))),
        SelectorKind::Session => {
            let current = state.session.as_ref().map(|session| session.id.as_str());
            if current != Some(value.as_str()) {
                effects.push(Effect::Request(Request::BeforeSwitch(SwitchTo::Existing(
                    value,
                ))));
            }
        }
        SelectorKind::Tree => {
            let items = ["Continue without a summary", "Summarize the branch I leave"]
                .iter()
                .enumerate()
                .map(|(index, label)| SelectorItem {
                    label: (*label).to_owned(),
                    detail: String::new(),
                    value: format!("{index}{value}"),
                    indent: String::new(),
                    on_path: false,
                    current: index == 0,
                })
                .collect();
            state.overlay = Some(Overlay::Select(Selector::new(
                SelectorKind::TreeSummary,
                "Summarize the branch you leave?",
                items,
            )));
        }
        SelectorKind::TreeSummary => {
            let summarize = value.starts_with('1');
            effects.push(Effect::Request(Request::Navigate {
                entry_id: value[1..].to_owned(),
                summarize,
            }));
        }
        SelectorKind::Fork => effects.push(Effect::Request(Request::Fork(value))),
        SelectorKind::Login => super::login::start(state, value, effects),
        SelectorKind::Logout => effects.push(Effect::Request(Request::Logout(value))),
        SelectorKind::Settings => super::settings_dialog::chose_setting(state, &value),
        SelectorKind::SettingValue => super::settings_dialog::chose_value(&value, effects),
        // Handled by its own keys.
        SelectorKind::ScopedModels => {}
        SelectorKind::History => {
            let before = state.editor.text();
            state.editor.set_text(&value);
            after_edit(state, &before, effects);
        }
    }
}

/// A key in a question: moves, edits, or answers (Enter on a highlighted choice; Esc and
/// Ctrl+C dismiss, which answers "cancelled"). Nothing is highlighted at first, so keys meant
/// for the editor cannot answer.
fn question_key(
    question: &mut crate::overlay::Question,
    event: KeyEvent,
) -> Option<pi_protocol::v1::UiAnswer> {
    let control = event.modifiers.contains(KeyModifiers::CONTROL);
    match event.code {
        KeyCode::Esc => Some(pi_protocol::v1::UiAnswer {
            cancelled: true,
            ..pi_protocol::v1::UiAnswer::default()
        }),
        KeyCode::Char('c') if control => Some(pi_protocol::v1::UiAnswer {
            cancelled: true,
            ..pi_protocol::v1::UiAnswer::default()
        }),
        KeyCode::Enter => question.answer(),
        KeyCode::Char(' ') if question.multiple() => {
            if let Some(at) = question.selected
                && let Some(checked) = question.checked.get_mut(at)
            {
                *checked = !*checked;
            }
            None
        }
        KeyCode::Up if !question.choices.is_empty() => {
            question.selected = Some(question.selected.map_or(0, |at| at.saturating_sub(1)));
            None
        }
        KeyCode::Down if !question.choices.is_empty() => {
            let last = question.choices.len() - 1;
            question.selected = Some(question.selected.map_or(0, |at| (at + 1).min(last)));
            None
        }
        KeyCode::Backspace if question.choices.is_empty() => {
            question.text.pop();
            None
        }
        KeyCode::Char(c) if question.choices.is_empty() && !control => {
            question.text.push(c);
            None
        }
        _ => None,
    }
}
