//! An in-process daemon (real sockets and store, `serve_state`) whose sessions use the faux
//! provider and test tools, and helpers to drive it through `pi-client`.

use std::sync::Arc;
use std::time::Duration;

use pi_agent::{Tool, ToolFuture, ToolInvocation, ToolOutput};
use pi_client::{Client, Endpoint, Notifications};
use pi_daemon::config::Config;
use pi_daemon::session::{
    ModelService, SessionServices, SessionSettings, ToolEnvironment, ToolFactory,
};
use pi_daemon::state::DaemonState;
use pi_daemon::store::Store;
use pi_llm::faux::{FauxProvider, faux_model};
use pi_llm::{ApiKey, Model, Provider, ThinkingLevel};
use pi_protocol::v1::{
    ClientCapabilities, SessionCreate, SessionCreateParams, SessionEventParams, SessionInfo,
    Supervisor,
};
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::sync::Semaphore;

/// Models: `faux/faux-1` (reasoning) and `faux/faux-2` (no reasoning), both on the faux provider.
pub struct FauxModels {
    pub faux: FauxProvider,
    pub provider: Option<Arc<dyn Provider>>,
}

pub fn second_model() -> Model {
    Model {
        id: "faux-2".into(),
        name: "Faux 2".into(),
        reasoning: false,
        ..faux_model()
    }
}

impl ModelService for FauxModels {
    fn provider(&self) -> Arc<dyn Provider> {
        self.provider
            .clone()
            .unwrap_or_else(|| Arc::new(self.faux.clone()))
    }
    fn resolve(&self, spec: &str) -> Result<(Model, Option<ThinkingLevel>), String> {
        let (name, level) = match spec.split_once(':') {
            Some((name, level)) => (
                name,
                Some(
                    level
                        .parse()
                        .map_err(|e: pi_llm::model::UnknownThinkingLevel| e.to_string())?,
                ),
            ),
            None => (spec, None),
        };
        [faux_model(), second_model()]
            .into_iter()
            .find(|model| name == model.id || name == format!("{}/{}", model.provider, model.id))
            .map(|model| (model, level))
            .ok_or_else(|| format!("no model matches {spec:?}; did you mean faux/faux-1?"))
    }
    fn find(&self, provider: &str, id: &str) -> Option<Model> {
        [faux_model(), second_model()]
            .into_iter()
            .find(|m| m.provider == provider && m.id == id)
    }
    fn default_model(&self) -> Option<Model> {
        Some(faux_model())
    }
    fn api_key(&self, _model: &Model) -> Result<Option<ApiKey>, String> {
        Ok(None)
    }
    fn list(&self) -> Vec<(Model, bool)> {
        vec![(faux_model(), true), (second_model(), true)]
    }
}

/// Hands every session the same test tools.
pub struct TestTools {
    pub tools: Vec<Arc<dyn Tool>>,
}

impl ToolFactory for TestTools {
    fn tools(
        &self,
        _environment: &ToolEnvironment,
        names: &[String],
    ) -> Result<Vec<Arc<dyn Tool>>, String> {
        names
            .iter()
            .map(|name| {
                self.tools
                    .iter()
                    .find(|tool| tool.name() == name)
                    .cloned()
                    .ok_or_else(|| format!("unknown tool {name:?}"))
            })
            .collect()
    }
    fn default_names(&self) -> Vec<String> {
        self.tools
            .iter()
            .map(|tool| tool.name().to_owned())
            .collect()
    }
}

/// `block {key}` waits until the test releases `key` (or the call is aborted).
pub struct BlockTool {
    schema: Value,
    gates: std::sync::Mutex<std::collections::HashMap<String, Arc<Semaphore>>>,
    pub started: Arc<Semaphore>,
}

impl BlockTool {
    pub fn new() -> Arc<BlockTool> {
        Arc::new(BlockTool {
            schema: json!({"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}),
            gates: Default::default(),
            started: Arc::new(Semaphore::new(0)),
        })
    }
    fn gate(&self, key: &str) -> Arc<Semaphore> {
        self.gates
            .lock()
            .unwrap()
            .entry(key.to_owned())
            .or_insert_with(|| Arc::new(Semaphore::new(0)))
            .clone()
    }
    pub fn release(&self, key: &str) {
        self.gate(key).add_permits(1);
    }
    pub async fn wait_started(&self, n: u32) {
        tokio::time::timeout(Duration::from_secs(10), self.started.acquire_many(n))
            .await
            .unwrap()
            .unwrap()
            .forget();
    }
}

impl Tool for BlockTool {
    fn name(&self) -> &str {
        "block"
    }
    fn label(&self) -> &str {
        "Block"
    }
    fn description(&self) -> &str {
        "Wait for the test"
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    fn execute(self: Arc<Self>, invocation: ToolInvocation) -> ToolFuture {
        Box::pin(async move {
            let key = invocation.arguments["key"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let gate = self.gate(&key);
            self.started.add_permits(1);
            tokio::select! {
                _ = gate.acquire() => ToolOutput::text(format!("released {key}")),
                _ = invocation.cancel.cancelled() => ToolOutput::error("Operation aborted"),
            }
        })
    }
}

/// The in-process daemon.
pub struct TestDaemon {
    pub home: TempDir,
    pub state: Arc<DaemonState>,
    pub faux: FauxProvider,
    pub block: Arc<BlockTool>,
    _task: tokio::task::JoinHandle<anyhow::Result<()>>,
}

pub struct Options {
    pub settings: SessionSettings,
    pub config: Config,
    pub provider: Option<Arc<dyn Provider>>,
}

impl Default for Options {
    fn default() -> Self {
        let mut config = Config::default();
        config.websocket.enabled = false;
        Options {
            settings: SessionSettings::default(),
            config,
            provider: None,
        }
    }
}

impl TestDaemon {
    pub async fn start() -> TestDaemon {
        TestDaemon::start_with(Options::default()).await
    }

    pub async fn start_with(options: Options) -> TestDaemon {
        let home = tempfile::Builder::new()
            .prefix("pi-session-test-")
            .tempdir()
            .unwrap();
        TestDaemon::start_in(home, options, FauxProvider::new()).await
    }

    /// Starts a daemon in an existing home (a restart), with the given faux provider.
    pub async fn start_in(home: TempDir, options: Options, faux: FauxProvider) -> TestDaemon {
        let paths = pi_test_support::daemon::paths_for(home.path());
        pi_daemon::lifecycle::prepare_directories(&paths).unwrap();
        let store = Store::open(&paths.database_path()).await.unwrap();
        let block = BlockTool::new();
        let services = SessionServices {
            models: Arc::new(FauxModels {
                faux: faux.clone(),
                provider: options.provider,
            }),
            tools: Arc::new(TestTools {
                tools: vec![block.clone()],
            }),
            settings: options.settings,
        };
        let state = Arc::new(DaemonState::new(
            paths,
            options.config,
            store,
            Supervisor::Manual,
            services,
        ));
        let task = tokio::spawn(pi_daemon::serve_state(state.clone()));
        let daemon = TestDaemon {
            home,
            state,
            faux,
            block,
            _task: task,
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while daemon.try_client().await.is_none() {
            assert!(
                std::time::Instant::now() < deadline,
                "the in-process daemon did not start"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        daemon
    }

    async fn try_client(&self) -> Option<(Client, Notifications)> {
        Client::connect(
            &Endpoint::Unix(self.state.paths.socket_path()),
            pi_client::client_info("session-test", "0"),
            ClientCapabilities::default(),
        )
        .await
        .ok()
    }

    pub async fn client(&self) -> (Client, Notifications) {
        self.try_client()
            .await
            .expect("the daemon accepts connections")
    }

    pub async fn create_session(&self, client: &Client) -> SessionInfo {
        let cwd = self.home.path().display().to_string();
        client
            .call::<SessionCreate>(&SessionCreateParams {
                cwd,
                ..SessionCreateParams::default()
            })
            .await
            .unwrap()
    }
}

impl Drop for TestDaemon {
    fn drop(&mut self) {
        self.state.shutdown.cancel();
    }
}

/// Reads session events for `session_id` until `predicate` matches one; returns them all.
pub async fn events_until(
    notifications: &mut Notifications,
    session_id: &str,
    predicate: impl Fn(&SessionEventParams) -> bool,
) -> Vec<SessionEventParams> {
    let mut seen = Vec::new();
    loop {
        let notification = tokio::time::timeout(Duration::from_secs(10), notifications.next())
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "no matching event in time; saw {:?}",
                    seen.iter().map(kind).collect::<Vec<_>>()
                )
            })
            .expect("the connection is open");
        if notification.method != "session/event" {
            continue;
        }
        let params: SessionEventParams =
            serde_json::from_value(notification.params.unwrap()).unwrap();
        if params.session_id != session_id {
            continue;
        }
        let done = predicate(&params);
        seen.push(params);
        if done {
            return seen;
        }
    }
}

/// Reads events until `agent_end`.
pub async fn run_events(
    notifications: &mut Notifications,
    session_id: &str,
) -> Vec<SessionEventParams> {
    events_until(notifications, session_id, |event| {
        kind(event) == "agent_end"
    })
    .await
}

/// The event's `type`.
pub fn kind(event: &SessionEventParams) -> String {
    serde_json::to_value(&event.event).unwrap()["type"]
        .as_str()
        .unwrap()
        .to_owned()
}
