//! What every tool does the same way: decoding its (already validated) arguments, running
//! blocking file-system work off the async runtime while honouring abort, and wording file
//! system errors as pi does (Node's `ENOENT: no such file or directory, open '<path>'`).

use std::path::Path;
use std::sync::Arc;

use pi_agent::{ABORTED, ToolFuture, ToolInvocation, ToolOutput};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// Decodes validated arguments; a mismatch (which validation should have caught) is an error
/// result naming the problem.
pub fn parse_args<T: DeserializeOwned>(tool: &str, arguments: &Value) -> Result<T, ToolOutput> {
    serde_json::from_value(arguments.clone()).map_err(|error| {
        ToolOutput::error(format!("Invalid arguments for tool \"{tool}\": {error}"))
    })
}

/// Runs `work` on the blocking pool. If `cancel` fires first, returns `Operation aborted`
/// at once; `work` gets the token to stop early and its result is dropped.
pub async fn blocking<T: Send + 'static>(
    cancel: &CancellationToken,
    work: impl FnOnce(CancellationToken) -> T + Send + 'static,
) -> Result<T, ToolOutput> {
    if cancel.is_cancelled() {
        return Err(ToolOutput::error(ABORTED));
    }
    let token = cancel.clone();
    let task = tokio::task::spawn_blocking(move || work(token));
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(ToolOutput::error(ABORTED)),
        joined = task => joined.map_err(|error| {
            tracing::error!(%error, "a tool's blocking work failed");
            ToolOutput::error(format!("internal error: {error}"))
        }),
    }
}

/// The whole `execute` of a read-only tool: decodes its arguments, then runs `work` on the
/// blocking pool, abortable through the invocation's token (which `work` gets to stop early).
pub fn execute_blocking<A, C>(
    tool: &'static str,
    context: Arc<C>,
    invocation: ToolInvocation,
    work: fn(&C, &A, &CancellationToken) -> ToolOutput,
) -> ToolFuture
where
    A: DeserializeOwned + Send + 'static,
    C: Send + Sync + 'static,
{
    Box::pin(async move {
        let args: A = match parse_args(tool, &invocation.arguments) {
            Ok(args) => args,
            Err(output) => return output,
        };
        match blocking(&invocation.cancel, move |cancel| {
            work(&context, &args, &cancel)
        })
        .await
        {
            Ok(output) | Err(output) => output,
        }
    })
}

/// Runs `work` on the blocking pool to completion (abort is not honoured: the work mutates
/// files and must report what it did).
pub async fn blocking_to_completion<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ToolOutput> {
    tokio::task::spawn_blocking(work).await.map_err(|error| {
        tracing::error!(%error, "a tool's blocking work failed");
        ToolOutput::error(format!("internal error: {error}"))
    })
}

/// A file-system error worded like Node's, which is what pi's tools report.
pub fn fs_error(error: &std::io::Error, syscall: &str, path: &Path) -> String {
    let path = path.display();
    match error.kind() {
        std::io::ErrorKind::NotFound => {
            format!("ENOENT: no such file or directory, {syscall} '{path}'")
        }
        std::io::ErrorKind::PermissionDenied => {
            format!("EACCES: permission denied, {syscall} '{path}'")
        }
        std::io::ErrorKind::IsADirectory => {
            format!("EISDIR: illegal operation on a directory, {syscall} '{path}'")
        }
        std::io::ErrorKind::NotADirectory => {
            format!("ENOTDIR: not a directory, {syscall} '{path}'")
        }
        _ => format!("{error}, {syscall} '{path}'"),
    }
}

/// A whole-number argument pi declares as `number`: fractions are dropped.
pub fn whole(number: Option<f64>) -> Option<i64> {
    number
        .filter(|value| value.is_finite())
        .map(|value| value.trunc() as i64)
}

/// The JSON Schema of an object with `properties`, of which `required` must be present.
pub fn object_schema(properties: Value, required: &[&str]) -> Value {
    // TypeBox's order, as pi's tools carry it: type, required, properties.
    serde_json::json!({
        "type": "object",
        "required": required,
        "properties": properties,
    })
}
