//! [`TempDaemon`]: the real `pid` binary running in a fresh temporary `PI_HOME`.

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use pi_client::{Client, Endpoint, Notifications};
use pi_paths::Paths;
use pi_protocol::v1::ClientCapabilities;
use tempfile::TempDir;
use tokio::process::{Child, Command};

/// Environment variables the daemon reads provider keys from (every `envVars` of
/// `daemon/llm/src/catalog/pi-models.json`); removed from its environment.
pub const PROVIDER_KEY_VARIABLES: [&str; 29] = [
    "ANTHROPIC_OAUTH_TOKEN",
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "DEEPSEEK_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_CLOUD_API_KEY",
    "COPILOT_GITHUB_TOKEN",
    "GH_TOKEN",
    "GITHUB_TOKEN",
    "OPENROUTER_API_KEY",
    "AI_GATEWAY_API_KEY",
    "XAI_API_KEY",
    "GROQ_API_KEY",
    "CEREBRAS_API_KEY",
    "ZAI_API_KEY",
    "MISTRAL_API_KEY",
    "MINIMAX_API_KEY",
    "MINIMAX_CN_API_KEY",
    "MOONSHOT_API_KEY",
    "HF_TOKEN",
    "FIREWORKS_API_KEY",
    "OPENCODE_API_KEY",
    "KIMI_API_KEY",
    "CLOUDFLARE_API_KEY",
    "XIAOMI_API_KEY",
    "XIAOMI_TOKEN_PLAN_CN_API_KEY",
    "XIAOMI_TOKEN_PLAN_AMS_API_KEY",
    "XIAOMI_TOKEN_PLAN_SGP_API_KEY",
];

/// How long a fixture waits for the daemon to become ready or to exit.
pub const FIXTURE_TIMEOUT: Duration = Duration::from_secs(20);

/// A running `pid` in its own temporary home. Killed (SIGKILL) when dropped.
#[derive(Debug)]
pub struct TempDaemon {
    /// The temporary `PI_HOME`; removed when the fixture drops.
    pub home: TempDir,
    /// The resolved paths inside `home`.
    pub paths: Paths,
    binary: PathBuf,
    child: Option<Child>,
    stderr_path: PathBuf,
    // The file-creation mask the daemon starts with; the test's own when `None`.
    launch_umask: Option<u32>,
    // Variables the daemon starts with besides the fixture's own.
    launch_env: Vec<(String, String)>,
}

impl TempDaemon {
    /// Starts `pid` (at `binary`) in a new temporary home with default configuration and
    /// waits until it answers `initialize`.
    pub async fn start(binary: &Path) -> TempDaemon {
        TempDaemon::start_with_config(binary, "").await
    }

    /// Like [`TempDaemon::start`], writing `config_toml` to `config.toml` first.
    pub async fn start_with_config(binary: &Path, config_toml: &str) -> TempDaemon {
        TempDaemon::start_with_files(binary, config_toml, &[]).await
    }

    /// Like [`TempDaemon::start_with_config`], also writing `files` (paths relative to
    /// `PI_HOME`, e.g. `.pi/agent/models.json`) first.
    pub async fn start_with_files(
        binary: &Path,
        config_toml: &str,
        files: &[(&str, String)],
    ) -> TempDaemon {
        TempDaemon::start_with_env(binary, config_toml, files, &[]).await
    }

    /// Like [`TempDaemon::start_with_files`], the daemon started with `env` in its environment
    /// too (and after every restart).
    pub async fn start_with_env(
        binary: &Path,
        config_toml: &str,
        files: &[(&str, String)],
        env: &[(&str, &str)],
    ) -> TempDaemon {
        let home = tempfile::Builder::new()
            .prefix("pi-test-")
            .tempdir()
            .unwrap();
        let paths = paths_for(home.path());
        std::fs::create_dir_all(&paths.config_dir).unwrap();
        std::fs::write(paths.config_file(), config_toml).unwrap();
        for (relative, contents) in files {
            let path = home.path().join(relative);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, contents).unwrap();
        }
        let mut daemon = TempDaemon {
            stderr_path: home.path().join("pid.stderr"),
            home,
            paths,
            binary: binary.to_path_buf(),
            child: None,
            launch_umask: None,
            launch_env: env
                .iter()
                .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
                .collect(),
        };
        daemon.spawn_and_wait().await;
        daemon
    }

    /// Starts `pid` again in the same home (after it exited or was killed) and waits for it.
    pub async fn restart(&mut self) {
        assert!(
            self.child.is_none(),
            "restart called while the daemon still runs"
        );
        self.spawn_and_wait().await;
    }

    /// Starts the daemon with file-creation mask `mask` from the next (re)start on, as a user
    /// with that `umask` would.
    pub fn set_launch_umask(&mut self, mask: u32) {
        self.launch_umask = Some(mask);
    }

    /// Starts the daemon with `name=value` in its environment from the next (re)start on.
    pub fn set_launch_env(&mut self, name: &str, value: &str) {
        self.launch_env.push((name.to_owned(), value.to_owned()));
    }

    /// Spawns another `pid` in the same home without waiting; for "second daemon" tests.
    pub fn spawn_second(&self) -> Command {
        let mut command = self.command();
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        command
    }

    /// The environment a process needs to talk to this daemon (`PI_HOME`).
    pub fn env(&self) -> Vec<(String, String)> {
        vec![("PI_HOME".to_owned(), self.home.path().display().to_string())]
    }

    /// The daemon's process id.
    pub fn pid(&self) -> u32 {
        self.child
            .as_ref()
            .and_then(Child::id)
            .expect("the daemon is running")
    }

    /// Opens an initialized client over the Unix socket.
    pub async fn client(&self) -> (Client, Notifications) {
        Client::connect(
            &Endpoint::Unix(self.paths.socket_path()),
            pi_client::client_info("pi-test", "0"),
            ClientCapabilities::default(),
        )
        .await
        .unwrap()
    }

    /// Sends `signal` to the daemon.
    pub fn signal(&self, signal: rustix::process::Signal) {
        let pid = rustix::process::Pid::from_raw(self.pid() as i32).unwrap();
        rustix::process::kill_process(pid, signal).unwrap();
    }

    /// Waits for the daemon to exit, up to `timeout`; returns its status and how long it took.
    pub async fn wait_exit(&mut self, timeout: Duration) -> (ExitStatus, Duration) {
        let started = Instant::now();
        let child = self.child.as_mut().expect("the daemon was started");
        let status = tokio::time::timeout(timeout, child.wait())
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "the daemon did not exit within {timeout:?}; stderr:\n{}",
                    self.stderr()
                )
            })
            .unwrap();
        self.child = None;
        (status, started.elapsed())
    }

    /// Kills the daemon with SIGKILL and reaps it.
    pub async fn kill9(&mut self) {
        self.signal(rustix::process::Signal::KILL);
        self.wait_exit(FIXTURE_TIMEOUT).await;
    }

    /// Everything the daemon wrote to stderr so far (its logs).
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }

    fn command(&self) -> Command {
        let mut command = match self.launch_umask {
            Some(mask) => {
                let mut shell = Command::new("/bin/sh");
                shell
                    .arg("-c")
                    .arg(format!("umask {mask:03o} && exec \"$0\""))
                    .arg(&self.binary);
                shell
            }
            None => Command::new(&self.binary),
        };
        command
            .env("PI_HOME", self.home.path())
            .env("PI_LOG", "info")
            // The extension host runs on the pinned pi package of the test peers.
            .env(
                "PI_EXTENSION_HOST_MODULES",
                crate::peers::dir().join("node_modules"),
            )
            .env_remove("PI_LOG_FORMAT")
            .stdin(Stdio::null())
            .kill_on_drop(true);
        // Keys of the machine running the tests must not leak into them (a test's own do).
        for name in PROVIDER_KEY_VARIABLES {
            command.env_remove(name);
        }
        command.envs(self.launch_env.iter().map(|(name, value)| (name, value)));
        command
    }

    async fn spawn_and_wait(&mut self) {
        let stderr = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.stderr_path)
            .unwrap();
        let mut command = self.command();
        command.stdout(Stdio::null()).stderr(Stdio::from(stderr));
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", self.binary.display()));
        self.child = Some(child);
        let deadline = Instant::now() + FIXTURE_TIMEOUT;
        loop {
            if let Some(status) = self.child.as_mut().and_then(|c| c.try_wait().unwrap()) {
                panic!(
                    "pid exited during startup ({status}); stderr:\n{}",
                    self.stderr()
                );
            }
            if let Ok((client, _)) = Client::connect(
                &Endpoint::Unix(self.paths.socket_path()),
                pi_client::client_info("pi-test", "0"),
                ClientCapabilities::default(),
            )
            .await
            {
                // Wait for the probe's close, so it never shows in connection counts.
                client.close().await;
                return;
            }
            assert!(
                Instant::now() < deadline,
                "pid did not become ready; stderr:\n{}",
                self.stderr()
            );
            // Readiness polling: the daemon offers no event a test could await instead.
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

impl Drop for TempDaemon {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child
            && let Some(pid) = child.id()
            && let Some(pid) = rustix::process::Pid::from_raw(pid as i32)
        {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
}

/// The paths a daemon with `PI_HOME=home` uses.
pub fn paths_for(home: &Path) -> Paths {
    Paths::resolve(|name| match name {
        "PI_HOME" => Some(home.as_os_str().to_owned()),
        _ => None,
    })
    .unwrap()
}
