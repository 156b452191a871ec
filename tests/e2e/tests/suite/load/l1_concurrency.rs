//! L1: a hundred `pictl run`s at once, each a ten-turn tool scenario (write, read, edit, bash,
//! ls) in its own directory, all against one daemon. Every run succeeds, every tool result is
//! what the scenario expects (the scripted model checks each before the next turn), and the
//! files are as the scenario leaves them. Before the store had one writer, two such runs were
//! enough for one to fail with "database is locked".

use pi_test_support::scenario;
use pi_test_support::workspace_binary;

use crate::suite::harness::World;

/// Concurrent sessions (and `pictl` processes).
const SESSIONS: usize = 100;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_concurrent_tool_sessions_all_succeed() {
    let world = World::start("openai-completions").await;
    world.server.respond_with(scenario::respond);
    let pictl = workspace_binary("pictl");
    let workspaces: Vec<tempfile::TempDir> = (0..SESSIONS)
        .map(|_| tempfile::tempdir().unwrap())
        .collect();
    let runs = workspaces.iter().enumerate().map(|(n, dir)| {
        let mut command = tokio::process::Command::from(scenario::pictl_run(
            &pictl,
            &format!("s{n}"),
            dir.path(),
            world.daemon.env(),
            &["--json"],
        ));
        command.kill_on_drop(true);
        async move { (n, command.output().await.unwrap()) }
    });
    let outputs = futures_util::future::join_all(runs).await;

    let mut failures = Vec::new();
    for (n, output) in &outputs {
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        if !output.status.success() {
            failures.push(format!("run s{n} exited {}: {stderr}", output.status));
            continue;
        }
        let events: Vec<serde_json::Value> = stdout
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        let tool_results: Vec<&serde_json::Value> = events
            .iter()
            .filter(|event| event["type"] == "tool_execution_end")
            .collect();
        if tool_results.len() != scenario::TURNS - 1
            || tool_results.iter().any(|event| event["isError"] == true)
        {
            failures.push(format!("run s{n}: tool results {tool_results:?}"));
        }
        if !stdout.contains(scenario::FINISHED) {
            failures.push(format!("run s{n} did not finish the scenario"));
        }
        if let Err(problem) = scenario::check_workspace(workspaces[*n].path(), &format!("s{n}")) {
            failures.push(problem);
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {SESSIONS} runs failed:\n{}\n\ndaemon log:\n{}",
        failures.len(),
        failures.join("\n"),
        world.daemon.stderr()
    );
    world.server.assert_done(SESSIONS * scenario::TURNS);
}
