//! Approvals: every tool call of a session passes a policy gate (`PolicyGate`) that allows it,
//! denies it with a reason the model reads, or asks the people attached to the session
//! (`ui/request` through the UI broker: first answer wins, re-sent on attach, a timeout
//! denies).
//!
//! - `rules.rs`: rules, modes and the decision (strictest of the layers).
//!
//! The sandbox (`sandbox` in settings, confinement of `bash`, see `pi_tools::sandbox`) is
//! decided here too: the user's files set it, the project's can only tighten it (a stricter
//! mode, the network off).
//!
//! Layers: the user's settings files (`approvals.mode`, `approvals.rules`; a session's own
//! mode from `session/setPolicy` replaces their mode), then the project's file, which can only
//! tighten. Default: `yolo`, pi's behaviour.

pub mod rules;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::future::BoxFuture;
use pi_agent::{Tool, ToolFuture, ToolInvocation, ToolLayer, ToolOutput};
use pi_protocol::v1::{UiAskResponse, UiRequest};
use serde_json::{Value, json};

use pi_coding::ResourceRoots;
use pi_store::Store;
use rules::{Action, Decision, Layer, Mode};

/// Why the session behind an [`ApprovalPort`] could not do what was asked (its own typed
/// error: the session's, or the daemon stopping).
pub type PortError = Box<dyn std::error::Error + Send + Sync>;

/// Why a tool call was not let through; the text is what the model is told.
#[derive(Debug, thiserror::Error)]
pub enum Denied {
    /// A rule or the mode denies it.
    #[error(
        "Denied by policy: {by} does not allow {call}. Do something else, or ask the user to \
         change the approvals."
    )]
    ByPolicy {
        /// The call as shown (`` `bash` `ls` ``).
        call: String,
        /// The rule or mode.
        by: String,
    },
    /// The question could not be asked.
    #[error("Denied: the question could not be asked ({0})")]
    NotAsked(#[source] PortError),
    /// Nobody answered in time.
    #[error("Denied: nobody answered within {0} s (approvals.askTimeoutMs)")]
    Unanswered(u64),
    /// The user chose "Deny".
    #[error("Denied by the user: {0} was not allowed. Do something else or ask the user.")]
    ByUser(String),
    /// The user answered with their own text (their reason, for the model).
    #[error("Denied by the user: {0}")]
    UserReason(String),
    /// The answer was empty.
    #[error("Denied: the answer was empty")]
    EmptyAnswer,
    /// The run was aborted while the question was open.
    #[error("Operation aborted")]
    Aborted,
}

/// What the policy needs of the session a gate guards: given with each gate by the daemon,
/// which implements it over the session registry.
pub trait ApprovalPort: Send + Sync {
    /// Writes a decision into the session (an `approval` custom entry).
    fn record(&self, decision: Value) -> BoxFuture<'_, Result<(), PortError>>;
    /// Asks the people attached to the session; the first answer, or a cancelled one after
    /// `timeout`.
    fn ask(
        &self,
        request: UiRequest,
        timeout: Duration,
    ) -> BoxFuture<'_, Result<UiAskResponse, PortError>>;
}

/// How long an `ask` waits for an answer unless `approvals.askTimeoutMs` says.
const DEFAULT_ASK_TIMEOUT: Duration = Duration::from_secs(300);

const ALLOW_ONCE: &str = "Allow once";
const ALLOW_SESSION: &str = "Allow for this session";
const ALLOW_PROJECT: &str = "Always allow in this project";
const DENY: &str = "Deny";

/// The sessions' modes and what people allowed them.
#[derive(Debug)]
pub struct PolicyManager {
    roots: ResourceRoots,
    // What was allowed "always in this project".
    store: Store,
    // Per session: its own mode, and the calls allowed for the rest of the session
    // (tool, and for `bash` the command).
    sessions: Mutex<HashMap<String, SessionPolicy>>,
    // Per directory: what the settings say.
    settings: pi_coding::resources::SettingsCache<PolicySettings>,
    // The sandbox helper: the daemon's own executable.
    sandbox_helper: PathBuf,
}

/// What a directory's settings files say about approvals and the sandbox.
#[derive(Debug)]
struct PolicySettings {
    // The user's approval layer (merged files).
    user: Layer,
    // The project's.
    project: Option<Layer>,
    ask_timeout_ms: Option<u64>,
    sandbox: SandboxSettings,
}

/// The `sandbox` settings, merged.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct SandboxSettings {
    mode: Option<pi_tools::sandbox::SandboxMode>,
    network: bool,
    writable_roots: Vec<String>,
}

#[derive(Clone, Debug, Default)]
struct SessionPolicy {
    mode: Option<Mode>,
    allowed: Vec<(String, Option<String>)>,
}

impl PolicyManager {
    /// A manager reading settings through `roots`, remembering project approvals in `store`.
    pub fn new(roots: ResourceRoots, store: Store) -> PolicyManager {
        PolicyManager {
            roots,
            store,
            sessions: Mutex::new(HashMap::new()),
            settings: Default::default(),
            sandbox_helper: sandbox_helper(),
        }
    }

    /// Restores the sessions' own modes (stored by `session/setPolicy`).
    pub fn restore_modes(&self, modes: Vec<(String, String)>) {
        for (session_id, mode) in modes {
            if let Some(mode) = Mode::parse(&mode) {
                self.set_mode(&session_id, mode);
            }
        }
    }

    /// The sandbox for `bash` in a session in `cwd` with environment `env` (`None`: off).
    pub fn sandbox(
        &self,
        cwd: &std::path::Path,
        env: &std::collections::BTreeMap<String, String>,
    ) -> Option<pi_tools::sandbox::Sandbox> {
        let settings = self
            .settings
            .get(&self.roots, cwd, || self.read_settings(Some(cwd)));
        self.sandbox_of(&settings.sandbox, cwd, env)
    }

    /// The sandbox the user's settings alone give sessions (a directory without project
    /// settings), its relative roots against `cwd_placeholder`.
    pub fn default_sandbox(
        &self,
        cwd_placeholder: &std::path::Path,
        env: &std::collections::BTreeMap<String, String>,
    ) -> Option<pi_tools::sandbox::Sandbox> {
        let settings = self.read_settings(None);
        self.sandbox_of(&settings.sandbox, cwd_placeholder, env)
    }

    fn sandbox_of(
        &self,
        sandbox: &SandboxSettings,
        cwd: &std::path::Path,
        env: &std::collections::BTreeMap<String, String>,
    ) -> Option<pi_tools::sandbox::Sandbox> {
        let home = env.get("HOME").filter(|home| !home.is_empty());
        Some(pi_tools::sandbox::Sandbox {
            mode: sandbox.mode?,
            helper: self.sandbox_helper.clone(),
            writable_roots: sandbox
                .writable_roots
                .iter()
                .filter_map(|root| match (root.strip_prefix("~/"), home) {
                    (Some(rest), Some(home)) => Some(PathBuf::from(home).join(rest)),
                    (Some(_), None) => None,
                    (None, _) => Some(cwd.join(root)),
                })
                .collect(),
            network: sandbox.network,
        })
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, SessionPolicy>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sets session `session_id`'s own mode (replacing the user's settings' mode).
    pub fn set_mode(&self, session_id: &str, mode: Mode) {
        self.sessions()
            .entry(session_id.to_owned())
            .or_default()
            .mode = Some(mode);
    }

    /// Session `session_id`'s own mode.
    pub fn mode_of(&self, session_id: &str) -> Option<Mode> {
        self.sessions()
            .get(session_id)
            .and_then(|policy| policy.mode)
    }

    /// The layers for a session in `cwd`, and the ask timeout.
    fn layers(&self, session_id: &str, cwd: &std::path::Path) -> (Vec<Layer>, Duration) {
        let settings = self
            .settings
            .get(&self.roots, cwd, || self.read_settings(Some(cwd)));
        let mut user = settings.user.clone();
        if let Some(mode) = self.mode_of(session_id) {
            user.mode = Some(mode);
            user.source = "this session".to_owned();
        }
        let mut layers = vec![user];
        layers.extend(settings.project.clone());
        (
            layers,
            settings
                .ask_timeout_ms
                .map_or(DEFAULT_ASK_TIMEOUT, Duration::from_millis),
        )
    }

    /// What `cwd`'s settings files say: the user's approval layer (merged), the project's,
    /// the ask timeout and the sandbox.
    fn read_settings(&self, cwd: Option<&std::path::Path>) -> PolicySettings {
        let (global, project) = self.roots.settings_layers(cwd);
        let mut sandbox = SandboxSettings::default();
        for layer in &global {
            if let Some(mode) = &layer.sandbox_mode {
                sandbox.mode = sandbox_mode(mode);
            }
            sandbox.network = layer.sandbox_network.unwrap_or(sandbox.network);
            if let Some(roots) = &layer.sandbox_writable_roots {
                sandbox.writable_roots = roots.clone();
            }
        }
        if let Some(project) = &project {
            // Only tighter: a stricter mode, the network off; never more writable roots.
            if let Some(mode) = project.sandbox_mode.as_deref().and_then(sandbox_mode) {
                sandbox.mode = Some(sandbox.mode.map_or(mode, |mode_now| mode_now.max(mode)));
            }
            if project.sandbox_network == Some(false) {
                sandbox.network = false;
            }
        }
        let mut user = Layer {
            mode: None,
            rules: Vec::new(),
            source: "your settings".to_owned(),
        };
        let mut timeout = None;
        for layer in &global {
            if let Some(mode) = layer.approvals_mode.as_deref().and_then(Mode::parse) {
                user.mode = Some(mode);
            }
            if let Some(rules) = &layer.approvals_rules {
                // Later files first: they win.
                let mut rules = rules.clone();
                rules.extend(user.rules);
                user.rules = rules;
            }
            timeout = layer.approvals_ask_timeout_ms.or(timeout);
        }
        let project = project.map(|project| {
            timeout = project.approvals_ask_timeout_ms.or(timeout);
            Layer {
                mode: project.approvals_mode.as_deref().and_then(Mode::parse),
                rules: project.approvals_rules.clone().unwrap_or_default(),
                source: "the project's .pi/settings.json".to_owned(),
            }
        });
        PolicySettings {
            user,
            project,
            ask_timeout_ms: timeout,
            sandbox,
        }
    }

    /// Forgets a session that stopped.
    pub fn session_closed(&self, session_id: &str) {
        // Its mode stays (a reloaded session keeps it while the daemon runs); what was
        // allowed "for this session" goes with the actor.
        if let Some(policy) = self.sessions().get_mut(session_id) {
            policy.allowed.clear();
        }
    }

    fn allowed_before(&self, session_id: &str, tool: &str, arguments: &Value) -> bool {
        let command = arguments["command"].as_str();
        self.sessions().get(session_id).is_some_and(|policy| {
            policy
                .allowed
                .iter()
                .any(|(allowed_tool, allowed_command)| {
                    allowed_tool == tool
                        && (allowed_command.is_none() || allowed_command.as_deref() == command)
                })
        })
    }

    /// Decides a call; asks when the decision is `ask`. `Ok` runs it; `Err` is the reason
    /// for the model.
    async fn check(
        &self,
        port: &dyn ApprovalPort,
        session_id: &str,
        cwd: &std::path::Path,
        tool: &str,
        arguments: &Value,
    ) -> Result<(), Denied> {
        let (layers, timeout) = self.layers(session_id, cwd);
        let Decision { action, reason } = rules::decide(&layers, tool, arguments, cwd);
        let call = format!("`{tool}`{}", describe(tool, arguments));
        let (outcome, record) = match action {
            // Allowed by a mode's default: nothing worth a line in the transcript.
            Action::Allow if !reason.starts_with("a rule") => (Ok(()), None),
            Action::Allow => (
                Ok(()),
                Some(json!({"call": call, "decision": "allowed", "by": reason})),
            ),
            Action::Deny => (
                Err(Denied::ByPolicy {
                    call: call.clone(),
                    by: reason.clone(),
                }),
                Some(json!({"call": call, "decision": "denied", "by": reason})),
            ),
            Action::Ask if self.allowed_before(session_id, tool, arguments) => (
                Ok(()),
                Some(json!({"call": call, "decision": "allowed",
                    "by": "allowed for this session earlier"})),
            ),
            Action::Ask if self.allowed_in_project(cwd, tool, arguments).await => (
                Ok(()),
                Some(json!({"call": call, "decision": "allowed",
                    "by": "allowed always in this project"})),
            ),
            Action::Ask => {
                let (outcome, answer, answered_by) = self
                    .ask(port, session_id, cwd, tool, arguments, &reason, timeout)
                    .await;
                let decision = if outcome.is_ok() { "allowed" } else { "denied" };
                (
                    outcome,
                    Some(json!({"call": call, "decision": decision, "asked": reason,
                        "answer": answer, "answeredBy": answered_by})),
                )
            }
        };
        if let Some(data) = record
            && let Err(error) = port.record(data).await
        {
            tracing::warn!(session = session_id, %error, "cannot record an approval");
        }
        outcome
    }

    async fn allowed_in_project(
        &self,
        cwd: &std::path::Path,
        tool: &str,
        arguments: &Value,
    ) -> bool {
        let command = arguments["command"].as_str().unwrap_or_default();
        self.store
            .allowed_in_project(&cwd.display().to_string(), tool, command)
            .await
            .unwrap_or(false)
    }

    /// Asks the people attached to the session: the outcome, the answer and who gave it.
    #[allow(clippy::too_many_arguments, reason = "one call site")]
    async fn ask(
        &self,
        port: &dyn ApprovalPort,
        session_id: &str,
        cwd: &std::path::Path,
        tool: &str,
        arguments: &Value,
        reason: &str,
        timeout: Duration,
    ) -> (Result<(), Denied>, Option<String>, Option<String>) {
        let title = format!(
            "Allow `{tool}`{}? ({reason} asks)",
            describe(tool, arguments)
        );
        let request = UiRequest::Select {
            title,
            options: vec![
                ALLOW_ONCE.to_owned(),
                ALLOW_SESSION.to_owned(),
                ALLOW_PROJECT.to_owned(),
                DENY.to_owned(),
            ],
            multiple: false,
        };
        let asked = port.ask(request, timeout).await;
        let asked = match asked {
            Ok(asked) => asked,
            Err(error) => {
                return (Err(Denied::NotAsked(error)), None, None);
            }
        };
        if asked.answer.cancelled {
            return (Err(Denied::Unanswered(timeout.as_secs())), None, None);
        }
        let answer = asked.answer.value.clone();
        let outcome = match asked.answer.value.as_deref() {
            Some(ALLOW_ONCE) => Ok(()),
            Some(ALLOW_SESSION) => {
                let command = (tool == "bash")
                    .then(|| arguments["command"].as_str().map(str::to_owned))
                    .flatten();
                self.sessions()
                    .entry(session_id.to_owned())
                    .or_default()
                    .allowed
                    .push((tool.to_owned(), command));
                Ok(())
            }
            Some(ALLOW_PROJECT) => {
                let command = if tool == "bash" {
                    arguments["command"].as_str().unwrap_or_default()
                } else {
                    ""
                };
                if let Err(error) = self
                    .store
                    .allow_in_project(
                        &cwd.display().to_string(),
                        tool,
                        command,
                        pi_util::time::now_millis(),
                    )
                    .await
                {
                    tracing::warn!(%error, "cannot remember a project approval");
                }
                Ok(())
            }
            Some(DENY) => Err(Denied::ByUser(format!(
                "`{tool}`{}",
                describe(tool, arguments)
            ))),
            // Any other text: the user's reason, for the model.
            Some(other) => Err(Denied::UserReason(other.to_owned())),
            None => Err(Denied::EmptyAnswer),
        };
        (outcome, answer, asked.answered_by)
    }
}

/// A `sandbox` mode setting (`off`: none).
fn sandbox_mode(mode: &str) -> Option<pi_tools::sandbox::SandboxMode> {
    match mode {
        "workspace-write" => Some(pi_tools::sandbox::SandboxMode::WorkspaceWrite),
        "read-only" => Some(pi_tools::sandbox::SandboxMode::ReadOnly),
        _ => None,
    }
}

/// The daemon's own executable, which is the sandbox helper. On Linux `/proc/self/exe`, which
/// the child resolves to the daemon's image even after an upgrade replaced the file.
fn sandbox_helper() -> PathBuf {
    if cfg!(target_os = "linux") {
        PathBuf::from("/proc/self/exe")
    } else {
        std::env::current_exe().unwrap_or_else(|_| PathBuf::from("pid"))
    }
}

/// ` with `command`` / ` on path` for messages.
fn describe(tool: &str, arguments: &Value) -> String {
    if tool == "bash"
        && let Some(command) = arguments["command"].as_str()
    {
        let short: String = command.chars().take(200).collect();
        return format!(" with `{short}`");
    }
    if let Some(path) = arguments["path"].as_str() {
        return format!(" on {path}");
    }
    String::new()
}

/// The policy in front of a session's tool (a [`ToolLayer`]: `pi_agent::layered(tool,
/// gate)`): a call runs only once the policy allows it.
pub struct PolicyGate {
    /// The manager.
    pub manager: Arc<PolicyManager>,
    /// The session.
    pub session_id: String,
    /// Its directory.
    pub cwd: PathBuf,
    /// The session, for records and questions.
    pub port: Arc<dyn ApprovalPort>,
}

impl ToolLayer for PolicyGate {
    fn call(self: Arc<Self>, inner: Arc<dyn Tool>, invocation: ToolInvocation) -> ToolFuture {
        Box::pin(async move {
            let checked = tokio::select! {
                () = invocation.cancel.cancelled() => Err(Denied::Aborted),
                checked = self.manager.check(
                    self.port.as_ref(),
                    &self.session_id,
                    &self.cwd,
                    inner.name(),
                    &invocation.arguments,
                ) => checked,
            };
            match checked {
                Ok(()) => inner.execute(invocation).await,
                Err(denied) => ToolOutput::error(denied.to_string()),
            }
        })
    }
}

#[cfg(test)]
mod tests;
