//! The built-in tools in the daemon: default tool names, the model calling `write` and `bash`
//! in the session's cwd and environment, `session/bash` recorded as a `bashExecution` message
//! (after the run when one is active), `artifact/read` of truncated output, and artifacts
//! deleted with their session.

use std::collections::BTreeMap;

use pi_protocol::ErrorKind;
use pi_protocol::v1::message::AgentMessage;
use pi_protocol::v1::*;

use super::harness::{Options, TestDaemon, TestTools, events_until, kind};

async fn start() -> (
    TestDaemon,
    pi_client::Client,
    pi_client::Notifications,
    SessionInfo,
) {
    let daemon = TestDaemon::start_with(Options {
        tools: TestTools::Builtin,
        ..Options::default()
    })
    .await;
    let (client, notifications) = daemon.client().await;
    let work = daemon.home.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let env = BTreeMap::from([
        ("HOME".to_owned(), daemon.home.path().display().to_string()),
        ("PATH".to_owned(), "/usr/local/bin:/usr/bin:/bin".to_owned()),
        ("SESSION_VAR".to_owned(), "from the client".to_owned()),
    ]);
    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: work.display().to_string(),
            env: Some(env),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    (daemon, client, notifications, session)
}

async fn bash(
    client: &pi_client::Client,
    session: &SessionInfo,
    command: &str,
    exclude: bool,
) -> SessionBashResponse {
    client
        .call::<SessionBash>(&SessionBashParams {
            session_id: session.id.clone(),
            command: command.to_owned(),
            exclude_from_context: exclude,
        })
        .await
        .unwrap()
}

#[tokio::test]
async fn user_shell_commands_run_in_the_session_and_are_recorded() {
    let (_daemon, client, mut notifications, session) = start().await;
    let get = client
        .call::<SessionGet>(&SessionIdParams {
            session_id: session.id.clone(),
        })
        .await
        .unwrap();
    assert_eq!(get.tools, ["read", "bash", "edit", "write"]);
    client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: session.id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();

    let result = bash(
        &client,
        &session,
        "pwd; echo \"$SESSION_VAR\"; printf '\\033[1mbold\\033[0m\\n'; exit 2",
        false,
    )
    .await;
    assert!(
        result.output.ends_with("/work\nfrom the client\nbold\n"),
        "{}",
        result.output
    );
    assert_eq!(
        (result.exit_code, result.cancelled, result.truncated),
        (Some(2), false, false)
    );
    let entry_id = result.entry_id.clone().expect("recorded at once when idle");
    let events = events_until(&mut notifications, &session.id, |event| {
        kind(event) == "message_end"
    })
    .await;
    let SessionEvent::MessageEnd {
        message: AgentMessage::BashExecution(recorded),
        entry_id: announced,
    } = &events.last().unwrap().event
    else {
        panic!(
            "expected a bashExecution message_end, got {:?}",
            events.last()
        );
    };
    assert_eq!(announced.as_deref(), Some(entry_id.as_str()));
    assert_eq!(recorded.exit_code, Some(2));
    assert!(!recorded.exclude_from_context);

    let excluded = bash(&client, &session, "echo secret", true).await;
    let read = client
        .call::<SessionRead>(&SessionReadParams {
            session_id: session.id.clone(),
            scope: ReadScope::Branch,
            limit: None,
            cursor: None,
        })
        .await
        .unwrap();
    let bash_messages: Vec<(String, bool)> = read
        .entries
        .iter()
        .filter_map(|record| match &record.entry {
            SessionEntry::Message {
                message: AgentMessage::BashExecution(message),
                id,
                ..
            } => Some((id.clone(), message.exclude_from_context)),
            _ => None,
        })
        .collect();
    assert_eq!(
        bash_messages,
        [(entry_id, false), (excluded.entry_id.unwrap(), true)]
    );
}

#[tokio::test]
async fn truncated_output_is_readable_as_an_artifact_until_the_session_is_deleted() {
    let (daemon, client, _notifications, session) = start().await;
    let result = bash(&client, &session, "seq 1 100000", false).await;
    assert!(result.truncated);
    assert!(result.output.starts_with("98002\n") && result.output.ends_with("100000\n"));
    let reference = result.full_output_path.expect("the full output is stored");

    // Read it back in ranges.
    let mut full = String::new();
    let mut offset = 0;
    loop {
        let chunk = client
            .call::<ArtifactRead>(&ArtifactReadParams {
                session_id: session.id.clone(),
                artifact_id: reference.clone(),
                offset: Some(offset),
                limit: Some(200_000),
            })
            .await
            .unwrap();
        full.push_str(&chunk.data);
        offset += chunk.bytes;
        if chunk.eof {
            assert_eq!(offset, chunk.total_bytes);
            break;
        }
    }
    let expected: String = (1..=100000).map(|n| format!("{n}\n")).collect();
    assert_eq!(full, expected);

    let missing = client
        .call::<ArtifactRead>(&ArtifactReadParams {
            session_id: session.id.clone(),
            artifact_id: "bash-0000000000000000".into(),
            ..ArtifactReadParams::default()
        })
        .await
        .unwrap_err();
    assert_eq!(missing.rpc_kind(), Some(ErrorKind::NotFound));

    let session_dir = daemon.state.paths.artifacts_dir().join(&session.id);
    assert!(session_dir.is_dir());
    client
        .call::<SessionDelete>(&SessionIdParams {
            session_id: session.id.clone(),
        })
        .await
        .unwrap();
    assert!(
        !session_dir.exists(),
        "the session's artifacts are deleted with it"
    );
    let gone = client
        .call::<ArtifactRead>(&ArtifactReadParams {
            session_id: session.id.clone(),
            artifact_id: reference,
            ..ArtifactReadParams::default()
        })
        .await
        .unwrap_err();
    assert_eq!(gone.rpc_kind(), Some(ErrorKind::NotFound));
}

#[tokio::test]
async fn a_command_during_a_run_is_recorded_after_the_run() {
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
    daemon.faux.push(pi_llm::faux::FauxReply::tool_call(
        "block",
        serde_json::json!({"key": "k"}),
    ));
    daemon.faux.push(pi_llm::faux::FauxReply::text("done"));
    client
        .call::<SessionPrompt>(&SessionMessageParams {
            session_id: session.id.clone(),
            text: "go".into(),
            images: vec![],
        })
        .await
        .unwrap();
    daemon.block.wait_started(1).await;
    let result = bash(&client, &session, "echo during", false).await;
    assert_eq!(
        (result.output.as_str(), result.entry_id),
        ("during\n", None)
    );
    daemon.block.release("k");
    let events = events_until(&mut notifications, &session.id, |event| {
        matches!(
            &event.event,
            SessionEvent::MessageEnd {
                message: AgentMessage::BashExecution(_),
                ..
            }
        )
    })
    .await;
    let kinds: Vec<String> = events.iter().map(kind).collect();
    let agent_end = kinds.iter().position(|k| k == "agent_end").unwrap();
    assert_eq!(agent_end, kinds.len() - 2, "{kinds:?}");
    let read = client
        .call::<SessionRead>(&SessionReadParams {
            session_id: session.id.clone(),
            scope: ReadScope::Branch,
            limit: None,
            cursor: None,
        })
        .await
        .unwrap();
    let last = &read.entries.last().unwrap().entry;
    assert!(
        matches!(last, SessionEntry::Message { message: AgentMessage::BashExecution(message), .. } if message.output == "during\n"),
        "{last:?}"
    );
}

#[tokio::test]
async fn the_model_uses_the_builtin_tools_in_the_sessions_cwd() {
    let (daemon, client, mut notifications, session) = start().await;
    client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: session.id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    let faux = &daemon.faux;
    faux.push(pi_llm::faux::FauxReply::tool_call(
        "write",
        serde_json::json!({"path": "notes/today.md", "content": "written by the model\n"}),
    ));
    faux.push(pi_llm::faux::FauxReply::tool_call(
        "bash",
        serde_json::json!({"command": "cat notes/today.md; echo $SESSION_VAR"}),
    ));
    faux.push(pi_llm::faux::FauxReply::text("done"));
    client
        .call::<SessionPrompt>(&SessionMessageParams {
            session_id: session.id.clone(),
            text: "go".into(),
            images: vec![],
        })
        .await
        .unwrap();
    super::harness::run_events(&mut notifications, &session.id).await;
    let written = daemon.home.path().join("work/notes/today.md");
    assert_eq!(
        std::fs::read_to_string(written).unwrap(),
        "written by the model\n"
    );
    let read = client
        .call::<SessionRead>(&SessionReadParams {
            session_id: session.id.clone(),
            scope: ReadScope::Branch,
            limit: None,
            cursor: None,
        })
        .await
        .unwrap();
    let results: Vec<String> = read
        .entries
        .iter()
        .filter_map(|record| match &record.entry {
            SessionEntry::Message {
                message: AgentMessage::ToolResult(result),
                ..
            } => Some(
                serde_json::to_value(&result.content).unwrap()[0]["text"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            ),
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        [
            "Successfully wrote 21 bytes to notes/today.md",
            "written by the model\nfrom the client\n"
        ]
    );
}

#[tokio::test]
async fn one_command_runs_at_a_time_and_session_abort_kills_it() {
    let (daemon, client, _notifications, session) = start().await;
    let long = {
        let (client, session) = (client.clone(), session.clone());
        tokio::spawn(async move { bash(&client, &session, "touch started; sleep 30", false).await })
    };
    let started = daemon.home.path().join("work/started");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !started.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the command did not start"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let busy = client
        .call::<SessionBash>(&SessionBashParams {
            session_id: session.id.clone(),
            command: "echo second".into(),
            exclude_from_context: false,
        })
        .await
        .unwrap_err();
    assert_eq!(busy.rpc_kind(), Some(ErrorKind::Busy));
    client
        .call::<SessionAbort>(&SessionIdParams {
            session_id: session.id.clone(),
        })
        .await
        .unwrap();
    let result = long.await.unwrap();
    assert_eq!((result.cancelled, result.exit_code), (true, None));
    assert!(
        result.entry_id.is_some(),
        "a killed command is recorded too"
    );
    // The next command runs.
    assert_eq!(
        bash(&client, &session, "echo next", false).await.output,
        "next\n"
    );
}
