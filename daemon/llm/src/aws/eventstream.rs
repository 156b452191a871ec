//! AWS's binary event stream (`application/vnd.amazon.eventstream`), as Bedrock streams
//! responses: each message is a 12-byte prelude (total length, headers length, the prelude's
//! CRC32), typed headers, a payload, and the message's CRC32.
//!
//! A message becomes an [`SseEvent`] so the providers' decoders read it like any stream:
//! `event` is its `:event-type` header — or, for an `:message-type` of `exception` or
//! `error`, `exception:` followed by its `:exception-type` (or `:error-code`) — and `data` the
//! payload as UTF-8 (JSON).
//!
//! Guarantees: a message whose lengths or CRCs do not add up stops the stream with an error
//! (never a panic); buffered bytes are bounded by the stated length, itself capped.

use crate::sse::SseEvent;

/// The largest message accepted (AWS's limit is 16 MiB).
const MAX_MESSAGE: usize = 16 * 1024 * 1024;
/// Prelude and trailing CRC.
const OVERHEAD: usize = 16;

/// Incremental parser.
#[derive(Debug, Default)]
pub struct EventStreamParser {
    buffer: Vec<u8>,
}

impl EventStreamParser {
    /// Adds `chunk`; every complete message goes to `events`.
    pub fn feed(&mut self, chunk: &[u8], events: &mut Vec<SseEvent>) -> Result<(), String> {
        self.buffer.extend_from_slice(chunk);
        let mut start = 0;
        loop {
            let rest = &self.buffer[start..];
            if rest.len() < 12 {
                break;
            }
            let total = u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
            let headers_len = u32::from_be_bytes([rest[4], rest[5], rest[6], rest[7]]) as usize;
            let prelude_crc = u32::from_be_bytes([rest[8], rest[9], rest[10], rest[11]]);
            if crc32fast::hash(&rest[..8]) != prelude_crc {
                return Err("the event stream is corrupt (its prelude's checksum is wrong)".into());
            }
            if !(OVERHEAD..=MAX_MESSAGE).contains(&total) || headers_len > total - OVERHEAD {
                return Err(format!(
                    "the event stream is corrupt (a message of {total} bytes with {headers_len} bytes of headers)"
                ));
            }
            if rest.len() < total {
                break;
            }
            let message = &rest[..total];
            let message_crc = u32::from_be_bytes([
                message[total - 4],
                message[total - 3],
                message[total - 2],
                message[total - 1],
            ]);
            if crc32fast::hash(&message[..total - 4]) != message_crc {
                return Err("the event stream is corrupt (a message's checksum is wrong)".into());
            }
            let headers = parse_headers(&message[12..12 + headers_len])?;
            let payload = &message[12 + headers_len..total - 4];
            let header = |name: &str| {
                headers
                    .iter()
                    .find(|(key, _)| key == name)
                    .map(|(_, value)| value.as_str())
            };
            let event = match header(":message-type") {
                Some("exception" | "error") => format!(
                    "exception:{}",
                    header(":exception-type")
                        .or_else(|| header(":error-code"))
                        .unwrap_or("unknown")
                ),
                _ => header(":event-type").unwrap_or_default().to_owned(),
            };
            events.push(SseEvent {
                event,
                data: String::from_utf8_lossy(payload).into_owned(),
                id: None,
            });
            start += total;
        }
        self.buffer.drain(..start);
        Ok(())
    }
}

/// The headers whose values are strings (the others are skipped by their sizes).
fn parse_headers(mut bytes: &[u8]) -> Result<Vec<(String, String)>, String> {
    let corrupt = || "the event stream is corrupt (a header runs past its message)".to_owned();
    let mut headers = Vec::new();
    while !bytes.is_empty() {
        let name_len = *bytes.first().ok_or_else(corrupt)? as usize;
        let name = bytes.get(1..1 + name_len).ok_or_else(corrupt)?;
        let kind = *bytes.get(1 + name_len).ok_or_else(corrupt)?;
        let value_at = 2 + name_len;
        let (value, used) = match kind {
            0 | 1 => (None, 0),
            2 => (None, 1),
            3 => (None, 2),
            4 => (None, 4),
            5 | 8 => (None, 8),
            9 => (None, 16),
            6 | 7 => {
                let len = bytes.get(value_at..value_at + 2).ok_or_else(corrupt)?;
                let len = u16::from_be_bytes([len[0], len[1]]) as usize;
                let value = bytes
                    .get(value_at + 2..value_at + 2 + len)
                    .ok_or_else(corrupt)?;
                (
                    (kind == 7).then(|| String::from_utf8_lossy(value).into_owned()),
                    2 + len,
                )
            }
            other => return Err(format!("the event stream is corrupt (header type {other})")),
        };
        if let Some(value) = value {
            headers.push((String::from_utf8_lossy(name).into_owned(), value));
        }
        bytes = bytes.get(value_at + used..).ok_or_else(corrupt)?;
    }
    Ok(headers)
}

/// Encodes one message with string headers (tests and stubs build streams with it).
pub fn encode(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut encoded_headers = Vec::new();
    for (name, value) in headers {
        encoded_headers.push(name.len() as u8);
        encoded_headers.extend_from_slice(name.as_bytes());
        encoded_headers.push(7);
        encoded_headers.extend_from_slice(&(value.len() as u16).to_be_bytes());
        encoded_headers.extend_from_slice(value.as_bytes());
    }
    let total = (OVERHEAD + encoded_headers.len() + payload.len()) as u32;
    let mut message = Vec::with_capacity(total as usize);
    message.extend_from_slice(&total.to_be_bytes());
    message.extend_from_slice(&(encoded_headers.len() as u32).to_be_bytes());
    let prelude_crc = crc32fast::hash(&message);
    message.extend_from_slice(&prelude_crc.to_be_bytes());
    message.extend_from_slice(&encoded_headers);
    message.extend_from_slice(payload);
    let crc = crc32fast::hash(&message);
    message.extend_from_slice(&crc.to_be_bytes());
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: &str, payload: &str) -> Vec<u8> {
        encode(
            &[
                (":event-type", kind),
                (":content-type", "application/json"),
                (":message-type", "event"),
            ],
            payload.as_bytes(),
        )
    }

    #[test]
    fn messages_split_anywhere_decode_whole_and_corruption_is_an_error() {
        let mut body = event("messageStart", r#"{"role":"assistant"}"#);
        body.extend(event(
            "contentBlockDelta",
            r#"{"delta":{"text":"Hi"},"contentBlockIndex":0}"#,
        ));
        body.extend(encode(
            &[
                (":message-type", "exception"),
                (":exception-type", "throttlingException"),
            ],
            br#"{"message":"slow down"}"#,
        ));
        for split in 1..body.len() {
            let mut parser = EventStreamParser::default();
            let mut events = Vec::new();
            parser.feed(&body[..split], &mut events).unwrap();
            parser.feed(&body[split..], &mut events).unwrap();
            let seen: Vec<(&str, &str)> = events
                .iter()
                .map(|event| (event.event.as_str(), event.data.as_str()))
                .collect();
            assert_eq!(
                seen,
                [
                    ("messageStart", r#"{"role":"assistant"}"#),
                    (
                        "contentBlockDelta",
                        r#"{"delta":{"text":"Hi"},"contentBlockIndex":0}"#
                    ),
                    (
                        "exception:throttlingException",
                        r#"{"message":"slow down"}"#
                    ),
                ]
            );
        }
        let mut broken = event("messageStart", "{}");
        let last = broken.len() - 1;
        broken[last] ^= 1;
        let error = EventStreamParser::default()
            .feed(&broken, &mut Vec::new())
            .unwrap_err();
        assert_eq!(
            error,
            "the event stream is corrupt (a message's checksum is wrong)"
        );
    }
}
