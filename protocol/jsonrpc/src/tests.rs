//! The peer against another peer or raw bytes, over in-memory pipes, in both framings.

use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, DuplexStream};
use tokio::sync::mpsc::UnboundedSender;

use super::*;

/// Answers `add` with the sum of its two numbers, refuses everything else, and forwards
/// notifications to a channel.
struct Adder(UnboundedSender<(String, Value)>);

impl Handler for Adder {
    fn notification(&self, method: &str, params: Value) {
        let _ = self.0.send((method.to_owned(), params));
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

fn config(framing: Framing) -> PeerConfig {
    PeerConfig {
        framing,
        max_message: 1024 * 1024,
        outbound: OutboundLimits::default(),
        cancel_notification: Some("$/cancelRequest"),
        answer_malformed: false,
        name: "test",
    }
}

/// A peer over one end of a pipe; the test holds the other end, and gets the notifications.
fn peer(framing: Framing) -> (Peer, DuplexStream, mpsc::UnboundedReceiver<(String, Value)>) {
    peer_with(config(framing))
}

fn peer_with(config: PeerConfig) -> (Peer, DuplexStream, mpsc::UnboundedReceiver<(String, Value)>) {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(ours);
    let (sender, notifications) = mpsc::unbounded_channel();
    let peer = Peer::start(write, read, Arc::new(Adder(sender)), config);
    (peer, theirs, notifications)
}

/// Two peers talking to each other.
fn pair(framing: Framing) -> [(Peer, mpsc::UnboundedReceiver<(String, Value)>); 2] {
    let (a, b) = tokio::io::duplex(64 * 1024);
    [a, b].map(|end| {
        let (read, write) = tokio::io::split(end);
        let (sender, notifications) = mpsc::unbounded_channel();
        (
            Peer::start(write, read, Arc::new(Adder(sender)), config(framing)),
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
            Err(CallError::Remote {
                code: -32601,
                message: "no method sub".to_owned()
            })
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
        .write_all(&frame(Framing::ContentLength, &after))
        .await
        .unwrap();
    assert_eq!(
        heard.recv().await.unwrap(),
        ("after".to_owned(), Value::Null)
    );

    let mut answering = config(Framing::Lines);
    answering.answer_malformed = true;
    let (_peer, theirs, _heard) = peer_with(answering);
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
            .write_all(&frame(framing, &request))
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
        .write_all(&frame(Framing::ContentLength, &late))
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
        let mut small = config(framing);
        small.max_message = 64;
        let (peer, mut theirs, _heard) = peer_with(small);
        let big = json!({"jsonrpc": "2.0", "method": "n", "params": "x".repeat(100)});
        theirs.write_all(&frame(framing, &big)).await.unwrap();
        peer.closed().await;
        assert_eq!(
            peer.request("add", json!([]), None).await,
            Err(CallError::Closed)
        );
    }
}

#[tokio::test]
async fn another_side_that_stops_reading_makes_the_peer_stuck() {
    let mut bounded = config(Framing::Lines);
    bounded.outbound.queued_bytes = 256 * 1024;
    // The other side never reads: the pipe (64 KiB) fills, then the queue.
    let (peer, _theirs, _heard) = peer_with(bounded);
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
    fn notification(&self, _method: &str, _params: Value) {}

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
        write,
        read,
        Arc::new(Gated(gate.clone())),
        config(Framing::Lines),
    );
    let mut theirs = BufReader::new(theirs);
    let request = json!({"jsonrpc": "2.0", "id": 7, "method": "work", "params": {}});
    theirs
        .get_mut()
        .write_all(&frame(Framing::Lines, &request))
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
    let mut answering = config(Framing::Lines);
    answering.answer_malformed = true;
    let (_peer, theirs, _heard) = peer_with(answering);
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
        .write_all(&frame(Framing::Lines, &request))
        .await
        .unwrap();
    assert_eq!(next_written(&mut theirs, Framing::Lines).await["result"], 2);
}

/// Panics while answering, once it has said that it ran.
struct Panicking(Arc<AtomicBool>);

impl Handler for Panicking {
    fn notification(&self, _method: &str, _params: Value) {}

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
        write,
        read,
        Arc::new(Panicking(ran.clone())),
        config(Framing::Lines),
    );
    let mut theirs = theirs;
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "work", "params": {}});
    theirs
        .write_all(&frame(Framing::Lines, &request))
        .await
        .unwrap();
    while !ran.load(Ordering::SeqCst) {
        tokio::task::yield_now().await;
    }
    tokio::time::timeout(Duration::from_secs(10), peer.answered())
        .await
        .expect("the panicked request is no longer counted");
}
