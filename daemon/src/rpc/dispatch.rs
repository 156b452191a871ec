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

/// `match kind` with one arm per listed method: its params parsed into the method's type,
/// `handler` run, its response serialized; then the arms written out after the list.
macro_rules! routes {
    ($kind:expr, $params:expr, { $($method:ident => $handler:expr,)* } $($arms:tt)*) => {
        match $kind {
            $( v1::MethodKind::$method => call::<v1::$method, _>($params, $handler).await, )*
            $($arms)*
        }
    };
}
/// Runs the handler of `method`.
pub async fn dispatch(
    context: &RequestContext,
    method: &str,
    params: Option<Value>,
) -> Result<Value, ErrorObject> {
    let Some(kind) = v1::MethodKind::from_name(method) else {
        return Err(ErrorObject::new(
            ErrorKind::MethodNotFound,
            format!(
                "unknown method `{}`; the methods this daemon serves are listed in \
                 `capabilities.methods` of the `initialize` response",
                pi_protocol::error::echo(method)
            ),
        ));
    };
    // One arm per method of the table: the match is exhaustive, so a new method does not
    // compile until it has its handler here.
    routes!(kind, params, {
        DaemonStatus => |p| methods::daemon::status(context, p),
        DaemonShutdown => |p| methods::daemon::shutdown(context, p),
        SessionCreate => |p| session::create(context, p),
        SessionList => |p| session::list(context, p),
        SessionGet => |p| session::get(context, p),
        SessionRead => |p| session::read(context, p),
        SessionAttach => |p| session::attach(context, p),
        SessionDetach => |p| session::detach(context, p),
        SessionPrompt => |p| session::prompt(context, p),
        SessionSteer => |p| session::enqueue(context, p, true),
        SessionFollowUp => |p| session::enqueue(context, p, false),
        SessionAbort => |p| session::abort(context, p),
        SessionDequeue => |p| session::dequeue(context, p),
        SessionAbortRetry => |p| session::abort_retry(context, p),
        SessionSetModel => |p| session::set_model(context, p),
        SessionSetThinking => |p| session::set_thinking(context, p),
        SessionSetPolicy => |p| session::set_policy(context, p),
        SessionSetEnv => |p| session::set_env(context, p),
        SessionSetTodos => |p| session::set_todos(context, p),
        SessionSetPlanMode => |p| session::set_plan_mode(context, p),
        SessionSetApiKey => |p| session::set_api_key(context, p),
        SessionSetName => |p| session::set_name(context, p),
        SessionLabel => |p| session::label(context, p),
        SessionFork => |p| session::fork(context, p),
        SessionBeforeSwitch => |p| session::before_switch(context, p),
        SessionNavigate => |p| session::navigate(context, p),
        SessionCompact => |p| session::compact(context, p),
        SessionDelete => |p| session::delete(context, p),
        SessionStats => |p| session::stats(context, p),
        SessionImport => |p| session::import(context, p),
        SessionExport => |p| session::export(context, p),
        SessionBash => |p| session::bash(context, p),
        ArtifactRead => |p| methods::artifact::read(context, p),
        ModelList => |p| methods::model::list(context, p),
        AuthList => |p| methods::auth::list(context, p),
        AuthLogin => |p| methods::auth::login(context, p),
        AuthLoginInput => |p| methods::auth::login_input(context, p),
        AuthLoginCancel => |p| methods::auth::login_cancel(context, p),
        AuthLogout => |p| methods::auth::logout(context, p),
        AuthSetApiKey => |p| methods::auth::set_api_key(context, p),
        SessionSetDraft => |p| session::set_draft(context, p),
        HistorySearch => |p| methods::history::search(context, p),
        McpList => |p| methods::mcp::list(context, p),
        LspList => |p| methods::lsp::list(context, p),
        ExtensionsList => |p| methods::extensions::list(context, p),
        ExtensionsRestart => |p| methods::extensions::restart(context, p),
        ExtensionsTrust => |p| methods::extensions::trust(context, p),
        ExtensionsShortcut => |p| methods::extensions::shortcut(context, p),
        PackagesInstall => |p| methods::packages::install(context, p),
        PackagesRemove => |p| methods::packages::remove(context, p),
        PackagesUpdate => |p| methods::packages::update(context, p),
        PackagesList => |p| methods::packages::list(context, p),
        JobList => |p| methods::pools::list_jobs(context, p),
        JobKill => |p| methods::pools::kill_job(context, p),
        KernelList => |p| methods::pools::list_kernels(context, p),
        LspRestart => |p| methods::lsp::restart(context, p),
        LspLogs => |p| methods::lsp::logs(context, p),
        McpSetEnabled => |p| methods::mcp::set_enabled(context, p),
        McpSetSessionServers => |p| methods::mcp::set_session_servers(context, p),
        McpTrust => |p| methods::mcp::trust(context, p),
        McpLogs => |p| methods::mcp::logs(context, p),
        McpRestart => |p| methods::mcp::restart(context, p),
        UsageStats => |p| methods::usage::stats(context, p),
        WebLogin => |p| methods::web::login(context, p),
        WebRevoke => |p| methods::web::revoke(context, p),
        SettingsGet => |p| methods::settings::get(context, p),
        SettingsSetDefault => |p| methods::settings::set_default(context, p),
        RulesTest => |p| methods::rules::test(context, p),
        UiAsk => |p| methods::ui::ask(context, p),
        UiRespond => |p| methods::ui::respond(context, p),
    } v1::MethodKind::Initialize => Err(ErrorObject::new(
            ErrorKind::AlreadyInitialized,
            "this connection is already initialized; send `initialize` once per connection",
        )),
    )
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
