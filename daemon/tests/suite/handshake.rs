//! The `initialize` handshake and `daemon/status` over the Unix socket.

use std::os::unix::fs::PermissionsExt as _;

use pi_protocol::ErrorKind;
use pi_protocol::v1::{DaemonStatus, DaemonStatusParams, Supervisor};
use pi_test_support::daemon::TempDaemon;

use super::pid_binary;

#[tokio::test]
async fn handshake_over_uds_reports_versions_and_methods() {
    let daemon = TempDaemon::start(pid_binary()).await;
    let (client, _notifications) = daemon.client().await;
    let init = client.initialize_response();
    assert_eq!(init.protocol_version, pi_protocol::PROTOCOL_VERSION);
    assert_eq!(init.daemon_version, env!("CARGO_PKG_VERSION"));
    assert!(
        init.connection_id.starts_with('c'),
        "{}",
        init.connection_id
    );
    for method in pi_protocol::v1::METHODS {
        assert!(
            init.capabilities.methods.iter().any(|m| m == method.name),
            "{} not advertised",
            method.name
        );
    }
    assert!(
        init.capabilities
            .notifications
            .iter()
            .any(|n| n == "connection/closing")
    );
}

#[tokio::test]
async fn status_reports_process_endpoints_and_counters() {
    let daemon = TempDaemon::start(pid_binary()).await;
    let (client, _notifications) = daemon.client().await;
    let (_second, _second_notifications) = daemon.client().await;
    let status = client
        .call::<DaemonStatus>(&DaemonStatusParams {})
        .await
        .unwrap();

    assert_eq!(status.version, env!("CARGO_PKG_VERSION"));
    assert_eq!(status.protocol_version, pi_protocol::PROTOCOL_VERSION);
    assert_eq!(status.pid, daemon.pid());
    assert!(
        status.started_at > 1_700_000_000_000,
        "started_at is Unix ms: {}",
        status.started_at
    );
    assert_eq!(status.supervisor, Supervisor::Manual);
    assert_eq!(
        status.socket_path,
        daemon.paths.socket_path().display().to_string()
    );
    let port: u16 = std::fs::read_to_string(daemon.paths.ws_port_path())
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(
        status.websocket_url.as_deref(),
        Some(format!("ws://127.0.0.1:{port}/").as_str())
    );
    assert_eq!(status.connections, 2);
    assert_eq!(status.sessions.loaded, 0);
    let newest_migration = pi_daemon::store::MIGRATOR
        .iter()
        .map(|m| m.version)
        .max()
        .unwrap();
    assert_eq!(status.database_schema_version, newest_migration);
    assert_eq!(
        status.database_path,
        daemon.paths.database_path().display().to_string()
    );
    assert_eq!(status.data_dir, daemon.paths.data_dir.display().to_string());
    assert_eq!(
        status.config_dir,
        daemon.paths.config_dir.display().to_string()
    );
}

#[tokio::test]
async fn socket_is_0600_in_a_0700_directory() {
    let daemon = TempDaemon::start(pid_binary()).await;
    let mode =
        |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&daemon.paths.socket_path()), 0o600);
    assert_eq!(mode(&daemon.paths.runtime_dir), 0o700);
    assert_eq!(mode(&daemon.paths.ws_token_path()), 0o600);
}

#[tokio::test]
async fn the_daemons_directories_are_private() {
    // The fixture created the config directory with the default mode; the daemon tightens it.
    let daemon = TempDaemon::start(pid_binary()).await;
    let paths = &daemon.paths;
    for dir in [
        &paths.config_dir,
        &paths.data_dir,
        &paths.state_dir,
        &paths.runtime_dir,
    ] {
        let mode = std::fs::metadata(dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{}", dir.display());
    }
    assert!(
        daemon.stderr().contains("made a directory private (0700)"),
        "{}",
        daemon.stderr()
    );
}

#[tokio::test]
async fn every_advertised_method_is_dispatched() {
    let daemon = TempDaemon::start(pid_binary()).await;
    let (client, _notifications) = daemon.client().await;
    for method in &client.initialize_response().capabilities.methods {
        if method == "daemon/shutdown" {
            continue; // Exercised by the lifecycle tests; it would end this daemon.
        }
        let outcome = client.call_raw(method, serde_json::json!({})).await;
        if let Err(error) = outcome {
            assert_ne!(
                error.rpc_kind(),
                Some(ErrorKind::MethodNotFound),
                "{method} is advertised but not served"
            );
        }
    }
}
