//! Shared harness: a temp session (cwd, home, artifacts, locks), calling tools by name, and
//! rendering results for snapshots with the temp path redacted.

mod bash;
mod concurrency;
mod docs;
mod edit;
mod find;
mod grep;
mod large_files;
mod ls;
mod read;
mod write;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_agent::{ProgressSink, ToolInvocation, ToolOutput};
use pi_llm::UserContent;
use pi_tools::{Artifacts, PathLocks, ShellConfig, ToolContext};
use serde_json::Value;
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

/// A session in a temp directory: `<tmp>/work` is the cwd, `<tmp>/home` its HOME.
pub struct Session {
    pub dir: TempDir,
    pub context: Arc<ToolContext>,
    pub artifacts: Artifacts,
}

impl Session {
    pub fn new() -> Session {
        Session::with_locks(PathLocks::new(), "session-1")
    }

    /// A session sharing `locks` with others (as all sessions of one daemon do).
    pub fn with_locks(locks: PathLocks, session_id: &str) -> Session {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("work")).unwrap();
        std::fs::create_dir_all(root.join("home")).unwrap();
        let artifacts = Artifacts::new(root.join("artifacts"));
        let mut env = BTreeMap::new();
        env.insert("HOME".to_owned(), root.join("home").display().to_string());
        env.insert("PATH".to_owned(), "/usr/local/bin:/usr/bin:/bin".to_owned());
        env.insert("PI_TEST_VAR".to_owned(), "from-the-session".to_owned());
        let context = Arc::new(ToolContext {
            session_id: session_id.to_owned(),
            cwd: root.join("work"),
            env: Arc::new(env),
            shell: ShellConfig::default(),
            artifacts: artifacts.session(session_id).unwrap(),
            locks,
            uris: None,
            places: None,
            files: None,
            sandbox: None,
            spawner: pi_tools::spawn::Spawner::direct(),
            resize_images: true,
        });
        Session {
            dir,
            context,
            artifacts,
        }
    }

    /// The temp root (canonical).
    pub fn root(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    /// The session's working directory.
    pub fn cwd(&self) -> &Path {
        &self.context.cwd
    }

    /// Writes `content` to `relative` under the cwd, creating directories.
    pub fn file(&self, relative: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let path = self.cwd().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, content).unwrap();
        path
    }

    /// Reads `relative` under the cwd.
    pub fn read(&self, relative: &str) -> Vec<u8> {
        std::fs::read(self.cwd().join(relative)).unwrap()
    }

    /// Calls tool `name` with `arguments`.
    pub async fn call(&self, name: &str, arguments: Value) -> ToolOutput {
        self.call_with(
            name,
            arguments,
            CancellationToken::new(),
            ProgressSink::discard(),
        )
        .await
    }

    pub async fn call_with(
        &self,
        name: &str,
        arguments: Value,
        cancel: CancellationToken,
        progress: ProgressSink,
    ) -> ToolOutput {
        let tool = pi_tools::create_tool(name, &self.context).unwrap();
        let arguments = tool.prepare_arguments(arguments);
        let validated = pi_agent::validate::validate_arguments(name, tool.parameters(), &arguments)
            .unwrap_or_else(|error| panic!("{error}"));
        tool.execute(ToolInvocation {
            call_id: "call-1".to_owned(),
            arguments: validated,
            cancel,
            progress,
        })
        .await
    }

    /// `output` as text for snapshots: error flag, text blocks, image blocks summarized,
    /// details; the temp root and artifact ids redacted.
    pub fn render(&self, output: &ToolOutput) -> String {
        let mut out = String::new();
        if output.is_error {
            out.push_str("(error)\n");
        }
        for block in &output.content {
            match block {
                UserContent::Text(text) => out.push_str(&text.text),
                UserContent::Image(image) => {
                    out.push_str(&format!(
                        "\n<image {} {} bytes base64>",
                        image.mime_type,
                        image.data.len()
                    ));
                }
            }
        }
        let details = &output.details;
        if details.as_object().is_some_and(|object| !object.is_empty()) {
            let mut details = details.clone();
            if let Some(truncation) = details.get_mut("truncation").and_then(Value::as_object_mut) {
                truncation.insert("content".into(), Value::from("<content>"));
            }
            out.push_str("\n--- details\n");
            out.push_str(&serde_json::to_string_pretty(&details).unwrap());
        }
        redact(&out, &self.root())
    }
}

/// Replaces the temp root with `<tmp>` and artifact ids with `bash-<id>`.
pub fn redact(text: &str, root: &Path) -> String {
    let text = text.replace(&root.display().to_string(), "<tmp>");
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(index) = rest.find("bash-") {
        let (before, after) = rest.split_at(index + 5);
        out.push_str(before);
        let id_len = after.bytes().take_while(u8::is_ascii_hexdigit).count();
        if id_len == 16 {
            out.push_str("<id>");
            rest = &after[id_len..];
        } else {
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// The text of the first text block.
pub fn text(output: &ToolOutput) -> String {
    match output.content.first() {
        Some(UserContent::Text(text)) => text.text.clone(),
        other => panic!("expected text, got {other:?}"),
    }
}

/// Runs `cases` of one tool and renders them all into one snapshot text.
pub async fn table(session: &Session, tool: &str, cases: &[(&str, Value)]) -> String {
    let mut out = String::new();
    for (name, arguments) in cases {
        let output = session.call(tool, arguments.clone()).await;
        out.push_str(&format!(
            "## {name}\n{arguments}\n{}\n\n",
            session.render(&output)
        ));
    }
    out
}

/// Polls `condition` every 10 ms until it holds or `limit` passes; returns whether it held.
pub async fn eventually(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if condition() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
