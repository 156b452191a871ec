//! The web UI in real Chromium (Debian's, through playwright-core: `tests/web/browser.mjs`)
//! against the real `pid` and the scripted model: the one-time login of `pictl web`, a
//! streaming run, an approval, a subagent's live transcript, presence between two tabs, a
//! daemon killed mid-stream, the cost chart against `session/stats`, pages of other origins and
//! DNS rebinding refused, an image in the transcript, and no secret in a URL, the storage or a
//! log.

use std::time::Duration;

use pi_protocol::v1::{
    SessionCreate, SessionCreateParams, SessionIdParams, SessionInfo, SessionSetPolicy,
    SessionSetPolicyParams, SessionStats, UsageStats, UsageStatsParams,
};
use pi_test_support::browser::{Browser, Page};
use pi_test_support::model_server::{Gate, ScriptUsage, Turn};
use pi_test_support::workspace_binary;
use serde_json::{Value, json};

use super::harness::{MODEL, World};
use super::mcp_faults::caller;

const CONNECTED: &str = "[data-testid=connection][data-state=connected]";
const PROMPT: &str = "[data-testid=prompt-input]";
const SEND: &str = "[data-testid=send]";

/// What `pictl web ARGS` printed on stdout, once it succeeded.
async fn pictl_web(world: &World, args: &[&str]) -> Vec<u8> {
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        tokio::process::Command::new(workspace_binary("pictl"))
            .arg("web")
            .args(args)
            .envs(world.daemon.env())
            .stdin(std::process::Stdio::null())
            .output(),
    )
    .await
    .expect("pictl web ends")
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A one-time login link from `pictl web --no-open --json`.
async fn login_url(world: &World) -> String {
    let printed: Value =
        serde_json::from_slice(&pictl_web(world, &["--no-open", "--json"]).await).unwrap();
    printed["url"].as_str().unwrap().to_owned()
}

/// `http://127.0.0.1:PORT` of a login link.
fn origin(url: &str) -> String {
    let rest = url.strip_prefix("http://").unwrap();
    format!("http://{}", rest.split('/').next().unwrap())
}

/// A new session on the scripted model in the daemon's home.
async fn session(world: &World, tools: Option<&[&str]>) -> SessionInfo {
    let (client, _events) = world.client().await;
    client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: world.daemon.home.path().display().to_string(),
            model: Some(MODEL.to_owned()),
            tools: tools.map(|tools| tools.iter().map(|tool| (*tool).to_owned()).collect()),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap()
}

/// A browser with a tab logged in through `pictl web`'s link, showing the UI connected.
async fn logged_in(world: &World) -> (Browser, Page, String) {
    let url = login_url(world).await;
    let mut browser = Browser::start().await;
    let page = browser.new_page(0).await;
    browser.goto(page, &url).await;
    browser.wait_for(page, CONNECTED, None).await;
    (browser, page, url)
}

/// The UI's own address in `page`: `http://127.0.0.1:PORT/s/LOGIN/`, without the route.
async fn home_of(browser: &mut Browser, page: Page) -> String {
    let url = browser.op("url", json!({ "page": page.0 })).await;
    let url = url.as_str().unwrap();
    let home = url.split('#').next().unwrap().to_owned();
    assert!(home.contains("/s/") && home.ends_with('/'), "{url}");
    home
}

/// Opens session `id` in `page` (through the list).
async fn open_session(browser: &mut Browser, page: Page, id: &str) {
    let item = format!("[data-testid=session-item][data-session-id=\"{id}\"]");
    browser.wait_for(page, &item, None).await;
    browser.click(page, &item).await;
    browser.wait_for(page, PROMPT, None).await;
}

/// Sends `text` from the composer.
async fn send(browser: &mut Browser, page: Page, text: &str) {
    browser.fill(page, PROMPT, text).await;
    browser.click(page, SEND).await;
}

/// The rendered entry of `role` containing `text`.
fn entry(role: &str) -> String {
    format!("[data-testid=entry][data-role={role}]")
}

/// No secret where it must not be: not in the tab's storage or script-visible cookies, not in
/// any URL the browser requested, not in the page's console, not in the daemon's log.
async fn assert_no_secrets(browser: &mut Browser, page: Page, world: &World, login: &str) {
    let token = std::fs::read_to_string(world.daemon.paths.ws_token_path())
        .unwrap()
        .trim()
        .to_owned();
    let code = login.split("code=").nth(1).unwrap().to_owned();
    let cookies = browser.op("cookies", json!({ "context": 0 })).await;
    let cookies = cookies.as_array().unwrap();
    assert_eq!(cookies.len(), 1, "{cookies:?}");
    let cookie = &cookies[0];
    assert_eq!(cookie["httpOnly"], json!(true), "{cookie}");
    assert_eq!(cookie["sameSite"], json!("Strict"), "{cookie}");
    let home = home_of(browser, page).await;
    assert!(
        home.ends_with(cookie["path"].as_str().unwrap()),
        "the cookie's path is the UI's: {cookie} {home}"
    );
    let cookie = cookie["value"].as_str().unwrap().to_owned();
    assert!(!cookie.contains(&token));

    let storage = browser.op("storage", json!({ "page": page.0 })).await;
    let storage = storage.to_string();
    for secret in [&token, &cookie, &code] {
        assert!(!storage.contains(secret.as_str()), "{storage}");
    }
    let requests = browser.op("requests", json!({})).await.to_string();
    assert!(!requests.contains(&token), "the token in a URL: {requests}");
    assert!(
        !requests.contains(&cookie),
        "the cookie in a URL: {requests}"
    );
    let url = browser.op("url", json!({ "page": page.0 })).await;
    assert!(!url.to_string().contains(&code), "{url}");
    let logs = browser.op("logs", json!({})).await.to_string();
    for secret in [&token, &cookie, &code] {
        assert!(!logs.contains(secret.as_str()), "{logs}");
    }
    let frames = browser.op("frames", json!({})).await.to_string();
    assert!(!frames.contains(&token), "the token in a WebSocket message");
    let log = std::fs::read_to_string(world.daemon.paths.log_file()).unwrap_or_default();
    for secret in [&token, &cookie, &code] {
        assert!(
            !log.contains(secret.as_str()),
            "a secret in the daemon's log"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_logs_in_with_the_one_time_link_and_watches_a_run_stream() {
    let world = World::start("anthropic-messages").await;
    let gate = Gate::new();
    world.server.push(
        Turn::reply()
            .text("Streaming words arrive one by one, and then the **rest**.")
            .delta_chars(4)
            .hold_after(6, &gate),
    );
    let session = session(&world, None).await;
    let (mut browser, page, url) = logged_in(&world).await;

    // The link was good once: a second browser profile is refused with it.
    let other = browser.new_page(1).await;
    assert_eq!(browser.goto(other, &url).await, Some(401));
    assert!(
        browser
            .text(other, "body")
            .await
            .contains("used already or has expired")
    );
    // Without the cookie, nothing but the page that says how to log in.
    assert_eq!(browser.goto(other, &origin(&url)).await, Some(401));
    assert!(browser.text(other, "body").await.contains("pictl web"));

    open_session(&mut browser, page, &session.id).await;
    send(&mut browser, page, "Tell me something").await;
    browser
        .wait_for(page, &entry("user"), Some("Tell me something"))
        .await;
    browser
        .wait_for(page, "[data-testid=streaming]", Some("Stre"))
        .await;
    gate.reached().await;
    let partial = browser.text(page, "[data-testid=streaming]").await;
    assert!(!partial.contains("the rest"), "{partial}");
    gate.release();
    browser
        .wait_for(
            page,
            &entry("assistant"),
            Some("Streaming words arrive one by one, and then the rest."),
        )
        .await;
    browser.wait_gone(page, "[data-testid=streaming]").await;
    // Markdown, once the renderer (assets/render.js) has loaded.
    browser
        .wait_for(
            page,
            "[data-testid=entry][data-role=assistant] .md strong",
            Some("rest"),
        )
        .await;
    assert_no_secrets(&mut browser, page, &world, &url).await;
    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_sent_with_a_prompt_shows_in_the_transcript() {
    // A 2×1 PNG: red, then blue.
    const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAIAAAB7QOjdAAAADUlEQVR42mP4zwAE/wEHAAH/PX2MSQAAAABJRU5ErkJggg==";
    let world = World::start("anthropic-messages").await;
    world
        .server
        .push(Turn::reply().text("A red and a blue pixel."));
    let session = session(&world, None).await;
    let (client, _events) = world.client().await;
    client
        .call::<pi_protocol::v1::SessionPrompt>(&pi_protocol::v1::SessionMessageParams {
            session_id: session.id.clone(),
            text: "What is in this picture?".to_owned(),
            images: vec![pi_protocol::v1::message::ImageContent {
                data: PNG.to_owned(),
                mime_type: "image/png".to_owned(),
            }],
        })
        .await
        .unwrap();
    let (mut browser, page, _url) = logged_in(&world).await;
    open_session(&mut browser, page, &session.id).await;
    browser
        .wait_for(page, &entry("assistant"), Some("A red and a blue pixel."))
        .await;
    assert!(
        world.server.requests()[0].body_text.contains(PNG),
        "the model got the image"
    );
    // Decoded by the browser (allowed by the page's policy), as the user sent it.
    let size = browser
        .wait_until(
            page,
            "() => { const img = document.querySelector('[data-testid=entry][data-role=user] img'); \
             return img && img.complete && img.naturalWidth ? [img.naturalWidth, img.naturalHeight] : null; }",
            Value::Null,
        )
        .await;
    assert_eq!(size, json!([2, 1]));
    let logs = browser.op("logs", json!({})).await.to_string();
    assert!(!logs.contains("Content Security Policy"), "{logs}");
    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pictl_web_revoke_shuts_an_open_tab_out_at_once() {
    let world = World::start("anthropic-messages").await;
    let session = session(&world, None).await;
    let (mut browser, page, _url) = logged_in(&world).await;
    open_session(&mut browser, page, &session.id).await;
    let out = pictl_web(&world, &["--revoke"]).await;
    assert_eq!(
        String::from_utf8_lossy(&out),
        "Logged every browser out of the web UI; `pictl web` logs one in again.\n"
    );
    // The daemon ends the tab's connection; the tab finds its login gone and says what to do
    // (without reloading: the open page, not a new one).
    browser
        .wait_for(
            page,
            "[data-testid=logged-out]",
            Some("Run pictl web for a new link."),
        )
        .await;
    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_waiting_for_an_answer_are_marked_in_the_list() {
    let world = World::start("anthropic-messages").await;
    world.server.respond_with(caller);
    let home = world.daemon.home.path().to_path_buf();
    std::fs::write(home.join("notes.txt"), "old line\n").unwrap();
    let waiting = session(&world, None).await;
    let open = session(&world, None).await;
    let (client, mut events) = world.client().await;
    client
        .call::<SessionSetPolicy>(&SessionSetPolicyParams {
            session_id: waiting.id.clone(),
            mode: "ask-writes".to_owned(),
        })
        .await
        .unwrap();
    super::approvals::attach(&client, &waiting.id).await;
    let edit =
        json!({"path": "notes.txt", "edits": [{"oldText": "old line", "newText": "new line"}]});
    client
        .call::<pi_protocol::v1::SessionPrompt>(&super::harness::prompt(
            &waiting.id,
            &format!("call edit {edit}"),
        ))
        .await
        .unwrap();
    let question = super::approvals::next_request(&mut events).await;
    // `session/list` counts it.
    let listed = client
        .call::<pi_protocol::v1::SessionList>(&pi_protocol::v1::SessionListParams::default())
        .await
        .unwrap();
    let questions = |id: &str| {
        listed
            .sessions
            .iter()
            .find(|info| info.id == id)
            .map(|info| info.questions)
    };
    assert_eq!(questions(&waiting.id), Some(1));
    assert_eq!(questions(&open.id), Some(0));

    // A tab with another session open marks the waiting one in its list.
    let (mut browser, page, _url) = logged_in(&world).await;
    open_session(&mut browser, page, &open.id).await;
    let badge = format!(
        "[data-testid=session-item][data-session-id=\"{}\"] [data-testid=session-questions]",
        waiting.id
    );
    browser.wait_for(page, &badge, Some("? 1")).await;
    assert_eq!(
        browser
            .count(
                page,
                &format!(
                    "[data-testid=session-item][data-session-id=\"{}\"] [data-testid=session-questions]",
                    open.id
                )
            )
            .await,
        0
    );
    // Answered elsewhere: the mark goes with the next look at the list.
    super::approvals::answer(&client, &question, "Allow once").await;
    browser.wait_gone(page, &badge).await;
    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_is_approved_in_the_browser_and_shown_as_a_diff() {
    let world = World::start("anthropic-messages").await;
    world.server.respond_with(caller);
    let home = world.daemon.home.path().to_path_buf();
    std::fs::write(home.join("notes.txt"), "first line\nold line\nlast line\n").unwrap();
    let session = session(&world, None).await;
    let (client, _events) = world.client().await;
    client
        .call::<SessionSetPolicy>(&SessionSetPolicyParams {
            session_id: session.id.clone(),
            mode: "ask-writes".to_owned(),
        })
        .await
        .unwrap();
    let (mut browser, page, _url) = logged_in(&world).await;
    open_session(&mut browser, page, &session.id).await;
    let edit =
        json!({"path": "notes.txt", "edits": [{"oldText": "old line", "newText": "new line"}]});
    send(&mut browser, page, &format!("call edit {edit}")).await;
    browser
        .wait_for(page, "[data-testid=ui-request]", None)
        .await;
    assert!(
        std::fs::read_to_string(home.join("notes.txt"))
            .unwrap()
            .contains("old line"),
        "the edit waits for the answer"
    );
    browser
        .click(page, "[data-testid=ui-option]:has-text(\"Allow once\")")
        .await;
    browser.wait_gone(page, "[data-testid=ui-request]").await;
    browser
        .wait_for(
            page,
            "[data-testid=tool-call][data-tool-name=edit] .diff-add",
            Some("new line"),
        )
        .await;
    browser
        .wait_for(
            page,
            "[data-testid=tool-call][data-tool-name=edit] .diff-del",
            Some("old line"),
        )
        .await;
    browser
        .wait_for(page, &entry("assistant"), Some("Done."))
        .await;
    assert_eq!(
        std::fs::read_to_string(home.join("notes.txt")).unwrap(),
        "first line\nnew line\nlast line\n"
    );
    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagents_live_transcript_opens_from_its_parent() {
    let world = World::start("anthropic-messages").await;
    let gate = Gate::new();
    let held = gate.clone();
    world
        .server
        .respond_with(move |request| match super::tasks::child_task(request) {
            Some(task) => Ok(Turn::reply()
                .text(format!("The child is working on {task} right now."))
                .delta_chars(6)
                .hold_after(4, &held)
                .into()),
            None => caller(request),
        });
    let parent = session(&world, Some(&["read", "bash", "task"])).await;
    let (mut browser, page, _url) = logged_in(&world).await;
    open_session(&mut browser, page, &parent.id).await;
    let task = json!({"context": "", "tasks": [{"name": "scout", "task": "the map"}]});
    send(&mut browser, page, &format!("call task {task}")).await;
    browser
        .wait_for(page, "[data-testid=subagent][data-status=running]", None)
        .await;
    gate.reached().await;
    browser.click(page, "[data-testid=subagent]").await;
    browser
        .wait_for(page, "[data-testid=streaming]", Some("The ch"))
        .await;
    gate.release();
    browser
        .wait_for(
            page,
            &entry("assistant"),
            Some("The child is working on the map right now."),
        )
        .await;
    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_tabs_on_one_session_see_each_other_and_who_is_typing() {
    let world = World::start("anthropic-messages").await;
    let session = session(&world, None).await;
    let (mut browser, first, _url) = logged_in(&world).await;
    open_session(&mut browser, first, &session.id).await;
    let second = browser.new_page(0).await;
    let home = home_of(&mut browser, first).await;
    browser
        .goto(second, &format!("{home}#/s/{}", session.id))
        .await;
    browser.wait_for(second, CONNECTED, None).await;
    browser.wait_for(second, PROMPT, None).await;
    for page in [first, second] {
        browser
            .wait_until(
                page,
                "() => document.querySelectorAll('[data-testid=presence-client]').length === 2",
                Value::Null,
            )
            .await;
        assert_eq!(
            browser
                .count(page, "[data-testid=presence-client][data-self=true]")
                .await,
            1
        );
    }
    browser.type_text(second, PROMPT, "half a thought").await;
    browser
        .wait_for(
            first,
            "[data-testid=presence-client][data-typing=true]:not([data-self=true])",
            None,
        )
        .await;
    // The one typing sees no one else typing.
    assert_eq!(
        browser
            .count(
                second,
                "[data-testid=presence-client][data-typing=true]:not([data-self=true])"
            )
            .await,
        0
    );
    browser.op("close", json!({ "page": second.0 })).await;
    browser
        .wait_until(
            first,
            "() => document.querySelectorAll('[data-testid=presence-client]').length === 1",
            Value::Null,
        )
        .await;
    browser.close().await;
}

/// A loopback port that is free now.
fn free_port() -> u16 {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tab_resumes_after_the_daemon_is_killed_mid_stream_with_nothing_lost_or_doubled() {
    let port = free_port();
    let mut world = World::start_with_config(
        "anthropic-messages",
        &format!("[websocket]\nport = {port}\n"),
        &[],
    )
    .await;
    let gate = Gate::new();
    world.server.push(
        Turn::reply()
            .text("This answer never finishes because the daemon dies.")
            .delta_chars(5)
            .hold_after(5, &gate),
    );
    world
        .server
        .push(Turn::reply().text("Back after the restart."));
    let session = session(&world, None).await;
    let (mut browser, page, _url) = logged_in(&world).await;
    open_session(&mut browser, page, &session.id).await;
    send(&mut browser, page, "Start a long answer").await;
    browser
        .wait_for(page, "[data-testid=streaming]", Some("This"))
        .await;
    gate.reached().await;

    world.daemon.kill9().await;
    browser
        .wait_for(
            page,
            "[data-testid=connection]:not([data-state=connected])",
            None,
        )
        .await;
    world.daemon.restart().await;
    browser.wait_for(page, CONNECTED, None).await;
    // The run the dead daemon did not finish is closed as interrupted.
    browser
        .wait_for(page, &entry("assistant"), Some("Interrupted"))
        .await;
    browser.wait_gone(page, "[data-testid=streaming]").await;
    send(&mut browser, page, "Are you back?").await;
    browser
        .wait_for(page, &entry("assistant"), Some("Back after the restart."))
        .await;
    gate.release();

    // Every entry once: the user's first prompt, the interrupted answer, the second exchange.
    let ids = browser
        .attrs(page, "[data-testid=entry][data-entry-id]", "data-entry-id")
        .await;
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), ids.len(), "an entry shown twice: {ids:?}");
    let users = browser
        .op("texts", json!({"page": page.0, "selector": entry("user")}))
        .await;
    let users: Vec<String> = serde_json::from_value(users).unwrap();
    assert_eq!(
        users
            .iter()
            .filter(|text| text.contains("Start a long answer"))
            .count(),
        1,
        "{users:?}"
    );
    let (client, _events) = world.client().await;
    let read = client
        .call::<pi_protocol::v1::SessionRead>(&pi_protocol::v1::SessionReadParams {
            session_id: session.id.clone(),
            scope: pi_protocol::v1::ReadScope::Branch,
            limit: Some(1000),
            cursor: None,
        })
        .await
        .unwrap();
    let messages = read
        .entries
        .iter()
        .filter(|record| matches!(record.entry, pi_protocol::v1::SessionEntry::Message { .. }))
        .count();
    let shown = browser
        .count(page, "[data-testid=entry][data-entry-id]")
        .await;
    assert!(
        shown as usize >= messages,
        "the tab shows {shown} entries, the session has {messages} messages"
    );
    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cost_chart_and_the_session_strip_match_the_daemons_stats() {
    let world = World::start("anthropic-messages").await;
    for (input, output) in [(1200, 340), (5400, 980)] {
        world
            .server
            .push(Turn::reply().text("Counted.").usage(ScriptUsage {
                input,
                output,
                cache_read: 100,
                cache_write: 50,
                reasoning: 0,
            }));
    }
    let session = session(&world, None).await;
    let (mut browser, page, _url) = logged_in(&world).await;
    open_session(&mut browser, page, &session.id).await;
    for text in ["first", "second"] {
        send(&mut browser, page, text).await;
        browser
            .wait_until(
                page,
                "(n) => document.querySelectorAll('[data-testid=entry][data-role=assistant]').length >= n",
                json!(if text == "first" { 1 } else { 2 }),
            )
            .await;
    }
    let (client, _events) = world.client().await;
    let stats = client
        .call::<SessionStats>(&SessionIdParams {
            session_id: session.id.clone(),
        })
        .await
        .unwrap();
    let stats = serde_json::to_value(&stats).unwrap();
    let cost = stats["cost"].as_f64().unwrap();
    assert!(cost > 0.0, "{stats}");
    let strip = browser
        .wait_until(
            page,
            "(cost) => { const el = document.querySelector('[data-testid=session-stats]'); \
             return el && Number(el.dataset.cost) === cost && el.dataset.cost; }",
            json!(cost),
        )
        .await;
    assert_eq!(strip.as_str().unwrap().parse::<f64>().unwrap(), cost);

    let usage = client
        .call::<UsageStats>(&UsageStatsParams::default())
        .await
        .unwrap();
    let usage = serde_json::to_value(&usage).unwrap();
    browser.click(page, "[data-testid=nav-usage]").await;
    browser
        .wait_for(page, "[data-testid=usage-total]", None)
        .await;
    browser
        .wait_for(page, "[data-testid=bar][data-series=project]", None)
        .await;
    let total = browser
        .attrs(page, "[data-testid=usage-total]", "data-cost")
        .await;
    assert_eq!(
        total[0].as_deref().unwrap().parse::<f64>().unwrap(),
        usage["total"]["cost"].as_f64().unwrap()
    );
    let days = browser
        .attrs(page, "[data-testid=bar][data-series=day]", "data-cost")
        .await;
    let charted: Vec<f64> = days
        .iter()
        .map(|cost| cost.as_deref().unwrap().parse().unwrap())
        .collect();
    let stated: Vec<f64> = usage["byDay"]
        .as_array()
        .unwrap()
        .iter()
        .map(|day| day["usage"]["cost"].as_f64().unwrap())
        .collect();
    assert_eq!(charted, stated);
    let models = browser
        .attrs(page, "[data-testid=bar][data-series=model]", "data-key")
        .await;
    assert!(
        models.iter().any(|key| key
            .as_deref()
            .is_some_and(|key| key.contains("scripted-model"))),
        "{models:?}"
    );
    let projects = browser
        .attrs(page, "[data-testid=bar][data-series=project]", "data-cost")
        .await;
    let stated: Vec<f64> = usage["byProject"]
        .as_array()
        .unwrap()
        .iter()
        .map(|project| project["usage"]["cost"].as_f64().unwrap())
        .collect();
    assert_eq!(stated.len(), 1, "{usage}");
    let charted: Vec<f64> = projects
        .iter()
        .map(|cost| cost.as_deref().unwrap().parse().unwrap())
        .collect();
    assert_eq!(charted, stated);
    browser.close().await;
}

/// Serves one page at `http://localhost:PORT/` (another origin of the same host, as another
/// local user's server would be) whose script tries the UI's WebSocket and page at `home`
/// (`/s/LOGIN/`, as if it had learnt the login's path), and writes what happened into its
/// title. Every request's `Cookie` header is kept.
async fn hostile_page(
    daemon_port: u16,
    home: String,
) -> (u16, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .unwrap();
    let port = listener.local_addr().unwrap().port();
    let cookies = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = cookies.clone();
    let html = format!(
        "<!doctype html><title>running</title><script>\
         const results = [];\
         const ws = new WebSocket('ws://127.0.0.1:{daemon_port}{home}rpc');\
         ws.onopen = () => {{ results.push('ws:open'); finish(); }};\
         ws.onclose = () => {{ results.push('ws:refused'); finish(); }};\
         fetch('http://127.0.0.1:{daemon_port}{home}', {{credentials: 'include'}})\
           .then(r => r.text()).then(t => {{ results.push('fetch:read'); finish(); }})\
           .catch(() => {{ results.push('fetch:blocked'); finish(); }});\
         function finish() {{ if (results.length === 2) document.title = 'done ' + results.sort().join(' '); }}\
         </script>"
    );
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let html = html.clone();
            let seen = seen.clone();
            tokio::spawn(async move {
                let mut buffer = [0u8; 8192];
                let read = stream.read(&mut buffer).await.unwrap_or(0);
                let request = String::from_utf8_lossy(&buffer[..read]).into_owned();
                for line in request.lines() {
                    if line.to_ascii_lowercase().starts_with("cookie:") {
                        seen.lock().unwrap().push(line.to_owned());
                    }
                }
                let answer = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{html}",
                    html.len()
                );
                let _ = stream.write_all(answer.as_bytes()).await;
            });
        }
    });
    (port, cookies)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_of_other_origins_and_rebound_names_cannot_reach_the_daemon() {
    let world = World::start("anthropic-messages").await;
    let (mut browser, page, url) = logged_in(&world).await;
    let daemon_port: u16 = origin(&url).rsplit(':').next().unwrap().parse().unwrap();
    let home = home_of(&mut browser, page).await;
    let path = home.trim_start_matches(&origin(&url)).to_owned();
    let (other, cookies) = hostile_page(daemon_port, path.clone()).await;
    // Same browser profile: it holds the daemon's cookie, and localhost is the same site.
    let tab = browser.new_page(0).await;
    browser
        .goto(tab, &format!("http://localhost:{other}/"))
        .await;
    let title = browser
        .wait_until(
            tab,
            "() => document.title.startsWith('done') && document.title",
            Value::Null,
        )
        .await;
    assert_eq!(title, json!("done fetch:blocked ws:refused"));
    // The same browser on another port of 127.0.0.1 (another user's server) gets no cookie.
    browser
        .goto(tab, &format!("http://127.0.0.1:{other}/"))
        .await;
    browser
        .wait_until(
            tab,
            "() => document.title.startsWith('done') && document.title",
            Value::Null,
        )
        .await;
    let seen = cookies.lock().unwrap().clone();
    assert!(
        seen.iter().all(|line| !line.contains("pi_web")),
        "the login's cookie went to another port: {seen:?}"
    );
    // A name that resolves to loopback (DNS rebinding) gets nothing.
    assert_eq!(
        browser
            .goto(tab, &format!("http://evil.test:{daemon_port}{path}"))
            .await,
        Some(403)
    );
    let body = browser.text(tab, "body").await;
    assert!(body.contains("is not loopback"), "{body}");
    // The logged-in tab is unaffected.
    browser.wait_for(page, CONNECTED, None).await;
    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tree_labels_navigates_and_forks_from_the_browser() {
    let world = World::start("anthropic-messages").await;
    world.server.push(Turn::reply().text("Answer one."));
    world.server.push(Turn::reply().text("Answer two."));
    let session = session(&world, None).await;
    let (mut browser, page, _url) = logged_in(&world).await;
    open_session(&mut browser, page, &session.id).await;
    for (text, answer) in [
        ("First question", "Answer one."),
        ("Second question", "Answer two."),
    ] {
        send(&mut browser, page, text).await;
        browser
            .wait_for(page, &entry("assistant"), Some(answer))
            .await;
    }
    browser.click(page, "[data-testid=tree-toggle]").await;
    browser.wait_for(page, "[data-testid=tree]", None).await;
    browser
        .wait_for(
            page,
            "[data-testid=tree-node][data-current=true]",
            Some("Answer two."),
        )
        .await;

    // A label on the first question.
    let first = "[data-testid=tree-node]:has-text(\"First question\")";
    browser.hover(page, first).await;
    browser
        .click(page, &format!("{first} [data-testid=tree-label]"))
        .await;
    browser
        .fill(page, "[data-testid=tree-label-input]", "start here")
        .await;
    browser.click(page, "[data-testid=tree-label-save]").await;
    browser.wait_for(page, first, Some("start here")).await;
    let (client, _events) = world.client().await;
    let tree = client
        .call::<pi_protocol::v1::SessionRead>(&pi_protocol::v1::SessionReadParams {
            session_id: session.id.clone(),
            scope: pi_protocol::v1::ReadScope::Tree,
            limit: Some(1000),
            cursor: None,
        })
        .await
        .unwrap();
    let labels: Vec<Value> = tree
        .entries
        .iter()
        .map(|record| serde_json::to_value(&record.entry).unwrap())
        .filter(|entry| entry["type"] == "label")
        .collect();
    assert_eq!(labels.len(), 1, "{labels:?}");
    assert_eq!(labels[0]["label"], "start here");

    // Back to the first answer: the daemon's leaf moves and the second exchange leaves the
    // transcript.
    let answer_one = "[data-testid=tree-node]:has-text(\"Answer one.\")";
    browser.hover(page, answer_one).await;
    browser
        .click(page, &format!("{answer_one} [data-testid=tree-navigate]"))
        .await;
    browser
        .wait_for(
            page,
            "[data-testid=tree-node][data-current=true]",
            Some("Answer one."),
        )
        .await;
    browser
        .wait_until(
            page,
            "() => ![...document.querySelectorAll('[data-testid=entry]')].some(e => e.innerText.includes('Answer two.'))",
            Value::Null,
        )
        .await;
    let info = client
        .call::<pi_protocol::v1::SessionGet>(&pi_protocol::v1::SessionIdParams {
            session_id: session.id.clone(),
        })
        .await
        .unwrap();
    let info = serde_json::to_value(&info).unwrap();
    let leaf = info["leafId"]
        .as_str()
        .or(info["info"]["leafId"].as_str())
        .unwrap()
        .to_owned();
    let current = browser
        .attrs(
            page,
            "[data-testid=tree-node][data-current=true]",
            "data-entry-id",
        )
        .await;
    assert_eq!(current, [Some(leaf)]);

    // A fork from the second question opens a new session with the question to edit.
    let second = "[data-testid=tree-node]:has-text(\"Second question\")";
    browser.hover(page, second).await;
    browser
        .click(page, &format!("{second} [data-testid=tree-fork]"))
        .await;
    let forked = browser
        .wait_until(
            page,
            "(id) => { const m = location.hash.match(/^#\\/s\\/(.+)$/); return m && m[1] !== id && m[1]; }",
            json!(session.id),
        )
        .await;
    let forked = forked.as_str().unwrap().to_owned();
    browser
        .wait_until(
            page,
            "() => document.querySelector('[data-testid=prompt-input]').value.includes('Second question')",
            Value::Null,
        )
        .await;
    let sessions = world.sessions().await;
    let fork = sessions.iter().find(|info| info.id == forked).unwrap();
    assert_eq!(fork.parent_session_id.as_deref(), Some(session.id.as_str()));
    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_page_shows_the_shared_mcp_server_a_job_and_their_output() {
    let world = World::start_with(
        "anthropic-messages",
        &[(".pi/agent/mcp.json", super::mcp::mcp_json())],
    )
    .await;
    world.server.respond_with(caller);
    let session = session(&world, Some(&["bash", "job"])).await;
    let (client, _events) = world.client().await;
    super::mcp::wait_for_server(&client, "ready", super::mcp::ready).await;
    let job = json!({"command": "echo from-the-job; sleep 30", "background": true});
    client
        .call::<pi_protocol::v1::SessionPrompt>(&super::harness::prompt(
            &session.id,
            &format!("call bash {job}"),
        ))
        .await
        .unwrap();
    let (mut browser, page, _url) = logged_in(&world).await;
    browser.click(page, "[data-testid=nav-status]").await;
    browser
        .wait_for(page, "[data-testid=status-mcp] tr", Some("everything"))
        .await;
    browser
        .wait_for(page, "[data-testid=status-mcp] tr", Some("ready"))
        .await;
    browser.click(page, "[data-testid=mcp-logs]").await;
    browser
        .wait_for(
            page,
            "[data-testid=status-mcp] [data-testid=logs]",
            Some("everything"),
        )
        .await;
    // The job and the end of its output.
    browser
        .wait_for(page, "[data-testid=status-jobs] tr", Some("from-the-job"))
        .await;
    browser
        .wait_until(
            page,
            "() => { const b = document.querySelector('[data-testid=job-output]'); if (b) b.click(); \
             const l = document.querySelector('[data-testid=status-jobs] [data-testid=logs]'); \
             return l && l.innerText.includes('from-the-job\\n') && l.innerText; }",
            Value::Null,
        )
        .await;
    // The daemon's own line: its version.
    let status = browser.text(page, "[data-testid=status]").await;
    assert!(status.contains(env!("CARGO_PKG_VERSION")), "{status}");
    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pictl_web_hands_the_browser_a_private_page_never_the_code() {
    use std::os::unix::fs::PermissionsExt as _;

    let world = World::start("anthropic-messages").await;
    // A desktop whose opener records what it was given.
    let bin = tempfile::tempdir().unwrap();
    let record = bin.path().join("opened");
    let opener = bin.path().join("xdg-open");
    std::fs::write(
        &opener,
        format!("#!/bin/sh\nprintf '%s\\n' \"$@\" > {}\n", record.display()),
    )
    .unwrap();
    std::fs::set_permissions(&opener, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = tokio::process::Command::new(workspace_binary("pictl"))
        .arg("web")
        .envs(world.daemon.env())
        .env("PATH", path)
        .env("DISPLAY", ":99")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert!(printed.contains("/login?code="), "{printed}");
    let opened = std::fs::read_to_string(&record).unwrap();
    let page = world.daemon.paths.web_open_path();
    assert_eq!(opened.trim(), format!("file://{}", page.display()));
    assert!(!opened.contains("code="), "{opened}");
    let mode = std::fs::metadata(&page).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains(&format!("content=\"0;url={printed}\"")),
        "{html}"
    );
    // The page's link logs a browser in.
    let mut browser = Browser::start().await;
    let tab = browser.new_page(0).await;
    browser
        .goto(tab, &format!("file://{}", page.display()))
        .await;
    browser.wait_for(tab, CONNECTED, None).await;
    browser.close().await;
}
