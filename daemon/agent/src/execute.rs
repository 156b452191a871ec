//! Execution of one assistant message's tool calls (pi's pipeline, §4.8 of the spec): find the
//! tool, validate the arguments, run the calls (in parallel up to a cap, or one by one), and
//! report results in call order.
//!
//! Event order (pi's): every `tool_execution_start` first, in call order (immediate failures —
//! unknown tool, invalid arguments — also emit their `tool_execution_end` there); then each
//! call's `tool_execution_update`s and `tool_execution_end` as it runs and finishes
//! (completion order); once all have finished, the tool results' `message_start`/`message_end`
//! in call order. A steering message skips the calls not started yet; an abort cancels
//! running calls and skips the rest.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt as _;
use pi_llm::{ToolCall, ToolResultMessage};
use serde_json::Value;
use tokio::sync::{Semaphore, oneshot};
use tokio_util::sync::CancellationToken;

use crate::config::{RunConfig, RunHandles, ToolExecution};
use crate::event::AgentEvent;
use crate::message::AgentMessage;
use crate::tool::{ProgressSink, Tool, ToolInvocation, ToolOutput};
use crate::validate::validate_arguments;

/// The text of a call skipped because a steering message arrived.
pub const SKIPPED_FOR_STEERING: &str = "Skipped due to queued user message.";
/// The text of a call that never ran because the run was aborted.
pub const ABORTED: &str = "Operation aborted";

enum Prepared {
    Ready(Arc<dyn Tool>, Value),
    Failed,
}

/// Runs `calls`, emitting tool events and tool result messages; returns the result messages
/// (each an [`AgentMessage::ToolResult`], the one its events carried) in call order, and
/// whether every result asked to end the run (pi's `terminate`). `reminders` (a stream
/// watcher's, by call id) come first in their call's result, as the model sees it.
pub(crate) async fn execute_tool_calls(
    config: &RunConfig,
    tools: &[Arc<dyn Tool>],
    handles: &RunHandles,
    calls: Vec<ToolCall>,
    reminders: &[(String, AgentMessage)],
) -> (Vec<Arc<AgentMessage>>, bool) {
    let emit = |event: AgentEvent| async {
        if handles.events.send(Box::new(event)).await.is_err() {
            handles.cancel.cancel();
        }
    };

    // Start phase: announce every call, resolve and validate.
    let mut prepared = Vec::with_capacity(calls.len());
    let mut senders = Vec::with_capacity(calls.len());
    let mut receivers = Vec::with_capacity(calls.len());
    for call in &calls {
        emit(AgentEvent::ToolExecutionStart {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            args: call.arguments.value().clone(),
        })
        .await;
        let (sender, receiver) = oneshot::channel::<ToolOutput>();
        let resolved = match tools.iter().find(|tool| tool.name() == call.name) {
            None => Err(ToolOutput::error(format!("Tool {} not found", call.name))),
            Some(tool) => {
                let arguments = tool.prepare_arguments(call.arguments.value().clone());
                match validate_arguments(&call.name, tool.parameters(), &arguments) {
                    Ok(arguments) => Ok(Prepared::Ready(tool.clone(), arguments)),
                    Err(message) => Err(ToolOutput::error(message)),
                }
            }
        };
        match resolved {
            Ok(ready) => {
                prepared.push(ready);
                senders.push(Some(sender));
            }
            Err(output) => {
                emit(end_event(call, &output)).await;
                let _ = sender.send(output);
                prepared.push(Prepared::Failed);
                senders.push(None);
            }
        }
        receivers.push(receiver);
    }

    // Execution phase: start calls in order as the concurrency cap allows. Each call reports
    // its end as soon as it finishes (pi's order: completion order).
    let limit = match config.tool_execution {
        ToolExecution::Sequential => 1,
        ToolExecution::Parallel { max_concurrency } => max_concurrency.max(1),
    };
    let permits = Arc::new(Semaphore::new(limit));
    let schedule = async {
        let mut stopped: Option<&'static str> = None;
        for ((call, prepared), sender) in calls.iter().zip(prepared).zip(senders) {
            let (Prepared::Ready(tool, arguments), Some(sender)) = (prepared, sender) else {
                continue;
            };
            if stopped.is_none() {
                stopped = wait_for_start(handles, &permits).await.err();
            }
            let permit = match stopped {
                Some(reason) => Err(reason),
                None => permits.clone().try_acquire_owned().map_err(|_| ABORTED),
            };
            let permit = match permit {
                Ok(permit) => permit,
                Err(reason) => {
                    let output = ToolOutput::error(reason);
                    emit(end_event(call, &output)).await;
                    let _ = sender.send(output);
                    continue;
                }
            };
            let events = handles.events.clone();
            let cancel = handles.cancel.child_token();
            let call = call.clone();
            tokio::spawn(async move {
                let (progress, mut updates) = ProgressSink::new();
                let finished = CancellationToken::new();
                let forwarder = {
                    let (events, finished, call) = (events.clone(), finished.clone(), call.clone());
                    tokio::spawn(async move {
                        // Every update, in order; once the call has finished, the ones still
                        // queued, then stop (a tool may keep a clone of its sink).
                        loop {
                            let partial = tokio::select! {
                                biased;
                                partial = updates.recv() => partial,
                                () = finished.cancelled() => updates.try_recv(),
                            };
                            let Some(partial_result) = partial else {
                                return;
                            };
                            let event = AgentEvent::ToolExecutionUpdate {
                                tool_call_id: call.id.clone(),
                                tool_name: call.name.clone(),
                                args: call.arguments.value().clone(),
                                partial_result,
                            };
                            if events.send(Box::new(event)).await.is_err() {
                                return;
                            }
                        }
                    })
                };
                let invocation = ToolInvocation {
                    call_id: call.id.clone(),
                    arguments,
                    cancel,
                    progress,
                };
                let output = AssertUnwindSafe(tool.execute(invocation))
                    .catch_unwind()
                    .await
                    .unwrap_or_else(|_| {
                        tracing::error!(tool = call.name, call_id = call.id, "tool panicked");
                        ToolOutput::error(format!(
                            "Tool {} failed with an internal error",
                            call.name
                        ))
                    });
                finished.cancel();
                let _ = forwarder.await;
                drop(permit);
                let _ = events.send(Box::new(end_event(&call, &output))).await;
                let _ = sender.send(output);
            });
        }
    };

    // Finalization: once every call has finished, the tool result messages in call order.
    let finalize = async {
        let mut outputs = Vec::with_capacity(calls.len());
        for (call, receiver) in calls.iter().zip(receivers) {
            let output = match receiver.await {
                Ok(output) => output,
                // The call's task ended without an answer (the runtime is shutting down).
                Err(_) => {
                    let output = ToolOutput::error(ABORTED);
                    emit(end_event(call, &output)).await;
                    output
                }
            };
            outputs.push(output);
        }
        let terminate = !outputs.is_empty() && outputs.iter().all(|output| output.terminate);
        let mut results = Vec::with_capacity(calls.len());
        for (call, output) in calls.iter().zip(outputs) {
            let mut result = tool_result_message(call, output);
            let before: Vec<_> = reminders
                .iter()
                .filter(|(id, _)| *id == call.id)
                .filter_map(|(_, reminder)| match reminder {
                    AgentMessage::Custom(custom) => Some(custom.content.iter().cloned()),
                    _ => None,
                })
                .flatten()
                .collect();
            if !before.is_empty() {
                result.content.splice(0..0, before);
            }
            let message = Arc::new(AgentMessage::ToolResult(result));
            emit(AgentEvent::MessageStart {
                message: message.clone(),
            })
            .await;
            emit(AgentEvent::MessageEnd {
                message: message.clone(),
            })
            .await;
            results.push(message);
        }
        (results, terminate)
    };
    let ((), results) = tokio::join!(schedule, finalize);
    results
}

/// The `tool_execution_end` of `call`.
fn end_event(call: &ToolCall, output: &ToolOutput) -> AgentEvent {
    AgentEvent::ToolExecutionEnd {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        result: output.clone(),
    }
}

/// Waits until a call may start. `Err` with the result text when it must not: a steering
/// message is queued, or the run was aborted.
async fn wait_for_start(
    handles: &RunHandles,
    permits: &Arc<Semaphore>,
) -> Result<(), &'static str> {
    loop {
        if handles.cancel.is_cancelled() {
            return Err(ABORTED);
        }
        if handles.queues.has_steering() {
            return Err(SKIPPED_FOR_STEERING);
        }
        if permits.available_permits() > 0 {
            return Ok(());
        }
        tokio::select! {
            permit = permits.acquire() => drop(permit),
            _ = handles.queues.steering_pushed() => {}
            _ = handles.cancel.cancelled() => {}
        }
    }
}

/// A tool result message for a call.
pub(crate) fn tool_result_message(
    call: &ToolCall,
    output: crate::tool::ToolOutput,
) -> ToolResultMessage {
    let details = output.reported_details();
    ToolResultMessage {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        content: output.content,
        details,
        is_error: output.is_error,
        timestamp: pi_util::time::now_millis(),
    }
}
