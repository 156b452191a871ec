//! Shared harness: an axum server on a free loopback port, a raw TCP server for responses
//! axum will not write (a body that stalls, a body without a length), and clients.

mod failures;
mod fetch;
mod search;
mod tls;

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use pi_web::{WebClient, WebConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// A server for the test's life: aborted when dropped.
pub struct Server {
    address: SocketAddr,
    task: JoinHandle<()>,
}

impl Server {
    /// Serves `router` on a free loopback port.
    pub async fn start(router: Router) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Server { address, task }
    }

    /// Answers every connection with `response` as it is, then keeps the connection open
    /// (and silent) until the test ends when `hold` is set, or closes it.
    pub async fn raw(response: &'static [u8], hold: bool) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            let mut held = Vec::new();
            loop {
                let Ok((mut socket, _)) = listener.accept().await else {
                    return;
                };
                // Read the request head before answering.
                let mut request = Vec::new();
                let mut buffer = [0_u8; 1024];
                while !request.windows(4).any(|window| window == b"\r\n\r\n") {
                    match socket.read(&mut buffer).await {
                        Ok(0) | Err(_) => break,
                        Ok(read) => request.extend_from_slice(&buffer[..read]),
                    }
                }
                let _ = socket.write_all(response).await;
                if hold {
                    held.push(socket);
                } else {
                    let _ = socket.shutdown().await;
                }
            }
        });
        Server { address, task }
    }

    /// `http://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A client with the default configuration.
pub fn client() -> WebClient {
    WebClient::new(WebConfig::default()).unwrap()
}

/// A client with `change` applied to the default configuration.
pub fn client_with(change: impl FnOnce(&mut WebConfig)) -> WebClient {
    let mut config = WebConfig::default();
    change(&mut config);
    WebClient::new(config).unwrap()
}

/// The short timeout of the tests that wait for one.
pub const SHORT_TIMEOUT: Duration = Duration::from_millis(300);
