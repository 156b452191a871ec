//! Runs the `grep` tool once, as a whole process, for comparing with `rg` process against
//! process: `pi-grep PATTERN [PATH] [LIMIT]`. Prints the tool's text; exits 1 on an error
//! result.

#![allow(clippy::print_stdout, reason = "the example prints the tool's output")]

use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::Context as _;
use pi_agent::{ProgressSink, ToolInvocation};
use pi_llm::UserContent;
use pi_tools::{Artifacts, PathLocks, ShellConfig, ToolContext};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let pattern = args
        .next()
        .context("usage: pi-grep PATTERN [PATH] [LIMIT]")?;
    let path = args.next().unwrap_or_else(|| ".".to_owned());
    let limit: u64 = args
        .next()
        .map_or(Ok(100), |text| text.parse())
        .context("LIMIT must be a number")?;
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let scratch = std::env::temp_dir().join("pi-grep-artifacts");
    let context = Arc::new(ToolContext {
        session_id: "pi-grep".to_owned(),
        cwd,
        env: Arc::new(std::env::vars().collect::<BTreeMap<_, _>>()),
        shell: ShellConfig::default(),
        artifacts: Artifacts::new(scratch).session("pi-grep")?,
        locks: PathLocks::new(),
        uris: None,
        places: None,
        files: None,
        sandbox: None,
        spawner: pi_tools::spawn::Spawner::direct(),
        resize_images: true,
    });
    let tool = pi_tools::create_tool("grep", &context)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let output = runtime.block_on(tool.execute(ToolInvocation {
        call_id: "pi-grep".to_owned(),
        arguments: json!({"pattern": pattern, "path": path, "limit": limit}),
        cancel: CancellationToken::new(),
        progress: ProgressSink::discard(),
    }));
    for block in &output.content {
        if let UserContent::Text(text) = block {
            println!("{}", text.text);
        }
    }
    if output.is_error {
        std::process::exit(1);
    }
    Ok(())
}
