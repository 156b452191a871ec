//! Tracing setup: logs go to stderr (journald and launchd capture it), filtered by `PI_LOG`
//! (an `EnvFilter` directive, default `info`), formatted as JSON lines when
//! `PI_LOG_FORMAT=json`.

pub mod throttle;

use tracing_subscriber::EnvFilter;

/// Installs the global subscriber. Call once, before anything logs.
pub fn init() {
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
        .with_writer(std::io::stderr)
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
