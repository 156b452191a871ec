//! `/login` and `/logout`: subscription logins the daemon runs and stores in pi's `auth.json`
//! (`auth/*`). `/login` lists the subscriptions (`auth/list`) in a selector, or starts the one
//! named; the login's dialog shows its `auth/loginEvent` steps — the URL to open (also put on
//! the clipboard, and opened when there is a desktop), its instructions, progress, a prompt to
//! answer (`auth/loginInput`) — until `auth/login` answers. Esc cancels it (`auth/loginCancel`).
//! `/logout` lists the providers logged in to, or logs out of the one named (`auth/logout`).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use pi_protocol::v1::{AuthLoginEventParams, AuthProviderStatus, AuthSource, LoginStep};

use crate::effect::{Effect, Request};
use crate::overlay::{LoginDialog, LoginPrompt, Overlay, Selector, SelectorItem, SelectorKind};
use crate::state::State;

/// The login selector's title.
const LOGIN_TITLE: &str = "Log in to a subscription";
/// The logout selector's title.
const LOGOUT_TITLE: &str = "Log out of a subscription";

/// `/login [PROVIDER]`: the subscriptions to choose from (once `auth/list` answers), or the
/// named provider's login at once.
pub(super) fn login_command(state: &mut State, args: &str, effects: &mut Vec<Effect>) {
    match args.split_whitespace().next() {
        // Whether it is a subscription or a key is in the list.
        Some(provider) if !state.auth_providers.is_empty() => {
            start(state, provider.to_owned(), effects);
        }
        provider => {
            state.pending_login = provider.map(str::to_owned);
            state.overlay = Some(Overlay::Loading {
                kind: SelectorKind::Login,
                title: LOGIN_TITLE.to_owned(),
            });
            effects.push(Effect::Request(Request::AuthList));
        }
    }
}

/// `/logout [PROVIDER]`: the providers logged in to (once `auth/list` answers), or the named
/// provider's logout at once.
pub(super) fn logout_command(state: &mut State, args: &str, effects: &mut Vec<Effect>) {
    match args.split_whitespace().next() {
        Some(provider) => effects.push(Effect::Request(Request::Logout(provider.to_owned()))),
        None => {
            state.overlay = Some(Overlay::Loading {
                kind: SelectorKind::Logout,
                title: LOGOUT_TITLE.to_owned(),
            });
            effects.push(Effect::Request(Request::AuthList));
        }
    }
}

/// Starts the login to `provider`: its dialog opens and waits for the first step. The request
/// runs in the background; its answer comes back as a reply, minutes later maybe.
pub(super) fn start(state: &mut State, provider: String, effects: &mut Vec<Effect>) {
    // A provider without a subscription login: its API key is typed here (pi's /login).
    let key_only = state
        .auth_providers
        .iter()
        .any(|status| status.provider == provider && !status.subscription);
    if key_only {
        let mut dialog = LoginDialog::new(provider.clone(), provider.clone());
        dialog.key_entry = true;
        dialog.prompt = Some(LoginPrompt {
            message: format!("Paste the API key for {provider} (stored in auth.json):"),
            placeholder: None,
            allow_empty: false,
        });
        state.status = None;
        state.overlay = Some(Overlay::Login(dialog));
        return;
    }
    let name = login_name(state, &provider);
    state.status = None;
    state.overlay = Some(Overlay::Login(LoginDialog::new(provider.clone(), name)));
    effects.push(Effect::Request(Request::Login { provider }));
}

/// pi's name of `provider`'s login as `auth/list` last gave it, else the provider's id.
fn login_name(state: &State, provider: &str) -> String {
    state
        .auth_providers
        .iter()
        .find(|status| status.provider == provider)
        .map_or_else(|| provider.to_owned(), |status| status.name.clone())
}

fn logged_in(status: &AuthProviderStatus) -> bool {
    matches!(status.source, Some(AuthSource::Login { .. }))
}

/// `auth/list` answered: kept for the logins' names, and shown when `/login` or `/logout`
/// waits for it.
pub(super) fn providers_listed(
    state: &mut State,
    providers: Vec<AuthProviderStatus>,
    effects: &mut Vec<Effect>,
) {
    state.auth_providers = providers;
    warn_extra_usage(state);
    if let Some(provider) = state.pending_login.take()
        && matches!(
            state.overlay,
            Some(Overlay::Loading {
                kind: SelectorKind::Login,
                ..
            })
        )
    {
        return start(state, provider, effects);
    }
    let kind = match &state.overlay {
        Some(Overlay::Loading {
            kind: kind @ (SelectorKind::Login | SelectorKind::Logout),
            ..
        }) => *kind,
        _ => return,
    };
    let logging_in = kind == SelectorKind::Login;
    let items: Vec<SelectorItem> = state
        .auth_providers
        .iter()
        .filter(|status| logging_in || logged_in(status))
        .map(|status| SelectorItem {
            label: status.name.clone(),
            detail: match (&status.source, status.subscription) {
                (Some(AuthSource::Login { .. }), _) => "logged in".to_owned(),
                (None, true) => "subscription".to_owned(),
                (Some(AuthSource::ApiKey { .. }), false) => "API key stored".to_owned(),
                (Some(AuthSource::Environment { variable }), _) => format!("${variable}"),
                (_, true) => "subscription".to_owned(),
                (_, false) => "API key".to_owned(),
            },
            value: status.provider.clone(),
            indent: String::new(),
            on_path: false,
            current: false,
        })
        .collect();
    if items.is_empty() {
        state.overlay = None;
        state.status = Some(if logging_in {
            "The daemon offers no subscription to log in to.".to_owned()
        } else {
            "You are logged in to no subscription.".to_owned()
        });
        return;
    }
    let title = if logging_in {
        LOGIN_TITLE
    } else {
        LOGOUT_TITLE
    };
    state.overlay = Some(Overlay::Select(Selector::new(kind, title, items)));
}

/// A step of a login: shown in its dialog. The first one gives the login's id; a login
/// cancelled before that is cancelled now.
pub(super) fn on_event(state: &mut State, event: AuthLoginEventParams, effects: &mut Vec<Effect>) {
    let AuthLoginEventParams { login_id, step } = event;
    let shown = matches!(
        &state.overlay,
        Some(Overlay::Login(dialog)) if dialog.login_id.as_deref() == Some(login_id.as_str())
    );
    if !shown && state.cancel_login_on_first_step {
        state.cancel_login_on_first_step = false;
        effects.push(Effect::Request(Request::LoginCancel(login_id)));
        return;
    }
    let Some(Overlay::Login(dialog)) = &mut state.overlay else {
        return;
    };
    if dialog.login_id.as_ref().is_some_and(|id| *id != login_id) {
        return;
    }
    dialog.login_id = Some(login_id);
    match step {
        LoginStep::OpenUrl { url, instructions } => {
            if dialog.url.as_deref() != Some(url.as_str()) {
                effects.push(Effect::Copy(url.clone()));
                effects.push(Effect::OpenUrl(url.clone()));
            }
            dialog.url = Some(url);
            dialog.instructions = instructions;
        }
        LoginStep::Prompt {
            message,
            placeholder,
            allow_empty,
        } => {
            dialog.prompt = Some(LoginPrompt {
                message,
                placeholder,
                allow_empty,
            });
            dialog.text.clear();
        }
        LoginStep::Progress { message } => dialog.progress.push(message),
    }
}

/// A key in the login dialog: types the answer to its prompt, Enter sends it, Esc (or
/// Ctrl+C) cancels the login.
pub(super) fn on_key(state: &mut State, event: KeyEvent, effects: &mut Vec<Effect>) {
    let control = event.modifiers.contains(KeyModifiers::CONTROL);
    let cancel = event.code == KeyCode::Esc || (event.code == KeyCode::Char('c') && control);
    if cancel {
        cancel_login(state, effects);
        return;
    }
    let Some(Overlay::Login(dialog)) = &mut state.overlay else {
        return;
    };
    match event.code {
        KeyCode::Enter => {
            let Some(prompt) = &dialog.prompt else {
                return;
            };
            let text = dialog.text.trim().to_owned();
            if text.is_empty() && !prompt.allow_empty {
                return;
            }
            if dialog.key_entry {
                let provider = dialog.provider.clone();
                state.overlay = None;
                effects.push(Effect::Request(Request::SetApiKey {
                    provider,
                    key: text,
                }));
                return;
            }
            let Some(login_id) = dialog.login_id.clone() else {
                return;
            };
            dialog.prompt = None;
            dialog.text.clear();
            effects.push(Effect::Request(Request::LoginInput { login_id, text }));
        }
        KeyCode::Backspace => {
            dialog.text.pop();
        }
        KeyCode::Char('u') if control => dialog.text.clear(),
        KeyCode::Char(c) if !control && dialog.prompt.is_some() => dialog.text.push(c),
        _ => {}
    }
}

/// A paste into the login dialog: the answer (a code, a redirect URL), on one line.
pub(super) fn paste(state: &mut State, text: &str) {
    if let Some(Overlay::Login(dialog)) = &mut state.overlay
        && dialog.prompt.is_some()
    {
        dialog.text.extend(text.lines().map(str::trim));
    }
}

/// Closes the login dialog and cancels its login (once its id is known).
fn cancel_login(state: &mut State, effects: &mut Vec<Effect>) {
    let login_id = match &state.overlay {
        Some(Overlay::Login(dialog)) if dialog.key_entry => {
            state.overlay = None;
            return;
        }
        Some(Overlay::Login(dialog)) => dialog.login_id.clone(),
        _ => return,
    };
    state.overlay = None;
    match login_id {
        Some(login_id) => effects.push(Effect::Request(Request::LoginCancel(login_id))),
        None => state.cancel_login_on_first_step = true,
    }
    state.status = Some("Cancelling the login…".to_owned());
}

/// Closes the dialog of `provider`'s login, if it is open. When it is not, the login was
/// cancelled: one cancelled before its first step needs no cancelling any more.
fn close_dialog(state: &mut State, provider: &str) {
    if matches!(&state.overlay, Some(Overlay::Login(dialog)) if dialog.provider == provider) {
        state.overlay = None;
    } else {
        state.cancel_login_on_first_step = false;
    }
}

/// `path` with the home directory shown as `~`.
fn shown_path(state: &State, path: &str) -> String {
    let home = state.environment.home.as_str();
    match path.strip_prefix(home) {
        Some(rest) if !home.is_empty() && (rest.is_empty() || rest.starts_with('/')) => {
            format!("~{rest}")
        }
        _ => path.to_owned(),
    }
}

/// `auth/login` answered: the dialog closes; the provider's models have a key now.
pub(super) fn logged_in_reply(
    state: &mut State,
    provider: &str,
    path: &str,
    effects: &mut Vec<Effect>,
) {
    let name = login_name(state, provider);
    close_dialog(state, provider);
    state.status = Some(format!(
        "Logged in to {name} (tokens in {})",
        shown_path(state, path)
    ));
    state.models.clear();
    effects.push(Effect::Request(Request::ListModels));
}

/// `auth/login` failed, or was cancelled.
pub(super) fn login_failed_reply(
    state: &mut State,
    provider: &str,
    message: &str,
    cancelled: bool,
) {
    close_dialog(state, provider);
    if cancelled {
        state.status = Some("Login cancelled.".to_owned());
        return;
    }
    // The whole reason (a server's words, a URL), wrapped in a panel: a status line would cut it.
    state.status = Some("Login failed.".to_owned());
    if state.overlay.is_none() {
        state.overlay = Some(Overlay::Info {
            title: format!("Login to {} failed", login_name(state, provider)),
            lines: message.lines().map(str::to_owned).collect(),
        });
    }
}

/// `auth/logout` answered.
pub(super) fn logged_out_reply(
    state: &mut State,
    provider: &str,
    removed: &[String],
    effects: &mut Vec<Effect>,
) {
    if removed.is_empty() {
        state.status = Some(format!("No login or key for {provider} in auth.json."));
        return;
    }
    state.status = Some(format!("Logged out of {provider}."));
    // Its models have no key any more (or another one).
    state.models.clear();
    effects.push(Effect::Request(Request::ListModels));
}

/// pi's words when an `anthropic` model runs on a Claude subscription.
pub const EXTRA_USAGE_WARNING: &str = "Anthropic subscription auth is active. Third-party \
    harness usage draws from extra usage and is billed per token, not your Claude plan limits. \
    Manage extra usage at https://claude.ai/settings/usage.";

/// After the session's model or the settings changed: when the model is `anthropic`'s, not
/// checked yet, and the warning is on and not shown, asks `auth/list` how it is paid for
/// (answered in [`warn_extra_usage`]).
pub(super) fn check_extra_usage(state: &mut State, effects: &mut Vec<Effect>) {
    if state.extra_usage.shown || !state.prefs.warn_extra_usage {
        return;
    }
    let Some(model) = state
        .session
        .as_ref()
        .and_then(|session| session.model.as_ref())
    else {
        return;
    };
    if model.provider != "anthropic" {
        return;
    }
    let spec = format!("{}/{}", model.provider, model.id);
    if state.extra_usage.checked_model.as_ref() == Some(&spec) {
        return;
    }
    state.extra_usage.checked_model = Some(spec);
    effects.push(Effect::Request(Request::AuthList));
}

/// Shows pi's extra-usage warning once, when the session's model is `anthropic`'s and
/// `auth/list` says its key is a subscription's (a login, or an `sk-ant-oat` token).
fn warn_extra_usage(state: &mut State) {
    if state.extra_usage.shown || !state.prefs.warn_extra_usage {
        return;
    }
    let on_anthropic = state
        .session
        .as_ref()
        .and_then(|session| session.model.as_ref())
        .is_some_and(|model| model.provider == "anthropic");
    let anthropic = state
        .auth_providers
        .iter()
        .find(|status| status.provider == "anthropic");
    let stored = anthropic.is_some_and(|status| {
        matches!(status.source, Some(AuthSource::Login { .. })) || status.subscription_token
    });
    // A key in auth.json beats the environment; `--api-key` beats both.
    let in_file = anthropic.is_some_and(|status| {
        matches!(
            status.source,
            Some(AuthSource::Login { .. } | AuthSource::ApiKey { .. })
        )
    });
    let environment = &state.environment;
    let subscription =
        environment.subscription_key || stored || (!in_file && environment.anthropic_env_token);
    if on_anthropic && subscription {
        state.extra_usage.shown = true;
        state
            .transcript
            .notice(crate::transcript::NoticeLevel::Warning, EXTRA_USAGE_WARNING);
    }
}
