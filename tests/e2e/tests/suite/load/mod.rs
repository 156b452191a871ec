//! The load and fault suite: the real `pid` under many sessions at once, crashes, disconnects,
//! slow readers, bad input and shutdowns. Each test is bounded so that the whole suite stays
//! within a few minutes on two cores; timings are measured by the benches, never asserted
//! here.
//!
//! - `l1_concurrency`: 100 concurrent `pictl run`s, each a ten-turn tool scenario.
//! - `l2_crash`: `kill -9` while 20 sessions stream, ten times.
//! - `l3_reconnect`: 500 random disconnects and gapless catch-ups.
//! - `l4_slow_reader`: a client that stops reading during a long stream.
//! - `l5_bad_input`: malformed and hostile messages on both sockets, and generated ones.
//! - `l6_shutdown`: SIGTERM while three sessions stream.
//! - `l7_connections`: floods of connections from outside (another user's half-open
//!   handshakes, silent Unix connections, refused upgrades) and 10 MB messages.
//! - `l8_windows`: three sessions streaming more than all recent windows may hold together.

mod l1_concurrency;
mod l2_crash;
mod l3_reconnect;
mod l4_slow_reader;
mod l5_bad_input;
mod l6_shutdown;
mod l7_connections;
mod l8_windows;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_client::{Client, Notifications};
use pi_protocol::v1::{EntryRecord, ReadScope, SessionEventParams, SessionRead, SessionReadParams};
use tokio::sync::watch;

/// How long a load test waits for a condition before failing with what it saw. Generous:
/// it only guards against hangs.
pub const WAIT: Duration = Duration::from_secs(60);

/// Collects the `session/event` notifications of one client in the background.
pub struct Recorder {
    events: Arc<Mutex<Vec<SessionEventParams>>>,
    // Bumped after every event; `wait_for` watches it.
    changed: watch::Receiver<usize>,
    task: tokio::task::JoinHandle<()>,
}

impl Recorder {
    /// Starts recording `notifications`.
    pub fn start(mut notifications: Notifications) -> Recorder {
        let events = Arc::new(Mutex::new(Vec::new()));
        let (bump, changed) = watch::channel(0);
        let sink = events.clone();
        let task = tokio::spawn(async move {
            while let Some(notification) = notifications.next().await {
                if notification.method != "session/event" {
                    continue;
                }
                let Some(params) = notification.params else {
                    continue;
                };
                let Ok(event) = serde_json::from_value::<SessionEventParams>(params) else {
                    continue;
                };
                let count = {
                    let mut events = sink.lock().unwrap();
                    events.push(event);
                    events.len()
                };
                bump.send_replace(count);
            }
        });
        Recorder {
            events,
            changed,
            task,
        }
    }

    /// Everything recorded so far.
    pub fn events(&self) -> Vec<SessionEventParams> {
        self.events.lock().unwrap().clone()
    }

    /// Waits until `done` holds for the events recorded so far; panics after [`WAIT`].
    pub async fn wait_for(&mut self, what: &str, done: impl Fn(&[SessionEventParams]) -> bool) {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            if done(&self.events.lock().unwrap()) {
                return;
            }
            let changed = tokio::time::timeout_at(deadline, self.changed.changed()).await;
            match changed {
                Ok(Ok(())) => {}
                Ok(Err(_)) => {
                    assert!(
                        done(&self.events.lock().unwrap()),
                        "the connection ended before {what}"
                    );
                    return;
                }
                Err(_) => panic!(
                    "timed out waiting for {what}; saw {:?}",
                    self.events()
                        .iter()
                        .map(pi_test_support::events::kind)
                        .collect::<Vec<_>>()
                ),
            }
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The `type` of a recorded event.
pub fn kind(event: &SessionEventParams) -> String {
    pi_test_support::events::kind(event)
}

/// Every stored entry of a session (the whole tree), in creation order.
pub async fn read_tree(client: &Client, session_id: &str) -> Vec<EntryRecord> {
    let mut entries = Vec::new();
    let mut cursor = None;
    loop {
        let page = client
            .call::<SessionRead>(&SessionReadParams {
                session_id: session_id.to_owned(),
                scope: ReadScope::Tree,
                cursor: cursor.clone(),
                limit: Some(1000),
            })
            .await
            .unwrap();
        entries.extend(page.entries);
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return entries,
        }
    }
}

/// The entry ids the events announced as stored (durable events).
pub fn announced_entries(events: &[SessionEventParams]) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match &event.event {
            pi_protocol::v1::SessionEvent::MessageEnd {
                entry_id: Some(id), ..
            } => Some(id.clone()),
            pi_protocol::v1::SessionEvent::EntryAdded { entry } => serde_json::to_value(entry)
                .unwrap()["id"]
                .as_str()
                .map(str::to_owned),
            _ => None,
        })
        .collect()
}
