//! What a session tells the ones attached to it: its numbered events and its notices
//! (presence, questions, answers), typed, shared by every subscriber as one `Arc`, each
//! carrying the bytes the daemon's encoder made of it once.
//!
//! The session core never builds wire bytes: an actor is given an [`EventEncoder`] (by the
//! daemon, through the registry's [`EncoderFactory`]) and keeps what it returns next to the
//! typed value. A subscriber in another process reads the bytes (a connection writes them
//! as they are); one in this process reads the value (a subagent's watcher), and with
//! [`NoEncoding`] there are no bytes at all.
//!
//! Architecture invariant: an event is encoded at most once, whatever the number of
//! subscribers, and every subscriber of one event receives the same `Arc`.

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use pi_protocol::v1::{
    ExtensionUiParams, SessionEvent, SessionPresenceParams, UiRequestParams, UiResolvedParams,
};

use crate::sink::{Closed, Sink, Weigh};

/// One numbered event of one session.
#[derive(Debug)]
pub struct Event {
    session_id: Arc<str>,
    seq: u64,
    event: SessionEvent,
    // What the session's encoder made of it; empty without one.
    encoded: Bytes,
}

/// What a session tells its watchers besides events.
#[derive(Clone, Debug, PartialEq)]
pub enum Notice {
    /// Who is attached and what each is typing (`session/presence`).
    Presence(SessionPresenceParams),
    /// A question for the people watching (`ui/request`).
    Question(UiRequestParams),
    /// A question was answered, timed out or withdrawn (`ui/resolved`).
    Resolved(UiResolvedParams),
    /// What the session's extensions show outside dialogs (`extension/ui`).
    ExtensionUi(ExtensionUiParams),
}

/// A notice with the bytes the session's encoder made of it.
#[derive(Debug)]
pub struct SessionNotice {
    notice: Notice,
    encoded: Bytes,
}

/// What a subscriber receives.
#[derive(Clone, Debug)]
pub enum Delivery {
    /// A numbered event.
    Event(Arc<Event>),
    /// A notice.
    Notice(Arc<SessionNotice>),
}

/// Kinds of deliveries, for subscribers that take only some (a connection's opt-outs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeliveryKind {
    /// Numbered events.
    Event,
    /// [`Notice::Presence`].
    Presence,
    /// [`Notice::Question`].
    Question,
    /// [`Notice::Resolved`].
    Resolved,
    /// [`Notice::ExtensionUi`].
    ExtensionUi,
}

/// An encoder could not encode a value (a bug: the wire types always serialize).
#[derive(Debug, thiserror::Error)]
#[error("cannot encode {what}: {message}")]
pub struct EncodeError {
    /// What was being encoded.
    pub what: &'static str,
    /// Why it failed.
    pub message: String,
}

/// How one session's events and notices become bytes for subscribers in other processes.
/// One per actor, so it may keep buffers between events. (`Sync` because the actor's state is
/// borrowed across awaits; only the actor's task calls it.)
pub trait EventEncoder: Send + Sync {
    /// The bytes of event `seq`.
    fn event(&mut self, seq: u64, event: &SessionEvent) -> Result<Bytes, EncodeError>;
    /// The bytes of a notice.
    fn notice(&mut self, notice: &Notice) -> Result<Bytes, EncodeError>;
    /// The event that [`EventEncoder::event`] made `encoded` of (for a replay from the recent
    /// window, which keeps only the bytes).
    fn decode(&self, encoded: &[u8]) -> Result<SessionEvent, EncodeError>;
    /// The session went quiet: give spare buffers back.
    fn quiet(&mut self);
}

/// Makes each session's encoder.
pub trait EncoderFactory: Send + Sync + fmt::Debug {
    /// The encoder of session `session_id`.
    fn encoder(&self, session_id: &str) -> Box<dyn EventEncoder>;
}

/// No bytes: for registries whose subscribers are all in this process.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoEncoding;

/// Someone attached to a session: a connection, or a watcher in this process.
pub trait Subscriber: Send + Sync + fmt::Debug {
    /// Unique in the daemon (a connection's `c12`).
    fn id(&self) -> &str;
    /// Its display name (a connection's `clientInfo.name`).
    fn name(&self) -> &str;
    /// Whether it takes deliveries of `kind`; others are skipped, not failed.
    fn wants(&self, kind: DeliveryKind) -> bool;
    /// Queues `delivery` without waiting. Fails once the subscriber is gone; a full queue
    /// closes it (the slow-consumer rule) and fails.
    fn deliver(&self, delivery: Delivery) -> Result<(), Closed>;
    /// Whether it is gone.
    fn is_closed(&self) -> bool;
    /// Completes when it is gone.
    fn closed(&self) -> BoxFuture<'_, ()>;
}

impl Event {
    /// Event `seq` of `session_id` with the bytes encoded for it.
    pub fn new(session_id: Arc<str>, seq: u64, event: SessionEvent, encoded: Bytes) -> Event {
        Event {
            session_id,
            seq,
            event,
            encoded,
        }
    }

    /// The session it belongs to.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// Its number in the session.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// The event.
    pub fn event(&self) -> &SessionEvent {
        &self.event
    }

    /// What the session's encoder made of it (empty without one).
    pub fn encoded(&self) -> &Bytes {
        &self.encoded
    }
}

impl SessionNotice {
    /// `notice` with the bytes encoded for it.
    pub fn new(notice: Notice, encoded: Bytes) -> SessionNotice {
        SessionNotice { notice, encoded }
    }

    /// The notice.
    pub fn notice(&self) -> &Notice {
        &self.notice
    }

    /// What the session's encoder made of it (empty without one).
    pub fn encoded(&self) -> &Bytes {
        &self.encoded
    }
}

impl Notice {
    /// Its kind.
    pub fn kind(&self) -> DeliveryKind {
        match self {
            Notice::Presence(_) => DeliveryKind::Presence,
            Notice::Question(_) => DeliveryKind::Question,
            Notice::Resolved(_) => DeliveryKind::Resolved,
            Notice::ExtensionUi(_) => DeliveryKind::ExtensionUi,
        }
    }
}

impl Delivery {
    /// Its kind.
    pub fn kind(&self) -> DeliveryKind {
        match self {
            Delivery::Event(_) => DeliveryKind::Event,
            Delivery::Notice(notice) => notice.notice.kind(),
        }
    }

    /// Its encoded bytes (empty without an encoder).
    pub fn encoded(&self) -> &Bytes {
        match self {
            Delivery::Event(event) => &event.encoded,
            Delivery::Notice(notice) => &notice.encoded,
        }
    }
}

impl Weigh for Delivery {
    fn weight(&self) -> usize {
        self.encoded().len()
    }
}

impl EventEncoder for NoEncoding {
    fn event(&mut self, _seq: u64, _event: &SessionEvent) -> Result<Bytes, EncodeError> {
        Ok(Bytes::new())
    }

    fn notice(&mut self, _notice: &Notice) -> Result<Bytes, EncodeError> {
        Ok(Bytes::new())
    }

    fn decode(&self, _encoded: &[u8]) -> Result<SessionEvent, EncodeError> {
        Err(EncodeError {
            what: "an event",
            message: "there are no bytes to read without an encoder".to_owned(),
        })
    }

    fn quiet(&mut self) {}
}

impl EncoderFactory for NoEncoding {
    fn encoder(&self, _session_id: &str) -> Box<dyn EventEncoder> {
        Box::new(NoEncoding)
    }
}

/// A watcher in this process: a queue of deliveries it reads typed, taking everything.
impl Subscriber for Sink<Delivery> {
    fn id(&self) -> &str {
        Sink::id(self)
    }

    fn name(&self) -> &str {
        Sink::name(self)
    }

    fn wants(&self, _kind: DeliveryKind) -> bool {
        true
    }

    fn deliver(&self, delivery: Delivery) -> Result<(), Closed> {
        self.send(delivery)
    }

    fn is_closed(&self) -> bool {
        Sink::is_closed(self)
    }

    fn closed(&self) -> BoxFuture<'_, ()> {
        Box::pin(Sink::closed(self))
    }
}
