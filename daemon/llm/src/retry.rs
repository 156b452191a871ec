//! The retry policy the agent layer applies to failed responses: pi's defaults (3 retries
//! after 2, 4 and 8 seconds), honouring a server's `Retry-After`, and giving up at once when
//! the server asks for a longer wait than the policy allows.

use std::time::Duration;

use crate::failure::{Failure, classify_error_message};
use crate::types::{AssistantMessage, StopReason};

/// When and how often to retry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (pi: 3).
    pub max_retries: u32,
    /// Delay before the first retry; doubled for each further one (pi: 2 s).
    pub base_delay: Duration,
    /// The longest wait accepted, from backoff or from a server's `Retry-After` (pi: 60 s).
    /// A server asking for more fails the request at once. Zero means no limit.
    pub max_delay: Duration,
}

/// What to do about a failed attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryDecision {
    /// Wait this long, then send attempt number `attempt` (1-based count of retries).
    RetryAfter {
        /// Which retry this is: 1 for the first.
        attempt: u32,
        /// How long to wait first.
        delay: Duration,
    },
    /// Do not retry: the failure is not transient.
    NotRetryable,
    /// Do not retry: every allowed retry was used.
    Exhausted,
    /// Do not retry: the server asked for a longer wait than [`RetryPolicy::max_delay`].
    DelayTooLong(Duration),
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_secs(2),
            max_delay: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// Decides about the failure of a request after `retries_done` retries already happened.
    pub fn decide(&self, failure: &Failure, retries_done: u32) -> RetryDecision {
        if !failure.kind.is_retryable() {
            return RetryDecision::NotRetryable;
        }
        if retries_done >= self.max_retries {
            return RetryDecision::Exhausted;
        }
        let attempt = retries_done + 1;
        let backoff = self
            .base_delay
            .saturating_mul(1u32.checked_shl(retries_done).unwrap_or(u32::MAX));
        let delay = match failure.retry_after {
            Some(asked) if asked > self.max_delay && !self.max_delay.is_zero() => {
                return RetryDecision::DelayTooLong(asked);
            }
            Some(asked) => asked,
            // A zero cap means no cap.
            None if self.max_delay.is_zero() => backoff,
            None => backoff.min(self.max_delay),
        };
        RetryDecision::RetryAfter { attempt, delay }
    }

    /// The failure of a finished message: its attached [`Failure`], or one classified from its
    /// text for messages read back from storage. `None` when the message did not fail.
    pub fn failure_of(message: &AssistantMessage) -> Option<Failure> {
        if message.stop_reason != StopReason::Error {
            return None;
        }
        message.failure.or_else(|| {
            let text = message.error_message.as_deref().unwrap_or_default();
            Some(Failure::new(classify_error_message(text)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::failure::FailureKind;

    fn failure(kind: FailureKind, retry_after: Option<u64>) -> Failure {
        Failure {
            kind,
            status: None,
            retry_after: retry_after.map(Duration::from_secs),
        }
    }

    #[test]
    fn backoff_is_2_4_8_then_exhausted() {
        let policy = RetryPolicy::default();
        let overloaded = failure(FailureKind::Overloaded, None);
        let delays: Vec<_> = (0..4)
            .map(|done| policy.decide(&overloaded, done))
            .collect();
        assert_eq!(
            delays,
            vec![
                RetryDecision::RetryAfter {
                    attempt: 1,
                    delay: Duration::from_secs(2)
                },
                RetryDecision::RetryAfter {
                    attempt: 2,
                    delay: Duration::from_secs(4)
                },
                RetryDecision::RetryAfter {
                    attempt: 3,
                    delay: Duration::from_secs(8)
                },
                RetryDecision::Exhausted,
            ]
        );
    }

    #[test]
    fn retry_after_is_honoured_and_capped() {
        let policy = RetryPolicy::default();
        assert_eq!(
            policy.decide(&failure(FailureKind::RateLimited, Some(7)), 0),
            RetryDecision::RetryAfter {
                attempt: 1,
                delay: Duration::from_secs(7)
            }
        );
        assert_eq!(
            policy.decide(&failure(FailureKind::RateLimited, Some(0)), 1),
            RetryDecision::RetryAfter {
                attempt: 2,
                delay: Duration::ZERO
            }
        );
        assert_eq!(
            policy.decide(&failure(FailureKind::RateLimited, Some(120)), 0),
            RetryDecision::DelayTooLong(Duration::from_secs(120))
        );
        assert_eq!(
            policy.decide(&failure(FailureKind::Auth, None), 0),
            RetryDecision::NotRetryable
        );
    }
}
