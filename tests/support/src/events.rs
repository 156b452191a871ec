//! Reading a session's events from a client's notification stream, for tests.

use std::time::Duration;

use pi_client::Notifications;
use pi_protocol::v1::SessionEventParams;

/// How long a test waits for the next event before failing with what it saw.
pub const EVENT_TIMEOUT: Duration = Duration::from_secs(20);

/// Reads `session/event` notifications of `session_id` until `predicate` matches one;
/// returns every event read, the match last. Panics (listing what was seen) on timeout.
pub async fn events_until(
    notifications: &mut Notifications,
    session_id: &str,
    predicate: impl Fn(&SessionEventParams) -> bool,
) -> Vec<SessionEventParams> {
    let mut seen = Vec::new();
    loop {
        let notification = tokio::time::timeout(EVENT_TIMEOUT, notifications.next())
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "no matching event in time; saw {:?}",
                    seen.iter().map(kind).collect::<Vec<_>>()
                )
            })
            .expect("the connection is open");
        if notification.method != "session/event" {
            continue;
        }
        let params: SessionEventParams =
            serde_json::from_value(notification.params.unwrap()).unwrap();
        if params.session_id != session_id {
            continue;
        }
        let done = predicate(&params);
        seen.push(params);
        if done {
            return seen;
        }
    }
}

/// Reads events until the run's `agent_end`.
pub async fn run_events(
    notifications: &mut Notifications,
    session_id: &str,
) -> Vec<SessionEventParams> {
    events_until(notifications, session_id, |event| {
        kind(event) == "agent_end"
    })
    .await
}

/// The event's `type`.
pub fn kind(event: &SessionEventParams) -> String {
    serde_json::to_value(&event.event).unwrap()["type"]
        .as_str()
        .unwrap()
        .to_owned()
}
