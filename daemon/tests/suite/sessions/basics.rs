//! Create, list, get, prompt, busy, read, metadata changes, delete, model list.

use pi_llm::faux::FauxReply;
use pi_protocol::ErrorKind;
use pi_protocol::v1::*;

use super::harness::{TestDaemon, kind, run_events};

#[tokio::test]
async fn a_prompt_runs_and_its_messages_are_stored() {
    let daemon = TestDaemon::start().await;
    let (client, mut notifications) = daemon.client().await;
    let session = daemon.create_session(&client).await;
    assert_eq!(session.thinking_level, "medium");
    assert_eq!(
        session.model,
        Some(ModelRef {
            provider: "faux".into(),
            id: "faux-1".into()
        })
    );
    assert_eq!(session.status, SessionStatus::Idle);

    client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: session.id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    daemon.faux.push(FauxReply::text("Hello from faux"));
    client
        .call::<SessionPrompt>(&SessionMessageParams {
            session_id: session.id.clone(),
            text: "hi".into(),
            images: vec![],
        })
        .await
        .unwrap();
    let events = run_events(&mut notifications, &session.id).await;
    let kinds: Vec<String> = events
        .iter()
        .map(kind)
        .filter(|k| k != "message_update")
        .collect();
    assert_eq!(
        kinds,
        [
            "agent_start",
            "turn_start",
            "message_start",
            "message_end",
            "message_start",
            "message_end",
            "turn_end",
            "agent_end"
        ]
    );
    // Seqs increase by one; durable message_ends carry their entry ids.
    for pair in events.windows(2) {
        assert_eq!(pair[1].seq, pair[0].seq + 1);
    }
    let entry_ids: Vec<String> = events
        .iter()
        .filter_map(|e| match &e.event {
            SessionEvent::MessageEnd { entry_id, .. } => entry_id.clone(),
            _ => None,
        })
        .collect();
    assert_eq!(entry_ids.len(), 2);

    // The stored branch ends with the two messages.
    let read = client
        .call::<SessionRead>(&SessionReadParams {
            session_id: session.id.clone(),
            scope: ReadScope::Branch,
            limit: None,
            cursor: None,
        })
        .await
        .unwrap();
    let kinds: Vec<&str> = read
        .entries
        .iter()
        .map(|record| match &record.entry {
            SessionEntry::Message { message, .. } => match message {
                message::AgentMessage::User(_) => "user",
                message::AgentMessage::Assistant(_) => "assistant",
                _ => "other message",
            },
            SessionEntry::ThinkingLevelChange { .. } => "thinking",
            SessionEntry::ModelChange { .. } => "model",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["thinking", "model", "user", "assistant"]);
    assert_eq!(read.leaf_id.as_deref(), Some(entry_ids[1].as_str()));
    assert_eq!(read.entries[3].seq, events.iter().find(|e| matches!(&e.event, SessionEvent::MessageEnd { entry_id: Some(id), .. } if *id == entry_ids[1])).unwrap().seq);

    let info = client
        .call::<SessionGet>(&SessionIdParams {
            session_id: session.id.clone(),
        })
        .await
        .unwrap();
    assert_eq!(info.info.message_count, 2);
    assert_eq!(info.info.first_message.as_deref(), Some("hi"));
    assert_eq!(info.tools, ["block"]);
    assert_eq!(info.attached_clients, 1);

    let stats = client
        .call::<SessionStats>(&SessionIdParams {
            session_id: session.id.clone(),
        })
        .await
        .unwrap();
    assert_eq!(
        (
            stats.user_messages,
            stats.assistant_messages,
            stats.total_messages
        ),
        (1, 1, 2)
    );
    assert!(stats.cost > 0.0);
}

#[tokio::test]
async fn prompting_a_running_session_is_busy() {
    let daemon = TestDaemon::start().await;
    let (client, mut notifications) = daemon.client().await;
    let session = daemon.create_session(&client).await;
    client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: session.id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    daemon.faux.push(FauxReply::tool_call(
        "block",
        serde_json::json!({"key": "k"}),
    ));
    daemon.faux.push(FauxReply::text("done"));
    let prompt = SessionMessageParams {
        session_id: session.id.clone(),
        text: "go".into(),
        images: vec![],
    };
    client.call::<SessionPrompt>(&prompt).await.unwrap();
    daemon.block.wait_started(1).await;
    let error = client.call::<SessionPrompt>(&prompt).await.unwrap_err();
    assert_eq!(error.rpc_kind(), Some(ErrorKind::Busy));
    assert!(error.to_string().contains("`session/steer`"), "{error}");
    let listed = client
        .call::<SessionList>(&SessionListParams::default())
        .await
        .unwrap();
    assert_eq!(listed.sessions[0].status, SessionStatus::Running);
    daemon.block.release("k");
    run_events(&mut notifications, &session.id).await;
}

#[tokio::test]
async fn list_pages_newest_first_and_filters_by_cwd() {
    let daemon = TestDaemon::start().await;
    let (client, _n) = daemon.client().await;
    let other = tempfile::tempdir().unwrap();
    let mut created = Vec::new();
    for index in 0..5 {
        let cwd = if index == 2 {
            other.path().display().to_string()
        } else {
            daemon.home.path().display().to_string()
        };
        created.push(
            client
                .call::<SessionCreate>(&SessionCreateParams {
                    cwd,
                    name: Some(format!("s{index}")),
                    ..Default::default()
                })
                .await
                .unwrap(),
        );
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    let first = client
        .call::<SessionList>(&SessionListParams {
            limit: Some(2),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(
        first
            .sessions
            .iter()
            .map(|s| s.name.clone().unwrap())
            .collect::<Vec<_>>(),
        ["s4", "s3"]
    );
    let second = client
        .call::<SessionList>(&SessionListParams {
            limit: Some(2),
            cursor: first.next_cursor,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(
        second
            .sessions
            .iter()
            .map(|s| s.name.clone().unwrap())
            .collect::<Vec<_>>(),
        ["s2", "s1"]
    );
    let only_other = client
        .call::<SessionList>(&SessionListParams {
            cwd: Some(other.path().display().to_string()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(only_other.sessions.len(), 1);
    assert_eq!(only_other.sessions[0].id, created[2].id);
    assert!(only_other.next_cursor.is_none());
    let bad = client
        .call::<SessionList>(&SessionListParams {
            cursor: Some("nonsense".into()),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(bad.rpc_kind(), Some(ErrorKind::InvalidParams));
}

#[tokio::test]
async fn bad_requests_get_clear_errors() {
    let daemon = TestDaemon::start().await;
    let (client, _n) = daemon.client().await;
    let check = |error: pi_client::ClientError, kind: ErrorKind, fragment: &str| {
        assert_eq!(error.rpc_kind(), Some(kind), "{error}");
        assert!(
            error.to_string().contains(fragment),
            "{error:?} lacks {fragment:?}"
        );
    };
    let error = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: "relative/dir".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    check(
        error,
        ErrorKind::InvalidParams,
        "cwd must be an absolute path, and \"relative/dir\" is not",
    );
    let error = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: "/no/such/../dir".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    check(
        error,
        ErrorKind::InvalidParams,
        "cwd must be an existing directory, and /no/dir is not",
    );
    let cwd = daemon.home.path().display().to_string();
    let error = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: cwd.clone(),
            model: Some("gpt-9".into()),
            ..Default::default()
        })
        .await
        .unwrap_err();
    check(error, ErrorKind::NotFound, "no model matches \"gpt-9\"");
    let error = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: cwd.clone(),
            thinking: Some("huge".into()),
            ..Default::default()
        })
        .await
        .unwrap_err();
    check(
        error,
        ErrorKind::InvalidParams,
        "unknown thinking level \"huge\"",
    );
    let error = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: cwd.clone(),
            tools: Some(vec!["nope".into()]),
            ..Default::default()
        })
        .await
        .unwrap_err();
    check(error, ErrorKind::InvalidParams, "unknown tool \"nope\"");
    let error = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: cwd.clone(),
            tools: Some(vec!["read".into()]),
            tool_allowlist: Some(vec!["read".into()]),
            ..Default::default()
        })
        .await
        .unwrap_err();
    check(
        error,
        ErrorKind::InvalidParams,
        "give tools or toolAllowlist, not both",
    );
    // pi's `--tools`: names the session has no tool of are ignored.
    let allowed = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: cwd.clone(),
            tool_allowlist: Some(vec!["block".into(), "nope".into()]),
            ..Default::default()
        })
        .await
        .unwrap();
    let details = client
        .call::<SessionGet>(&SessionIdParams {
            session_id: allowed.id.clone(),
        })
        .await
        .unwrap();
    assert_eq!(details.tools, ["block"]);
    let error = client
        .call::<pi_protocol::v1::SessionSetApiKey>(&pi_protocol::v1::SessionSetApiKeyParams {
            session_id: allowed.id.clone(),
            provider: "anthropic".into(),
            key: " ".into(),
        })
        .await
        .unwrap_err();
    check(error, ErrorKind::InvalidParams, "the API key is empty");
    let error = client
        .call::<SessionGet>(&SessionIdParams {
            session_id: "missing".into(),
        })
        .await
        .unwrap_err();
    check(error, ErrorKind::NotFound, "session missing does not exist");
    let session = daemon.create_session(&client).await;
    let error = client
        .call::<SessionSetName>(&SessionSetNameParams {
            session_id: session.id.clone(),
            name: "   ".into(),
        })
        .await
        .unwrap_err();
    check(
        error,
        ErrorKind::InvalidParams,
        "Session name cannot be empty",
    );
    let error = client
        .call::<SessionLabel>(&SessionLabelParams {
            session_id: session.id.clone(),
            entry_id: "deadbeef".into(),
            label: Some("x".into()),
        })
        .await
        .unwrap_err();
    check(error, ErrorKind::NotFound, "entry deadbeef does not exist");
    let error = client
        .call::<SessionSetThinking>(&SessionSetThinkingParams {
            session_id: session.id.clone(),
            level: "max".into(),
        })
        .await
        .unwrap_err();
    check(error, ErrorKind::InvalidParams, "unknown thinking level");
}

#[tokio::test]
async fn metadata_changes_are_entries_and_events() {
    let daemon = TestDaemon::start().await;
    let (client, mut notifications) = daemon.client().await;
    let session = daemon.create_session(&client).await;
    let id = session.id.clone();
    client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();

    client
        .call::<SessionSetName>(&SessionSetNameParams {
            session_id: id.clone(),
            name: "  refactor  ".into(),
        })
        .await
        .unwrap();
    let changed = client
        .call::<SessionSetModel>(&SessionSetModelParams {
            session_id: id.clone(),
            model: "faux/faux-2".into(),
        })
        .await
        .unwrap();
    assert_eq!(changed.model.id, "faux-2");
    assert_eq!(
        changed.thinking_level, "off",
        "faux-2 cannot think, so the level is clamped"
    );
    let level = client
        .call::<SessionSetThinking>(&SessionSetThinkingParams {
            session_id: id.clone(),
            level: "high".into(),
        })
        .await
        .unwrap();
    assert_eq!(level.level, "off");
    client
        .call::<SessionSetModel>(&SessionSetModelParams {
            session_id: id.clone(),
            model: "faux-1:high".into(),
        })
        .await
        .unwrap();

    let events = super::harness::events_until(&mut notifications, &id, |e| {
        matches!(&e.event, SessionEvent::EntryAdded { entry: SessionEntry::ThinkingLevelChange { thinking_level, .. } } if thinking_level == "high")
    })
    .await;
    let added: Vec<String> = events
        .iter()
        .filter_map(|e| match &e.event {
            SessionEvent::EntryAdded { entry } => Some(
                serde_json::to_value(entry).unwrap()["type"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            ),
            _ => None,
        })
        .collect();
    assert_eq!(
        added,
        [
            "session_info",
            "model_change",
            "thinking_level_change",
            "model_change",
            "thinking_level_change"
        ]
    );
    let info = client
        .call::<SessionGet>(&SessionIdParams {
            session_id: id.clone(),
        })
        .await
        .unwrap()
        .info;
    assert_eq!(info.name.as_deref(), Some("refactor"));
    assert_eq!(info.thinking_level, "high");
    assert_eq!(info.model.unwrap().id, "faux-1");
}

#[tokio::test]
async fn delete_removes_the_session_and_models_are_listed() {
    let daemon = TestDaemon::start().await;
    let (client, _n) = daemon.client().await;
    let session = daemon.create_session(&client).await;
    client
        .call::<SessionDelete>(&SessionIdParams {
            session_id: session.id.clone(),
        })
        .await
        .unwrap();
    let error = client
        .call::<SessionGet>(&SessionIdParams {
            session_id: session.id.clone(),
        })
        .await
        .unwrap_err();
    assert_eq!(error.rpc_kind(), Some(ErrorKind::NotFound));
    let error = client
        .call::<SessionDelete>(&SessionIdParams {
            session_id: session.id.clone(),
        })
        .await
        .unwrap_err();
    assert_eq!(error.rpc_kind(), Some(ErrorKind::NotFound));
    let models = client
        .call::<ModelList>(&ModelListParams::default())
        .await
        .unwrap();
    assert_eq!(
        models
            .models
            .iter()
            .map(|m| m.id.as_str())
            .collect::<Vec<_>>(),
        ["faux-1", "faux-2"]
    );
    assert!(models.models[0].has_key);
}
