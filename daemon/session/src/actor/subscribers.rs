//! The actor's subscribers: attach (snapshot + replay, atomic with the event stream),
//! broadcasting events with their `seq` (encoded once, one `Arc` for every subscriber and the
//! recent window) and telling them notices (presence, questions).

use std::sync::Arc;

use pi_protocol::v1::{
    SessionAttachResponse, SessionEntry, SessionEvent, SessionEventParams, SessionSnapshot,
};

use super::SessionActor;
use crate::convert::transcode;
use crate::entries;
use crate::error::{Resync, SessionError};
use crate::events::{Delivery, DeliveryKind, Event, Notice, SessionNotice, Subscriber};
use crate::recent::Kept;

impl SessionActor {
    pub(super) async fn attach(
        &mut self,
        subscriber: Arc<dyn Subscriber>,
        after_seq: Option<u64>,
    ) -> Result<SessionAttachResponse, SessionError> {
        // Whoever left since the loop last looked has left: the window is what an unwatched
        // session keeps (or forgot) by now.
        if self.prune_subscribers() == 0 && self.run.is_none() && self.job.is_none() {
            self.share_window(true);
        }
        let (replay, gapless) = match after_seq {
            None => (Vec::new(), false),
            Some(after) => self.replay(after).await?,
        };
        self.subscribers
            .retain(|attached| attached.id() != subscriber.id());
        self.tell_kept_ui(&subscriber);
        self.subscribers.push(subscriber);
        let attached_clients = self.prune_subscribers();
        let run = self.run.as_ref();
        let snapshot = SessionSnapshot {
            info: self.info(),
            streaming_message: run
                .and_then(|run| run.streaming.as_ref())
                .map(|message| transcode("streaming message", message))
                .transpose()
                .map_err(SessionError::internal)?,
            running_tools: run.map(|run| run.running_tools.clone()).unwrap_or_default(),
            queue: self.queue_state(),
            attached_clients,
            clients: self.presence.clients(&self.subscribers),
        };
        self.announce_presence();
        Ok(SessionAttachResponse {
            snapshot,
            replay,
            gapless,
        })
    }

    /// The events after `after`: all of them when the recent window still holds them, or
    /// when the store holds those the window lacks because they are all stored entries (a
    /// fresh session's creation entries) (`true`); else the durable ones from the store
    /// (`false`).
    pub(super) async fn replay(
        &self,
        after: u64,
    ) -> Result<(Vec<SessionEventParams>, bool), SessionError> {
        if after > self.seq {
            return Err(SessionError::Resync(Resync::Ahead {
                after,
                last_seq: self.seq,
            }));
        }
        if let Some(events) = self.recent.after(after, self.seq) {
            return Ok((self.numbered(events)?, true));
        }
        if after < self.stored_through
            && let Some(events) = self.recent.after(self.stored_through, self.seq)
        {
            let mut replay = self.stored_events(after, self.stored_through).await?;
            replay.extend(self.numbered(events)?);
            return Ok((replay, true));
        }
        Ok((self.stored_events(after, self.seq).await?, false))
    }

    /// `events` as notifications of this session, read back from their bytes where the
    /// window kept only those.
    fn numbered(&self, events: Vec<Kept>) -> Result<Vec<SessionEventParams>, SessionError> {
        events
            .into_iter()
            .map(|kept| {
                let (seq, event) = match kept {
                    Kept::Encoded { seq, bytes } => (
                        seq,
                        self.encoder
                            .decode(&bytes)
                            .map_err(SessionError::internal)?,
                    ),
                    Kept::Typed(event) => (event.seq(), event.event().clone()),
                };
                Ok(SessionEventParams {
                    session_id: self.row.id.clone(),
                    seq,
                    event,
                })
            })
            .collect()
    }

    /// The stored entries numbered after `after` up to `through`, as the events that announce
    /// them; `resync_required` past the replay limit.
    async fn stored_events(
        &self,
        after: u64,
        through: u64,
    ) -> Result<Vec<SessionEventParams>, SessionError> {
        let limit = self.services.settings.replay_limit;
        let mut stored = self
            .store
            .entries_after_seq(&self.row.id, after, limit + 1)
            .await
            .map_err(crate::storage(&self.store))?;
        stored.retain(|stored| stored.seq <= through);
        if stored.len() > limit as usize {
            return Err(SessionError::Resync(Resync::TooMany { limit, after }));
        }
        stored
            .iter()
            .map(|stored| {
                let entry = entries::parse_entry(stored).map_err(SessionError::internal)?;
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

    /// Sends an event to every subscriber, encoded once and shared as one `Arc`; `seq` is the
    /// event's reserved seq (stored entries) or `None` to take the next one. The event is kept
    /// in the recent window for replay.
    pub(super) fn broadcast_with_seq(&mut self, event: SessionEvent, seq: Option<u64>) {
        let seq = match seq {
            Some(seq) => seq,
            None => {
                self.seq += 1;
                self.seq
            }
        };
        if let Some(hooks) = &self.hooks {
            hooks.observe(
                &event,
                self.run.as_ref().and_then(|run| run.streaming.as_ref()),
            );
        }
        let encoded = match self.encoder.event(seq, &event) {
            Ok(encoded) => encoded,
            Err(error) => {
                // Never happens (the wire types always serialize); the window restarts at the
                // next event, so no replay claims to be gapless across this one.
                tracing::error!(seq, %error, "cannot encode a session event");
                self.recent.clear();
                return;
            }
        };
        let event = Arc::new(Event::new(self.id.clone(), seq, event, encoded));
        let before = self.subscribers.len();
        self.subscribers.retain(|subscriber| {
            !subscriber.wants(DeliveryKind::Event)
                || subscriber.deliver(Delivery::Event(event.clone())).is_ok()
        });
        if self.subscribers.len() != before {
            self.presence.retain(&self.subscribers);
            self.announce_presence();
        }
        self.recent.push(event);
    }

    /// Tells every subscriber that wants it `notice`, encoded once; drops the ones that are
    /// gone.
    pub(super) fn notify(&mut self, notice: Notice) {
        let Some(notice) = self.encode_notice(notice) else {
            return;
        };
        let kind = notice.notice().kind();
        self.subscribers.retain(|subscriber| {
            !subscriber.wants(kind) || subscriber.deliver(Delivery::Notice(notice.clone())).is_ok()
        });
    }

    /// Keeps what an extension shows that lasts (a status text, a widget, the title), for
    /// clients that attach later.
    pub(super) fn keep_ui(&mut self, notice: &Notice) {
        use pi_protocol::v1::ExtensionUi;
        let Notice::ExtensionUi(params) = notice else {
            return;
        };
        let (key, cleared) = match &params.ui {
            ExtensionUi::Status { key, text } => (format!("status:{key}"), text.is_none()),
            ExtensionUi::Widget { key, lines, .. } => (format!("widget:{key}"), lines.is_none()),
            ExtensionUi::Title { .. } => ("title".to_owned(), false),
            ExtensionUi::Notify { .. } | ExtensionUi::EditorText { .. } => return,
        };
        if cleared {
            self.kept_ui.remove(&key);
        } else {
            self.kept_ui.insert(key, notice.clone());
        }
    }

    /// Tells a client that attaches what the extensions show now.
    fn tell_kept_ui(&mut self, subscriber: &Arc<dyn Subscriber>) {
        if !subscriber.wants(DeliveryKind::ExtensionUi) {
            return;
        }
        let kept: Vec<Notice> = self.kept_ui.values().cloned().collect();
        for notice in kept {
            if let Some(notice) = self.encode_notice(notice) {
                let _ = subscriber.deliver(Delivery::Notice(notice));
            }
        }
    }

    /// Tells every subscriber who is attached now (`session/presence`), best effort: one that
    /// is gone is dropped by the next broadcast.
    pub(super) fn announce_presence(&mut self) {
        let notice = self.presence.notice(&self.row.id, &self.subscribers);
        let Some(notice) = self.encode_notice(notice) else {
            return;
        };
        for subscriber in &self.subscribers {
            if subscriber.wants(DeliveryKind::Presence) {
                let _ = subscriber.deliver(Delivery::Notice(notice.clone()));
            }
        }
    }

    /// `notice` with the bytes the session's encoder makes of it (`None`, logged, when it
    /// cannot: a bug).
    fn encode_notice(&mut self, notice: Notice) -> Option<Arc<SessionNotice>> {
        match self.encoder.notice(&notice) {
            Ok(encoded) => Some(Arc::new(SessionNotice::new(notice, encoded))),
            Err(error) => {
                tracing::error!(%error, "cannot encode a session notice");
                None
            }
        }
    }

    /// Drops subscribers that are gone (telling the others when any left); returns
    /// how many remain.
    /// Nobody watches and nothing runs (`unwatched`): the recent window takes its bytes from
    /// the daemon-wide budget, or is forgotten at once when they do not fit (a reconnect then
    /// gets the stored entries). Watched or busy again: the share goes back.
    pub(super) fn share_window(&mut self, unwatched: bool) {
        if !unwatched {
            self.window_share = None;
            return;
        }
        if self.window_share.is_some() || self.recent.is_empty() {
            return;
        }
        match self
            .services
            .settings
            .recent_unwatched
            .take(self.recent.bytes())
        {
            Some(share) => self.window_share = Some(share),
            None => self.recent.clear(),
        }
    }

    pub(super) fn prune_subscribers(&mut self) -> u32 {
        let before = self.subscribers.len();
        self.subscribers
            .retain(|subscriber| !subscriber.is_closed());
        if self.subscribers.len() != before {
            self.presence.retain(&self.subscribers);
            self.announce_presence();
        }
        self.subscribers.len() as u32
    }
}
