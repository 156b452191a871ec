//! The framing against a real WebSocket client (tokio-tungstenite) and against hand-made frames
//! for what a well-behaved client never sends.

use futures_util::{SinkExt as _, StreamExt as _};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _, DuplexStream};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role};
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};

use super::*;

const LIMIT: usize = 4096;

/// The server's halves over one end of a pipe; the other end is the client's.
fn server(limit: usize) -> (FrameStream, FrameSink, DuplexStream) {
    let (client, server) = tokio::io::duplex(4 << 20);
    let (read, write) = tokio::io::split(server);
    let (incoming, outgoing) = split(read, write, Bytes::new(), limit);
    (incoming, outgoing, client)
}

/// A client frame as bytes: masked unless `mask` is `None`.
fn frame(first_byte: u8, payload: &[u8], mask: Option<[u8; 4]>) -> Vec<u8> {
    let mut bytes = vec![first_byte];
    let mask_bit = if mask.is_some() { 0x80 } else { 0 };
    match payload.len() {
        length @ 0..=125 => bytes.push(mask_bit | length as u8),
        length @ 126..=65535 => {
            bytes.push(mask_bit | 126);
            bytes.extend_from_slice(&(length as u16).to_be_bytes());
        }
        length => {
            bytes.push(mask_bit | 127);
            bytes.extend_from_slice(&(length as u64).to_be_bytes());
        }
    }
    match mask {
        Some(mask) => {
            bytes.extend_from_slice(&mask);
            bytes.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        }
        None => bytes.extend_from_slice(payload),
    }
    bytes
}

const MASK: Option<[u8; 4]> = Some([1, 2, 3, 4]);
const TEXT: u8 = 0x81;
const TEXT_START: u8 = 0x01;
const CONTINUE_END: u8 = 0x80;

/// Reads one server frame: (first byte, payload).
async fn read_frame(client: &mut DuplexStream) -> (u8, Vec<u8>) {
    let mut head = [0u8; 2];
    client.read_exact(&mut head).await.unwrap();
    assert_eq!(head[1] & 0x80, 0, "server frames are not masked");
    let length = match head[1] & 0x7f {
        126 => u64::from(client.read_u16().await.unwrap()),
        127 => client.read_u64().await.unwrap(),
        length => u64::from(length),
    };
    let mut payload = vec![0; length as usize];
    client.read_exact(&mut payload).await.unwrap();
    (head[0], payload)
}

/// Reads server frames up to the close frame; returns its code and reason.
async fn read_close(client: &mut DuplexStream) -> (u16, String) {
    loop {
        let (first, payload) = read_frame(client).await;
        if first == 0x88 {
            let code = u16::from_be_bytes([payload[0], payload[1]]);
            return (code, String::from_utf8(payload[2..].to_vec()).unwrap());
        }
    }
}

#[tokio::test]
async fn messages_round_trip_with_a_real_client() {
    let (mut incoming, mut outgoing, client) = server(LIMIT);
    let mut client = WebSocketStream::from_raw_socket(client, Role::Client, None).await;

    client.send(Message::text(r#"{"a":1}"#)).await.unwrap();
    assert_eq!(
        incoming.next().await.unwrap().unwrap(),
        Bytes::from_static(br#"{"a":1}"#)
    );
    client.send(Message::binary(&b"{}"[..])).await.unwrap();
    assert_eq!(
        incoming.next().await.unwrap().unwrap(),
        Bytes::from_static(b"{}")
    );

    outgoing
        .send(Bytes::from_static(br#"{"b":2}"#))
        .await
        .unwrap();
    assert_eq!(
        client.next().await.unwrap().unwrap(),
        Message::text(r#"{"b":2}"#)
    );

    // A fragmented message, with a ping in between: the ping is answered, the message arrives
    // whole.
    use tokio_tungstenite::tungstenite::protocol::frame::Frame;
    use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
    client
        .send(Message::Frame(Frame::message(
            &b"{\"c\""[..],
            OpCode::Data(Data::Text),
            false,
        )))
        .await
        .unwrap();
    client
        .send(Message::Ping(Bytes::from_static(b"hi")))
        .await
        .unwrap();
    client
        .send(Message::Frame(Frame::message(
            &b":3}"[..],
            OpCode::Data(Data::Continue),
            true,
        )))
        .await
        .unwrap();
    let reader = tokio::spawn(async move {
        let message = incoming.next().await.unwrap().unwrap();
        (message, incoming)
    });
    assert_eq!(
        client.next().await.unwrap().unwrap(),
        Message::Pong(Bytes::from_static(b"hi"))
    );
    let (message, mut incoming) = reader.await.unwrap();
    assert_eq!(message, Bytes::from_static(br#"{"c":3}"#));

    // The client closes: the stream ends, the close is echoed, and nothing follows it.
    client
        .send(Message::Close(Some(CloseFrame {
            code: CloseCode::Away,
            reason: Utf8Bytes::from_static("bye"),
        })))
        .await
        .unwrap();
    assert!(incoming.next().await.is_none());
    outgoing
        .send(Bytes::from_static(b"{\"late\":1}"))
        .await
        .unwrap();
    outgoing.close().await.unwrap();
    match client.next().await {
        Some(Ok(Message::Close(Some(frame)))) => assert_eq!(frame.code, CloseCode::Away),
        other => panic!("expected the echoed close, got {other:?}"),
    }
    assert!(client.next().await.is_none(), "nothing after the close");
}

#[tokio::test]
async fn invalid_utf8_in_a_text_message_is_closed_with_1007() {
    let (mut incoming, mut outgoing, mut client) = server(LIMIT);
    client
        .write_all(&frame(TEXT, b"{\"x\":\"\xff\xfe\"}", MASK))
        .await
        .unwrap();
    let error = incoming.next().await.unwrap().unwrap_err();
    assert_eq!(
        error.to_string(),
        "transport error: WebSocket: invalid UTF-8 in a text message"
    );
    assert!(incoming.next().await.is_none());
    outgoing.close().await.unwrap();
    assert_eq!(
        read_close(&mut client).await,
        (1007, "invalid UTF-8 in a text message".to_owned())
    );

    // Split across fragments, and in a close frame's reason, alike.
    let (mut incoming, mut outgoing, mut client) = server(LIMIT);
    client
        .write_all(&frame(TEXT_START, b"\xe2\x82", MASK))
        .await
        .unwrap();
    client
        .write_all(&frame(CONTINUE_END, b"\xac", MASK))
        .await
        .unwrap();
    assert_eq!(incoming.next().await.unwrap().unwrap(), "€".as_bytes());
    client
        .write_all(&frame(0x88, b"\x03\xe8\xff", MASK))
        .await
        .unwrap();
    assert!(incoming.next().await.unwrap().is_err());
    outgoing.close().await.unwrap();
    assert_eq!(read_close(&mut client).await.0, 1007);
}

#[tokio::test]
async fn a_message_over_the_limit_is_closed_with_1009() {
    // Refused from its header, before its payload arrives.
    let (mut incoming, mut outgoing, mut client) = server(LIMIT);
    let header = &frame(TEXT, &vec![b'x'; LIMIT + 1], MASK)[..8];
    client.write_all(header).await.unwrap();
    assert!(matches!(
        incoming.next().await.unwrap(),
        Err(FrameError::TooLarge { limit: LIMIT })
    ));
    outgoing.close().await.unwrap();
    assert_eq!(
        read_close(&mut client).await,
        (1009, "message over the size limit".to_owned())
    );

    // A ping between the fragments of a message at the limit is no part of it.
    let (mut incoming, _outgoing, mut client) = server(LIMIT);
    client
        .write_all(&frame(TEXT_START, &vec![b'x'; LIMIT], MASK))
        .await
        .unwrap();
    client.write_all(&frame(0x89, b"ping", MASK)).await.unwrap();
    client
        .write_all(&frame(CONTINUE_END, b"", MASK))
        .await
        .unwrap();
    assert_eq!(incoming.next().await.unwrap().unwrap().len(), LIMIT);
    assert_eq!(read_frame(&mut client).await, (0x8a, b"ping".to_vec()));

    // Fragments count together.
    let (mut incoming, _outgoing, mut client) = server(LIMIT);
    client
        .write_all(&frame(TEXT_START, &vec![b'x'; LIMIT], MASK))
        .await
        .unwrap();
    client
        .write_all(&frame(CONTINUE_END, b"x", MASK))
        .await
        .unwrap();
    assert!(matches!(
        incoming.next().await.unwrap(),
        Err(FrameError::TooLarge { limit: LIMIT })
    ));
}

#[tokio::test]
async fn protocol_violations_are_closed_with_1002() {
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "unmasked",
            frame(TEXT, b"{}", None),
            "a client's frames must be masked",
        ),
        (
            "a reserved bit",
            frame(TEXT | 0x40, b"{}", MASK),
            "reserved bits set without an extension",
        ),
        (
            "a continuation first",
            frame(CONTINUE_END, b"{}", MASK),
            "a continuation frame without a message",
        ),
        (
            "a new message inside one",
            [frame(TEXT_START, b"{", MASK), frame(TEXT, b"{}", MASK)].concat(),
            "a new message before the last one ended",
        ),
        (
            "a long ping",
            frame(0x89, &[0; 126], MASK),
            "a control frame must be one frame of at most 125 bytes",
        ),
        (
            "a ping claiming eight exabytes",
            {
                let mut bytes = vec![0x89, 0x80 | 127];
                bytes.extend_from_slice(&(1u64 << 63).to_be_bytes());
                bytes.extend_from_slice(&[1, 2, 3, 4]);
                bytes
            },
            "a control frame must be one frame of at most 125 bytes",
        ),
        (
            "a fragmented ping",
            frame(0x09, b"", MASK),
            "a control frame must be one frame of at most 125 bytes",
        ),
        (
            "a one-byte close",
            frame(0x88, b"\x03", MASK),
            "a close frame of one byte",
        ),
        (
            "a reserved close code",
            frame(0x88, &1005u16.to_be_bytes(), MASK),
            "a close code that is not allowed",
        ),
        (
            "a reserved opcode",
            frame(0x83, b"", MASK),
            "unknown opcode",
        ),
    ];
    for (case, bytes, reason) in cases {
        let (mut incoming, mut outgoing, mut client) = server(LIMIT);
        client.write_all(&bytes).await.unwrap();
        let error = loop {
            match incoming.next().await {
                Some(Ok(_)) => continue,
                Some(Err(error)) => break error,
                None => panic!("{case}: the stream ended without an error"),
            }
        };
        assert_eq!(
            error.to_string(),
            format!("transport error: WebSocket: {reason}"),
            "{case}"
        );
        outgoing.close().await.unwrap();
        assert_eq!(
            read_close(&mut client).await,
            (1002, reason.to_owned()),
            "{case}"
        );
    }
}

#[tokio::test]
async fn the_buffers_let_a_big_message_go() {
    let (client, server) = tokio::io::duplex(4 << 20);
    let (read, write) = tokio::io::split(server);
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
    let mut reader = Reader::new(read, Bytes::new(), shared.clone(), 4 << 20);
    let (mut client_read, mut client_write) = tokio::io::split(client);
    let big = vec![b'x'; 1 << 20];
    let mut bytes = frame(TEXT, &big, MASK);
    bytes.extend_from_slice(&frame(TEXT, b"{}", MASK)[..3]);
    client_write.write_all(&bytes).await.unwrap();
    let message = reader.next_message().await.unwrap().unwrap();
    assert_eq!(message.len(), 1 << 20);
    drop(message);
    // The start of the next frame is kept; the megabyte is gone (reusing it would need no
    // allocation).
    assert_eq!(reader.buffer.len(), 3);
    assert!(!reader.buffer.try_reclaim(1 << 20));

    let mut writer = Writer {
        shared: shared.clone(),
    };
    let copy = tokio::spawn(async move {
        let mut sink = Vec::new();
        let mut chunk = vec![0; 1 << 16];
        while sink.len() < (1 << 20) + 10 {
            let n = client_read.read(&mut chunk).await.unwrap();
            sink.extend_from_slice(&chunk[..n]);
        }
        sink.len()
    });
    writer.send(Bytes::from(big)).await.unwrap();
    assert_eq!(copy.await.unwrap(), (1 << 20) + 10);
    let mut state = shared.state.lock().unwrap();
    assert!(state.out.is_empty());
    assert!(!state.out.try_reclaim(1 << 20));
}
