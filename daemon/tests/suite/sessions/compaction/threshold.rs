//! Threshold compaction after a run: the events, the stored entry, pi's summarization
//! request, the next request (the summary plus exactly the kept messages) and update mode.

use pi_llm::faux::FauxReply;
use pi_llm::{Message, ThinkingLevel};
use pi_protocol::v1::*;

use super::support::*;
use crate::suite::sessions::harness::Options;
use crate::suite::sessions::harness::kind;

#[tokio::test]
async fn threshold_compaction_keeps_the_recent_turn_and_summarizes_the_rest() {
    let mut session = Session::start(Options::default(), KEEP_LAST_TURN).await;
    session
        .converse(&sized("U1"), FauxReply::text(sized("A1")))
        .await;
    // The second answer reports a context past the threshold; the summary answers next.
    session
        .daemon
        .faux
        .push(FauxReply::text(sized("A2")).with_usage(over_threshold()));
    session
        .daemon
        .faux
        .push(FauxReply::text("## Goal\nShip it."));
    session.prompt(&sized("U2")).await;
    let events = session.events_until("compaction_end").await;
    let kinds: Vec<String> = events.iter().map(kind).collect();
    let tail = &kinds[kinds.len() - 4..];
    assert_eq!(
        tail,
        [
            "agent_end",
            "compaction_start",
            "entry_added",
            "compaction_end"
        ]
    );
    assert!(
        events.windows(2).all(|pair| pair[1].seq == pair[0].seq + 1),
        "every event has the next seq"
    );
    let u2 = session.entry_id("U2").await;
    let SessionEvent::CompactionEnd {
        reason,
        result: Some(result),
        aborted,
        will_retry,
        error_message,
    } = compaction_end(&events)
    else {
        panic!("the compaction succeeded");
    };
    assert_eq!(reason, CompactionReason::Threshold);
    assert!(!aborted && !will_retry && error_message.is_none());
    assert_eq!(result.summary, "## Goal\nShip it.");
    assert_eq!(result.first_kept_entry_id, u2);
    assert_eq!(result.tokens_before, 190_000, "the last real usage");
    assert_eq!(
        result.details,
        Some(serde_json::json!({"readFiles": [], "modifiedFiles": []}))
    );

    // The summarization request follows pi: its system prompt, one user message, 0.8 × the
    // reserve as output cap, high reasoning on a reasoning model.
    let requests = session.daemon.faux.requests();
    let summarization = &requests[2];
    assert_eq!(summarization.max_tokens, Some(13_107));
    assert_eq!(summarization.thinking, ThinkingLevel::High);
    insta::assert_snapshot!("threshold_summary_request", summary_prompt(summarization));

    // The compaction entry is stored with pi's fields.
    let branch = session.branch().await;
    let Some(SessionEntry::Compaction {
        first_kept_entry_id,
        tokens_before,
        from_hook,
        ..
    }) = branch.last()
    else {
        panic!("the branch ends with the compaction");
    };
    assert_eq!((first_kept_entry_id, *tokens_before), (&u2, 190_000));
    assert_eq!(*from_hook, Some(false));

    // The next request holds the summary and exactly the kept messages.
    session
        .converse(&sized("U3"), FauxReply::text(sized("A3")))
        .await;
    let requests = session.daemon.faux.requests();
    assert_eq!(
        seen(&requests[3]),
        ["user:The", "user:U2", "assistant:A2", "user:U3"]
    );
    let Message::User(summary) = &requests[3].context.messages[0] else {
        panic!("the summary is a user message");
    };
    assert_eq!(
        user_text(&summary.content),
        "The conversation history before this point was compacted into the following \
         summary:\n\n<summary>\n## Goal\nShip it.\n</summary>"
    );

    // A second compaction updates the first summary with what followed it.
    session
        .daemon
        .faux
        .push(FauxReply::text(sized("A4")).with_usage(over_threshold()));
    session
        .daemon
        .faux
        .push(FauxReply::text("## Goal\nShip it, v2."));
    session.prompt(&sized("U4")).await;
    let events = session.events_until("compaction_end").await;
    assert!(matches!(
        compaction_end(&events),
        SessionEvent::CompactionEnd {
            result: Some(_),
            ..
        }
    ));
    let requests = session.daemon.faux.requests();
    insta::assert_snapshot!("update_summary_request", summary_prompt(&requests[5]));
    session
        .converse(&sized("U5"), FauxReply::text("done"))
        .await;
    assert_eq!(
        seen(&session.daemon.faux.requests()[6]),
        ["user:The", "user:U4", "assistant:A4", "user:U5"]
    );
    assert_eq!(session.daemon.faux.pending(), 0);
}
