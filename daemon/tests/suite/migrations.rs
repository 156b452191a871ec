//! Migrations are append-only and applied exactly once.

use pi_daemon::store::{MIGRATOR, Store};
use pi_protocol::v1::{DaemonStatus, DaemonStatusParams};
use pi_test_support::daemon::TempDaemon;

use super::pid_binary;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `migrations/ledger.txt` lists every committed migration with its checksum. Editing or
/// deleting a committed migration fails here; a new one must be appended to the ledger.
#[test]
fn committed_migrations_never_change() {
    let ledger_path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../migrations/ledger.txt");
    let ledger = std::fs::read_to_string(&ledger_path).unwrap();
    let recorded: Vec<(i64, String)> = ledger
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let mut parts = line.split_whitespace();
            let version = parts.next().unwrap().parse().unwrap();
            (version, parts.last().unwrap().to_owned())
        })
        .collect();
    let current: Vec<(i64, String, String)> = MIGRATOR
        .iter()
        .map(|m| (m.version, m.description.to_string(), hex(&m.checksum)))
        .collect();
    for (version, checksum) in &recorded {
        let Some((_, _, now)) = current.iter().find(|(v, _, _)| v == version) else {
            panic!("migration {version} was deleted; migrations are append-only");
        };
        assert_eq!(
            now, checksum,
            "migration {version} changed after it was committed; revert it and add a new migration"
        );
    }
    let newest_recorded = recorded.iter().map(|(v, _)| *v).max().unwrap_or(0);
    for (version, description, checksum) in &current {
        if recorded.iter().all(|(v, _)| v != version) {
            assert!(
                *version > newest_recorded,
                "migration {version} is older than the newest committed one"
            );
            panic!(
                "migration {version} is not in the ledger; append this line to migrations/ledger.txt:\n{version} {} {checksum}",
                description.replace(' ', "_")
            );
        }
    }
}

#[tokio::test]
async fn migrations_apply_once_and_restart_is_idempotent() {
    let mut daemon = TempDaemon::start(pid_binary()).await;
    let (client, _n) = daemon.client().await;
    let first = client
        .call::<DaemonStatus>(&DaemonStatusParams {})
        .await
        .unwrap();
    drop(client);
    daemon.signal(rustix::process::Signal::TERM);
    daemon.wait_exit(std::time::Duration::from_secs(5)).await;

    daemon.restart().await;
    let (client, _n) = daemon.client().await;
    let second = client
        .call::<DaemonStatus>(&DaemonStatusParams {})
        .await
        .unwrap();
    assert_eq!(
        second.database_schema_version,
        first.database_schema_version
    );
    drop(client);
    daemon.signal(rustix::process::Signal::TERM);
    daemon.wait_exit(std::time::Duration::from_secs(5)).await;

    // Opening the file again applies nothing and sees both daemons' starts.
    let store = Store::open(&daemon.paths.database_path()).await.unwrap();
    assert_eq!(
        store.applied_migration_count().await.unwrap(),
        MIGRATOR.iter().count() as i64
    );
    assert_eq!(store.start_count().await.unwrap(), 3);
}
