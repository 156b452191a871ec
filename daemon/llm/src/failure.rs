//! Why a request failed, in classes the layers above act on: retry (rate limit, overload, 5xx,
//! connection reset, cut stream), compact (context overflow), or tell the user (auth, invalid
//! request).
//!
//! Providers attach a [`Failure`] to the final message of a failed stream (it is not
//! serialized: stored and exported messages carry pi's `errorMessage` only). For messages read
//! back from storage, [`classify_error_message`] recovers the class from the text the way pi
//! does, and [`is_context_overflow`](crate::is_context_overflow) is pi's overflow detection.

use std::sync::LazyLock;
use std::time::{Duration, SystemTime};

use regex::{Regex, RegexSet};

/// The class of a failed request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FailureKind {
    /// 429 or a rate-limit error: retry after the server's delay.
    RateLimited,
    /// The provider is overloaded (Anthropic 529, `overloaded_error`, 503): retry.
    Overloaded,
    /// Another 5xx: retry.
    ServerError,
    /// Connecting failed or the connection was reset before a response: retry.
    Connection,
    /// The response stream ended early or carried a malformed chunk: retry.
    StreamCut,
    /// The conversation no longer fits the model's context window: compact, then retry once.
    ContextOverflow,
    /// The key was missing, wrong or lacks permission: fix the key; do not retry.
    Auth,
    /// The provider rejected the request (400/404/422): do not retry.
    InvalidRequest,
    /// The request was cancelled by the caller.
    Aborted,
    /// Anything else (refusals, content filters, unknown errors): do not retry.
    Other,
}

/// Structured detail about a failed request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The class.
    pub kind: FailureKind,
    /// The HTTP status, when the failure was an HTTP error response.
    pub status: Option<u16>,
    /// How long the server asked us to wait (`Retry-After`, `retry-after-ms`, Google's
    /// `retryDelay`).
    pub retry_after: Option<Duration>,
}

impl FailureKind {
    /// Whether waiting and sending the same request again may succeed.
    pub fn is_retryable(self) -> bool {
        match self {
            FailureKind::RateLimited
            | FailureKind::Overloaded
            | FailureKind::ServerError
            | FailureKind::Connection
            | FailureKind::StreamCut => true,
            FailureKind::ContextOverflow
            | FailureKind::Auth
            | FailureKind::InvalidRequest
            | FailureKind::Aborted
            | FailureKind::Other => false,
        }
    }

    /// A short wire name (`rate_limited`, `context_overflow`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::RateLimited => "rate_limited",
            FailureKind::Overloaded => "overloaded",
            FailureKind::ServerError => "server_error",
            FailureKind::Connection => "connection",
            FailureKind::StreamCut => "stream_cut",
            FailureKind::ContextOverflow => "context_overflow",
            FailureKind::Auth => "auth",
            FailureKind::InvalidRequest => "invalid_request",
            FailureKind::Aborted => "aborted",
            FailureKind::Other => "other",
        }
    }
}

impl Failure {
    /// A failure of `kind` with no status and no delay.
    pub fn new(kind: FailureKind) -> Self {
        Failure {
            kind,
            status: None,
            retry_after: None,
        }
    }

    /// Classifies an HTTP error response from its status and error text.
    pub fn from_http(status: u16, message: &str, retry_after: Option<Duration>) -> Self {
        let kind = if is_overflow_text(message) {
            FailureKind::ContextOverflow
        } else {
            match status {
                429 => FailureKind::RateLimited,
                529 | 503 => FailureKind::Overloaded,
                401 | 403 => FailureKind::Auth,
                408 => FailureKind::Connection,
                500..=599 => FailureKind::ServerError,
                400..=499 => FailureKind::InvalidRequest,
                _ => FailureKind::Other,
            }
        };
        Failure {
            kind,
            status: Some(status),
            retry_after,
        }
    }
}

/// The class of a failed message from its text alone (pi's auto-retry patterns, then overflow
/// detection): for messages read back from storage, which carry no [`Failure`].
pub fn classify_error_message(message: &str) -> FailureKind {
    static RETRYABLE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            "(?i)overloaded|rate.?limit|too many requests|429|500|502|503|504|service.?unavailable|\
             server.?error|internal.?error|connection.?error|connection.?refused|other side closed|\
             fetch failed|upstream.?connect|reset before headers|terminated|retry delay|\
             stream ended",
        )
        .expect("the retry pattern is a valid regex")
    });
    if is_overflow_text(message) {
        FailureKind::ContextOverflow
    } else if message.eq_ignore_ascii_case("request was aborted")
        || message.eq_ignore_ascii_case("operation aborted")
    {
        FailureKind::Aborted
    } else if RETRYABLE.is_match(message) {
        let lower = message.to_ascii_lowercase();
        if lower.contains("overloaded") || lower.contains("503") {
            FailureKind::Overloaded
        } else if lower.contains("rate") || lower.contains("429") || lower.contains("too many") {
            FailureKind::RateLimited
        } else if lower.contains("stream ended") || lower.contains("terminated") {
            FailureKind::StreamCut
        } else if lower.contains("connect") || lower.contains("closed") || lower.contains("fetch") {
            FailureKind::Connection
        } else {
            FailureKind::ServerError
        }
    } else {
        FailureKind::Other
    }
}

pub(crate) fn is_overflow_text(text: &str) -> bool {
    static PATTERNS: LazyLock<RegexSet> = LazyLock::new(|| {
        RegexSet::new([
            r"(?i)prompt is too long",
            r"(?i)input is too long for requested model",
            r"(?i)exceeds the context window",
            r"(?i)input token count.*exceeds the maximum",
            r"(?i)maximum prompt length is \d+",
            r"(?i)reduce the length of the messages",
            r"(?i)maximum context length is \d+ tokens",
            r"(?i)exceeds the limit of \d+",
            r"(?i)exceeds the available context size",
            r"(?i)greater than the context length",
            r"(?i)context window exceeds limit",
            r"(?i)exceeded model token limit",
            r"(?i)too large for model with \d+ maximum context length",
            r"(?i)model_context_window_exceeded",
            r"(?i)context[_ ]length[_ ]exceeded",
            r"(?i)too many tokens",
            r"(?i)token limit exceeded",
            r"(?i)^4(00|13)\s*(status code)?\s*\(no body\)",
        ])
        .expect("the overflow patterns are valid regexes")
    });
    PATTERNS.is_match(text)
}

/// Reads a delay from response headers: `retry-after-ms`, then `retry-after` (seconds or an
/// HTTP date).
pub fn retry_after_from_headers(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let text = |name: &str| headers.get(name).and_then(|value| value.to_str().ok());
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok()) {
        return (ms >= 0.0).then(|| Duration::from_secs_f64(ms / 1000.0));
    }
    let value = text("retry-after")?.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(
        when.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

/// Google's `"retryDelay": "7s"` (or `"0.5s"`) inside an error body.
pub fn retry_delay_from_body(body: &str) -> Option<Duration> {
    static DELAY: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#""retryDelay"\s*:\s*"(\d+(?:\.\d+)?)s""#)
            .expect("the retryDelay pattern is a valid regex")
    });
    let seconds: f64 = DELAY.captures(body)?.get(1)?.as_str().parse().ok()?;
    Some(Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_statuses_classify() {
        let check = |status, text, kind| {
            assert_eq!(
                Failure::from_http(status, text, None).kind,
                kind,
                "{status} {text}"
            )
        };
        check(429, "slow down", FailureKind::RateLimited);
        check(529, "Overloaded", FailureKind::Overloaded);
        check(500, "boom", FailureKind::ServerError);
        check(401, "invalid x-api-key", FailureKind::Auth);
        check(400, "bad", FailureKind::InvalidRequest);
        check(
            400,
            "prompt is too long: 210000 tokens > 200000 maximum",
            FailureKind::ContextOverflow,
        );
        check(413, "413 (no body)", FailureKind::ContextOverflow);
    }

    #[test]
    fn stored_messages_classify_by_text() {
        let check = |text, kind| assert_eq!(classify_error_message(text), kind, "{text}");
        check("429 Too Many Requests", FailureKind::RateLimited);
        check("Overloaded", FailureKind::Overloaded);
        check("502 Bad Gateway", FailureKind::ServerError);
        check(
            "the stream ended before the response completed",
            FailureKind::StreamCut,
        );
        check("fetch failed", FailureKind::Connection);
        check(
            "This model's maximum context length is 128000 tokens",
            FailureKind::ContextOverflow,
        );
        check("invalid x-api-key", FailureKind::Other);
    }

    #[test]
    fn http_dates_parse() {
        // IMF-fixdate, and the obsolete RFC 850 and asctime forms HTTP still allows; a date in
        // the past is no delay, and a header that is no date nor number is none.
        let check = |value: &str| {
            let mut headers = reqwest::header::HeaderMap::new();
            headers.insert("retry-after", value.parse().unwrap());
            retry_after_from_headers(&headers)
        };
        for past in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
        ] {
            assert_eq!(check(past), Some(Duration::ZERO), "{past}");
        }
        assert_eq!(check("Sun, 06 Nov 1994"), None);
        assert_eq!(check("2.5"), Some(Duration::from_millis(2500)));
        assert_eq!(
            retry_delay_from_body(r#"{"details":[{"retryDelay": "7s"}]}"#),
            Some(Duration::from_secs(7))
        );
    }
}
