//! The built-in tools (pi-tools) as the sessions' [`ToolFactory`], and user shell commands
//! (`session/bash`, pi's `!cmd`) through the same executor.
//!
//! Architecture invariant: one [`BuiltinTools`] per daemon, so one [`PathLocks`] shared by
//! every session's `write` and `edit`; artifacts live under `<data dir>/artifacts/<session>/`
//! and go with their session.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use pi_agent::message::BashExecutionMessage;
use pi_agent::{Tool, ToolSource};
use pi_tools::exec::{self, ExecEnd, ExecPlace, ExecRequest, OutputStyle, ShellConfig};
use pi_tools::spawn::Spawner;
use pi_tools::{Artifacts, DEFAULT_TOOLS, PathLocks, ToolContext};
use tokio_util::sync::CancellationToken;

use crate::session::services::{CommandError, ToolsError};
use crate::session::{ToolEnvironment, ToolFactory};

/// Builds sessions' tools from pi-tools with the daemon's shared locks and artifact store,
/// plus the tools of the MCP servers they see.
#[derive(Clone, Debug)]
pub struct BuiltinTools {
    // The daemon's one set of per-path mutation locks; every session's tools clone it.
    locks: PathLocks,
    artifacts: Artifacts,
    // The settings `shellPath`, `shellCommandPrefix` and `images.autoResize` come from (none:
    // the defaults), per working directory, read again when a settings file changes.
    settings: Option<crate::coding::ResourceRoots>,
    shells: Arc<crate::coding::resources::SettingsCache<ToolSettings>>,
    mcp: Option<Arc<crate::mcp::McpPool>>,
    lsp: Option<Arc<crate::lsp::LspPool>>,
    tasks: Option<Arc<crate::tasks::TaskManager>>,
    policy: Option<Arc<crate::policy::PolicyManager>>,
    jobs: Option<Arc<crate::jobs::JobPool>>,
    kernels: Option<Arc<crate::kernels::KernelPool>>,
    extensions: Option<Arc<crate::extensions::ExtensionHost>>,
    // The daemon's web client (made on first use), for the web tools.
    web: crate::web_tools::Web,
    // Starts `bash`'s commands (under the daemon's guard in `pid`).
    spawner: Spawner,
    // The daemon's own environment, which sessions created without one use: one copy for
    // all of them.
    daemon_env: Arc<std::collections::BTreeMap<String, String>>,
}

/// The tools `BuiltinTools` makes itself (beyond pi-tools'), by name.
const TASK_TOOLS: [&str; 3] = ["task", "delegate_to_subagents", "submit_result"];

impl BuiltinTools {
    /// The factory over `artifacts`, with fresh locks (create one per daemon).
    pub fn new(artifacts: Artifacts) -> BuiltinTools {
        BuiltinTools {
            locks: PathLocks::new(),
            artifacts,
            settings: None,
            shells: Arc::default(),
            mcp: None,
            lsp: None,
            tasks: None,
            policy: None,
            jobs: None,
            kernels: None,
            extensions: None,
            web: crate::web_tools::Web::default(),
            spawner: Spawner::direct(),
            daemon_env: Arc::new(std::env::vars().collect()),
        }
    }

    /// Runs `bash` (and jobs) with the shell and command prefix of the settings under
    /// `roots` (pi's `shellPath`, `shellCommandPrefix`).
    pub fn with_settings(mut self, roots: crate::coding::ResourceRoots) -> BuiltinTools {
        self.settings = Some(roots);
        self
    }

    /// The shell of commands run in `cwd`.
    fn settings_for(&self, cwd: &std::path::Path) -> ToolSettings {
        match &self.settings {
            Some(roots) => (*self.shells.get(roots, cwd, || tool_settings(roots, cwd))).clone(),
            None => ToolSettings::default(),
        }
    }

    /// The session's `local://` directory (a subagent's is its parent's).
    fn local_dir(&self, environment: &ToolEnvironment) -> Result<std::path::PathBuf, ToolsError> {
        let owner = environment
            .parent_session_id
            .as_deref()
            .unwrap_or(&environment.session_id);
        Ok(self.artifacts.session(owner)?.dir().join("local"))
    }

    /// Starts the tools' commands through `spawner` (the daemon's guard).
    pub fn with_spawner(mut self, spawner: Spawner) -> BuiltinTools {
        self.spawner = spawner;
        self
    }

    /// Puts every tool of every session (MCP servers' too) behind `manager`'s approvals.
    pub fn with_policy(mut self, manager: Arc<crate::policy::PolicyManager>) -> BuiltinTools {
        self.policy = Some(manager);
        self
    }

    /// `tools` behind the policy, when there is one.
    /// Offers `task`, `delegate_to_subagents` and (to children) `submit_result` over
    /// `manager`; sessions that name `task` read `agent://` transcripts.
    pub fn with_tasks(mut self, manager: Arc<crate::tasks::TaskManager>) -> BuiltinTools {
        self.tasks = Some(manager);
        self
    }

    /// Offers the `lsp` tool over `pool` (sessions that name it get it, and diagnostics after
    /// their `write` and `edit`).
    pub fn with_lsp(mut self, pool: Arc<crate::lsp::LspPool>) -> BuiltinTools {
        self.lsp = Some(pool);
        self
    }

    /// Offers `job` (and `bash` with `background`) over `pool` to sessions that name `job`.
    pub fn with_jobs(mut self, pool: Arc<crate::jobs::JobPool>) -> BuiltinTools {
        self.jobs = Some(pool);
        self
    }

    /// Offers `python` over `pool` to sessions that name it.
    pub fn with_kernels(mut self, pool: Arc<crate::kernels::KernelPool>) -> BuiltinTools {
        self.kernels = Some(pool);
        self
    }

    /// Runs sessions' pi extensions in `host`: their tools, their `tool_call` and
    /// `tool_result` handlers around every tool (only where something could load).
    pub fn with_extensions(mut self, host: Arc<crate::extensions::ExtensionHost>) -> BuiltinTools {
        self.extensions = Some(host);
        self
    }

    /// The extension host, for sessions where something could load.
    fn extensions_for(
        &self,
        environment: &ToolEnvironment,
    ) -> Option<&Arc<crate::extensions::ExtensionHost>> {
        self.extensions.as_ref().filter(|host| {
            host.configured(
                &environment.cwd,
                &crate::extension_hooks::choice(environment),
            )
        })
    }

    /// The tools' shared locks (the language servers' edits take them too).
    pub fn locks(&self) -> &PathLocks {
        &self.locks
    }

    /// Adds the tools of `pool`'s servers to sessions' runs.
    pub fn with_mcp(mut self, pool: Arc<crate::mcp::McpPool>) -> BuiltinTools {
        self.mcp = Some(pool);
        self
    }

    fn context(
        &self,
        environment: &ToolEnvironment,
        with_lsp: bool,
        with_tasks: bool,
        with_web: bool,
        with_omp: bool,
    ) -> Result<Arc<ToolContext>, ToolsError> {
        let artifacts = self.artifacts.session(&environment.session_id)?;
        let settings = self.settings_for(&environment.cwd);
        let mut sandbox = self
            .policy
            .as_ref()
            .and_then(|policy| policy.sandbox(&environment.cwd, &environment.env));
        let offline = sandbox.as_ref().is_some_and(|sandbox| !sandbox.network);
        // oh-my-pi's internal URLs: `local://` is the scratch directory of the session (a
        // subagent's: its parent's), writable whatever the sandbox — every session has it
        // (plan mode writes its plan there); `skill://` and `rule://` too.
        let places = {
            let local = self.local_dir(environment)?;
            if let Some(sandbox) = &mut sandbox
                && std::fs::DirBuilder::new()
                    .recursive(true)
                    .create(&local)
                    .is_ok()
            {
                sandbox.writable_roots.push(local.clone());
            }
            Some(Arc::new(crate::places::SessionPlaces {
                local,
                roots: self.settings.clone(),
                cwd: environment.cwd.clone(),
            }) as Arc<dyn pi_tools::UrlPlaces>)
        };
        Ok(Arc::new(ToolContext {
            session_id: environment.session_id.clone(),
            cwd: environment.cwd.clone(),
            env: if *self.daemon_env == *environment.env {
                self.daemon_env.clone()
            } else {
                environment.env.clone()
            },
            shell: settings.shell,
            artifacts,
            locks: self.locks.clone(),
            // Only where MCP servers are defined (or the session delegates): elsewhere `read`
            // stays pi's.
            uris: UriReaders::of(
                self.mcp
                    .as_ref()
                    .filter(|pool| {
                        !pool
                            .definitions(&environment.cwd, &environment.env)
                            .0
                            .is_empty()
                            || !pool.session_servers(&environment.session_id).is_empty()
                    })
                    .map(|pool| {
                        Arc::new(McpResources {
                            pool: pool.clone(),
                            session_id: environment.session_id.clone(),
                        }) as Arc<dyn pi_tools::UriReader>
                    })
                    .into_iter()
                    .chain(self.tasks.as_ref().filter(|_| with_tasks).map(|_| {
                        Arc::new(crate::tasks::tool::AgentTranscripts {
                            sessions: environment.sessions.clone(),
                        }) as Arc<dyn pi_tools::UriReader>
                    }))
                    .chain(with_omp.then(|| {
                        Arc::new(crate::places::RuleBook {
                            roots: self.settings.clone(),
                            cwd: environment.cwd.clone(),
                        }) as Arc<dyn pi_tools::UriReader>
                    }))
                    .chain(with_omp.then(|| {
                        Arc::new(crate::places::Histories {
                            sessions: environment.sessions.clone(),
                            session_id: environment.session_id.clone(),
                        }) as Arc<dyn pi_tools::UriReader>
                    }))
                    // Sessions that name a web tool read web pages too.
                    .chain(with_web.then(|| {
                        Arc::new(crate::web_tools::WebPages {
                            web: self.web.clone(),
                            offline,
                        }) as Arc<dyn pi_tools::UriReader>
                    }))
                    .collect(),
            ),
            files: self.lsp.as_ref().filter(|_| with_lsp).map(|pool| {
                Arc::new(crate::lsp::tool::LspFiles {
                    pool: pool.clone(),
                    session_id: environment.session_id.clone(),
                    cwd: environment.cwd.clone(),
                    env: environment.env.clone(),
                }) as Arc<dyn pi_tools::FileObserver>
            }),
            places,
            sandbox,
            spawner: self.spawner.clone(),
            resize_images: settings.resize_images,
        }))
    }
}

impl ToolFactory for BuiltinTools {
    fn tools(
        &self,
        environment: &ToolEnvironment,
        names: &[String],
    ) -> Result<Vec<Arc<dyn Tool>>, ToolsError> {
        let with_lsp = self.lsp.is_some() && names.iter().any(|name| name == "lsp");
        let with_tasks = self.tasks.is_some()
            && names
                .iter()
                .any(|name| name == "task" || name == "delegate_to_subagents");
        let with_web = names
            .iter()
            .any(|name| crate::web_tools::TOOLS.contains(&name.as_str()));
        let with_omp = names.iter().any(|name| {
            pi_omp::TOOLS.contains(&name.as_str())
                || crate::web_tools::TOOLS.contains(&name.as_str())
                || crate::ast_tools::TOOLS.contains(&name.as_str())
        });
        let context = self.context(environment, with_lsp, with_tasks, with_web, with_omp)?;
        let builtin: Vec<String> = names
            .iter()
            .filter(|name| !(with_lsp && *name == "lsp"))
            .filter(|name| !(self.tasks.is_some() && TASK_TOOLS.contains(&name.as_str())))
            .filter(|name| !(self.jobs.is_some() && *name == "job"))
            .filter(|name| !(self.kernels.is_some() && *name == "python"))
            .filter(|name| !pi_omp::TOOLS.contains(&name.as_str()))
            .filter(|name| !crate::web_tools::TOOLS.contains(&name.as_str()))
            .filter(|name| !crate::ast_tools::TOOLS.contains(&name.as_str()))
            .cloned()
            .collect();
        let mut tools = pi_tools::create_tools(&builtin, &context)?;
        if let Some(pool) = &self.jobs
            && let Some(at) = names.iter().position(|name| name == "job")
        {
            // `bash` gains `background`; `job` goes where the session named it.
            for tool in &mut tools {
                if tool.name() == "bash" {
                    *tool = crate::jobs::tool::BackgroundBash::layered(
                        tool.clone(),
                        pool.clone(),
                        context.clone(),
                    );
                }
            }
            let job: Arc<dyn Tool> = Arc::new(crate::jobs::tool::JobTool::new(
                pool.clone(),
                environment.session_id.clone(),
            ));
            tools.insert(at.min(tools.len()), job);
        }
        if let Some(pool) = &self.kernels
            && let Some(at) = names.iter().position(|name| name == "python")
        {
            let python: Arc<dyn Tool> = Arc::new(crate::kernels::tool::PythonTool::new(
                pool.clone(),
                crate::kernels::KernelPlace {
                    session_id: environment.session_id.clone(),
                    cwd: environment.cwd.clone(),
                    env: environment.env.clone(),
                },
                context.artifacts.clone(),
            ));
            tools.insert(at.min(tools.len()), python);
        }
        if let Some(manager) = &self.tasks {
            // Where the session named them.
            for (at, name) in names.iter().enumerate() {
                let tool: Arc<dyn Tool> = match name.as_str() {
                    "task" => Arc::new(crate::tasks::tool::TaskTool::new(
                        manager.clone(),
                        environment.clone(),
                        crate::tasks::tool::Shape::Task,
                    )),
                    "delegate_to_subagents" => Arc::new(crate::tasks::tool::TaskTool::new(
                        manager.clone(),
                        environment.clone(),
                        crate::tasks::tool::Shape::Delegate,
                    )),
                    "submit_result" => Arc::new(crate::tasks::tool::SubmitResultTool::new(
                        manager.clone(),
                        environment.session_id.clone(),
                    )),
                    _ => continue,
                };
                tools.insert(at.min(tools.len()), tool);
            }
        }
        // oh-my-pi's tools, where the session named them.
        let offline = context
            .sandbox
            .as_ref()
            .is_some_and(|sandbox| !sandbox.network);
        for (at, name) in names.iter().enumerate() {
            let tool: Arc<dyn Tool> = match name.as_str() {
                crate::ast_tools::AST_GREP => {
                    Arc::new(crate::ast_tools::AstGrepTool::new(context.clone()))
                }
                crate::ast_tools::AST_EDIT => {
                    Arc::new(crate::ast_tools::AstEditTool::new(context.clone()))
                }
                crate::web_tools::FETCH => Arc::new(crate::web_tools::FetchTool::new(Arc::new(
                    pi_tools::ReadTool::new(context.clone()),
                ))),
                crate::web_tools::WEB_SEARCH => Arc::new(crate::web_tools::WebSearchTool::new(
                    self.web.clone(),
                    environment.env.clone(),
                    offline,
                    crate::server_search::SessionModel {
                        sessions: environment.sessions.clone(),
                        session_id: environment.session_id.clone(),
                        env: environment.env.clone(),
                    },
                )),
                pi_omp::todo::NAME => Arc::new(pi_omp::todo::TodoTool::new(
                    environment.sessions.clone(),
                    environment.session_id.clone(),
                )),
                pi_omp::ask::NAME => Arc::new(pi_omp::ask::AskTool::new(
                    environment.sessions.clone(),
                    environment.session_id.clone(),
                )),
                _ => continue,
            };
            tools.insert(at.min(tools.len()), tool);
        }
        if let Some(pool) = self.lsp.as_ref().filter(|_| with_lsp) {
            let lsp: Arc<dyn Tool> = Arc::new(crate::lsp::tool::LspTool::new(
                pool.clone(),
                environment.session_id.clone(),
                environment.cwd.clone(),
                environment.env.clone(),
                context.write_gate(),
            ));
            // Where the session named it.
            let at = names
                .iter()
                .position(|name| name == "lsp")
                .unwrap_or(tools.len())
                .min(tools.len());
            tools.insert(at, lsp);
            tools = tools
                .into_iter()
                .map(|inner| {
                    pi_agent::layered(
                        inner,
                        crate::lsp::tool::WithLspNotes {
                            pool: pool.clone(),
                            session_id: environment.session_id.clone(),
                            cwd: environment.cwd.clone(),
                        },
                    )
                })
                .collect();
        }
        let tools = gated(self.policy.as_ref(), environment, tools);
        Ok(match self.extensions_for(environment) {
            Some(host) => with_extension_hooks(host, environment, tools),
            None => tools,
        })
    }

    fn reads_only(&self, tool: &str, arguments: &serde_json::Value) -> bool {
        crate::policy::rules::is_read_only(tool, arguments)
    }

    fn plan_tool(&self, environment: &ToolEnvironment) -> Option<Arc<dyn Tool>> {
        let local = self
            .local_dir(environment)
            .inspect_err(|error| tracing::warn!(%error, "no local:// for the plan"))
            .ok()?;
        Some(Arc::new(pi_omp::plan::ExitPlanModeTool::new(
            environment.sessions.clone(),
            environment.session_id.clone(),
            local.join("PLAN.md"),
        )))
    }

    fn default_names(&self) -> Vec<String> {
        DEFAULT_TOOLS
            .iter()
            .map(|name| (*name).to_owned())
            .collect()
    }

    fn known_names(&self) -> Vec<String> {
        let mut names: Vec<&str> = pi_tools::ALL_TOOLS.to_vec();
        if self.lsp.is_some() {
            names.push("lsp");
        }
        if self.tasks.is_some() {
            names.extend(&TASK_TOOLS[..2]);
        }
        if self.jobs.is_some() {
            names.push("job");
        }
        if self.kernels.is_some() {
            names.push("python");
        }
        names.extend(pi_omp::TOOLS);
        names.extend(crate::web_tools::TOOLS);
        names.extend(crate::ast_tools::TOOLS);
        names.into_iter().map(str::to_owned).collect()
    }

    fn delete_session(&self, session_id: &str) {
        if let Some(pool) = &self.jobs {
            pool.session_deleted(session_id);
        }
        if let Some(pool) = self.kernels.clone() {
            let session_id = session_id.to_owned();
            tokio::spawn(async move { pool.session_deleted(&session_id).await });
        }
        if let Some(pool) = &self.mcp {
            pool.forget_session(session_id);
        }
        if let Some(host) = &self.extensions {
            host.close(session_id);
        }
        if let Err(error) = self.artifacts.delete_session(session_id) {
            tracing::warn!(session = session_id, %error, "cannot delete the session's artifacts");
        }
    }

    fn tool_source(&self, environment: &ToolEnvironment) -> Option<Arc<dyn ToolSource>> {
        let mcp = self.mcp.as_ref().map(|pool| {
            let run_tools = pool.run_tools(
                &environment.session_id,
                &environment.cwd,
                &environment.env,
                &approver(environment),
            );
            Arc::new(GatedSource {
                inner: run_tools,
                policy: self.policy.clone(),
                environment: environment.clone(),
            }) as Arc<dyn ToolSource>
        });
        let extensions = self.extensions_for(environment).map(|host| {
            host.warm_up(
                &environment.session_id,
                &environment.cwd,
                &crate::extension_hooks::choice(environment),
                crate::extension_hooks::port(environment),
            );
            Arc::new(ExtensionSource {
                host: host.clone(),
                policy: self.policy.clone(),
                environment: environment.clone(),
            }) as Arc<dyn ToolSource>
        });
        match (mcp, extensions) {
            (Some(mcp), Some(extensions)) => Some(Arc::new(Sources(vec![mcp, extensions]))),
            (mcp, extensions) => mcp.or(extensions),
        }
    }

    /// The MCP tools only (`session/get` shows them as `mcpTools`); the tools extensions
    /// register are listed by `extensions/list`.
    fn source_tool_names(&self, session_id: &str) -> Vec<String> {
        self.mcp
            .as_ref()
            .map(|pool| pool.tool_names(session_id))
            .unwrap_or_default()
    }

    fn warm_up(&self, environment: &ToolEnvironment) {
        if let Some(pool) = &self.mcp {
            pool.warm_up(
                &environment.session_id,
                &environment.cwd,
                &environment.env,
                &approver(environment),
            );
        }
        if let Some(host) = self.extensions_for(environment) {
            host.warm_up(
                &environment.session_id,
                &environment.cwd,
                &crate::extension_hooks::choice(environment),
                crate::extension_hooks::port(environment),
            );
        }
    }

    fn session_closed(&self, session_id: &str) {
        if let Some(pool) = &self.mcp {
            pool.session_closed(session_id);
        }
        if let Some(host) = &self.extensions {
            host.close(session_id);
        }
        if let Some(pool) = &self.lsp {
            pool.session_closed(session_id);
        }
        if let Some(manager) = &self.policy {
            manager.session_closed(session_id);
        }
    }

    fn commands(&self, session_id: &str) -> Vec<(String, String)> {
        let Some(pool) = &self.mcp else {
            return Vec::new();
        };
        pool.prompts_for(session_id)
            .into_iter()
            .map(|(server, prompt)| (format!("mcp:{server}:{}", prompt.name), prompt.description))
            .collect()
    }

    fn expand_command<'a>(
        &'a self,
        environment: &'a ToolEnvironment,
        text: &'a str,
    ) -> Option<crate::session::services::CommandFuture<'a>> {
        let pool = self.mcp.as_ref()?;
        if !text.starts_with(crate::mcp::prompts::COMMAND_PREFIX) {
            return None;
        }
        Some(Box::pin(async move {
            match pool.expand_prompt(&environment.session_id, text).await {
                Some(expanded) => expanded.map_err(CommandError::from),
                None => Ok(text.to_owned()),
            }
        }))
    }
}

/// `tools` behind the session's approvals (when the daemon has a policy manager).
fn gated(
    policy: Option<&Arc<crate::policy::PolicyManager>>,
    environment: &ToolEnvironment,
    tools: Vec<Arc<dyn Tool>>,
) -> Vec<Arc<dyn Tool>> {
    let Some(manager) = policy else {
        return tools;
    };
    let port: Arc<dyn crate::policy::ApprovalPort> = Arc::new(SessionApprovals {
        sessions: environment.sessions.clone(),
        session_id: environment.session_id.clone(),
    });
    tools
        .into_iter()
        .map(|inner| {
            pi_agent::layered(
                inner,
                crate::policy::PolicyGate {
                    manager: manager.clone(),
                    session_id: environment.session_id.clone(),
                    cwd: environment.cwd.clone(),
                    port: port.clone(),
                },
            )
        })
        .collect()
}

/// One session as its approvals reach it: decisions recorded in it, questions asked of the
/// people attached to it, through the registry.
struct SessionApprovals {
    sessions: crate::session::SessionsWeak,
    session_id: String,
}

impl crate::policy::ApprovalPort for SessionApprovals {
    fn record(
        &self,
        decision: serde_json::Value,
    ) -> futures_util::future::BoxFuture<'_, Result<(), crate::policy::PortError>> {
        Box::pin(async move {
            let sessions = self.sessions.upgrade().ok_or("the daemon is stopping")?;
            sessions
                .call(&self.session_id, |reply| crate::session::Command::Record {
                    custom_type: "approval".to_owned(),
                    data: decision.clone(),
                    reply,
                })
                .await
                .map(|_| ())
                .map_err(Into::into)
        })
    }

    fn ask(
        &self,
        request: pi_protocol::v1::UiRequest,
        timeout: std::time::Duration,
    ) -> futures_util::future::BoxFuture<
        '_,
        Result<pi_protocol::v1::UiAskResponse, crate::policy::PortError>,
    > {
        Box::pin(async move {
            let sessions = self.sessions.upgrade().ok_or("the daemon is stopping")?;
            sessions
                .ask(pi_protocol::v1::UiAskParams {
                    session_id: self.session_id.clone(),
                    request,
                    timeout_ms: Some(timeout.as_millis() as u64),
                })
                .await
                .map_err(Into::into)
        })
    }
}

/// `tools` inside the `tool_call` / `tool_result` handlers of the session's extensions.
fn with_extension_hooks(
    host: &Arc<crate::extensions::ExtensionHost>,
    environment: &ToolEnvironment,
    tools: Vec<Arc<dyn Tool>>,
) -> Vec<Arc<dyn Tool>> {
    tools
        .into_iter()
        .map(|inner| {
            pi_agent::layered(
                inner,
                crate::extensions::tool::ExtensionGate {
                    host: host.clone(),
                    session_id: environment.session_id.clone(),
                },
            )
        })
        .collect()
}

/// The tools a session's extensions registered, once they loaded (the first run waits for
/// them), inside the extensions' hooks and the session's approvals like the built-in ones.
struct ExtensionSource {
    host: Arc<crate::extensions::ExtensionHost>,
    policy: Option<Arc<crate::policy::PolicyManager>>,
    environment: ToolEnvironment,
}

impl ToolSource for ExtensionSource {
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        let Some(set) = self.host.current(&self.environment.session_id) else {
            return Vec::new();
        };
        let allowed = self.environment.extension_tools.as_deref();
        let tools = set
            .tools
            .iter()
            .filter(|tool| allowed.is_none_or(|names| names.contains(&tool.name)))
            .map(|tool| {
                Arc::new(crate::extensions::tool::ExtensionTool::new(
                    self.host.clone(),
                    self.environment.session_id.clone(),
                    tool.clone(),
                )) as Arc<dyn Tool>
            })
            .collect();
        let tools = gated(self.policy.as_ref(), &self.environment, tools);
        with_extension_hooks(&self.host, &self.environment, tools)
    }

    fn awaited(&self) -> Option<pi_agent::ToolWait> {
        if self.host.current(&self.environment.session_id).is_some() {
            return None;
        }
        let host = self.host.clone();
        let session_id = self.environment.session_id.clone();
        Some(pi_agent::ToolWait {
            sources: vec!["extensions".to_owned()],
            timeout: std::time::Duration::from_secs(60),
            done: Box::pin(async move {
                match host.opened(&session_id).await {
                    Some(_) => Vec::new(),
                    None => vec!["extensions".to_owned()],
                }
            }),
        })
    }

    /// pi: a tool an extension registers under a built-in's name replaces it.
    fn overrides(&self, name: &str) -> bool {
        self.host
            .current(&self.environment.session_id)
            .is_some_and(|set| set.tools.iter().any(|tool| tool.name == name))
    }

    fn active(&self) -> Option<Vec<String>> {
        self.host.active_tools(&self.environment.session_id)
    }
}

/// Several sources as one: their tools in order, their waits together.
struct Sources(Vec<Arc<dyn ToolSource>>);

impl ToolSource for Sources {
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.0.iter().flat_map(|source| source.tools()).collect()
    }

    /// Each source says whether a tool of its own is under `name` (without building its
    /// tools).
    fn overrides(&self, name: &str) -> bool {
        self.0.iter().any(|source| source.overrides(name))
    }

    fn active(&self) -> Option<Vec<String>> {
        self.0.iter().find_map(|source| source.active())
    }

    fn awaited(&self) -> Option<pi_agent::ToolWait> {
        let waits: Vec<pi_agent::ToolWait> = self
            .0
            .iter()
            .filter_map(|source| source.awaited())
            .collect();
        if waits.len() <= 1 {
            return waits.into_iter().next();
        }
        let sources = waits.iter().flat_map(|wait| wait.sources.clone()).collect();
        let timeout = waits
            .iter()
            .map(|wait| wait.timeout)
            .max()
            .unwrap_or_default();
        let done = futures_util::future::join_all(waits.into_iter().map(|wait| wait.done));
        Some(pi_agent::ToolWait {
            sources,
            timeout,
            done: Box::pin(async move { done.await.into_iter().flatten().collect() }),
        })
    }
}

/// A run's MCP tools behind the session's approvals, like its built-in ones.
struct GatedSource {
    inner: crate::mcp::source::RunTools,
    policy: Option<Arc<crate::policy::PolicyManager>>,
    environment: ToolEnvironment,
}

impl ToolSource for GatedSource {
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        gated(self.policy.as_ref(), &self.environment, self.inner.tools())
    }

    fn awaited(&self) -> Option<pi_agent::ToolWait> {
        self.inner.awaited()
    }
}

/// The URI readers of a session (`mcp://`, `agent://`), as one.
#[derive(Debug)]
struct UriReaders(Vec<Arc<dyn pi_tools::UriReader>>);

impl UriReaders {
    /// `None` without readers, the reader itself when one.
    fn of(mut readers: Vec<Arc<dyn pi_tools::UriReader>>) -> Option<Arc<dyn pi_tools::UriReader>> {
        match readers.len() {
            0 => None,
            1 => readers.pop(),
            _ => Some(Arc::new(UriReaders(readers))),
        }
    }
}

impl pi_tools::UriReader for UriReaders {
    fn scheme(&self) -> &str {
        self.0.first().map_or("", |reader| reader.scheme())
    }

    fn handles(&self, uri: &str) -> bool {
        self.0.iter().any(|reader| reader.handles(uri))
    }

    fn describe(&self) -> String {
        self.0
            .iter()
            .map(|reader| reader.describe())
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn path_hint(&self) -> String {
        self.0
            .iter()
            .map(|reader| reader.path_hint())
            .collect::<Vec<_>>()
            .join(", or ")
    }

    fn read<'a>(&'a self, uri: &'a str) -> pi_tools::UriFuture<'a> {
        match self.0.iter().find(|reader| reader.handles(uri)) {
            Some(reader) => reader.read(uri),
            None => Box::pin(async move { Err(format!("nothing reads {uri}")) }),
        }
    }
}

/// A session's view of the MCP servers' resources, for `read` (`mcp://<server>/<uri>`).
#[derive(Debug)]
struct McpResources {
    pool: Arc<crate::mcp::McpPool>,
    session_id: String,
}

impl pi_tools::UriReader for McpResources {
    fn scheme(&self) -> &str {
        crate::mcp::prompts::RESOURCE_SCHEME
    }

    fn describe(&self) -> String {
        "Also reads resources of the session's MCP servers given as mcp://SERVER/URI.".to_owned()
    }

    fn path_hint(&self) -> String {
        "mcp://SERVER/URI".to_owned()
    }

    fn read<'a>(&'a self, uri: &'a str) -> pi_tools::UriFuture<'a> {
        Box::pin(async move {
            self.pool
                .read_resource(&self.session_id, uri)
                .await
                .map_err(|error| error.to_string())
        })
    }
}

/// The user shell commands running now: at most one per session, as pi runs one `!cmd` at a
/// time. `session/abort` cancels a session's command.
#[derive(Debug, Default)]
pub struct UserShells {
    // Session id → the running command's cancel token. Entries are added by `start` and
    // removed when the returned guard drops. A sync mutex, never held across `.await`.
    running: Mutex<HashMap<String, CancellationToken>>,
}

/// A session's running user shell command; dropping it unregisters the command.
#[derive(Debug)]
pub struct UserShellGuard<'a> {
    shells: &'a UserShells,
    session_id: String,
    /// Fires on `session/abort` or when `parent` (the daemon's shutdown) fires.
    pub cancel: CancellationToken,
}

impl UserShells {
    /// Registers a command of `session_id`; `None` if one is already running.
    pub fn start(
        &self,
        session_id: &str,
        parent: &CancellationToken,
    ) -> Option<UserShellGuard<'_>> {
        let mut running = self
            .running
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if running.contains_key(session_id) {
            return None;
        }
        let cancel = parent.child_token();
        running.insert(session_id.to_owned(), cancel.clone());
        Some(UserShellGuard {
            shells: self,
            session_id: session_id.to_owned(),
            cancel,
        })
    }

    /// Kills the running command of `session_id`, if any.
    pub fn abort(&self, session_id: &str) {
        let running = self
            .running
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(cancel) = running.get(session_id) {
            cancel.cancel();
        }
    }
}

impl Drop for UserShellGuard<'_> {
    fn drop(&mut self) {
        let mut running = self
            .shells
            .running
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        running.remove(&self.session_id);
    }
}

/// Why a user shell command could not run.
#[derive(Debug, thiserror::Error)]
pub enum UserBashError {
    /// The session's artifacts directory could not be made.
    #[error(transparent)]
    Artifacts(#[from] pi_tools::ArtifactError),
    /// The command could not be started.
    #[error(transparent)]
    Exec(#[from] pi_tools::exec::ExecError),
}

/// Runs a user shell command (`!cmd`) in the session's cwd and environment with sanitized,
/// tail-truncated output (the full output kept as an artifact), and returns the
/// `bashExecution` message to record. `cancel` kills the command's process group (the message
/// then says `cancelled`).
#[allow(
    clippy::too_many_arguments,
    reason = "one call site; the command's whole setting"
)]
pub async fn user_bash(
    environment: &ToolEnvironment,
    artifacts: &Artifacts,
    spawner: &Spawner,
    shell: &ShellConfig,
    command: &str,
    exclude_from_context: bool,
    cancel: &CancellationToken,
) -> Result<BashExecutionMessage, UserBashError> {
    let session_artifacts = artifacts.session(&environment.session_id)?;
    let place = ExecPlace {
        cwd: &environment.cwd,
        env: &environment.env,
        shell,
        artifacts: &session_artifacts,
        sandbox: None,
        spawner,
    };
    let request = ExecRequest {
        command: command.to_owned(),
        timeout: None,
        style: OutputStyle::Sanitized,
    };
    let result = exec::run(place, &request, cancel, &mut |_| {}).await?;
    let (exit_code, cancelled) = match result.end {
        ExecEnd::Exited(code) => (Some(code), false),
        ExecEnd::Signaled => (None, false),
        ExecEnd::TimedOut | ExecEnd::Aborted => (None, true),
    };
    let truncation = &result.output.truncation;
    Ok(BashExecutionMessage {
        command: command.to_owned(),
        output: truncation.content.clone(),
        exit_code,
        cancelled,
        truncated: truncation.truncated,
        full_output_path: result.output.artifact_reference(),
        exclude_from_context,
        timestamp: pi_util::time::now_millis(),
    })
}

/// Asks MCP trust questions (`mcp::trust`) as `ui/ask` confirmations of the session that
/// wants the server: made from the session's environment for each acquisition of its servers
/// (nothing set on the pool after construction). Holds the registry weakly, as the
/// environment does.
#[derive(Debug)]
struct SessionsApprover(crate::session::SessionsWeak);

impl crate::mcp::trust::Approver for SessionsApprover {
    fn confirm(
        &self,
        session_id: String,
        title: String,
        message: String,
    ) -> futures_util::future::BoxFuture<'static, Option<bool>> {
        let sessions = self.0.clone();
        Box::pin(async move {
            let asked = sessions
                .upgrade()?
                .ask(pi_protocol::v1::UiAskParams {
                    session_id,
                    request: pi_protocol::v1::UiRequest::Confirm { title, message },
                    timeout_ms: None,
                })
                .await
                .ok()?;
            if asked.answer.cancelled {
                return None;
            }
            asked.answer.confirmed
        })
    }
}

/// The MCP trust questions of the session `environment` belongs to.
fn approver(environment: &ToolEnvironment) -> Arc<dyn crate::mcp::trust::Approver> {
    Arc::new(SessionsApprover(environment.sessions.clone()))
}

/// pi's `shellPath` and `shellCommandPrefix` of the settings of `cwd` (`~/` is the home).
/// What the tools of sessions in one directory take from its settings.
#[derive(Clone, Debug)]
struct ToolSettings {
    shell: ShellConfig,
    resize_images: bool,
}

impl Default for ToolSettings {
    fn default() -> Self {
        ToolSettings {
            shell: ShellConfig::default(),
            resize_images: true,
        }
    }
}

fn tool_settings(roots: &crate::coding::ResourceRoots, cwd: &std::path::Path) -> ToolSettings {
    let (settings, _) = roots.load_settings(Some(cwd));
    ToolSettings {
        shell: shell_of(roots, &settings),
        resize_images: settings.auto_resize_images,
    }
}

/// The shell of `bash` in `cwd` (`shellPath`, `shellCommandPrefix`).
pub fn shell_config(roots: &crate::coding::ResourceRoots, cwd: &std::path::Path) -> ShellConfig {
    shell_of(roots, &roots.load_settings(Some(cwd)).0)
}

fn shell_of(
    roots: &crate::coding::ResourceRoots,
    settings: &crate::coding::Settings,
) -> ShellConfig {
    ShellConfig {
        shell_path: settings.shell_path.as_ref().map(|path| {
            match (
                path.strip_prefix("~/"),
                roots.home.as_ref().or(std::env::home_dir().as_ref()),
            ) {
                (Some(rest), Some(home)) => home.join(rest),
                _ => std::path::PathBuf::from(path),
            }
        }),
        command_prefix: settings
            .shell_command_prefix
            .clone()
            .filter(|prefix| !prefix.is_empty()),
    }
}
