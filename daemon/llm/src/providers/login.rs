//! Streaming with a subscription login as the key: the token is made fresh before the
//! request, Copilot's API address follows its token, and a 401 before anything streamed gets
//! one refresh and one retry.

use std::sync::Arc;

use super::deferred::{aborted, failed};
use crate::auth::OAuthCredential;
use crate::event::{AssistantStream, StreamEvent};
use crate::failure::FailureKind;
use crate::model::Model;
use crate::oauth::LoginRef;
use crate::oauth::copilot::{INDIVIDUAL_API, copilot_base_url};
use crate::provider::{ApiKey, Context, Provider, StreamOptions};
use crate::types::AssistantMessage;

/// Streams `model` through `inner` with `login`'s token.
pub(crate) fn stream_with_login(
    inner: Arc<dyn Provider>,
    login: LoginRef,
    model: &Model,
    context: &Context,
    options: StreamOptions,
) -> AssistantStream {
    let (sender, stream) = AssistantStream::channel(model);
    let model = model.clone();
    let context = context.clone();
    tokio::spawn(async move {
        let cancel = options.cancel.clone();
        let first = tokio::select! {
            fresh = login.fresh() => fresh,
            () = cancel.cancelled() => return aborted(&sender, &model).await,
        };
        let mut credential = match first {
            Ok(credential) => credential,
            Err(error) => {
                return failed(&sender, &model, error.to_string(), FailureKind::Auth).await;
            }
        };
        let mut retried = false;
        'attempt: loop {
            let mut attempt = options.clone();
            attempt.api_key = Some(ApiKey::new(credential.access.clone()));
            let routed = route(&model, &login, &credential);
            let mut events = inner.stream(&routed, &context, attempt);
            let mut held_start = None;
            let mut streaming = false;
            while let Some(event) = events.next().await {
                if !streaming {
                    match &event {
                        StreamEvent::Start => {
                            held_start = Some(event);
                            continue;
                        }
                        StreamEvent::Error { error: refused, .. }
                            if !retried && unauthorized(refused) =>
                        {
                            retried = true;
                            let said = error_text(refused);
                            tracing::info!(provider = %login.provider, "the provider refused the login's token; refreshing it");
                            let refreshed = tokio::select! {
                                refreshed = login.after_rejection(&credential.access) => refreshed,
                                () = cancel.cancelled() => return aborted(&sender, &model).await,
                            };
                            match refreshed {
                                Ok(fresh) => {
                                    credential = fresh;
                                    continue 'attempt;
                                }
                                Err(error) => {
                                    return failed(
                                        &sender,
                                        &model,
                                        format!("{said}; {error}"),
                                        FailureKind::Auth,
                                    )
                                    .await;
                                }
                            }
                        }
                        _ => {
                            streaming = true;
                            if let Some(start) = held_start.take()
                                && !sender.send(start).await
                            {
                                return;
                            }
                        }
                    }
                }
                if !sender.send(event).await {
                    return;
                }
            }
            return;
        }
    });
    stream
}

/// The model as this credential reaches it: Copilot's API follows the token (or the
/// Enterprise domain) unless `models.json` gave the provider another address.
fn route(model: &Model, login: &LoginRef, credential: &OAuthCredential) -> Model {
    if login.provider != "github-copilot" || model.base_url.trim_end_matches('/') != INDIVIDUAL_API
    {
        return model.clone();
    }
    let enterprise = credential
        .extra
        .get("enterpriseUrl")
        .and_then(serde_json::Value::as_str)
        .and_then(crate::oauth::normalize_domain);
    let mut routed = model.clone();
    routed.base_url = copilot_base_url(&credential.access, enterprise.as_deref());
    routed
}

fn unauthorized(error: &AssistantMessage) -> bool {
    error
        .failure
        .is_some_and(|failure| failure.status == Some(401))
}

fn error_text(error: &AssistantMessage) -> String {
    error
        .error_message
        .clone()
        .unwrap_or_else(|| "the provider refused the token (HTTP 401)".to_owned())
}
