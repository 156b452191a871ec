//! The actor's subscribers: attach (snapshot + replay, atomic with the event stream) and
//! broadcasting events with their `seq`.

// The actor's methods are split by concern; each file sees the actor module's imports.
use super::*;

impl SessionActor {
    pub(super) async fn attach(
        &mut self,
        connection: ConnectionHandle,
        after_seq: Option<u64>,
    ) -> Result<SessionAttachResponse, ErrorObject> {
        let replay = match after_seq {
            None => Vec::new(),
            Some(after) => self.replay(after).await?,
        };
        self.subscribers
            .retain(|subscriber| subscriber.id() != connection.id());
        self.subscribers.push(connection);
        let attached_clients = self.prune_subscribers();
        let run = self.run.as_ref();
        let snapshot = SessionSnapshot {
            info: self.info(),
            streaming_message: run
                .and_then(|run| run.streaming.as_ref())
                .map(|message| transcode("streaming message", message))
                .transpose()
                .map_err(crate::session::internal)?,
            running_tools: run.map(|run| run.running_tools.clone()).unwrap_or_default(),
            queue: self.queue_state(),
            attached_clients,
            clients: self.presence.clients(&self.subscribers),
        };
        self.presence.announce(&self.row.id, &self.subscribers);
        Ok(SessionAttachResponse { snapshot, replay })
    }

    pub(super) async fn replay(&self, after: u64) -> Result<Vec<SessionEventParams>, ErrorObject> {
        if after > self.seq {
            return Err(ErrorObject::new(
                ErrorKind::ResyncRequired,
                format!(
                    "cursor {after} is ahead of this session's history (last seq {}), so the daemon restarted \
                     since; re-read the session with `session/read` and attach without `afterSeq`",
                    self.seq
                ),
            ));
        }
        let limit = self.services.settings.replay_limit;
        let stored = self
            .store
            .entries_after_seq(&self.row.id, after, limit + 1)
            .await
            .map_err(crate::session::storage(&self.store))?;
        if stored.len() > limit as usize {
            return Err(ErrorObject::new(
                ErrorKind::ResyncRequired,
                format!(
                    "more than {limit} events happened after seq {after}; re-read the session with \
                     `session/read` and attach without `afterSeq`"
                ),
            ));
        }
        stored
            .iter()
            .map(|stored| {
                let entry = entries::parse_entry(stored).map_err(crate::session::internal)?;
                let event = match entry {
                    SessionEntry::Message { id, message, .. } => SessionEvent::MessageEnd {
                        message,
                        entry_id: Some(id),
                    },
                    other => SessionEvent::EntryAdded { entry: other },
                };
                Ok(SessionEventParams {
                    session_id: self.row.id.clone(),
                    seq: stored.seq,
                    event,
                })
            })
            .collect()
    }

    pub(super) fn broadcast(&mut self, event: SessionEvent) {
        self.broadcast_with_seq(event, None);
    }

    /// Sends an event to every subscriber; `seq` is the event's reserved seq (stored entries)
    /// or `None` to take the next one.
    pub(super) fn broadcast_with_seq(&mut self, event: SessionEvent, seq: Option<u64>) {
        let seq = match seq {
            Some(seq) => seq,
            None => {
                self.seq += 1;
                self.seq
            }
        };
        let params = SessionEventParams {
            session_id: self.row.id.clone(),
            seq,
            event,
        };
        let notification = pi_protocol::Notification::new(
            SessionEventNotification::NAME,
            serde_json::to_value(&params).ok(),
        );
        let Ok(text) = serde_json::to_string(&notification) else {
            tracing::error!(seq, "cannot serialize a session event");
            return;
        };
        self.subscribers.retain(|subscriber| {
            subscriber
                .send_notification_text(SessionEventNotification::NAME, text.clone())
                .is_ok()
        });
    }

    /// Drops subscribers whose connection has closed (telling the others when any left);
    /// returns how many remain.
    pub(super) fn prune_subscribers(&mut self) -> u32 {
        let before = self.subscribers.len();
        self.subscribers
            .retain(|subscriber| !subscriber.is_closed());
        if self.subscribers.len() != before {
            self.presence.retain(&self.subscribers);
            self.presence.announce(&self.row.id, &self.subscribers);
        }
        self.subscribers.len() as u32
    }
}
