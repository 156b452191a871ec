//! Loading stored sessions: each session has its own gate, so one slow load (a session whose
//! tools take long to build) never holds up another session's, and a second load of the same
//! session waits for the first and gets the same actor.

use std::sync::Arc;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use pi_agent::Tool;
use pi_daemon::session::events::NoEncoding;
use pi_daemon::session::{
    Command, SessionRegistry, SessionServices, SessionSettings, ToolEnvironment, ToolFactory,
};
use pi_daemon::store::Store;
use pi_daemon::testing::FauxModels;
use pi_llm::faux::FauxProvider;
use pi_protocol::v1::SessionCreateParams;
use tokio::sync::mpsc;

/// A factory whose `tools()` for one chosen session blocks until released, telling the test
/// when it is entered.
#[derive(Default)]
struct Gate {
    // (the session held, released)
    state: Mutex<(Option<String>, bool)>,
    released: Condvar,
    entered: Mutex<Option<mpsc::UnboundedSender<String>>>,
}

impl Gate {
    fn release(&self) {
        self.state.lock().unwrap().1 = true;
        self.released.notify_all();
    }
}

struct GatedTools(Arc<Gate>);

impl ToolFactory for GatedTools {
    fn tools(
        &self,
        environment: &ToolEnvironment,
        _names: &[String],
    ) -> Result<Vec<Arc<dyn Tool>>, pi_daemon::session::services::ToolsError> {
        let gate = &self.0;
        let mut state = gate.state.lock().unwrap();
        if state.0.as_deref() == Some(environment.session_id.as_str()) && !state.1 {
            if let Some(entered) = gate.entered.lock().unwrap().as_ref() {
                let _ = entered.send(environment.session_id.clone());
            }
            while !state.1 {
                state = gate.released.wait(state).unwrap();
            }
        }
        Ok(Vec::new())
    }

    fn default_names(&self) -> Vec<String> {
        Vec::new()
    }
}

fn services(gate: &Arc<Gate>) -> SessionServices {
    SessionServices {
        hooks: std::sync::Arc::new(pi_session::services::NoHooks),
        models: Arc::new(FauxModels {
            faux: FauxProvider::new(),
            provider: None,
        }),
        tools: Arc::new(GatedTools(gate.clone())),
        settings: SessionSettings::default(),
    }
}

async fn get(registry: &SessionRegistry, id: &str) {
    registry
        .call(id, |reply| Command::Get { reply })
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_sessions_slow_load_never_holds_up_anothers() {
    let dir = tempfile::tempdir().unwrap();
    let database = dir.path().join("pi.db");
    let gate = Arc::new(Gate::default());
    let first = SessionRegistry::new(
        Store::open(&database).await.unwrap(),
        services(&gate),
        Arc::new(NoEncoding),
    );
    let mut ids = Vec::new();
    for _ in 0..2 {
        let params = SessionCreateParams {
            cwd: dir.path().display().to_string(),
            ..SessionCreateParams::default()
        };
        ids.push(first.create(params).await.unwrap().id);
    }
    first.shutdown().await;
    let (a, b) = (ids[0].clone(), ids[1].clone());

    // A daemon started again: nothing loaded. A's load is held inside its tools.
    let registry = SessionRegistry::new(
        Store::open(&database).await.unwrap(),
        services(&gate),
        Arc::new(NoEncoding),
    );
    let (entered, mut entering) = mpsc::unbounded_channel();
    *gate.entered.lock().unwrap() = Some(entered);
    gate.state.lock().unwrap().0 = Some(a.clone());
    let loading_a = tokio::spawn({
        let registry = registry.clone();
        let a = a.clone();
        async move { get(&registry, &a).await }
    });
    assert_eq!(entering.recv().await.as_deref(), Some(a.as_str()));

    // B loads meanwhile (A is released whatever happens, so a failure does not hang).
    let b_loaded = tokio::time::timeout(Duration::from_secs(20), get(&registry, &b)).await;
    if b_loaded.is_err() {
        gate.release();
    }
    b_loaded.expect("session B loads while session A's load is held");
    assert_eq!(registry.loaded_count(), 1);
    // A second load of A waits for the first.
    let again_a = tokio::spawn({
        let registry = registry.clone();
        let a = a.clone();
        async move { get(&registry, &a).await }
    });

    gate.release();
    loading_a.await.unwrap();
    again_a.await.unwrap();
    // One actor each.
    assert_eq!(registry.loaded_count(), 2);
    registry.shutdown().await;
}
