//! `pictl daemon start|stop|restart|status` and `pictl --version`.

use super::Home;

#[test]
fn status_without_a_daemon_exits_3_and_does_not_start_one() {
    let home = Home::new();
    let (code, status) = home.pictl_json(&["daemon", "status"]);
    assert_eq!(code, Some(3));
    assert_eq!(status["running"], false);
    assert!(
        status["socketPath"]
            .as_str()
            .unwrap()
            .ends_with("run/pid.sock")
    );
    assert!(
        !home.path().join("run/pid.sock").exists(),
        "status must not autostart"
    );
    assert!(
        !home.path().join("run/pid.lock").exists(),
        "status must not autostart"
    );
}

#[test]
fn start_twice_gives_one_daemon_and_stop_ends_it() {
    let home = Home::new();
    let (code, first) = home.pictl_json(&["daemon", "start"]);
    assert_eq!(code, Some(0));
    assert_eq!(first["running"], true);
    assert_eq!(first["started"], true);
    assert_eq!(first["supervisor"], "client");
    let pid = first["pid"].as_u64().unwrap();

    let (code, second) = home.pictl_json(&["daemon", "start"]);
    assert_eq!(code, Some(0));
    assert_eq!(second["started"], false);
    assert_eq!(second["pid"].as_u64(), Some(pid), "one daemon");

    let (code, status) = home.pictl_json(&["daemon", "status"]);
    assert_eq!(code, Some(0));
    assert_eq!(status["pid"].as_u64(), Some(pid));
    assert_eq!(status["protocolVersion"], pi_protocol::PROTOCOL_VERSION);
    assert_eq!(status["pools"]["kernelsLimit"], 4);

    // The pools, empty.
    let (code, jobs) = home.pictl_json(&["jobs", "--json"]);
    assert_eq!((code, jobs), (Some(0), serde_json::json!({"jobs": []})));
    let (code, kernels) = home.pictl_json(&["kernels", "--json"]);
    assert_eq!(
        (code, kernels),
        (Some(0), serde_json::json!({"kernels": [], "limit": 4}))
    );
    let output = home.pictl(&["jobs", "--kill", "job-nope"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "pictl: error: no job job-nope; `pictl jobs` lists them\n"
    );

    let (code, stopped) = home.pictl_json(&["daemon", "stop"]);
    assert_eq!(code, Some(0));
    assert_eq!(stopped["stopped"], true);
    assert_eq!(stopped["forced"], false);
    assert_eq!(stopped["pid"].as_u64(), Some(pid));
    assert!(!home.path().join("run/pid.sock").exists());
    let (code, status) = home.pictl_json(&["daemon", "status"]);
    assert_eq!(
        (code, status["running"].clone()),
        (Some(3), serde_json::json!(false))
    );

    // The autostarted daemon logged to its file.
    let log = std::fs::read_to_string(home.path().join("state/pid.log")).unwrap();
    assert!(log.contains("pid ready"), "{log}");
}

#[test]
fn stop_without_a_daemon_is_a_no_op() {
    let home = Home::new();
    let (code, stopped) = home.pictl_json(&["daemon", "stop"]);
    assert_eq!(code, Some(0));
    assert_eq!(
        stopped,
        serde_json::json!({"running": false, "stopped": false})
    );
}

#[test]
fn restart_replaces_the_daemon() {
    let home = Home::new();
    let (_, first) = home.pictl_json(&["daemon", "start"]);
    let (code, restarted) = home.pictl_json(&["daemon", "restart"]);
    assert_eq!(code, Some(0));
    assert_eq!(restarted["restarted"], true);
    assert_eq!(restarted["previousPid"], first["pid"]);
    assert_ne!(restarted["pid"], first["pid"]);
    let (_, status) = home.pictl_json(&["daemon", "status"]);
    assert_eq!(status["pid"], restarted["pid"]);
}

#[test]
fn start_reports_a_daemon_that_cannot_start() {
    let home = Home::new();
    std::fs::create_dir_all(home.path().join("config")).unwrap();
    std::fs::write(home.path().join("config/config.toml"), "bogus = true\n").unwrap();
    let output = home.pictl(&["daemon", "start"]);
    assert_eq!(output.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("the daemon exited during startup"),
        "{stderr}"
    );
    assert!(stderr.contains("unknown field `bogus`"), "{stderr}");
}

#[test]
fn version_and_usage() {
    let home = Home::new();
    let output = home.pictl(&["--version"]);
    assert!(output.status.success());
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        format!("pictl {}", env!("CARGO_PKG_VERSION"))
    );
    let output = home.pictl(&["daemon", "frobnicate"]);
    assert_eq!(output.status.code(), Some(2), "usage errors exit 2");
}
