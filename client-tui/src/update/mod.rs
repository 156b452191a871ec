//! The pure heart of the TUI: `update(state, input) -> effects`. No I/O, no clock, no
//! randomness: the same inputs always give the same state and effects, which is what the
//! snapshot tests and the multi-client guarantees rest on.
//!
//! `session.rs` applies attach results and session events, `keys.rs` handles the keyboard,
//! `commands.rs` the slash commands and completion, `replies.rs` the results of requests,
//! `login.rs` `/login` and `/logout`.

mod commands;
mod keys;
mod login;
mod replies;
mod scoped_models;
mod session;
mod settings_dialog;

use crate::effect::Effect;
use crate::input::Input;
use crate::overlay::{Overlay, Question};
use crate::state::{Connection, State};
use crate::transcript::NoticeLevel;

pub use commands::COMMANDS;
pub use replies::apply_settings;

/// Applies one input; returns what the runtime should do.
pub fn update(state: &mut State, input: Input) -> Vec<Effect> {
    let mut effects = Vec::new();
    match input {
        Input::Key { event, now_ms } => keys::on_key(state, event, now_ms, &mut effects),
        Input::Paste(text) => {
            if state.overlay.is_none() {
                let before = state.editor.text();
                state.editor.paste(&text);
                keys::after_edit(state, &before, &mut effects);
            } else {
                login::paste(state, &text);
            }
        }
        Input::ExternalEdited(result) => match result {
            Ok(Some(text)) => {
                let before = state.editor.text();
                state.editor.set_text(&text);
                keys::after_edit(state, &before, &mut effects);
            }
            Ok(None) => {}
            Err(message) => state.transcript.notice(NoticeLevel::Warning, message),
        },
        Input::ClipboardImage(result) => match result {
            // pi's: the file's path into the message; its image goes with it when sent.
            Ok(Some(path)) => {
                let before = state.editor.text();
                state.editor.insert(&path.display().to_string());
                keys::after_edit(state, &before, &mut effects);
            }
            Ok(None) => state.status = Some("No image on the clipboard.".to_owned()),
            Err(message) => state.transcript.notice(NoticeLevel::Warning, message),
        },
        Input::Keymap { keymap, warnings } => {
            state.keymap = keymap;
            for warning in warnings {
                state.transcript.notice(NoticeLevel::Warning, warning);
            }
        }
        Input::Resize(width, height) => state.size = (width, height),
        Input::Wheel(lines) => keys::wheel(state, lines),
        Input::Tick(_) => {
            if state.running {
                state.spinner = state.spinner.wrapping_add(1);
            }
        }
        Input::Theme { theme, problem } => {
            state.theme = theme;
            if let Some(problem) = problem {
                let line = format!("Warning: {problem}");
                if state.session.is_none() {
                    state.startup_warnings.push(line);
                } else {
                    state
                        .transcript
                        .notice(crate::transcript::NoticeLevel::Warning, line);
                }
            }
        }
        Input::Attached(attachment) => session::on_attached(state, *attachment, &mut effects),
        Input::Event(event) => session::on_event(state, *event, &mut effects),
        Input::Presence(presence) => {
            if state
                .session
                .as_ref()
                .is_some_and(|session| session.id == presence.session_id)
            {
                state.clients = presence.clients;
            }
        }
        Input::ConfigChanged(changed) => {
            config_changed(state, changed);
            // A model added to (or removed from) models.json, a key set: the list again.
            state.models.clear();
            effects.push(Effect::Request(crate::effect::Request::ListModels));
            // A settings file may have changed what the TUI follows.
            effects.push(Effect::Request(crate::effect::Request::Settings));
        }
        Input::McpChanged(changed) => {
            // A server that became ready may bring prompts (`/mcp:server:prompt`).
            let prompts_may_change = changed.servers.iter().any(|server| {
                let before = state
                    .mcp_servers
                    .iter()
                    .find(|old| old.key == server.key)
                    .map(|old| old.state.as_str());
                server.state == "ready" && before != Some("ready")
            });
            state.mcp_servers = changed.servers;
            if prompts_may_change && state.session.is_some() {
                effects.push(Effect::Request(crate::effect::Request::ListCommands));
            }
        }
        // Kept whatever the session: the daemon sends a session's pending questions while
        // attaching, before the attach result arrives. Only the attached session's show.
        Input::LspChanged(changed) => state.lsp_servers = changed.servers,
        Input::UiRequest(request) => {
            if !state
                .questions
                .iter()
                .any(|pending| pending.request_id == request.request_id)
            {
                state.questions.push(request);
            }
        }
        Input::UiResolved(resolved) => {
            state
                .questions
                .retain(|pending| pending.request_id != resolved.request_id);
            if let Some(Overlay::Question(question)) = &state.overlay
                && question.request.request_id == resolved.request_id
            {
                state.overlay = None;
            }
        }
        Input::ExtensionUi(shown) => extension_ui(state, shown, &mut effects),
        Input::LoginEvent(event) => login::on_event(state, event, &mut effects),
        Input::Disconnected { reason } => {
            state.connection = Connection::Reconnecting { attempt: 0, reason };
            // Who else is attached is unknown until the next snapshot, and which questions
            // are still open (the daemon sends them again on attach).
            state.clients.clear();
            state.questions.clear();
            // Sent again on attach, as questions are.
            state.extension_ui = crate::state::ExtensionUi::default();
            if matches!(state.overlay, Some(Overlay::Question(_))) {
                state.overlay = None;
            }
        }
        Input::Reconnected {
            connection_id,
            problem,
        } => {
            state.connection = Connection::Live;
            state.environment.connection_id = connection_id;
            if let Some(problem) = problem {
                state.running = false;
                state.transcript.stop_streaming();
                state.transcript.notice(
                    crate::transcript::NoticeLevel::Error,
                    format!("Could not attach again: {problem}. Use /new or /resume."),
                );
            }
        }
        Input::ReconnectFailed { attempt } => {
            if let Connection::Reconnecting { attempt: shown, .. } = &mut state.connection {
                *shown = attempt;
            }
        }
        Input::Reply(reply) => replies::on_reply(state, reply, &mut effects),
        Input::Files(files) => {
            state.files = files;
            commands::refresh_completion(state);
            // A Tab that found nothing in the old list tries the new one.
            if state.path_completion_pending.as_deref() == Some(state.editor.token_at_cursor().1) {
                commands::complete_path(state, &mut effects);
            } else {
                state.path_completion_pending = None;
            }
        }
    }
    // A pending question shows as soon as no other dialog is open.
    let session = state.session.as_ref().map(|session| session.id.as_str());
    if state.overlay.is_none()
        && let Some(request) = state
            .questions
            .iter()
            .find(|request| Some(request.session_id.as_str()) == session)
    {
        state.overlay = Some(Overlay::Question(Question::new(request.clone())));
    }
    effects
}

/// What a session's extensions show: a notice in the transcript, a status in the footer, a
/// widget by the editor, the terminal's title, text for the editor. Another session's (the
/// one being left) is dropped.
fn extension_ui(
    state: &mut State,
    shown: pi_protocol::v1::ExtensionUiParams,
    effects: &mut Vec<crate::effect::Effect>,
) {
    use crate::transcript::NoticeLevel;
    use pi_protocol::v1::{ExtensionUi, NotifyLevel, WidgetPlacement};
    let attached = state.session.as_ref().map(|session| session.id.as_str());
    if state.extension_ui.session_id != shown.session_id {
        // Sent while attaching (before the attach result): kept for that session.
        state.extension_ui = crate::state::ExtensionUi {
            session_id: shown.session_id.clone(),
            ..Default::default()
        };
    }
    let current = attached.is_none_or(|id| id == shown.session_id);
    let ui = &mut state.extension_ui;
    match shown.ui {
        ExtensionUi::Status { key, text } => match text {
            Some(text) => {
                ui.statuses.insert(key, strip_ansi(&text));
            }
            None => {
                ui.statuses.remove(&key);
            }
        },
        ExtensionUi::Widget {
            key,
            lines,
            placement,
        } => match lines {
            Some(lines) => {
                let lines = lines.iter().map(|line| strip_ansi(line)).collect();
                ui.widgets
                    .insert(key, (lines, placement == WidgetPlacement::AboveEditor));
            }
            None => {
                ui.widgets.remove(&key);
            }
        },
        ExtensionUi::Notify { message, level } if current => {
            let level = match level {
                NotifyLevel::Info => NoticeLevel::Info,
                NotifyLevel::Warning => NoticeLevel::Warning,
                NotifyLevel::Error => NoticeLevel::Error,
            };
            state.transcript.notice(level, strip_ansi(&message));
        }
        ExtensionUi::Title { title } if current => {
            effects.push(crate::effect::Effect::Title(strip_ansi(&title)));
        }
        ExtensionUi::EditorText { text, paste } if current => {
            if paste {
                state.editor.paste(&text);
            } else {
                state.editor.set_text(&text);
            }
        }
        ExtensionUi::Notify { .. } | ExtensionUi::Title { .. } | ExtensionUi::EditorText { .. } => {
        }
    }
}

/// `text` without ANSI escape sequences (pi's themes colour extensions' texts with them).
pub(crate) fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.next() {
            // CSI: parameters and intermediates up to a final byte in @..~.
            Some('[') => {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            // OSC: up to BEL or ST.
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\u{7}' || (c == '\u{1b}' && chars.next_if_eq(&'\\').is_some()) {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The daemon reloaded its configuration: one line naming the files, then each problem left.
fn config_changed(state: &mut State, changed: pi_protocol::v1::ConfigChangedParams) {
    use crate::transcript::NoticeLevel;
    state.transcript.notice(
        NoticeLevel::Info,
        format!("Configuration reloaded: {}", changed.files.join(", ")),
    );
    for diagnostic in changed.diagnostics {
        state
            .transcript
            .notice(NoticeLevel::Warning, warning_line(&diagnostic));
    }
}

/// A problem in a configuration file as the TUI says it: the file, the key when there is
/// one, and what is wrong.
pub fn warning_line(problem: &pi_protocol::v1::ResourceDiagnostic) -> String {
    match &problem.key {
        Some(key) => format!("Warning: {}: `{key}`: {}", problem.path, problem.message),
        None => format!("Warning: {}: {}", problem.path, problem.message),
    }
}
