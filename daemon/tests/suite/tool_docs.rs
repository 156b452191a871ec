//! `docs/tools.md` shows the daemon's own tools — `bash` as a session naming `job` gets it,
//! `job`, `python` and oh-my-pi's tools — exactly as the model sees them (name, description, JSON Schema), as
//! pi-tools' test does for the built-in ones. Run with `PI_UPDATE_DOCS=1` to rewrite the
//! generated section.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use pi_daemon::jobs::{JobLimits, JobPool};
use pi_daemon::kernels::{KernelLimits, KernelPool};
use pi_daemon::session::{ToolEnvironment, ToolFactory as _};
use pi_daemon::tools::BuiltinTools;
use pi_tools::spawn::Spawner;

const BEGIN: &str =
    "<!-- generated: daemon tool definitions (daemon/tests/suite/tool_docs.rs) -->\n";
const END: &str = "<!-- end of generated daemon tool definitions -->\n";

#[tokio::test]
async fn tools_md_shows_the_job_and_python_tools_as_the_model_sees_them() {
    let home = tempfile::tempdir().unwrap();
    let spawner = Spawner::direct();
    let tools = BuiltinTools::new(pi_tools::Artifacts::new(home.path().join("artifacts")))
        .with_jobs(Arc::new(JobPool::new(
            spawner.clone(),
            JobLimits {
                per_session: 1,
                total: 1,
            },
        )))
        .with_kernels(Arc::new(KernelPool::new(
            spawner,
            KernelLimits {
                max: 1,
                idle: Duration::from_secs(60),
            },
        )));
    let environment = ToolEnvironment {
        session_id: "docs".to_owned(),
        cwd: home.path().to_path_buf(),
        env: BTreeMap::new().into(),
        sessions: Default::default(),
        extensions: std::sync::Arc::from([]),
        no_extensions: false,
        extension_flags: Default::default(),
        extension_tools: None,
        parent_session_id: None,
    };
    let names = [
        "bash",
        "job",
        "python",
        "todo",
        "ask",
        "fetch",
        "web_search",
        "ast_grep",
        "ast_edit",
    ]
    .map(str::to_owned);
    let mut generated = String::new();
    for tool in tools.tools(&environment, &names).unwrap() {
        generated.push_str(&format!(
            "### `{}` — {} (by name{})\n\n{}\n\n```json\n{}\n```\n\n",
            tool.name(),
            tool.label(),
            if tool.name() == "bash" {
                ": a session whose tools name `job`"
            } else {
                ""
            },
            tool.description(),
            serde_json::to_string_pretty(tool.parameters()).unwrap()
        ));
    }
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/tools.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let start = doc
        .find(BEGIN)
        .expect("docs/tools.md has the daemon tools' generated-section marker")
        + BEGIN.len();
    let end = doc
        .find(END)
        .expect("docs/tools.md has the daemon tools' end marker");
    if std::env::var_os("PI_UPDATE_DOCS").is_some() {
        std::fs::write(
            &path,
            format!("{}{generated}{}", &doc[..start], &doc[end..]),
        )
        .unwrap();
        return;
    }
    assert!(
        doc[start..end] == generated,
        "docs/tools.md is out of date; rerun with PI_UPDATE_DOCS=1. Expected:\n{generated}"
    );
}
