//! Session events are typed and shared: every subscriber of one event receives the same
//! `Arc`, the session's encoder runs once per event and per notice whatever the number of
//! subscribers, and a watcher in this process reads events typed — with no encoder at all,
//! too. The recent window keeps only the encoded bytes, and a replay reads them back with
//! the encoder. The registry is driven directly, with watchers as subscribers.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use pi_daemon::session::events::{
    Delivery, EncodeError, EncoderFactory, Event, EventEncoder, NoEncoding, Notice,
};
use pi_daemon::session::recent::WindowBudget;
use pi_daemon::session::sink::{self, Sink, SinkLimits, SinkReceiver};
use pi_daemon::session::{Command, SessionRegistry, SessionServices, SessionSettings};
use pi_daemon::store::Store;
use pi_daemon::testing::{FauxModels, StaticTools};
use pi_llm::faux::{FauxProvider, FauxReply};
use pi_protocol::v1::message::AssistantMessageEvent;
use pi_protocol::v1::{SessionCreateParams, SessionEvent};
use tempfile::TempDir;

/// How many times the sessions' encoders ran.
#[derive(Debug, Default)]
struct Counts {
    events: AtomicUsize,
    notices: AtomicUsize,
    decoded: AtomicUsize,
}

/// Encoders that count their calls and encode an event as its seq, a space and its JSON.
#[derive(Debug)]
struct CountingEncoders(Arc<Counts>);

struct CountingEncoder(Arc<Counts>);

impl EncoderFactory for CountingEncoders {
    fn encoder(&self, _session_id: &str) -> Box<dyn EventEncoder> {
        Box::new(CountingEncoder(self.0.clone()))
    }
}

impl EventEncoder for CountingEncoder {
    fn event(&mut self, seq: u64, event: &SessionEvent) -> Result<Bytes, EncodeError> {
        self.0.events.fetch_add(1, Ordering::SeqCst);
        Ok(Bytes::from(format!(
            "{seq} {}",
            serde_json::to_string(event).unwrap()
        )))
    }

    fn decode(&self, encoded: &[u8]) -> Result<SessionEvent, EncodeError> {
        self.0.decoded.fetch_add(1, Ordering::SeqCst);
        let text = std::str::from_utf8(encoded).unwrap();
        let (_, json) = text.split_once(' ').unwrap();
        Ok(serde_json::from_str(json).unwrap())
    }

    fn notice(&mut self, _notice: &Notice) -> Result<Bytes, EncodeError> {
        self.0.notices.fetch_add(1, Ordering::SeqCst);
        Ok(Bytes::from_static(b"notice"))
    }

    fn quiet(&mut self) {}
}

/// A registry over a fresh store whose sessions answer "hello world" and encode with
/// `encoders`; the directory holds the store and is the sessions' cwd.
async fn registry(encoders: Arc<dyn EncoderFactory>) -> (Arc<SessionRegistry>, TempDir) {
    registry_with(encoders, SessionSettings::default()).await
}

/// Like [`registry`], with `settings`.
async fn registry_with(
    encoders: Arc<dyn EncoderFactory>,
    settings: SessionSettings,
) -> (Arc<SessionRegistry>, TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("pi.db")).await.unwrap();
    let faux = FauxProvider::new();
    faux.push(FauxReply::text("hello world"));
    let services = SessionServices {
        hooks: std::sync::Arc::new(pi_session::services::NoHooks),
        models: Arc::new(FauxModels {
            faux,
            provider: None,
        }),
        tools: Arc::new(StaticTools { tools: Vec::new() }),
        settings,
    };
    (SessionRegistry::new(store, services, encoders), dir)
}

/// A new session of `registry` in `dir`.
async fn session(registry: &SessionRegistry, dir: &TempDir) -> String {
    let params = SessionCreateParams {
        cwd: dir.path().display().to_string(),
        ..SessionCreateParams::default()
    };
    registry.create(params).await.unwrap().id
}

/// A watcher of `id`, attached.
async fn watch(registry: &SessionRegistry, id: &str, name: &str) -> SinkReceiver<Delivery> {
    let limits = SinkLimits {
        frames: 10_000,
        bytes: 1 << 20,
    };
    let (watcher, receiver): (Sink<Delivery>, _) = sink::channel(name, limits);
    registry
        .call(id, |reply| Command::Attach {
            subscriber: Arc::new(watcher.clone()),
            after_seq: None,
            reply,
        })
        .await
        .unwrap();
    receiver
}

/// Prompts `id` and waits until it has settled (its run and what follows are over).
async fn prompt_and_settle(registry: &SessionRegistry, id: &str) {
    registry
        .call(id, |reply| Command::Prompt {
            text: "hi".to_owned(),
            images: Vec::new(),
            source: pi_session::hooks::InputSource::Rpc,
            reply,
        })
        .await
        .unwrap();
    registry
        .call(id, |reply| Command::WhenSettled { reply })
        .await
        .unwrap();
}

/// A new subscriber of `id` attached with `afterSeq` `after`: the attach response.
async fn attach_after(
    registry: &SessionRegistry,
    id: &str,
    after: u64,
) -> pi_protocol::v1::SessionAttachResponse {
    let limits = SinkLimits {
        frames: 10_000,
        bytes: 1 << 20,
    };
    let (late, _receiver): (Sink<Delivery>, _) = sink::channel("late", limits);
    registry
        .call(id, |reply| Command::Attach {
            subscriber: Arc::new(late.clone()),
            after_seq: Some(after),
            reply,
        })
        .await
        .unwrap()
}

/// Everything queued for a watcher: its events and its notices.
fn drain(receiver: &mut SinkReceiver<Delivery>) -> (Vec<Arc<Event>>, usize) {
    let mut events = Vec::new();
    let mut notices = 0;
    while let Some(delivery) = receiver.try_recv() {
        match delivery {
            Delivery::Event(event) => events.push(event),
            Delivery::Notice(_) => notices += 1,
        }
    }
    (events, notices)
}

#[tokio::test]
async fn every_subscriber_gets_the_same_event_encoded_once() {
    let counts = Arc::new(Counts::default());
    let (registry, dir) = registry(Arc::new(CountingEncoders(counts.clone()))).await;
    let id = session(&registry, &dir).await;
    let mut first = watch(&registry, &id, "first").await;
    let mut second = watch(&registry, &id, "second").await;
    prompt_and_settle(&registry, &id).await;

    let (first_events, first_notices) = drain(&mut first);
    let (second_events, second_notices) = drain(&mut second);
    assert!(
        first_events
            .iter()
            .any(|event| matches!(event.event(), SessionEvent::AgentEnd { .. })),
        "the run's events arrived"
    );
    assert_eq!(first_events.len(), second_events.len());
    for (one, other) in first_events.iter().zip(&second_events) {
        assert!(Arc::ptr_eq(one, other), "event {} is one Arc", one.seq());
        assert!(
            one.encoded()
                .starts_with(format!("{} ", one.seq()).as_bytes())
        );
    }
    // Both watched the session from before its first event: each event was encoded once.
    assert_eq!(counts.events.load(Ordering::SeqCst), first_events.len());
    // Presence when each attached: two notices encoded, the second one delivered to both.
    assert_eq!(counts.notices.load(Ordering::SeqCst), 2);
    assert_eq!((first_notices, second_notices), (2, 1));
}

#[tokio::test]
async fn a_watcher_without_an_encoder_reads_typed_events() {
    let (registry, dir) = registry(Arc::new(NoEncoding)).await;
    let id = session(&registry, &dir).await;
    let mut watcher = watch(&registry, &id, "watcher").await;
    prompt_and_settle(&registry, &id).await;

    let (events, _) = drain(&mut watcher);
    let mut text = String::new();
    for event in &events {
        assert_eq!(event.session_id(), id);
        assert!(event.encoded().is_empty());
        if let SessionEvent::MessageUpdate {
            assistant_message_event: AssistantMessageEvent::TextDelta { delta, .. },
        } = event.event()
        {
            text.push_str(delta);
        }
    }
    assert_eq!(text, "hello world");
    let seqs: Vec<u64> = events.iter().map(|event| event.seq()).collect();
    assert!(
        seqs.windows(2).all(|pair| pair[1] == pair[0] + 1),
        "{seqs:?}"
    );
    assert!(matches!(
        events.last().map(|event| event.event()),
        Some(SessionEvent::AgentEnd { .. } | SessionEvent::SessionUpdated { .. })
    ));
}

#[tokio::test]
async fn a_replay_reads_the_windows_bytes_back_into_the_events_that_were_sent() {
    let counts = Arc::new(Counts::default());
    let (registry, dir) = registry(Arc::new(CountingEncoders(counts.clone()))).await;
    let id = session(&registry, &dir).await;
    let mut live = watch(&registry, &id, "live").await;
    prompt_and_settle(&registry, &id).await;
    let (sent, _) = drain(&mut live);
    assert!(sent.len() > 3, "{} events", sent.len());
    assert_eq!(counts.decoded.load(Ordering::SeqCst), 0);

    // A client that saw the first event reconnects: the rest comes from the window.
    let first = sent[0].seq();
    let attached = attach_after(&registry, &id, first).await;
    assert!(attached.gapless);
    let replayed: Vec<(u64, SessionEvent)> = attached
        .replay
        .into_iter()
        .map(|params| (params.seq, params.event))
        .collect();
    let expected: Vec<(u64, SessionEvent)> = sent[1..]
        .iter()
        .map(|event| (event.seq(), event.event().clone()))
        .collect();
    assert_eq!(replayed, expected);
    assert_eq!(counts.decoded.load(Ordering::SeqCst), expected.len());
}

/// A client that saw the first event of a run reconnects after every watcher left: whether
/// its replay was gapless.
async fn reconnect_after_all_left(settings: SessionSettings) -> bool {
    let counts = Arc::new(Counts::default());
    let (registry, dir) = registry_with(Arc::new(CountingEncoders(counts)), settings).await;
    let id = session(&registry, &dir).await;
    let mut live = watch(&registry, &id, "live").await;
    prompt_and_settle(&registry, &id).await;
    let (sent, _) = drain(&mut live);
    // The only watcher leaves.
    drop(live);
    let attached = attach_after(&registry, &id, sent[0].seq()).await;
    attached.gapless
}

#[tokio::test]
async fn unwatched_windows_share_a_daemon_wide_budget_and_one_that_does_not_fit_is_forgotten() {
    let roomy = SessionSettings {
        recent_unwatched: WindowBudget::new(1 << 20),
        ..SessionSettings::default()
    };
    assert!(
        reconnect_after_all_left(roomy).await,
        "the window fits: kept"
    );
    let full = SessionSettings {
        recent_unwatched: WindowBudget::new(0),
        ..SessionSettings::default()
    };
    assert!(
        !reconnect_after_all_left(full).await,
        "no room: forgotten once nobody watched, and the replay came from the store"
    );
}
