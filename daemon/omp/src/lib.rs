//! oh-my-pi's working tools, opt-in by name (pi's default tool set and request bodies stay
//! unchanged): `todo` (a phased task list kept in the session) and `ask` (a question to the
//! people watching the session), and `exit_plan_mode`, which sessions in plan mode get.
//!
//! Each tool reaches its own session through the [`SessionsWeak`](pi_session::SessionsWeak)
//! of the environment it was built with; none holds session state of its own.

pub mod ask;
pub mod plan;
pub mod todo;

/// The tools of this crate, by name.
pub const TOOLS: [&str; 2] = [todo::NAME, ask::NAME];

/// Asks the people attached to session `session_id` (`ui/request`, no timeout): the first
/// answer. What `ask` and `exit_plan_mode` share.
async fn ask_person(
    sessions: &pi_session::SessionRegistry,
    session_id: &str,
    request: pi_protocol::v1::UiRequest,
) -> Result<pi_protocol::v1::UiAskResponse, pi_session::SessionError> {
    sessions
        .ask(pi_protocol::v1::UiAskParams {
            session_id: session_id.to_owned(),
            request,
            timeout_ms: None,
        })
        .await
}
