//! A Debug Adapter Protocol client (DAP specification, "Base Protocol").
//!
//! - Framing: `Content-Length: N\r\n\r\n` + N bytes of JSON, decoded by
//!   [`FrameDecoder`] from arbitrary chunks (extra headers tolerated; a
//!   malformed header is reported, never a panic).
//! - Requests carry increasing `seq`; responses are matched by `request_seq`
//!   only (lldb-dap sends `seq: 0` on every message).
//! - Messages that arrive while waiting for something else (events,
//!   responses to earlier requests) go to a backlog and are found later, so
//!   the client tolerates a `launch` response that comes before or after
//!   `configurationDone` (lldb-dap 19 answers early, 22 and debugpy late).
//! - Reverse requests (`runInTerminal`, `startDebugging`) are answered with
//!   an error response so that the adapter does not wait forever.
//! - Every wait has a deadline; every message is kept for the transcript.
//!
//! Messages are `serde_json::Value`: adapters deviate from the schema, and
//! traces keep the raw message anyway.

use doppel_core::RawMessage;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// Why a DAP exchange failed (see [`super::ClientError`]).
pub type DapError = super::ClientError;

/// Incremental decoder of `Content-Length` frames.
#[derive(Debug, Default)]
pub struct FrameDecoder {
    buf: Vec<u8>,
    /// Bytes of an oversized body still to be skipped.
    skip: usize,
}

impl FrameDecoder {
    /// Adds bytes and returns every complete frame: `Ok(json)` or `Err(reason)`
    /// for a malformed header or body (the decoder then skips past it).
    ///
    /// Memory stays bounded: a body over [`super::MAX_MESSAGE_BYTES`] is an
    /// error and its bytes are skipped as they come; bytes that do not end
    /// a header within 64 KiB are an error and dropped.
    pub fn push(&mut self, mut bytes: &[u8]) -> Vec<Result<Value, String>> {
        let mut out = Vec::new();
        if self.skip > 0 {
            let n = self.skip.min(bytes.len());
            self.skip -= n;
            bytes = &bytes[n..];
        }
        self.buf.extend_from_slice(bytes);
        loop {
            let Some(end) = find(&self.buf, b"\r\n\r\n") else {
                if self.buf.len() > MAX_HEADER_BYTES {
                    out.push(Err(format!(
                        "{} bytes without the end of a frame header: {:?}",
                        self.buf.len(),
                        String::from_utf8_lossy(&self.buf[..200])
                    )));
                    // Keep the last 3 bytes: they may begin a header's end.
                    self.buf.drain(..self.buf.len() - 3);
                }
                break;
            };
            let header = String::from_utf8_lossy(&self.buf[..end]).into_owned();
            let len = header.split("\r\n").find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.trim()
                    .eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse::<usize>().ok())
                    .flatten()
            });
            let Some(len) = len else {
                out.push(Err(format!("frame header without a valid Content-Length: {header:?}")));
                self.buf.drain(..end + 4);
                continue;
            };
            if len > super::MAX_MESSAGE_BYTES {
                out.push(Err(format!(
                    "a frame of {len} bytes, over the cap of {} bytes",
                    super::MAX_MESSAGE_BYTES
                )));
                let have = self.buf.len() - (end + 4);
                let n = have.min(len);
                self.buf.drain(..end + 4 + n);
                self.skip = len - n;
                if self.skip > 0 {
                    break;
                }
                continue;
            }
            if self.buf.len() < end + 4 + len {
                break;
            }
            let body: Vec<u8> = self.buf.drain(..end + 4 + len).skip(end + 4).collect();
            out.push(
                serde_json::from_slice(&body)
                    .map_err(|e| format!("invalid JSON body ({e}): {}", String::from_utf8_lossy(&body))),
            );
        }
        out
    }
}

/// Longest frame header accepted, in bytes.
const MAX_HEADER_BYTES: usize = 64 * 1024;

/// Most program output (`output` events of category stdout/stderr) kept per
/// run, in bytes; what follows is dropped and marked once.
pub const MAX_PROGRAM_OUTPUT_BYTES: usize = 1 << 20;

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Encodes one message as a frame.
pub fn encode(msg: &Value) -> Vec<u8> {
    let body = msg.to_string();
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

/// A DAP client over a byte stream to an adapter: its stdin and stdout, or
/// a socket connection to an adapter in server mode.
pub struct DapClient {
    writer: Box<dyn AsyncWrite + Send + Unpin>,
    rx: mpsc::Receiver<Result<Value, String>>,
    seq: i64,
    backlog: VecDeque<Value>,
    transcript: crate::protocol::Transcript,
    /// Program output (`output` events of category stdout/stderr) seen so far.
    pub program_output: String,
    timeout: Duration,
    closed: bool,
}

impl DapClient {
    /// Starts reading frames from `reader` (the adapter's stdout or a socket);
    /// requests go to `writer`; every wait lasts at most `timeout`.
    pub fn new(
        writer: impl AsyncWrite + Send + Unpin + 'static,
        mut reader: impl AsyncRead + Send + Unpin + 'static,
        timeout: Duration,
    ) -> Self {
        // Bounded: a flooding peer waits on its socket or pipe instead of
        // filling doppel's memory.
        let (tx, rx) = mpsc::channel(1024);
        tokio::spawn(async move {
            let mut dec = FrameDecoder::default();
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match reader.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        for frame in dec.push(&buf[..n]) {
                            if tx.send(frame).await.is_err() {
                                return;
                            }
                        }
                    }
                }
            }
        });
        Self {
            writer: Box::new(writer),
            rx,
            seq: 0,
            backlog: VecDeque::new(),
            transcript: crate::protocol::Transcript::default(),
            program_output: String::new(),
            timeout,
            closed: false,
        }
    }

    /// Messages exchanged since the last call.
    pub fn take_transcript(&mut self) -> Vec<RawMessage> {
        self.transcript.take()
    }

    /// Sends a request; returns its `seq`.
    ///
    /// Errors: [`DapError::Closed`] when the adapter's input is gone.
    pub async fn send(&mut self, command: &str, arguments: Option<Value>) -> Result<i64, DapError> {
        self.seq += 1;
        let mut msg = json!({"seq": self.seq, "type": "request", "command": command});
        if let Some(a) = arguments {
            msg["arguments"] = a;
        }
        self.write(&msg).await?;
        Ok(self.seq)
    }

    async fn write(&mut self, msg: &Value) -> Result<(), DapError> {
        self.transcript.push(RawMessage::sent(msg.to_string()));
        let frame = encode(msg);
        let w = async {
            self.writer.write_all(&frame).await?;
            self.writer.flush().await
        };
        w.await
            .map_err(|e| DapError::Closed(format!("writing '{}': {e}", msg["command"].as_str().unwrap_or("?"))))
    }

    /// Receives the next message from the adapter (not from the backlog).
    async fn recv(&mut self, deadline: Instant, what: &str) -> Result<Value, DapError> {
        loop {
            if self.closed {
                return Err(DapError::Closed(format!("while waiting for {what}")));
            }
            match super::recv_before(deadline, &mut self.rx).await {
                Err(_) => {
                    return Err(DapError::Timeout(format!(
                        "timed out after {:?} waiting for {what}",
                        self.timeout
                    )));
                }
                Ok(None) => {
                    self.closed = true;
                    return Err(DapError::Closed(format!("while waiting for {what}")));
                }
                Ok(Some(Err(e))) => {
                    self.transcript.push(RawMessage::received(format!("[malformed] {e}")));
                    return Err(DapError::Protocol(e));
                }
                Ok(Some(Ok(msg))) => {
                    self.transcript.push(RawMessage::received(msg.to_string()));
                    if msg["type"] == "request" {
                        // A reverse request: refuse it so the adapter goes on.
                        let reply = json!({
                            "seq": 0, "type": "response", "request_seq": msg["seq"], "success": false,
                            "command": msg["command"], "message": "not supported by doppel"
                        });
                        self.write(&reply).await?;
                        continue;
                    }
                    if msg["type"] == "event" && msg["event"] == "output" {
                        let cat = msg["body"]["category"].as_str().unwrap_or("console");
                        if (cat == "stdout" || cat == "stderr") && self.program_output.len() <= MAX_PROGRAM_OUTPUT_BYTES
                        {
                            self.program_output
                                .push_str(&msg["body"]["output"].as_str().unwrap_or("").replace("\r\n", "\n"));
                            if self.program_output.len() > MAX_PROGRAM_OUTPUT_BYTES {
                                super::cut(&mut self.program_output, MAX_PROGRAM_OUTPUT_BYTES);
                                self.program_output.push_str(" (more output dropped)");
                            }
                        }
                    }
                    return Ok(msg);
                }
            }
        }
    }

    /// Waits for the first message (backlog first) matching `pred`; others go
    /// to the backlog.
    pub async fn wait_for(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Result<Value, DapError> {
        if let Some(i) = self.backlog.iter().position(&pred) {
            return Ok(self.backlog.remove(i).expect("index in range"));
        }
        let deadline = Instant::now() + self.timeout;
        loop {
            let msg = self.recv(deadline, what).await?;
            if pred(&msg) {
                return Ok(msg);
            }
            self.backlog.push_back(msg);
        }
    }

    /// Waits for the response to request `seq`; its `body` (or `null`).
    ///
    /// Errors: [`DapError::Failed`] with the adapter's message for `success: false`.
    pub async fn response(&mut self, seq: i64, command: &str) -> Result<Value, DapError> {
        let r = self
            .wait_for(&format!("the response to '{command}'"), |m| {
                m["type"] == "response" && m["request_seq"] == seq
            })
            .await?;
        if r["success"] == true {
            Ok(r.get("body").cloned().unwrap_or(Value::Null))
        } else {
            let msg = r["message"]
                .as_str()
                .or_else(|| r["body"]["error"]["format"].as_str())
                .unwrap_or("unknown error");
            Err(DapError::Failed(format!("{command}: {msg}")))
        }
    }

    /// Sends a request and waits for its response body.
    pub async fn request(&mut self, command: &str, arguments: Value) -> Result<Value, DapError> {
        let seq = self.send(command, Some(arguments)).await?;
        self.response(seq, command).await
    }

    /// Waits for an event whose name is in `names`.
    pub async fn event(&mut self, names: &[&str]) -> Result<Value, DapError> {
        let what = format!("event {}", names.join("/"));
        self.wait_for(&what, |m| {
            m["type"] == "event" && names.iter().any(|n| m["event"] == *n)
        })
        .await
    }

    /// Removes and returns backlog events named `name`.
    pub fn take_events(&mut self, name: &str) -> Vec<Value> {
        let (hit, keep): (Vec<Value>, Vec<Value>) = self
            .backlog
            .drain(..)
            .partition(|m| m["type"] == "event" && m["event"] == name);
        self.backlog = keep.into();
        hit
    }

    /// Drops every queued message (between runs).
    pub fn clear_backlog(&mut self) {
        self.backlog.clear();
    }

    /// Reads (and keeps for the transcript) whatever the adapter still sends
    /// until it closes the stream, for at most `timeout`. Returns whether it
    /// closed. After `disconnect`, an adapter in server mode still writes
    /// events; closing the connection under it first makes lldb-dap 22 die
    /// of SIGPIPE, taking every later session with it.
    pub async fn drain_until_closed(&mut self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while !self.closed {
            match super::recv_before(deadline, &mut self.rx).await {
                Err(_) => return false,
                Ok(None) => self.closed = true,
                Ok(Some(Ok(msg))) => {
                    self.transcript.push(RawMessage::received(msg.to_string()));
                    self.backlog.push_back(msg);
                }
                Ok(Some(Err(e))) => self.transcript.push(RawMessage::received(format!("[malformed] {e}"))),
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn after_disconnect_the_client_reads_until_the_adapter_closes() {
        let (client_side, mut adapter_side) = tokio::io::duplex(4096);
        let (r, w) = tokio::io::split(client_side);
        let mut dap = DapClient::new(w, r, Duration::from_secs(2));
        tokio::spawn(async move {
            // The adapter answers, then keeps writing events for a while
            // before it closes its end.
            adapter_side
                .write_all(&encode(&json!({"type": "response", "request_seq": 1, "success": true})))
                .await
                .unwrap();
            tokio::time::sleep(Duration::from_millis(50)).await;
            adapter_side
                .write_all(&encode(&json!({"type": "event", "event": "terminated"})))
                .await
                .unwrap();
            tokio::time::sleep(Duration::from_millis(50)).await;
        });
        dap.request("disconnect", json!({})).await.unwrap();
        assert!(dap.drain_until_closed(Duration::from_secs(2)).await);
        assert!(dap.take_transcript().iter().any(|m| m.text.contains("terminated")));
        // A peer that never closes: the wait ends at the timeout.
        let (client_side, _keep_open) = tokio::io::duplex(4096);
        let (r, w) = tokio::io::split(client_side);
        let mut dap = DapClient::new(w, r, Duration::from_secs(2));
        assert!(!dap.drain_until_closed(Duration::from_millis(100)).await);
    }

    #[tokio::test]
    async fn an_adapter_that_never_answers_is_a_timeout_naming_the_request() {
        let (client_side, _adapter_side) = tokio::io::duplex(4096);
        let (r, w) = tokio::io::split(client_side);
        let mut dap = DapClient::new(w, r, Duration::from_millis(100));
        match dap.request("next", json!({})).await {
            Err(DapError::Timeout(m)) => {
                assert_eq!(m, "timed out after 100ms waiting for the response to 'next'")
            }
            other => panic!("expected a timeout, got {other:?}"),
        }
    }

    #[test]
    fn oversized_frames_and_headerless_floods_stay_bounded() {
        let mut d = FrameDecoder::default();
        let big = super::super::MAX_MESSAGE_BYTES + 10;
        let got = d.push(format!("Content-Length: {big}\r\n\r\n").as_bytes());
        assert!(got[0].as_ref().unwrap_err().contains("over the cap"));
        // The body comes in chunks and is skipped without being kept.
        let chunk = vec![b'x'; 1 << 20];
        let mut left = big;
        while left > 0 {
            let n = left.min(chunk.len());
            assert!(d.push(&chunk[..n]).is_empty());
            assert!(d.buf.is_empty());
            left -= n;
        }
        assert_eq!(d.push(&encode(&json!({"after": 1})))[0].as_ref().unwrap()["after"], 1);
        // Garbage without a header end.
        let mut d = FrameDecoder::default();
        let mut errors = 0;
        for _ in 0..10 {
            errors += d.push(&vec![b'g'; 50_000]).len();
            assert!(d.buf.len() <= MAX_HEADER_BYTES + 50_000);
        }
        assert!(errors > 0);
    }

    #[tokio::test]
    async fn a_flooding_adapter_cannot_defeat_the_deadline() {
        let (client_side, mut adapter_side) = tokio::io::duplex(1 << 16);
        let (r, w) = tokio::io::split(client_side);
        let mut dap = DapClient::new(w, r, Duration::from_millis(300));
        let flood = tokio::spawn(async move {
            let ev = encode(
                &json!({"type": "event", "event": "output", "body": {"category": "stdout", "output": "x".repeat(1000)}}),
            );
            while adapter_side.write_all(&ev).await.is_ok() {}
        });
        let start = std::time::Instant::now();
        let r = dap.request("next", json!({})).await;
        assert!(matches!(r, Err(DapError::Timeout(_))), "{r:?}");
        assert!(start.elapsed() < Duration::from_secs(5), "{:?}", start.elapsed());
        assert!(dap.program_output.len() < MAX_PROGRAM_OUTPUT_BYTES + 100);
        flood.abort();
    }

    #[test]
    fn frames_split_at_odd_places_are_reassembled() {
        let a = encode(&json!({"seq": 0, "type": "event", "event": "initialized"}));
        let b = encode(&json!({"seq": 0, "type": "response", "request_seq": 3, "success": true}));
        let all: Vec<u8> = a.iter().chain(b.iter()).copied().collect();
        for cut in [1, 5, 17, a.len() - 1, a.len(), a.len() + 3] {
            let mut d = FrameDecoder::default();
            let mut got = d.push(&all[..cut]);
            got.extend(d.push(&all[cut..]));
            let got: Vec<Value> = got.into_iter().map(Result::unwrap).collect();
            assert_eq!(got.len(), 2, "cut at {cut}");
            assert_eq!(got[1]["request_seq"], 3);
        }
    }

    #[test]
    fn extra_headers_are_tolerated_and_bad_frames_reported() {
        let mut d = FrameDecoder::default();
        let body = br#"{"type":"event","event":"x"}"#;
        let mut bytes = format!(
            "Content-Type: application/json\r\ncontent-length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        bytes.extend_from_slice(body);
        assert_eq!(d.push(&bytes)[0].as_ref().unwrap()["event"], "x");
        let bad = d.push(b"Content-Length: nope\r\n\r\n");
        assert!(bad[0].is_err());
        let bad_json = d.push(b"Content-Length: 3\r\n\r\n{x}");
        assert!(bad_json[0].as_ref().unwrap_err().contains("invalid JSON"));
        // The decoder recovers for the next frame.
        assert!(d.push(&encode(&json!({"a": 1})))[0].is_ok());
    }

    #[test]
    fn every_frame_of_a_recorded_lldb_dap_19_session_decodes() {
        let text = include_str!("../../tests/data/lldb-session.jsonl");
        let mut d = FrameDecoder::default();
        let mut events = Vec::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let msg: Value = serde_json::from_str(line).unwrap();
            // Re-frame each recorded message in 7-byte chunks.
            for chunk in encode(&msg).chunks(7) {
                for f in d.push(chunk) {
                    let f = f.unwrap();
                    if f["type"] == "event" {
                        events.push(f["event"].as_str().unwrap_or("").to_string());
                    }
                }
            }
        }
        for e in ["initialized", "stopped", "exited", "terminated"] {
            assert!(events.iter().any(|x| x == e), "missing {e} in {events:?}");
        }
    }
}
