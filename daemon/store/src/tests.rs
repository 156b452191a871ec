//! The store against a file database opened with the daemon's configuration (one writer, a
//! pool of readers): migrations, group commit, a failing write undone alone, a full disk, a
//! lock held by another program, a closed store and a damaged file.

use std::time::Duration;

use futures_util::future::join_all;
use sqlx::{ConnectOptions as _, Executor as _};

use super::*;

fn row(id: &str) -> SessionRow {
    SessionRow {
        id: id.to_owned(),
        cwd: "/work".to_owned(),
        env: None,
        name: None,
        parent_session_id: None,
        created_at: 1,
        updated_at: 1,
        leaf_id: None,
        model: None,
        thinking_level: "off".to_owned(),
        tools: vec!["read".to_owned()],
        message_count: 0,
        first_message: None,
        last_seq: 0,
        running: false,
        system_prompt: None,
        append_system_prompt: None,
        task_name: None,
        secret_env_names: Vec::new().into(),
        secret_env: crate::Env::default(),
        no_skills: false,
        no_context_files: false,
        extensions: std::sync::Arc::from([]),
        no_extensions: false,
        extension_flags: Default::default(),
        start_options: Default::default(),
    }
}

fn entry(id: &str, parent: Option<&str>, seq: u64, body: String) -> NewEntry {
    NewEntry {
        id: id.to_owned(),
        parent_id: parent.map(str::to_owned),
        seq,
        kind: "custom".to_owned(),
        body,
    }
}

/// (transactions, writes) so far.
fn writes(store: &Store) -> (u64, u64) {
    let stats = store.writer_stats();
    (
        stats
            .transactions
            .load(std::sync::atomic::Ordering::Relaxed),
        stats.writes.load(std::sync::atomic::Ordering::Relaxed),
    )
}

#[tokio::test]
async fn a_new_store_migrates_and_counts_starts() {
    let (_dir, store) = temp_store().await;
    assert!(store.schema_version() > 0);
    assert_eq!(store.start_count().await.unwrap(), 1);
    assert_eq!(
        store.applied_migration_count().await.unwrap(),
        MIGRATOR.iter().count() as i64
    );
    assert_eq!(store.integrity_check().await.unwrap(), ["ok"]);
}

#[tokio::test]
async fn reopening_a_file_applies_nothing_twice() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested").join("pi.db");
    let first = Store::open(&path).await.unwrap();
    let version = first.schema_version();
    first.close().await;
    let second = Store::open(&path).await.unwrap();
    assert_eq!(second.schema_version(), version);
    assert_eq!(second.start_count().await.unwrap(), 2);
    assert_eq!(
        second.applied_migration_count().await.unwrap(),
        MIGRATOR.iter().count() as i64
    );
}

/// The failure from the issue: many sessions appending at once on the file database. Every
/// append commits, in order per session, on a multi-threaded runtime like the daemon's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_appends_from_many_sessions_all_commit() {
    let (_dir, store) = temp_store().await;
    let sessions = 100;
    let appends = 20;
    for n in 0..sessions {
        store.insert_session(row(&format!("s{n}"))).await.unwrap();
    }
    let tasks = (0..sessions).map(|n| {
        let store = store.clone();
        tokio::spawn(async move {
            let id = format!("s{n}");
            let mut parent: Option<String> = None;
            let mut session = row(&id);
            for k in 0..appends {
                let entry_id = format!("e{k}");
                session.leaf_id = Some(entry_id.clone());
                session.last_seq = k + 1;
                session.message_count = k + 1;
                store
                    .append_entries(
                        &session,
                        vec![entry(
                            &entry_id,
                            parent.as_deref(),
                            k + 1,
                            format!("{{\"n\":{k}}}"),
                        )],
                    )
                    .await
                    .unwrap();
                // Reads see every committed write at once (the event would go out now).
                let stored = store.session(&id).await.unwrap().unwrap();
                assert_eq!(stored.last_seq, k + 1);
                parent = Some(entry_id);
            }
        })
    });
    for task in join_all(tasks).await {
        task.unwrap();
    }
    for n in 0..sessions {
        let id = format!("s{n}");
        let session = store.session(&id).await.unwrap().unwrap();
        let branch = store.branch(&id, session.leaf_id.as_deref()).await.unwrap();
        let seqs: Vec<u64> = branch.iter().map(|entry| entry.seq).collect();
        assert_eq!(seqs, (1..=appends).collect::<Vec<_>>(), "session {id}");
    }
    assert_eq!(store.integrity_check().await.unwrap(), ["ok"]);
}

/// Writes queued while the writer is busy share one transaction.
#[tokio::test(flavor = "current_thread")]
async fn queued_writes_are_committed_together() {
    let (_dir, store) = temp_store().await;
    let before = writes(&store);
    // On one thread, every write is queued before the writer task runs again.
    let results = join_all((0..50).map(|n| store.insert_session(row(&format!("s{n}"))))).await;
    assert!(results.iter().all(Result::is_ok));
    let after = writes(&store);
    assert_eq!(after.1 - before.1, 50);
    assert_eq!(
        after.0 - before.0,
        1,
        "one transaction carried the 50 writes"
    );

    assert_eq!(store.session_count().await.unwrap(), 50);
}

/// A write that fails inside a shared transaction is undone alone and gets its own error.
#[tokio::test(flavor = "current_thread")]
async fn a_failing_write_is_undone_alone() {
    let (_dir, store) = temp_store().await;
    let mut duplicate = row("a");
    duplicate.name = Some("the duplicate".to_owned());
    let results = join_all([
        store.insert_session(row("a")),
        store.insert_session(duplicate),
        store.insert_session(row("b")),
    ])
    .await;
    assert!(results[0].is_ok());
    let error = results[1].as_ref().unwrap_err();
    assert_eq!(error.failure(), StorageFailure::Other);
    assert!(error.to_string().contains("UNIQUE"), "{error}");
    assert!(results[2].is_ok());
    assert_eq!(store.session("a").await.unwrap().unwrap().name, None);
    assert!(store.session("b").await.unwrap().is_some());
}

/// A write alone in its transaction runs with it as one query; when that query fails, the
/// write is undone, run again step by step, and answered with its own error.
#[tokio::test]
async fn a_write_alone_is_one_query_and_fails_with_its_own_error() {
    let (_dir, store) = temp_store().await;
    let counts = |store: &Store| {
        let stats = store.writer_stats();
        (
            stats.one_query.load(std::sync::atomic::Ordering::Relaxed),
            stats.retried.load(std::sync::atomic::Ordering::Relaxed),
        )
    };
    let before = counts(&store);
    store.insert_session(row("a")).await.unwrap();
    assert_eq!(counts(&store), (before.0 + 1, before.1));

    let mut duplicate = row("a");
    duplicate.name = Some("the duplicate".to_owned());
    let error = store.insert_session(duplicate).await.unwrap_err();
    assert_eq!(error.failure(), StorageFailure::Other);
    assert!(error.to_string().contains("UNIQUE"), "{error}");
    assert_eq!(counts(&store), (before.0 + 1, before.1 + 1));
    assert_eq!(store.session("a").await.unwrap().unwrap().name, None);

    // The connection is usable afterwards, outside any transaction.
    store.insert_session(row("b")).await.unwrap();
    assert_eq!(store.session_count().await.unwrap(), 2);
}

/// Past the page cap SQLite answers `SQLITE_FULL`, as on a full disk: the write fails as
/// `DiskFull`, nothing of it is visible, reads go on, and deleting data makes room again.
#[tokio::test]
async fn a_full_disk_fails_writes_and_deleting_data_makes_room() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_with(
        &dir.path().join("pi.db"),
        StoreOptions {
            max_page_count: Some(96),
            ..StoreOptions::default()
        },
    )
    .await
    .unwrap();
    let big = format!("\"{}\"", "x".repeat(30_000));
    let mut stored = 0;
    let error = loop {
        let id = format!("s{stored}");
        let mut session = row(&id);
        session.leaf_id = Some("e".to_owned());
        match store
            .insert_session_with_entries(&session, vec![entry("e", None, 1, big.clone())])
            .await
        {
            Ok(()) => stored += 1,
            Err(error) => break error,
        }
        assert!(stored < 100, "the page cap never filled up");
    };
    assert_eq!(error.failure(), StorageFailure::DiskFull, "{error}");
    assert!(stored > 1);
    // The failed write left nothing; what was stored before is intact and readable.
    assert!(
        store
            .session(&format!("s{stored}"))
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(store.session_count().await.unwrap(), stored);
    assert_eq!(store.entry_count("s0").await.unwrap(), 1);
    // Freeing space (deleting sessions) lets writes succeed again.
    assert!(store.delete_session("s0").await.unwrap());
    assert!(store.delete_session("s1").await.unwrap());
    let mut session = row("after");
    session.leaf_id = Some("e".to_owned());
    store
        .insert_session_with_entries(&session, vec![entry("e", None, 1, big)])
        .await
        .unwrap();
    assert_eq!(store.integrity_check().await.unwrap(), ["ok"]);
}

/// Another program holding the write lock past the busy timeout fails writes as `Locked`;
/// once it lets go, writes succeed.
#[tokio::test]
async fn a_lock_held_by_another_program_fails_as_locked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pi.db");
    let store = Store::open_with(
        &path,
        StoreOptions {
            busy_timeout: Duration::from_millis(50),
            ..StoreOptions::default()
        },
    )
    .await
    .unwrap();
    let mut other = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(&path)
        .connect()
        .await
        .unwrap();
    other.execute("BEGIN IMMEDIATE").await.unwrap();
    let error = store.insert_session(row("a")).await.unwrap_err();
    assert_eq!(error.failure(), StorageFailure::Locked, "{error}");
    other.execute("ROLLBACK").await.unwrap();
    store.insert_session(row("a")).await.unwrap();
    // Reads were never blocked by the other program's lock.
    assert!(store.session("a").await.unwrap().is_some());
}

#[tokio::test]
async fn writes_after_close_fail_as_closed() {
    let (_dir, store) = temp_store().await;
    store.insert_session(row("a")).await.unwrap();
    store.close().await;
    let error = store.insert_session(row("b")).await.unwrap_err();
    assert_eq!(error.failure(), StorageFailure::Closed);
}

/// A file that is not a database is refused at open as `Corrupt`, and left untouched.
#[tokio::test]
async fn a_damaged_file_is_refused_as_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pi.db");
    let garbage = "this is not an SQLite database, but a text file of some length. ".repeat(100);
    std::fs::write(&path, &garbage).unwrap();
    let error = Store::open(&path).await.unwrap_err();
    assert_eq!(error.failure(), StorageFailure::Corrupt, "{error}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), garbage);
}

/// The reader pool is `query_only`: a write sent there fails instead of contending with the
/// writer.
#[tokio::test]
async fn the_readers_cannot_write() {
    let (_dir, store) = temp_store().await;
    let error = sqlx::query("DELETE FROM sessions")
        .execute(&store.reader)
        .await
        .unwrap_err();
    assert_eq!(StoreError::from(error).failure(), StorageFailure::ReadOnly);
}

#[tokio::test]
async fn the_secret_env_migration_scrubs_what_rows_stored_before() {
    let (dir, store) = temp_store().await;
    // A row as the daemon wrote it before: the client's whole environment.
    let mut old = row("s1");
    old.env = Some(crate::Env::new(
        [
            ("PATH", "/bin"),
            ("OPENAI_API_KEY", "sk-sentinel"),
            ("github_token", "ghp-sentinel"),
            ("DB_PASSWORD", "pw-sentinel"),
            ("EDITOR", "vi"),
        ]
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .into(),
    ));
    store.insert_session(old).await.unwrap();
    store.insert_session(row("no-env")).await.unwrap();
    // The migration's scrub, run again on that row.
    let sql = include_str!("../../../migrations/20261126020000_session_secret_env.sql");
    let scrub = &sql[sql.find("UPDATE sessions").unwrap()..];
    let mut other = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(dir.path().join("pi.db"))
        .connect()
        .await
        .unwrap();
    other.execute(scrub).await.unwrap();
    let scrubbed = store.session("s1").await.unwrap().unwrap();
    assert_eq!(
        scrubbed.env.unwrap().keys().collect::<Vec<_>>(),
        ["EDITOR", "PATH"]
    );
    assert_eq!(
        *scrubbed.secret_env_names,
        ["DB_PASSWORD", "OPENAI_API_KEY", "github_token"]
    );
    let untouched = store.session("no-env").await.unwrap().unwrap();
    assert_eq!(
        (untouched.env, untouched.secret_env_names.to_vec()),
        (None, Vec::new())
    );
}

/// A connection to a new database at `path` migrated up to `version`, as an older daemon
/// left it.
async fn database_at(path: &std::path::Path, version: i64) -> sqlx::SqliteConnection {
    let mut old = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(sqlx::sqlite::SqliteJournalMode::Wal)
        .connect()
        .await
        .unwrap();
    MIGRATOR.run_to(version, &mut old).await.unwrap();
    old
}

#[tokio::test]
async fn secrets_stored_before_leave_the_database_files_when_it_opens() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pi.db");
    // A database as the daemon left it before the scrub: the whole environment stored.
    {
        let mut old = database_at(&path, 20261126010000).await;
        old.execute(
            "INSERT INTO sessions (id, cwd, env, created_at, updated_at, thinking_level, tools) \
             VALUES ('s1', '/w', '{\"PATH\":\"/bin\",\"AWS_SECRET_ACCESS_KEY\":\"leak-9c2e7a\"}', \
             1, 1, 'off', '[]')",
        )
        .await
        .unwrap();
    }
    let store = Store::open(&path).await.unwrap();
    let row = store.session("s1").await.unwrap().unwrap();
    assert_eq!(*row.secret_env_names, ["AWS_SECRET_ACCESS_KEY"]);
    store.close().await;
    for file in std::fs::read_dir(dir.path()).unwrap().flatten() {
        let bytes = std::fs::read(file.path()).unwrap();
        assert!(
            !bytes.windows(11).any(|window| window == b"leak-9c2e7a"),
            "{} still holds the secret",
            file.path().display()
        );
    }
}

#[tokio::test]
async fn the_allow_list_migration_moves_every_unknown_or_credential_variable_out() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pi.db");
    // A database as the daemon left it under the name-pattern rule.
    {
        let mut old = database_at(&path, 20261126060000).await;
        old.execute(
            "INSERT INTO sessions (id, cwd, env, secret_env_names, created_at, updated_at, \
             thinking_level, tools) VALUES ('s1', '/w', '{\"PATH\":\"/bin\",\"EDITOR\":\"vi\",\
             \"LC_ALL\":\"C.UTF-8\",\"DATABASE_URL\":\"postgres://app:leak-4d1a@db/app\",\
             \"SMTP_PASS\":\"leak-77b0\",\"PYTHONPATH\":\"https://u:leak-e3c9@pypi/simple\",\
             \"SOME_SETTING\":\"x\"}', '[\"OPENAI_API_KEY\"]', 1, 1, 'off', '[]')",
        )
        .await
        .unwrap();
    }
    let store = Store::open(&path).await.unwrap();
    let row = store.session("s1").await.unwrap().unwrap();
    assert_eq!(
        row.env.unwrap().keys().collect::<Vec<_>>(),
        ["EDITOR", "LC_ALL", "PATH"]
    );
    assert_eq!(
        *row.secret_env_names,
        [
            "DATABASE_URL",
            "OPENAI_API_KEY",
            "PYTHONPATH",
            "SMTP_PASS",
            "SOME_SETTING"
        ]
    );
    store.close().await;
    for file in std::fs::read_dir(dir.path()).unwrap().flatten() {
        let bytes = std::fs::read(file.path()).unwrap();
        for leak in [&b"leak-4d1a"[..], b"leak-77b0", b"leak-e3c9"] {
            assert!(
                !bytes.windows(leak.len()).any(|window| window == leak),
                "{} still holds a credential",
                file.path().display()
            );
        }
    }
}

/// Answers about project extensions survive reopening the file, a later answer replaces an
/// earlier one, and a forgotten one is gone.
#[tokio::test]
async fn extension_answers_are_kept_replaced_and_forgotten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pi.db");
    let store = Store::open(&path).await.unwrap();
    let answer = |path: &str, approved: bool, decided_at: i64| ExtensionTrustRow {
        path: path.to_owned(),
        approved,
        decided_at,
    };
    store
        .record_extension_trust(&[answer("/p/a.ts", true, 1), answer("/p/b.ts", true, 1)])
        .await
        .unwrap();
    store
        .record_extension_trust(&[answer("/p/b.ts", false, 2), answer("/p/c.ts", true, 2)])
        .await
        .unwrap();
    store
        .forget_extension_trust(&["/p/c.ts".to_owned()])
        .await
        .unwrap();
    store.close().await;
    let store = Store::open(&path).await.unwrap();
    let mut rows = store.extension_trust().await.unwrap();
    rows.sort_by(|a, b| a.path.cmp(&b.path));
    assert_eq!(
        rows,
        [answer("/p/a.ts", true, 1), answer("/p/b.ts", false, 2)]
    );
}
