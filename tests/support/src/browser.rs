//! Real Chromium for the web UI's tests: `tests/web/browser.mjs` (playwright-core, from
//! `tests/install-peers`) driven one JSON request per line. [`Browser::start`] fails loudly
//! when Chromium or playwright-core is missing.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

/// Debian's Chromium, or `PI_CHROMIUM`.
pub fn chromium() -> PathBuf {
    let path = std::env::var_os("PI_CHROMIUM")
        .map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
    assert!(
        path.exists(),
        "{} is not installed; run tests/install-peers (it installs Debian's chromium)",
        path.display()
    );
    path
}

/// The browser servant.
pub struct Browser {
    child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
    next_id: u64,
}

/// One tab of a [`Browser`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Page(pub u64);

impl Browser {
    /// Starts headless Chromium.
    pub async fn start() -> Browser {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../web/browser.mjs");
        let playwright = crate::peers::dir().join("node_modules/playwright-core/package.json");
        assert!(
            playwright.exists(),
            "{} is not installed; run tests/install-peers",
            playwright.display()
        );
        let mut child = tokio::process::Command::new("node")
            .arg(&script)
            .env("PI_PEERS_DIR", crate::peers::dir())
            .env("PI_CHROMIUM", chromium())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("node runs (tests/install-peers installs it)");
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
        Browser {
            child,
            stdin,
            stdout,
            next_id: 0,
        }
    }

    /// Runs one operation of the servant; panics with its error.
    pub async fn op(&mut self, op: &str, mut params: Value) -> Value {
        match self.try_op(op, params.take()).await {
            Ok(value) => value,
            Err(error) => panic!("browser {op} failed: {error}"),
        }
    }

    /// Runs one operation; its error as text.
    pub async fn try_op(&mut self, op: &str, params: Value) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        let mut request = params;
        if !request.is_object() {
            request = json!({});
        }
        request["id"] = json!(id);
        request["op"] = json!(op);
        let mut line = request.to_string();
        line.push('\n');
        self.stdin
            .write_all(line.as_bytes())
            .await
            .expect("the browser servant reads its stdin");
        let answer = tokio::time::timeout(Duration::from_secs(120), self.stdout.next_line())
            .await
            .unwrap_or_else(|_| panic!("the browser did not answer {op} within two minutes"))
            .expect("the browser servant's stdout")
            .unwrap_or_else(|| panic!("the browser servant ended during {op}"));
        let answer: Value = serde_json::from_str(&answer)
            .unwrap_or_else(|error| panic!("the browser servant wrote {answer:?}: {error}"));
        assert_eq!(answer["id"], json!(id), "{answer}");
        match answer.get("error").and_then(Value::as_str) {
            Some(error) => Err(error.to_owned()),
            None => Ok(answer["value"].clone()),
        }
    }

    /// A new tab in browser profile `context` (tabs of one profile share cookies).
    pub async fn new_page(&mut self, context: u64) -> Page {
        Page(
            self.op("newPage", json!({ "context": context }))
                .await
                .as_u64()
                .expect("a page number"),
        )
    }

    /// Loads `url`; the HTTP status of the document.
    pub async fn goto(&mut self, page: Page, url: &str) -> Option<u64> {
        self.op("goto", json!({ "page": page.0, "url": url })).await["status"].as_u64()
    }

    /// Clicks the first match of `selector`.
    pub async fn click(&mut self, page: Page, selector: &str) {
        self.op("click", json!({ "page": page.0, "selector": selector }))
            .await;
    }

    /// Moves the mouse over the first match of `selector`.
    pub async fn hover(&mut self, page: Page, selector: &str) {
        self.op("hover", json!({ "page": page.0, "selector": selector }))
            .await;
    }

    /// Fills the first match of `selector` with `text`.
    pub async fn fill(&mut self, page: Page, selector: &str, text: &str) {
        self.op(
            "fill",
            json!({ "page": page.0, "selector": selector, "text": text }),
        )
        .await;
    }

    /// Types `text` key by key into the first match of `selector`.
    pub async fn type_text(&mut self, page: Page, selector: &str, text: &str) {
        self.op(
            "type",
            json!({ "page": page.0, "selector": selector, "text": text }),
        )
        .await;
    }

    /// Presses `key` (Playwright's names: `Enter`, `Escape`) on the first match.
    pub async fn press(&mut self, page: Page, selector: &str, key: &str) {
        self.op(
            "press",
            json!({ "page": page.0, "selector": selector, "key": key }),
        )
        .await;
    }

    /// Chooses `value` in the `<select>` `selector`.
    pub async fn select(&mut self, page: Page, selector: &str, value: &str) {
        self.op(
            "select",
            json!({ "page": page.0, "selector": selector, "value": value }),
        )
        .await;
    }

    /// Waits until `selector` is visible (and, with `text`, one match contains it).
    pub async fn wait_for(&mut self, page: Page, selector: &str, text: Option<&str>) {
        let mut params = json!({ "page": page.0, "selector": selector });
        if let Some(text) = text {
            params["text"] = json!(text);
        }
        if let Err(error) = self.try_op("waitFor", params).await {
            let shot = std::env::temp_dir().join(format!("pi-web-failure-{}.png", page.0));
            let _ = self
                .try_op(
                    "screenshot",
                    json!({ "page": page.0, "path": shot.display().to_string() }),
                )
                .await;
            let logs = self.try_op("logs", json!({})).await.unwrap_or_default();
            panic!(
                "waiting for {selector} {text:?}: {error}\nscreenshot: {}\npage logs: {logs}",
                shot.display()
            );
        }
    }

    /// Waits until `selector` matches nothing visible.
    pub async fn wait_gone(&mut self, page: Page, selector: &str) {
        self.op(
            "waitFor",
            json!({ "page": page.0, "selector": selector, "state": "hidden" }),
        )
        .await;
    }

    /// Waits until the JavaScript function `expression` (given `arg`) returns something truthy.
    pub async fn wait_until(&mut self, page: Page, expression: &str, arg: Value) -> Value {
        self.op(
            "waitForFunction",
            json!({ "page": page.0, "expression": expression, "arg": arg }),
        )
        .await
    }

    /// The text of the first match of `selector`.
    pub async fn text(&mut self, page: Page, selector: &str) -> String {
        self.op("text", json!({ "page": page.0, "selector": selector }))
            .await
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// Attribute `name` of every match of `selector`.
    pub async fn attrs(&mut self, page: Page, selector: &str, name: &str) -> Vec<Option<String>> {
        let values = self
            .op(
                "attrs",
                json!({ "page": page.0, "selector": selector, "name": name }),
            )
            .await;
        values
            .as_array()
            .map(|values| {
                values
                    .iter()
                    .map(|value| value.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// How many elements match `selector`.
    pub async fn count(&mut self, page: Page, selector: &str) -> u64 {
        self.op("count", json!({ "page": page.0, "selector": selector }))
            .await
            .as_u64()
            .unwrap_or_default()
    }

    /// Evaluates `expression` (a function of `arg`, or an expression) in the page.
    pub async fn eval(&mut self, page: Page, expression: &str, arg: Value) -> Value {
        self.op(
            "eval",
            json!({ "page": page.0, "expression": expression, "arg": arg }),
        )
        .await
    }

    /// Closes the browser.
    pub async fn close(mut self) {
        drop(self.stdin);
        let _ = tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await;
        let _ = self.child.kill().await;
    }
}
