//! `auth/*`: subscription logins, API keys, and where each provider's key comes from.

use pi_llm::KeySource;
use pi_llm::oauth::{LoginEvent, LoginOptions, OAuthError, OAuthKind};
use pi_llm::registry::LoginFailure;
use pi_protocol::v1::{
    AuthListParams, AuthListResponse, AuthLoginCancelParams, AuthLoginEvent, AuthLoginEventParams,
    AuthLoginInputParams, AuthLoginParams, AuthLoginResponse, AuthLogoutParams, AuthLogoutResponse,
    AuthProviderStatus, AuthSetApiKeyParams, AuthSetApiKeyResponse, AuthSource, EmptyResponse,
    LoginStep,
};
use pi_protocol::{ErrorKind, ErrorObject};

use crate::accounts::{AccountError, Accounts};
use crate::rpc::dispatch::RequestContext;

fn accounts(context: &RequestContext) -> Result<&Accounts, ErrorObject> {
    context.state.accounts.as_deref().ok_or_else(|| {
        ErrorObject::new(
            ErrorKind::Internal,
            "this daemon manages no logins (started without its model registry)",
        )
    })
}

fn error(error: AccountError) -> ErrorObject {
    let kind = match &error {
        AccountError::UnknownProvider(_) | AccountError::NotAsking(_) => ErrorKind::InvalidParams,
        AccountError::UnknownLogin(_) => ErrorKind::NotFound,
        AccountError::TooMany => ErrorKind::Busy,
        AccountError::Login(LoginFailure::Flow(OAuthError::Cancelled)) => ErrorKind::Cancelled,
        // What the person gave was wrong (a pasted URL of another login, a domain).
        AccountError::Login(LoginFailure::Flow(
            OAuthError::Local(_)
            | OAuthError::StateMismatch
            | OAuthError::MissingCode
            | OAuthError::DeviceFlow(_),
        )) => ErrorKind::InvalidParams,
        // The authorization server refused, could not be reached or answered oddly.
        AccountError::Login(LoginFailure::Flow(_)) | AccountError::TimedOut => {
            ErrorKind::ProviderError
        }
        AccountError::Login(LoginFailure::File(_)) | AccountError::File(_) => ErrorKind::Storage,
    };
    ErrorObject::new(kind, error.to_string())
}

/// `auth/list`.
pub async fn list(
    context: &RequestContext,
    _params: AuthListParams,
) -> Result<AuthListResponse, ErrorObject> {
    let registry = accounts(context)?.registry();
    // The files as they are now (pi may have written one a moment ago).
    registry.reload();
    let mut providers: Vec<(String, String, bool)> = OAuthKind::ALL
        .iter()
        .map(|kind| (kind.provider_id().to_owned(), kind.name().to_owned(), true))
        .collect();
    for model in registry.models() {
        if !providers.iter().any(|(id, _, _)| *id == model.provider) {
            providers.push((model.provider.clone(), model.provider, false));
        }
    }
    let providers = providers
        .into_iter()
        .map(|(provider, name, subscription)| {
            let source = registry
                .key_status(&provider)
                .map(|(source, expires)| match source {
                    KeySource::OAuth(path) => AuthSource::Login {
                        path: path.display().to_string(),
                        expires: expires.unwrap_or_default(),
                    },
                    KeySource::AuthFile(path) => AuthSource::ApiKey {
                        path: path.display().to_string(),
                    },
                    KeySource::Environment(variable) => AuthSource::Environment { variable },
                    KeySource::ModelsJson(path) => AuthSource::ModelsJson {
                        path: path.display().to_string(),
                    },
                    KeySource::Explicit => AuthSource::Explicit,
                });
            // pi's test for a Claude subscription token given as a key; keys a command or
            // another variable computes are not looked at (no command runs for a list).
            let subscription_token = provider == "anthropic"
                && matches!(
                    source,
                    Some(
                        AuthSource::ApiKey { .. }
                            | AuthSource::Environment { .. }
                            | AuthSource::Explicit
                    )
                )
                && off_the_loop(|| registry.resolve_key(&provider))
                    .is_ok_and(|resolved| resolved.key.expose().starts_with("sk-ant-oat"));
            AuthProviderStatus {
                provider,
                name,
                subscription,
                source,
                subscription_token,
            }
        })
        .collect();
    Ok(AuthListResponse { providers })
}

/// Runs `work`, which may read files or run a key's command, without holding up the other
/// tasks of a multi-threaded runtime.
fn off_the_loop<T>(work: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current().map(|handle| handle.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(work),
        _ => work(),
    }
}

/// `auth/login`.
pub async fn login(
    context: &RequestContext,
    params: AuthLoginParams,
) -> Result<AuthLoginResponse, ErrorObject> {
    let connection = context.connection.clone();
    let on_step = move |login_id: &str, event: LoginEvent| {
        let step = match event {
            LoginEvent::OpenUrl { url, instructions } => LoginStep::OpenUrl { url, instructions },
            LoginEvent::Prompt {
                message,
                placeholder,
                allow_empty,
            } => LoginStep::Prompt {
                message,
                placeholder,
                allow_empty,
            },
            LoginEvent::Progress(message) => LoginStep::Progress { message },
        };
        let _ = connection.notify::<AuthLoginEvent>(&AuthLoginEventParams {
            login_id: login_id.to_owned(),
            step,
        });
    };
    let options = LoginOptions {
        enterprise_domain: params.enterprise_domain.clone(),
        copilot_models: Vec::new(),
    };
    let path = accounts(context)?
        .login(&params.provider, options, on_step)
        .await
        .map_err(error)?;
    Ok(AuthLoginResponse {
        provider: params.provider,
        path: path.display().to_string(),
    })
}

/// `auth/loginInput`.
pub async fn login_input(
    context: &RequestContext,
    params: AuthLoginInputParams,
) -> Result<EmptyResponse, ErrorObject> {
    accounts(context)?
        .answer(&params.login_id, params.text)
        .map_err(error)?;
    Ok(EmptyResponse {})
}

/// `auth/loginCancel`.
pub async fn login_cancel(
    context: &RequestContext,
    params: AuthLoginCancelParams,
) -> Result<EmptyResponse, ErrorObject> {
    accounts(context)?.cancel(&params.login_id).map_err(error)?;
    Ok(EmptyResponse {})
}

/// `auth/logout`.
pub async fn logout(
    context: &RequestContext,
    params: AuthLogoutParams,
) -> Result<AuthLogoutResponse, ErrorObject> {
    let removed = accounts(context)?
        .logout(&params.provider)
        .await
        .map_err(error)?;
    Ok(AuthLogoutResponse {
        removed: removed
            .iter()
            .map(|path| path.display().to_string())
            .collect(),
    })
}

/// `auth/setApiKey`.
pub async fn set_api_key(
    context: &RequestContext,
    params: AuthSetApiKeyParams,
) -> Result<AuthSetApiKeyResponse, ErrorObject> {
    if params.key.trim().is_empty() {
        return Err(ErrorObject::new(
            ErrorKind::InvalidParams,
            "`key` is empty: give the API key (or pi's `!command` or the name of a variable \
             holding it)",
        ));
    }
    let path = accounts(context)?
        .set_api_key(&params.provider, &params.key)
        .await
        .map_err(error)?;
    Ok(AuthSetApiKeyResponse {
        path: path.display().to_string(),
    })
}
