//! `usage/stats`: the ledger sums stored assistant messages by model and by UTC day.

use pi_protocol::v1::{SessionImport, SessionImportParams, UsageStats, UsageStatsParams};
use pi_test_support::daemon::TempDaemon;
use serde_json::json;

use super::pid_binary;

/// A pi session file whose assistant messages used two models on two days.
fn session_file(dir: &std::path::Path) -> String {
    let usage = |input: u64, output: u64, cache_read: u64, cost: f64| {
        json!({"input": input, "output": output, "cacheRead": cache_read, "cacheWrite": 0,
               "totalTokens": input + output + cache_read,
               "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost}})
    };
    let assistant = |id: &str,
                     parent: &str,
                     model: &str,
                     timestamp: i64,
                     usage: serde_json::Value| {
        json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2026-03-15T10:00:00.000Z",
               "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}],
                           "api": "anthropic-messages", "provider": "anthropic", "model": model,
                           "usage": usage, "stopReason": "stop", "timestamp": timestamp}})
    };
    let user = |id: &str, parent: Option<&str>, timestamp: i64| {
        json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2026-03-15T10:00:00.000Z",
               "message": {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": timestamp}})
    };
    // 2026-03-15 and 2026-03-16, UTC.
    let (day1, day2) = (1_773_568_800_000_i64, 1_773_655_200_000_i64);
    let lines = [
        json!({"type": "session", "version": 3, "id": "3f0c6a2e-0000-4000-8000-0000000000aa",
               "timestamp": "2026-03-15T10:00:00.000Z", "cwd": "/tmp"}),
        user("b0000001", None, day1),
        assistant(
            "b0000002",
            "b0000001",
            "claude-sonnet-4-5",
            day1 + 1,
            usage(100, 20, 0, 0.5),
        ),
        user("b0000003", Some("b0000002"), day2),
        assistant(
            "b0000004",
            "b0000003",
            "claude-sonnet-4-5",
            day2 + 1,
            usage(10, 2, 50, 0.25),
        ),
        assistant(
            "b0000005",
            "b0000004",
            "claude-opus-4-6",
            day2 + 2,
            usage(1, 1, 0, 2.0),
        ),
    ];
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    let path = dir.join("usage.jsonl");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[tokio::test]
async fn usage_sums_assistant_messages_by_model_and_day() {
    let daemon = TempDaemon::start(pid_binary()).await;
    let (client, _events) = daemon.client().await;
    let path = session_file(daemon.home.path());
    client
        .call::<SessionImport>(&SessionImportParams { path, link: false })
        .await
        .unwrap();

    let all = client
        .call::<UsageStats>(&UsageStatsParams::default())
        .await
        .unwrap();
    let all = serde_json::to_value(&all).unwrap();
    insta::assert_json_snapshot!("usage_stats_all", all);
    assert_eq!(all["total"]["messages"], 3);
    assert_eq!(all["total"]["tokens"]["total"], 184);
    assert_eq!(
        all["byModel"][0]["model"], "claude-opus-4-6",
        "costliest first"
    );
    assert_eq!(all["byDay"][0]["day"], "2026-03-15");

    let since = client
        .call::<UsageStats>(&UsageStatsParams {
            since: Some(1_773_655_200_000),
        })
        .await
        .unwrap();
    assert_eq!(since.total.messages, 2);
    assert_eq!(since.by_day.len(), 1);
    assert_eq!(since.by_day[0].day, "2026-03-16");
}

/// Writes `lines` as a pi session file at `path` and imports it.
async fn import_lines(
    client: &pi_client::Client,
    path: &std::path::Path,
    lines: &[serde_json::Value],
) {
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    std::fs::write(path, text).unwrap();
    client
        .call::<SessionImport>(&SessionImportParams {
            path: path.display().to_string(),
            link: false,
        })
        .await
        .unwrap();
}

#[tokio::test]
async fn usage_sums_by_project_costliest_first() {
    let daemon = TempDaemon::start(pid_binary()).await;
    let (client, _events) = daemon.client().await;
    let path = session_file(daemon.home.path());
    client
        .call::<SessionImport>(&SessionImportParams { path, link: false })
        .await
        .unwrap();
    // Another project, dearer: one message at 4.0.
    let other = daemon.home.path().join("other.jsonl");
    let lines = [
        json!({"type": "session", "version": 3, "id": "3f0c6a2e-0000-4000-8000-0000000000bb",
               "timestamp": "2026-03-15T10:00:00.000Z", "cwd": "/srv/other"}),
        json!({"type": "message", "id": "c0000001", "parentId": null, "timestamp": "2026-03-15T10:00:00.000Z",
               "message": {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1_773_568_800_000_i64}}),
        json!({"type": "message", "id": "c0000002", "parentId": "c0000001", "timestamp": "2026-03-15T10:00:00.000Z",
               "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}],
                           "api": "anthropic-messages", "provider": "anthropic", "model": "claude-opus-4-6",
                           "usage": {"input": 7, "output": 3, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 10,
                                     "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 4.0}},
                           "stopReason": "stop", "timestamp": 1_773_568_800_001_i64}}),
    ];
    import_lines(&client, &other, &lines).await;
    let all = client
        .call::<UsageStats>(&UsageStatsParams::default())
        .await
        .unwrap();
    let projects: Vec<(&str, u64, f64)> = all
        .by_project
        .iter()
        .map(|project| {
            (
                project.cwd.as_str(),
                project.usage.messages,
                project.usage.cost,
            )
        })
        .collect();
    assert_eq!(projects, [("/srv/other", 1, 4.0), ("/tmp", 3, 2.75)]);
    assert_eq!(all.total.cost, 6.75);
    assert_eq!(all.by_day[0].usage.messages, 2, "both projects' first day");
}

#[tokio::test]
async fn a_model_without_prices_counts_its_tokens_at_no_cost() {
    let daemon = TempDaemon::start(pid_binary()).await;
    let (client, _events) = daemon.client().await;
    // As pi writes a local model's reply: every cost an integer zero.
    let path = daemon.home.path().join("local.jsonl");
    let lines = [
        json!({"type": "session", "version": 3, "id": "3f0c6a2e-0000-4000-8000-0000000000cc",
               "timestamp": "2026-03-15T10:00:00.000Z", "cwd": "/srv/local"}),
        json!({"type": "message", "id": "d0000001", "parentId": null, "timestamp": "2026-03-15T10:00:00.000Z",
               "message": {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1_773_568_800_000_i64}}),
        json!({"type": "message", "id": "d0000002", "parentId": "d0000001", "timestamp": "2026-03-15T10:00:00.000Z",
               "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}],
                           "api": "openai-completions", "provider": "ollama", "model": "llama3",
                           "usage": {"input": 12, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 17,
                                     "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                           "stopReason": "stop", "timestamp": 1_773_568_800_001_i64}}),
    ];
    import_lines(&client, &path, &lines).await;
    let all = client
        .call::<UsageStats>(&UsageStatsParams::default())
        .await
        .unwrap();
    assert_eq!(all.total.messages, 1);
    assert_eq!(all.total.tokens.total, 17);
    assert_eq!(all.total.cost, 0.0);
    assert_eq!(all.by_model[0].model, "llama3");
}
