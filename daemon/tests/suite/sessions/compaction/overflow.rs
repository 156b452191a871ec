//! Context-overflow recovery: an overflow error compacts and retries the turn once, the failed
//! message stays in the tree but is not sent again, and a second overflow ends with pi's error
//! instead of a loop. Once with the faux provider, once through the scripted model server's
//! real Anthropic wire format.

use std::sync::Arc;

use pi_daemon::session::ModelService;
use pi_llm::faux::FauxReply;
use pi_llm::{ApiKey, InputKind, Model, ModelCost, Provider, ProviderRouter, ThinkingLevel};
use pi_protocol::v1::message::{AgentMessage, StopReason};
use pi_protocol::v1::*;
use pi_test_support::model_server::{ModelServer, Turn};
use serde_json::Value;

use super::support::{Session, compaction_end, seen, sized, summary_prompt};
use crate::suite::sessions::harness::{Options, events_until, kind};

const OVERFLOW: &str = "prompt is too long: 213456 tokens > 200000 maximum";

/// Keeps about 40 tokens: the last 50-token user message.
const KEEP_LAST_PROMPT: u64 = 40;

/// Reads events until the `n`th event of type `until`.
async fn events_until_nth(session: &mut Session, until: &str, n: usize) -> Vec<SessionEventParams> {
    let seen = std::cell::Cell::new(0);
    events_until(&mut session.events, &session.id, |event| {
        seen.set(seen.get() + usize::from(kind(event) == until));
        seen.get() == n
    })
    .await
}

fn failed_assistants(branch: &[SessionEntry]) -> usize {
    branch
        .iter()
        .filter(|entry| {
            matches!(entry, SessionEntry::Message {
                message: AgentMessage::Assistant(assistant),
                ..
            } if assistant.stop_reason == StopReason::Error)
        })
        .count()
}

#[tokio::test]
async fn an_overflow_compacts_and_retries_the_turn_without_the_failed_message() {
    let mut session = Session::start(Options::default(), KEEP_LAST_PROMPT).await;
    session
        .converse(&sized("U1"), FauxReply::text(sized("A1")))
        .await;
    let faux = &session.daemon.faux;
    faux.push(FauxReply::error(OVERFLOW));
    faux.push(FauxReply::text("## Goal\nRecovered."));
    faux.push(FauxReply::text("A2"));
    session.prompt(&sized("U2")).await;
    let events = events_until_nth(&mut session, "agent_end", 2).await;
    let kinds: Vec<String> = events.iter().map(kind).collect();
    let first_end = kinds.iter().position(|k| k == "agent_end").unwrap();
    assert_eq!(
        kinds[first_end..first_end + 5],
        [
            "agent_end",
            "compaction_start",
            "entry_added",
            "compaction_end",
            "agent_start"
        ]
    );
    let SessionEvent::CompactionEnd {
        reason,
        result: Some(result),
        will_retry,
        error_message,
        ..
    } = compaction_end(&events)
    else {
        panic!("the compaction succeeded");
    };
    assert_eq!(reason, CompactionReason::Overflow);
    assert!(will_retry && error_message.is_none());
    assert_eq!(result.first_kept_entry_id, session.entry_id("U2").await);
    assert!(
        summary_prompt(&session.daemon.faux.requests()[2])
            .starts_with("<conversation>\n[User]: U1")
    );

    // The retry sends the summary and the prompt, not the failed answer, and adds no new user
    // message.
    let requests = session.daemon.faux.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(seen(&requests[3]), ["user:The", "user:U2"]);
    let branch = session.branch().await;
    assert_eq!(
        failed_assistants(&branch),
        1,
        "the failed answer stays in the tree"
    );
    let users = branch
        .iter()
        .filter(|entry| {
            matches!(
                entry,
                SessionEntry::Message {
                    message: AgentMessage::User(_),
                    ..
                }
            )
        })
        .count();
    assert_eq!(users, 2);
    assert_eq!(session.daemon.faux.pending(), 0);
}

#[tokio::test]
async fn a_second_overflow_ends_with_an_error_and_no_loop() {
    let mut session = Session::start(Options::default(), KEEP_LAST_PROMPT).await;
    session
        .converse(&sized("U1"), FauxReply::text(sized("A1")))
        .await;
    let faux = &session.daemon.faux;
    faux.push(FauxReply::error(OVERFLOW));
    faux.push(FauxReply::text("## Goal\nTried."));
    faux.push(FauxReply::error(OVERFLOW));
    session.prompt(&sized("U2")).await;
    let events = events_until_nth(&mut session, "compaction_end", 2).await;
    let starts = events
        .iter()
        .filter(|event| kind(event) == "compaction_start")
        .count();
    assert_eq!(starts, 1, "the second overflow is not compacted again");
    assert_eq!(
        compaction_end(&events),
        SessionEvent::CompactionEnd {
            reason: CompactionReason::Overflow,
            result: None,
            aborted: false,
            will_retry: false,
            error_message: Some(
                "Context overflow recovery failed after one compact-and-retry attempt. Try \
                 reducing context or switching to a larger-context model."
                    .into()
            ),
        }
    );
    assert_eq!(
        session.daemon.faux.requests().len(),
        4,
        "no further request"
    );
    let info = session
        .client
        .call::<SessionGet>(&SessionIdParams {
            session_id: session.id.clone(),
        })
        .await
        .unwrap()
        .info;
    assert_eq!(info.status, SessionStatus::Idle);
    assert_eq!(failed_assistants(&session.branch().await), 2);

    // As in pi, the next prompt first checks the last answer: the overflow is compacted
    // before the prompt runs.
    session
        .daemon
        .faux
        .push(FauxReply::text("## Goal\nSmaller."));
    let events = session.converse("again", FauxReply::text("fine")).await;
    let kinds: Vec<String> = events.iter().map(kind).collect();
    assert_eq!(
        kinds[..4],
        [
            "compaction_start",
            "entry_added",
            "compaction_end",
            "agent_start"
        ]
    );
    let requests = session.daemon.faux.requests();
    assert_eq!(requests.len(), 6);
    assert_eq!(
        seen(&requests[5]).last().map(String::as_str),
        Some("user:again")
    );
}

/// One Anthropic model served by the scripted model server.
struct ServerModels {
    model: Model,
    router: Arc<dyn Provider>,
}

impl ModelService for ServerModels {
    fn provider(&self) -> Arc<dyn Provider> {
        self.router.clone()
    }
    fn resolve(&self, _spec: &str) -> Result<(Model, Option<ThinkingLevel>), pi_llm::ResolveError> {
        Ok((self.model.clone(), None))
    }
    fn find(&self, provider: &str, id: &str) -> Option<Model> {
        (provider == self.model.provider && id == self.model.id).then(|| self.model.clone())
    }
    fn default_model(&self) -> Option<Model> {
        Some(self.model.clone())
    }
    fn api_key(&self, _model: &Model) -> Result<Option<ApiKey>, pi_llm::KeyError> {
        Ok(Some(ApiKey::new("sk-ant-test")))
    }
    fn list(&self) -> Vec<(Model, bool)> {
        vec![(self.model.clone(), true)]
    }
}

fn texts(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| {
            let content = &message["content"];
            let text = match content.as_str() {
                Some(text) => text.to_owned(),
                None => content
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(|block| block["text"].as_str())
                    .collect::<Vec<_>>()
                    .join(""),
            };
            format!("{}:{text}", message["role"].as_str().unwrap())
        })
        .collect()
}

#[tokio::test]
async fn overflow_recovery_over_the_anthropic_wire_format() {
    let server = ModelServer::start().await;
    let model = Model {
        id: "claude-scripted".into(),
        name: "Claude (scripted)".into(),
        api: "anthropic-messages".into(),
        provider: "anthropic".into(),
        base_url: server.base_url("anthropic-messages"),
        reasoning: false,
        input: vec![InputKind::Text],
        cost: ModelCost::default(),
        context_window: 200_000,
        max_tokens: 8192,
        headers: Default::default(),
        compat: None,
    };
    let options = Options {
        models: Some(Arc::new(ServerModels {
            model,
            router: Arc::new(ProviderRouter::new()),
        })),
        ..Options::default()
    };
    let mut session = Session::start(options, KEEP_LAST_PROMPT).await;
    server.push(Turn::reply().text(sized("A1")));
    session.prompt(&sized("U1")).await;
    events_until_nth(&mut session, "agent_end", 1).await;

    server.push(Turn::context_overflow());
    server.push(Turn::reply().text("## Goal\nRecovered over the wire."));
    server.push(Turn::reply().text("A2"));
    session.prompt(&sized("U2")).await;
    let events = events_until_nth(&mut session, "agent_end", 2).await;
    assert!(matches!(
        compaction_end(&events),
        SessionEvent::CompactionEnd {
            reason: CompactionReason::Overflow,
            will_retry: true,
            result: Some(_),
            ..
        }
    ));
    server.assert_done(4);
    let requests = server.requests();
    let summarization = &requests[2].body;
    assert_eq!(summarization["max_tokens"], 13_107);
    assert!(
        summarization["system"]
            .to_string()
            .contains("You are a context summarization assistant."),
        "{summarization}"
    );
    let summary_texts = texts(summarization);
    assert_eq!(summary_texts.len(), 1);
    assert!(summary_texts[0].starts_with("user:<conversation>\n[User]: U1"));

    let retry = texts(&requests[3].body);
    assert_eq!(retry.len(), 2, "{retry:?}");
    assert!(retry[0].starts_with(
        "user:The conversation history before this point was compacted into the following \
         summary:\n\n<summary>\n## Goal\nRecovered over the wire.\n</summary>"
    ));
    assert!(retry[1].starts_with("user:U2"));
    assert_eq!(failed_assistants(&session.branch().await), 1);
    server.finish();
}
