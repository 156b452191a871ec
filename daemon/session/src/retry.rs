//! Automatic retries of transient provider failures (pi's session-level auto-retry), as a
//! small state machine the session actor drives: after a run ends with a retryable error the
//! actor schedules a retry (`auto_retry_start`), waits without blocking its command loop, and
//! continues the run from the context; the first successful reply, running out of retries or
//! a cancellation ends the sequence (`auto_retry_end`).
//!
//! Invariant: at most one retry is pending per session; `attempt` counts the retries of the
//! current sequence and is zero outside one.

use std::time::Duration;

use pi_llm::{AssistantMessage, RetryDecision, RetryPolicy, StopReason, is_context_overflow};
use pi_protocol::v1::SessionEvent;
use tokio::time::Instant;

use pi_coding::settings::RetrySettings;

/// The `finalError` of a cancelled retry (pi's text).
pub const RETRY_CANCELLED: &str = "Retry cancelled";

/// A session's retry state.
#[derive(Debug, Default)]
pub struct AutoRetry {
    // Retries of the current sequence (0 when none is under way).
    attempt: u32,
    // When the pending retry is due.
    pending: Option<Instant>,
}

/// What the actor does after a run ended.
#[derive(Debug, PartialEq)]
pub enum AfterRun {
    /// Nothing to do.
    Idle,
    /// Broadcast this `auto_retry_start`; the retry is due at [`AutoRetry::due`].
    Scheduled(SessionEvent),
    /// Broadcast this `auto_retry_end`: retrying gave up.
    GaveUp(SessionEvent),
}

impl AutoRetry {
    /// Whether a retry is waiting to start.
    pub fn is_pending(&self) -> bool {
        self.pending.is_some()
    }

    /// When the pending retry is due.
    pub fn due(&self) -> Option<Instant> {
        self.pending
    }

    /// The pending retry starts now; returns whether one was pending.
    pub fn start_due(&mut self) -> bool {
        self.pending.take().is_some()
    }

    /// Decides what follows a run whose last assistant message is `last`.
    pub fn after_run(
        &mut self,
        last: Option<&AssistantMessage>,
        settings: &RetrySettings,
        context_window: u64,
    ) -> AfterRun {
        let Some(last) = last.filter(|m| m.stop_reason == StopReason::Error) else {
            // Success ends a sequence in `on_assistant_success`; an abort ends it here.
            return self.give_up_if_retrying(last.and_then(|m| m.error_message.clone()));
        };
        let error_message = last.error_message.clone().unwrap_or_default();
        // Overflows are compaction's business, not a retry's.
        if !settings.enabled || is_context_overflow(last, Some(context_window)) {
            return self.give_up_if_retrying(Some(error_message));
        }
        let Some(failure) = RetryPolicy::failure_of(last) else {
            return AfterRun::Idle;
        };
        let policy = RetryPolicy {
            max_retries: settings.max_retries,
            base_delay: Duration::from_millis(settings.base_delay_ms),
            max_delay: Duration::from_millis(settings.max_delay_ms),
        };
        match policy.decide(&failure, self.attempt) {
            RetryDecision::RetryAfter { attempt, delay } => {
                self.attempt = attempt;
                self.pending = Some(Instant::now() + delay);
                AfterRun::Scheduled(SessionEvent::AutoRetryStart {
                    attempt,
                    max_attempts: settings.max_retries,
                    delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                    error_message,
                })
            }
            RetryDecision::DelayTooLong(asked) => self.give_up_if_retrying(Some(format!(
                "{error_message} (the provider asked to wait {} s, longer than retry.maxDelayMs)",
                asked.as_secs()
            ))),
            RetryDecision::NotRetryable | RetryDecision::Exhausted => {
                self.give_up_if_retrying(Some(error_message))
            }
        }
    }

    /// A reply succeeded: ends a retry sequence with `auto_retry_end {success: true}`.
    pub fn on_assistant_success(&mut self) -> Option<SessionEvent> {
        (self.attempt > 0).then(|| {
            let attempt = std::mem::take(&mut self.attempt);
            SessionEvent::AutoRetryEnd {
                success: true,
                attempt,
                final_error: None,
            }
        })
    }

    /// Cancels a pending retry: `auto_retry_end {success: false, finalError: "Retry
    /// cancelled"}`, or `None` when nothing was pending.
    pub fn cancel(&mut self) -> Option<SessionEvent> {
        self.pending.take()?;
        let attempt = std::mem::take(&mut self.attempt);
        Some(SessionEvent::AutoRetryEnd {
            success: false,
            attempt,
            final_error: Some(RETRY_CANCELLED.to_owned()),
        })
    }

    fn give_up_if_retrying(&mut self, final_error: Option<String>) -> AfterRun {
        self.pending = None;
        match std::mem::take(&mut self.attempt) {
            0 => AfterRun::Idle,
            attempt => AfterRun::GaveUp(SessionEvent::AutoRetryEnd {
                success: false,
                attempt,
                final_error,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(text: &str) -> AssistantMessage {
        AssistantMessage {
            stop_reason: StopReason::Error,
            error_message: Some(text.to_owned()),
            ..AssistantMessage::default()
        }
    }

    fn settings() -> RetrySettings {
        RetrySettings {
            enabled: true,
            max_retries: 2,
            base_delay_ms: 2000,
            max_delay_ms: 60_000,
            provider_timeout_ms: None,
            provider_max_retries: None,
        }
    }

    fn start(attempt: u32, delay_ms: u64, error: &str) -> AfterRun {
        AfterRun::Scheduled(SessionEvent::AutoRetryStart {
            attempt,
            max_attempts: 2,
            delay_ms,
            error_message: error.to_owned(),
        })
    }

    #[test]
    fn retries_back_off_then_give_up() {
        let mut retry = AutoRetry::default();
        let error = failed("529 Overloaded");
        assert_eq!(
            retry.after_run(Some(&error), &settings(), 1000),
            start(1, 2000, "529 Overloaded")
        );
        assert!(retry.start_due());
        assert_eq!(
            retry.after_run(Some(&error), &settings(), 1000),
            start(2, 4000, "529 Overloaded")
        );
        assert!(retry.start_due());
        assert_eq!(
            retry.after_run(Some(&error), &settings(), 1000),
            AfterRun::GaveUp(SessionEvent::AutoRetryEnd {
                success: false,
                attempt: 2,
                final_error: Some("529 Overloaded".to_owned()),
            })
        );
        assert!(!retry.is_pending());
    }

    #[test]
    fn success_cancel_and_non_retryable_errors() {
        let mut retry = AutoRetry::default();
        assert_eq!(
            retry.after_run(Some(&failed("invalid x-api-key")), &settings(), 1000),
            AfterRun::Idle
        );
        assert_eq!(
            retry.after_run(
                Some(&failed("prompt is too long: 2000 tokens")),
                &settings(),
                1000
            ),
            AfterRun::Idle
        );
        retry.after_run(
            Some(&failed("500 Internal Server Error")),
            &settings(),
            1000,
        );
        assert!(retry.start_due());
        assert_eq!(
            retry.on_assistant_success(),
            Some(SessionEvent::AutoRetryEnd {
                success: true,
                attempt: 1,
                final_error: None
            })
        );
        assert_eq!(retry.on_assistant_success(), None);
        retry.after_run(Some(&failed("fetch failed")), &settings(), 1000);
        assert_eq!(
            retry.cancel(),
            Some(SessionEvent::AutoRetryEnd {
                success: false,
                attempt: 1,
                final_error: Some(RETRY_CANCELLED.to_owned()),
            })
        );
        assert_eq!(retry.cancel(), None);
        let disabled = RetrySettings {
            enabled: false,
            ..settings()
        };
        assert_eq!(
            retry.after_run(Some(&failed("503")), &disabled, 1000),
            AfterRun::Idle
        );
    }
}
