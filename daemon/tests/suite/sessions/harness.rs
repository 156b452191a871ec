//! An in-process daemon (real sockets and store, `serve_state`) whose sessions use the faux
//! provider and test tools, and helpers to drive it through `pi-client`.

use std::sync::Arc;
use std::time::Duration;

use pi_agent::{Tool, ToolFuture, ToolInvocation, ToolOutput};
use pi_client::{Client, Endpoint, Notifications};
use pi_daemon::config::Config;
use pi_daemon::session::{ModelService, SessionServices, SessionSettings};
use pi_daemon::state::DaemonState;
use pi_daemon::store::Store;
use pi_daemon::testing::{FauxModels, StaticTools};
use pi_llm::Provider;
use pi_llm::faux::FauxProvider;
use pi_protocol::v1::{
    ClientCapabilities, SessionCreate, SessionCreateParams, SessionInfo, Supervisor,
};
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::sync::Semaphore;

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
    fn prompt_snippet(&self) -> Option<&str> {
        Some("Wait for the test")
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
    /// Replaces the faux models (e.g. models served by the scripted model server).
    pub models: Option<Arc<dyn ModelService>>,
    pub tools: TestTools,
    /// Tools sessions get besides `block` (with [`TestTools::Block`]).
    pub extra_tools: Vec<Arc<dyn Tool>>,
}

/// Which tools sessions get.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TestTools {
    /// `block`, plus `Options::extra_tools`.
    #[default]
    Block,
    /// The daemon's built-in tools (pi-tools), as in `pid`.
    Builtin,
}

impl Default for Options {
    fn default() -> Self {
        let mut config = Config::default();
        config.websocket.enabled = false;
        Options {
            settings: SessionSettings::default(),
            config,
            provider: None,
            models: None,
            tools: TestTools::Block,
            extra_tools: Vec::new(),
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
            hooks: std::sync::Arc::new(pi_session::services::NoHooks),
            models: options.models.unwrap_or_else(|| {
                Arc::new(FauxModels {
                    faux: faux.clone(),
                    provider: options.provider,
                })
            }),
            tools: match options.tools {
                TestTools::Block => Arc::new(StaticTools {
                    tools: std::iter::once(block.clone() as Arc<dyn Tool>)
                        .chain(options.extra_tools)
                        .collect(),
                }),
                TestTools::Builtin => Arc::new(pi_daemon::tools::BuiltinTools::new(
                    pi_tools::Artifacts::new(paths.artifacts_dir()),
                )),
            },
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

    /// Waits until no session is loaded (they unload when idle; fails after 10 s).
    pub async fn wait_until_unloaded(&self) {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while self.state.sessions.loaded_count() > 0 {
            assert!(
                std::time::Instant::now() < deadline,
                "the session never unloaded"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
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

pub use pi_test_support::events::{events_until, kind, run_events};
