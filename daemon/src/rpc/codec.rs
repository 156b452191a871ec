//! Newline-delimited framing for the Unix socket: one JSON message per line.
//!
//! Lines are split on LF only; a trailing CR is dropped; blank lines are skipped; a last line
//! without LF at end of stream still counts. A message longer than the cap is an error the
//! connection answers and then closes on, and the codec never buffers more than the cap.
//!
//! Buffers shrink back after a big message. A line is a slice of the read buffer's allocation,
//! and `BytesMut` reuses a whole allocation once nothing else refers to it, so one 10 MB
//! message would otherwise keep 10 MB or more for the rest of the connection: after a line over
//! [`RELEASE_ABOVE_BYTES`] the decoder moves what follows it into a fresh small buffer, and
//! [`LineSink`] does the same for the write buffer once a big message is flushed.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::{Bytes, BytesMut};
use futures_util::Sink;
use tokio::io::AsyncWrite;
use tokio_util::codec::{Decoder, Encoder, FramedWrite};

/// A message bigger than this gives its buffer's memory back once it is through.
pub const RELEASE_ABOVE_BYTES: usize = 64 * 1024;
/// What a fresh read buffer holds (tokio-util's initial capacity).
const FRESH_BUFFER_BYTES: usize = 8 * 1024;
/// A write buffer at most this big is kept once emptied; a bigger one is let go (a thousand
/// connections that each had a burst hold none of it).
const KEPT_WRITE_BUFFER_BYTES: usize = 4 * 1024;
/// What a connection's write buffer starts with.
const INITIAL_WRITE_BUFFER_BYTES: usize = 1024;

/// Splits lines out of a byte stream, up to `max_bytes` each.
#[derive(Debug)]
pub struct LineCodec {
    max_bytes: usize,
    // Invariant: bytes before this index in the buffer contain no LF.
    scanned: usize,
}

/// Why a frame could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The peer sent a message over the size cap.
    #[error("message exceeds the {limit}-byte limit")]
    TooLarge {
        /// The cap in bytes.
        limit: usize,
    },
    /// The transport failed.
    #[error("transport error: {0}")]
    Io(#[from] std::io::Error),
}

impl LineCodec {
    /// A codec that refuses lines over `max_bytes`.
    pub fn new(max_bytes: usize) -> Self {
        LineCodec {
            max_bytes,
            scanned: 0,
        }
    }
}

impl Decoder for LineCodec {
    type Item = Bytes;
    type Error = FrameError;

    fn decode(&mut self, buffer: &mut BytesMut) -> Result<Option<Bytes>, FrameError> {
        loop {
            let Some(offset) = buffer[self.scanned..].iter().position(|&b| b == b'\n') else {
                self.scanned = buffer.len();
                if buffer.len() > self.max_bytes {
                    return Err(FrameError::TooLarge {
                        limit: self.max_bytes,
                    });
                }
                return Ok(None);
            };
            let newline = self.scanned + offset;
            self.scanned = 0;
            if newline > self.max_bytes {
                return Err(FrameError::TooLarge {
                    limit: self.max_bytes,
                });
            }
            let mut line = buffer.split_to(newline + 1);
            line.truncate(newline);
            if newline > RELEASE_ABOVE_BYTES && buffer.len() <= RELEASE_ABOVE_BYTES {
                // The rest of the buffer still points into the big allocation; a copy of it
                // lets the allocation go with the line.
                let mut fresh = BytesMut::with_capacity(FRESH_BUFFER_BYTES.max(buffer.len()));
                fresh.extend_from_slice(buffer);
                *buffer = fresh;
            }
            if line.last() == Some(&b'\r') {
                line.truncate(line.len() - 1);
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            return Ok(Some(line.freeze()));
        }
    }

    fn decode_eof(&mut self, buffer: &mut BytesMut) -> Result<Option<Bytes>, FrameError> {
        if let Some(line) = self.decode(buffer)? {
            return Ok(Some(line));
        }
        self.scanned = 0;
        if buffer.iter().all(u8::is_ascii_whitespace) {
            buffer.clear();
            return Ok(None);
        }
        let mut line = buffer.split();
        if line.last() == Some(&b'\r') {
            line.truncate(line.len() - 1);
        }
        Ok(Some(line.freeze()))
    }
}

impl Encoder<Bytes> for LineCodec {
    type Error = std::io::Error;

    fn encode(&mut self, message: Bytes, buffer: &mut BytesMut) -> Result<(), std::io::Error> {
        buffer.reserve(message.len() + 1);
        buffer.extend_from_slice(&message);
        buffer.extend_from_slice(b"\n");
        Ok(())
    }
}

/// A line writer (`FramedWrite` with [`LineCodec`]) that lets its write buffer's memory go
/// after it flushed a message over [`RELEASE_ABOVE_BYTES`].
#[derive(Debug)]
pub struct LineSink<W> {
    inner: FramedWrite<W, LineCodec>,
    // Set when a big message entered the write buffer; cleared when the buffer is replaced.
    wrote_big: bool,
}

impl<W: AsyncWrite + Unpin> LineSink<W> {
    /// Writes lines to `writer`, refusing none (the daemon's own messages), buffering up to
    /// `backpressure_bytes` before it writes.
    pub fn new(writer: W, max_bytes: usize, backpressure_bytes: usize) -> Self {
        // A small buffer to start with: most connections are quiet most of the time.
        let mut inner = FramedWrite::with_capacity(
            writer,
            LineCodec::new(max_bytes),
            INITIAL_WRITE_BUFFER_BYTES,
        );
        inner.set_backpressure_boundary(backpressure_bytes);
        LineSink {
            inner,
            wrote_big: false,
        }
    }

    #[cfg(test)]
    fn write_buffer(&mut self) -> &mut BytesMut {
        self.inner.write_buffer_mut()
    }
}

impl<W: AsyncWrite + Unpin> Sink<Bytes> for LineSink<W> {
    type Error = std::io::Error;

    fn poll_ready(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_ready(cx)
    }

    fn start_send(mut self: Pin<&mut Self>, message: Bytes) -> std::io::Result<()> {
        self.wrote_big |= message.len() > RELEASE_ABOVE_BYTES;
        Pin::new(&mut self.inner).start_send(message)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        ready!(Pin::new(&mut self.inner).poll_flush(cx))?;
        // An emptied buffer that grew (a big message, or a burst) lets its memory go: a
        // thousand quiet connections hold none.
        let buffer = self.inner.write_buffer();
        if buffer.is_empty() && (self.wrote_big || buffer.capacity() > KEPT_WRITE_BUFFER_BYTES) {
            *self.inner.write_buffer_mut() = BytesMut::new();
            self.wrote_big = false;
        }
        Poll::Ready(Ok(()))
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_close(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(input: &[u8], max: usize) -> Vec<Result<String, String>> {
        let mut codec = LineCodec::new(max);
        let mut buffer = BytesMut::from(input);
        let mut out = Vec::new();
        loop {
            match codec.decode(&mut buffer) {
                Ok(Some(line)) => out.push(Ok(String::from_utf8_lossy(&line).into_owned())),
                Ok(None) => break,
                Err(error) => {
                    out.push(Err(error.to_string()));
                    return out;
                }
            }
        }
        if let Ok(Some(line)) = codec.decode_eof(&mut buffer) {
            out.push(Ok(String::from_utf8_lossy(&line).into_owned()));
        }
        out
    }

    #[test]
    fn splits_on_lf_only_and_keeps_u2028() {
        let input = "{\"a\":\"x\u{2028}y\"}\r\n\n{\"b\":1}\n{\"c\":2}".as_bytes();
        assert_eq!(
            decode_all(input, 1024),
            vec![
                Ok("{\"a\":\"x\u{2028}y\"}".to_owned()),
                Ok("{\"b\":1}".to_owned()),
                Ok("{\"c\":2}".to_owned())
            ]
        );
    }

    #[test]
    fn oversized_line_is_an_error_even_before_its_newline() {
        let long = vec![b'x'; 100];
        assert_eq!(
            decode_all(&long, 50),
            vec![Err("message exceeds the 50-byte limit".to_owned())]
        );
        let mut with_newline = long.clone();
        with_newline.push(b'\n');
        assert_eq!(
            decode_all(&with_newline, 50),
            vec![Err("message exceeds the 50-byte limit".to_owned())]
        );
    }

    #[test]
    fn the_read_buffer_lets_a_big_message_go() {
        let mut codec = LineCodec::new(4 << 20);
        let mut buffer = BytesMut::new();
        buffer.extend_from_slice(&vec![b'x'; 1 << 20]);
        buffer.extend_from_slice(b"\n{\"next\":");
        let line = codec.decode(&mut buffer).unwrap().unwrap();
        assert_eq!(line.len(), 1 << 20);
        drop(line);
        // What followed the line is still there, in a buffer of its own: the megabyte is gone
        // (reusing it would need no allocation).
        assert_eq!(&buffer[..], b"{\"next\":");
        assert!(!buffer.try_reclaim(1 << 20));
        buffer.extend_from_slice(b"1}\n");
        assert_eq!(
            codec.decode(&mut buffer).unwrap().unwrap(),
            Bytes::from_static(b"{\"next\":1}")
        );

        // Small lines keep using the buffer they came in.
        let mut buffer = BytesMut::with_capacity(1 << 20);
        buffer.extend_from_slice(b"{}\n");
        drop(codec.decode(&mut buffer).unwrap());
        assert!(buffer.try_reclaim(1 << 19));
    }

    #[tokio::test]
    async fn the_write_buffer_lets_a_big_message_go() {
        use futures_util::SinkExt as _;
        let mut sink = LineSink::new(tokio::io::sink(), 4 << 20, 64 * 1024);
        sink.send(Bytes::from_static(b"{}")).await.unwrap();
        assert!(
            sink.write_buffer().try_reclaim(1024),
            "a small write keeps its buffer"
        );
        sink.send(Bytes::from(vec![b'x'; 1 << 20])).await.unwrap();
        assert!(sink.write_buffer().is_empty());
        assert!(!sink.write_buffer().try_reclaim(1 << 20));
    }

    #[test]
    fn partial_input_waits_for_the_rest() {
        let mut codec = LineCodec::new(1024);
        let mut buffer = BytesMut::from(&b"{\"a\""[..]);
        assert!(codec.decode(&mut buffer).unwrap().is_none());
        buffer.extend_from_slice(b":1}\n");
        assert_eq!(
            codec.decode(&mut buffer).unwrap().unwrap(),
            Bytes::from_static(b"{\"a\":1}")
        );
    }
}
