//! Tracing setup: logs go to stderr (journald and launchd capture it; with `--log-file`,
//! stderr is the daemon's own rotated log file, [`file`]), filtered by `PI_LOG` (an `EnvFilter`
//! directive, default `info`), formatted as JSON lines when `PI_LOG_FORMAT=json`. What comes in
//! floods is logged through a [`throttle`].

pub mod file;
pub mod throttle;

use std::sync::Arc;

use tracing_subscriber::EnvFilter;

use crate::logging::file::{LogFile, LogWriter};

/// Installs the global subscriber, writing to stderr (counted against `log_file`'s limit when
/// stderr is the daemon's own log file). Call once, before anything logs.
pub fn init(log_file: Option<Arc<LogFile>>) {
    let (filter, bad_filter) = match std::env::var("PI_LOG") {
        Ok(directives) => match EnvFilter::try_new(&directives) {
            Ok(filter) => (filter, None),
            Err(error) => (
                EnvFilter::new("info"),
                Some((directives, error.to_string())),
            ),
        },
        Err(_) => (EnvFilter::new("info"), None),
    };
    let json =
        std::env::var("PI_LOG_FORMAT").is_ok_and(|format| format.eq_ignore_ascii_case("json"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(LogWriter(log_file))
        .with_target(false);
    if json {
        builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .init();
    } else {
        let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
        builder.with_ansi(ansi).init();
    }
    if let Some((directives, error)) = bad_filter {
        tracing::warn!(
            directives,
            error,
            "PI_LOG is not a valid filter; using `info`"
        );
    }
}
