//! An incremental parser for Server-Sent Events (the WHATWG `text/event-stream` format), the
//! framing every provider streams in.
//!
//! Bytes may arrive split anywhere — inside a line, inside a `\r\n` pair, inside a multi-byte
//! UTF-8 character — and the parser yields exactly the events the unsplit stream would:
//! it only ever decodes complete lines, and line terminators are ASCII, so a split character is
//! always whole by the time its line ends. Comment lines (`:`), `id` and `retry` are accepted and
//! ignored except for `id`, which is reported.

/// One dispatched event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field; empty when the server sent none (the spec's `message`).
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The last `id:` field seen, if any.
    pub id: Option<String>,
}

/// Parser state between chunks.
#[derive(Debug, Default)]
pub struct SseParser {
    // Invariant: holds the bytes of the current, unterminated line only.
    line: Vec<u8>,
    // The previous chunk ended with `\r`: a `\n` at the start of the next chunk belongs to it.
    after_cr: bool,
    // The byte-order mark check happens once, on the first bytes of the stream.
    started: bool,
    event: String,
    data: String,
    has_data: bool,
    id: Option<String>,
    // Events handed back by `recycle`, their strings emptied but keeping their capacity;
    // `dispatch` reuses them so a long stream does not allocate per event.
    spare: Vec<SseEvent>,
}

/// Spare events kept for reuse at most.
const MAX_SPARE: usize = 256;

impl SseParser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        SseParser::default()
    }

    /// Feeds the next chunk of bytes, pushing every event it completes onto `out`.
    pub fn feed(&mut self, mut chunk: &[u8], out: &mut Vec<SseEvent>) {
        if !self.started && !chunk.is_empty() {
            // Strip a UTF-8 byte-order mark, possibly split over the first chunks.
            self.line.extend_from_slice(chunk);
            if self.line.len() < 3 && b"\xEF\xBB\xBF".starts_with(&self.line) {
                return;
            }
            self.started = true;
            let buffered = std::mem::take(&mut self.line);
            let body = buffered.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&buffered);
            self.feed_started(body, out);
            return;
        }
        if self.after_cr {
            if let Some(rest) = chunk.strip_prefix(b"\n") {
                chunk = rest;
            }
            self.after_cr = false;
        }
        self.feed_started(chunk, out);
    }

    fn feed_started(&mut self, mut chunk: &[u8], out: &mut Vec<SseEvent>) {
        while let Some(end) = memchr::memchr2(b'\n', b'\r', chunk) {
            let (line, rest) = chunk.split_at(end);
            if self.line.is_empty() {
                self.process_line(line, out);
            } else {
                self.line.extend_from_slice(line);
                let whole = std::mem::take(&mut self.line);
                self.process_line(&whole, out);
            }
            // Skip the terminator; a `\r` may be followed by `\n` now or in the next chunk.
            if rest[0] == b'\r' {
                match rest.get(1) {
                    Some(b'\n') => chunk = &rest[2..],
                    Some(_) => chunk = &rest[1..],
                    None => {
                        self.after_cr = true;
                        chunk = &[];
                    }
                }
            } else {
                chunk = &rest[1..];
            }
        }
        self.line.extend_from_slice(chunk);
    }

    /// Ends the stream. Per the format, an event without its terminating blank line is
    /// discarded; returns whether such an unfinished event (or line) was pending.
    pub fn finish(&mut self) -> bool {
        let pending = !self.line.is_empty() || self.has_data;
        self.line.clear();
        self.event.clear();
        self.data.clear();
        self.has_data = false;
        pending
    }

    fn process_line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        // Nearly always valid: check it the fast way, repair it the slow way.
        let value = match std::str::from_utf8(value) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(value),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&value);
                self.has_data = true;
            }
            b"event" => {
                self.event.clear();
                self.event.push_str(&value);
            }
            b"id" if !value.contains('\0') => self.id = Some(value.into_owned()),
            // `retry` and unknown fields are ignored, as the format says.
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        if !self.has_data {
            self.event.clear();
            return;
        }
        // The event takes the filled buffers; the parser keeps a spare's empty ones.
        let mut event = self.spare.pop().unwrap_or_default();
        std::mem::swap(&mut event.event, &mut self.event);
        std::mem::swap(&mut event.data, &mut self.data);
        event.id.clone_from(&self.id);
        out.push(event);
        self.has_data = false;
    }

    /// Takes back events the caller is done with, so that their buffers serve the next ones.
    pub fn recycle(&mut self, events: &mut Vec<SseEvent>) {
        for mut event in events.drain(..) {
            if self.spare.len() < MAX_SPARE {
                event.event.clear();
                event.data.clear();
                event.id = None;
                self.spare.push(event);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut parser = SseParser::new();
        let mut out = Vec::new();
        for chunk in chunks {
            parser.feed(chunk, &mut out);
        }
        out
    }

    fn event(name: &str, data: &str) -> SseEvent {
        SseEvent {
            event: name.into(),
            data: data.into(),
            id: None,
        }
    }

    #[test]
    fn parses_fields_comments_and_multiline_data() {
        let events = parse_all(&[
            b": keep-alive\n\nevent: ping\ndata: {}\n\ndata: a\ndata:b\n\nevent: x\n\n",
        ]);
        assert_eq!(events, vec![event("ping", "{}"), event("", "a\nb")]);
    }

    #[test]
    fn every_line_terminator_works_even_when_split() {
        let whole = b"data: one\r\n\r\ndata: two\r\rdata: three\n\n";
        let expected = vec![event("", "one"), event("", "two"), event("", "three")];
        for split in 0..whole.len() {
            let (a, b) = whole.split_at(split);
            assert_eq!(parse_all(&[a, b]), expected, "split at {split}");
        }
    }

    #[test]
    fn split_utf8_and_bom_reassemble() {
        let whole = "\u{feff}data: h\u{e9}llo \u{1f600}\n\n".as_bytes();
        for split in 0..whole.len() {
            let (a, b) = whole.split_at(split);
            assert_eq!(parse_all(&[a, b]), vec![event("", "h\u{e9}llo \u{1f600}")]);
        }
    }

    #[test]
    fn an_unterminated_event_is_discarded_and_reported() {
        let mut parser = SseParser::new();
        let mut out = Vec::new();
        parser.feed(b"data: done\n\ndata: cut", &mut out);
        assert_eq!(out, vec![event("", "done")]);
        assert!(parser.finish());
    }
}
