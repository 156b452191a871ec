//! Attach results and session events: rebuilding the transcript from history, continuing it
//! from a replay, and applying live events in `seq` order without repeats.

use pi_protocol::v1::message::AgentMessage;
use pi_protocol::v1::{
    CompactionReason, SessionEntry, SessionEvent, SessionEventParams, SessionStatus,
};

use crate::effect::{Effect, Request, SwitchTo};
use crate::input::Attachment;
use crate::state::{Connection, State, UsageTotals};
use crate::transcript::{NoticeLevel, ToolStatus};

/// The status shown between Esc and the end of the run.
pub(super) const ABORTING: &str = "Aborting…";

pub(super) fn on_attached(state: &mut State, attachment: Attachment, effects: &mut Vec<Effect>) {
    let Attachment {
        connection_id,
        response,
        history,
    } = attachment;
    let snapshot = response.snapshot;
    let same_session = state
        .session
        .as_ref()
        .is_some_and(|session| session.id == snapshot.info.id);
    state.environment.connection_id = connection_id;
    // Live-only state from before is stale either way: the snapshot replaces it.
    state.transcript.stop_streaming();
    match history {
        Some(entries) => {
            state.transcript.clear();
            state.usage = UsageTotals::default();
            for record in entries
                .iter()
                .filter(|record| record.seq <= snapshot.info.last_seq)
            {
                if let SessionEntry::Message {
                    message: AgentMessage::Assistant(assistant),
                    ..
                } = &record.entry
                {
                    state.count_usage(&assistant.usage, assistant.stop_reason);
                }
                state.transcript.push_entry(&record.entry);
            }
            state.leaf_id = snapshot.info.leaf_id.clone();
            // Shown once per load of the session, after its history.
            for warning in &snapshot.info.warnings {
                state.transcript.notice(
                    crate::transcript::NoticeLevel::Warning,
                    format!("Warning: {warning}"),
                );
            }
            for warning in std::mem::take(&mut state.startup_warnings) {
                state
                    .transcript
                    .notice(crate::transcript::NoticeLevel::Warning, warning);
            }
        }
        None => {
            for event in response.replay {
                apply(state, event, effects);
            }
            if same_session && state.leaf_id != snapshot.info.leaf_id {
                // Someone navigated while we were away: the branch shown is not the
                // session's any more. Start over from the stored branch.
                effects.push(Effect::Switch(SwitchTo::Existing(snapshot.info.id.clone())));
            }
        }
    }
    if !same_session {
        state.history.position = None;
        state.view.scroll_from_bottom = 0;
    }
    state.durable_seq = snapshot.info.last_seq;
    state.running = snapshot.info.status == SessionStatus::Running;
    if let Some(partial) = snapshot.streaming_message {
        state.transcript.start_streaming(partial);
    }
    for tool in &snapshot.running_tools {
        state.transcript.tool_progress(
            &tool.tool_call_id,
            &tool.tool_name,
            Some(&tool.args),
            ToolStatus::Running,
            tool.partial_result.as_ref(),
        );
    }
    state.queue = snapshot.queue;
    state.clients = snapshot.clients;
    state.session = Some(snapshot.info);
    state.connection = Connection::Live;
    super::login::check_extra_usage(state, effects);
    if state.models.is_empty() {
        effects.push(Effect::Request(Request::ListModels));
    }
    if state.files.is_empty() {
        effects.push(Effect::ListFiles);
    }
    effects.push(Effect::Request(Request::ListCommands));
    effects.push(Effect::Request(Request::McpList));
    effects.push(Effect::Request(Request::LspList));
    effects.push(Effect::Request(Request::Pools));
    // Questions of other sessions are not ours any more (this one's came with the attach).
    let attached = state.session.as_ref().map(|session| session.id.clone());
    state
        .questions
        .retain(|question| Some(&question.session_id) == attached.as_ref());
    if let Some(crate::overlay::Overlay::Question(question)) = &state.overlay
        && Some(&question.request.session_id) != attached.as_ref()
    {
        state.overlay = None;
    }
    if state.history.entries.is_empty() {
        effects.push(Effect::Request(Request::SearchHistory(String::new())));
    }
}

pub(super) fn on_event(state: &mut State, params: SessionEventParams, effects: &mut Vec<Effect>) {
    let Some(session) = &state.session else {
        return;
    };
    // Events of a session we left, and events the snapshot already reflects, are dropped.
    if session.id != params.session_id || params.seq <= session.last_seq {
        return;
    }
    apply(state, params, effects);
}

fn apply(state: &mut State, params: SessionEventParams, effects: &mut Vec<Effect>) {
    let seq = params.seq;
    if let Some(session) = &mut state.session {
        session.last_seq = session.last_seq.max(seq);
    }
    match params.event {
        SessionEvent::AgentStart => {
            state.running = true;
            state.retry_pending = false;
        }
        SessionEvent::AgentEnd { .. } => {
            state.running = false;
            state.tools_wait = None;
            // The run may have written files: completion offers them.
            effects.push(Effect::ListFiles);
            // Extensions may have loaded or registered commands and keys meanwhile.
            effects.push(Effect::Request(Request::ListCommands));
            // Jobs may have ended meanwhile: refresh what the footer shows.
            if !state.jobs.is_empty() || !state.kernels.is_empty() {
                effects.push(Effect::Request(Request::Pools));
            }
            if state.status.as_deref() == Some(ABORTING) {
                state.status = None;
            }
            state.transcript.stop_streaming();
            state.transcript.fail_unfinished_tools();
        }
        SessionEvent::TurnStart | SessionEvent::TurnEnd { .. } => {}
        SessionEvent::MessageStart { message } => {
            if let AgentMessage::Assistant(partial) = message {
                state.transcript.start_streaming(partial);
            }
        }
        SessionEvent::MessageUpdate {
            assistant_message_event,
        } => state.transcript.apply_delta(&assistant_message_event),
        SessionEvent::MessageEnd { message, entry_id } => {
            if let AgentMessage::Assistant(assistant) = &message {
                state.transcript.stop_streaming();
                state.count_usage(&assistant.usage, assistant.stop_reason);
            }
            state.transcript.push_message(&message, entry_id.clone());
            if let Some(entry_id) = entry_id {
                state.durable_seq = seq;
                state.leaf_id = Some(entry_id);
            }
        }
        SessionEvent::ToolExecutionStart {
            tool_call_id,
            tool_name,
            args,
        } => state.transcript.tool_progress(
            &tool_call_id,
            &tool_name,
            Some(&args),
            ToolStatus::Running,
            None,
        ),
        SessionEvent::ToolExecutionUpdate {
            tool_call_id,
            tool_name,
            args,
            partial_result,
        } => state.transcript.tool_progress(
            &tool_call_id,
            &tool_name,
            Some(&args),
            ToolStatus::Running,
            Some(&partial_result),
        ),
        SessionEvent::ToolExecutionEnd {
            tool_call_id,
            tool_name,
            result,
            is_error,
        } => {
            // A job started (bash's `jobId`), managed, or a kernel used: the footer's counts.
            let started_job = result
                .details
                .as_ref()
                .is_some_and(|details| details.get("jobId").is_some());
            if started_job || matches!(tool_name.as_str(), "job" | "python") {
                effects.push(Effect::Request(Request::Pools));
            }
            state.transcript.tool_progress(
                &tool_call_id,
                &tool_name,
                None,
                if is_error {
                    ToolStatus::Failed
                } else {
                    ToolStatus::Done
                },
                Some(&result),
            );
        }
        SessionEvent::QueueUpdate {
            steering,
            follow_up,
        } => {
            state.queue.steering = steering;
            state.queue.follow_up = follow_up;
        }
        SessionEvent::EntryAdded { entry } => {
            // An entry that does not continue the branch shown (a branch summary written
            // where a navigation lands): the branch changed, rebuild it.
            if entry.parent_id() != state.leaf_id.as_deref()
                && let Some(session) = &state.session
            {
                state.durable_seq = seq;
                state.leaf_id = Some(entry_id(&entry).to_owned());
                effects.push(Effect::Switch(SwitchTo::Existing(session.id.clone())));
                return;
            }
            state.transcript.push_entry(&entry);
            state.durable_seq = seq;
            state.leaf_id = Some(entry_id(&entry).to_owned());
        }
        SessionEvent::LeafChanged { leaf_id } => {
            if leaf_id != state.leaf_id
                && let Some(session) = &state.session
            {
                // The branch changed under us: rebuild the transcript from the new one.
                effects.push(Effect::Switch(SwitchTo::Existing(session.id.clone())));
            }
        }
        SessionEvent::TodosUpdated { todos } => state.todos = todos,
        SessionEvent::PlanModeChanged { enabled } => {
            state.plan_mode = enabled;
            state.status = Some(if enabled {
                "Plan mode on: read-only until you approve a plan.".to_owned()
            } else {
                "Plan mode off.".to_owned()
            });
        }
        SessionEvent::SessionUpdated { info } => {
            state.running = info.status == SessionStatus::Running;
            let last_seq = state
                .session
                .as_ref()
                .map_or(info.last_seq, |session| session.last_seq.max(info.last_seq));
            state.session = Some(info);
            if let Some(session) = &mut state.session {
                session.last_seq = last_seq;
            }
            super::login::check_extra_usage(state, effects);
        }
        SessionEvent::AutoRetryStart {
            attempt,
            max_attempts,
            delay_ms,
            error_message,
        } => {
            state.retry_pending = true;
            state.transcript.notice(
                NoticeLevel::Warning,
                format!(
                    "↻ Retrying in {:.1}s (attempt {attempt} of {max_attempts}): {error_message}",
                    delay_ms as f64 / 1000.0
                ),
            );
        }
        SessionEvent::AutoRetryEnd {
            success,
            attempt,
            final_error,
        } => {
            state.retry_pending = false;
            if !success {
                let reason = final_error.unwrap_or_else(|| "no reply".to_owned());
                state.transcript.notice(
                    NoticeLevel::Error,
                    format!("Gave up retrying after attempt {attempt}: {reason}"),
                );
            }
        }
        SessionEvent::CompactionStart { reason } => {
            state.compacting = true;
            state.status = Some(match reason {
                CompactionReason::Manual => "Compacting the context… (esc to cancel)".to_owned(),
                CompactionReason::Threshold | CompactionReason::Overflow => {
                    "Compacting the context automatically… (esc to cancel)".to_owned()
                }
            });
        }
        SessionEvent::CompactionEnd {
            aborted,
            error_message,
            ..
        } => {
            state.compacting = false;
            state.status = None;
            if aborted {
                state
                    .transcript
                    .notice(NoticeLevel::Warning, "Compaction aborted.");
            } else if let Some(message) = error_message {
                state.transcript.notice(NoticeLevel::Error, message);
            }
        }
        SessionEvent::SessionError { message } => {
            state.transcript.notice(NoticeLevel::Error, message);
        }
        SessionEvent::ToolsWaitStart { sources, .. } => state.tools_wait = Some(sources),
        SessionEvent::ToolsWaitEnd { not_ready, aborted } => {
            state.tools_wait = None;
            if !aborted && !not_ready.is_empty() {
                state.transcript.notice(
                    NoticeLevel::Warning,
                    format!(
                        "MCP {} {} not ready; {} tools join a later turn once {} ready.",
                        if not_ready.len() == 1 {
                            "server"
                        } else {
                            "servers"
                        },
                        not_ready.join(", "),
                        if not_ready.len() == 1 { "its" } else { "their" },
                        if not_ready.len() == 1 {
                            "it is"
                        } else {
                            "they are"
                        },
                    ),
                );
            }
        }
    }
}

fn entry_id(entry: &SessionEntry) -> &str {
    match entry {
        SessionEntry::Message { id, .. }
        | SessionEntry::ThinkingLevelChange { id, .. }
        | SessionEntry::ModelChange { id, .. }
        | SessionEntry::Compaction { id, .. }
        | SessionEntry::BranchSummary { id, .. }
        | SessionEntry::Custom { id, .. }
        | SessionEntry::CustomMessage { id, .. }
        | SessionEntry::Label { id, .. }
        | SessionEntry::SessionInfo { id, .. } => id,
    }
}
