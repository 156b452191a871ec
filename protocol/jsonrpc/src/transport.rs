//! What carries a peer's messages: a byte stream cut by a [`Framing`], or a transport that
//! carries whole messages (a WebSocket's text messages).

use std::io;
use std::pin::Pin;

use futures_util::{Sink, SinkExt as _, Stream, StreamExt as _};
use serde_json::Value;
use tokio::io::{
    AsyncBufReadExt as _, AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _, BufReader,
};

use crate::{Framing, PeerConfig};

type Messages = Pin<Box<dyn Stream<Item = io::Result<Vec<u8>>> + Send>>;
type MessageSink = Pin<Box<dyn Sink<Vec<u8>, Error = io::Error> + Send>>;

/// The two directions of a connection to the other side, given to [`crate::Peer::start`].
pub struct Transport {
    pub(crate) reader: Reader,
    pub(crate) writer: Writer,
    // `None`: whole messages, nothing to frame.
    pub(crate) framing: Option<Framing>,
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transport")
            .field("framing", &self.framing)
            .finish_non_exhaustive()
    }
}

impl Transport {
    /// A byte stream: writes go to `input` (the other side's input), reads come from
    /// `output` (its output), messages cut by `framing`.
    pub fn bytes(
        input: impl AsyncWrite + Send + Unpin + 'static,
        output: impl AsyncRead + Send + Unpin + 'static,
        framing: Framing,
    ) -> Transport {
        Transport {
            reader: Reader::Bytes(BufReader::new(Box::new(output)), framing),
            writer: Writer::Bytes(Box::new(input)),
            framing: Some(framing),
        }
    }

    /// A transport of whole messages: `incoming` yields each message's body (its end, or an
    /// error, ends the connection), `outgoing` takes each body and is closed when the peer
    /// is dropped.
    pub fn messages(
        incoming: impl Stream<Item = io::Result<Vec<u8>>> + Send + 'static,
        outgoing: impl Sink<Vec<u8>, Error = io::Error> + Send + 'static,
    ) -> Transport {
        Transport {
            reader: Reader::Messages(Box::pin(incoming)),
            writer: Writer::Messages(Box::pin(outgoing)),
            framing: None,
        }
    }
}

pub(crate) enum Reader {
    Bytes(BufReader<Box<dyn AsyncRead + Send + Unpin>>, Framing),
    Messages(Messages),
}

impl Reader {
    /// The next message (or the error of a body that is not JSON, the framing still intact);
    /// `None` at the end of the stream, on a broken frame, or past the size limit.
    pub(crate) async fn next_message(
        &mut self,
        config: &PeerConfig,
    ) -> Option<Result<Value, serde_json::Error>> {
        loop {
            let body = self.next_body(config).await?;
            if body.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice(&body) {
                Ok(message) => return Some(Ok(message)),
                Err(error) if config.answer_malformed => return Some(Err(error)),
                Err(error) => {
                    tracing::warn!(peer = config.name, %error, "skipped a malformed message");
                }
            }
        }
    }

    async fn next_body(&mut self, config: &PeerConfig) -> Option<Vec<u8>> {
        let too_big = |length: usize| {
            tracing::warn!(
                peer = config.name,
                length,
                "a message over the size limit ended the connection"
            );
        };
        match self {
            Reader::Messages(messages) => {
                let body = messages.next().await?.ok()?;
                if body.len() > config.max_message {
                    too_big(body.len());
                    return None;
                }
                Some(body)
            }
            Reader::Bytes(reader, Framing::Lines) => {
                let mut line = Vec::new();
                let limit = u64::try_from(config.max_message).unwrap_or(u64::MAX);
                let read = (&mut *reader)
                    .take(limit.saturating_add(1))
                    .read_until(b'\n', &mut line)
                    .await
                    .ok()?;
                if read == 0 {
                    return None;
                }
                if line.last() != Some(&b'\n') && line.len() > config.max_message {
                    too_big(line.len());
                    return None;
                }
                Some(line)
            }
            Reader::Bytes(reader, Framing::ContentLength) => {
                let mut length: Option<usize> = None;
                let mut header = String::new();
                loop {
                    header.clear();
                    if reader.read_line(&mut header).await.ok()? == 0 {
                        return None;
                    }
                    let header = header.trim_end();
                    if header.is_empty() {
                        break;
                    }
                    if let Some((name, value)) = header.split_once(':')
                        && name.eq_ignore_ascii_case("content-length")
                    {
                        length = value.trim().parse().ok();
                    }
                }
                let length = length?;
                if length > config.max_message {
                    too_big(length);
                    return None;
                }
                let mut body = vec![0u8; length];
                reader.read_exact(&mut body).await.ok()?;
                Some(body)
            }
        }
    }
}

pub(crate) enum Writer {
    Bytes(Box<dyn AsyncWrite + Send + Unpin>),
    Messages(MessageSink),
}

impl Writer {
    /// Writes one framed message and flushes it.
    pub(crate) async fn write(&mut self, bytes: Vec<u8>) -> io::Result<()> {
        match self {
            Writer::Bytes(input) => {
                input.write_all(&bytes).await?;
                input.flush().await
            }
            Writer::Messages(sink) => sink.send(bytes).await,
        }
    }

    /// Ends the connection's writing side (a WebSocket's close message); a byte stream is
    /// closed when it is dropped.
    pub(crate) async fn close(&mut self) {
        if let Writer::Messages(sink) = self {
            let _ = sink.close().await;
        }
    }
}
