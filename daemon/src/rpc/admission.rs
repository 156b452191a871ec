//! Admission of new connections: a cap per transport on connections that have not completed
//! `initialize` yet, the deadline for `initialize`, and accept errors that back off.
//!
//! A connection holds a [`Pending`] from accept until its `initialize` succeeds (on the
//! WebSocket the HTTP upgrade comes first and counts too). Each transport has its own slots, so
//! a flood on the WebSocket port, which every local user can reach, never takes the Unix
//! socket's; initialized connections hold no slot, so they are never refused for room that
//! unfinished ones took. A connection over the cap is closed at once (the transport writes one
//! refusal without waiting, and keeps no file descriptor); one that has not initialized by its
//! deadline is closed then. The model is sshd's `MaxStartups` and `LoginGraceTime`.
//!
//! Architecture invariant: what a peer can make the daemon hold before `initialize` is bounded
//! per transport: `limits.pending_connections` connections for `limits.initialize_timeout_secs`.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::config::LimitsConfig;
use crate::logging::throttle::{LOG_INTERVAL, LogThrottle};
use crate::rpc::connection::TransportKind;

/// The first wait after a failed accept; it doubles while accepts keep failing.
const FIRST_ACCEPT_BACKOFF: Duration = Duration::from_millis(10);
/// The longest wait between accepts that fail.
const MAX_ACCEPT_BACKOFF: Duration = Duration::from_secs(1);

/// The admission of one transport's connections.
#[derive(Debug)]
pub struct Admission {
    transport: TransportKind,
    // One permit per connection that has not initialized; taken at accept, released by
    // `Pending::initialized` or when the connection ends.
    slots: Arc<Semaphore>,
    cap: usize,
    timeout: Duration,
    refused_log: Arc<LogThrottle>,
    timeout_log: Arc<LogThrottle>,
}

/// A connection that has not completed `initialize` yet: one of its transport's slots and its
/// deadline.
#[derive(Debug)]
pub struct Pending {
    // `None` once `initialize` succeeded.
    permit: Option<OwnedSemaphorePermit>,
    deadline: Instant,
    timeout: Duration,
    transport: TransportKind,
    timeout_log: Arc<LogThrottle>,
}

/// Failed accepts of one listener: they are logged once per interval and back off, so a
/// process out of file descriptors neither spins nor floods its log.
#[derive(Debug)]
pub struct AcceptErrors {
    transport: TransportKind,
    // How long to wait after the next failure; reset by a success.
    backoff: Duration,
    log: Arc<LogThrottle>,
}

impl Admission {
    /// The admission of `transport`'s connections under `limits`.
    pub fn new(transport: TransportKind, limits: &LimitsConfig) -> Admission {
        let name = transport.name();
        let cap = limits.pending_connections;
        Admission {
            transport,
            slots: Arc::new(Semaphore::new(cap)),
            cap,
            timeout: Duration::from_secs(limits.initialize_timeout_secs),
            refused_log: LogThrottle::new(LOG_INTERVAL, move |suppressed| {
                tracing::warn!(
                    transport = name,
                    suppressed,
                    cap,
                    "refused more connections over the cap of connections waiting to initialize"
                );
            }),
            timeout_log: LogThrottle::new(LOG_INTERVAL, move |suppressed| {
                tracing::warn!(
                    transport = name,
                    suppressed,
                    "closed more connections that did not initialize in time"
                );
            }),
        }
    }

    /// Admits a new connection, or `None` when the transport already has its cap of
    /// connections waiting to initialize (logged once per interval); the caller then closes
    /// the connection at once.
    pub fn admit(&self) -> Option<Pending> {
        let Ok(permit) = self.slots.clone().try_acquire_owned() else {
            if self.refused_log.hit() {
                tracing::warn!(
                    transport = self.transport.name(),
                    cap = self.cap,
                    "refusing a connection: too many connections are waiting to initialize \
                     (`limits.pending_connections`)"
                );
            }
            return None;
        };
        Some(Pending {
            permit: Some(permit),
            deadline: Instant::now() + self.timeout,
            timeout: self.timeout,
            transport: self.transport,
            timeout_log: self.timeout_log.clone(),
        })
    }

    /// What a refused peer is told.
    pub fn refusal_message(&self) -> String {
        format!(
            "too many connections to the daemon are waiting to initialize ({cap} on the {name}); \
             it refuses new ones until some finish or time out, so try again in a moment",
            cap = self.cap,
            name = match self.transport {
                TransportKind::Unix => "Unix socket",
                TransportKind::WebSocket => "WebSocket",
            },
        )
    }
}

impl Pending {
    /// When the connection must have completed `initialize`.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Whether `initialize` succeeded (the connection holds no slot any more).
    pub fn is_initialized(&self) -> bool {
        self.permit.is_none()
    }

    /// `initialize` succeeded: the slot goes back, and the deadline no longer applies.
    pub fn initialized(&mut self) {
        self.permit = None;
    }

    /// The deadline passed: logs it (once per interval) and says what the peer is told.
    pub fn timed_out(&self) -> String {
        if self.timeout_log.hit() {
            tracing::warn!(
                transport = self.transport.name(),
                timeout_secs = self.timeout.as_secs(),
                "closing a connection that did not initialize in time"
            );
        }
        format!(
            "no successful `initialize` within {} s of connecting, so the daemon closes the \
             connection; send `initialize` as the first request",
            self.timeout.as_secs()
        )
    }
}

impl AcceptErrors {
    /// The failed accepts of `transport`'s listener.
    pub fn new(transport: TransportKind) -> AcceptErrors {
        let name = transport.name();
        AcceptErrors {
            transport,
            backoff: FIRST_ACCEPT_BACKOFF,
            log: LogThrottle::new(LOG_INTERVAL, move |suppressed| {
                tracing::warn!(transport = name, suppressed, "more accepts failed");
            }),
        }
    }

    /// An accept succeeded: the next failure waits the shortest time again.
    pub fn succeeded(&mut self) {
        self.backoff = FIRST_ACCEPT_BACKOFF;
    }

    /// An accept failed: logs it (once per interval) and, when the process or the system is
    /// out of a resource (file descriptors, memory), waits before the next accept, twice as
    /// long each time up to a second, or until shutdown. Other errors concern one connection
    /// that is already gone; the next accept follows at once.
    pub async fn failed(&mut self, error: &std::io::Error, shutdown: &CancellationToken) {
        let exhausted = error.raw_os_error().is_some_and(|code| {
            [
                rustix::io::Errno::MFILE,
                rustix::io::Errno::NFILE,
                rustix::io::Errno::NOBUFS,
                rustix::io::Errno::NOMEM,
            ]
            .iter()
            .any(|errno| errno.raw_os_error() == code)
        });
        if self.log.hit() {
            tracing::warn!(
                transport = self.transport.name(),
                %error,
                backoff_ms = if exhausted { self.backoff.as_millis() as u64 } else { 0 },
                "accept failed"
            );
        }
        if !exhausted {
            return;
        }
        tokio::select! {
            () = tokio::time::sleep(self.backoff) => {}
            () = shutdown.cancelled() => {}
        }
        self.backoff = (self.backoff * 2).min(MAX_ACCEPT_BACKOFF);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(pending_connections: usize) -> LimitsConfig {
        LimitsConfig {
            pending_connections,
            initialize_timeout_secs: 10,
            ..LimitsConfig::default()
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_cap_counts_only_connections_that_have_not_initialized() {
        let admission = Admission::new(TransportKind::WebSocket, &limits(2));
        let mut first = admission.admit().expect("room for the first");
        let second = admission.admit().expect("room for the second");
        assert!(admission.admit().is_none(), "the third is over the cap");
        assert_eq!(first.deadline(), Instant::now() + Duration::from_secs(10));

        // An initialized connection gives its slot back, and keeps running.
        first.initialized();
        assert!(first.is_initialized());
        let third = admission.admit().expect("room after an initialize");
        assert!(admission.admit().is_none());

        // So does a connection that ends before initializing.
        drop(second);
        assert!(admission.admit().is_some());
        drop(third);
        assert_eq!(
            admission.refusal_message(),
            "too many connections to the daemon are waiting to initialize (2 on the WebSocket); \
             it refuses new ones until some finish or time out, so try again in a moment"
        );
        assert_eq!(
            first.timed_out(),
            "no successful `initialize` within 10 s of connecting, so the daemon closes the \
             connection; send `initialize` as the first request"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn accepts_out_of_descriptors_back_off_up_to_a_second() {
        let shutdown = CancellationToken::new();
        let mut errors = AcceptErrors::new(TransportKind::Unix);
        let emfile = std::io::Error::from_raw_os_error(rustix::io::Errno::MFILE.raw_os_error());
        let mut waits = Vec::new();
        for _ in 0..10 {
            let started = Instant::now();
            errors.failed(&emfile, &shutdown).await;
            waits.push(started.elapsed().as_millis());
        }
        assert_eq!(
            waits,
            [10, 20, 40, 80, 160, 320, 640, 1000, 1000, 1000],
            "paused time: the waits are exact"
        );
        errors.succeeded();
        let started = Instant::now();
        errors.failed(&emfile, &shutdown).await;
        assert_eq!(started.elapsed().as_millis(), 10);

        // A connection that was reset before it was accepted: no wait.
        let aborted =
            std::io::Error::from_raw_os_error(rustix::io::Errno::CONNABORTED.raw_os_error());
        let started = Instant::now();
        errors.failed(&aborted, &shutdown).await;
        assert_eq!(started.elapsed().as_millis(), 0);
    }
}
