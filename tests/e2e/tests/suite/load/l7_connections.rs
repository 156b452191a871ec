//! L7: floods of connections from outside. Another local user holding a thousand half-open
//! handshakes on the WebSocket port, two thousand Unix connections that never initialize,
//! twenty thousand refused upgrades, and connections that each send one 10 MB message: the
//! owner is never locked out, nothing stays open past its deadline, the log stays small and
//! counts everything (an autostarted daemon's own log file is rotated at its limit), and the
//! memory comes back.

use std::time::Duration;

use pi_protocol::v1::{DaemonStatus, DaemonStatusParams};
use pi_test_support::daemon::TempDaemon;
use pi_test_support::{procfs, workspace_binary};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::{TcpStream, UnixStream};

use super::WAIT;

/// File descriptors the daemon has open.
fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

/// Polls `condition` until it holds; panics with `what` after [`WAIT`].
async fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !condition() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        // Polling a condition the daemon offers no event for.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `pictl daemon status` as the owner; panics unless it answers.
async fn pictl_status(daemon: &TempDaemon) {
    let output = tokio::time::timeout(
        Duration::from_secs(20),
        tokio::process::Command::new(workspace_binary("pictl"))
            .args(["daemon", "status"])
            .env("PI_HOME", daemon.home.path())
            .output(),
    )
    .await
    .expect("pictl daemon status answers within 20 s")
    .unwrap();
    assert!(
        output.status.success(),
        "pictl daemon status failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn ws_port(daemon: &TempDaemon) -> u16 {
    std::fs::read_to_string(daemon.paths.ws_port_path())
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// As user `nobody`: opens `count` connections to the WebSocket port, every second one with
/// half a request head, reports, reads the answer of the last one, and holds them all until
/// its stdin closes.
const FLOOD: &str = r#"
ulimit -n 4096
# A refused connection is closed at once: writing to it fails, which must not end the flood.
trap '' PIPE
port=$1; count=$2; last=
for ((i = 0; i < count; i++)); do
    exec {fd}<>"/dev/tcp/127.0.0.1/$port" || { echo "connect $i failed"; exit 1; }
    if ((i % 2)); then printf 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n' >&"$fd" 2>/dev/null; fi
    last=$fd
done
echo "opened $count"
IFS= read -r -t 10 answer <&"$last"
echo "last: ${answer%$'\r'}"
read -r _
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_users_half_open_handshakes_never_lock_the_owner_out() {
    let daemon = TempDaemon::start_with_config(
        &workspace_binary("pid"),
        "[limits]\npending_connections = 64\ninitialize_timeout_secs = 5\n",
    )
    .await;
    let pid = daemon.pid();
    let baseline = open_fds(pid);

    let mut flood = tokio::process::Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "bash",
            "-c",
            FLOOD,
            "flood",
        ])
        .arg(ws_port(&daemon).to_string())
        // Odd, so the last connection sent nothing: its answer is not lost to a reset.
        .arg("1101")
        .current_dir("/")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("setpriv runs bash as nobody");
    let mut lines = BufReader::new(flood.stdout.take().unwrap()).lines();
    let mut errors = flood.stderr.take().unwrap();
    for expected in [
        "opened 1101",
        // Connections over the cap are refused at once, with a reason.
        "last: HTTP/1.1 503 Service Unavailable",
    ] {
        let line = tokio::time::timeout(WAIT, lines.next_line())
            .await
            .expect("the flood reports")
            .unwrap();
        if line.is_none() {
            let mut stderr = String::new();
            errors.read_to_string(&mut stderr).await.unwrap();
            panic!("the flood ended: {stderr}");
        }
        assert_eq!(line.as_deref(), Some(expected));
    }

    // The owner is served while the flood holds its connections, and the daemon holds no more
    // of them than the cap.
    pictl_status(&daemon).await;
    let during = open_fds(pid);
    assert!(
        during <= baseline + 64 + 8,
        "{during} descriptors open during the flood, {baseline} before"
    );

    // Past the deadline, the daemon has closed every one of them, though the flood still holds
    // its ends.
    wait_until("the half-open handshakes to be closed", || {
        open_fds(pid) <= baseline + 2
    })
    .await;
    pictl_status(&daemon).await;
    drop(flood);

    // The log says so in a few lines, not one per connection.
    let log = daemon.stderr();
    let refused = log
        .matches("refusing a connection: too many connections are waiting to initialize")
        .count();
    let timed_out = log
        .matches("closing an HTTP connection that did not finish its upgrade in time")
        .count();
    assert_eq!((refused, timed_out), (1, 1), "{log}");
}

/// Connects to the socket, retrying while its backlog is full.
async fn connect(path: &std::path::Path) -> UnixStream {
    loop {
        match UnixStream::connect(path).await {
            Ok(stream) => return stream,
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                tokio::task::yield_now().await;
            }
            Err(error) => panic!("cannot connect: {error}"),
        }
    }
}

/// Reads JSON lines until the end of the stream.
async fn read_to_end(stream: UnixStream) -> Vec<Value> {
    let mut lines = BufReader::new(stream).lines();
    let mut messages = Vec::new();
    loop {
        let line = tokio::time::timeout(WAIT, lines.next_line())
            .await
            .expect("the daemon answers or closes")
            .unwrap();
        match line {
            Some(line) => messages.push(serde_json::from_str(&line).unwrap()),
            None => return messages,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unix_connections_that_never_initialize_are_closed_at_their_deadline() {
    let daemon = TempDaemon::start_with_config(
        &workspace_binary("pid"),
        "[limits]\npending_connections = 64\ninitialize_timeout_secs = 5\n",
    )
    .await;
    let pid = daemon.pid();
    let (bystander, _notifications) = daemon.client().await;
    let baseline = open_fds(pid);
    let socket = daemon.paths.socket_path();

    let mut silent = Vec::new();
    for _ in 0..2000 {
        silent.push(connect(&socket).await);
    }
    // Initialized connections keep working: they hold none of the room the flood took.
    bystander
        .call::<DaemonStatus>(&DaemonStatusParams {})
        .await
        .unwrap();
    let during = open_fds(pid);
    assert!(
        during <= baseline + 64 + 8,
        "{during} descriptors open during the flood, {baseline} before"
    );

    // Over the cap: one error line at once, then the end.
    let last = silent.pop().unwrap();
    let messages = read_to_end(last).await;
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert_eq!(messages[0]["id"], Value::Null);
    assert_eq!(messages[0]["error"]["data"]["kind"], "overloaded");
    assert_eq!(
        messages[0]["error"]["message"],
        "too many connections to the daemon are waiting to initialize (64 on the Unix socket); \
         it refuses new ones until some finish or time out, so try again in a moment"
    );

    // Admitted, silent: at the deadline an error, the closing notice, then the end.
    let first = silent.remove(0);
    let messages = read_to_end(first).await;
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert_eq!(messages[0]["id"], Value::Null);
    assert_eq!(messages[0]["error"]["data"]["kind"], "not_initialized");
    assert_eq!(
        messages[0]["error"]["message"],
        "no successful `initialize` within 5 s of connecting, so the daemon closes the \
         connection; send `initialize` as the first request"
    );
    assert_eq!(messages[1]["method"], "connection/closing");
    assert_eq!(messages[1]["params"]["reason"], "initialize_timeout");

    wait_until("the silent connections to be closed", || {
        open_fds(pid) <= baseline + 2
    })
    .await;
    drop(silent);
    // A new client gets in again.
    let (client, _notifications) = daemon.client().await;
    client
        .call::<DaemonStatus>(&DaemonStatusParams {})
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_refused_as_overloaded_tries_again_and_gets_in() {
    let daemon = TempDaemon::start_with_config(
        &workspace_binary("pid"),
        "[limits]\npending_connections = 1\ninitialize_timeout_secs = 2\n",
    )
    .await;
    // The one slot for connections still initializing, taken and held until its deadline.
    let silent = connect(&daemon.paths.socket_path()).await;
    let connecting = tokio::spawn({
        let socket = daemon.paths.socket_path();
        async move {
            pi_client::Client::connect(
                &pi_client::Endpoint::Unix(socket),
                pi_client::client_info("pi-test", "0"),
                pi_protocol::v1::ClientCapabilities::default(),
            )
            .await
        }
    });
    // Refused at first (the daemon logs it), the client is in once the silent one is gone.
    wait_until("the daemon to refuse the client", || {
        daemon
            .stderr()
            .contains("refusing a connection: too many connections are waiting to initialize")
    })
    .await;
    let (client, _notifications) = tokio::time::timeout(WAIT, connecting)
        .await
        .expect("the client gets in after the silent connection's deadline")
        .unwrap()
        .unwrap();
    client
        .call::<DaemonStatus>(&DaemonStatusParams {})
        .await
        .unwrap();
    let messages = read_to_end(silent).await;
    assert_eq!(messages[1]["params"]["reason"], "initialize_timeout");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pictl_refused_as_overloaded_answers_once_in_without_a_panic() {
    let daemon = TempDaemon::start_with_config(
        &workspace_binary("pid"),
        "[limits]\npending_connections = 1\ninitialize_timeout_secs = 2\n",
    )
    .await;
    let silent = connect(&daemon.paths.socket_path()).await;
    // The daemon closes each refused connection while the client may still be writing its
    // `initialize`: the client must take that as a refusal, not crash on it.
    let output = tokio::time::timeout(
        WAIT,
        tokio::process::Command::new(workspace_binary("pictl"))
            .args(["daemon", "status"])
            .envs(daemon.env())
            .env("RUST_BACKTRACE", "0")
            .output(),
    )
    .await
    .expect("pictl answers once the silent connection's deadline passed")
    .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let status: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(status["running"], true, "{status}");
    drop(silent);
}

/// One HTTP request on a new connection; the whole answer.
async fn http(port: u16, request: &str) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    tokio::time::timeout(WAIT, stream.read_to_string(&mut answer))
        .await
        .expect("the daemon answers")
        .unwrap();
    answer
}

/// The sum of the `suppressed=N` fields of the lines of `log` that contain `message`.
fn suppressed(log: &str, message: &str) -> u64 {
    log.lines()
        .filter(|line| line.contains(message))
        .filter_map(|line| {
            let rest = line.split("suppressed=").nth(1)?;
            rest.split_whitespace().next()?.parse::<u64>().ok()
        })
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_thousand_refused_upgrades_leave_a_few_log_lines_that_count_them_all() {
    let daemon = TempDaemon::start(&workspace_binary("pid")).await;
    let port = ws_port(&daemon);
    let before = daemon.stderr().len();
    let request = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: \
                   websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: \
                   dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n";
    let mut tasks = Vec::new();
    for _ in 0..16 {
        tasks.push(tokio::spawn(async move {
            for _ in 0..1250 {
                let answer = http(port, request).await;
                assert!(
                    answer.starts_with("HTTP/1.1 401 Unauthorized\r\n"),
                    "{answer}"
                );
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }

    // One detailed line, then counts once per interval: every refusal is in a line or a
    // count, and the log grew by a few hundred bytes, not by one line per refusal.
    wait_until("the refusals to be counted", || {
        let log = daemon.stderr();
        let detailed = log.matches("refusing a WebSocket upgrade").count() as u64;
        detailed + suppressed(&log, "refused more WebSocket upgrades") == 20_000
    })
    .await;
    let log = daemon.stderr();
    assert_eq!(
        log.matches("refusing a WebSocket upgrade").count(),
        1,
        "{log}"
    );
    let grown = log.len() - before;
    assert!(grown < 8 * 1024, "the log grew by {grown} bytes:\n{log}");
}

/// An initialized WebSocket connection.
async fn websocket(
    daemon: &TempDaemon,
) -> tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<TcpStream>> {
    use futures_util::{SinkExt as _, StreamExt as _};
    use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
    let token = std::fs::read_to_string(daemon.paths.ws_token_path()).unwrap();
    let mut request = format!("ws://127.0.0.1:{}/", ws_port(daemon))
        .into_client_request()
        .unwrap();
    request.headers_mut().insert(
        "authorization",
        format!("Bearer {}", token.trim()).parse().unwrap(),
    );
    let (mut socket, _) = tokio_tungstenite::connect_async(request).await.unwrap();
    socket
        .send(tokio_tungstenite::tungstenite::Message::text(initialize()))
        .await
        .unwrap();
    let answer = socket.next().await.unwrap().unwrap();
    assert!(answer.to_text().unwrap().contains("\"result\""), "{answer}");
    socket
}

fn initialize() -> String {
    serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": pi_protocol::PROTOCOL_VERSION,
                   "clientInfo": {"name": "big", "version": "0"}}
    })
    .to_string()
}

/// A 10 MB request (`daemon/status` with a padding parameter).
fn big_request() -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"daemon/status","params":{{"pad":"{}"}}}}"#,
        "x".repeat(10 * 1024 * 1024)
    )
}

/// Sends the 10 MB request on a new, initialized Unix connection and reads the answer.
async fn big_on_unix(daemon: &TempDaemon, big: &str) -> pi_test_support::raw::RawConnection {
    let mut raw =
        pi_test_support::raw::RawConnection::initialized(&daemon.paths.socket_path()).await;
    raw.send_bytes(format!("{big}\n").as_bytes()).await;
    let answer = raw.read().await.unwrap();
    assert!(answer.get("result").is_some(), "{answer}");
    raw
}

/// Sends the 10 MB request on a new, initialized WebSocket connection and reads the answer.
async fn big_on_websocket(
    daemon: &TempDaemon,
    big: &str,
) -> tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<TcpStream>> {
    use futures_util::{SinkExt as _, StreamExt as _};
    let mut socket = websocket(daemon).await;
    socket
        .send(tokio_tungstenite::tungstenite::Message::text(big))
        .await
        .unwrap();
    let answer = socket.next().await.unwrap().unwrap();
    assert!(answer.to_text().unwrap().contains("\"result\""), "{answer}");
    socket
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_give_a_big_messages_memory_back() {
    let daemon = TempDaemon::start(&workspace_binary("pid")).await;
    let pid = daemon.pid();
    let big = big_request();
    // Warm up on closed connections: the first big messages grow the allocator's free lists
    // (glibc keeps freed blocks of this size for reuse) once, whatever the connections do.
    for _ in 0..6 {
        drop(big_on_unix(&daemon, &big).await);
    }
    for _ in 0..2 {
        drop(big_on_websocket(&daemon, &big).await);
    }
    let baseline = procfs::status_value(pid, "VmRSS:");

    let mut unix = Vec::new();
    let mut web = Vec::new();
    for _ in 0..20 {
        unix.push(big_on_unix(&daemon, &big).await);
        web.push(big_on_websocket(&daemon, &big).await);
    }
    // Forty connections that each read 10 MB are all still open, and hold next to nothing of
    // it (a buffer that kept its largest message held 11–22 MB each: 440 MB or more).
    let after = procfs::status_value(pid, "VmRSS:");
    assert!(
        after < baseline + 32 * 1024,
        "RSS {after} KiB with forty connections open, {baseline} KiB before"
    );
    drop((unix, web));
}

/// A temporary `PI_HOME` whose daemon `pictl` autostarts; stopped when dropped.
struct AutostartHome {
    dir: tempfile::TempDir,
}

impl AutostartHome {
    fn pictl(&self, args: &[&str]) -> std::process::Command {
        let mut command = std::process::Command::new(workspace_binary("pictl"));
        command
            .args(args)
            .env("PI_HOME", self.dir.path())
            .env("PI_DAEMON_BIN", workspace_binary("pid"))
            .env("PI_LOG", "debug");
        command
    }
}

impl Drop for AutostartHome {
    fn drop(&mut self) {
        let _ = self.pictl(&["daemon", "stop", "--timeout", "5"]).output();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_autostarted_daemon_rotates_its_log_and_keeps_it_small() {
    use std::os::unix::fs::PermissionsExt as _;
    let home = AutostartHome {
        dir: tempfile::Builder::new()
            .prefix("pi-test-")
            .tempdir()
            .unwrap(),
    };
    let paths = pi_test_support::daemon::paths_for(home.dir.path());
    std::fs::create_dir_all(&paths.config_dir).unwrap();
    std::fs::write(paths.config_file(), "[log]\nmax_bytes = 65536\n").unwrap();
    let started = home.pictl(&["daemon", "start"]).output().unwrap();
    assert!(started.status.success(), "{started:?}");
    let log = paths.log_file();
    let rotated = log.with_extension("log.1");

    // Debug logging, a few lines per connection, and a flood of refused upgrades: megabytes of
    // log in all.
    let port: u16 = std::fs::read_to_string(paths.ws_port_path())
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let refusals = tokio::spawn(async move {
        for _ in 0..5000 {
            let answer = http(port, "GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n").await;
            assert!(answer.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{answer}");
        }
    });
    for _ in 0..2000 {
        pi_test_support::raw::RawConnection::initialized(&paths.socket_path())
            .await
            .close()
            .await;
    }
    refusals.await.unwrap();

    // The daemon goes on logging into the new file.
    let mut last = pi_test_support::raw::RawConnection::connect(&paths.socket_path()).await;
    let answer = last
        .request(serde_json::json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": pi_protocol::PROTOCOL_VERSION,
                       "clientInfo": {"name": "after-the-flood", "version": "0"}}
        }))
        .await;
    assert!(answer.get("result").is_some(), "{answer}");
    wait_until("the last connection in the log", || {
        std::fs::read_to_string(&log).is_ok_and(|text| text.contains("after-the-flood"))
    })
    .await;

    // Two files of at most the limit (plus the line that crossed it), private, and no third.
    for path in [&log, &rotated] {
        let metadata = std::fs::metadata(path).unwrap();
        assert!(
            metadata.len() <= 65536 + 4096,
            "{} holds {} bytes",
            path.display(),
            metadata.len()
        );
        assert_eq!(
            metadata.permissions().mode() & 0o777,
            0o600,
            "{}",
            path.display()
        );
    }
    let files: Vec<String> = std::fs::read_dir(&paths.state_dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("pid.log"))
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accepts_out_of_descriptors_back_off_and_recover() {
    use rustix::process::{Pid, Resource, Rlimit, prlimit};
    let daemon = TempDaemon::start(&workspace_binary("pid")).await;
    // Down to 128 descriptors, soft and hard: the daemon cannot raise it again.
    prlimit(
        Pid::from_raw(daemon.pid() as i32),
        Resource::Nofile,
        Rlimit {
            current: Some(128),
            maximum: Some(128),
        },
    )
    .unwrap();
    let (bystander, _notifications) = daemon.client().await;

    // More connections than the daemon has descriptors for: its accepts fail until some close.
    let socket = daemon.paths.socket_path();
    let mut flood = Vec::new();
    for _ in 0..300 {
        flood.push(connect(&socket).await);
    }
    wait_until("accepts to fail", || {
        daemon.stderr().contains("Too many open files")
    })
    .await;
    // An initialized client is still served.
    bystander
        .call::<DaemonStatus>(&DaemonStatusParams {})
        .await
        .unwrap();

    // Once the flood is gone, new clients get in again.
    drop(flood);
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let attempt = tokio::time::timeout(
            Duration::from_secs(5),
            pi_client::Client::connect(
                &pi_client::Endpoint::Unix(socket.clone()),
                pi_client::client_info("after", "0"),
                pi_protocol::v1::ClientCapabilities::default(),
            ),
        )
        .await;
        if let Ok(Ok((client, _notifications))) = attempt {
            client
                .call::<DaemonStatus>(&DaemonStatusParams {})
                .await
                .unwrap();
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no new client got in after the flood: {attempt:?}"
        );
    }
    // The failed accepts took one log line (then counts once per interval), not one per try.
    let log = daemon.stderr();
    assert_eq!(log.matches("accept failed").count(), 1, "{log}");
}
