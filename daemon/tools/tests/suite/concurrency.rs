//! Two sessions (two tool sets sharing the daemon's `PathLocks`) editing one file at the same
//! time lose no edit, and one session's parallel edits of one file all land.

use pi_tools::PathLocks;
use serde_json::json;

use super::Session;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sessions_editing_one_file_lose_nothing() {
    const ROUNDS: usize = 100;
    let locks = PathLocks::new();
    let first = Session::with_locks(locks.clone(), "session-a");
    let second = Session::with_locks(locks.clone(), "session-b");
    // Both sessions edit the same absolute path.
    let shared = first.file("shared.txt", "a: 0\nmiddle\nb: 0\n");
    let path = shared.display().to_string();
    let run = |session: Session, key: &'static str, path: String| {
        tokio::spawn(async move {
            for round in 0..ROUNDS {
                let output = session
                    .call("edit", json!({"path": path, "edits": [
                        {"oldText": format!("{key}: {round}\n"), "newText": format!("{key}: {}\n", round + 1)},
                    ]}))
                    .await;
                assert!(!output.is_error, "{key} round {round}: {output:?}");
            }
            session
        })
    };
    let (first, second) = tokio::join!(run(first, "a", path.clone()), run(second, "b", path));
    let (first, _second) = (first.unwrap(), second.unwrap());
    assert_eq!(
        String::from_utf8(first.read("shared.txt")).unwrap(),
        format!("a: {ROUNDS}\nmiddle\nb: {ROUNDS}\n")
    );
    assert_eq!(
        locks.live_entries(),
        0,
        "lock entries are dropped when unused"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_edits_of_one_session_all_land() {
    let session = std::sync::Arc::new(Session::new());
    let slots: String = (0..20)
        .map(|index| format!("slot {index}: empty\n"))
        .collect();
    session.file("slots.txt", &slots);
    let tasks: Vec<_> = (0..20)
        .map(|index| {
            let session = session.clone();
            tokio::spawn(async move {
                session
                    .call("edit", json!({"path": "slots.txt", "edits": [
                        {"oldText": format!("slot {index}: empty"), "newText": format!("slot {index}: filled")},
                    ]}))
                    .await
            })
        })
        .collect();
    for task in tasks {
        let output = task.await.unwrap();
        assert!(!output.is_error, "{output:?}");
    }
    let expected: String = (0..20)
        .map(|index| format!("slot {index}: filled\n"))
        .collect();
    assert_eq!(
        String::from_utf8(session.read("slots.txt")).unwrap(),
        expected
    );
}
