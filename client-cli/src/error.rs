//! CLI errors: a kind that picks the exit code, a message, and hints that say what to do.
//!
//! Every failure `pictl` reports goes through [`CliError::report`]: `pictl: error: MESSAGE` on
//! stderr, then one `hint: ...` line per hint, then the kind's exit code (`docs/cli.md`).

use std::process::ExitCode;

use pi_client::ClientError;
use pi_protocol::ErrorKind;

/// Exit code: the command (or the run it started) failed.
pub const EXIT_FAILED: u8 = 1;
/// Exit code: usage error (unknown command or flag, bad value).
pub const EXIT_USAGE: u8 = 2;
/// Exit code: the daemon cannot be reached or speaks another protocol.
pub const EXIT_UNREACHABLE: u8 = 3;
/// Exit code: interrupted (Ctrl+C).
pub const EXIT_INTERRUPTED: u8 = 130;

/// What kind of failure; picks the exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    /// The command or its run failed (exit 1).
    Failed,
    /// The command line is wrong (exit 2).
    Usage,
    /// The daemon is unreachable or incompatible (exit 3).
    Unreachable,
    /// The user interrupted (exit 130).
    Interrupted,
}

/// Why a command failed.
#[derive(Debug)]
pub struct CliError {
    class: ErrorClass,
    message: String,
    hints: Vec<String>,
}

impl CliError {
    /// A failure of the command itself (exit 1).
    pub fn failed(message: impl Into<String>) -> Self {
        CliError {
            class: ErrorClass::Failed,
            message: message.into(),
            hints: Vec::new(),
        }
    }

    /// A bad command line (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        CliError {
            class: ErrorClass::Usage,
            message: message.into(),
            hints: Vec::new(),
        }
    }

    /// The user interrupted (exit 130).
    pub fn interrupted(message: impl Into<String>) -> Self {
        CliError {
            class: ErrorClass::Interrupted,
            message: message.into(),
            hints: Vec::new(),
        }
    }

    /// Adds a line saying what to do.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
        self
    }

    /// Whether the user interrupted.
    pub fn is_interrupted(&self) -> bool {
        self.class == ErrorClass::Interrupted
    }

    /// The message, without hints.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The exit code of this failure.
    pub fn exit_code(&self) -> u8 {
        match self.class {
            ErrorClass::Failed => EXIT_FAILED,
            ErrorClass::Usage => EXIT_USAGE,
            ErrorClass::Unreachable => EXIT_UNREACHABLE,
            ErrorClass::Interrupted => EXIT_INTERRUPTED,
        }
    }

    /// Prints `pictl: error: ...` (`pi: error: ...` under pi's name) and the hints to stderr
    /// and returns the exit code.
    pub fn report(self) -> ExitCode {
        let name = if crate::invoked_as_pi() {
            "pi"
        } else {
            "pictl"
        };
        let mut text = format!("{name}: error: {}\n", self.message);
        for hint in &self.hints {
            text.push_str(&format!("hint: {hint}\n"));
        }
        #[allow(clippy::print_stderr, reason = "user-facing error output")]
        {
            eprint!("{text}");
        }
        ExitCode::from(self.exit_code())
    }
}

impl From<ClientError> for CliError {
    fn from(error: ClientError) -> Self {
        let class = if error.is_unreachable() {
            ErrorClass::Unreachable
        } else if matches!(
            error,
            ClientError::BadRemote(_) | ClientError::BadRemoteLink(_)
        ) {
            // A bad value in the environment (`PI_REMOTE`, `PI_REMOTE_LINK`), as on the
            // command line.
            ErrorClass::Usage
        } else {
            ErrorClass::Failed
        };
        let hints = match (&error, error.rpc_kind()) {
            (ClientError::Disconnected { .. }, _) => {
                vec!["the daemon log (`pid.log` in the state directory) says why".to_owned()]
            }
            (_, Some(ErrorKind::Unauthorized)) => {
                vec!["`pictl models` shows which models have a key".to_owned()]
            }
            (_, Some(ErrorKind::NotFound)) if error.to_string().contains("model") => {
                vec!["`pictl models` lists the models the daemon knows".to_owned()]
            }
            _ => Vec::new(),
        };
        CliError {
            class,
            message: in_pictl_words(&error.to_string()),
            hints,
        }
    }
}

/// The daemon's advice to protocol clients, as what a `pictl` user types instead.
fn in_pictl_words(message: &str) -> String {
    const WORDS: [(&str, &str); 6] = [
        (
            "store an API key with `auth/setApiKey`",
            "store an API key with `pictl login --key PROVIDER`",
        ),
        (
            "then start a new session or choose a model with `session/setModel`",
            "then run again (or name a model with --model)",
        ),
        (
            "choose one with `session/setModel` (see `model/list`)",
            "choose one with --model (`pictl models` lists them)",
        ),
        (
            "`session/list` shows the stored sessions",
            "`pictl sessions --all` lists the stored sessions",
        ),
        (
            "re-read the session with `session/read` and attach without `afterSeq`",
            "watch it again without --after-seq (`pictl session show ID` has the history)",
        ),
        (
            "call `session/attach` first",
            "attach to it first (`pictl attach ID`)",
        ),
    ];
    WORDS
        .iter()
        .fold(message.to_owned(), |text, (theirs, ours)| {
            text.replace(theirs, ours)
        })
}

impl From<std::io::Error> for CliError {
    fn from(error: std::io::Error) -> Self {
        CliError::failed(error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::in_pictl_words;

    #[test]
    fn the_daemons_protocol_advice_reads_as_what_a_user_types() {
        assert_eq!(
            in_pictl_words("session 12 does not exist; `session/list` shows the stored sessions"),
            "session 12 does not exist; `pictl sessions --all` lists the stored sessions"
        );
        assert_eq!(
            in_pictl_words(
                "the session has no model; choose one with `session/setModel` (see `model/list`)"
            ),
            "the session has no model; choose one with --model (`pictl models` lists them)"
        );
        assert!(
            !in_pictl_words(
                "more than 10 events happened after seq 3; re-read the session with `session/read` \
             and attach without `afterSeq`"
            )
            .contains("session/")
        );
    }
}
