//! The loopback server an authorization-code login's browser is redirected to
//! (`http://localhost:PORT/PATH?code=…&state=…`): it answers one small page and hands the code
//! over. Only a request carrying the expected `state` counts; anything else gets an error page
//! and the server keeps waiting.

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// The most of a request we read (the request line and headers).
const REQUEST_LIMIT: usize = 16 * 1024;

/// A listening callback server; dropping it stops it.
pub struct CallbackServer {
    codes: mpsc::Receiver<String>,
    task: tokio::task::JoinHandle<()>,
    /// Where it listens.
    pub address: SocketAddr,
}

impl Drop for CallbackServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl CallbackServer {
    /// Listens on `host:port` for `GET path?code=…&state=<expected_state>`. `provider` names
    /// the service on the pages shown.
    pub async fn start(
        host: &str,
        port: u16,
        path: &'static str,
        expected_state: String,
        provider: &'static str,
    ) -> std::io::Result<CallbackServer> {
        let listener = TcpListener::bind((host, port)).await?;
        let address = listener.local_addr()?;
        let (sender, codes) = mpsc::channel(1);
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                if let Some(code) = answer(stream, path, &expected_state, provider).await
                    && sender.send(code).await.is_ok()
                {
                    return;
                }
            }
        });
        Ok(CallbackServer {
            codes,
            task,
            address,
        })
    }

    /// The code, once the browser brought it.
    pub async fn code(&mut self) -> Option<String> {
        self.codes.recv().await
    }
}

/// Reads one request, answers it, and gives the code when it is the expected callback.
async fn answer(
    mut stream: TcpStream,
    path: &str,
    expected_state: &str,
    provider: &str,
) -> Option<String> {
    let mut request = Vec::new();
    let mut buffer = [0u8; 2048];
    while !request.windows(4).any(|window| window == b"\r\n\r\n") {
        let read =
            tokio::time::timeout(std::time::Duration::from_secs(10), stream.read(&mut buffer))
                .await
                .ok()?
                .ok()?;
        if read == 0 || request.len() > REQUEST_LIMIT {
            break;
        }
        request.extend_from_slice(&buffer[..read]);
    }
    let text = String::from_utf8_lossy(&request);
    let target = text
        .lines()
        .next()
        .and_then(|line| line.strip_prefix("GET "))
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_default();
    let url = url::Url::parse(&format!("http://localhost{target}")).ok();
    let (status, page, code) = match url {
        Some(url) if url.path() == path => {
            let query = |name: &str| {
                url.query_pairs()
                    .find(|(key, _)| key == name)
                    .map(|(_, value)| value.into_owned())
            };
            match (query("error"), query("code"), query("state")) {
                (Some(error), _, _) => (
                    "400 Bad Request",
                    page(&format!(
                        "{provider} authentication did not complete: {error}."
                    )),
                    None,
                ),
                (None, Some(code), Some(state)) if state == expected_state => (
                    "200 OK",
                    page(&format!(
                        "{provider} authentication completed. You can close this window."
                    )),
                    Some(code),
                ),
                (None, Some(_), Some(_)) => ("400 Bad Request", page("State mismatch."), None),
                _ => (
                    "400 Bad Request",
                    page("Missing code or state parameter."),
                    None,
                ),
            }
        }
        _ => ("404 Not Found", page("Callback route not found."), None),
    };
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
        page.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
    code
}

fn page(message: &str) -> String {
    let escaped = message
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>pi</title></head>\
         <body style=\"font-family: sans-serif; margin: 3em\"><p>{escaped}</p></body></html>"
    )
}
