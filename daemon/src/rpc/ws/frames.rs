//! WebSocket framing (RFC 6455), the server's side of an upgraded connection: complete text and
//! binary messages in, text messages out, pings answered, the closing handshake, and close codes
//! that tell the peer why (1007 invalid UTF-8, 1009 too big, 1002 a protocol error).
//!
//! tungstenite's `FrameHeader` parses and writes frame headers; this module owns the buffers and
//! the close codes. That is why it exists (`docs/decisions/0012-own-websocket-framing.md`):
//! tungstenite's read buffer keeps the allocation of the largest message it ever read for the
//! connection's life, and it ends the stream on invalid UTF-8 without a close frame. Here the
//! read buffer and the write buffer give a message over [`RELEASE_ABOVE_BYTES`] back once it is
//! through, as the Unix socket's codec does.
//!
//! The reading half answers pings and closes, so both halves write. They share the writing half
//! and one output buffer behind a sync mutex, which is held only inside `poll` calls and never
//! across an await; frames are appended whole, so they never interleave. The socket keeps one
//! waker for writing, so the halves poll it with a waker that wakes both.

use std::future::poll_fn;
use std::io::Cursor;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker, ready};

use bytes::{Buf as _, BufMut as _, Bytes, BytesMut};
use futures_util::Sink;
use futures_util::task::AtomicWaker;
use tokio::io::{AsyncRead, AsyncWrite};
use tungstenite::protocol::frame::FrameHeader;
use tungstenite::protocol::frame::coding::{CloseCode, Control, Data, OpCode};

use crate::rpc::codec::{FrameError, RELEASE_ABOVE_BYTES};
use crate::rpc::connection::{FrameSink, FrameStream};

/// What a fresh read buffer holds.
const FRESH_BUFFER_BYTES: usize = 8 * 1024;
/// How much the writer buffers before `poll_ready` writes it out.
const WRITE_BUFFER_BYTES: usize = 64 * 1024;
/// Output waiting beyond which the reading half answers no more pings (a peer that pings
/// without reading would otherwise grow the buffer without bound).
const PONG_BACKLOG_BYTES: usize = 2 * WRITE_BUFFER_BYTES;
/// The longest payload of a control frame.
const MAX_CONTROL_PAYLOAD: usize = 125;

/// Splits an upgraded connection into the message stream and the sink the connection loop
/// uses. `read_ahead` is what the HTTP server read past the upgrade request.
pub fn split<R, W>(
    read: R,
    write: W,
    read_ahead: Bytes,
    max_message_bytes: usize,
) -> (FrameStream, FrameSink)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let wakers = Arc::new(WriteWakers::default());
    let shared = Arc::new(Shared {
        proxy: Waker::from(wakers.clone()),
        wakers,
        state: Mutex::new(WriteState {
            io: Box::pin(write),
            out: BytesMut::new(),
            wrote_big: false,
            close_sent: false,
            failure: None,
        }),
    });
    let reader = Reader::new(read, read_ahead, shared.clone(), max_message_bytes);
    let incoming = futures_util::stream::unfold(reader, |mut reader| async move {
        let item = reader.next_message().await?;
        Some((item, reader))
    });
    (Box::pin(incoming), Box::pin(Writer { shared }))
}

type BoxedWrite = Pin<Box<dyn AsyncWrite + Send>>;

/// What both halves share: the writing half and its output.
struct Shared {
    // A sync mutex, held only inside one `poll` of the socket, never across an await.
    state: Mutex<WriteState>,
    wakers: Arc<WriteWakers>,
    // Wakes both halves; the one waker the socket gets for writing.
    proxy: Waker,
}

struct WriteState {
    io: BoxedWrite,
    // Whole frames waiting to be written, in order.
    out: BytesMut,
    // Set when a frame over `RELEASE_ABOVE_BYTES` entered `out`; the buffer is replaced once
    // it is written.
    wrote_big: bool,
    // Set once a close frame is in `out`: the closing handshake allows nothing after it.
    close_sent: bool,
    // Why the reading half failed the connection; the close frame says so.
    failure: Option<(CloseCode, &'static str)>,
}

#[derive(Default)]
struct WriteWakers {
    reader: AtomicWaker,
    writer: AtomicWaker,
}

impl Wake for WriteWakers {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.reader.wake();
        self.writer.wake();
    }
}

/// Which half polls the writing half.
#[derive(Clone, Copy)]
enum Half {
    Reader,
    Writer,
}

impl Shared {
    /// Runs `f` on the write state with a context whose waker wakes both halves.
    fn poll_state<T>(
        &self,
        half: Half,
        cx: &Context<'_>,
        f: impl FnOnce(&mut WriteState, &mut Context<'_>) -> Poll<std::io::Result<T>>,
    ) -> Poll<std::io::Result<T>> {
        match half {
            Half::Reader => self.wakers.reader.register(cx.waker()),
            Half::Writer => self.wakers.writer.register(cx.waker()),
        }
        let mut proxy = Context::from_waker(&self.proxy);
        match self.state.lock() {
            Ok(mut state) => f(&mut state, &mut proxy),
            Err(_) => Poll::Ready(Err(std::io::Error::other("the WebSocket writer panicked"))),
        }
    }

    /// Runs `f` on the write state without writing.
    fn with_state(&self, f: impl FnOnce(&mut WriteState)) {
        f(&mut self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner));
    }
}

impl WriteState {
    /// Appends one unfragmented, unmasked frame.
    fn push(&mut self, opcode: OpCode, payload: &[u8]) {
        let header = FrameHeader {
            is_final: true,
            opcode,
            mask: None,
            ..FrameHeader::default()
        };
        let length = payload.len() as u64;
        self.out.reserve(header.len(length) + payload.len());
        // Writing into a `BytesMut` cannot fail.
        let _ = header.format(length, &mut (&mut self.out).writer());
        self.out.extend_from_slice(payload);
        self.wrote_big |= payload.len() > RELEASE_ABOVE_BYTES;
    }

    /// Appends the close frame, once: `code` and `reason`, or an empty payload.
    fn push_close(&mut self, code: Option<CloseCode>, reason: &str) {
        if self.close_sent {
            return;
        }
        let mut payload = Vec::with_capacity(2 + reason.len());
        if let Some(code) = code {
            payload.extend_from_slice(&u16::from(code).to_be_bytes());
            payload.extend_from_slice(reason.as_bytes());
        }
        self.push(OpCode::Control(Control::Close), &payload);
        self.close_sent = true;
    }

    /// Writes `out` to the socket; ready once all of it is written.
    fn poll_write_out(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        while !self.out.is_empty() {
            let written = ready!(self.io.as_mut().poll_write(cx, &self.out))?;
            if written == 0 {
                return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
            }
            self.out.advance(written);
        }
        if self.wrote_big {
            self.out = BytesMut::new();
            self.wrote_big = false;
        }
        Poll::Ready(Ok(()))
    }
}

/// The sink of outgoing messages: each is one text frame (they are serialized JSON, so UTF-8).
struct Writer {
    shared: Arc<Shared>,
}

impl Sink<Bytes> for Writer {
    type Error = std::io::Error;

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.shared.poll_state(Half::Writer, cx, |state, cx| {
            if state.out.len() >= WRITE_BUFFER_BYTES {
                ready!(state.poll_write_out(cx))?;
            }
            Poll::Ready(Ok(()))
        })
    }

    fn start_send(self: Pin<&mut Self>, message: Bytes) -> std::io::Result<()> {
        // After a close frame nothing may follow; what the connection still sends is dropped.
        self.shared.with_state(|state| {
            if !state.close_sent {
                state.push(OpCode::Data(Data::Text), &message);
            }
        });
        Ok(())
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.shared.poll_state(Half::Writer, cx, |state, cx| {
            ready!(state.poll_write_out(cx))?;
            state.io.as_mut().poll_flush(cx)
        })
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.shared.poll_state(Half::Writer, cx, |state, cx| {
            match state.failure {
                Some((code, reason)) => state.push_close(Some(code), reason),
                None => state.push_close(Some(CloseCode::Normal), ""),
            }
            ready!(state.poll_write_out(cx))?;
            state.io.as_mut().poll_shutdown(cx)
        })
    }
}

/// Why the reading half fails the connection.
#[derive(Debug, PartialEq, Eq)]
enum Failure {
    /// A frame RFC 6455 forbids (1002); says which rule.
    Protocol(&'static str),
    /// A text message that is not UTF-8 (1007).
    InvalidUtf8,
    /// A message over the size limit (1009).
    TooBig,
}

/// The reading half: frames in, complete messages out.
struct Reader<R> {
    io: R,
    // Bytes read and not yet consumed; starts with what the HTTP server read ahead.
    buffer: BytesMut,
    shared: Arc<Shared>,
    max_message_bytes: usize,
    // The fragments of a message that has not ended yet, and whether it is text.
    partial: Option<(bool, BytesMut)>,
    // Set when the stream has ended (closed, failed or at its end).
    finished: bool,
    // Set when this half queued a frame (a pong, a close) that has not been pushed out yet.
    queued: bool,
}

impl<R: AsyncRead + Unpin> Reader<R> {
    fn new(io: R, read_ahead: Bytes, shared: Arc<Shared>, max_message_bytes: usize) -> Self {
        let mut buffer = BytesMut::with_capacity(FRESH_BUFFER_BYTES.max(read_ahead.len()));
        buffer.extend_from_slice(&read_ahead);
        Reader {
            io,
            buffer,
            shared,
            max_message_bytes,
            partial: None,
            finished: false,
            queued: false,
        }
    }

    /// The next complete message; `None` once the peer closed or left.
    async fn next_message(&mut self) -> Option<Result<Bytes, FrameError>> {
        let item = self.next_item().await;
        if std::mem::take(&mut self.queued) {
            // Push the pongs and the close this half queued out now, without waiting for the
            // socket: what it cannot take yet goes out with the next write, or while this half
            // waits to read.
            poll_fn(|cx| {
                let _ = self
                    .shared
                    .poll_state(Half::Reader, cx, WriteState::poll_write_out);
                Poll::Ready(())
            })
            .await;
        }
        item
    }

    async fn next_item(&mut self) -> Option<Result<Bytes, FrameError>> {
        while !self.finished {
            match self.next_frame() {
                Ok(Some((header, payload))) => match self.on_frame(header, payload) {
                    Ok(Some(message)) => return Some(Ok(message)),
                    Ok(None) => continue,
                    Err(failure) => return Some(Err(self.fail(failure))),
                },
                Ok(None) => {}
                Err(failure) => return Some(Err(self.fail(failure))),
            }
            let read = poll_fn(|cx| {
                // Push out what this half queued (a pong, a close) while waiting to read.
                if let Poll::Ready(Err(error)) =
                    self.shared
                        .poll_state(Half::Reader, cx, WriteState::poll_write_out)
                {
                    return Poll::Ready(Err(error));
                }
                tokio_util::io::poll_read_buf(Pin::new(&mut self.io), cx, &mut self.buffer)
            })
            .await;
            match read {
                Ok(0) => self.finished = true,
                Ok(_) => {}
                Err(error) => {
                    self.finished = true;
                    return Some(Err(FrameError::Io(error)));
                }
            }
        }
        None
    }

    /// Takes the next whole frame out of the buffer, unmasked; `None` until it is all there.
    fn next_frame(&mut self) -> Result<Option<(FrameHeader, BytesMut)>, Failure> {
        let mut cursor = Cursor::new(&self.buffer[..]);
        let (header, length) = match FrameHeader::parse(&mut cursor) {
            Ok(Some(parsed)) => parsed,
            Ok(None) => {
                self.buffer.reserve(FRESH_BUFFER_BYTES);
                return Ok(None);
            }
            Err(_) => return Err(Failure::Protocol("unknown opcode")),
        };
        let header_length = cursor.position() as usize;
        // Limits checked from the header, before any of the payload is buffered.
        match header.opcode {
            OpCode::Control(_) if length > MAX_CONTROL_PAYLOAD as u64 => {
                return Err(Failure::Protocol(
                    "a control frame must be one frame of at most 125 bytes",
                ));
            }
            OpCode::Control(_) => {}
            OpCode::Data(_) => {
                let so_far = self.partial.as_ref().map_or(0, |(_, bytes)| bytes.len());
                if length > (self.max_message_bytes - so_far) as u64 {
                    return Err(Failure::TooBig);
                }
            }
        }
        let length = length as usize;
        if self.buffer.len() < header_length + length {
            // Room for the rest of the frame, at most a read's worth at a time.
            let missing = header_length + length - self.buffer.len();
            self.buffer.reserve(missing.min(RELEASE_ABOVE_BYTES));
            return Ok(None);
        }
        let Some(mask) = header.mask else {
            return Err(Failure::Protocol("a client's frames must be masked"));
        };
        self.buffer.advance(header_length);
        let mut payload = self.buffer.split_to(length);
        if length > RELEASE_ABOVE_BYTES && self.buffer.len() <= RELEASE_ABOVE_BYTES {
            // The rest of the buffer still points into the big allocation; a copy of it lets
            // the allocation go with the message.
            let mut fresh = BytesMut::with_capacity(FRESH_BUFFER_BYTES.max(self.buffer.len()));
            fresh.extend_from_slice(&self.buffer);
            self.buffer = fresh;
        }
        for (index, byte) in payload.iter_mut().enumerate() {
            *byte ^= mask[index & 3];
        }
        Ok(Some((header, payload)))
    }

    /// Handles one frame; a complete message comes out.
    fn on_frame(
        &mut self,
        header: FrameHeader,
        payload: BytesMut,
    ) -> Result<Option<Bytes>, Failure> {
        if header.rsv1 || header.rsv2 || header.rsv3 {
            return Err(Failure::Protocol("reserved bits set without an extension"));
        }
        let data = match header.opcode {
            OpCode::Control(control) => {
                if !header.is_final || payload.len() > MAX_CONTROL_PAYLOAD {
                    return Err(Failure::Protocol(
                        "a control frame must be one frame of at most 125 bytes",
                    ));
                }
                self.on_control(control, &payload)?;
                return Ok(None);
            }
            OpCode::Data(data) => data,
        };
        let (text, bytes) = match (data, self.partial.take()) {
            (Data::Continue, Some((text, mut bytes))) => {
                bytes.extend_from_slice(&payload);
                (text, bytes)
            }
            (Data::Continue, None) => {
                return Err(Failure::Protocol("a continuation frame without a message"));
            }
            (Data::Text | Data::Binary, Some(_)) => {
                return Err(Failure::Protocol("a new message before the last one ended"));
            }
            (Data::Text, None) => (true, payload),
            (Data::Binary, None) => (false, payload),
            (Data::Reserved(_), _) => return Err(Failure::Protocol("unknown opcode")),
        };
        if !header.is_final {
            self.partial = Some((text, bytes));
            return Ok(None);
        }
        if text && std::str::from_utf8(&bytes).is_err() {
            return Err(Failure::InvalidUtf8);
        }
        Ok(Some(bytes.freeze()))
    }

    /// Answers a ping; answers a close and ends the stream.
    fn on_control(&mut self, control: Control, payload: &[u8]) -> Result<(), Failure> {
        match control {
            Control::Ping => {
                self.shared.with_state(|state| {
                    if !state.close_sent && state.out.len() < PONG_BACKLOG_BYTES {
                        state.push(OpCode::Control(Control::Pong), payload);
                    }
                });
                self.queued = true;
            }
            Control::Pong => {}
            Control::Close => {
                let code = match payload {
                    [] => None,
                    [_] => return Err(Failure::Protocol("a close frame of one byte")),
                    [high, low, reason @ ..] => {
                        let code = CloseCode::from(u16::from_be_bytes([*high, *low]));
                        if !code.is_allowed() {
                            return Err(Failure::Protocol("a close code that is not allowed"));
                        }
                        if std::str::from_utf8(reason).is_err() {
                            return Err(Failure::InvalidUtf8);
                        }
                        Some(code)
                    }
                };
                // The closing handshake: echo the code, then the stream ends.
                self.shared.with_state(|state| state.push_close(code, ""));
                self.queued = true;
                self.finished = true;
            }
            Control::Reserved(_) => return Err(Failure::Protocol("unknown opcode")),
        }
        Ok(())
    }

    /// Ends the stream for `failure`; the close frame (sent when the connection closes) says
    /// why.
    fn fail(&mut self, failure: Failure) -> FrameError {
        self.finished = true;
        let (code, reason) = match failure {
            Failure::Protocol(rule) => (CloseCode::Protocol, rule),
            Failure::InvalidUtf8 => (CloseCode::Invalid, "invalid UTF-8 in a text message"),
            Failure::TooBig => (CloseCode::Size, "message over the size limit"),
        };
        self.shared
            .with_state(|state| state.failure = Some((code, reason)));
        match failure {
            Failure::TooBig => FrameError::TooLarge {
                limit: self.max_message_bytes,
            },
            Failure::Protocol(_) | Failure::InvalidUtf8 => {
                FrameError::Io(std::io::Error::other(format!("WebSocket: {reason}")))
            }
        }
    }
}

#[cfg(test)]
mod tests;
