//! Execution of one assistant message's tool calls (pi's pipeline, §4.8 of the spec): find the
//! tool, validate the arguments, run the calls (in parallel up to a cap, or one by one), and
//! report results in call order.
//!
//! Event order: every `tool_execution_start` first, in call order (immediate failures — unknown
//! tool, invalid arguments — also emit their `tool_execution_end` there); then, in call order
//! as each call and all calls before it finish, `tool_execution_end` and the tool result's
//! `message_start`/`message_end`. A steering message skips the calls not started yet; an abort
//! cancels running calls and skips the rest.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt as _;
use pi_llm::{ToolCall, ToolResultMessage};
use serde_json::Value;
use tokio::sync::{Semaphore, oneshot};

use crate::event::AgentEvent;
use crate::message::AgentMessage;
use crate::run::{RunConfig, RunHandles, ToolExecution, tool_result_message};
use crate::tool::{ProgressSink, Tool, ToolInvocation, ToolOutput};
use crate::validate::validate_arguments;

/// The text of a call skipped because a steering message arrived.
pub const SKIPPED_FOR_STEERING: &str = "Skipped due to queued user message.";
/// The text of a call that never ran because the run was aborted.
pub const ABORTED: &str = "Operation aborted";
/// Least time between two `tool_execution_update` events of one call.
const UPDATE_INTERVAL: Duration = Duration::from_millis(100);

enum Prepared {
    Ready(Arc<dyn Tool>, Value),
    Failed,
}

/// Runs `calls`, emitting tool events and tool result messages; returns the results in call
/// order.
pub(crate) async fn execute_tool_calls(
    config: &RunConfig,
    handles: &RunHandles,
    calls: Vec<ToolCall>,
) -> Vec<ToolResultMessage> {
    let emit = |event: AgentEvent| async {
        if handles.events.send(event).await.is_err() {
            handles.cancel.cancel();
        }
    };

    // Start phase: announce every call, resolve and validate.
    let mut prepared = Vec::with_capacity(calls.len());
    let mut senders = Vec::with_capacity(calls.len());
    let mut receivers = Vec::with_capacity(calls.len());
    let mut reported_at_start = Vec::with_capacity(calls.len());
    for call in &calls {
        emit(AgentEvent::ToolExecutionStart {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            args: call.arguments.clone(),
        })
        .await;
        let (sender, receiver) = oneshot::channel::<ToolOutput>();
        let resolved = match config.tools.iter().find(|tool| tool.name() == call.name) {
            None => Err(ToolOutput::error(format!("Tool {} not found", call.name))),
            Some(tool) => {
                match validate_arguments(&call.name, tool.parameters(), &call.arguments) {
                    Ok(arguments) => Ok(Prepared::Ready(tool.clone(), arguments)),
                    Err(message) => Err(ToolOutput::error(message)),
                }
            }
        };
        match resolved {
            Ok(ready) => {
                prepared.push(ready);
                senders.push(Some(sender));
                reported_at_start.push(false);
            }
            Err(output) => {
                emit(AgentEvent::ToolExecutionEnd {
                    tool_call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    result: output.clone(),
                })
                .await;
                let _ = sender.send(output);
                prepared.push(Prepared::Failed);
                senders.push(None);
                reported_at_start.push(true);
            }
        }
        receivers.push(receiver);
    }

    // Execution phase: start calls in order as the concurrency cap allows.
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
                Some(reason) => {
                    let _ = sender.send(ToolOutput::error(reason));
                    continue;
                }
                None => match permits.clone().try_acquire_owned() {
                    Ok(permit) => permit,
                    Err(_) => {
                        let _ = sender.send(ToolOutput::error(ABORTED));
                        continue;
                    }
                },
            };
            let invocation_events = handles.events.clone();
            let cancel = handles.cancel.child_token();
            let (call_id, tool_name, raw_args) =
                (call.id.clone(), call.name.clone(), call.arguments.clone());
            tokio::spawn(async move {
                let (progress, mut updates) = ProgressSink::new();
                let forward_events = invocation_events.clone();
                let (forward_id, forward_name) = (call_id.clone(), tool_name.clone());
                let forwarder = tokio::spawn(async move {
                    while updates.changed().await.is_ok() {
                        let partial = updates.borrow_and_update().clone();
                        if let Some(partial_result) = partial {
                            let event = AgentEvent::ToolExecutionUpdate {
                                tool_call_id: forward_id.clone(),
                                tool_name: forward_name.clone(),
                                args: raw_args.clone(),
                                partial_result,
                            };
                            if forward_events.send(event).await.is_err() {
                                return;
                            }
                        }
                        tokio::time::sleep(UPDATE_INTERVAL).await;
                    }
                });
                let invocation = ToolInvocation {
                    call_id: call_id.clone(),
                    arguments,
                    cancel,
                    progress,
                };
                let output = AssertUnwindSafe(tool.execute(invocation))
                    .catch_unwind()
                    .await
                    .unwrap_or_else(|_| {
                        tracing::error!(tool = tool_name, call_id, "tool panicked");
                        ToolOutput::error(format!("Tool {tool_name} failed with an internal error"))
                    });
                forwarder.abort();
                let _ = forwarder.await;
                drop(permit);
                let _ = sender.send(output);
            });
        }
    };

    // Finalization: report in call order as results become available.
    let finalize = async {
        let mut results = Vec::with_capacity(calls.len());
        for ((call, receiver), already_reported) in
            calls.iter().zip(receivers).zip(reported_at_start)
        {
            let output = receiver
                .await
                .unwrap_or_else(|_| ToolOutput::error(ABORTED));
            if !already_reported {
                emit(AgentEvent::ToolExecutionEnd {
                    tool_call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    result: output.clone(),
                })
                .await;
            }
            let result = tool_result_message(call, output);
            let message = AgentMessage::ToolResult(result.clone());
            emit(AgentEvent::MessageStart {
                message: message.clone(),
            })
            .await;
            emit(AgentEvent::MessageEnd { message }).await;
            results.push(result);
        }
        results
    };
    let ((), results) = tokio::join!(schedule, finalize);
    results
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
