//! Outgoing messages serialized once into shared [`Frame`]s: every subscriber of a session
//! gets the same bytes, and nothing is rebuilt per subscriber or per token. A session's
//! events and notices are encoded by its [`JsonRpcEncoder`], the daemon's
//! [`EventEncoder`](crate::session::events::EventEncoder).
//!
//! Notifications are written straight from their typed params into one buffer, without the
//! intermediate `serde_json::Value` that `pi_protocol::Notification` carries: a session event
//! costs one allocation for the frame and one serializer pass. The JSON is the same as the
//! envelope types would produce (the tests compare them as values).

use std::io::Write as _;

use bytes::{BufMut as _, Bytes, BytesMut};

use pi_protocol::v1::message::AssistantMessageEvent;
use pi_protocol::v1::{
    SessionEvent, SessionEventNotification, SessionEventParams, SessionPresence,
    UiRequestNotification, UiResolvedNotification,
};
use pi_protocol::{NotificationMethod as _, RequestId};
use serde::Serialize;

use crate::session::convert::WireError;
use crate::session::events::{EncodeError, EncoderFactory, EventEncoder, Notice};

/// One serialized message (a JSON-RPC notification or response, without a line end).
pub type Frame = Bytes;

/// Room reserved for a frame; most session events fit without regrowing.
const TYPICAL_FRAME: usize = 512;
/// Room for a delta frame besides its delta (envelope, session id, numbers, escapes).
const DELTA_FRAME_OVERHEAD: usize = 192;
/// Size of the buffers a [`FrameArena`] cuts frames from.
const ARENA_CHUNK: usize = 2 * 1024;

/// Frames cut one after another from a shared buffer, so that a stream of small frames (one
/// per token) costs one allocation per [`ARENA_CHUNK`] rather than one or two per frame. A
/// chunk is freed when the last frame cut from it is dropped. [`FrameArena::release`] gives
/// the spare room back when a session goes quiet.
#[derive(Debug, Default)]
pub struct FrameArena {
    buffer: BytesMut,
}

impl FrameArena {
    /// The buffer to write the next frame into, with at least `room` bytes spare (a frame
    /// that writes more still fits: the buffer grows).
    fn start(&mut self, room: usize) -> &mut BytesMut {
        if self.buffer.capacity() - self.buffer.len() < room {
            self.buffer = BytesMut::with_capacity(room.max(ARENA_CHUNK));
        }
        &mut self.buffer
    }

    /// Cuts what was written since [`FrameArena::start`] into a frame.
    fn finish(&mut self) -> Frame {
        self.buffer.split().freeze()
    }

    /// Drops the spare room (frames already cut keep their bytes).
    pub fn release(&mut self) {
        if self.buffer.capacity() > 0 {
            self.buffer = BytesMut::new();
        }
    }
}

/// The session id of every event of one session, serialized once as a JSON string.
#[derive(Clone, Debug)]
pub struct SessionIdJson(String);

impl SessionIdJson {
    /// `id` as a JSON string (quotes included).
    pub fn new(id: &str) -> Self {
        SessionIdJson(serde_json::to_string(id).unwrap_or_else(|_| "\"\"".to_owned()))
    }
}

/// The `session/event` notification for `event`, numbered `seq`, cut from `arena`.
pub fn session_event(
    arena: &mut FrameArena,
    session_id: &SessionIdJson,
    seq: u64,
    event: &SessionEvent,
) -> Result<Frame, WireError> {
    if let SessionEvent::MessageUpdate {
        assistant_message_event,
    } = event
    {
        // The per-token events, written directly: a few static pieces and one escaped
        // string, instead of the serializer's field-by-field walk.
        let delta = match assistant_message_event {
            AssistantMessageEvent::TextDelta {
                content_index,
                delta,
            } => Some(("text_delta", *content_index, delta)),
            AssistantMessageEvent::ThinkingDelta {
                content_index,
                delta,
            } => Some(("thinking_delta", *content_index, delta)),
            AssistantMessageEvent::ToolcallDelta {
                content_index,
                delta,
                arguments: None,
            } => Some(("toolcall_delta", *content_index, delta)),
            _ => None,
        };
        if let Some((kind, content_index, delta)) = delta {
            return delta_frame(arena, session_id, seq, kind, content_index, delta);
        }
    }
    let out = arena.start(TYPICAL_FRAME);
    let start = out.len();
    out.put_slice(br#"{"jsonrpc":"2.0","method":""#);
    out.put_slice(SessionEventNotification::NAME.as_bytes());
    out.put_slice(br#"","params":{"sessionId":"#);
    out.put_slice(session_id.0.as_bytes());
    let mut writer = out.writer();
    let _ = write!(writer, r#","seq":{seq},"event":"#);
    if let Err(error) = serde_json::to_writer(&mut writer, event) {
        arena.buffer.truncate(start);
        return Err(WireError::new("event", error));
    }
    let out = writer.into_inner();
    out.put_slice(b"}}");
    Ok(arena.finish())
}

/// A `message_update` frame carrying one delta of `kind`.
fn delta_frame(
    arena: &mut FrameArena,
    session_id: &SessionIdJson,
    seq: u64,
    kind: &str,
    content_index: usize,
    delta: &str,
) -> Result<Frame, WireError> {
    let out = arena.start(DELTA_FRAME_OVERHEAD + session_id.0.len() + delta.len());
    let start = out.len();
    out.put_slice(br#"{"jsonrpc":"2.0","method":""#);
    out.put_slice(SessionEventNotification::NAME.as_bytes());
    out.put_slice(br#"","params":{"sessionId":"#);
    out.put_slice(session_id.0.as_bytes());
    out.put_slice(br#","seq":"#);
    let mut numbers = itoa::Buffer::new();
    out.put_slice(numbers.format(seq).as_bytes());
    out.put_slice(br#","event":{"type":"message_update","assistantMessageEvent":{"type":""#);
    out.put_slice(kind.as_bytes());
    out.put_slice(br#"","contentIndex":"#);
    out.put_slice(numbers.format(content_index).as_bytes());
    out.put_slice(br#","delta":"#);
    let mut writer = out.writer();
    if let Err(error) = serde_json::to_writer(&mut writer, delta) {
        arena.buffer.truncate(start);
        return Err(WireError::new("delta event", error));
    }
    writer.into_inner().put_slice(b"}}}}");
    Ok(arena.finish())
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

/// The daemon's encoding of a session's events and notices: JSON-RPC notifications, each
/// event cut from the session's [`FrameArena`] (the per-token deltas written by hand).
#[derive(Debug)]
pub struct JsonRpcEncoder {
    arena: FrameArena,
    session_id: SessionIdJson,
}

/// Makes every session's [`JsonRpcEncoder`].
#[derive(Clone, Copy, Debug, Default)]
pub struct JsonRpcEncoders;

impl EncoderFactory for JsonRpcEncoders {
    fn encoder(&self, session_id: &str) -> Box<dyn EventEncoder> {
        Box::new(JsonRpcEncoder {
            arena: FrameArena::default(),
            session_id: SessionIdJson::new(session_id),
        })
    }
}

impl EventEncoder for JsonRpcEncoder {
    fn event(&mut self, seq: u64, event: &SessionEvent) -> Result<Bytes, EncodeError> {
        session_event(&mut self.arena, &self.session_id, seq, event).map_err(encode_error)
    }

    fn notice(&mut self, notice: &Notice) -> Result<Bytes, EncodeError> {
        let encoded = match notice {
            Notice::Presence(params) => notification(SessionPresence::NAME, params),
            Notice::Question(params) => notification(UiRequestNotification::NAME, params),
            Notice::Resolved(params) => notification(UiResolvedNotification::NAME, params),
            Notice::ExtensionUi(params) => {
                notification(pi_protocol::v1::ExtensionUiNotification::NAME, params)
            }
        };
        encoded.map_err(encode_error)
    }

    fn decode(&self, encoded: &[u8]) -> Result<SessionEvent, EncodeError> {
        #[derive(serde::Deserialize)]
        struct EventFrame {
            params: SessionEventParams,
        }
        serde_json::from_slice::<EventFrame>(encoded)
            .map(|frame| frame.params.event)
            .map_err(|error| EncodeError {
                what: "a session event's frame",
                message: error.to_string(),
            })
    }

    fn quiet(&mut self) {
        self.arena.release();
    }
}

fn encode_error(error: WireError) -> EncodeError {
    EncodeError {
        what: "a session message",
        message: error.to_string(),
    }
}

#[cfg(test)]
mod tests {
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
            SessionEvent::MessageUpdate {
                assistant_message_event: AssistantMessageEvent::ThinkingDelta {
                    content_index: 0,
                    delta: "\u{1}control\tand \\ backslash".to_owned(),
                },
            },
            SessionEvent::MessageUpdate {
                assistant_message_event: AssistantMessageEvent::ToolcallDelta {
                    content_index: 7,
                    delta: "{\"path\":".to_owned(),
                    arguments: None,
                },
            },
            SessionEvent::MessageUpdate {
                assistant_message_event: AssistantMessageEvent::ToolcallDelta {
                    content_index: 7,
                    delta: "\"a\"}".to_owned(),
                    arguments: Some(serde_json::json!({"path": "a"})),
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
                    task_name: None,
                    missing_env: Vec::new(),
                    status: pi_protocol::v1::SessionStatus::Idle,
                    last_seq: 9,
                    warnings: Vec::new(),
                    pi_file: None,
                    questions: 0,
                },
            },
        ];
        // One arena for all: each frame is its own bytes, whatever was cut before it.
        let mut arena = FrameArena::default();
        let mut frames = Vec::new();
        for (seq, event) in events.into_iter().enumerate() {
            let seq = seq as u64 * 1_000_003;
            let frame =
                session_event(&mut arena, &SessionIdJson::new("s\"1"), seq, &event).unwrap();
            let params = SessionEventParams {
                session_id: "s\"1".to_owned(),
                seq,
                event,
            };
            let envelope = Notification::new(
                SessionEventNotification::NAME,
                Some(serde_json::to_value(&params).unwrap()),
            );
            let expected = serde_json::to_value(&envelope).unwrap();
            assert_eq!(parsed(&frame), expected);
            frames.push((frame, expected));
        }
        // Later frames cut from the same buffer left the earlier ones as they were.
        for (frame, expected) in &frames {
            assert_eq!(&parsed(frame), expected);
        }
    }

    #[test]
    fn the_encoder_reads_its_event_frames_back_as_the_events() {
        let mut encoder = JsonRpcEncoder {
            arena: FrameArena::default(),
            session_id: SessionIdJson::new("s"),
        };
        let events = [
            SessionEvent::TurnStart,
            SessionEvent::MessageUpdate {
                assistant_message_event: AssistantMessageEvent::TextDelta {
                    content_index: 1,
                    delta: "a \"quoted\" line\n".to_owned(),
                },
            },
            SessionEvent::MessageUpdate {
                assistant_message_event: AssistantMessageEvent::ToolcallDelta {
                    content_index: 0,
                    delta: "{\"a\":".to_owned(),
                    arguments: None,
                },
            },
            SessionEvent::AgentEnd { message_count: 3 },
        ];
        for (seq, event) in events.into_iter().enumerate() {
            let frame = encoder.event(seq as u64, &event).unwrap();
            assert_eq!(encoder.decode(&frame).unwrap(), event);
        }
        let error = encoder.decode(b"{\"params\": 1}").unwrap_err();
        assert_eq!(error.what, "a session event's frame");
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
