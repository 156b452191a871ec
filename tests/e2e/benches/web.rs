//! The web UI in real Chromium against a release `pid`: the size of the assets as served
//! (gzipped), the first meaningful paint of the session list (the first frame with sessions,
//! `performance.mark("pi:sessions-painted")`) on a cold cache right after the login and on
//! a reload, opening a 10,000-entry session, and scrolling it (the duration of every task of
//! the renderer's main thread in Chromium's performance trace, and the intervals between
//! frames). Targets: assets < 400 KB gzipped, first paint < 300 ms, < 16 ms per frame.
//!
//! Run: `cargo build --release --bins && cargo bench -p pi-e2e --bench web` (needs chromium
//! and playwright-core: `tests/install-peers`). Sizes: `PI_BENCH_SESSIONS` (200),
//! `PI_BENCH_ENTRIES` (10,000).

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "bench binary"
)]

use std::fmt::Write as _;
use std::path::Path;

use pi_protocol::v1::{SessionImport, SessionImportParams, WebLogin, WebLoginParams};
use pi_test_support::bench::{daemon_binary, env_number, median};
use pi_test_support::browser::Browser;
use pi_test_support::daemon::TempDaemon;
use serde_json::{Value, json};

const PAINT_RUNS: usize = 10;

/// A pi session file of `messages` alternating user and assistant messages (the assistant's
/// with markdown and, every fifth, a code block), in `cwd`.
fn session_file(path: &Path, id: &str, cwd: &str, messages: usize) {
    let mut text = String::new();
    let header = json!({"type": "session", "version": 3, "id": id,
                        "timestamp": "2026-11-01T10:00:00.000Z", "cwd": cwd});
    writeln!(text, "{header}").unwrap();
    let mut parent: Option<String> = None;
    for index in 0..messages {
        let entry_id = format!("{index:08x}");
        let timestamp = 1_793_000_000_000_i64 + index as i64 * 1000;
        let message = if index % 2 == 0 {
            json!({"role": "user", "content": [{"type": "text",
                   "text": format!("Question {index}: what does the function on line {} do?", index * 3)}],
                   "timestamp": timestamp})
        } else {
            let mut body = format!(
                "Answer {index}. The function **parses** the input, checks each `field`, and \
                 returns the first error it finds.\n\n- it reads the header\n- it walks the \
                 entries\n- it stops at the first bad one\n"
            );
            if index % 5 == 1 {
                body.push_str(
                    "\n```rust\nfn check(entries: &[Entry]) -> Result<(), Error> {\n    for entry in entries {\n        entry.validate()?;\n    }\n    Ok(())\n}\n```\n",
                );
            }
            json!({"role": "assistant", "content": [{"type": "text", "text": body}],
                   "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                   "usage": {"input": 1000, "output": 200, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1200,
                             "cost": {"input": 0.003, "output": 0.003, "cacheRead": 0, "cacheWrite": 0, "total": 0.006}},
                   "stopReason": "stop", "timestamp": timestamp})
        };
        let line = json!({"type": "message", "id": entry_id, "parentId": parent,
                          "timestamp": "2026-11-01T10:00:00.000Z", "message": message});
        writeln!(text, "{line}").unwrap();
        parent = Some(entry_id);
    }
    std::fs::write(path, text).unwrap();
}

/// One raw HTTP GET on the daemon's port; the status line, headers and body length.
async fn get(port: u16, path: &str, headers: &str) -> (String, usize) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{headers}\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let split = answer
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .unwrap();
    (
        String::from_utf8_lossy(&answer[..split]).into_owned(),
        answer.len() - split - 4,
    )
}

async fn login(client: &pi_client::Client) -> String {
    client
        .call::<WebLogin>(&WebLoginParams {})
        .await
        .unwrap()
        .url
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

#[tokio::main]
async fn main() {
    let sessions = env_number("PI_BENCH_SESSIONS").unwrap_or(200);
    let entries = env_number("PI_BENCH_ENTRIES").unwrap_or(10_000);
    let daemon = TempDaemon::start(&daemon_binary()).await;
    let (client, _events) = daemon.client().await;
    let files = daemon.home.path().join("sessions");
    std::fs::create_dir_all(&files).unwrap();
    for index in 0..sessions {
        let path = files.join(format!("s{index}.jsonl"));
        session_file(
            &path,
            &format!("3f0c6a2e-0000-4000-8000-{index:012x}"),
            &format!("/srv/project-{}", index % 10),
            4,
        );
        client
            .call::<SessionImport>(&SessionImportParams {
                path: path.display().to_string(),
                link: false,
            })
            .await
            .unwrap();
    }
    let big_path = files.join("big.jsonl");
    session_file(
        &big_path,
        "3f0c6a2e-0000-4000-8000-ffffffffffff",
        "/srv/big",
        entries,
    );
    let big = client
        .call::<SessionImport>(&SessionImportParams {
            path: big_path.display().to_string(),
            link: false,
        })
        .await
        .unwrap();

    // The assets as a browser gets them.
    let url = login(&client).await;
    let port: u16 = url
        .trim_start_matches("http://127.0.0.1:")
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let (head, _) = get(port, &url[url.find("/login").unwrap()..], "").await;
    let cookie = head
        .lines()
        .find_map(|line| line.strip_prefix("set-cookie: "))
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let home = head
        .lines()
        .find_map(|line| line.strip_prefix("refresh: 0; url="))
        .unwrap()
        .to_owned();
    let mut assets = Vec::new();
    for file in ["", "assets/app.js", "assets/render.js", "assets/app.css"] {
        let path = format!("{home}{file}");
        let path = path.as_str();
        let (head, gzipped) = get(
            port,
            path,
            &format!("Cookie: {cookie}\r\nAccept-Encoding: gzip\r\n"),
        )
        .await;
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        let (_, plain) = get(port, path, &format!("Cookie: {cookie}\r\n")).await;
        assets.push((path.to_owned(), plain, gzipped));
    }
    let total_gzipped: usize = assets.iter().map(|(_, _, gzipped)| gzipped).sum();

    // First meaningful paint of the session list.
    let mut browser = Browser::start().await;
    let mark = "() => { const m = performance.getEntriesByName('pi:sessions-painted')[0]; \
                const p = performance.getEntriesByName('first-contentful-paint')[0]; \
                return m && { sessions: m.startTime, fcp: p ? p.startTime : null }; }";
    let mut cold = Vec::new();
    let mut cold_fcp = Vec::new();
    for run in 0..PAINT_RUNS {
        // A new browser profile: an empty cache and no cookie; the login page loads `/`.
        let page = browser.new_page(run as u64 + 1).await;
        browser.goto(page, &login(&client).await).await;
        let painted = browser.wait_until(page, mark, Value::Null).await;
        cold.push(painted["sessions"].as_f64().unwrap());
        cold_fcp.push(painted["fcp"].as_f64().unwrap_or(f64::NAN));
        browser.op("close", json!({ "page": page.0 })).await;
    }
    let page = browser.new_page(100).await;
    browser.goto(page, &login(&client).await).await;
    browser.wait_until(page, mark, Value::Null).await;
    let mut warm = Vec::new();
    for _ in 0..PAINT_RUNS {
        browser.op("reload", json!({ "page": page.0 })).await;
        let painted = browser.wait_until(page, mark, Value::Null).await;
        warm.push(painted["sessions"].as_f64().unwrap());
    }
    let listed = browser.count(page, "[data-testid=session-item]").await;

    // Opening the big session, to its last message.
    let last_text = format!("Answer {}.", entries - 1);
    let opened = browser
        .wait_until(
            page,
            "async ({ id, text }) => { const t0 = performance.now(); location.hash = '#/s/' + id; \
             await new Promise((resolve) => { const check = () => { \
               if ([...document.querySelectorAll('[data-testid=entry]')].some((e) => e.innerText.includes(text))) resolve(); \
               else requestAnimationFrame(check); }; check(); }); \
             return performance.now() - t0; }",
            json!({ "id": big.id, "text": last_text }),
        )
        .await
        .as_f64()
        .unwrap();
    let rendered = browser.count(page, "[data-testid=entry]").await;

    // Scrolling it: up from the bottom, then down again.
    let mut tasks = Vec::new();
    let mut intervals = Vec::new();
    for step in [-150, 150] {
        let trace = browser
            .op(
                "scrollTrace",
                json!({ "page": page.0, "selector": "[data-testid=transcript]", "step": step, "frames": 300 }),
            )
            .await;
        tasks.extend(
            trace["tasks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|ms| ms.as_f64().unwrap()),
        );
        intervals.extend(
            trace["intervals"]
                .as_array()
                .unwrap()
                .iter()
                .map(|ms| ms.as_f64().unwrap()),
        );
    }
    browser.close().await;
    tasks.sort_by(f64::total_cmp);
    intervals.sort_by(f64::total_cmp);

    println!(
        "web UI (release pid, Chromium headless, {sessions} sessions, {entries}-entry session)"
    );
    for (path, plain, gzipped) in &assets {
        let name = if path.ends_with('/') {
            "index.html"
        } else {
            path.rsplit('/').next().unwrap()
        };
        println!("  asset {name:<16} {plain:>8} B, {gzipped:>7} B gzipped");
    }
    println!(
        "  assets total           {:>8} B gzipped (target < 400 KB)",
        total_gzipped
    );
    println!(
        "  first paint, cold      {:>8.1} ms median (first contentful paint {:.1} ms; target < 300 ms)",
        median(&mut cold),
        median(&mut cold_fcp)
    );
    println!(
        "  first paint, reload    {:>8.1} ms median ({listed} sessions listed)",
        median(&mut warm)
    );
    println!(
        "  open the big session   {opened:>8.1} ms to its last message ({rendered} rows in the DOM)"
    );
    println!(
        "  scroll, main thread    {:>8.2} ms p50, {:.2} ms p99, {:.2} ms max per task ({} tasks; target < 16 ms)",
        percentile(&tasks, 0.5),
        percentile(&tasks, 0.99),
        tasks.last().copied().unwrap_or_default(),
        tasks.len()
    );
    println!(
        "  scroll, frame interval {:>8.2} ms p50, {:.2} ms p95, {:.2} ms max ({} frames, {} longer than 20 ms: frames missed)",
        percentile(&intervals, 0.5),
        percentile(&intervals, 0.95),
        intervals.last().copied().unwrap_or_default(),
        intervals.len(),
        intervals.iter().filter(|ms| **ms > 20.0).count()
    );
}
