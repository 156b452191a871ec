//! Presence of one session: the drafts of its attached clients, and the `session/presence`
//! notification that tells every subscriber who is attached and what each is typing.
//!
//! Drafts are live only (never stored) and belong to a connection: they disappear when it
//! detaches or closes.

use std::collections::HashMap;
use std::sync::Arc;

use pi_protocol::v1::{AttachedClient, SessionPresenceParams};

use crate::events::{Notice, Subscriber};

/// Drafts by connection id.
#[derive(Debug, Default)]
pub struct Presence {
    // Invariant: only ids of current subscribers (the actor removes a draft with its
    // subscriber); empty drafts are not stored.
    drafts: HashMap<String, String>,
}

impl Presence {
    /// Records a connection's draft (empty clears it).
    pub fn set_draft(&mut self, connection_id: &str, text: String) {
        if text.is_empty() {
            self.drafts.remove(connection_id);
        } else {
            self.drafts.insert(connection_id.to_owned(), text);
        }
    }

    /// Forgets drafts of connections that are no longer subscribed.
    pub fn retain(&mut self, subscribers: &[Arc<dyn Subscriber>]) {
        self.drafts
            .retain(|id, _| subscribers.iter().any(|subscriber| subscriber.id() == id));
    }

    /// The attached clients, in attach order, with their drafts.
    pub fn clients(&self, subscribers: &[Arc<dyn Subscriber>]) -> Vec<AttachedClient> {
        subscribers
            .iter()
            .map(|subscriber| AttachedClient {
                connection_id: subscriber.id().to_owned(),
                name: subscriber.name().to_owned(),
                draft: self
                    .drafts
                    .get(subscriber.id())
                    .cloned()
                    .unwrap_or_default(),
            })
            .collect()
    }

    /// The `session/presence` notice for `subscribers` now.
    pub fn notice(&self, session_id: &str, subscribers: &[Arc<dyn Subscriber>]) -> Notice {
        Notice::Presence(SessionPresenceParams {
            session_id: session_id.to_owned(),
            clients: self.clients(subscribers),
        })
    }
}
