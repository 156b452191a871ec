//! Results of requests: fill selectors that were waiting, show outcomes.

use std::collections::HashMap;

use pi_protocol::v1::message::AgentMessage;
use pi_protocol::v1::{EntryRecord, SessionEntry, SessionInfo};

use crate::effect::{Effect, SwitchTo};
use crate::input::Reply;
use crate::overlay::{Overlay, Selector, SelectorItem, SelectorKind};
use crate::state::{State, TreeFilter, TreeView};
use crate::transcript::{NoticeLevel, user_text};

use super::commands;

pub(super) fn on_reply(state: &mut State, reply: Reply, effects: &mut Vec<Effect>) {
    match reply {
        Reply::Models(models) => {
            state.models = models;
            if waiting_for(state, SelectorKind::Model) {
                commands::open_model_selector(state, "", effects);
            }
        }
        Reply::Switch(target) => effects.push(Effect::Switch(target)),
        Reply::SettingSaved { key, file } => {
            state.status = Some(format!("Saved {key} in {file}."));
            effects.push(Effect::Request(crate::effect::Request::Settings));
        }
        Reply::Opened { session_id, status } => {
            state.status = Some(status);
            effects.push(Effect::Switch(crate::effect::SwitchTo::Existing(
                session_id,
            )));
        }
        Reply::McpServers(servers) => state.mcp_servers = servers,
        Reply::LspServers(servers) => state.lsp_servers = servers,
        Reply::Extensions(list) => {
            state.overlay = Some(Overlay::Info {
                title: "Extensions".to_owned(),
                lines: commands::extensions_lines(&list),
            });
        }
        Reply::Pools { jobs, kernels } => {
            state.jobs = jobs;
            state.kernels = kernels;
        }
        Reply::Commands(session) => {
            state.session_commands = session.commands;
            state.shortcuts = session
                .shortcuts
                .into_iter()
                .filter_map(|shortcut| {
                    Some((crate::keymap::KeyChord::parse(&shortcut.key)?, shortcut.key))
                })
                .collect();
            state.loaded.context_files = session.context_files;
            state.todos = session.todos;
            state.plan_mode = session.plan_mode;
            state.loaded.extensions = session.extensions;
            commands::refresh_completion(state);
        }
        Reply::Settings(settings) => {
            if apply_settings(state, &settings) {
                effects.push(Effect::LoadTheme(state.theme_choice.clone()));
            }
            super::login::check_extra_usage(state, effects);
        }
        Reply::Sessions(sessions) => sessions_picked(state, sessions),
        Reply::Agents { parent, children } => agents_picked(state, parent, children),
        Reply::Tree {
            entries,
            leaf_id,
            for_fork,
        } => {
            let kind = if for_fork {
                SelectorKind::Fork
            } else {
                SelectorKind::Tree
            };
            if !waiting_for(state, kind) {
                return;
            }
            if entries.is_empty() {
                // pi says so rather than open an empty list that would catch the next keys.
                state.overlay = None;
                state.status = Some("Nothing in the session yet.".to_owned());
            } else if for_fork {
                let items = tree_items(
                    &entries,
                    leaf_id.as_deref(),
                    true,
                    TreeFilter::Default,
                    false,
                    &Default::default(),
                );
                state.overlay = Some(Overlay::Select(Selector::new(
                    kind,
                    "Fork from a message",
                    items,
                )));
            } else {
                // Read again after a label was set: the same filter and times.
                let (filter, label_times) = state
                    .tree_view
                    .as_ref()
                    .map_or((state.prefs.tree_filter, false), |tree| {
                        (tree.filter, tree.label_times)
                    });
                let folded = state
                    .tree_view
                    .as_ref()
                    .map(|tree| tree.folded.clone())
                    .unwrap_or_default();
                state.tree_view = Some(TreeView {
                    entries,
                    leaf_id,
                    filter,
                    label_times,
                    folded,
                });
                show_tree(state, None);
            }
        }
        Reply::Stats(stats) => show_stats(state, stats),
        Reply::History { query, entries } => history_found(state, query, entries),
        Reply::Navigated(navigated) => {
            if let Some(text) = navigated.text {
                state.editor.set_text(&text);
            }
        }
        Reply::Forked(forked) => {
            state.editor.set_text(&forked.text);
            effects.push(Effect::Switch(SwitchTo::Existing(forked.session.id)));
        }
        Reply::AuthProviders(providers) => {
            super::login::providers_listed(state, providers, effects);
        }
        Reply::LoggedIn { provider, path } => {
            super::login::logged_in_reply(state, &provider, &path, effects);
        }
        Reply::LoginFailed {
            provider,
            message,
            cancelled,
        } => super::login::login_failed_reply(state, &provider, &message, cancelled),
        Reply::LoggedOut { provider, removed } => {
            super::login::logged_out_reply(state, &provider, &removed, effects);
        }
        Reply::Done(message) => {
            if state.status.as_deref() == Some(super::commands::SHARING) {
                state.status = None;
            }
            state.transcript.notice(NoticeLevel::Info, message)
        }
        Reply::Warnings(warnings) => {
            for warning in warnings {
                state
                    .transcript
                    .notice(NoticeLevel::Warning, format!("Warning: {warning}"));
            }
        }
        Reply::Dequeued(queue) => {
            // Queued texts first, in order, then whatever the editor held.
            let mut texts: Vec<String> = queue.steering;
            texts.extend(queue.follow_up);
            if !texts.is_empty() {
                let before = state.editor.text();
                if !before.trim().is_empty() {
                    texts.push(before.clone());
                }
                state.editor.set_text(&texts.join("\n\n"));
                effects.push(Effect::Draft(state.editor.text()));
            }
        }
        Reply::BashFinished => {
            state.bash_running = false;
            state.status = None;
            effects.push(Effect::ListFiles);
        }
        Reply::Failed { action, message } => {
            state.bash_running = false;
            if state.status.as_deref() == Some(super::commands::SHARING) {
                state.status = None;
            }
            if matches!(state.overlay, Some(Overlay::Loading { .. })) {
                state.overlay = None;
            }
            state.status = None;
            state
                .transcript
                .notice(NoticeLevel::Error, format!("Could not {action}: {message}"));
        }
    }
}

/// The session picker, filled.
fn sessions_picked(state: &mut State, sessions: Vec<SessionInfo>) {
    if !waiting_for(state, SelectorKind::Session) {
        return;
    }
    let picker = state.session_picker.get_or_insert_with(Default::default);
    picker.sessions = sessions;
    picker.confirming_delete = None;
    show_sessions(state, None);
}

/// The `/resume` picker drawn from [`State::session_picker`], keeping the query and the
/// highlighted session of `previous`.
pub(super) fn show_sessions(state: &mut State, previous: Option<&Selector>) {
    let Some(picker) = &state.session_picker else {
        return;
    };
    let current = state.session.as_ref().map(|session| session.id.clone());
    let title_of = |session: &SessionInfo| {
        session
            .name
            .clone()
            .or(session.first_message.clone())
            .unwrap_or_else(|| "(empty)".to_owned())
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned()
    };
    let mut sessions: Vec<&SessionInfo> = picker
        .sessions
        .iter()
        .filter(|session| !picker.named_only || session.name.is_some())
        .collect();
    if picker.by_name {
        sessions.sort_by_key(|session| title_of(session).to_lowercase());
    }
    let items = sessions
        .into_iter()
        .cloned()
        .map(|session| SelectorItem {
            detail: format!(
                "{}{} messages{}",
                if picker.confirming_delete.as_deref() == Some(session.id.as_str()) {
                    "DELETE? · "
                } else {
                    ""
                },
                session.message_count,
                if session.status == pi_protocol::v1::SessionStatus::Running {
                    " · running".to_owned()
                } else if session.id.starts_with(crate::state::PI_FILE_PREFIX) {
                    " · pi's file".to_owned()
                } else if picker.show_path {
                    format!(" · {}", session.cwd)
                } else {
                    String::new()
                }
            ),
            label: title_of(&session),
            current: current.as_deref() == Some(session.id.as_str()),
            value: session.id,
            indent: String::new(),
            on_path: false,
        })
        .collect();
    let mut flags = Vec::new();
    if picker.named_only {
        flags.push("named");
    }
    if picker.by_name {
        flags.push("by name");
    }
    let title = if picker.confirming_delete.is_some() {
        "Delete session? enter confirm · esc cancel".to_owned()
    } else {
        format!(
            "Resume a session{}",
            if flags.is_empty() {
                String::new()
            } else {
                format!(" [{}]", flags.join(", "))
            }
        )
    };
    let mut selector = Selector::new(SelectorKind::Session, title, items);
    if let Some(previous) = previous {
        let highlighted = previous.selected().map(|item| item.value.clone());
        selector.set_query(previous.query.clone());
        if let Some(value) = highlighted {
            selector.select_value(&value);
        }
    }
    state.overlay = Some(Overlay::Select(selector));
}

/// The subagents picker (and the parent), filled.
fn agents_picked(state: &mut State, parent: Option<Box<SessionInfo>>, children: Vec<SessionInfo>) {
    if !waiting_for(state, SelectorKind::Session) {
        return;
    }
    // Not `/resume`'s list: its keys (rename, delete) do not apply here.
    state.session_picker = None;
    if parent.is_none() && children.is_empty() {
        state.overlay = None;
        state.status = Some("This session has started no subagents.".to_owned());
        return;
    }
    let status = |session: &SessionInfo| {
        if session.status == pi_protocol::v1::SessionStatus::Running {
            "running"
        } else {
            "idle"
        }
    };
    let mut items = Vec::new();
    if let Some(parent) = parent {
        items.push(SelectorItem {
            label: format!(
                "↑ {} (parent)",
                parent
                    .task_name
                    .clone()
                    .or(parent.name.clone())
                    .unwrap_or_else(|| parent.id.chars().take(8).collect())
            ),
            detail: format!("{} messages · {}", parent.message_count, status(&parent)),
            current: false,
            value: parent.id.clone(),
            indent: String::new(),
            on_path: false,
        });
    }
    let last = children.len().saturating_sub(1);
    for (position, child) in children.into_iter().enumerate() {
        items.push(SelectorItem {
            label: child
                .task_name
                .clone()
                .or(child.name.clone())
                .unwrap_or_else(|| child.id.chars().take(8).collect()),
            detail: format!("{} messages · {}", child.message_count, status(&child)),
            current: false,
            value: child.id,
            indent: if position == last {
                "└─ "
            } else {
                "├─ "
            }
            .to_owned(),
            on_path: false,
        });
    }
    state.overlay = Some(Overlay::Select(Selector::new(
        SelectorKind::Session,
        "Subagents",
        items,
    )));
}

/// `/session`: the session and its totals.
fn show_stats(state: &mut State, stats: pi_protocol::v1::SessionStatsResponse) {
    let mut lines = Vec::new();
    if let Some(session) = &state.session {
        lines.push(format!("Session   {}", session.id));
        if let Some(name) = &session.name {
            lines.push(format!("Name      {name}"));
        }
        lines.push(format!("Directory {}", session.cwd));
        if let Some(model) = &session.model {
            lines.push(format!("Model     {}/{}", model.provider, model.id));
        }
        lines.push(format!("Thinking  {}", session.thinking_level));
    }
    lines.push(format!(
        "Messages  {} ({} user, {} assistant, {} tool results)",
        stats.total_messages, stats.user_messages, stats.assistant_messages, stats.tool_results
    ));
    lines.push(format!("Tool calls {}", stats.tool_calls));
    lines.push(format!(
        "Tokens    {} in, {} out, {} cache read, {} cache write",
        stats.tokens.input, stats.tokens.output, stats.tokens.cache_read, stats.tokens.cache_write
    ));
    lines.push(format!("Cost      ${:.4}", stats.cost));
    lines.push(format!("Clients   {} attached", state.clients.len().max(1)));
    state.overlay = Some(Overlay::Info {
        title: "Session".to_owned(),
        lines,
    });
}

/// The prompt history the daemon found for `query`.
fn history_found(state: &mut State, query: String, entries: Vec<pi_protocol::v1::HistoryEntry>) {
    let texts: Vec<String> = entries.into_iter().map(|entry| entry.text).collect();
    if query.is_empty() && state.history.position.is_none() {
        state.history.entries = texts.clone();
    }
    if let Some(Overlay::Select(selector)) = &mut state.overlay
        && selector.kind == SelectorKind::History
        && selector.query == query
    {
        // The daemon already searched; keep its order rather than re-ranking.
        let mut fresh = Selector::new(
            SelectorKind::History,
            selector.title.clone(),
            commands::history_items(&texts),
        );
        fresh.query = query;
        *selector = fresh;
    }
}

/// Follows pi's settings the TUI reads: hidden thinking, the code block indent, the
/// interactive-mode keys and the theme (`--verbose`, `--theme` and `--no-themes` stay as the
/// command line gave them). True when another theme is to be loaded.
pub fn apply_settings(state: &mut State, settings: &pi_protocol::v1::EffectiveSettings) -> bool {
    state.settings = Some(Box::new(settings.clone()));
    state.view.hide_thinking = settings.hide_thinking_block;
    if *state.view.code_indent != *settings.markdown.code_block_indent {
        state.view.code_indent = settings.markdown.code_block_indent.as_str().into();
    }
    state.prefs = crate::state::Preferences::from_settings(settings, state.environment.verbose);
    state.view.inline_images = state
        .environment
        .graphics
        .filter(|_| state.prefs.show_images)
        .map(|protocol| crate::state::InlineImages {
            protocol,
            width_cells: state.prefs.image_width_cells,
            cell: state.environment.cell,
        });
    let environment = &state.environment;
    let mut paths = environment.theme_paths.clone();
    if !environment.no_themes {
        paths.extend(settings.themes.iter().cloned());
    }
    let choice = crate::state::ThemeChoice {
        name: settings.theme.clone(),
        paths,
        discover: !environment.no_themes,
    };
    let changed = choice != state.theme_choice;
    state.theme_choice = choice;
    changed
}

/// Opens (or opens again, after a filter change) the `/tree` dialog over `state.tree_view`,
/// keeping the query and the highlighted entry of `previous`.
pub(super) fn show_tree(state: &mut State, previous: Option<&Selector>) {
    let Some(tree) = &state.tree_view else {
        return;
    };
    let items = tree_items(
        &tree.entries,
        tree.leaf_id.as_deref(),
        false,
        tree.filter,
        tree.label_times,
        &tree.folded,
    );
    let title = format!(
        "Session tree{} (Enter moves the leaf · ctrl+o filter)",
        tree.filter.tag()
    );
    let mut selector = Selector::new(SelectorKind::Tree, title, items);
    if let Some(previous) = previous {
        let highlighted = previous.selected().map(|item| item.value.clone());
        selector.set_query(previous.query.clone());
        if let Some(value) = highlighted {
            selector.select_value(&value);
        }
    }
    state.overlay = Some(Overlay::Select(selector));
}

/// pi's Ctrl+← / Ctrl+→ in `/tree`: folds the highlighted branch segment (a root or a fork's
/// child with entries after it), else moves to the segment's start above; unfolds a folded
/// one, else moves down to the next fork's first branch or the branch's end.
pub(super) fn tree_fold(state: &mut State, previous: &Selector, fold: bool) {
    let Some(tree) = &mut state.tree_view else {
        return;
    };
    let Some(selected) = previous.selected().map(|item| item.value.clone()) else {
        return;
    };
    let mut children: HashMap<&str, Vec<&str>> = HashMap::new();
    let mut parent: HashMap<&str, &str> = HashMap::new();
    for record in &tree.entries {
        let (id, parent_id) = ids(&record.entry);
        if let Some(parent_id) = parent_id {
            children.entry(parent_id).or_default().push(id);
            parent.insert(id, parent_id);
        }
    }
    let kids = |id: &str| children.get(id).map_or(0, Vec::len);
    let segment_start = |id: &str| parent.get(id).is_none_or(|up| kids(up) > 1);
    let mut target = None;
    if fold {
        if kids(&selected) > 0 && segment_start(&selected) && !tree.folded.contains(&selected) {
            tree.folded.insert(selected.clone());
        } else {
            // The first row shown of the segment above (hidden entries such as the
            // session's first model change cannot be highlighted).
            let shown: std::collections::HashSet<&str> = previous
                .items
                .iter()
                .map(|item| item.value.as_str())
                .collect();
            let mut at = selected.as_str();
            while let Some(&up) = parent.get(at) {
                at = up;
                if shown.contains(at) {
                    target = Some(at.to_owned());
                }
                if segment_start(at) && target.is_some() {
                    break;
                }
            }
        }
    } else if !tree.folded.remove(&selected) {
        // The first branch as drawn (the active one first), not the first created.
        let drawn: HashMap<&str, usize> = previous
            .items
            .iter()
            .enumerate()
            .map(|(position, item)| (item.value.as_str(), position))
            .collect();
        let mut at = selected.as_str();
        loop {
            match children.get(at).map(Vec::as_slice) {
                Some([only]) => at = only,
                Some(kids @ [_, _, ..]) => {
                    if let Some(first) = kids
                        .iter()
                        .min_by_key(|kid| drawn.get(**kid).copied().unwrap_or(usize::MAX))
                    {
                        at = first;
                    }
                    break;
                }
                _ => break,
            }
        }
        target = Some(at.to_owned());
    }
    show_tree(state, Some(previous));
    if let (Some(target), Some(Overlay::Select(selector))) = (target, &mut state.overlay) {
        selector.select_value(&target);
    }
}

fn waiting_for(state: &State, kind: SelectorKind) -> bool {
    matches!(&state.overlay, Some(Overlay::Loading { kind: waiting, .. }) if *waiting == kind)
}

/// Tree rows in depth-first order, drawn as pi's tree selector draws them: a linear stretch
/// stays flat, each fork's branches hang from `├─`/`└─` with `│` carrying on beside the
/// branches below, the active branch (the path to the leaf) comes first at every fork and is
/// marked, and the leaf — or, when the leaf is hidden, its nearest shown ancestor — is the
/// current row. `/fork` lists user messages; `/tree` the rows `filter` keeps: assistant
/// messages without text (tool calls only) are left out unless they failed or are the leaf.
pub(super) fn tree_items(
    entries: &[EntryRecord],
    leaf_id: Option<&str>,
    for_fork: bool,
    filter: TreeFilter,
    label_times: bool,
    folded: &std::collections::HashSet<String>,
) -> Vec<SelectorItem> {
    let mut children: HashMap<Option<&str>, Vec<usize>> = HashMap::new();
    let mut parent_of: HashMap<&str, Option<&str>> = HashMap::new();
    // Each entry's label and when it was set.
    let mut labels: HashMap<&str, (&str, &str)> = HashMap::new();
    for (index, record) in entries.iter().enumerate() {
        let (id, parent) = ids(&record.entry);
        children.entry(parent).or_default().push(index);
        parent_of.insert(id, parent);
        if let SessionEntry::Label {
            target_id,
            label,
            timestamp,
            ..
        } = &record.entry
        {
            match label {
                Some(label) => {
                    labels.insert(target_id.as_str(), (label.as_str(), timestamp.as_str()))
                }
                None => labels.remove(target_id.as_str()),
            };
        }
    }
    // The active branch: the leaf and its ancestors.
    let mut on_path = std::collections::HashSet::new();
    let mut at = leaf_id;
    while let Some(id) = at {
        if !on_path.insert(id) {
            break;
        }
        at = parent_of.get(id).copied().flatten();
    }
    for kids in children.values_mut() {
        // Stable: the active branch first, the others in creation order.
        kids.sort_by_key(|&kid| !on_path.contains(entries[kid].entry.id()));
    }
    let mut items = Vec::new();
    // (entry index, the lines drawn before its row, the fork connector it has not drawn yet
    // because an ancestor between it and the fork is hidden), depth-first.
    let mut stack: Vec<(usize, String, &'static str)> = Vec::new();
    push_children(&mut stack, children.get(&None), String::new());
    while let Some((index, lead, connector)) = stack.pop() {
        let entry = &entries[index].entry;
        let (id, _) = ids(entry);
        let labelled = labels.get(id).copied();
        let label = labelled.map(|(label, _)| label);
        let shown = if for_fork {
            is_user_message(entry)
        } else {
            (Some(id) == leaf_id || !is_bare_tool_call(entry)) && passes(entry, filter, label)
        };
        let (lead, connector) = if shown {
            let tag = match labelled {
                // pi's Shift+T: when the label was set, to the minute.
                Some((label, at)) if label_times => {
                    format!(
                        "[{label} · {}] ",
                        at.get(..16).unwrap_or(at).replace('T', " ")
                    )
                }
                Some((label, _)) => format!("[{label}] "),
                None => String::new(),
            };
            let fold = if folded.contains(id) { "⊞ " } else { "" };
            items.push(SelectorItem {
                // pi's order: the label before the text, so a long entry keeps it.
                label: format!("{fold}{tag}{}", describe(entry)),
                detail: String::new(),
                value: id.to_owned(),
                indent: format!("{lead}{connector}"),
                on_path: on_path.contains(id),
                current: Some(id) == leaf_id,
            });
            (format!("{lead}{}", continuation(connector)), "")
        } else {
            (lead, connector)
        };
        let Some(kids) = children.get(&Some(id)).filter(|_| !folded.contains(id)) else {
            continue;
        };
        if let [only] = kids.as_slice() {
            stack.push((*only, lead, connector));
        } else {
            let lead = format!("{lead}{}", continuation(connector));
            push_children(&mut stack, Some(kids), lead);
        }
    }
    // A hidden leaf (a label, a model change): its nearest shown ancestor is where we are.
    if !items.iter().any(|item| item.current) {
        let mut at = leaf_id;
        while let Some(id) = at {
            if let Some(item) = items.iter_mut().find(|item| item.value == id) {
                item.current = true;
                break;
            }
            at = parent_of.get(id).copied().flatten();
        }
    }
    items
}

/// Pushes the branches of a fork (or the roots) so the first pops first, each with its
/// connector.
fn push_children(
    stack: &mut Vec<(usize, String, &'static str)>,
    kids: Option<&Vec<usize>>,
    lead: String,
) {
    let kids = kids.map(Vec::as_slice).unwrap_or_default();
    let forked = kids.len() > 1;
    for (position, &kid) in kids.iter().enumerate().rev() {
        let connector = match (forked, position + 1 == kids.len()) {
            (false, _) => "",
            (true, false) => "├─ ",
            (true, true) => "└─ ",
        };
        stack.push((kid, lead.clone(), connector));
    }
}

/// What continues below a row drawn with `connector`, beside its descendants.
fn continuation(connector: &str) -> &'static str {
    match connector {
        "├─ " => "│  ",
        "└─ " => "   ",
        _ => "",
    }
}

/// Whether `filter` keeps `entry` (`label`: its label, if any).
fn passes(entry: &SessionEntry, filter: TreeFilter, label: Option<&str>) -> bool {
    // What pi's default view hides: settings and bookkeeping.
    let setting = matches!(
        entry,
        SessionEntry::Label { .. }
            | SessionEntry::Custom { .. }
            | SessionEntry::ModelChange { .. }
            | SessionEntry::ThinkingLevelChange { .. }
            | SessionEntry::SessionInfo { .. }
    );
    let tool_result = matches!(
        entry,
        SessionEntry::Message {
            message: AgentMessage::ToolResult(_),
            ..
        }
    );
    match filter {
        TreeFilter::Default => !setting,
        TreeFilter::NoTools => !setting && !tool_result,
        TreeFilter::UserOnly => is_user_message(entry),
        TreeFilter::LabeledOnly => label.is_some(),
        TreeFilter::All => true,
    }
}

/// An assistant message with tool calls and no text that ended normally.
fn is_bare_tool_call(entry: &SessionEntry) -> bool {
    let SessionEntry::Message {
        message: AgentMessage::Assistant(assistant),
        ..
    } = entry
    else {
        return false;
    };
    let has_text = crate::transcript::assistant_blocks(&assistant.content)
        .into_iter()
        .any(|block| matches!(block, crate::transcript::AssistantBlock::Text(text) if !text.trim().is_empty()));
    let ended_badly = matches!(
        assistant.stop_reason,
        pi_protocol::v1::message::StopReason::Error | pi_protocol::v1::message::StopReason::Aborted
    );
    !has_text && !ended_badly
}

fn ids(entry: &SessionEntry) -> (&str, Option<&str>) {
    (entry.id(), entry.parent_id())
}

fn is_user_message(entry: &SessionEntry) -> bool {
    matches!(
        entry,
        SessionEntry::Message {
            message: AgentMessage::User(_),
            ..
        }
    )
}

/// One line for a tree row.
fn describe(entry: &SessionEntry) -> String {
    let first_line = |text: &str| text.lines().next().unwrap_or_default().to_owned();
    match entry {
        SessionEntry::Message { message, .. } => match message {
            AgentMessage::User(user) => {
                format!("user: {}", first_line(&user_text(&user.content)))
            }
            AgentMessage::Assistant(assistant) => {
                let text = crate::transcript::assistant_blocks(&assistant.content)
                    .into_iter()
                    .find_map(|block| match block {
                        crate::transcript::AssistantBlock::Text(text) => Some(text),
                        crate::transcript::AssistantBlock::Thinking(_) => None,
                    });
                let calls = assistant
                    .content
                    .iter()
                    .filter(|block| {
                        matches!(
                            block,
                            pi_protocol::v1::message::AssistantContent::ToolCall(_)
                        )
                    })
                    .count();
                match (text, calls) {
                    (Some(text), _) => format!("assistant: {}", first_line(&text)),
                    (None, 0) => "assistant: (no text)".to_owned(),
                    (None, calls) => format!("assistant: {calls} tool call(s)"),
                }
            }
            AgentMessage::ToolResult(result) => format!(
                "{}: {}",
                result.tool_name,
                first_line(&user_text(&result.content))
            ),
            AgentMessage::BashExecution(bash) => format!(
                "{}{}",
                if bash.exclude_from_context { "!!" } else { "!" },
                first_line(&bash.command)
            ),
            AgentMessage::Custom(custom) => format!("[{}]", custom.custom_type),
            AgentMessage::BranchSummary(_) => "branch summary".to_owned(),
            AgentMessage::CompactionSummary(_) => "compaction".to_owned(),
        },
        SessionEntry::Compaction { .. } => "compaction".to_owned(),
        SessionEntry::BranchSummary { .. } => "branch summary".to_owned(),
        SessionEntry::ModelChange {
            provider, model_id, ..
        } => format!("model: {provider}/{model_id}"),
        SessionEntry::ThinkingLevelChange { thinking_level, .. } => {
            format!("thinking: {thinking_level}")
        }
        SessionEntry::Custom { custom_type, .. } => format!("[custom: {custom_type}]"),
        SessionEntry::CustomMessage {
            custom_type,
            content,
            ..
        } => format!("[{custom_type}]: {}", first_line(&user_text(content))),
        SessionEntry::Label { label, .. } => match label {
            Some(label) => format!("label: {label}"),
            None => "label cleared".to_owned(),
        },
        SessionEntry::SessionInfo { name, .. } => {
            format!("name: {}", name.as_deref().unwrap_or_default())
        }
    }
}
