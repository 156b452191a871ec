//! oh-my-pi's web and structural tools on the real `pid`, two sessions at once: `read` of a
//! URL and `fetch` against a local site (HTML, JSON, a PDF, a redirect, a missing page),
//! `web_search` against a stub of Brave's API that checks what it is sent, the sandbox's
//! network switch, and `ast_grep` / `ast_edit` on a repository in four languages.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect};
use axum::routing::get;
use pi_client::Client;
use pi_protocol::v1::{SessionAttach, SessionAttachParams, SessionCreate, SessionCreateParams};
use serde_json::{Value, json};

use super::harness::{MODEL, World};
use pi_test_support::model_server::Turn;

use super::mcp_faults::{caller, run, tool_results};

/// The searches a site was sent: each one's query string and subscription-token header.
type Searches = Arc<Mutex<Vec<(String, Option<String>)>>>;

/// A local web site that records the searches it is sent.
struct Site {
    origin: String,
    seen: Searches,
}

async fn site() -> Site {
    let seen: Searches = Arc::default();
    let record = seen.clone();
    let app = Router::new()
        .route(
            "/guide.html",
            get(|| async {
                Html(
                    "<html><head><title>Guide</title><script>var x = 'hidden';</script></head>\
                     <body><nav>menu</nav><h1>Install</h1><p>Run <code>make</code> \
                     <b>twice</b>.</p><ul><li>one</li><li>two</li></ul></body></html>",
                )
            }),
        )
        .route(
            "/data.json",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "application/json")],
                    r#"{"name":"pi","tags":["a","b"]}"#,
                )
            }),
        )
        .route(
            "/paper.pdf",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "application/pdf")],
                    pi_test_support::documents::pdf(&["Structured search", "Page two"]),
                )
            }),
        )
        .route("/old", get(|| async { Redirect::permanent("/guide.html") }))
        .route(
            "/res/v1/web/search",
            get(
                move |headers: HeaderMap, axum::extract::RawQuery(query): axum::extract::RawQuery| {
                    let record = record.clone();
                    async move {
                        let token = headers
                            .get("x-subscription-token")
                            .and_then(|value| value.to_str().ok())
                            .map(str::to_owned);
                        record
                            .lock()
                            .unwrap()
                            .push((query.unwrap_or_default(), token));
                        (
                            [(header::CONTENT_TYPE, "application/json")],
                            json!({"web": {"results": [
                                {"title": "Async Rust", "url": "https://example.com/async",
                                 "description": "How <strong>futures</strong> work", "age": "2 days ago"},
                                {"title": "Tokio", "url": "https://tokio.rs", "description": "A runtime"}
                            ]}})
                            .to_string(),
                        )
                    }
                },
            ),
        )
        .fallback(|| async { (StatusCode::NOT_FOUND, "no such page").into_response() });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    Site { origin, seen }
}

async fn session(
    client: &Client,
    cwd: &str,
    tools: &[&str],
    env: BTreeMap<String, String>,
) -> String {
    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: cwd.to_owned(),
            model: Some(MODEL.to_owned()),
            tools: Some(tools.iter().map(|name| (*name).to_owned()).collect()),
            env: Some(env),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: session.id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    session.id
}

/// The text of the run's first tool result, and whether it failed.
fn first_result(seen: &[pi_protocol::v1::SessionEventParams]) -> (String, bool, Value) {
    let (_, content, is_error, details) = tool_results(seen).remove(0);
    let content: Value = serde_json::from_str(&content).unwrap();
    (
        content[0]["text"].as_str().unwrap_or_default().to_owned(),
        is_error,
        details,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_pages_read_as_markdown_json_and_pdf_text_and_search_goes_to_the_keyed_provider() {
    let site = site().await;
    let world = World::start_with(
        "anthropic-messages",
        &[(
            "offline/.pi/settings.json",
            json!({"sandbox": {"mode": "workspace-write", "network": false}}).to_string(),
        )],
    )
    .await;
    world.server.respond_with(caller);
    let home = world.daemon.home.path().display().to_string();
    let mut env: BTreeMap<String, String> = std::env::vars().collect();
    env.insert("BRAVE_API_KEY".to_owned(), "brave-test-key-123".to_owned());
    env.insert("PI_BRAVE_BASE_URL".to_owned(), site.origin.clone());
    let (reader, mut reader_events) = world.client().await;
    let (searcher, mut searcher_events) = world.client().await;
    let reading = session(&reader, &home, &["read", "fetch"], env.clone()).await;
    let searching = session(&searcher, &home, &["web_search", "fetch"], env.clone()).await;

    // Both sessions at once: a page through `read`, a search.
    let page = json!({"path": format!("{}/guide.html", site.origin)});
    let query = json!({"query": "rust async", "recency": "week", "limit": 5});
    let (read_prompt, search_prompt) = (
        format!("call read {page}"),
        format!("call web_search {query}"),
    );
    let (read, searched) = tokio::join!(
        run(&reader, &mut reader_events, &reading, &read_prompt),
        run(&searcher, &mut searcher_events, &searching, &search_prompt),
    );
    let (text, failed, _) = first_result(&read);
    assert!(!failed, "{text}");
    assert!(
        text.starts_with(&format!(
            "URL: {}/guide.html\nContent-Type: text/html\n",
            site.origin
        )),
        "{text}"
    );
    assert!(text.contains("# Install"), "{text}");
    assert!(text.contains("Run `make` **twice**."), "{text}");
    assert!(text.contains("- one\n- two"), "{text}");
    assert!(!text.contains("hidden"), "scripts are dropped: {text}");

    let (text, failed, details) = first_result(&searched);
    assert!(!failed, "{text}");
    assert!(
        text.starts_with("2 results for \"rust async\" (brave):"),
        "{text}"
    );
    assert!(
        text.contains("1. Async Rust\n   https://example.com/async\n   published 2 days ago\n   How futures work"),
        "{text}"
    );
    assert_eq!(details["hits"][1]["url"], "https://tokio.rs");
    let searches = site.seen.lock().unwrap().clone();
    assert_eq!(searches.len(), 1);
    let (query_string, token) = &searches[0];
    assert_eq!(token.as_deref(), Some("brave-test-key-123"));
    assert!(
        query_string.contains("q=rust+async") || query_string.contains("q=rust%20async"),
        "{query_string}"
    );
    assert!(query_string.contains("count=5"), "{query_string}");
    assert!(query_string.contains("freshness=pw"), "{query_string}");
    // The key reached the provider, never the model or the transcript.
    let bodies: String = world
        .server
        .requests()
        .iter()
        .map(|request| request.body_text.clone())
        .collect();
    assert!(!bodies.contains("brave-test-key-123"));

    // `fetch`: JSON pretty, a PDF's text, a redirect noted, a missing page said plainly.
    let fetch = |path: &str| {
        format!(
            "call fetch {}",
            json!({"url": format!("{}{path}", site.origin)})
        )
    };
    let seen = run(&reader, &mut reader_events, &reading, &fetch("/data.json")).await;
    let (text, _, _) = first_result(&seen);
    assert!(
        text.ends_with("{\n  \"name\": \"pi\",\n  \"tags\": [\n    \"a\",\n    \"b\"\n  ]\n}"),
        "{text}"
    );
    let seen = run(&reader, &mut reader_events, &reading, &fetch("/paper.pdf")).await;
    let (text, failed, _) = first_result(&seen);
    assert!(!failed, "{text}");
    assert!(text.contains("Structured search"), "{text}");
    assert!(text.contains("Page two"), "{text}");
    let seen = run(&reader, &mut reader_events, &reading, &fetch("/old")).await;
    let (text, _, _) = first_result(&seen);
    assert!(
        text.starts_with(&format!("URL: {}/guide.html", site.origin)),
        "{text}"
    );
    assert!(text.contains("Note: Redirected"), "{text}");
    let seen = run(&reader, &mut reader_events, &reading, &fetch("/missing")).await;
    let (text, failed, _) = first_result(&seen);
    assert!(failed);
    assert!(text.contains("404"), "{text}");
    assert!(text.contains("no such page"), "{text}");
    let seen = run(
        &reader,
        &mut reader_events,
        &reading,
        &format!("call fetch {}", json!({"url": "notes.txt"})),
    )
    .await;
    let (text, failed, _) = first_result(&seen);
    assert!(failed);
    assert_eq!(
        text,
        "fetch reads http(s) URLs, and \"notes.txt\" is not one; use read for files"
    );

    // A project whose sandbox keeps sessions off the network.
    let offline_dir = world.daemon.home.path().join("offline");
    let offline = session(
        &reader,
        &offline_dir.display().to_string(),
        &["read", "web_search"],
        env,
    )
    .await;
    let seen = run(
        &reader,
        &mut reader_events,
        &offline,
        &format!("call read {page}"),
    )
    .await;
    let (text, failed, _) = first_result(&seen);
    assert!(failed);
    assert!(
        text.starts_with(
            "The sandbox keeps this session off the network (`sandbox.network` is false)"
        ),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ast_grep_searches_four_languages_and_ast_edit_previews_then_applies() {
    let world = World::start_with(
        "anthropic-messages",
        &[
            (
                "repo/src/lib.rs",
                "pub fn first(v: Option<u32>) -> u32 {\n    v.unwrap()\n}\n\npub fn second(r: Result<u8, ()>) -> u8 {\n    r.unwrap()\n}\n"
                    .to_owned(),
            ),
            (
                "repo/web/app.ts",
                "export function greet(name: string) {\n  console.log(\"hi\", name);\n}\n".to_owned(),
            ),
            ("repo/tools/run.py", "def main():\n    print(\"ready\")\n".to_owned()),
            (
                "repo/cmd/main.go",
                "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"a\", 1)\n}\n"
                    .to_owned(),
            ),
        ],
    )
    .await;
    world.server.respond_with(caller);
    let repo = world.daemon.home.path().join("repo");
    let (client, mut events) = world.client().await;
    let (other, mut other_events) = world.client().await;
    let id = session(
        &client,
        &repo.display().to_string(),
        &["read", "ast_grep", "ast_edit"],
        BTreeMap::new(),
    )
    .await;
    let other_id = session(
        &other,
        &repo.display().to_string(),
        &["ast_grep"],
        BTreeMap::new(),
    )
    .await;

    let grep = |pattern: &str, lang: &str| {
        format!(
            "call ast_grep {}",
            json!({"pattern": pattern, "lang": lang})
        )
    };
    let (rust_prompt, ts_prompt) = (
        grep("$A.unwrap()", "rust"),
        grep("console.log($$$ARGS)", "ts"),
    );
    let (rust, typescript) = tokio::join!(
        run(&client, &mut events, &id, &rust_prompt),
        run(&other, &mut other_events, &other_id, &ts_prompt),
    );
    let (text, failed, details) = first_result(&rust);
    assert!(!failed, "{text}");
    assert_eq!(details["matches"], 2);
    assert!(text.contains("src/lib.rs:2:5"), "{text}");
    assert!(text.contains("src/lib.rs:6:5"), "{text}");
    let (text, failed, _) = first_result(&typescript);
    assert!(!failed, "{text}");
    assert!(text.contains("web/app.ts:2:3"), "{text}");
    let seen = run(&client, &mut events, &id, &grep("print($X)", "python")).await;
    assert!(first_result(&seen).0.contains("tools/run.py:2:5"));
    let seen = run(&client, &mut events, &id, &grep("fmt.Println($$$)", "go")).await;
    assert!(first_result(&seen).0.contains("cmd/main.go:6:2"));
    let seen = run(&client, &mut events, &id, &grep("$A.unwrap()", "cobol")).await;
    let (text, failed, _) = first_result(&seen);
    assert!(failed);
    assert!(text.contains("cobol"), "{text}");
    assert!(
        text.contains("rust"),
        "the supported ones are listed: {text}"
    );

    // A rewrite: previewed, nothing written; applied with the same arguments; applying
    // again without a new preview is refused.
    let edit =
        json!({"pattern": "$A.unwrap()", "rewrite": "$A.expect(\"checked\")", "lang": "rust"});
    let before = std::fs::read_to_string(repo.join("src/lib.rs")).unwrap();
    let seen = run(&client, &mut events, &id, &format!("call ast_edit {edit}")).await;
    let (text, failed, details) = first_result(&seen);
    assert!(!failed, "{text}");
    assert_eq!(details["replacements"], 2);
    assert!(text.contains("+    v.expect(\"checked\")"), "{text}");
    assert_eq!(
        std::fs::read_to_string(repo.join("src/lib.rs")).unwrap(),
        before
    );
    let mut apply = edit.clone();
    apply["apply"] = json!(true);
    let seen = run(&client, &mut events, &id, &format!("call ast_edit {apply}")).await;
    let (text, failed, details) = first_result(&seen);
    assert!(!failed, "{text}");
    assert_eq!(details["applied"], true);
    let after = std::fs::read_to_string(repo.join("src/lib.rs")).unwrap();
    assert!(
        after.contains("v.expect(\"checked\")") && after.contains("r.expect(\"checked\")"),
        "{after}"
    );
    assert!(!after.contains("unwrap"));
    let seen = run(&client, &mut events, &id, &format!("call ast_edit {apply}")).await;
    let (text, failed, _) = first_result(&seen);
    assert!(failed);
    assert!(
        text.starts_with("Nothing previewed with these arguments"),
        "{text}"
    );
}

/// oh-my-pi's internal URLs in a session that uses its tools: `local://` written by `write`,
/// read back by `bash` as a path and shared with nothing outside it; `skill://` reads a
/// skill's file; `history://` a concise transcript; a pi session (no oh-my-pi tool) has none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn internal_urls_reach_the_scratch_directory_skills_and_transcripts() {
    let world = World::start_with(
        "anthropic-messages",
        &[(
            "proj/.pi/skills/release/SKILL.md",
            "---\nname: release\ndescription: How to cut a release\n---\nTag, then publish.\n"
                .to_owned(),
        )],
    )
    .await;
    world.server.respond_with(caller);
    let project = world.daemon.home.path().join("proj");
    let cwd = project.display().to_string();
    let (client, mut events) = world.client().await;
    let id = session(
        &client,
        &cwd,
        &["read", "write", "bash", "todo"],
        BTreeMap::new(),
    )
    .await;
    let call = |tool: &str, args: Value| format!("call {tool} {args}");

    let seen = run(
        &client,
        &mut events,
        &id,
        &call(
            "write",
            json!({"path": "local://notes/plan.md", "content": "step one\n"}),
        ),
    )
    .await;
    let (text, failed, _) = first_result(&seen);
    assert!(!failed, "{text}");
    assert!(
        !project.join("local:").exists(),
        "not a file in the project"
    );
    let seen = run(
        &client,
        &mut events,
        &id,
        &call(
            "bash",
            json!({"command": "cat local://notes/plan.md && ls local://notes"}),
        ),
    )
    .await;
    let (text, failed, _) = first_result(&seen);
    assert!(!failed, "{text}");
    assert_eq!(text.trim(), "step one\nplan.md");
    let seen = run(
        &client,
        &mut events,
        &id,
        &call("read", json!({"path": "local://../../../secrets"})),
    )
    .await;
    let (text, failed, _) = first_result(&seen);
    assert!(failed);
    assert_eq!(
        text,
        "local://../../../secrets leaves the session's local directory; use a path inside it"
    );

    let seen = run(
        &client,
        &mut events,
        &id,
        &call("read", json!({"path": "skill://release"})),
    )
    .await;
    let (text, failed, _) = first_result(&seen);
    assert!(!failed, "{text}");
    assert!(text.contains("Tag, then publish."), "{text}");
    let seen = run(
        &client,
        &mut events,
        &id,
        &call("read", json!({"path": "skill://deploy"})),
    )
    .await;
    let (text, failed, _) = first_result(&seen);
    assert!(failed);
    assert!(
        text.contains("no skill named \"deploy\"; the skills are release"),
        "{text}"
    );

    let seen = run(
        &client,
        &mut events,
        &id,
        &call("read", json!({"path": "history://"})),
    )
    .await;
    let (text, failed, _) = first_result(&seen);
    assert!(!failed, "{text}");
    assert!(text.contains("## User"), "{text}");
    assert!(text.contains("call write"), "{text}");

    // A pi session has no such URLs: its read is pi's.
    let plain = session(&client, &cwd, &["read"], BTreeMap::new()).await;
    let seen = run(
        &client,
        &mut events,
        &plain,
        &call("read", json!({"path": "local://notes/plan.md"})),
    )
    .await;
    let (text, failed, _) = first_result(&seen);
    assert!(failed);
    assert!(text.contains("ENOENT"), "{text}");
}

/// Rules and instructions of other tools in a project that turns oh-my-pi's tools on: a
/// Cursor rule always applied is in the system prompt whole, one with globs is in the
/// rulebook and read with `rule://`, Copilot's instructions are context, Claude's commands
/// are slash commands, `session/get` lists the rules; the same files in a pi project change
/// nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cursor_rules_and_copilot_instructions_are_picked_up_where_omp_is_on() {
    let files = |dir: &str| -> Vec<(String, String)> {
        vec![
            (
                format!("{dir}/.cursor/rules/react.mdc"),
                "---\ndescription: React conventions\nglobs: src/**/*.tsx\nalwaysApply: false\n---\nUse function components.\n".to_owned(),
            ),
            (
                format!("{dir}/.cursor/rules/tone.mdc"),
                "---\nalwaysApply: true\n---\nNever use emojis.\n".to_owned(),
            ),
            (
                format!("{dir}/.github/copilot-instructions.md"),
                "Prefer small pull requests.\n".to_owned(),
            ),
            (
                format!("{dir}/.github/instructions/python.instructions.md"),
                "---\napplyTo: \"**/*.py\"\n---\nType hints everywhere.\n".to_owned(),
            ),
            (
                format!("{dir}/.claude/commands/review.md"),
                "---\ndescription: Review the diff\n---\nReview the staged diff for $ARGUMENTS.\n".to_owned(),
            ),
        ]
    };
    let mut all = files("omp");
    all.extend(files("plain"));
    all.push((
        "omp/.pi/settings.json".to_owned(),
        json!({"ompTools": true}).to_string(),
    ));
    let all: Vec<(&str, String)> = all
        .iter()
        .map(|(path, text)| (path.as_str(), text.clone()))
        .collect();
    let world = World::start_with("anthropic-messages", &all).await;
    let home = world.daemon.home.path();
    let (client, mut events) = world.client().await;
    let omp = session_default(&client, &home.join("omp").display().to_string()).await;
    let plain = session_default(&client, &home.join("plain").display().to_string()).await;

    world.server.push(Turn::reply().text("ok"));
    run(&client, &mut events, &omp, "hello").await;
    let system = world.server.requests().last().unwrap().body["system"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        system.contains("# Rules\n\nFollow these rules:\n\n## tone\n\nNever use emojis.\n"),
        "{system}"
    );
    assert!(
        system.contains("- react: React conventions (files: src/**/*.tsx)"),
        "{system}"
    );
    assert!(system.contains("- python (files: **/*.py)"), "{system}");
    assert!(system.contains("Prefer small pull requests."), "{system}");
    assert!(
        system.contains("- todo:"),
        "oh-my-pi's tools are offered: {system}"
    );

    world.server.push(Turn::reply().text("ok"));
    run(&client, &mut events, &plain, "hello").await;
    let plain_system = world.server.requests().last().unwrap().body["system"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(!plain_system.contains("Never use emojis"), "{plain_system}");
    assert!(
        !plain_system.contains("Prefer small pull requests"),
        "{plain_system}"
    );
    assert!(!plain_system.contains("- todo:"), "{plain_system}");

    let got = client
        .call::<pi_protocol::v1::SessionGet>(&pi_protocol::v1::SessionIdParams {
            session_id: omp.clone(),
        })
        .await
        .unwrap();
    let rules: Vec<(&str, &str, &str)> = got
        .rules
        .iter()
        .map(|rule| {
            (
                rule.name.as_str(),
                rule.provider.as_str(),
                rule.kind.as_str(),
            )
        })
        .collect();
    assert_eq!(
        rules,
        [
            ("react", "cursor", "rulebook"),
            ("tone", "cursor", "always"),
            ("python", "github", "rulebook")
        ]
    );
    assert!(
        got.context_files
            .iter()
            .any(|path| path.ends_with(".github/copilot-instructions.md"))
    );
    assert!(
        got.commands.iter().any(|command| command.name == "review"),
        "{:?}",
        got.commands
    );

    world.server.respond_with(caller);
    let seen = run(
        &client,
        &mut events,
        &omp,
        &format!("call read {}", json!({"path": "rule://react"})),
    )
    .await;
    let (text, failed, _) = first_result(&seen);
    assert!(!failed, "{text}");
    assert!(text.contains("Use function components."), "{text}");
}

/// A session in `cwd` with the default tools (and what the settings add), attached.
async fn session_default(client: &Client, cwd: &str) -> String {
    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: cwd.to_owned(),
            model: Some(MODEL.to_owned()),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: session.id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    session.id
}

/// Without a search key, `web_search` asks the session's model's provider to search itself:
/// Anthropic's server tool on the Messages API, OpenAI's on the Responses API; a provider
/// named that the model cannot reach is refused with the reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_search_uses_the_models_own_search_where_no_key_is_set() {
    for (api, tool) in [
        (
            "anthropic-messages",
            json!({"type": "web_search_20250305", "name": "web_search", "max_uses": 3}),
        ),
        ("openai-responses", json!({"type": "web_search"})),
    ] {
        let world = World::start(api).await;
        let home = world.daemon.home.path().display().to_string();
        let (client, mut events) = world.client().await;
        let id = session(&client, &home, &["read", "web_search"], BTreeMap::new()).await;
        world.server.push(Turn::reply().tool_call(
            "s1",
            "web_search",
            json!({"query": "tokio runtime", "recency": "year", "limit": 3}),
        ));
        world.server.push(
            Turn::reply().text("1. Tokio — https://tokio.rs\n   An asynchronous runtime for Rust."),
        );
        world.server.push(Turn::reply().text("Found it."));
        let seen = run(&client, &mut events, &id, "search for tokio").await;
        let (content, is_error, details) = first_result(&seen);
        assert!(!is_error, "{api}: {content}");
        assert!(content.contains("https://tokio.rs"), "{api}: {content}");
        let name = if api == "anthropic-messages" {
            "anthropic"
        } else {
            "openai"
        };
        assert!(
            content.contains(&format!(
                "Results for \"tokio runtime\" ({name} search through scripted/"
            )),
            "{api}: {content}"
        );
        assert_eq!(details["provider"], name);

        // The search request: the provider's own tool and nothing else, the query with its
        // recency and limit.
        let requests = world.server.requests();
        assert_eq!(requests.len(), 3, "{api}");
        let search = &requests[1];
        assert_eq!(search.body["tools"], json!([tool]), "{api}");
        assert!(search.body_text.contains("Query: tokio runtime"), "{api}");
        assert!(
            search.body_text.contains("Only pages from the past year."),
            "{api}"
        );
        assert!(search.body_text.contains("At most 3 results."), "{api}");
        assert!(
            requests[2].body_text.contains("https://tokio.rs"),
            "the model reads the results"
        );

        // The other provider's search is not this model's.
        let other = if name == "anthropic" {
            "openai"
        } else {
            "anthropic"
        };
        world.server.push(Turn::reply().tool_call(
            "s2",
            "web_search",
            json!({"query": "tokio", "provider": other}),
        ));
        world.server.push(Turn::reply().text("Fine."));
        let seen = run(&client, &mut events, &id, "search elsewhere").await;
        let (content, is_error, _) = first_result(&seen);
        assert!(is_error);
        assert!(
            content.contains("Cannot search: the session's model scripted/"),
            "{content}"
        );
        assert!(
            content.contains(&format!("cannot run {other}'s search (its API is {api})")),
            "{content}"
        );
    }

    // A model with no search of its own and no key: what to set, and why not the model.
    let world = World::start("openai-completions").await;
    let home = world.daemon.home.path().display().to_string();
    let (client, mut events) = world.client().await;
    let id = session(&client, &home, &["web_search"], BTreeMap::new()).await;
    world
        .server
        .push(Turn::reply().tool_call("s1", "web_search", json!({"query": "tokio"})));
    world.server.push(Turn::reply().text("No search."));
    let seen = run(&client, &mut events, &id, "search").await;
    let (content, is_error, _) = first_result(&seen);
    assert!(is_error);
    assert!(
        content.contains("web search needs a provider: set BRAVE_API_KEY"),
        "{content}"
    );
    assert!(content.contains("has no search of its own"), "{content}");
}
