//! Why a `task` call could not run its subagents. The text is what the tool tells the model.

use pi_session::SessionError;

/// Why a batch of tasks (or one of its children) could not start.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    /// The daemon is shutting down.
    #[error("the daemon is stopping")]
    Stopping,
    /// What was wrong with the call: its arguments, a task of the batch, the depth limit, an
    /// unknown agent (with what is available).
    #[error("{0}")]
    Call(String),
    /// The parent session could not be read.
    #[error("{0}")]
    Session(#[source] SessionError),
    /// A subagent cannot be resumed.
    #[error("cannot resume {id}: {why}")]
    Resume {
        /// The subagent.
        id: String,
        /// Why.
        why: String,
    },
    /// The child session could not be created.
    #[error("cannot start the subagent: {0}")]
    StartChild(#[source] SessionError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_say_what_happened() {
        assert_eq!(TaskError::Stopping.to_string(), "the daemon is stopping");
        assert_eq!(
            TaskError::Resume {
                id: "7f3c".into(),
                why: "it is not a subagent of this session".into(),
            }
            .to_string(),
            "cannot resume 7f3c: it is not a subagent of this session"
        );
        assert_eq!(
            TaskError::Call("tasks is empty: give at least one task".into()).to_string(),
            "tasks is empty: give at least one task"
        );
    }
}
