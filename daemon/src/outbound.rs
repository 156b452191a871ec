//! What a connection's one outbound queue carries, and the connection as a session
//! subscriber.
//!
//! A connection's responses and the deliveries of every session it attached to go through
//! one bounded queue ([`ConnectionSink`]), so they reach the peer in the order they were
//! queued; the writer writes each item's bytes as they are. A delivery is queued as its
//! bytes only (the session's encoding of it, shared with every other connection), so a slow
//! peer's queue keeps no typed events alive. The queue's bounds are the slow-consumer rule of
//! [`crate::session::sink`].

use bytes::Bytes;
use futures_util::future::BoxFuture;
use pi_protocol::NotificationMethod as _;
use pi_protocol::v1::{
    SessionEventNotification, SessionPresence, UiRequestNotification, UiResolvedNotification,
};

use crate::session::events::{Delivery, DeliveryKind, Subscriber};
use crate::session::sink::{Closed, Sink, Weigh};

/// One item of a connection's outbound queue.
#[derive(Clone, Debug)]
pub enum Outbound {
    /// A message: a response, a daemon-wide notification, what a session delivered.
    Frame(Bytes),
}

/// A connection's outbound queue.
pub type ConnectionSink = Sink<Outbound>;

/// A connection attached to sessions: deliveries go into its outbound queue, except the kinds
/// its peer opted out of (`initialize`'s `optOutNotifications`).
#[derive(Clone, Debug)]
pub struct ConnectionSubscriber(pub ConnectionSink);

impl Outbound {
    /// The bytes to write.
    pub fn bytes(&self) -> &Bytes {
        match self {
            Outbound::Frame(bytes) => bytes,
        }
    }
}

impl Weigh for Outbound {
    fn weight(&self) -> usize {
        self.bytes().len()
    }
}

/// The notification a delivery of `kind` is written as.
pub fn method_of(kind: DeliveryKind) -> &'static str {
    match kind {
        DeliveryKind::Event => SessionEventNotification::NAME,
        DeliveryKind::Presence => SessionPresence::NAME,
        DeliveryKind::Question => UiRequestNotification::NAME,
        DeliveryKind::Resolved => UiResolvedNotification::NAME,
        DeliveryKind::ExtensionUi => pi_protocol::v1::ExtensionUiNotification::NAME,
    }
}

impl Subscriber for ConnectionSubscriber {
    fn id(&self) -> &str {
        self.0.id()
    }

    fn name(&self) -> &str {
        self.0.name()
    }

    fn wants(&self, kind: DeliveryKind) -> bool {
        self.0.wants(method_of(kind))
    }

    fn deliver(&self, delivery: Delivery) -> Result<(), Closed> {
        self.0.send(Outbound::Frame(delivery.encoded().clone()))
    }

    fn is_closed(&self) -> bool {
        self.0.is_closed()
    }

    fn closed(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.0.closed())
    }
}
