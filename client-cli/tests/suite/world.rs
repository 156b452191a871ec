//! A scripted model server, a real daemon configured to reach it (pi's way, through
//! `PI_HOME/.pi/agent/models.json`), and helpers to run `pictl` against them and redact its
//! output for snapshots.

use std::path::Path;
use std::process::{Output, Stdio};

use pi_client::{Client, Notifications};
use pi_protocol::v1::{SessionCreate, SessionCreateParams, SessionInfo};
use pi_test_support::daemon::TempDaemon;
use pi_test_support::model_server::ModelServer;
use pi_test_support::workspace_binary;
use tokio::io::AsyncWriteExt as _;

/// The scripted model as sessions name it.
pub const MODEL: &str = "scripted/scripted-model";

/// A daemon, the model server it talks to, and a working directory for `pictl`.
pub struct World {
    pub server: ModelServer,
    pub daemon: TempDaemon,
    pub workdir: tempfile::TempDir,
}

impl World {
    /// A daemon whose provider `scripted` speaks Anthropic's API to a fresh model server.
    pub async fn start() -> World {
        World::start_with_settings(serde_json::json!({})).await
    }

    /// Like [`World::start`], with pi's `settings.json` (in `PI_HOME/.pi/agent/`).
    pub async fn start_with_settings(settings: serde_json::Value) -> World {
        World::start_with_api("anthropic-messages", settings).await
    }

    /// Like [`World::start_with_settings`], with provider `scripted` speaking `api`.
    pub async fn start_with_api(api: &str, settings: serde_json::Value) -> World {
        let server = ModelServer::start().await;
        let models = serde_json::to_string_pretty(&server.models_json(api)).unwrap();
        let daemon = TempDaemon::start_with_files(
            &workspace_binary("pid"),
            "",
            &[
                (".pi/agent/models.json", models),
                (".pi/agent/settings.json", settings.to_string()),
            ],
        )
        .await;
        let workdir = tempfile::Builder::new()
            .prefix("pictl-work-")
            .tempdir()
            .unwrap();
        World {
            server,
            daemon,
            workdir,
        }
    }

    /// The working directory, as `pictl` sees it.
    pub fn cwd(&self) -> String {
        self.workdir.path().display().to_string()
    }

    /// `pictl ARGS` with this world's home, in the working directory, with HOME pointing
    /// into the temp home (tests never touch the real one) and no colour.
    pub fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_pictl"));
        command
            .args(args)
            .current_dir(self.workdir.path())
            .env("PI_HOME", self.daemon.home.path())
            .env("HOME", self.daemon.home.path())
            .env("PI_DAEMON_BIN", workspace_binary("pid"))
            .env_remove("NO_COLOR")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        command
    }

    /// Runs `pictl ARGS` to completion.
    pub async fn pictl(&self, args: &[&str]) -> Output {
        self.command(args).output().await.unwrap()
    }

    /// Runs `pictl ARGS` with `input` piped to its stdin.
    pub async fn pictl_with_stdin(&self, args: &[&str], input: &str) -> Output {
        let mut command = self.command(args);
        command.stdin(Stdio::piped());
        let mut child = command.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(input.as_bytes()).await.unwrap();
        drop(stdin);
        child.wait_with_output().await.unwrap()
    }

    /// An initialized protocol client of the daemon.
    pub async fn client(&self) -> (Client, Notifications) {
        self.daemon.client().await
    }

    /// A new session on the scripted model in the working directory.
    pub async fn session(&self, client: &Client) -> SessionInfo {
        client
            .call::<SessionCreate>(&SessionCreateParams {
                cwd: self.cwd(),
                model: Some(MODEL.to_owned()),
                ..SessionCreateParams::default()
            })
            .await
            .unwrap()
    }

    /// Replaces what varies between runs (ids, times, temp paths) in `text`.
    pub fn redact(&self, text: &str) -> String {
        redact(
            text,
            &[
                (self.workdir.path(), "[CWD]"),
                (self.daemon.home.path(), "[HOME]"),
            ],
        )
    }
}

/// Replaces temp paths, UUIDs, entry ids, timestamps and durations with placeholders.
pub fn redact(text: &str, paths: &[(&Path, &str)]) -> String {
    let mut text = text.to_owned();
    for (path, placeholder) in paths {
        text = text.replace(&path.display().to_string(), placeholder);
    }
    let rules: &[(&str, &str)] = &[
        (
            r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
            "[UUID]",
        ),
        (r"http://127\.0\.0\.1:\d+", "[URL]"),
        (r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z", "[ISO]"),
        (r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", "[TIME]"),
        (r"\d{4}-\d{2}-\d{2}", "[DATE]"),
        (
            r#""(timestamp|createdAt|updatedAt|startedAt|since|lastSeq)":\d+"#,
            r#""$1":0"#,
        ),
        (
            r#""(id|entryId|leafId|parentId|targetId|firstKeptEntryId)":"[0-9a-f]{8}""#,
            r#""$1":"[ENTRY]""#,
        ),
        (r"\b[0-9a-f]{8}\b", "[ENTRY]"),
    ];
    for (pattern, replacement) in rules {
        let regex = regex::Regex::new(pattern).unwrap();
        text = regex.replace_all(&text, *replacement).into_owned();
    }
    text
}

/// stdout as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// stderr as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// stdout's lines parsed as JSON.
pub fn json_lines(output: &Output) -> Vec<serde_json::Value> {
    stdout(output)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect()
}

/// Asserts the exit code, showing both streams when it differs.
#[track_caller]
pub fn assert_exit(output: &Output, code: i32) {
    assert_eq!(
        output.status.code(),
        Some(code),
        "stdout:\n{}\nstderr:\n{}",
        stdout(output),
        stderr(output)
    );
}
