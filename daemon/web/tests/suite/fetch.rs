//! Pages fetched and converted by content type, redirects, size limits and the cache.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect};
use axum::routing::get;
use tokio_util::sync::CancellationToken;

use super::{Server, client, client_with};

const PAGE: &str = r#"<!DOCTYPE html>
<html><head><title>The Test Page</title>
<meta charset="utf-8"><style>.a { color: red }</style>
<script>var leaked = "script text";</script></head>
<body>
<nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<h1>Main heading</h1>
<p>Some <strong>bold</strong> text and <a href="/docs/intro">a relative link</a>.</p>
<h2>Lists</h2>
<ul><li>apple</li><li>banana</li></ul>
<ol><li>first</li><li>second</li></ol>
<h2>Code</h2>
<pre><code class="language-rust">fn main() {
    println!("hi");
}
</code></pre>
<noscript>Enable JavaScript</noscript>
<svg><text>svg text</text></svg>
<script>document.write("more script text")</script>
</body></html>"#;

#[tokio::test]
async fn html_becomes_markdown() {
    let server = Server::start(Router::new().route("/page", get(|| async { Html(PAGE) }))).await;
    let page = client()
        .fetch(&server.url("/page"), &CancellationToken::new())
        .await
        .unwrap();
    let origin = server.url("");
    assert_eq!(
        page.text,
        format!(
            "# The Test Page\n\n\
             # Main heading\n\n\
             Some **bold** text and [a relative link]({origin}/docs/intro).\n\n\
             ## Lists\n\n\
             - apple\n\
             - banana\n\n\
             1. first\n\
             2. second\n\n\
             ## Code\n\n\
             ```rust\n\
             fn main() {{\n    println!(\"hi\");\n}}\n\
             ```"
        )
    );
    assert_eq!(page.content_type, "text/html");
    assert_eq!(page.status, 200);
    assert_eq!(page.url, server.url("/page"));
    assert_eq!(page.requested_url, server.url("/page"));
    assert_eq!(page.notes, ["Converted from HTML to Markdown."]);
    assert_eq!(page.bytes, PAGE.len() as u64);
}

#[tokio::test]
async fn json_is_pretty_printed_in_its_order() {
    let server = Server::start(Router::new().route(
        "/data.json",
        get(|| async {
            (
                [(header::CONTENT_TYPE, "application/json")],
                r#"{"zeta":1,"alpha":[true,null],"nested":{"b":"x","a":2}}"#,
            )
        }),
    ))
    .await;
    let page = client()
        .fetch(&server.url("/data.json"), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        page.text,
        "{\n  \"zeta\": 1,\n  \"alpha\": [\n    true,\n    null\n  ],\n  \"nested\": {\n    \"b\": \"x\",\n    \"a\": 2\n  }\n}"
    );
    assert_eq!(page.content_type, "application/json");
    assert!(page.notes.is_empty(), "{:?}", page.notes);
}

#[tokio::test]
async fn invalid_json_is_shown_as_received_with_a_note() {
    let server = Server::start(Router::new().route(
        "/broken.json",
        get(|| async { ([(header::CONTENT_TYPE, "application/json")], "{\"a\": ") }),
    ))
    .await;
    let page = client()
        .fetch(&server.url("/broken.json"), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(page.text, "{\"a\": ");
    assert_eq!(
        page.notes,
        ["Not valid JSON (EOF while parsing a value at line 1 column 6); shown as received."]
    );
}

use pi_test_support::documents::pdf;

#[tokio::test]
async fn pdf_text_is_extracted() {
    let body = pdf(&["Hello from a PDF", "Second page text"]);
    let server = Server::start(Router::new().route(
        "/paper.pdf",
        get(move || async move { ([(header::CONTENT_TYPE, "application/pdf")], body) }),
    ))
    .await;
    let page = client()
        .fetch(&server.url("/paper.pdf"), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(page.text, "Hello from a PDF\n\nSecond page text");
    assert_eq!(page.content_type, "application/pdf");
    assert_eq!(
        page.notes,
        ["Text extracted from a PDF of 2 pages; layout and images are lost."]
    );
}

#[tokio::test]
async fn a_broken_pdf_is_a_conversion_error() {
    let server = Server::start(Router::new().route(
        "/broken.pdf",
        get(|| async {
            (
                [(header::CONTENT_TYPE, "application/pdf")],
                "%PDF-1.4\nnot really",
            )
        }),
    ))
    .await;
    let error = client()
        .fetch(&server.url("/broken.pdf"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "could not read {} as PDF: PDF error: failed parsing cross reference table: invalid start value",
            server.url("/broken.pdf")
        )
    );
}

#[tokio::test]
async fn a_pdf_without_text_says_so() {
    let body = pdf(&[""]);
    let server = Server::start(Router::new().route(
        "/scan.pdf",
        get(move || async move { ([(header::CONTENT_TYPE, "application/pdf")], body) }),
    ))
    .await;
    let error = client()
        .fetch(&server.url("/scan.pdf"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "could not read {} as PDF: it has no text to extract (its pages may be scanned images)",
            server.url("/scan.pdf")
        )
    );
}

#[tokio::test]
async fn text_is_kept_and_binary_refused() {
    let server = Server::start(
        Router::new()
            .route("/notes.txt", get(|| async { "line one\nline two\n" }))
            .route(
                "/latin1.html",
                get(|| async {
                    (
                        [(header::CONTENT_TYPE, "text/html")],
                        b"<html><head><meta charset=\"iso-8859-1\"></head><body><p>caf\xe9</p></body></html>"
                            .as_slice(),
                    )
                }),
            )
            .route(
                "/logo.png",
                get(|| async {
                    (
                        [(header::CONTENT_TYPE, "image/png")],
                        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".as_slice(),
                    )
                }),
            ),
    )
    .await;
    let web = client();
    let cancel = CancellationToken::new();
    let text = web.fetch(&server.url("/notes.txt"), &cancel).await.unwrap();
    assert_eq!(text.text, "line one\nline two\n");
    assert_eq!(text.content_type, "text/plain");
    assert!(text.notes.is_empty());

    let latin1 = web
        .fetch(&server.url("/latin1.html"), &cancel)
        .await
        .unwrap();
    assert_eq!(latin1.text, "café");
    assert_eq!(
        latin1.notes,
        [
            "Decoded from windows-1252.",
            "Converted from HTML to Markdown."
        ]
    );

    let error = web
        .fetch(&server.url("/logo.png"), &cancel)
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "{} is image/png, which cannot be read as text",
            server.url("/logo.png")
        )
    );
}

#[tokio::test]
async fn redirects_are_followed_and_noted() {
    let server = Server::start(
        Router::new()
            .route("/old", get(|| async { Redirect::permanent("/older") }))
            .route("/older", get(|| async { Redirect::temporary("new/page") }))
            .route("/new/page", get(|| async { "arrived" })),
    )
    .await;
    let page = client()
        .fetch(&server.url("/old"), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(page.text, "arrived");
    assert_eq!(page.url, server.url("/new/page"));
    assert_eq!(page.requested_url, server.url("/old"));
    assert_eq!(
        page.notes,
        [
            format!(
                "Redirected (308) from {} to {}.",
                server.url("/old"),
                server.url("/older")
            ),
            format!(
                "Redirected (307) from {} to {}.",
                server.url("/older"),
                server.url("/new/page")
            ),
        ]
    );
}

#[tokio::test]
async fn a_redirect_loop_is_named() {
    let server = Server::start(
        Router::new()
            .route("/a", get(|| async { Redirect::to("/b") }))
            .route("/b", get(|| async { Redirect::to("/a") })),
    )
    .await;
    let error = client()
        .fetch(&server.url("/a"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "{} redirects in a loop (back to {}); the page cannot be fetched without a browser",
            server.url("/a"),
            server.url("/a")
        )
    );
}

#[tokio::test]
async fn too_many_redirects_stop_at_the_limit() {
    let hops = Arc::new(AtomicUsize::new(0));
    let counted = hops.clone();
    let server = Server::start(Router::new().route(
        "/hop/{n}",
        get(move |axum::extract::Path(n): axum::extract::Path<u32>| {
            counted.fetch_add(1, Ordering::SeqCst);
            async move { Redirect::to(&format!("/hop/{}", n + 1)) }
        }),
    ))
    .await;
    let error = client_with(|config| config.max_redirects = 3)
        .fetch(&server.url("/hop/0"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "{} redirected more than 3 times; the chain of redirects does not end, fetch its last URL directly if it is right",
            server.url("/hop/0")
        )
    );
    assert_eq!(hops.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn an_error_status_quotes_the_start_of_the_page() {
    let server = Server::start(Router::new().route(
        "/missing",
        get(|| async {
            (
                StatusCode::NOT_FOUND,
                Html(
                    "<html><head><title>Missing</title><script>x()</script></head>\
                     <body><h1>Not here</h1><p>The page you want is gone.</p></body></html>",
                ),
            )
        }),
    ))
    .await;
    let error = client()
        .fetch(&server.url("/missing"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "{} answered HTTP 404 Not Found: \"Missing Not here The page you want is gone.\"",
            server.url("/missing")
        )
    );
}

#[tokio::test]
async fn an_error_status_without_a_body_says_so_briefly() {
    let server = Server::start(Router::new().route(
        "/teapot",
        get(|| async { StatusCode::SERVICE_UNAVAILABLE.into_response() }),
    ))
    .await;
    let error = client()
        .fetch(&server.url("/teapot"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "{} answered HTTP 503 Service Unavailable",
            server.url("/teapot")
        )
    );
}

#[tokio::test]
async fn a_declared_body_over_the_limit_is_refused() {
    let server =
        Server::start(Router::new().route("/big", get(|| async { "x".repeat(2000) }))).await;
    let error = client_with(|config| config.max_bytes = 1024)
        .fetch(&server.url("/big"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "{} is larger than the 1 KiB limit (it declares 1.9 KiB); nothing was kept, fetch a smaller page",
            server.url("/big")
        )
    );
}

#[tokio::test]
async fn an_undeclared_body_over_the_limit_is_refused_while_read() {
    // No Content-Length: the body ends when the connection closes.
    static RESPONSE: std::sync::LazyLock<&'static [u8]> = std::sync::LazyLock::new(|| {
        let mut response =
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n".to_vec();
        response.extend(std::iter::repeat_n(b'y', 5000));
        response.leak()
    });
    let server = Server::raw(&RESPONSE, false).await;
    let error = client_with(|config| config.max_bytes = 1000)
        .fetch(&server.url("/stream"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "{} is larger than the 1000 bytes limit; nothing was kept, fetch a smaller page",
            server.url("/stream")
        )
    );
}

#[tokio::test]
async fn a_page_is_served_from_the_cache_while_fresh() {
    let requests = Arc::new(AtomicUsize::new(0));
    let counted = requests.clone();
    let server = Server::start(
        Router::new()
            .route(
                "/long",
                get(move || {
                    let n = counted.fetch_add(1, Ordering::SeqCst) + 1;
                    async move { format!("fetch number {n}") }
                }),
            )
            .route("/other", get(|| async { "other" })),
    )
    .await;
    let web = client();
    let cancel = CancellationToken::new();
    let first = web.fetch(&server.url("/long"), &cancel).await.unwrap();
    let second = web
        .fetch(&server.url("/long#part-2"), &cancel)
        .await
        .unwrap();
    assert_eq!(second.text, "fetch number 1");
    assert!(Arc::ptr_eq(&first, &second));
    web.fetch(&server.url("/other"), &cancel).await.unwrap();
    assert_eq!(requests.load(Ordering::SeqCst), 1);

    let uncached = client_with(|config| config.cache_entries = 0);
    uncached.fetch(&server.url("/long"), &cancel).await.unwrap();
    let again = uncached.fetch(&server.url("/long"), &cancel).await.unwrap();
    assert_eq!(again.text, "fetch number 3");
}
