//! Slash commands (pi's interactive commands, spec §7.6) and completion of commands and `@`
//! file paths. Commands the daemon cannot serve yet say so instead of pretending.

use crate::effect::{Effect, Request, SwitchTo};
use crate::overlay::{
    Completion, CompletionKind, Overlay, Selector, SelectorItem, SelectorKind, fuzzy_filter,
};
use crate::state::{State, THINKING_LEVELS};

pub use crate::commands_table::COMMANDS;

/// Completion rows shown at most.
const COMPLETION_LIMIT: usize = 8;

/// Whether `text` starts with a built-in command name.
pub(super) fn is_builtin(text: &str) -> bool {
    let name = text
        .trim_start_matches('/')
        .split_whitespace()
        .next()
        .unwrap_or_default();
    COMMANDS.iter().any(|(command, _, _)| *command == name)
}

/// Runs a built-in command line (`/name args`).
pub(super) fn run(state: &mut State, line: &str, effects: &mut Vec<Effect>) {
    let line = line.trim().trim_start_matches('/');
    let (name, args) = match line.split_once(char::is_whitespace) {
        Some((name, args)) => (name, args.trim()),
        None => (line, ""),
    };
    state.completion = None;
    match name {
        "model" => open_model_selector(state, args, effects),
        "thinking" => {
            if args.is_empty() {
                let current = state.thinking_level().to_owned();
                let items = THINKING_LEVELS
                    .iter()
                    .map(|level| SelectorItem {
                        label: (*level).to_owned(),
                        detail: String::new(),
                        value: (*level).to_owned(),
                        indent: String::new(),
                        on_path: false,
                        current: *level == current,
                    })
                    .collect();
                state.overlay = Some(Overlay::Select(Selector::new(
                    SelectorKind::Thinking,
                    "Thinking level",
                    items,
                )));
            } else {
                effects.push(Effect::Request(Request::SetThinking(args.to_owned())));
            }
        }
        "new" => {
            let model = state
                .session
                .as_ref()
                .and_then(|session| session.model.as_ref())
                .map(|model| format!("{}/{}", model.provider, model.id));
            effects.push(Effect::Request(Request::BeforeSwitch(SwitchTo::New {
                model,
                thinking: Some(state.thinking_level().to_owned()),
            })));
        }
        "resume" => {
            state.overlay = Some(Overlay::Loading {
                kind: SelectorKind::Session,
                title: "Resume a session".to_owned(),
            });
            effects.push(Effect::Request(Request::ListSessions));
        }
        "approvals" => {
            const MODES: [(&str, &str); 4] = [
                ("yolo", "everything runs (pi's behaviour)"),
                ("ask-writes", "reads run; writes and commands ask"),
                ("ask-all", "every call asks"),
                ("read-only", "reads run; the rest is denied"),
            ];
            if args.is_empty() {
                let items = MODES
                    .iter()
                    .map(|(mode, detail)| SelectorItem {
                        label: (*mode).to_owned(),
                        detail: (*detail).to_owned(),
                        value: (*mode).to_owned(),
                        indent: String::new(),
                        on_path: false,
                        current: false,
                    })
                    .collect();
                state.overlay = Some(Overlay::Select(Selector::new(
                    SelectorKind::Approvals,
                    "Approval mode",
                    items,
                )));
            } else {
                effects.push(Effect::Request(Request::SetPolicy(args.to_owned())));
            }
        }
        "agents" => {
            let parent = state
                .session
                .as_ref()
                .filter(|session| session.task_name.is_some())
                .and_then(|session| session.parent_session_id.clone());
            state.overlay = Some(Overlay::Loading {
                kind: SelectorKind::Session,
                title: "Subagents".to_owned(),
            });
            effects.push(Effect::Request(Request::ListAgents { parent }));
        }
        "tree" | "fork" => {
            let for_fork = name == "fork";
            state.overlay = Some(Overlay::Loading {
                kind: if for_fork {
                    SelectorKind::Fork
                } else {
                    SelectorKind::Tree
                },
                title: if for_fork {
                    "Fork from a message".to_owned()
                } else {
                    "Session tree".to_owned()
                },
            });
            effects.push(Effect::Request(Request::ReadTree { for_fork }));
        }
        "name" => {
            if args.is_empty() {
                state.status = Some("Usage: /name <name>".to_owned());
            } else {
                effects.push(Effect::Request(Request::SetName(args.to_owned())));
            }
        }
        "label" => match state.leaf_id.clone() {
            Some(entry_id) => effects.push(Effect::Request(Request::Label {
                entry_id,
                label: args.to_owned(),
            })),
            None => state.status = Some("Nothing to label yet.".to_owned()),
        },
        "compact" => {
            let instructions = (!args.is_empty()).then(|| args.to_owned());
            effects.push(Effect::Request(Request::Compact(instructions)));
        }
        "export" => {
            let path = (!args.is_empty()).then(|| args.to_owned());
            effects.push(Effect::Request(Request::Export(path)));
        }
        "session" => effects.push(Effect::Request(Request::Stats)),
        "plan" => {
            let enabled = match args {
                "" => Some(!state.plan_mode),
                "on" => Some(true),
                "off" => Some(false),
                _ => None,
            };
            match enabled {
                Some(enabled) if enabled == state.plan_mode => {
                    state.status = Some(format!(
                        "Plan mode is already {}.",
                        if enabled { "on" } else { "off" }
                    ));
                }
                Some(enabled) => effects.push(Effect::Request(Request::SetPlanMode(enabled))),
                None => state.status = Some("Usage: /plan [on|off]".to_owned()),
            }
        }
        "clone" => {
            if state.leaf_id.is_none() {
                state.status = Some("Nothing to clone yet".to_owned());
            } else {
                effects.push(Effect::Request(Request::Clone));
            }
        }
        "import" => {
            if args.is_empty() {
                state.status = Some("Usage: /import <path.jsonl>".to_owned());
            } else {
                effects.push(Effect::Request(Request::Import(args.to_owned())));
            }
        }
        "share" => {
            state.status = Some(SHARING.to_owned());
            effects.push(Effect::Request(Request::Share));
        }
        "login" => super::login::login_command(state, args, effects),
        "logout" => super::login::logout_command(state, args, effects),
        "mcp" => mcp(state, args, effects),
        "lsp" => lsp(state, args, effects),
        "extensions" => extensions(state, args, effects),
        "copy" => match state.transcript.last_assistant_text() {
            Some(text) => {
                effects.push(Effect::Copy(text));
                state.status = Some("Copied the last reply.".to_owned());
            }
            None => state.status = Some("No reply to copy yet.".to_owned()),
        },
        "hotkeys" => state.overlay = Some(Overlay::Hotkeys { scroll: 0 }),
        "settings" => super::settings_dialog::open(state, effects),
        "scoped-models" => super::scoped_models::open(state, effects),
        "reload" => {
            // pi's: keys, extensions, skills, prompts and themes; and the settings.
            effects.push(Effect::ReloadKeys);
            effects.push(Effect::LoadTheme(state.theme_choice.clone()));
            effects.push(Effect::Request(Request::Settings));
            state.models.clear();
            effects.push(Effect::Request(Request::ListModels));
            if state.session.is_some() {
                effects.push(Effect::Request(Request::ExtensionsRestart));
                effects.push(Effect::Request(Request::ListCommands));
            }
            state.status = Some(
                "Reloaded keybindings, themes, settings, models, skills, prompts and extensions."
                    .to_owned(),
            );
        }
        "changelog" => state.transcript.push(
            crate::transcript::ItemKind::Custom {
                custom_type: crate::changelog::TITLE.to_owned(),
                text: crate::changelog::full(crate::changelog::CHANGELOG),
            },
            None,
        ),
        "detach" | "quit" => {
            state.exiting = true;
            effects.push(Effect::Detach);
        }
        other => state.status = Some(format!("Unknown command /{other}.")),
    }
}

/// Opens the model selector (asking for the list first when it is not loaded).
pub(super) fn open_model_selector(state: &mut State, query: &str, effects: &mut Vec<Effect>) {
    if state.models.is_empty() {
        state.overlay = Some(Overlay::Loading {
            kind: SelectorKind::Model,
            title: "Model".to_owned(),
        });
        effects.push(Effect::Request(Request::ListModels));
        return;
    }
    let current = state
        .session
        .as_ref()
        .and_then(|session| session.model.clone());
    // Models with a key first (a stable order otherwise).
    let mut models: Vec<&pi_protocol::v1::ModelInfo> = state.models.iter().collect();
    models.sort_by_key(|model| !model.has_key);
    let items = models
        .into_iter()
        .map(|model| SelectorItem {
            label: format!("{}/{}", model.provider, model.id),
            detail: if model.has_key {
                model.name.clone()
            } else {
                format!("{} (no key)", model.name)
            },
            value: format!("{}/{}", model.provider, model.id),
            indent: String::new(),
            on_path: false,
            current: current.as_ref().is_some_and(|current| {
                current.provider == model.provider && current.id == model.id
            }),
        })
        .collect();
    let mut selector = Selector::new(SelectorKind::Model, "Model", items);
    if !query.is_empty() {
        selector.set_query(query.to_owned());
    }
    state.overlay = Some(Overlay::Select(selector));
}

/// Opens prompt-history search (Ctrl+R).
pub(super) fn open_history_search(state: &mut State, effects: &mut Vec<Effect>) {
    let items = history_items(&state.history.entries);
    state.overlay = Some(Overlay::Select(Selector::new(
        SelectorKind::History,
        "Search prompt history",
        items,
    )));
    effects.push(Effect::Request(Request::SearchHistory(String::new())));
}

/// Selector rows for history texts.
pub(super) fn history_items(entries: &[String]) -> Vec<SelectorItem> {
    entries
        .iter()
        .map(|text| SelectorItem {
            label: text.lines().next().unwrap_or_default().to_owned(),
            detail: match text.lines().count() {
                0 | 1 => String::new(),
                lines => format!("+{} lines", lines - 1),
            },
            value: text.clone(),
            indent: String::new(),
            on_path: false,
            current: false,
        })
        .collect()
}

/// Recomputes the completion popup from the token at the cursor.
pub(super) fn refresh_completion(state: &mut State) {
    let (start, token) = state.editor.token_at_cursor();
    let on_first_token = state.editor.cursor().0 == 0 && start == 0;
    state.completion = if on_first_token && token.starts_with('/') {
        let query = &token[1..];
        // Built-ins first, then the session's templates and skills.
        let mut rows: Vec<(String, String, String)> = COMMANDS
            .iter()
            .map(|(name, args, description)| {
                (
                    format!("/{name} {args}").trim_end().to_owned(),
                    (*description).to_owned(),
                    format!("/{name} "),
                )
            })
            .collect();
        rows.extend(state.session_commands.iter().map(|command| {
            (
                format!("/{}", command.name),
                command.description.clone(),
                format!("/{} ", command.name),
            )
        }));
        let names: Vec<&str> = rows
            .iter()
            .map(|(_, _, replacement)| replacement.trim().trim_start_matches('/'))
            .collect();
        let order: Vec<usize> = if query.is_empty() {
            (0..rows.len()).collect()
        } else {
            fuzzy_filter(query, names.iter().copied())
        };
        let items: Vec<(String, String, String)> =
            order.into_iter().map(|index| rows[index].clone()).collect();
        (!items.is_empty()).then_some(Completion {
            kind: CompletionKind::Command,
            items,
            selected: 0,
        })
    } else if let Some(query) = token.strip_prefix('@') {
        let items: Vec<(String, String, String)> =
            fuzzy_filter(query, state.files.iter().map(String::as_str))
                .into_iter()
                .take(COMPLETION_LIMIT)
                .map(|index| {
                    let path = &state.files[index];
                    (path.clone(), String::new(), format!("@{path} "))
                })
                .collect();
        (!items.is_empty()).then_some(Completion {
            kind: CompletionKind::File,
            items,
            selected: 0,
        })
    } else {
        None
    };
}

/// The status line while `/share` works (cleared by its outcome).
pub(super) const SHARING: &str = "Sharing the session…";

/// Tab on a word that is neither `@file` nor a command: pi's path completion, from the
/// working directory's files (a path starting with the word; one match is put in at once).
/// Without a match it asks for the file list again (files appear while the TUI runs) and
/// tries once more when it arrives.
pub(super) fn complete_path(state: &mut State, effects: &mut Vec<Effect>) {
    let (_, token) = state.editor.token_at_cursor();
    if token.is_empty() || token.starts_with('@') {
        return;
    }
    let retried = state.path_completion_pending.take().as_deref() == Some(token);
    let token = token.to_owned();
    let matches: Vec<&String> = state
        .files
        .iter()
        .filter(|path| path.starts_with(token.as_str()) && path.as_str() != token)
        .take(COMPLETION_LIMIT)
        .collect();
    if !matches.is_empty() {
        // Files appear while the TUI runs (the agent's, another shell's): the next Tab sees
        // them.
        effects.push(Effect::ListFiles);
    }
    match matches.as_slice() {
        [] if !retried => {
            state.path_completion_pending = Some(token.clone());
            effects.push(Effect::ListFiles);
        }
        [] => state.status = Some(format!("No file starts with {token}")),
        [only] => {
            let replacement = format!("{only} ");
            state.editor.replace_token(&replacement);
        }
        many => {
            let items = many
                .iter()
                .map(|path| ((*path).clone(), String::new(), format!("{path} ")))
                .collect();
            state.completion = Some(Completion {
                kind: CompletionKind::File,
                items,
                selected: 0,
            });
        }
    }
}

/// `/mcp` lists the servers (this session's first); `/mcp restart NAME`, `/mcp enable NAME`
/// and `/mcp disable NAME` act on one.
fn mcp(state: &mut State, args: &str, effects: &mut Vec<Effect>) {
    let mut words = args.split_whitespace();
    match (words.next(), words.next()) {
        (None, _) => {
            state.overlay = Some(Overlay::Info {
                title: "MCP servers".to_owned(),
                lines: mcp_lines(state),
            });
        }
        (Some("restart"), Some(name)) => {
            effects.push(Effect::Request(Request::McpRestart(name.to_owned())));
        }
        (Some(action @ ("enable" | "disable")), Some(name)) => {
            effects.push(Effect::Request(Request::McpSetEnabled {
                name: name.to_owned(),
                enabled: action == "enable",
            }));
        }
        _ => {
            state.status = Some(
                "Usage: /mcp, /mcp restart NAME, /mcp enable NAME, /mcp disable NAME".to_owned(),
            );
        }
    }
}

/// The servers as `/mcp` shows them: this session's first, then the daemon's others.
pub(crate) fn mcp_lines(state: &State) -> Vec<String> {
    let session = state.session.as_ref().map(|session| session.id.as_str());
    let uses = |server: &pi_protocol::v1::McpServerStatus| {
        session.is_some_and(|id| server.sessions.iter().any(|user| user == id))
    };
    let mut lines = Vec::new();
    for (heading, ours) in [("This session", true), ("Other sessions", false)] {
        let servers: Vec<&pi_protocol::v1::McpServerStatus> = state
            .mcp_servers
            .iter()
            .filter(|server| uses(server) == ours)
            .collect();
        if servers.is_empty() {
            continue;
        }
        if !lines.is_empty() {
            lines.push(String::new());
        }
        lines.push(format!("{heading}:"));
        for server in servers {
            let mut line = format!(
                "  {:<16} {:<8} {} tools · {} sessions",
                server.name,
                server.state,
                server.tools.len(),
                server.sessions.len()
            );
            if let Some(pid) = server.pid {
                line.push_str(&format!(" · pid {pid}"));
            }
            lines.push(line);
            if let Some(error) = server
                .last_error
                .as_ref()
                .filter(|_| server.state != "ready")
            {
                lines.push(format!("    {error}"));
            }
        }
    }
    if lines.is_empty() {
        lines.push("No MCP servers. Define them in mcp.json (see `pictl mcp list`).".to_owned());
    }
    lines
}

/// `/extensions` shows the extension host and this session's extensions (when the list
/// arrives); `/extensions restart` ends the host.
fn extensions(state: &mut State, args: &str, effects: &mut Vec<Effect>) {
    match args.trim() {
        "" => effects.push(Effect::Request(Request::ExtensionsList)),
        "restart" => effects.push(Effect::Request(Request::ExtensionsRestart)),
        _ => state.status = Some("Usage: /extensions, /extensions restart".to_owned()),
    }
}

/// The extension host and the session's extensions as `/extensions` shows them.
pub(crate) fn extensions_lines(list: &pi_protocol::v1::ExtensionsListResponse) -> Vec<String> {
    let host = &list.host;
    let mut lines = vec![format!(
        "  host {}{}",
        host.state,
        host.pid
            .map(|pid| format!(" · pid {pid}"))
            .unwrap_or_default()
    )];
    if let Some(error) = host.last_error.as_ref().filter(|_| host.state != "ready") {
        lines.push(format!("    {error}"));
    }
    let mut any = false;
    for session in &list.sessions {
        for extension in &session.extensions {
            any = true;
            let name = extension.path.rsplit('/').next().unwrap_or(&extension.path);
            let mut line = format!("  {name}");
            if !extension.tools.is_empty() {
                line.push_str(&format!(" · tools {}", extension.tools.join(", ")));
            }
            if !extension.handlers.is_empty() {
                line.push_str(&format!(" · on {}", extension.handlers.join(", ")));
            }
            lines.push(line);
        }
        for problem in &session.diagnostics {
            any = true;
            lines.push(format!("  ✗ {}: {}", problem.path, problem.error));
        }
        for skipped in &session.skipped {
            any = true;
            lines.push(format!("  – {}: {}", skipped.path, skipped.error));
        }
        if !session.models.is_empty() {
            lines.push(format!(
                "  models of its providers: {}",
                session.models.join(", ")
            ));
        }
    }
    if !any {
        lines.push(
            "  No extensions for this session; they load from ~/.pi/agent/extensions/ and \
             settings `extensions` and `packages`."
                .to_owned(),
        );
    }
    lines
}

/// `/lsp` lists the language servers (this session's first); `/lsp restart NAME` restarts one.
fn lsp(state: &mut State, args: &str, effects: &mut Vec<Effect>) {
    let mut words = args.split_whitespace();
    match (words.next(), words.next()) {
        (None, _) => {
            state.overlay = Some(Overlay::Info {
                title: "Language servers".to_owned(),
                lines: lsp_lines(state),
            });
        }
        (Some("restart"), Some(name)) => {
            effects.push(Effect::Request(Request::LspRestart(name.to_owned())));
        }
        _ => state.status = Some("Usage: /lsp, /lsp restart NAME".to_owned()),
    }
}

/// The language servers as `/lsp` shows them.
pub(crate) fn lsp_lines(state: &State) -> Vec<String> {
    let session = state.session.as_ref().map(|session| session.id.as_str());
    let mut servers: Vec<&pi_protocol::v1::LspServerStatus> = state.lsp_servers.iter().collect();
    // This session's first.
    servers.sort_by_key(|server| {
        !session.is_some_and(|id| server.sessions.iter().any(|user| user == id))
    });
    let mut lines: Vec<String> = Vec::new();
    for server in servers {
        let mut line = format!(
            "  {:<14} {:<8} {} open files · {} sessions",
            server.name,
            server.state,
            server.open_files,
            server.sessions.len()
        );
        if let Some(pid) = server.pid {
            line.push_str(&format!(" · pid {pid}"));
        }
        lines.push(line);
        lines.push(format!("    {}", server.root));
        if let Some(error) = server
            .last_error
            .as_ref()
            .filter(|_| server.state != "ready")
        {
            lines.push(format!("    {error}"));
        }
    }
    if lines.is_empty() {
        lines.push(
            "No language server has run yet; one starts when the `lsp` tool or a `write` needs it."
                .to_owned(),
        );
    }
    lines
}
