//! A stream whose request needs something awaited first (a fresh token): the events of the
//! stream the future gives, or one terminal error when it fails or the caller aborts.

use std::future::Future;

use crate::event::{AssistantStream, ErrorReason, StreamEvent, StreamSender};
use crate::failure::{Failure, FailureKind};
use crate::model::Model;
use crate::types::{AssistantMessage, StopReason};
use tokio_util::sync::CancellationToken;

/// Streams what `start` gives once it is ready; its error ends the stream as `kind`.
pub(crate) fn deferred(
    model: &Model,
    cancel: CancellationToken,
    kind: FailureKind,
    start: impl Future<Output = Result<AssistantStream, String>> + Send + 'static,
) -> AssistantStream {
    let (sender, stream) = AssistantStream::channel(model);
    let model = model.clone();
    tokio::spawn(async move {
        let started = tokio::select! {
            started = start => started,
            () = cancel.cancelled() => return aborted(&sender, &model).await,
        };
        let mut inner = match started {
            Ok(inner) => inner,
            Err(message) => return failed(&sender, &model, message, kind).await,
        };
        while let Some(event) = inner.next().await {
            if !sender.send(event).await {
                return;
            }
        }
    });
    stream
}

/// Ends a stream with an error of `kind` saying `message`.
pub(crate) async fn failed(
    sender: &StreamSender,
    model: &Model,
    message: String,
    kind: FailureKind,
) {
    let error = AssistantMessage {
        api: model.api.clone(),
        provider: model.provider.clone(),
        model: model.id.clone(),
        stop_reason: StopReason::Error,
        timestamp: pi_util::time::now_millis(),
        error_message: Some(message),
        failure: Some(Failure::new(kind)),
        ..AssistantMessage::default()
    };
    sender
        .send(StreamEvent::Error {
            reason: ErrorReason::Error,
            error: Box::new(error),
        })
        .await;
}

/// Ends a stream as aborted.
pub(crate) async fn aborted(sender: &StreamSender, model: &Model) {
    let error = AssistantMessage {
        api: model.api.clone(),
        provider: model.provider.clone(),
        model: model.id.clone(),
        stop_reason: StopReason::Aborted,
        timestamp: pi_util::time::now_millis(),
        error_message: Some(crate::assemble::ABORTED_MESSAGE.to_owned()),
        failure: Some(Failure::new(FailureKind::Aborted)),
        ..AssistantMessage::default()
    };
    sender
        .send(StreamEvent::Error {
            reason: ErrorReason::Aborted,
            error: Box::new(error),
        })
        .await;
}
