//! The RDP client against a session recorded from the real Firefox ESR 153
//! (`tests/data/firefox-session.rdp`: one packet per line, `-> ` what the
//! client sent, `<- ` the exact frame the browser sent). A local server
//! replays the browser's side in awkward chunks (single bytes, frames split
//! in the middle of a multibyte character, several frames in one write);
//! every reply must reach the request it answers (FIFO per actor) and every
//! event the inbox.

use doppel_debuggers::protocol::rdp::{FrameDecoder, RdpClient, RdpError, is_event_type};
use serde_json::Value;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const SESSION: &[u8] = include_bytes!("data/firefox-session.rdp");

enum Step {
    Sent(Value),
    Received(Vec<u8>),
}

fn steps() -> Vec<Step> {
    SESSION
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| match &l[..3] {
            b"-> " => {
                let frame = &l[3..];
                let colon = frame.iter().position(|&b| b == b':').unwrap();
                Step::Sent(serde_json::from_slice(&frame[colon + 1..]).unwrap())
            }
            b"<- " => Step::Received(l[3..].to_vec()),
            other => panic!("bad line prefix {other:?}"),
        })
        .collect()
}

#[test]
fn every_recorded_frame_decodes_in_any_chunking() {
    let stream: Vec<u8> = steps()
        .into_iter()
        .filter_map(|s| match s {
            Step::Received(f) => Some(f),
            Step::Sent(_) => None,
        })
        .flatten()
        .collect();
    assert!(
        std::str::from_utf8(&stream).unwrap().contains("probé"),
        "the recording has multibyte UTF-8"
    );
    let count = SESSION.split(|&b| b == b'\n').filter(|l| l.starts_with(b"<- ")).count();
    for chunk in [1, 2, 3, 7, 64, 1000, stream.len()] {
        let mut d = FrameDecoder::default();
        let mut got = Vec::new();
        for c in stream.chunks(chunk) {
            d.push(c);
            while let Some(p) = d.next_packet().unwrap() {
                got.push(p);
            }
        }
        assert_eq!(got.len(), count, "chunks of {chunk}");
        assert_eq!(d.pending(), 0);
        assert!(got.iter().all(|p| p["from"].is_string()));
    }
}

#[tokio::test]
async fn a_replayed_session_routes_replies_fifo_per_actor_and_events_to_the_inbox() {
    let steps = steps();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    // The browser's side: before each request of the recording, wait for the
    // client's request; write what the browser sent in between in odd chunks.
    let script: Vec<(bool, Vec<u8>)> = steps
        .iter()
        .map(|s| match s {
            Step::Sent(_) => (true, Vec::new()),
            Step::Received(f) => (false, f.clone()),
        })
        .collect();
    let server = tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        let mut dec = FrameDecoder::default();
        let mut pending_out: Vec<u8> = Vec::new();
        let mut buf = vec![0u8; 65536];
        let mut n_write = 0usize;
        for (is_request, frame) in script {
            if is_request {
                // Flush what precedes the request: split the batch at 5
                // bytes, then the rest, so frames straddle writes.
                let cut = pending_out.len().min(5 + n_write % 3);
                sock.write_all(&pending_out[..cut]).await.unwrap();
                sock.flush().await.unwrap();
                tokio::time::sleep(Duration::from_millis(1)).await;
                sock.write_all(&pending_out[cut..]).await.unwrap();
                pending_out.clear();
                n_write += 1;
                loop {
                    if dec.next_packet().unwrap().is_some() {
                        break;
                    }
                    let n = sock.read(&mut buf).await.unwrap();
                    assert!(n > 0, "client hung up");
                    dec.push(&buf[..n]);
                }
            } else {
                pending_out.extend_from_slice(&frame);
            }
        }
        sock.write_all(&pending_out).await.unwrap();
        // Then a truncated frame and the end of the stream.
        sock.write_all(b"50:{\"from\":").await.unwrap();
    });
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut c = RdpClient::new(stream, Duration::from_secs(5));
    let greeting = c.greeting().await.unwrap();
    assert_eq!(greeting["applicationType"], "browser");

    // Replay: send each recorded request; its reply is the first later
    // non-event packet from the same actor in the recording.
    let mut expected_events = 0;
    for (i, s) in steps.iter().enumerate() {
        let Step::Sent(req) = s else { continue };
        let to = req["to"].as_str().unwrap();
        let kind = req["type"].as_str().unwrap();
        let mut params = req.clone();
        params.as_object_mut().unwrap().remove("to");
        params.as_object_mut().unwrap().remove("type");
        let expected = steps[i + 1..].iter().find_map(|s| match s {
            Step::Received(f) => {
                let colon = f.iter().position(|&b| b == b':').unwrap();
                let p: Value = serde_json::from_slice(&f[colon + 1..]).unwrap();
                (p["from"] == to && !is_event_type(&p)).then_some(p)
            }
            Step::Sent(_) => None,
        });
        let got = c.request(to, kind, params).await;
        match (got, expected) {
            (Ok(r), Some(e)) => assert_eq!(r, e, "reply to {kind}"),
            (Err(RdpError::Closed(_)), None) => break,
            (got, e) => panic!("{kind}: got {got:?}, expected {e:?}"),
        }
        expected_events += 1;
    }
    assert!(expected_events > 20);
    let paused = c.take_events(|p| p["type"] == "paused");
    assert!(paused.len() >= 3, "{paused:?}");
    assert!(
        paused
            .iter()
            .any(|p| p["why"]["type"] == "breakpoint" && p["frame"]["where"]["line"] == 11)
    );
    let resources = c.take_events(|p| p["type"] == "resources-available-array");
    assert!(!resources.is_empty());
    // The truncated last frame is no packet; the end of the stream is an error.
    let end = c.wait_event("nothing", |_| false).await;
    assert!(matches!(end, Err(RdpError::Closed(_))), "{end:?}");
    server.await.unwrap();
}
