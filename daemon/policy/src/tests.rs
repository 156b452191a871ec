//! The gate against a fake session: a scripted [`ApprovalPort`] answers the questions and
//! keeps what is recorded; the store is a file database opened as the daemon opens it.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};

use pi_agent::ProgressSink;
use pi_protocol::v1::UiAnswer;
use tokio_util::sync::CancellationToken;

use super::*;

/// Answers questions from a script; keeps the questions' titles and the records.
#[derive(Default)]
struct FakeSession {
    answers: Mutex<VecDeque<Result<UiAskResponse, String>>>,
    titles: Mutex<Vec<String>>,
    records: Mutex<Vec<Value>>,
}

impl FakeSession {
    fn answer(&self, answer: Result<UiAskResponse, String>) {
        self.answers.lock().unwrap().push_back(answer);
    }

    fn asked(&self) -> usize {
        self.titles.lock().unwrap().len()
    }

    fn last_record(&self) -> Value {
        self.records.lock().unwrap().last().cloned().unwrap()
    }
}

impl ApprovalPort for FakeSession {
    fn record(&self, decision: Value) -> BoxFuture<'_, Result<(), PortError>> {
        self.records.lock().unwrap().push(decision);
        Box::pin(async { Ok(()) })
    }

    fn ask(
        &self,
        request: UiRequest,
        _timeout: Duration,
    ) -> BoxFuture<'_, Result<UiAskResponse, PortError>> {
        if let UiRequest::Select { title, options, .. } = &request {
            assert_eq!(options, &[ALLOW_ONCE, ALLOW_SESSION, ALLOW_PROJECT, DENY]);
            self.titles.lock().unwrap().push(title.clone());
        }
        let answer = self
            .answers
            .lock()
            .unwrap()
            .pop_front()
            .expect("a scripted answer");
        Box::pin(async move { answer.map_err(PortError::from) })
    }
}

/// An answer `value` from client `tui`.
fn chosen(value: &str) -> Result<UiAskResponse, String> {
    Ok(UiAskResponse {
        request_id: "q".to_owned(),
        answer: UiAnswer {
            value: Some(value.to_owned()),
            ..UiAnswer::default()
        },
        answered_by: Some("tui".to_owned()),
    })
}

fn timed_out() -> Result<UiAskResponse, String> {
    Ok(UiAskResponse {
        request_id: "q".to_owned(),
        answer: UiAnswer {
            cancelled: true,
            ..UiAnswer::default()
        },
        answered_by: None,
    })
}

/// A `write` that counts its runs.
struct Write(AtomicUsize);

impl Tool for Write {
    fn name(&self) -> &str {
        "write"
    }

    fn label(&self) -> &str {
        "Write"
    }

    fn description(&self) -> &str {
        "writes"
    }

    fn parameters(&self) -> &Value {
        &Value::Null
    }

    fn execute(self: Arc<Self>, _invocation: ToolInvocation) -> ToolFuture {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { ToolOutput::text("written") })
    }
}

struct World {
    manager: Arc<PolicyManager>,
    write: Arc<Write>,
    dir: tempfile::TempDir,
}

impl World {
    async fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("pi.db")).await.unwrap();
        World {
            manager: Arc::new(PolicyManager::new(ResourceRoots::default(), store)),
            write: Arc::new(Write(AtomicUsize::new(0))),
            dir,
        }
    }

    /// The gated `write` of session `id` (in mode `mode`), asking `session`.
    fn gate(&self, id: &str, mode: Mode, session: &Arc<FakeSession>) -> Arc<dyn Tool> {
        self.manager.set_mode(id, mode);
        pi_agent::layered(
            self.write.clone(),
            PolicyGate {
                manager: self.manager.clone(),
                session_id: id.to_owned(),
                cwd: self.dir.path().to_path_buf(),
                port: session.clone(),
            },
        )
    }

    fn runs(&self) -> usize {
        self.write.0.load(Ordering::SeqCst)
    }
}

async fn call(gate: &Arc<dyn Tool>) -> ToolOutput {
    let (progress, _updates) = ProgressSink::new();
    gate.clone()
        .execute(ToolInvocation {
            call_id: "c".to_owned(),
            arguments: json!({"path": "a.txt", "content": "x"}),
            cancel: CancellationToken::new(),
            progress,
        })
        .await
}

#[tokio::test]
async fn each_answer_decides_the_call_and_the_decision_is_recorded() {
    let world = World::new().await;
    let session = Arc::new(FakeSession::default());
    let gate = world.gate("s1", Mode::AskWrites, &session);

    session.answer(chosen(DENY));
    assert_eq!(
        call(&gate).await,
        ToolOutput::error(
            "Denied by the user: `write` on a.txt was not allowed. Do something else or ask \
             the user."
        )
    );
    assert_eq!(world.runs(), 0);
    assert!(
        session.titles.lock().unwrap()[0].starts_with("Allow `write` on a.txt? ("),
        "{:?}",
        session.titles
    );
    assert_eq!(session.last_record()["decision"], "denied");
    assert_eq!(session.last_record()["answeredBy"], "tui");

    session.answer(chosen(ALLOW_ONCE));
    assert_eq!(call(&gate).await, ToolOutput::text("written"));
    // Once means once.
    session.answer(chosen("not now, the tests are running"));
    assert_eq!(
        call(&gate).await,
        ToolOutput::error("Denied by the user: not now, the tests are running")
    );
    session.answer(timed_out());
    assert_eq!(
        call(&gate).await,
        ToolOutput::error("Denied: nobody answered within 300 s (approvals.askTimeoutMs)")
    );
    session.answer(Err("no client can answer".to_owned()));
    assert_eq!(
        call(&gate).await,
        ToolOutput::error("Denied: the question could not be asked (no client can answer)")
    );
    assert_eq!(world.runs(), 1);
    assert_eq!(session.asked(), 5);
}

#[tokio::test]
async fn allowed_for_the_session_or_the_project_is_not_asked_again() {
    let world = World::new().await;
    let first = Arc::new(FakeSession::default());
    let gate = world.gate("s1", Mode::AskWrites, &first);
    first.answer(chosen(ALLOW_SESSION));
    assert_eq!(call(&gate).await, ToolOutput::text("written"));
    assert_eq!(call(&gate).await, ToolOutput::text("written"));
    assert_eq!(first.asked(), 1);
    assert_eq!(
        first.last_record()["by"],
        "allowed for this session earlier"
    );
    // A closed session forgets it.
    world.manager.session_closed("s1");
    first.answer(chosen(ALLOW_PROJECT));
    assert_eq!(call(&gate).await, ToolOutput::text("written"));
    assert_eq!(first.asked(), 2);

    // Another session in the same directory: allowed always in this project, from the store.
    let second = Arc::new(FakeSession::default());
    let other = world.gate("s2", Mode::AskWrites, &second);
    assert_eq!(call(&other).await, ToolOutput::text("written"));
    assert_eq!(second.asked(), 0);
    assert_eq!(second.last_record()["by"], "allowed always in this project");
    assert_eq!(world.runs(), 4);
}

#[tokio::test]
async fn read_only_denies_without_asking_and_yolo_runs_without_a_record() {
    let world = World::new().await;
    let session = Arc::new(FakeSession::default());
    let denied = call(&world.gate("s1", Mode::ReadOnly, &session)).await;
    assert!(denied.is_error);
    let text = serde_json::to_value(&denied.content).unwrap()[0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        text.starts_with("Denied by policy: ")
            && text.ends_with(
                " does not allow `write` on a.txt. Do something else, or ask the user to \
                 change the approvals."
            ),
        "{text}"
    );
    assert_eq!(session.last_record()["decision"], "denied");

    let free = Arc::new(FakeSession::default());
    assert_eq!(
        call(&world.gate("s2", Mode::Yolo, &free)).await,
        ToolOutput::text("written")
    );
    assert_eq!((free.asked(), free.records.lock().unwrap().len()), (0, 0));
    assert_eq!(session.asked(), 0);
}

#[test]
fn every_refusal_tells_the_model_what_happened_and_what_to_do() {
    let cases = [
        (
            Denied::ByPolicy {
                call: "`bash` `rm -rf build`".to_owned(),
                by: "a rule in .pi/settings.json".to_owned(),
            },
            "Denied by policy: a rule in .pi/settings.json does not allow `bash` `rm -rf build`. \
             Do something else, or ask the user to change the approvals.",
        ),
        (
            Denied::NotAsked("no client can answer".into()),
            "Denied: the question could not be asked (no client can answer)",
        ),
        (
            Denied::Unanswered(300),
            "Denied: nobody answered within 300 s (approvals.askTimeoutMs)",
        ),
        (
            Denied::ByUser("`write` notes.txt".to_owned()),
            "Denied by the user: `write` notes.txt was not allowed. Do something else or ask \
             the user.",
        ),
        (
            Denied::UserReason("not now".to_owned()),
            "Denied by the user: not now",
        ),
        (Denied::EmptyAnswer, "Denied: the answer was empty"),
        (Denied::Aborted, "Operation aborted"),
    ];
    for (denied, text) in cases {
        assert_eq!(denied.to_string(), text);
    }
}
