//! Branch summaries on `session/navigate {summarize}`: what is summarized, pi's prompt, the
//! stored entry (under the new leaf, with file lists) and what the model sees next.

use pi_llm::faux::{FauxGate, FauxReply};
use pi_protocol::v1::*;
use serde_json::json;

use super::support::{KEEP_LAST_TURN, Session, seen, summary_prompt};
use crate::suite::sessions::harness::Options;
use crate::suite::sessions::harness::{events_until, kind};

async fn two_turns(session: &mut Session) {
    session
        .converse("U1 first", FauxReply::text("A1 done"))
        .await;
    session
        .daemon
        .faux
        .push(FauxReply::tool_call("read", json!({"path": "src/lib.rs"})));
    session
        .converse("U2 explore", FauxReply::text("A2 explored"))
        .await;
}

fn navigate(session: &Session, entry_id: &str) -> SessionNavigateParams {
    SessionNavigateParams {
        session_id: session.id.clone(),
        entry_id: entry_id.to_owned(),
        summarize: true,
        instructions: Some("the file that was read".into()),
        replace_instructions: false,
    }
}

#[tokio::test]
async fn navigating_away_summarizes_the_abandoned_branch() {
    let mut session = Session::start(Options::default(), KEEP_LAST_TURN).await;
    two_turns(&mut session).await;
    let a1 = session.entry_id("A1").await;
    let u2 = session.entry_id("U2").await;
    session
        .daemon
        .faux
        .push(FauxReply::text("## Goal\nRead the file."));
    let response = session
        .client
        .call::<SessionNavigate>(&navigate(&session, &u2))
        .await
        .unwrap();
    assert_eq!(response.text.as_deref(), Some("U2 explore"));
    assert!(!response.aborted);
    let summary_id = response.summary_entry_id.clone().unwrap();
    assert_eq!(response.leaf_id.as_deref(), Some(summary_id.as_str()));

    let requests = session.daemon.faux.requests();
    assert_eq!(requests[3].max_tokens, Some(2048));
    insta::assert_snapshot!("branch_summary_request", summary_prompt(&requests[3]));

    let events = events_until(&mut session.events, &session.id, |event| {
        kind(event) == "leaf_changed"
    })
    .await;
    let kinds: Vec<String> = events.iter().map(kind).collect();
    assert_eq!(kinds[kinds.len() - 2..], ["entry_added", "leaf_changed"]);
    let branch = session.branch().await;
    let Some(SessionEntry::BranchSummary {
        id,
        parent_id,
        from_id,
        summary,
        details,
        from_hook,
        ..
    }) = branch.last()
    else {
        panic!("the branch ends with the summary");
    };
    assert_eq!(id, &summary_id);
    assert_eq!(
        parent_id.as_deref(),
        Some(a1.as_str()),
        "under the new leaf"
    );
    assert_eq!(from_id, &a1, "pi's fromId is the new leaf");
    assert_eq!(
        summary,
        "The user explored a different conversation branch before returning here.\nSummary of \
         that exploration:\n\n## Goal\nRead the file.\n\n<read-files>\nsrc/lib.rs\n</read-files>"
    );
    assert_eq!(
        details,
        &Some(json!({"readFiles": ["src/lib.rs"], "modifiedFiles": []}))
    );
    assert_eq!(*from_hook, Some(false));

    session.converse("U3 again", FauxReply::text("A3")).await;
    assert_eq!(
        seen(&session.daemon.faux.requests()[4]),
        ["user:U1", "assistant:A1", "user:The", "user:U3"]
    );
}

#[tokio::test]
async fn aborting_a_branch_summary_leaves_the_leaf_in_place() {
    let mut session = Session::start(Options::default(), KEEP_LAST_TURN).await;
    two_turns(&mut session).await;
    let info = |session: &Session| {
        let client = session.client.clone();
        let id = session.id.clone();
        async move {
            client
                .call::<SessionGet>(&SessionIdParams { session_id: id })
                .await
                .unwrap()
                .info
        }
    };
    let leaf = info(&session).await.leaf_id;
    let u2 = session.entry_id("U2").await;
    let gate = FauxGate::new();
    session
        .daemon
        .faux
        .push(FauxReply::text("never").held_after(0, &gate));
    let client = session.client.clone();
    let params = navigate(&session, &u2);
    let navigating =
        tokio::spawn(async move { client.call::<SessionNavigate>(&params).await.unwrap() });
    // The session reports `running` while the summary is generated.
    tokio::time::timeout(std::time::Duration::from_secs(10), async {
        while info(&session).await.status != SessionStatus::Running {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the summary starts");
    session
        .client
        .call::<SessionAbort>(&SessionIdParams {
            session_id: session.id.clone(),
        })
        .await
        .unwrap();
    let response = navigating.await.unwrap();
    assert!(response.aborted);
    assert_eq!(response.leaf_id, leaf);
    let after = info(&session).await;
    assert_eq!((after.leaf_id, after.status), (leaf, SessionStatus::Idle));
}
