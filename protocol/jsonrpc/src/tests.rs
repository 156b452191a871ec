//! The peer against another peer or raw bytes, over in-memory pipes, in both framings, and
//! over a transport of whole messages.

use tokio::io::{
    AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader, DuplexStream,
};
use tokio::sync::mpsc::UnboundedSender;

use super::*;

/// Answers `add` with the sum of its two numbers, refuses everything else, and forwards
/// notifications to a channel.
struct Adder(UnboundedSender<(String, Value)>);

impl Handler for Adder {
    fn notification(&self, method: &str, params: Value) -> Option<Held> {
        let _ = self.0.send((method.to_owned(), params));
        None
    }

    fn request(&self, method: &str, params: Value) -> Answer {
        let method = method.to_owned();
        Box::pin(async move {
            match method.as_str() {
                "add" => Ok(json!(
                    params[0].as_i64().unwrap_or(0) + params[1].as_i64().unwrap_or(0)
                )),
                _ => Err((-32601, format!("no method {method}"))),
            }
        })
    }
}

fn config() -> PeerConfig {
    PeerConfig {
        max_message: 1024 * 1024,
        outbound: OutboundLimits::default(),
        cancel_notification: Some("$/cancelRequest"),
        answer_malformed: false,
        name: "test",
    }
}

/// A peer over one end of a pipe; the test holds the other end, and gets the notifications.
fn peer(framing: Framing) -> (Peer, DuplexStream, mpsc::UnboundedReceiver<(String, Value)>) {
    peer_with(framing, config())
}

fn peer_with(
    framing: Framing,
    config: PeerConfig,
) -> (Peer, DuplexStream, mpsc::UnboundedReceiver<(String, Value)>) {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(ours);
    let (sender, notifications) = mpsc::unbounded_channel();
    let peer = Peer::start(
        Transport::bytes(write, read, framing),
        Arc::new(Adder(sender)),
        config,
    );
    (peer, theirs, notifications)
}

/// Two peers talking to each other.
fn pair(framing: Framing) -> [(Peer, mpsc::UnboundedReceiver<(String, Value)>); 2] {
    let (a, b) = tokio::io::duplex(64 * 1024);
    [a, b].map(|end| {
        let (read, write) = tokio::io::split(end);
        let (sender, notifications) = mpsc::unbounded_channel();
        (
            Peer::start(
                Transport::bytes(write, read, framing),
                Arc::new(Adder(sender)),
                config(),
            ),
            notifications,
        )
    })
}

/// The next message the peer wrote, as the other side reads it.
async fn next_written(theirs: &mut BufReader<DuplexStream>, framing: Framing) -> Value {
    match framing {
        Framing::Lines => {
            let mut line = String::new();
            theirs.read_line(&mut line).await.unwrap();
            serde_json::from_str(&line).unwrap()
        }
        Framing::ContentLength => {
            let mut header = String::new();
            theirs.read_line(&mut header).await.unwrap();
            let length: usize = header
                .trim()
                .strip_prefix("Content-Length: ")
                .unwrap()
                .parse()
                .unwrap();
            let mut blank = String::new();
            theirs.read_line(&mut blank).await.unwrap();
            let mut body = vec![0; length];
            theirs.read_exact(&mut body).await.unwrap();
            serde_json::from_slice(&body).unwrap()
        }
    }
}

#[tokio::test]
async fn requests_and_notifications_cross_both_ways_in_both_framings() {
    for framing in [Framing::Lines, Framing::ContentLength] {
        let [(a, mut a_heard), (b, mut b_heard)] = pair(framing);
        let (sum, other) = tokio::join!(
            a.request("add", json!([2, 3]), Some(Duration::from_secs(10))),
            b.request("add", json!([40, 2]), None),
        );
        assert_eq!((sum, other), (Ok(json!(5)), Ok(json!(42))), "{framing:?}");
        assert_eq!(
            a.request("sub", json!([1, 1]), None).await,
            Err(CallError::Remote(RemoteError {
                code: -32601,
                message: "no method sub".to_owned(),
                data: None,
            }))
        );
        a.notify("hello", json!({"from": "a"})).unwrap();
        b.notify("hello", json!({"from": "b"})).unwrap();
        assert_eq!(
            b_heard.recv().await.unwrap(),
            ("hello".to_owned(), json!({"from": "a"}))
        );
        assert_eq!(
            a_heard.recv().await.unwrap(),
            ("hello".to_owned(), json!({"from": "b"}))
        );
    }
}

#[tokio::test]
async fn a_message_arriving_one_byte_at_a_time_is_read_whole() {
    let body = "{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":[\"é\"]}";
    let messages = [
        (
            Framing::ContentLength,
            // Header names in any case, other headers ignored; the length counts bytes.
            format!(
                "content-length: {}\r\nContent-Type: application/vscode-jsonrpc\r\n\r\n{body}",
                body.len()
            ),
        ),
        // Blank lines between messages are nothing.
        (Framing::Lines, format!("\n{body}\n")),
    ];
    for (framing, bytes) in messages {
        let (_peer, mut theirs, mut heard) = peer(framing);
        for byte in bytes.into_bytes() {
            theirs.write_all(&[byte]).await.unwrap();
            theirs.flush().await.unwrap();
            tokio::task::yield_now().await;
        }
        assert_eq!(
            heard.recv().await.unwrap(),
            ("n".to_owned(), json!(["é"])),
            "{framing:?}"
        );
    }
}

#[tokio::test]
async fn a_malformed_body_is_skipped_or_answered_and_the_next_message_still_arrives() {
    let (_peer, mut theirs, mut heard) = peer(Framing::ContentLength);
    theirs
        .write_all(b"Content-Length: 5\r\n\r\n{nope")
        .await
        .unwrap();
    let after = json!({"jsonrpc": "2.0", "method": "after"});
    theirs
        .write_all(&frame(Some(Framing::ContentLength), &after))
        .await
        .unwrap();
    assert_eq!(
        heard.recv().await.unwrap(),
        ("after".to_owned(), Value::Null)
    );

    let mut answering = config();
    answering.answer_malformed = true;
    let (_peer, theirs, _heard) = peer_with(Framing::Lines, answering);
    let mut theirs = BufReader::new(theirs);
    theirs.get_mut().write_all(b"{nope\n").await.unwrap();
    let answer = next_written(&mut theirs, Framing::Lines).await;
    assert_eq!(answer["id"], Value::Null);
    assert_eq!(answer["error"]["code"], -32700);
}

#[tokio::test]
async fn requests_from_the_other_side_are_answered_with_their_id_as_sent() {
    for framing in [Framing::Lines, Framing::ContentLength] {
        let (_peer, theirs, _heard) = peer(framing);
        let mut theirs = BufReader::new(theirs);
        let request = json!({"jsonrpc": "2.0", "id": "abc", "method": "add", "params": [1, 2]});
        theirs
            .get_mut()
            .write_all(&frame(Some(framing), &request))
            .await
            .unwrap();
        assert_eq!(
            next_written(&mut theirs, framing).await,
            json!({"jsonrpc": "2.0", "id": "abc", "result": 3})
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_request_that_times_out_is_cancelled_and_its_late_answer_ignored() {
    let (peer, theirs, _heard) = peer(Framing::ContentLength);
    let mut theirs = BufReader::new(theirs);
    let asking = peer.request("slow", json!({}), Some(Duration::from_secs(5)));
    let (answer, sent) = tokio::join!(asking, next_written(&mut theirs, Framing::ContentLength));
    assert_eq!(answer, Err(CallError::Timeout(Duration::from_secs(5))));
    assert_eq!(sent["method"], "slow");
    let cancel = next_written(&mut theirs, Framing::ContentLength).await;
    assert_eq!(cancel["method"], "$/cancelRequest");
    assert_eq!(cancel["params"]["id"], sent["id"]);
    // The late answer finds no one waiting; the peer carries on.
    let late = json!({"jsonrpc": "2.0", "id": sent["id"], "result": 1});
    theirs
        .get_mut()
        .write_all(&frame(Some(Framing::ContentLength), &late))
        .await
        .unwrap();
    assert!(!peer.is_closed());
}

#[tokio::test]
async fn when_the_other_side_ends_waiting_and_later_requests_fail_at_once() {
    let (peer, theirs, _heard) = peer(Framing::Lines);
    let waiting = tokio::spawn({
        let peer = peer.clone();
        async move { peer.request("add", json!([1, 1]), None).await }
    });
    // Its request is on its way before the other side goes.
    let mut theirs = BufReader::new(theirs);
    let sent = next_written(&mut theirs, Framing::Lines).await;
    assert_eq!(sent["method"], "add");
    drop(theirs);
    assert_eq!(waiting.await.unwrap(), Err(CallError::Closed));
    peer.closed().await;
    assert_eq!(
        peer.request("add", json!([1, 1]), None).await,
        Err(CallError::Closed)
    );
}

#[tokio::test]
async fn a_message_over_the_size_limit_ends_the_connection() {
    for framing in [Framing::Lines, Framing::ContentLength] {
        let mut small = config();
        small.max_message = 64;
        let (peer, mut theirs, _heard) = peer_with(framing, small);
        let big = json!({"jsonrpc": "2.0", "method": "n", "params": "x".repeat(100)});
        theirs.write_all(&frame(Some(framing), &big)).await.unwrap();
        peer.closed().await;
        assert_eq!(
            peer.request("add", json!([]), None).await,
            Err(CallError::Closed)
        );
    }
}

#[tokio::test]
async fn another_side_that_stops_reading_makes_the_peer_stuck() {
    let mut bounded = config();
    bounded.outbound.queued_bytes = 256 * 1024;
    // The other side never reads: the pipe (64 KiB) fills, then the queue.
    let (peer, _theirs, _heard) = peer_with(Framing::Lines, bounded);
    let text = "x".repeat(32 * 1024);
    let mut sent = 0;
    while peer.notify("n", json!(text)).is_ok() {
        sent += 1;
        assert!(sent < 100, "never stuck");
        tokio::task::yield_now().await;
    }
    assert!(peer.is_stuck());
    peer.stuck().await;
    assert_eq!(
        peer.request("add", json!([]), None).await,
        Err(CallError::Stuck)
    );
}

#[tokio::test]
async fn flush_waits_until_what_was_sent_is_written() {
    let (peer, theirs, _heard) = peer(Framing::Lines);
    let mut theirs = BufReader::new(theirs);
    peer.notify("first", json!(1)).unwrap();
    peer.notify("second", json!(2)).unwrap();
    peer.flush().await;
    assert_eq!(
        next_written(&mut theirs, Framing::Lines).await["method"],
        "first"
    );
    assert_eq!(
        next_written(&mut theirs, Framing::Lines).await["method"],
        "second"
    );
}

/// Answers requests once the test lets it.
struct Gated(Arc<tokio::sync::Semaphore>);

impl Handler for Gated {
    fn notification(&self, _method: &str, _params: Value) -> Option<Held> {
        None
    }

    fn request(&self, _method: &str, _params: Value) -> Answer {
        let gate = self.0.clone();
        Box::pin(async move {
            let _permit = gate.acquire().await;
            Ok(json!("done"))
        })
    }
}

#[tokio::test(start_paused = true)]
async fn answered_waits_for_the_other_sides_requests_in_flight() {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(ours);
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let peer = Peer::start(
        Transport::bytes(write, read, Framing::Lines),
        Arc::new(Gated(gate.clone())),
        config(),
    );
    let mut theirs = BufReader::new(theirs);
    let request = json!({"jsonrpc": "2.0", "id": 7, "method": "work", "params": {}});
    theirs
        .get_mut()
        .write_all(&frame(Some(Framing::Lines), &request))
        .await
        .unwrap();
    // Once the peer has read it (its handler now waits for the gate)...
    while *peer.answering.borrow() == 0 {
        tokio::task::yield_now().await;
    }
    // ...answered nothing yet: the wait does not end.
    assert!(
        tokio::time::timeout(Duration::from_secs(1), peer.answered())
            .await
            .is_err()
    );
    gate.add_permits(1);
    peer.answered().await;
    assert_eq!(
        next_written(&mut theirs, Framing::Lines).await,
        json!({"jsonrpc": "2.0", "id": 7, "result": "done"})
    );
}

#[tokio::test]
async fn json_that_is_not_a_message_is_refused_when_the_peer_answers_malformed_ones() {
    let mut answering = config();
    answering.answer_malformed = true;
    let (_peer, theirs, _heard) = peer_with(Framing::Lines, answering);
    let mut theirs = BufReader::new(theirs);
    let lines: [(&str, Value, &str); 5] = [
        (
            "[1,2]",
            Value::Null,
            "batches are not supported; send one message per line",
        ),
        ("42", Value::Null, "a message is a JSON object"),
        (r#"{"foo":1}"#, Value::Null, "a message has a `method`"),
        (
            r#"{"jsonrpc":"2.0","id":2,"method":5}"#,
            json!(2),
            "`method` must be a string",
        ),
        (
            r#"{"jsonrpc":"2.0","id":"x"}"#,
            json!("x"),
            "a message has a `method`",
        ),
    ];
    for (line, id, why) in lines {
        theirs
            .get_mut()
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
        let answer = next_written(&mut theirs, Framing::Lines).await;
        assert_eq!(answer["id"], id, "{line}");
        assert_eq!(answer["error"]["code"], -32600, "{line}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!("invalid request: {why}")),
            "{line}: {message}"
        );
    }
    // A request after them is still answered.
    let request = json!({"jsonrpc": "2.0", "id": 3, "method": "add", "params": [1, 1]});
    theirs
        .get_mut()
        .write_all(&frame(Some(Framing::Lines), &request))
        .await
        .unwrap();
    assert_eq!(next_written(&mut theirs, Framing::Lines).await["result"], 2);
}

/// Panics while answering, once it has said that it ran.
struct Panicking(Arc<AtomicBool>);

impl Handler for Panicking {
    fn notification(&self, _method: &str, _params: Value) -> Option<Held> {
        None
    }

    fn request(&self, _method: &str, _params: Value) -> Answer {
        let ran = self.0.clone();
        Box::pin(async move {
            ran.store(true, Ordering::SeqCst);
            panic!("a handler's bug")
        })
    }
}

#[tokio::test]
async fn a_request_whose_handler_panics_does_not_keep_answered_waiting() {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(ours);
    let ran = Arc::new(AtomicBool::new(false));
    let peer = Peer::start(
        Transport::bytes(write, read, Framing::Lines),
        Arc::new(Panicking(ran.clone())),
        config(),
    );
    let mut theirs = theirs;
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "work", "params": {}});
    theirs
        .write_all(&frame(Some(Framing::Lines), &request))
        .await
        .unwrap();
    while !ran.load(Ordering::SeqCst) {
        tokio::task::yield_now().await;
    }
    tokio::time::timeout(Duration::from_secs(10), peer.answered())
        .await
        .expect("the panicked request is no longer counted");
}

/// What the test sends the peer as the other side.
type ToPeer = mpsc::Sender<std::io::Result<Vec<u8>>>;

/// A transport of whole messages over two channels; the test holds their other ends.
fn message_transport() -> (Transport, ToPeer, mpsc::Receiver<Vec<u8>>) {
    let (to_peer, incoming) = mpsc::channel(16);
    let (outgoing, from_peer) = mpsc::channel(16);
    let incoming = futures_util::stream::unfold(incoming, |mut incoming| async move {
        incoming.recv().await.map(|message| (message, incoming))
    });
    let outgoing = futures_util::sink::unfold(outgoing, |outgoing, message: Vec<u8>| async move {
        outgoing
            .send(message)
            .await
            .map_err(|_| std::io::Error::other("gone"))?;
        Ok::<_, std::io::Error>(outgoing)
    });
    (Transport::messages(incoming, outgoing), to_peer, from_peer)
}

#[tokio::test]
async fn whole_messages_carry_requests_answers_and_errors_with_their_data() {
    let (transport, to_peer, mut from_peer) = message_transport();
    let (sender, mut heard) = mpsc::unbounded_channel();
    let peer = Peer::start(transport, Arc::new(Adder(sender)), config());
    let asking = tokio::spawn({
        let peer = peer.clone();
        async move { peer.request("divide", json!([1, 0]), None).await }
    });
    let sent: Value = serde_json::from_slice(&from_peer.recv().await.unwrap()).unwrap();
    assert_eq!(sent["method"], "divide");
    let refusal = json!({"jsonrpc": "2.0", "id": sent["id"],
        "error": {"code": -32602, "message": "by zero", "data": {"kind": "invalid_params"}}});
    to_peer
        .send(Ok(refusal.to_string().into_bytes()))
        .await
        .unwrap();
    assert_eq!(
        asking.await.unwrap(),
        Err(CallError::Remote(RemoteError {
            code: -32602,
            message: "by zero".to_owned(),
            data: Some(json!({"kind": "invalid_params"})),
        }))
    );
    // The other side's requests are answered, one body per message, no framing.
    let request = json!({"jsonrpc": "2.0", "id": 9, "method": "add", "params": [1, 2]});
    to_peer
        .send(Ok(request.to_string().into_bytes()))
        .await
        .unwrap();
    let answer = from_peer.recv().await.unwrap();
    assert_eq!(answer.last(), Some(&b'}'));
    assert_eq!(
        serde_json::from_slice::<Value>(&answer).unwrap(),
        json!({"jsonrpc": "2.0", "id": 9, "result": 3})
    );
    let note = json!({"jsonrpc": "2.0", "method": "n", "params": {"x": 1}});
    to_peer
        .send(Ok(note.to_string().into_bytes()))
        .await
        .unwrap();
    assert_eq!(
        heard.recv().await.unwrap(),
        ("n".to_owned(), json!({"x": 1}))
    );
    // An error of the transport ends the connection.
    to_peer
        .send(Err(std::io::Error::other("reset")))
        .await
        .unwrap();
    peer.closed().await;
}

#[tokio::test]
async fn dropping_the_last_peer_closes_a_message_transport() {
    let (transport, _to_peer, mut from_peer) = message_transport();
    let (sender, _heard) = mpsc::unbounded_channel();
    let peer = Peer::start(transport, Arc::new(Adder(sender)), config());
    peer.notify("bye", json!({})).unwrap();
    drop(peer);
    let last: Value = serde_json::from_slice(&from_peer.recv().await.unwrap()).unwrap();
    assert_eq!(last["method"], "bye");
    // The sink was closed: its channel's sender is gone.
    assert_eq!(from_peer.recv().await, None);
}

/// A sink that fails its first send and panics if it is polled after that.
struct Failing {
    failed: bool,
}

impl futures_util::Sink<Vec<u8>> for Failing {
    type Error = std::io::Error;

    fn poll_ready(
        mut self: Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        assert!(!self.failed, "a failed sink was polled again");
        self.failed = true;
        std::task::Poll::Ready(Err(std::io::Error::other(
            "the daemon closed the connection",
        )))
    }

    fn start_send(self: Pin<&mut Self>, _: Vec<u8>) -> std::io::Result<()> {
        unreachable!("never ready")
    }

    fn poll_flush(
        self: Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        panic!("a failed sink was flushed")
    }

    fn poll_close(
        self: Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        panic!("a failed sink was closed")
    }
}

#[tokio::test]
async fn a_transport_that_failed_a_write_is_not_used_again() {
    // The other side refused the connection and closed it before the first message: the
    // write fails, and the failed sink must not be polled again, neither to send nor to close.
    let (_to_peer, incoming) = mpsc::channel::<std::io::Result<Vec<u8>>>(1);
    let incoming = futures_util::stream::unfold(incoming, |mut incoming| async move {
        incoming.recv().await.map(|message| (message, incoming))
    });
    let transport = Transport::messages(incoming, Failing { failed: false });
    let (sender, _heard) = mpsc::unbounded_channel();
    let peer = Peer::start(transport, Arc::new(Adder(sender)), config());
    peer.notify("first", json!({})).unwrap();
    peer.notify("second", json!({})).unwrap();
    // The flush is answered once the writer has ended (its queue is dropped).
    peer.flush().await;
    drop(peer);
    tokio::task::yield_now().await;
}

/// Holds each notification until the test takes it from a queue of one.
struct Queueing(mpsc::Sender<String>);

impl Handler for Queueing {
    fn notification(&self, method: &str, _params: Value) -> Option<Held> {
        let queue = self.0.clone();
        let method = method.to_owned();
        Some(Box::pin(async move {
            let _ = queue.send(method).await;
        }))
    }

    fn request(&self, _method: &str, _params: Value) -> Answer {
        Box::pin(async { Ok(Value::Null) })
    }
}

#[tokio::test(start_paused = true)]
async fn a_held_notification_holds_back_what_comes_after_it() {
    let (transport, to_peer, _from_peer) = message_transport();
    let (queue, mut taken) = mpsc::channel(1);
    let peer = Peer::start(transport, Arc::new(Queueing(queue)), config());
    for method in ["one", "two", "three"] {
        let note = json!({"jsonrpc": "2.0", "method": method});
        to_peer
            .send(Ok(note.to_string().into_bytes()))
            .await
            .unwrap();
    }
    let asking = tokio::spawn({
        let peer = peer.clone();
        async move { peer.request("add", json!([]), None).await }
    });
    // "one" fills the queue, "two" waits for room: the answer behind them is not read.
    let answer = json!({"jsonrpc": "2.0", "id": 1, "result": "late"});
    to_peer
        .send(Ok(answer.to_string().into_bytes()))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(!asking.is_finished());
    for method in ["one", "two", "three"] {
        assert_eq!(taken.recv().await.unwrap(), method);
    }
    assert_eq!(asking.await.unwrap(), Ok(json!("late")));
}

/// Records errors about the connection.
struct Recording(std::sync::Mutex<Vec<RemoteError>>);

impl Handler for Recording {
    fn notification(&self, _method: &str, _params: Value) -> Option<Held> {
        None
    }

    fn request(&self, _method: &str, _params: Value) -> Answer {
        Box::pin(async { Ok(Value::Null) })
    }

    fn connection_error(&self, error: RemoteError) {
        self.0.lock().unwrap().push(error);
    }
}

#[tokio::test]
async fn an_error_without_an_id_goes_to_the_handler_and_the_peer_then_ends_with_the_stream() {
    let (transport, to_peer, _from_peer) = message_transport();
    let recording = Arc::new(Recording(std::sync::Mutex::new(Vec::new())));
    let peer = Peer::start(transport, recording.clone(), config());
    let refusal = json!({"jsonrpc": "2.0", "id": null,
        "error": {"code": -32000, "message": "too many connections"}});
    to_peer
        .send(Ok(refusal.to_string().into_bytes()))
        .await
        .unwrap();
    drop(to_peer);
    peer.closed().await;
    assert_eq!(
        *recording.0.lock().unwrap(),
        [RemoteError {
            code: -32000,
            message: "too many connections".to_owned(),
            data: None,
        }]
    );
}
