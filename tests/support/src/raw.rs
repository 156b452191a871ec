//! [`RawConnection`]: a Unix socket connection that sends arbitrary bytes and reads JSON lines,
//! for tests of malformed input that a well-behaved client cannot produce.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

/// How long a raw read waits for the daemon.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// A line-oriented connection with no client library in between.
#[derive(Debug)]
pub struct RawConnection {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
}

impl RawConnection {
    /// Connects to the socket at `path`.
    pub async fn connect(path: &Path) -> RawConnection {
        let stream = UnixStream::connect(path).await.unwrap();
        let (read, write) = stream.into_split();
        RawConnection {
            reader: BufReader::new(read),
            writer: write,
        }
    }

    /// Connects and performs `initialize`.
    pub async fn initialized(path: &Path) -> RawConnection {
        let mut connection = RawConnection::connect(path).await;
        let response = connection
            .request(serde_json::json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": pi_protocol::PROTOCOL_VERSION, "clientInfo": {"name": "raw", "version": "0"}}
            }))
            .await;
        assert!(
            response.get("result").is_some(),
            "initialize failed: {response}"
        );
        connection
    }

    /// Writes `bytes` as they are (add the newline yourself).
    pub async fn send_bytes(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).await.unwrap();
    }

    /// Writes `bytes` as they are; an error means the daemon closed the connection (e.g. in
    /// the middle of an oversized message).
    pub async fn try_send_bytes(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.writer.write_all(bytes).await
    }

    /// Writes one JSON value as a line.
    pub async fn send(&mut self, value: &Value) {
        let mut text = value.to_string();
        text.push('\n');
        self.send_bytes(text.as_bytes()).await;
    }

    /// Sends a request and reads the next message.
    pub async fn request(&mut self, value: Value) -> Value {
        self.send(&value).await;
        self.read().await.expect("the daemon answered")
    }

    /// Closes the write side and waits until the daemon has closed the connection.
    pub async fn close(mut self) {
        self.writer.shutdown().await.unwrap();
        while self.read().await.is_some() {}
    }

    /// Reads the next JSON line; `None` when the daemon closed the connection.
    pub async fn read(&mut self) -> Option<Value> {
        let line = self.read_line().await?;
        Some(serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}")))
    }

    /// Reads the next line as the daemon wrote it (byte-level checks); `None` when the daemon
    /// closed the connection.
    pub async fn read_line(&mut self) -> Option<String> {
        let mut line = String::new();
        let read = tokio::time::timeout(READ_TIMEOUT, self.reader.read_line(&mut line))
            .await
            .expect("the daemon answered in time");
        match read {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line),
        }
    }
}
