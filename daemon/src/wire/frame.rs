//! Outgoing messages serialized once into shared [`Frame`]s: every subscriber of a session
//! gets the same bytes, and nothing is rebuilt per subscriber or per token.
//!
//! Notifications are written straight from their typed params into one buffer, without the
//! intermediate `serde_json::Value` that `pi_protocol::Notification` carries: a session event
//! costs one allocation for the frame and one serializer pass. The JSON is the same as the
//! envelope types would produce (the tests compare them as values).

use std::io::Write as _;

use pi_protocol::v1::{SessionEvent, SessionEventNotification};
use pi_protocol::{NotificationMethod as _, RequestId};
use serde::Serialize;

use crate::session::sink::Frame;
use crate::wire::WireError;

/// Room reserved for a frame beyond its payload; most session events fit.
const TYPICAL_FRAME: usize = 192;

/// The session id of every event of one session, serialized once as a JSON string.
#[derive(Clone, Debug)]
pub struct SessionIdJson(String);

impl SessionIdJson {
    /// `id` as a JSON string (quotes included).
    pub fn new(id: &str) -> Self {
        SessionIdJson(serde_json::to_string(id).unwrap_or_else(|_| "\"\"".to_owned()))
    }
}

/// The `session/event` notification for `event`, numbered `seq`.
pub fn session_event(
    session_id: &SessionIdJson,
    seq: u64,
    event: &SessionEvent,
) -> Result<Frame, WireError> {
    let mut out = Vec::with_capacity(TYPICAL_FRAME);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","method":""#);
    out.extend_from_slice(SessionEventNotification::NAME.as_bytes());
    out.extend_from_slice(br#"","params":{"sessionId":"#);
    out.extend_from_slice(session_id.0.as_bytes());
    let _ = write!(out, r#","seq":{seq},"event":"#);
    serde_json::to_writer(&mut out, event).map_err(|error| WireError::new("event", error))?;
    out.extend_from_slice(b"}}");
    Ok(Frame::from(out))
}

/// A notification named `method` with `params`.
pub fn notification(method: &str, params: &impl Serialize) -> Result<Frame, WireError> {
    let mut out = Vec::with_capacity(TYPICAL_FRAME);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","method":"#);
    serde_json::to_writer(&mut out, method)
        .map_err(|error| WireError::new("notification", error))?;
    out.extend_from_slice(br#","params":"#);
    serde_json::to_writer(&mut out, params)
        .map_err(|error| WireError::new("notification", error))?;
    out.push(b'}');
    Ok(Frame::from(out))
}

/// A successful response to request `id`.
pub fn response(id: &RequestId, result: &impl Serialize) -> Result<Frame, WireError> {
    let mut out = Vec::with_capacity(TYPICAL_FRAME);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    serde_json::to_writer(&mut out, id).map_err(|error| WireError::new("response", error))?;
    out.extend_from_slice(br#","result":"#);
    serde_json::to_writer(&mut out, result).map_err(|error| WireError::new("response", error))?;
    out.push(b'}');
    Ok(Frame::from(out))
}

#[cfg(test)]
mod tests {
    use pi_protocol::v1::message::AssistantMessageEvent;
    use pi_protocol::v1::{SessionEventParams, SessionInfo};
    use pi_protocol::{Notification, Response};
    use serde_json::{Value, json};

    use super::*;

    fn parsed(frame: &Frame) -> Value {
        serde_json::from_slice(frame).unwrap()
    }

    #[test]
    fn session_events_are_the_envelopes_json() {
        let events = [
            SessionEvent::AgentStart,
            SessionEvent::MessageUpdate {
                assistant_message_event: AssistantMessageEvent::TextDelta {
                    content_index: 2,
                    delta: "quote \" and \u{2028} newline\n".to_owned(),
                },
            },
            SessionEvent::SessionUpdated {
                info: SessionInfo {
                    id: "s\"1".to_owned(),
                    cwd: "/w".to_owned(),
                    name: None,
                    created_at: 1,
                    updated_at: 2,
                    model: None,
                    thinking_level: "off".to_owned(),
                    leaf_id: None,
                    message_count: 0,
                    first_message: None,
                    parent_session_id: None,
                    status: pi_protocol::v1::SessionStatus::Idle,
                    last_seq: 9,
                },
            },
        ];
        for (seq, event) in events.into_iter().enumerate() {
            let frame = session_event(&SessionIdJson::new("s\"1"), seq as u64, &event).unwrap();
            let params = SessionEventParams {
                session_id: "s\"1".to_owned(),
                seq: seq as u64,
                event,
            };
            let envelope = Notification::new(
                SessionEventNotification::NAME,
                Some(serde_json::to_value(&params).unwrap()),
            );
            assert_eq!(parsed(&frame), serde_json::to_value(&envelope).unwrap());
        }
    }

    #[test]
    fn notifications_and_responses_are_the_envelopes_json() {
        let params = json!({"sessionId": "a", "clients": []});
        let frame = notification("session/presence", &params).unwrap();
        assert_eq!(
            parsed(&frame),
            serde_json::to_value(Notification::new("session/presence", Some(params))).unwrap()
        );
        let id = RequestId::Integer(7);
        let frame = response(&id, &json!({"ok": true})).unwrap();
        assert_eq!(
            parsed(&frame),
            serde_json::to_value(Response::new(id, json!({"ok": true}))).unwrap()
        );
    }
}
