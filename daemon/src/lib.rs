//! The pi daemon as a library: `run` starts every listener and serves until shutdown.
//!
//! Layout: `lifecycle` (directories, instance lock, signals, shutdown), `config`
//! (`config.toml`), `store` (the `pi-store` crate: SQLite via sqlx, the only place with SQL), `rpc` (transports,
//! connection loop, dispatch, method handlers), `state` (what all connections share),
//! `session` (the session registry and actors), `compaction` (pi's compaction and branch
//! summaries as pure functions).
//!
//! Architecture invariant: a failure inside one connection or request never ends the daemon.
//! Only the lifecycle code decides when the process exits.

pub mod accounts;
pub mod ast_tools;
pub mod clients;
/// pi's coding-agent resources are their own crate (`pi-coding`, `daemon/coding/`).
pub use pi_coding as coding;
pub use pi_extensions as extensions;
/// The session core is its own crate (`pi-session`, `daemon/session/`), compaction included.
pub use pi_session::compaction;
pub mod config;
pub mod config_watch;
pub mod convert;
pub mod extension_hooks;
pub mod extension_host;
pub mod frame;
pub use pi_jobs as jobs;
pub use pi_kernels as kernels;
pub mod lifecycle;
pub mod logging;
pub use pi_lsp as lsp;
pub use pi_mcp as mcp;
pub mod model;
pub mod outbound;
pub mod places;
pub mod server_search;
pub use pi_policy as policy;
pub mod rpc;
pub mod schema_export;
pub use pi_session as session;
pub mod state;
pub use pi_session::testing;
/// The store is its own crate (`pi-store`, `daemon/store/`); `crate::store` names it here.
pub use pi_store as store;
pub use pi_tasks as tasks;
pub mod tools;
pub mod web_auth;
pub mod web_tools;

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use tokio_util::task::TaskTracker;

use crate::config::Config;
use crate::lifecycle::InstanceLock;
use crate::state::DaemonState;
use crate::store::Store;

/// How `pid` was started.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Started by `pi-client`'s autostart: leave the client's session and report the
    /// supervisor as `client`.
    pub autostarted: bool,
    /// The log file stdout and stderr point at (`--log-file`), rotated at `log.max_bytes`.
    pub log_file: Option<Arc<logging::file::LogFile>>,
    /// Reads the bytes the process's allocator has handed out, for `daemon/status`.
    pub heap_bytes: Option<fn() -> Option<u64>>,
}

/// Threads of the runtime's blocking pool at most. Only short work runs there (file
/// operations, a tool's search); what blocks for long (a terminal job's output and exit) has
/// threads of its own.
const BLOCKING_THREADS: usize = 16;

/// How long connections get to finish after shutdown begins, before the daemon exits anyway.
/// Together with the store's close this keeps the whole shutdown under 5 s.
const CONNECTION_DRAIN_TIMEOUT: Duration = Duration::from_millis(2000);
const STORE_CLOSE_TIMEOUT: Duration = Duration::from_millis(800);

/// Runs the daemon until SIGTERM, SIGINT or `daemon/shutdown`, then shuts down gracefully.
pub fn run(options: RunOptions) -> anyhow::Result<()> {
    let user_umask = lifecycle::private_umask();
    if options.autostarted {
        // Leave the autostarting client's session and process group, so a Ctrl+C or a closed
        // terminal there never reaches the daemon. Fails harmlessly if already a leader.
        let _ = rustix::process::setsid();
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("pid-worker")
        // File work of the tools and `tokio::fs` runs on the blocking pool; tokio's default of
        // 512 threads let 1,000 concurrent sessions start hundreds of threads, each with its
        // stack and allocator cache. The machine's cores are the real bound; waiting work
        // queues instead (measured in docs/benchmarks.md, Scale).
        .max_blocking_threads(BLOCKING_THREADS)
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(serve(options, user_umask))
}

async fn serve(options: RunOptions, user_umask: u32) -> anyhow::Result<()> {
    lifecycle::raise_open_files_limit();
    let paths = pi_paths::Paths::from_env().context("cannot resolve the daemon's directories")?;
    lifecycle::prepare_directories(&paths)?;
    let lock = InstanceLock::acquire(&paths)?;
    lifecycle::remove_stale_socket(&paths.socket_path())?;
    let config = Config::load(&paths.config_file())?;
    if let Some(log_file) = &options.log_file {
        log_file.set_max_bytes(config.log.max_bytes);
    }
    let store = Store::open(&paths.database_path())
        .await
        .map_err(|error| {
            let explained = session::SessionError::storage(&paths.database_path(), error);
            anyhow::anyhow!(explained.to_string())
        })
        .context("cannot open the database")?;

    let supervisor = lifecycle::detect_supervisor(options.autostarted);
    let spawner = pi_tools::spawn::Spawner::for_current_exe(Some(user_umask));
    let mcp = Arc::new(mcp::McpPool::new(
        paths.config_dir.clone(),
        paths.pi_agent_dir.clone(),
        paths.state_dir.clone(),
        mcp::McpTimings {
            linger: Duration::from_secs(config.mcp.linger_secs),
            first_start_wait: Duration::from_secs(config.mcp.first_start_wait_secs),
        },
        pi_tools::Artifacts::new(paths.artifacts_dir()),
        spawner.clone(),
    ));
    let builtin = tools::BuiltinTools::new(pi_tools::Artifacts::new(paths.artifacts_dir()))
        .with_spawner(spawner.clone())
        .with_settings(coding::ResourceRoots::from_paths(&paths));
    let lsp = Arc::new(
        lsp::LspPool::new(
            paths.state_dir.clone(),
            // Language servers cost seconds (minutes for big projects) to start: five minutes
            // unless settings' `lsp.idleTimeoutMs` says otherwise.
            lsp::DEFAULT_IDLE_TIMEOUT,
            spawner.clone(),
            builtin.locks().clone(),
        )
        .with_outbound(lsp::rpc::OutboundLimits {
            write_timeout: Duration::from_secs(config.limits.lsp_write_timeout_secs),
            ..lsp::rpc::OutboundLimits::default()
        }),
    );
    lsp.set_settings_roots(coding::ResourceRoots::from_paths(&paths));
    let policy = Arc::new(policy::PolicyManager::new(
        coding::ResourceRoots::from_paths(&paths),
        store.clone(),
    ));
    let tasks = Arc::new(tasks::TaskManager::new(
        coding::ResourceRoots::from_paths(&paths),
        &paths.data_dir,
        spawner.clone(),
        Some(policy.clone()),
        store.clone(),
    ));
    let jobs = Arc::new(jobs::JobPool::new(
        spawner.clone(),
        jobs::JobLimits {
            per_session: config.limits.jobs_per_session,
            total: config.limits.jobs,
        },
    ));
    match jobs.attach_store(store.clone()).await {
        Ok(0) => {}
        Ok(lost) => tracing::warn!(jobs = lost, "jobs of the previous daemon were lost"),
        Err(error) => tracing::warn!(%error, "cannot read the stored jobs"),
    }
    let kernels = Arc::new(kernels::KernelPool::new(
        spawner.clone(),
        kernels::KernelLimits {
            max: config.limits.kernels,
            idle: Duration::from_secs(config.limits.kernel_idle_secs),
        },
    ));
    let extension_trust = Arc::new(extension_host::ExtensionTrust::default());
    if let Err(error) = extension_trust.attach_store(store.clone()).await {
        tracing::warn!(%error, "cannot read the answers about project extensions");
    }
    let extensions = extensions::ExtensionHost::new(
        extension_host::config(
            &paths,
            Duration::from_secs(config.limits.extension_hook_timeout_secs),
        )?,
        spawner.clone(),
        extension_trust.clone(),
    );
    let models = std::sync::Arc::new(model::RegistryModels::load(&paths));
    let services = session::SessionServices {
        hooks: std::sync::Arc::new(extension_hooks::ExtensionHooks::new(extensions.clone())),
        models: models.clone(),
        tools: std::sync::Arc::new(
            builtin
                .with_extensions(extensions.clone())
                .with_mcp(mcp.clone())
                .with_lsp(lsp.clone())
                .with_tasks(tasks.clone())
                .with_policy(policy.clone())
                .with_jobs(jobs.clone())
                .with_kernels(kernels.clone()),
        ),
        settings: session::SessionSettings {
            resources: coding::ResourceRoots {
                pi_docs: Some(extension_host::pi_package_dir(&paths)),
                ..coding::ResourceRoots::from_paths(&paths)
            },
            idle_unload: Duration::from_secs(config.limits.session_idle_secs),
            recent_unwatched: session::recent::WindowBudget::new(
                config.limits.recent_unwatched_bytes,
            ),
            recent_windows: session::recent::WindowPool::new(config.limits.recent_bytes),
            ..session::SessionSettings::default()
        },
    };
    if let Err(error) = mcp.attach_store(store.clone()).await {
        tracing::warn!(%error, "cannot read what the MCP pool stored");
    }
    mcp.set_settings_roots(coding::ResourceRoots::from_paths(&paths));
    let mut state = DaemonState::new(paths.clone(), config, store, supervisor, services);
    state.spawner = spawner;
    state.mcp = Some(mcp.clone());
    state.lsp = Some(lsp);
    state.policy = Some(policy.clone());
    state.jobs = Some(jobs);
    state.kernels = Some(kernels);
    state.extensions = Some(extensions);
    state.extension_trust = extension_trust;
    state.accounts = Some(Arc::new(accounts::Accounts::new(models)));
    state.heap_bytes = options.heap_bytes;
    let state = Arc::new(state);
    match state.store.policy_modes().await {
        Ok(modes) => policy.restore_modes(modes),
        Err(error) => tracing::warn!(%error, "cannot read the sessions' approval modes"),
    }
    lifecycle::spawn_signal_handler(state.shutdown.clone())?;
    serve_state(state).await?;
    lifecycle::remove_runtime_files(&paths);
    drop(lock);
    tracing::info!("stopped");
    Ok(())
}

/// Serves `state` on its socket and WebSocket until `state.shutdown` fires, then stops
/// sessions, drains connections and closes the store. Used by `run` and by in-process tests.
pub async fn serve_state(state: Arc<DaemonState>) -> anyhow::Result<()> {
    let recovered = state
        .sessions
        .recover_interrupted()
        .await
        .map_err(|error| anyhow::anyhow!(error.to_string()))?;
    if recovered > 0 {
        tracing::warn!(
            sessions = recovered,
            "closed runs interrupted by the previous daemon"
        );
    }
    let tracker = TaskTracker::new();
    // WebSocket first, so its port file exists before the socket accepts: a client that sees
    // the daemon ready can rely on every endpoint being up.
    // A WebSocket that cannot listen (its port taken) is reported; the Unix socket — every
    // CLI and TUI — serves on.
    if state.config.websocket.enabled {
        match rpc::ws::bind(&state).await {
            Ok(listener) => {
                tracker.spawn(rpc::ws::serve(state.clone(), listener, tracker.clone()));
            }
            Err(error) => {
                let error = format!("{error:#}");
                tracing::error!(%error, "the WebSocket listener did not start; serving the Unix socket only");
                state.set_websocket_error(error);
            }
        }
    }
    config_watch::spawn(
        config_watch::ConfigWatch {
            config_dir: state.paths.config_dir.clone(),
            pi_agent_dir: state.paths.pi_agent_dir.clone(),
            models: state.sessions.services().models.clone(),
            roots: state.sessions.services().settings.resources.clone(),
            files: state.config_files.clone(),
            clients: state.clients.clone(),
            shutdown: state.shutdown.clone(),
        },
        &tracker,
    );
    tracker.spawn(rpc::methods::mcp::announce_changes(state.clone()));
    tracker.spawn(rpc::methods::lsp::announce_changes(state.clone()));
    let uds = rpc::uds::bind(&state.paths.socket_path())?;
    tracker.spawn(rpc::uds::accept_loop(state.clone(), uds, tracker.clone()));

    tracing::info!(
        pid = std::process::id(),
        version = env!("CARGO_PKG_VERSION"),
        socket = %state.paths.socket_path().display(),
        websocket = state.websocket_url().unwrap_or("disabled"),
        schema_version = state.store.schema_version(),
        supervisor = ?state.supervisor,
        "pid ready"
    );

    state.shutdown.cancelled().await;
    tracing::info!("shutting down");
    // Sessions first: runs are aborted and saved while subscribers can still hear about it.
    state.sessions.shutdown().await;
    if let Some(mcp) = &state.mcp {
        mcp.shutdown().await;
    }
    if let Some(lsp) = &state.lsp {
        lsp.shutdown();
    }
    if let Some(jobs) = &state.jobs {
        jobs.shutdown().await;
    }
    if let Some(kernels) = &state.kernels {
        kernels.shutdown().await;
    }
    if let Some(extensions) = &state.extensions {
        extensions.shutdown();
    }
    tracker.close();
    if tokio::time::timeout(CONNECTION_DRAIN_TIMEOUT, tracker.wait())
        .await
        .is_err()
    {
        tracing::warn!(
            timeout_ms = CONNECTION_DRAIN_TIMEOUT.as_millis() as u64,
            "connections did not close in time; exiting anyway"
        );
    }
    if tokio::time::timeout(STORE_CLOSE_TIMEOUT, state.store.close())
        .await
        .is_err()
    {
        tracing::warn!("database did not close in time; SQLite's WAL keeps committed data safe");
    }
    Ok(())
}
