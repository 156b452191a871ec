//! The imperative shell: owns the terminal and the daemon connection, turns what happens into
//! [`Input`]s for [`update`], performs the [`Effect`]s it returns, and draws after each batch.
//!
//! Reconnection: when the connection ends, the state shows "reconnecting" and the shell tries
//! again with backoff (never starting a daemon itself: whoever restarts the daemon owns it).
//! Once connected, it attaches with `afterSeq` = the last durable `seq` applied, so the replay
//! continues the transcript exactly; `resync_required` falls back to a fresh attach that
//! rebuilds it. Either way nothing is lost or shown twice.
//!
//! Invariant: while an attach is in flight, notifications are not applied (they wait in the
//! forwarding channel), so every event is applied after the snapshot it follows.

mod daemon;
mod graphics;
pub use daemon::Extensions;
mod terminal;
mod world;
pub use world::{browser_opener, open_in_browser};

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use crossterm::event::{Event as TerminalEvent, EventStream, MouseEventKind};
use futures_util::StreamExt as _;
use pi_client::autostart::{self, StartOptions};
use pi_client::{Client, Notifications, Paths};
use pi_protocol::v1::{
    SessionDetach, SessionEventNotification, SessionIdParams, SessionPresence, SessionSetDraft,
    SessionSetDraftParams,
};
use pi_protocol::{Notification, NotificationMethod as _};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

use crate::effect::{Effect, SwitchTo};
use crate::input::Input;
use crate::keymap::Keymap;
use crate::overlay::{Overlay, Selector, SelectorItem, SelectorKind};
use crate::state::{Connection, Environment, State};
use crate::{render, update};

/// What to attach to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// An existing session.
    Session(String),
    /// A new session in the working directory.
    New {
        /// Model spec.
        model: Option<String>,
        /// Thinking level.
        thinking: Option<String>,
    },
    /// The most recent session in the working directory (a new one if there is none).
    Continue,
    /// Let the user pick among the recent sessions of the working directory.
    Pick,
}

/// Options of `pictl attach` and of `pictl` on a terminal.
#[derive(Clone, Debug)]
pub struct AttachOptions {
    /// What to attach to.
    pub target: Target,
    /// The absolute working directory (new sessions run here).
    pub cwd: PathBuf,
    /// The daemon's directories.
    pub paths: Paths,
    /// Client name and version for `initialize`.
    pub client_version: String,
    /// What the sessions it starts load besides and instead of the configured pi
    /// extensions.
    pub extensions: daemon::Extensions,
    /// The model scope of Ctrl+P (`--models`); empty: the settings' `enabledModels`.
    pub model_scope: Vec<String>,
    /// pi's `--verbose`: the startup header in full whatever `quietStartup` says.
    pub verbose: bool,
    /// pi's `--theme`: theme files or directories to load (absolute).
    pub theme_paths: Vec<String>,
    /// pi's `--no-themes`: no theme discovery (only `--theme`'s and the built-ins).
    pub no_themes: bool,
    /// The key given with `--api-key` is a Claude subscription's token (`sk-ant-oat…`).
    pub subscription_key: bool,
}

/// How long a reconnection waits at most between attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(2);
/// Drafts are sent at most this often.
const DRAFT_INTERVAL: Duration = Duration::from_millis(100);
/// Lines one wheel step scrolls.
const WHEEL_LINES: isize = 3;
/// Notifications waiting for the loop at most (it applies up to 256 per frame).
const NOTIFICATIONS_QUEUED: usize = 1024;
/// Animation tick while a run is active.
const TICK: Duration = Duration::from_millis(100);

/// Runs the TUI until the user detaches. The session keeps running in the daemon.
pub async fn run(options: AttachOptions) -> anyhow::Result<()> {
    let client_info = pi_client::client_info("pi-tui", &options.client_version);
    let connected = autostart::connect_or_start(
        &options.paths,
        client_info.clone(),
        &StartOptions::default(),
    )
    .await
    .context("connecting to the daemon")?;
    let client = connected.client;

    // Resolve the target before touching the terminal, so errors print normally.
    let mut picker = None;
    let session_id = match &options.target {
        Target::Session(id) => Some(id.clone()),
        Target::New { model, thinking } => Some(
            daemon::create_session(
                &client,
                &options.cwd,
                model.clone(),
                thinking.clone(),
                &options.extensions,
            )
            .await
            .context("creating a session")?
            .id,
        ),
        Target::Continue | Target::Pick => {
            let recent = daemon::recent_sessions(&client, &options.cwd)
                .await
                .context("listing sessions")?;
            match (&options.target, recent.first()) {
                (_, None) => Some(
                    daemon::create_session(&client, &options.cwd, None, None, &options.extensions)
                        .await
                        .context("creating a session")?
                        .id,
                ),
                (Target::Continue, Some(latest)) => Some(latest.id.clone()),
                (_, Some(_)) => {
                    picker = Some(recent);
                    None
                }
            }
        }
    };
    let first_attachment = match &session_id {
        Some(id) => Some(
            daemon::attach_fresh(&client, id)
                .await
                .with_context(|| format!("attaching to session {id}"))?,
        ),
        None => None,
    };

    let keymap_path = options.paths.pi_agent_dir.join("keybindings.json");
    let (keymap, keymap_warnings) = match std::fs::read_to_string(&keymap_path) {
        Ok(json) => Keymap::with_overrides(&json),
        Err(_) => (Keymap::default(), Vec::new()),
    };
    let home = std::env::home_dir();
    let environment = Environment {
        cwd_display: world::display_cwd(&options.cwd, home.as_deref()),
        git_branch: world::git_branch(&options.cwd),
        connection_id: client.initialize_response().connection_id.clone(),
        verbose: options.verbose,
        theme_paths: options.theme_paths.clone(),
        no_themes: options.no_themes,
        graphics: graphics::detect(|name| std::env::var(name).ok()),
        // pi's order for Anthropic's variables; the session sees this process's.
        anthropic_env_token: ["ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"]
            .iter()
            .find_map(|name| std::env::var(name).ok().filter(|value| !value.is_empty()))
            .is_some_and(|key| key.starts_with("sk-ant-oat")),
        subscription_key: options.subscription_key,
        cell: graphics::cell_size(),
        home: home
            .as_deref()
            .map(|home| home.display().to_string())
            .unwrap_or_default(),
    };
    let mut state = State::new(keymap, environment);
    state.color_mode = crate::theme::ColorMode::detect(
        std::env::var("COLORTERM").ok().as_deref(),
        std::env::var("TERM").ok().as_deref(),
        std::env::var("TERM_PROGRAM").ok().as_deref(),
    );
    state.theme_choice = crate::state::ThemeChoice {
        name: None,
        paths: options.theme_paths.clone(),
        discover: !options.no_themes,
    };
    // Said once the first session's history is shown (an attach rebuilds the transcript).
    state.startup_warnings.extend(keymap_warnings);
    // What is wrong in the configuration files now, however long ago it broke: the
    // daemon's files, and the settings of this directory (the project's too).
    let mut problems = Vec::new();
    if let Ok(status) = client
        .call::<pi_protocol::v1::DaemonStatus>(&pi_protocol::v1::DaemonStatusParams {})
        .await
    {
        problems.extend(status.config.diagnostics);
    }
    // pi's settings the TUI itself follows: the model scope, hidden thinking, the
    // interactive-mode keys.
    if let Ok(settings) = client
        .call::<pi_protocol::v1::SettingsGet>(&pi_protocol::v1::SettingsGetParams {
            cwd: Some(options.cwd.display().to_string()),
        })
        .await
    {
        crate::update::apply_settings(&mut state, &settings.settings);
        state.model_scope = settings.settings.enabled_models;
        problems.extend(settings.diagnostics);
    }
    if !options.model_scope.is_empty() {
        state.model_scope = options.model_scope.clone();
    }
    let mut said = std::collections::HashSet::new();
    for problem in problems
        .iter()
        .filter(|problem| problem.kind == pi_protocol::v1::ResourceDiagnosticKind::Warning)
    {
        let line = crate::update::warning_line(problem);
        if said.insert(line.clone()) {
            state.startup_warnings.push(line);
        }
    }
    // The theme the settings name (else the terminal's background's); its file is watched.
    let background = world::background_theme(std::env::var("COLORFGBG").ok().as_deref());
    let loaded = world::load_theme(
        &state.theme_choice,
        &options.cwd,
        &options.paths.pi_agent_dir,
        background,
    );
    let theme_file = watched(loaded.file.as_deref());
    state.loaded.themes = world::custom_themes(
        &state.theme_choice,
        &options.cwd,
        &options.paths.pi_agent_dir,
    );
    let _ = update(
        &mut state,
        Input::Theme {
            theme: std::sync::Arc::new(loaded.theme),
            problem: loaded.problem,
        },
    );
    if let Some(sessions) = picker {
        let mut items = vec![SelectorItem {
            label: "+ New session".to_owned(),
            detail: String::new(),
            value: String::new(),
            indent: String::new(),
            on_path: false,
            current: false,
        }];
        items.extend(sessions.into_iter().map(|session| {
            SelectorItem {
                label: session
                    .name
                    .clone()
                    .or(session.first_message.clone())
                    .unwrap_or_else(|| "(empty)".to_owned())
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_owned(),
                detail: format!(
                    "{} messages{}",
                    session.message_count,
                    if session.id.starts_with(crate::state::PI_FILE_PREFIX) {
                        " · pi's file"
                    } else {
                        ""
                    }
                ),
                value: session.id,
                indent: String::new(),
                on_path: false,
                current: false,
            }
        }));
        let mut selector = Selector::new(SelectorKind::Session, "Attach to a session", items);
        selector.move_by(1);
        state.overlay = Some(Overlay::Select(selector));
    }

    // Syntax grammars take a few milliseconds to load: do it off the first frame's path.
    tokio::task::spawn_blocking(crate::render::warm_up);
    let mut guard = terminal::TerminalGuard::enter().context("preparing the terminal")?;
    let size = guard.terminal.size()?;
    let mut shell = Shell {
        options,
        client,
        client_info,
        generation: 0,
        notifications: mpsc::channel(NOTIFICATIONS_QUEUED),
        inputs: mpsc::unbounded_channel(),
        started: Instant::now(),
        reconnect_at: None,
        reconnect_attempt: 0,
        pending_draft: None,
        draft_sent_at: None,
        theme_file,
        background,
        terminal_jobs: Vec::new(),
    };
    shell.forward(connected.notifications);
    let mut effects = update(&mut state, Input::Resize(size.width, size.height));
    if let Some(attachment) = first_attachment {
        effects.extend(update(&mut state, Input::Attached(Box::new(attachment))));
    }
    // pi's "What's New" after an update, at the start of a fresh session.
    let fresh = state
        .transcript
        .items()
        .iter()
        .all(|item| matches!(item.kind, crate::transcript::ItemKind::Notice { .. }));
    let collapse = state.prefs.collapse_changelog;
    if fresh && let Some(text) = world::whats_new(&shell.options.paths.state_dir, collapse) {
        // pi's: the releases under a heading, or with `collapseChangelog` its one line.
        let kind = if collapse {
            crate::transcript::ItemKind::Notice {
                level: crate::transcript::NoticeLevel::Info,
                text,
            }
        } else {
            crate::transcript::ItemKind::Custom {
                custom_type: crate::changelog::TITLE.to_owned(),
                text,
            }
        };
        state.transcript.push(kind, None);
    }
    shell.perform(&mut state, effects).await;
    draw(&mut guard, &state)?;

    let mut terminal_events = EventStream::new();
    let mut tick = tokio::time::interval(TICK);
    let mut theme_check = tokio::time::interval(Duration::from_secs(1));
    // SIGTERM and SIGHUP end the TUI like a detach, restoring the terminal on the way out.
    let mut terminate = signal(SignalKind::terminate()).context("handling SIGTERM")?;
    let mut hangup = signal(SignalKind::hangup()).context("handling SIGHUP")?;
    while !state.exiting {
        let reconnect_in = shell
            .reconnect_at
            .map(|at| at.saturating_duration_since(Instant::now()));
        let draft_in = shell.draft_due();
        let input = tokio::select! {
            event = terminal_events.next() => match event {
                Some(Ok(event)) => shell.terminal_input(event),
                Some(Err(error)) => return Err(error).context("reading the terminal"),
                None => break,
            },
            Some((generation, notification)) = shell.notifications.1.recv() => {
                if generation != shell.generation {
                    None
                } else {
                    shell.connection_input(notification)
                }
            },
            Some(input) = shell.inputs.1.recv() => Some(input),
            _ = terminate.recv() => break,
            _ = hangup.recv() => break,
            _ = tick.tick() => state.running.then(|| Input::Tick(shell.now_ms())),
            _ = theme_check.tick(), if shell.theme_file.is_some() => shell.theme_input(&state),
            _ = tokio::time::sleep(reconnect_in.unwrap_or(Duration::ZERO)), if reconnect_in.is_some() => {
                shell.reconnect(&mut state).await
            },
            _ = tokio::time::sleep(draft_in.unwrap_or(Duration::ZERO)), if draft_in.is_some() => {
                shell.send_draft(&state);
                None
            },
        };
        let Some(input) = input else { continue };
        let effects = update(&mut state, input);
        shell.perform(&mut state, effects).await;
        // Apply whatever else is already waiting before drawing: one frame per batch keeps
        // fast streams smooth instead of drawing every delta.
        // The connection's end can be among them (a connection cut after a backlog): it is
        // handled like any other, never dropped with the batch.
        for _ in 0..256 {
            let Ok((generation, notification)) = shell.notifications.1.try_recv() else {
                break;
            };
            if generation != shell.generation {
                continue;
            }
            let ended = notification.is_none();
            if let Some(input) = shell.connection_input(notification) {
                let effects = update(&mut state, input);
                shell.perform(&mut state, effects).await;
            }
            if ended {
                break;
            }
        }
        for job in std::mem::take(&mut shell.terminal_jobs) {
            // The terminal goes to someone else: no reading keys meanwhile.
            drop(std::mem::replace(&mut terminal_events, EventStream::new()));
            guard.release();
            let input = match job {
                Effect::Suspend => {
                    terminal::stop_process();
                    None
                }
                Effect::ExternalEditor(text) => Some(Input::ExternalEdited(
                    world::edit_externally(&text, &|name| std::env::var(name).ok()),
                )),
                _ => None,
            };
            guard.reenter().context("taking the terminal back")?;
            if let Some(input) = input {
                let effects = update(&mut state, input);
                shell.perform(&mut state, effects).await;
            }
        }
        draw(&mut guard, &state)?;
    }
    // Leaving: clear our draft for the others and detach; the session keeps running.
    if let Some(session) = &state.session {
        let session_id = session.id.clone();
        let client = shell.client.clone();
        let _ = tokio::time::timeout(Duration::from_secs(1), async move {
            let _ = client
                .call::<SessionSetDraft>(&SessionSetDraftParams {
                    session_id: session_id.clone(),
                    text: String::new(),
                })
                .await;
            let _ = client
                .call::<SessionDetach>(&SessionIdParams { session_id })
                .await;
        })
        .await;
    }
    drop(guard);
    // Said on the restored terminal: where the session is, and how to come back.
    if let Some(session) = &state.session {
        let short = crate::render::chrome::short_id(&session.id);
        #[allow(
            clippy::print_stdout,
            reason = "the TUI's last word, after the terminal is restored"
        )]
        {
            println!("Detached from session {short}; it keeps running in the daemon.");
            println!("Come back with `pictl attach {short}` (or `pictl -c` here).");
        }
    }
    Ok(())
}

fn draw(guard: &mut terminal::TerminalGuard, state: &State) -> anyhow::Result<()> {
    use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
    use std::io::Write as _;
    crossterm::execute!(guard.terminal.backend_mut(), BeginSynchronizedUpdate)?;
    guard.terminal.draw(|frame| render(state, frame))?;
    if let Some(protocol) = state.environment.graphics {
        let placed = if state.view.inline_images.is_some() {
            crate::render::placed_images()
        } else {
            Vec::new()
        };
        let (_, screen) = guard
            .images
            .get_or_insert_with(|| (protocol, graphics::ImageScreen::default()));
        if matches!(
            protocol,
            graphics::Graphics::Iterm2 | graphics::Graphics::Sixel
        ) && screen.changed(&placed)
        {
            // iTerm2's images and sixels live in the cells: the old ones go with a whole
            // redraw.
            guard.clear_for_redraw()?;
            guard.terminal.draw(|frame| render(state, frame))?;
        }
        if let Some((_, screen)) = &mut guard.images {
            let bytes = screen.update(protocol, &placed, state.environment.cell);
            if !bytes.is_empty() {
                guard.terminal.backend_mut().write_all(&bytes)?;
            }
        }
    }
    crossterm::execute!(guard.terminal.backend_mut(), EndSynchronizedUpdate)?;
    guard.set_progress(state.prefs.terminal_progress && (state.running || state.compacting));
    Ok(())
}

fn notification_input(notification: Notification) -> Option<Input> {
    let params = notification.params.unwrap_or(serde_json::Value::Null);
    if notification.method == SessionEventNotification::NAME {
        serde_json::from_value(params)
            .ok()
            .map(|params| Input::Event(Box::new(params)))
    } else if notification.method == SessionPresence::NAME {
        serde_json::from_value(params).ok().map(Input::Presence)
    } else if notification.method == pi_protocol::v1::ConfigChanged::NAME {
        serde_json::from_value(params)
            .ok()
            .map(Input::ConfigChanged)
    } else if notification.method == pi_protocol::v1::McpChanged::NAME {
        serde_json::from_value(params).ok().map(Input::McpChanged)
    } else if notification.method == pi_protocol::v1::LspChanged::NAME {
        serde_json::from_value(params).ok().map(Input::LspChanged)
    } else if notification.method == pi_protocol::v1::UiRequestNotification::NAME {
        serde_json::from_value(params).ok().map(Input::UiRequest)
    } else if notification.method == pi_protocol::v1::UiResolvedNotification::NAME {
        serde_json::from_value(params).ok().map(Input::UiResolved)
    } else if notification.method == pi_protocol::v1::ExtensionUiNotification::NAME {
        serde_json::from_value(params).ok().map(Input::ExtensionUi)
    } else if notification.method == pi_protocol::v1::AuthLoginEvent::NAME {
        serde_json::from_value(params).ok().map(Input::LoginEvent)
    } else {
        None
    }
}

/// A notification of connection `generation`, or `None` when that connection ended.
type Forwarded = (u64, Option<Notification>);

/// The shell's own state: the connection and its channels, timers.
struct Shell {
    options: AttachOptions,
    client: Client,
    client_info: pi_protocol::v1::ClientInfo,
    // Bumped per connection; notifications of older connections are ignored.
    generation: u64,
    // Sent by one forwarding task per connection (`None` when it ends); received by the loop.
    // Bounded: a TUI that cannot keep up stops reading its connection, so the daemon's
    // slow-consumer rule sees it (it closes the connection; the TUI reconnects and catches up
    // with `afterSeq`) instead of the TUI queueing without limit.
    notifications: (mpsc::Sender<Forwarded>, mpsc::Receiver<Forwarded>),
    // Sent by request tasks and the file lister; received by the loop.
    inputs: (mpsc::UnboundedSender<Input>, mpsc::UnboundedReceiver<Input>),
    started: Instant,
    reconnect_at: Option<Instant>,
    reconnect_attempt: u32,
    pending_draft: Option<String>,
    draft_sent_at: Option<Instant>,
    // The theme's file and when it last changed, checked every second (hot reload).
    theme_file: Option<(PathBuf, std::time::SystemTime)>,
    // The built-in the terminal's background asks for (`COLORFGBG`, read once).
    background: &'static str,
    // Effects that need the terminal itself (suspend, the external editor): done by the loop,
    // which holds it.
    terminal_jobs: Vec<Effect>,
}

/// A theme file with its modification time, to notice edits.
fn watched(file: Option<&std::path::Path>) -> Option<(PathBuf, std::time::SystemTime)> {
    let file = file?;
    let modified = std::fs::metadata(file)
        .and_then(|meta| meta.modified())
        .ok()?;
    Some((file.to_path_buf(), modified))
}

impl Shell {
    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// The theme's file again when it changed since it was read (pi's hot reload); a version
    /// that does not parse keeps the theme shown and says why.
    fn theme_input(&mut self, state: &State) -> Option<Input> {
        let (file, seen) = self.theme_file.as_ref()?;
        let modified = std::fs::metadata(file)
            .and_then(|meta| meta.modified())
            .ok()?;
        if modified == *seen {
            return None;
        }
        let file = file.clone();
        self.theme_file = Some((file.clone(), modified));
        let text = std::fs::read_to_string(&file).ok()?;
        Some(
            match crate::theme::Theme::parse(&text, &file.display().to_string()) {
                Ok(theme) => Input::Theme {
                    theme: std::sync::Arc::new(theme),
                    problem: None,
                },
                Err(error) => Input::Theme {
                    theme: state.theme.clone(),
                    problem: Some(format!("{error}; the theme shown stays")),
                },
            },
        )
    }

    /// Moves notifications of a new connection into the loop's channel.
    /// What a notification of the current connection means; its end (`None`) schedules a
    /// reconnection at once.
    fn connection_input(&mut self, notification: Option<Notification>) -> Option<Input> {
        match notification {
            Some(notification) => notification_input(notification),
            None => {
                self.reconnect_at = Some(Instant::now());
                self.reconnect_attempt = 0;
                Some(Input::Disconnected { reason: None })
            }
        }
    }

    fn forward(&mut self, mut notifications: Notifications) {
        self.generation += 1;
        let generation = self.generation;
        let sender = self.notifications.0.clone();
        tokio::spawn(async move {
            while let Some(notification) = notifications.next().await {
                if sender.send((generation, Some(notification))).await.is_err() {
                    return;
                }
            }
            let _ = sender.send((generation, None)).await;
        });
    }

    fn terminal_input(&self, event: TerminalEvent) -> Option<Input> {
        match event {
            TerminalEvent::Key(key) => Some(Input::Key {
                event: key,
                now_ms: self.now_ms(),
            }),
            TerminalEvent::Paste(text) => Some(Input::Paste(text)),
            TerminalEvent::Resize(width, height) => Some(Input::Resize(width, height)),
            TerminalEvent::Mouse(mouse) => match mouse.kind {
                MouseEventKind::ScrollUp => Some(Input::Wheel(WHEEL_LINES)),
                MouseEventKind::ScrollDown => Some(Input::Wheel(-WHEEL_LINES)),
                _ => None,
            },
            TerminalEvent::FocusGained | TerminalEvent::FocusLost => None,
        }
    }

    fn draft_due(&self) -> Option<Duration> {
        self.pending_draft.as_ref()?;
        Some(match self.draft_sent_at {
            Some(at) => DRAFT_INTERVAL.saturating_sub(at.elapsed()),
            None => Duration::ZERO,
        })
    }

    fn send_draft(&mut self, state: &State) {
        let Some(text) = self.pending_draft.take() else {
            return;
        };
        self.draft_sent_at = Some(Instant::now());
        let Some(session) = &state.session else {
            return;
        };
        if state.connection != Connection::Live {
            return;
        }
        let client = self.client.clone();
        let params = SessionSetDraftParams {
            session_id: session.id.clone(),
            text,
        };
        tokio::spawn(async move {
            // Best effort: an older daemon without drafts just does not show them.
            let _ = client.call::<SessionSetDraft>(&params).await;
        });
    }

    /// One reconnection attempt; schedules the next on failure.
    async fn reconnect(&mut self, state: &mut State) -> Option<Input> {
        self.reconnect_at = None;
        let connected = autostart::connect(&self.options.paths, self.client_info.clone()).await;
        let retry = |shell: &mut Shell| {
            shell.reconnect_attempt += 1;
            let backoff = Duration::from_millis(100 * 2u64.pow(shell.reconnect_attempt.min(5)));
            shell.reconnect_at = Some(Instant::now() + backoff.min(MAX_BACKOFF));
            Some(Input::ReconnectFailed {
                attempt: shell.reconnect_attempt,
            })
        };
        let Ok((client, notifications)) = connected else {
            return retry(self);
        };
        self.client = client;
        self.forward(notifications);
        let connection_id = self.client.initialize_response().connection_id.clone();
        let Some(session) = &state.session else {
            self.reconnect_attempt = 0;
            return Some(Input::Reconnected {
                connection_id,
                problem: None,
            });
        };
        let session_id = session.id.clone();
        match daemon::attach_resume(&self.client, &session_id, state.durable_seq).await {
            Ok(attachment) => {
                self.reconnect_attempt = 0;
                if let Some(draft) = (!state.editor.is_empty()).then(|| state.editor.text()) {
                    self.pending_draft = Some(draft);
                }
                Some(Input::Attached(Box::new(attachment)))
            }
            // The session is gone (deleted while we were away): stop retrying and say so.
            Err(error) if error.rpc_kind() == Some(pi_protocol::ErrorKind::NotFound) => {
                self.reconnect_attempt = 0;
                Some(Input::Reconnected {
                    connection_id,
                    problem: Some(error.to_string()),
                })
            }
            Err(_) => retry(self),
        }
    }

    /// Performs effects (and the effects their results produce, for inline ones).
    async fn perform(&mut self, state: &mut State, effects: Vec<Effect>) {
        let mut queue: VecDeque<Effect> = effects.into();
        while let Some(effect) = queue.pop_front() {
            match effect {
                Effect::Request(request) => {
                    let client = self.client.clone();
                    let session_id = state
                        .session
                        .as_ref()
                        .map(|session| session.id.clone())
                        .unwrap_or_default();
                    let cwd = state
                        .session
                        .as_ref()
                        .map(|session| PathBuf::from(&session.cwd))
                        .unwrap_or_else(|| self.options.cwd.clone());
                    let sender = self.inputs.0.clone();
                    tokio::spawn(async move {
                        if let Some(reply) = daemon::perform(client, session_id, cwd, request).await
                        {
                            let _ = sender.send(Input::Reply(reply));
                        }
                    });
                }
                Effect::Switch(target) => {
                    let result = self.switch(state, target).await;
                    match result {
                        Ok(attachment) => {
                            queue.extend(update(state, Input::Attached(Box::new(attachment))));
                        }
                        Err(error) => queue.extend(update(
                            state,
                            Input::Reply(crate::input::Reply::Failed {
                                action: "switch sessions".to_owned(),
                                message: format!("{error:#}"),
                            }),
                        )),
                    }
                }
                Effect::Copy(text) => terminal::copy_to_clipboard(&text),
                Effect::PasteImage => {
                    let sender = self.inputs.0.clone();
                    tokio::task::spawn_blocking(move || {
                        let read = world::paste_clipboard_image(&|name| std::env::var(name).ok());
                        let _ = sender.send(Input::ClipboardImage(read));
                    });
                }
                Effect::ReloadKeys => {
                    let file = self.options.paths.pi_agent_dir.join("keybindings.json");
                    let (keymap, warnings) = match std::fs::read_to_string(&file) {
                        Ok(json) => Keymap::with_overrides(&json),
                        Err(_) => (Keymap::default(), Vec::new()),
                    };
                    queue.extend(update(state, Input::Keymap { keymap, warnings }));
                }
                job @ (Effect::Suspend | Effect::ExternalEditor(_)) => self.terminal_jobs.push(job),
                Effect::OpenUrl(url) => world::open_in_browser(url),
                Effect::Title(title) => terminal::set_title(&title),
                Effect::Draft(text) => self.pending_draft = Some(text),
                Effect::ListFiles => {
                    let cwd = state
                        .session
                        .as_ref()
                        .map(|session| PathBuf::from(&session.cwd))
                        .unwrap_or_else(|| self.options.cwd.clone());
                    let sender = self.inputs.0.clone();
                    tokio::task::spawn_blocking(move || {
                        let _ = sender.send(Input::Files(world::list_files(&cwd)));
                    });
                }
                Effect::Detach => state.exiting = true,
                Effect::LoadTheme(choice) => {
                    let loaded = world::load_theme(
                        &choice,
                        &self.options.cwd,
                        &self.options.paths.pi_agent_dir,
                        self.background,
                    );
                    self.theme_file = watched(loaded.file.as_deref());
                    queue.extend(update(
                        state,
                        Input::Theme {
                            theme: std::sync::Arc::new(loaded.theme),
                            problem: loaded.problem,
                        },
                    ));
                }
            }
        }
    }

    async fn switch(
        &mut self,
        state: &State,
        target: SwitchTo,
    ) -> anyhow::Result<crate::input::Attachment> {
        let current = state.session.as_ref().map(|session| session.id.clone());
        let session_id = match target {
            SwitchTo::Existing(id) if !id.is_empty() => {
                daemon::session_of(&self.client, id).await?
            }
            SwitchTo::Existing(_) => {
                daemon::create_session(
                    &self.client,
                    &self.options.cwd,
                    None,
                    None,
                    &self.options.extensions,
                )
                .await?
                .id
            }
            SwitchTo::New { model, thinking } => {
                daemon::create_session(
                    &self.client,
                    &self.options.cwd,
                    model,
                    thinking,
                    &self.options.extensions,
                )
                .await?
                .id
            }
        };
        if let Some(current) = current
            && current != session_id
        {
            let _ = self
                .client
                .call::<SessionDetach>(&SessionIdParams {
                    session_id: current,
                })
                .await;
        }
        Ok(daemon::attach_fresh(&self.client, &session_id).await?)
    }
}
