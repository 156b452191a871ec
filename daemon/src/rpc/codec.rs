//! Newline-delimited framing for the Unix socket: one JSON message per line.
//!
//! Lines are split on LF only; a trailing CR is dropped; blank lines are skipped; a last line
//! without LF at end of stream still counts. A message longer than the cap is an error the
//! connection answers and then closes on, and the codec never buffers more than the cap.

use bytes::{Bytes, BytesMut};
use tokio_util::codec::{Decoder, Encoder};

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
