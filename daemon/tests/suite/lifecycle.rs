//! One daemon per home, graceful shutdown on signals and request, stale socket cleanup.

use std::time::Duration;

use pi_protocol::v1::{DaemonShutdown, DaemonShutdownParams, DaemonStatus, DaemonStatusParams};
use pi_test_support::daemon::TempDaemon;
use rustix::process::Signal;

use super::pid_binary;

const GRACE: Duration = Duration::from_secs(5);

#[tokio::test]
async fn a_second_daemon_is_refused_with_the_first_ones_pid() {
    let daemon = TempDaemon::start(pid_binary()).await;
    let output = daemon.spawn_second().output().await.unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "another pid is already running for this user (pid {})",
            daemon.pid()
        )),
        "{stderr}"
    );
    assert!(stderr.contains("pictl daemon stop"), "{stderr}");
    // The first one is unaffected.
    let (client, _n) = daemon.client().await;
    client
        .call::<DaemonStatus>(&DaemonStatusParams {})
        .await
        .unwrap();
}

async fn check_graceful_exit(signal: Option<Signal>) {
    let mut daemon = TempDaemon::start(pid_binary()).await;
    let (client, mut notifications) = daemon.client().await;
    match signal {
        Some(signal) => daemon.signal(signal),
        None => {
            let response = client
                .call::<DaemonShutdown>(&DaemonShutdownParams {})
                .await
                .unwrap();
            assert_eq!(response.pid, daemon.pid());
        }
    }
    let (status, took) = daemon.wait_exit(GRACE).await;
    assert_eq!(status.code(), Some(0), "stderr:\n{}", daemon.stderr());
    assert!(took < GRACE);
    assert!(!daemon.paths.socket_path().exists(), "socket removed");
    assert!(!daemon.paths.ws_port_path().exists(), "port file removed");
    // Connected clients were told why.
    let closing = notifications
        .next_of::<pi_protocol::v1::ConnectionClosing>()
        .await
        .unwrap()
        .unwrap();
    assert_eq!(closing.reason, pi_protocol::v1::CloseReason::Shutdown);
    assert_eq!(
        client.closed().await.as_deref(),
        Some("the daemon is shutting down")
    );
}

#[tokio::test]
async fn sigterm_exits_zero_and_removes_the_socket() {
    check_graceful_exit(Some(Signal::TERM)).await;
}

#[tokio::test]
async fn sigint_exits_zero_and_removes_the_socket() {
    check_graceful_exit(Some(Signal::INT)).await;
}

#[tokio::test]
async fn shutdown_request_exits_zero_and_removes_the_socket() {
    check_graceful_exit(None).await;
}

#[tokio::test]
async fn sighup_is_ignored() {
    let daemon = TempDaemon::start(pid_binary()).await;
    daemon.signal(Signal::HUP);
    let (client, _n) = daemon.client().await;
    let status = client
        .call::<DaemonStatus>(&DaemonStatusParams {})
        .await
        .unwrap();
    assert_eq!(status.pid, daemon.pid());
}

#[tokio::test]
async fn kill_9_leaves_a_stale_socket_that_the_next_start_cleans() {
    let mut daemon = TempDaemon::start(pid_binary()).await;
    let first_pid = daemon.pid();
    daemon.kill9().await;
    assert!(
        daemon.paths.socket_path().exists(),
        "a killed daemon cannot remove its socket"
    );
    daemon.restart().await;
    assert_ne!(daemon.pid(), first_pid);
    assert!(
        daemon.stderr().contains("removed a stale socket"),
        "{}",
        daemon.stderr()
    );
    let (client, _n) = daemon.client().await;
    let status = client
        .call::<DaemonStatus>(&DaemonStatusParams {})
        .await
        .unwrap();
    assert_eq!(status.pid, daemon.pid());
}

#[tokio::test]
async fn invalid_config_stops_the_start_with_file_and_key() {
    let home = tempfile::tempdir().unwrap();
    let paths = pi_test_support::daemon::paths_for(home.path());
    std::fs::create_dir_all(&paths.config_dir).unwrap();
    std::fs::write(paths.config_file(), "[websocket]\nprot = 1\n").unwrap();
    let output = tokio::process::Command::new(pid_binary())
        .env("PI_HOME", home.path())
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&paths.config_file().display().to_string()),
        "{stderr}"
    );
    assert!(stderr.contains("unknown field `prot`"), "{stderr}");
}

/// A damaged database stops the start with the file, the problem and what to do, and the
/// file is left as it was for recovery.
#[tokio::test]
async fn a_damaged_database_stops_the_start_and_says_how_to_recover() {
    let home = tempfile::tempdir().unwrap();
    let paths = pi_test_support::daemon::paths_for(home.path());
    let database = paths.database_path();
    std::fs::create_dir_all(database.parent().unwrap()).unwrap();
    let garbage = "not a database ".repeat(400);
    std::fs::write(&database, &garbage).unwrap();
    let output = tokio::process::Command::new(pid_binary())
        .env("PI_HOME", home.path())
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cannot open the database"), "{stderr}");
    assert!(
        stderr.contains(&format!("the database {} is damaged", database.display())),
        "{stderr}"
    );
    assert!(stderr.contains(".recover"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&database).unwrap(), garbage);
}

#[tokio::test]
async fn json_logs_when_asked() {
    let home = tempfile::tempdir().unwrap();
    let mut child = tokio::process::Command::new(pid_binary())
        .env("PI_HOME", home.path())
        .env("PI_LOG_FORMAT", "json")
        .env("PI_LOG", "info")
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    use tokio::io::AsyncBufReadExt as _;
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    // Every line up to "pid ready" (the open-files limit and the directories come first) is a
    // JSON record.
    loop {
        let line = tokio::time::timeout(GRACE, lines.next_line())
            .await
            .unwrap()
            .unwrap()
            .expect("the daemon logs until it is ready");
        let record: serde_json::Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert!(record["level"].is_string(), "{record}");
        if record["message"] == "pid ready" {
            assert_eq!(record["level"], "INFO");
            break;
        }
    }
    child.kill().await.unwrap();
}

#[tokio::test]
async fn another_users_connection_is_refused() {
    // Impersonating another uid needs root (CI runs as root). Without it, the refusal path
    // is still covered by `peer_allowed`'s unit test; here we assert what we can.
    if rustix::process::geteuid().as_raw() != 0 {
        assert!(!pi_daemon::rpc::uds::peer_allowed(
            0,
            rustix::process::geteuid().as_raw()
        ));
        return;
    }
    // Run the daemon as `nobody` in a home it owns; root then connects as a foreign uid.
    let nobody = 65534;
    let home = tempfile::tempdir().unwrap();
    rustix::fs::chown(
        home.path(),
        Some(rustix::fs::Uid::from_raw(nobody)),
        Some(rustix::fs::Gid::from_raw(nobody)),
    )
    .unwrap();
    // Run a copy inside that home: the checkout's own path may not be traversable by `nobody`
    // (a clone under a 0700 temp directory, say).
    let binary = home.path().join("pid");
    std::fs::copy(pid_binary(), &binary).unwrap();
    let mut child = tokio::process::Command::new(&binary)
        .env("PI_HOME", home.path())
        .uid(nobody)
        .gid(nobody)
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let socket = pi_test_support::daemon::paths_for(home.path()).socket_path();
    let deadline = std::time::Instant::now() + GRACE;
    while !socket.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "daemon as nobody did not start"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut raw = pi_test_support::raw::RawConnection::connect(&socket).await;
    let response = raw.read().await.expect("an explanation before the close");
    assert_eq!(response["error"]["data"]["kind"], "unauthorized");
    assert!(
        response["error"]["message"]
            .as_str()
            .unwrap()
            .contains("your uid 0 is not the daemon owner's uid 65534")
    );
    assert!(raw.read().await.is_none());
    child.kill().await.unwrap();
}

#[tokio::test]
async fn the_open_files_soft_limit_is_raised_to_the_hard_one() {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    // The daemon inherits this process's limits: start it with the common soft default.
    let ours = getrlimit(Resource::Nofile);
    let hard = ours.maximum.expect("a finite hard limit on open files");
    assert!(
        hard > 1024,
        "the test needs a hard limit above 1024, not {hard}"
    );
    setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(1024),
            maximum: Some(hard),
        },
    )
    .unwrap();
    let daemon = TempDaemon::start(pid_binary()).await;
    setrlimit(Resource::Nofile, ours).unwrap();

    let limits = std::fs::read_to_string(format!("/proc/{}/limits", daemon.pid())).unwrap();
    let fields: Vec<&str> = limits
        .lines()
        .find(|line| line.starts_with("Max open files"))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(
        fields[3..5],
        [hard.to_string(), hard.to_string()],
        "{limits}"
    );
    let log = daemon.stderr();
    let line = log
        .lines()
        .find(|line| line.contains("raised the open-files limit to the hard limit"))
        .unwrap_or_else(|| panic!("{log}"));
    assert!(
        line.contains(&format!("soft={hard} previous=1024 hard={hard}")),
        "{line}"
    );
}

#[tokio::test]
async fn a_log_file_that_cannot_be_opened_stops_the_start() {
    let home = tempfile::tempdir().unwrap();
    let log = home.path().join("missing/pid.log");
    let output = tokio::process::Command::new(pid_binary())
        .env("PI_HOME", home.path())
        .arg("--log-file")
        .arg(&log)
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!(
            "pid: error: cannot open the log file {}: No such file or directory (os error 2)\n",
            log.display()
        )
    );
}
