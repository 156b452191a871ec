//! CLI errors: a kind that picks the exit code, a message, and a hint that says what to do.

use std::process::ExitCode;

use pi_client::ClientError;

/// Exit code: the command failed.
pub const EXIT_FAILED: u8 = 1;
/// Exit code: the command line is wrong.
pub const EXIT_USAGE: u8 = 2;
/// Exit code: the daemon cannot be reached or speaks another protocol.
pub const EXIT_UNREACHABLE: u8 = 3;

/// Why a command failed.
#[derive(Debug)]
pub struct CliError {
    exit_code: u8,
    message: String,
}

impl CliError {
    /// A failure of the command itself (exit 1).
    pub fn failed(message: impl Into<String>) -> Self {
        CliError {
            exit_code: EXIT_FAILED,
            message: message.into(),
        }
    }

    /// A usage error (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        CliError {
            exit_code: EXIT_USAGE,
            message: message.into(),
        }
    }

    /// Prints `pictl: error: ...` to stderr and returns the exit code.
    pub fn report(self) -> ExitCode {
        #[allow(clippy::print_stderr, reason = "user-facing error output")]
        {
            eprintln!("pictl: error: {}", self.message);
        }
        ExitCode::from(self.exit_code)
    }
}

impl From<ClientError> for CliError {
    fn from(error: ClientError) -> Self {
        let exit_code = if error.is_unreachable() {
            EXIT_UNREACHABLE
        } else {
            EXIT_FAILED
        };
        CliError {
            exit_code,
            message: error.to_string(),
        }
    }
}
