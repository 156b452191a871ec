//! Routes a request to its method handler: parses params into the method's type (naming the
//! bad field on failure), runs the handler, serializes the response.
//!
//! Architecture invariant: every method in `pi_protocol::v1::METHODS` has an arm here (a test
//! checks none answers `method_not_found`), and handlers only see typed params.

use std::future::Future;
use std::sync::Arc;

use pi_protocol::{ErrorKind, ErrorObject, Method, v1};
use serde_json::Value;

use crate::rpc::connection::ConnectionHandle;
use crate::rpc::methods;
use crate::rpc::methods::session;
use crate::state::DaemonState;

/// What a handler gets besides its params.
#[derive(Clone, Debug)]
pub struct RequestContext {
    /// Daemon-wide state.
    pub state: Arc<DaemonState>,
    /// The connection the request came from.
    pub connection: ConnectionHandle,
}

/// Runs the handler of `method`.
pub async fn dispatch(
    context: &RequestContext,
    method: &str,
    params: Option<Value>,
) -> Result<Value, ErrorObject> {
    match method {
        v1::DaemonStatus::NAME => {
            call::<v1::DaemonStatus, _>(params, |p| methods::daemon::status(context, p)).await
        }
        v1::DaemonShutdown::NAME => {
            call::<v1::DaemonShutdown, _>(params, |p| methods::daemon::shutdown(context, p)).await
        }
        v1::SessionCreate::NAME => {
            call::<v1::SessionCreate, _>(params, |p| session::create(context, p)).await
        }
        v1::SessionList::NAME => {
            call::<v1::SessionList, _>(params, |p| session::list(context, p)).await
        }
        v1::SessionGet::NAME => {
            call::<v1::SessionGet, _>(params, |p| session::get(context, p)).await
        }
        v1::SessionRead::NAME => {
            call::<v1::SessionRead, _>(params, |p| session::read(context, p)).await
        }
        v1::SessionAttach::NAME => {
            call::<v1::SessionAttach, _>(params, |p| session::attach(context, p)).await
        }
        v1::SessionDetach::NAME => {
            call::<v1::SessionDetach, _>(params, |p| session::detach(context, p)).await
        }
        v1::SessionPrompt::NAME => {
            call::<v1::SessionPrompt, _>(params, |p| session::prompt(context, p)).await
        }
        v1::SessionSteer::NAME => {
            call::<v1::SessionSteer, _>(params, |p| session::enqueue(context, p, true)).await
        }
        v1::SessionFollowUp::NAME => {
            call::<v1::SessionFollowUp, _>(params, |p| session::enqueue(context, p, false)).await
        }
        v1::SessionAbort::NAME => {
            call::<v1::SessionAbort, _>(params, |p| session::abort(context, p)).await
        }
        v1::SessionDequeue::NAME => {
            call::<v1::SessionDequeue, _>(params, |p| session::dequeue(context, p)).await
        }
        v1::SessionAbortRetry::NAME => {
            call::<v1::SessionAbortRetry, _>(params, |p| session::abort_retry(context, p)).await
        }
        v1::SessionSetModel::NAME => {
            call::<v1::SessionSetModel, _>(params, |p| session::set_model(context, p)).await
        }
        v1::SessionSetThinking::NAME => {
            call::<v1::SessionSetThinking, _>(params, |p| session::set_thinking(context, p)).await
        }
        v1::SessionSetPolicy::NAME => {
            call::<v1::SessionSetPolicy, _>(params, |p| session::set_policy(context, p)).await
        }
        v1::SessionSetEnv::NAME => {
            call::<v1::SessionSetEnv, _>(params, |p| session::set_env(context, p)).await
        }
        v1::SessionSetName::NAME => {
            call::<v1::SessionSetName, _>(params, |p| session::set_name(context, p)).await
        }
        v1::SessionLabel::NAME => {
            call::<v1::SessionLabel, _>(params, |p| session::label(context, p)).await
        }
        v1::SessionFork::NAME => {
            call::<v1::SessionFork, _>(params, |p| session::fork(context, p)).await
        }
        v1::SessionNavigate::NAME => {
            call::<v1::SessionNavigate, _>(params, |p| session::navigate(context, p)).await
        }
        v1::SessionCompact::NAME => {
            call::<v1::SessionCompact, _>(params, |p| session::compact(context, p)).await
        }
        v1::SessionDelete::NAME => {
            call::<v1::SessionDelete, _>(params, |p| session::delete(context, p)).await
        }
        v1::SessionStats::NAME => {
            call::<v1::SessionStats, _>(params, |p| session::stats(context, p)).await
        }
        v1::SessionImport::NAME => {
            call::<v1::SessionImport, _>(params, |p| session::import(context, p)).await
        }
        v1::SessionExport::NAME => {
            call::<v1::SessionExport, _>(params, |p| session::export(context, p)).await
        }
        v1::SessionBash::NAME => {
            call::<v1::SessionBash, _>(params, |p| session::bash(context, p)).await
        }
        v1::ArtifactRead::NAME => {
            call::<v1::ArtifactRead, _>(params, |p| methods::artifact::read(context, p)).await
        }
        v1::ModelList::NAME => {
            call::<v1::ModelList, _>(params, |p| methods::model::list(context, p)).await
        }
        v1::SessionSetDraft::NAME => {
            call::<v1::SessionSetDraft, _>(params, |p| session::set_draft(context, p)).await
        }
        v1::HistorySearch::NAME => {
            call::<v1::HistorySearch, _>(params, |p| methods::history::search(context, p)).await
        }
        v1::McpList::NAME => {
            call::<v1::McpList, _>(params, |p| methods::mcp::list(context, p)).await
        }
        v1::LspList::NAME => {
            call::<v1::LspList, _>(params, |p| methods::lsp::list(context, p)).await
        }
        v1::JobList::NAME => {
            call::<v1::JobList, _>(params, |p| methods::pools::list_jobs(context, p)).await
        }
        v1::JobKill::NAME => {
            call::<v1::JobKill, _>(params, |p| methods::pools::kill_job(context, p)).await
        }
        v1::KernelList::NAME => {
            call::<v1::KernelList, _>(params, |p| methods::pools::list_kernels(context, p)).await
        }
        v1::LspRestart::NAME => {
            call::<v1::LspRestart, _>(params, |p| methods::lsp::restart(context, p)).await
        }
        v1::McpSetEnabled::NAME => {
            call::<v1::McpSetEnabled, _>(params, |p| methods::mcp::set_enabled(context, p)).await
        }
        v1::McpSetSessionServers::NAME => {
            call::<v1::McpSetSessionServers, _>(params, |p| {
                methods::mcp::set_session_servers(context, p)
            })
            .await
        }
        v1::McpTrust::NAME => {
            call::<v1::McpTrust, _>(params, |p| methods::mcp::trust(context, p)).await
        }
        v1::McpLogs::NAME => {
            call::<v1::McpLogs, _>(params, |p| methods::mcp::logs(context, p)).await
        }
        v1::McpRestart::NAME => {
            call::<v1::McpRestart, _>(params, |p| methods::mcp::restart(context, p)).await
        }
        v1::UsageStats::NAME => {
            call::<v1::UsageStats, _>(params, |p| methods::usage::stats(context, p)).await
        }
        v1::SettingsGet::NAME => {
            call::<v1::SettingsGet, _>(params, |p| methods::settings::get(context, p)).await
        }
        v1::SettingsSetDefault::NAME => {
            call::<v1::SettingsSetDefault, _>(params, |p| {
                methods::settings::set_default(context, p)
            })
            .await
        }
        v1::UiAsk::NAME => call::<v1::UiAsk, _>(params, |p| methods::ui::ask(context, p)).await,
        v1::UiRespond::NAME => {
            call::<v1::UiRespond, _>(params, |p| methods::ui::respond(context, p)).await
        }
        v1::Initialize::NAME => Err(ErrorObject::new(
            ErrorKind::AlreadyInitialized,
            "this connection is already initialized; send `initialize` once per connection",
        )),
        _ => Err(ErrorObject::new(
            ErrorKind::MethodNotFound,
            format!(
                "unknown method `{}`; the methods this daemon serves are listed in \
                 `capabilities.methods` of the `initialize` response",
                pi_protocol::error::echo(method)
            ),
        )),
    }
}

async fn call<M, Fut>(
    params: Option<Value>,
    handler: impl FnOnce(M::Params) -> Fut,
) -> Result<Value, ErrorObject>
where
    M: Method,
    Fut: Future<Output = Result<M::Response, ErrorObject>>,
{
    let params = parse_params::<M>(params)?;
    let response = handler(params).await?;
    serde_json::to_value(response).map_err(|error| {
        tracing::error!(method = M::NAME, %error, "cannot serialize a response");
        ErrorObject::new(
            ErrorKind::Internal,
            format!(
                "internal error: cannot serialize the `{}` response",
                M::NAME
            ),
        )
    })
}

/// Parses a method's params. Absent params mean `{}`. The error says which field is wrong.
pub fn parse_params<M: Method>(params: Option<Value>) -> Result<M::Params, ErrorObject> {
    let params = match params {
        None | Some(Value::Null) => Value::Object(serde_json::Map::new()),
        Some(Value::Array(_)) => {
            return Err(ErrorObject::new(
                ErrorKind::InvalidParams,
                format!(
                    "invalid params for `{}`: params must be an object with named fields, not an array",
                    M::NAME
                ),
            ));
        }
        Some(params) => params,
    };
    serde_path_to_error::deserialize::<_, M::Params>(params).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner().to_string();
        let field = match inner
            .strip_prefix("missing field `")
            .and_then(|rest| rest.split('`').next())
        {
            Some(missing) if path == "." => missing.to_owned(),
            Some(missing) => format!("{path}.{missing}"),
            None => path,
        };
        // A path can hold the peer's map keys: quote it bounded.
        let field = pi_protocol::error::echo(field.trim_start_matches('.')).into_owned();
        let location = if field.is_empty() {
            String::new()
        } else {
            format!(" (field `{field}`)")
        };
        ErrorObject::new(
            ErrorKind::InvalidParams,
            format!("invalid params for `{}`: {inner}{location}", M::NAME),
        )
        .with_field(field)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(params: Value, expected_message: &str, expected_field: &str) {
        let error = parse_params::<v1::Initialize>(Some(params)).unwrap_err();
        assert_eq!(error.kind(), Some(ErrorKind::InvalidParams));
        assert_eq!(error.code, -32602);
        assert_eq!(error.message, expected_message);
        assert_eq!(error.data.unwrap().field.as_deref(), Some(expected_field));
    }

    #[test]
    fn invalid_params_name_the_field() {
        check(
            serde_json::json!({"clientInfo": {"name": "t", "version": "1"}}),
            "invalid params for `initialize`: missing field `protocolVersion` (field `protocolVersion`)",
            "protocolVersion",
        );
        check(
            serde_json::json!({"protocolVersion": "one", "clientInfo": {"name": "t", "version": "1"}}),
            "invalid params for `initialize`: invalid type: string \"one\", expected u32 (field `protocolVersion`)",
            "protocolVersion",
        );
        check(
            serde_json::json!({"protocolVersion": 1, "clientInfo": {"name": "t"}}),
            "invalid params for `initialize`: missing field `version` (field `clientInfo.version`)",
            "clientInfo.version",
        );
    }

    #[test]
    fn array_params_are_refused() {
        let error = parse_params::<v1::DaemonStatus>(Some(serde_json::json!([1]))).unwrap_err();
        assert_eq!(
            error.message,
            "invalid params for `daemon/status`: params must be an object with named fields, not an array"
        );
    }

    #[test]
    fn absent_params_mean_empty_object() {
        assert!(parse_params::<v1::DaemonStatus>(None).is_ok());
        assert!(parse_params::<v1::DaemonStatus>(Some(Value::Null)).is_ok());
    }
}
