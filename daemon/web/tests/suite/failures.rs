//! Fetches that fail before a page: bad URLs, unknown hosts, refused connections, servers
//! that never answer, and cancellation.

use std::sync::Arc;

use axum::Router;
use axum::routing::get;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::{SHORT_TIMEOUT, Server, client, client_with};

#[tokio::test]
async fn urls_must_be_http() {
    let web = client();
    let cancel = CancellationToken::new();
    let cases = [
        (
            "not a url",
            "\"not a url\" is not a valid URL (relative URL without a base); give a full URL such as https://example.com/page",
        ),
        (
            "ftp://files.example.com/a.txt",
            "ftp://files.example.com/a.txt uses the ftp: scheme; only http:// and https:// URLs can be fetched",
        ),
        (
            "file:///etc/passwd",
            "file:///etc/passwd uses the file: scheme; only http:// and https:// URLs can be fetched",
        ),
        (
            "http://",
            "\"http://\" is not a valid URL (empty host); give a full URL such as https://example.com/page",
        ),
    ];
    for (input, expected) in cases {
        let error = web.fetch(input, &cancel).await.unwrap_err();
        assert_eq!(error.to_string(), expected, "{input}");
    }
}

#[tokio::test]
async fn an_unknown_host_is_named() {
    let error = client()
        .fetch("http://pi-web-test.invalid/page", &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "could not resolve the host pi-web-test.invalid; check the spelling of the URL (or this machine's network)"
    );
}

#[tokio::test]
async fn a_refused_connection_names_the_port() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let error = client()
        .fetch(
            &format!("http://127.0.0.1:{port}/"),
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "127.0.0.1:{port} refused the connection; nothing is listening there, check the URL and its port"
        )
    );
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let server = Server::start(Router::new().route(
        "/hang",
        get(|| async {
            std::future::pending::<()>().await;
            "never"
        }),
    ))
    .await;
    let error = client_with(|config| config.timeout = SHORT_TIMEOUT)
        .fetch(&server.url("/hang"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "{} did not answer within 0.3 s; the site is slow or unreachable, try again later",
            server.url("/hang")
        )
    );
}

#[tokio::test]
async fn a_body_that_stalls_times_out() {
    // Ten bytes of a hundred, then silence on an open connection.
    let server = Server::raw(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\nten bytes.",
        true,
    )
    .await;
    let error = client_with(|config| config.timeout = SHORT_TIMEOUT)
        .fetch(&server.url("/stall"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "{} did not answer within 0.3 s; the site is slow or unreachable, try again later",
            server.url("/stall")
        )
    );
}

#[tokio::test]
async fn cancelling_stops_a_fetch_in_flight() {
    let arrived = Arc::new(Notify::new());
    let signal = arrived.clone();
    let server = Server::start(Router::new().route(
        "/hang",
        get(move || {
            signal.notify_one();
            async {
                std::future::pending::<()>().await;
                "never"
            }
        }),
    ))
    .await;
    let web = Arc::new(client());
    let cancel = CancellationToken::new();
    let fetch = tokio::spawn({
        let web = web.clone();
        let cancel = cancel.clone();
        let url = server.url("/hang");
        async move { web.fetch(&url, &cancel).await }
    });
    arrived.notified().await;
    cancel.cancel();
    let error = fetch.await.unwrap().unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("the request to {} was cancelled", server.url("/hang"))
    );

    // An already cancelled token does not reach the network.
    let error = web
        .fetch("http://pi-web-test.invalid/", &cancel)
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "the request to http://pi-web-test.invalid/ was cancelled"
    );
}

#[tokio::test]
async fn a_redirect_to_another_scheme_is_refused() {
    let server = Server::start(Router::new().route(
        "/to-ftp",
        get(|| async { axum::response::Redirect::to("ftp://files.example.com/x") }),
    ))
    .await;
    let error = client()
        .fetch(&server.url("/to-ftp"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "ftp://files.example.com/x uses the ftp: scheme; only http:// and https:// URLs can be fetched"
    );
}
