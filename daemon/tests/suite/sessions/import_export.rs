//! pi session files: import (v1, v2, v3 with branches, compaction, labels), continue, export.

use std::path::{Path, PathBuf};

use pi_llm::Message;
use pi_llm::faux::FauxReply;
use pi_protocol::ErrorKind;
use pi_protocol::v1::*;
use serde_json::Value;

use super::harness::{TestDaemon, run_events};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/pi")
        .join(name)
}

async fn import(client: &pi_client::Client, name: &str) -> SessionInfo {
    client
        .call::<SessionImport>(&SessionImportParams {
            path: fixture(name).display().to_string(),
            link: false,
        })
        .await
        .unwrap()
}

async fn branch_ids(client: &pi_client::Client, session_id: &str) -> Vec<String> {
    let read = client
        .call::<SessionRead>(&SessionReadParams {
            session_id: session_id.to_owned(),
            scope: ReadScope::Branch,
            limit: None,
            cursor: None,
        })
        .await
        .unwrap();
    read.entries
        .iter()
        .map(|record| {
            serde_json::to_value(&record.entry).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

/// pi writes JavaScript numbers (`0`), we write `0.0` for floats: compare numbers by value.
fn numbers_as_f64(value: Value) -> Value {
    match value {
        Value::Number(number) => serde_json::json!(number.as_f64().unwrap()),
        Value::Array(items) => Value::Array(items.into_iter().map(numbers_as_f64).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, numbers_as_f64(v)))
                .collect(),
        ),
        other => other,
    }
}

/// What the model saw, one short description per message.
fn seen(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .map(|message| match message {
            Message::User(user) => {
                let text: String = user
                    .content
                    .iter()
                    .filter_map(|c| match c {
                        pi_llm::UserContent::Text(t) => Some(t.text.clone()),
                        pi_llm::UserContent::Image(_) => None,
                    })
                    .collect();
                format!("user:{}", text.lines().last().unwrap_or_default())
            }
            Message::Assistant(assistant) => format!("assistant:{}", assistant.text()),
            Message::ToolResult(result) => format!("toolResult:{}", result.tool_call_id),
        })
        .collect()
}

#[tokio::test]
async fn a_v3_file_with_branches_imports_continues_and_exports_back() {
    let daemon = TestDaemon::start().await;
    let (client, mut events) = daemon.client().await;
    let session = import(&client, "v3-branches.jsonl").await;
    assert_eq!(session.cwd, "/home/u/proj");
    assert_eq!(session.name.as_deref(), Some("Files tour"));
    assert_eq!(session.message_count, 8);
    assert_eq!(session.first_message.as_deref(), Some("List the files"));
    assert_eq!(
        session.leaf_id.as_deref(),
        Some("b0000004"),
        "pi's leaf: the last entry"
    );
    assert_eq!(
        session.model,
        Some(ModelRef {
            provider: "anthropic".into(),
            id: "claude-sonnet-4-5".into()
        })
    );
    assert_eq!(
        branch_ids(&client, &session.id).await,
        [
            "a0000001", "a0000002", "a0000003", "a0000004", "a0000005", "a0000006", "b0000001",
            "b0000002", "b0000003", "b0000004"
        ]
    );

    // Continue it (on the faux model) and check the model's context.
    let id = session.id.clone();
    client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    client
        .call::<SessionSetModel>(&SessionSetModelParams {
            session_id: id.clone(),
            model: "faux-1".into(),
        })
        .await
        .unwrap();
    daemon.faux.push(FauxReply::text("continued"));
    client
        .call::<SessionPrompt>(&SessionMessageParams {
            session_id: id.clone(),
            text: "and now?".into(),
            images: vec![],
        })
        .await
        .unwrap();
    run_events(&mut events, &id).await;
    assert_eq!(
        seen(&daemon.faux.requests()[0].context.messages),
        [
            "user:List the files",
            "assistant:",
            "toolResult:toolu_1",
            "assistant:There are two entries.",
            "user:Alternative question",
            "assistant:Alternative answer",
            "user:</summary>",
            "user:and now?",
        ]
    );

    // The other branch holds the compaction: summary, kept entry, then what follows.
    client
        .call::<SessionNavigate>(&SessionNavigateParams {
            session_id: id.clone(),
            entry_id: "a000000a".into(),
            ..SessionNavigateParams::default()
        })
        .await
        .unwrap();
    daemon.faux.push(FauxReply::text("on the compacted branch"));
    client
        .call::<SessionPrompt>(&SessionMessageParams {
            session_id: id.clone(),
            text: "more".into(),
            images: vec![],
        })
        .await
        .unwrap();
    run_events(&mut events, &id).await;
    let context = &daemon.faux.requests()[1].context.messages;
    assert_eq!(
        seen(context),
        [
            "user:</summary>",
            "assistant:There are two entries.",
            "user:Now read README",
            "assistant:It says hello.",
            "user:more"
        ]
    );
    let Message::User(summary) = &context[0] else {
        unreachable!()
    };
    let pi_llm::UserContent::Text(summary) = &summary.content[0] else {
        unreachable!()
    };
    assert!(
        summary
            .text
            .contains("compacted into the following summary")
            && summary.text.contains("The user listed files.")
    );

    // Export: every original entry line comes back unchanged, then the new ones.
    let exported = client
        .call::<SessionExport>(&SessionExportParams {
            session_id: id.clone(),
            format: ExportFormat::Jsonl,
            path: None,
        })
        .await
        .unwrap()
        .content
        .unwrap();
    let original: Vec<Value> = std::fs::read_to_string(fixture("v3-branches.jsonl"))
        .unwrap()
        .lines()
        .map(|l| numbers_as_f64(serde_json::from_str(l).unwrap()))
        .collect();
    let exported: Vec<Value> = exported
        .lines()
        .map(|l| numbers_as_f64(serde_json::from_str(l).unwrap()))
        .collect();
    assert_eq!(exported[0]["type"], "session");
    assert_eq!(exported[0]["version"], 3.0);
    assert_eq!(exported[0]["cwd"], "/home/u/proj");
    assert_eq!(&exported[1..original.len()], &original[1..]);
    assert!(exported.len() > original.len());

    // Re-importing the export gives the same tree.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("export.jsonl");
    client
        .call::<SessionExport>(&SessionExportParams {
            session_id: id.clone(),
            format: ExportFormat::Jsonl,
            path: Some(path.display().to_string()),
        })
        .await
        .unwrap();
    let again = client
        .call::<SessionImport>(&SessionImportParams {
            path: path.display().to_string(),
            link: false,
        })
        .await
        .unwrap();
    assert_eq!(again.message_count, session.message_count + 4);
}

/// A pi file's entries come back out of an export byte for byte: fields the daemon does not
/// model (a newer pi's, an extension's) and pi's number formatting included. The documented
/// exceptions: the header is the daemon's (its session id; `parentSession` and other header
/// keys are not kept), v1/v2 files are migrated, plain-string contents become text blocks, a
/// self-parent becomes a root, and lines of unknown entry types are skipped.
#[tokio::test]
async fn a_v3_file_comes_back_byte_for_byte_with_the_fields_the_daemon_does_not_model() {
    let daemon = TestDaemon::start().await;
    let (client, _events) = daemon.client().await;
    let session = import(&client, "v3-unknown-fields.jsonl").await;
    assert_eq!(session.message_count, 4);
    assert_eq!(session.name.as_deref(), Some("notes"));
    let exported = client
        .call::<SessionExport>(&SessionExportParams {
            session_id: session.id.clone(),
            format: ExportFormat::Jsonl,
            path: None,
        })
        .await
        .unwrap()
        .content
        .unwrap();
    let original = std::fs::read_to_string(fixture("v3-unknown-fields.jsonl")).unwrap();
    let original: Vec<&str> = original.lines().collect();
    let exported: Vec<&str> = exported.lines().collect();
    assert_eq!(exported.len(), original.len());
    assert_eq!(&exported[1..], &original[1..]);
    let header: Value = serde_json::from_str(exported[0]).unwrap();
    assert_eq!(
        header,
        serde_json::json!({"type": "session", "version": 3, "id": session.id,
            "timestamp": "2026-03-16T09:00:00.000Z", "cwd": "/home/u/proj"})
    );

    // The daemon itself reads the entries as usual: the model sees the conversation.
    let read = client
        .call::<SessionRead>(&SessionReadParams {
            session_id: session.id.clone(),
            scope: ReadScope::Branch,
            limit: None,
            cursor: None,
        })
        .await
        .unwrap();
    assert_eq!(read.entries.len(), 6);
}

/// A line with a key written twice reads one way as JSON (the last value wins) and fails as
/// a typed entry: it is stored as the JSON the daemon read, so the session still loads.
#[tokio::test]
async fn a_line_with_a_duplicated_key_is_stored_as_read() {
    let daemon = TestDaemon::start().await;
    let (client, _events) = daemon.client().await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dup.jsonl");
    std::fs::write(
        &path,
        concat!(
            r#"{"type":"session","version":3,"id":"3f0c6a2e-0000-4000-8000-00000000d0d0","timestamp":"2026-03-16T09:00:00.000Z","cwd":"/p"}"#,
            "\n",
            r#"{"type":"session_info","id":"c0000001","id":"c0000002","parentId":null,"timestamp":"2026-03-16T09:00:01.000Z","name":"twice"}"#,
            "\n",
        ),
    )
    .unwrap();
    let session = client
        .call::<SessionImport>(&SessionImportParams {
            path: path.display().to_string(),
            link: false,
        })
        .await
        .unwrap();
    assert_eq!(session.name.as_deref(), Some("twice"));
    assert_eq!(branch_ids(&client, &session.id).await, ["c0000002"]);
    let exported = client
        .call::<SessionExport>(&SessionExportParams {
            session_id: session.id.clone(),
            format: ExportFormat::Jsonl,
            path: None,
        })
        .await
        .unwrap()
        .content
        .unwrap();
    assert_eq!(
        exported.lines().nth(1),
        Some(
            r#"{"type":"session_info","id":"c0000002","parentId":null,"timestamp":"2026-03-16T09:00:01.000Z","name":"twice"}"#
        )
    );
}

#[tokio::test]
async fn v1_and_v2_files_are_migrated() {
    let daemon = TestDaemon::start().await;
    let (client, mut events) = daemon.client().await;

    let v1 = import(&client, "v1-linear.jsonl").await;
    assert_eq!(v1.message_count, 4, "the corrupt line is skipped");
    let ids = branch_ids(&client, &v1.id).await;
    assert_eq!(ids.len(), 5, "ids and parent links were assigned");
    assert!(
        ids.iter()
            .all(|id| id.len() == 8 && id.chars().all(|c| c.is_ascii_hexdigit()))
    );
    let exported = client
        .call::<SessionExport>(&SessionExportParams {
            session_id: v1.id.clone(),
            format: ExportFormat::Jsonl,
            path: None,
        })
        .await
        .unwrap()
        .content
        .unwrap();
    let compaction: Value = exported
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["type"] == "compaction")
        .unwrap();
    assert_eq!(
        compaction["firstKeptEntryId"],
        ids[1].as_str(),
        "firstKeptEntryIndex 1 became an id"
    );
    assert!(compaction.get("firstKeptEntryIndex").is_none());

    let v2 = import(&client, "v2-hook-message.jsonl").await;
    let id = v2.id.clone();
    client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    client
        .call::<SessionSetModel>(&SessionSetModelParams {
            session_id: id.clone(),
            model: "faux-1".into(),
        })
        .await
        .unwrap();
    daemon.faux.push(FauxReply::text("fine"));
    client
        .call::<SessionPrompt>(&SessionMessageParams {
            session_id: id.clone(),
            text: "next".into(),
            images: vec![],
        })
        .await
        .unwrap();
    run_events(&mut events, &id).await;
    assert_eq!(
        seen(&daemon.faux.requests()[0].context.messages),
        [
            "user:hi",
            "user:Remember the tests",
            "assistant:ok",
            "user:next"
        ]
    );
}

#[tokio::test]
async fn bad_files_get_clear_errors_and_html_export_is_self_contained() {
    let daemon = TestDaemon::start().await;
    let (client, _events) = daemon.client().await;
    let dir = tempfile::tempdir().unwrap();
    let not_pi = dir.path().join("notes.jsonl");
    std::fs::write(&not_pi, "{\"hello\":1}\n").unwrap();
    let error = client
        .call::<SessionImport>(&SessionImportParams {
            path: not_pi.display().to_string(),
            link: false,
        })
        .await
        .unwrap_err();
    assert_eq!(error.rpc_kind(), Some(ErrorKind::InvalidParams));
    assert!(
        error
            .to_string()
            .contains("is not a pi session file: its first line is not a session header"),
        "{error}"
    );
    let missing = dir.path().join("missing.jsonl");
    let error = client
        .call::<SessionImport>(&SessionImportParams {
            path: missing.display().to_string(),
            link: false,
        })
        .await
        .unwrap_err();
    assert_eq!(error.rpc_kind(), Some(pi_protocol::ErrorKind::NotFound));
    assert_eq!(
        error.to_string(),
        format!(
            "{} does not exist; check the path of the session file",
            missing.display()
        ),
    );
    let error = client
        .call::<SessionImport>(&SessionImportParams {
            path: "relative.jsonl".into(),
            link: false,
        })
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("path must be an absolute path"),
        "{error}"
    );

    let session = import(&client, "v3-branches.jsonl").await;
    let html = client
        .call::<SessionExport>(&SessionExportParams {
            session_id: session.id.clone(),
            format: ExportFormat::Html,
            path: None,
        })
        .await
        .unwrap()
        .content
        .unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("<title>Files tour</title>"));
    assert!(html.contains("Alternative answer"));
    assert!(html.contains("README.md\nsrc/"));
    // pi's whole tree: both branches on the page, the current one (the leaf's) shown, and a
    // sidebar linking each message to the branch it is on.
    assert_eq!(html.matches("<section class=\"branch").count(), 2, "{html}");
    assert!(
        html.contains("<section class=\"branch current\" id=\"b1\">"),
        "{html}"
    );
    assert!(
        html.contains("It says hello."),
        "the other branch is there too"
    );
    assert!(html.contains("<nav class=\"tree\"><h2>Session tree</h2>"));
    assert!(
        html.contains("<li><a href=\"#b0-a000000a\">Assistant: It says hello.</a></li>"),
        "{html}"
    );
    assert!(
        html.contains(
            "<li class=\"on\"><a href=\"#b1-a0000003\">User: List the files</a> <span class=\"label\">start</span></li>"
        ),
        "{html}"
    );
    assert!(html.contains("2 branches"));
    assert!(
        !html.contains("<script") && !html.contains("http://") && !html.contains("https://"),
        "no scripts or external resources"
    );
}
