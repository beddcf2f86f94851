//! A Firefox Remote Debugging Protocol (RDP) client over TCP
//! (`firefox --start-debugger-server PORT`).
//!
//! - Framing: every packet is `<len>:<json>`, `len` the decimal byte length
//!   of the UTF-8 JSON text ([`FrameDecoder`], [`encode`]). Bulk packets
//!   (`bulk ...`) are not used by the debugger and are a protocol error.
//! - Requests are `{to, type, ...}` and carry no id. Replies are
//!   `{from, ...}`; each actor answers its requests in order, so a reply is
//!   matched to the *oldest* unanswered request to the actor it comes
//!   from (FIFO per actor). A reply with `error` (`{from, error, message}`)
//!   is the failure of that request ([`RdpError::Failed`]).
//! - Events are unsolicited packets, recognised by their `type`
//!   ([`EVENT_TYPES`], the `events` of the protocol specs that ship in
//!   Firefox's `omni.ja`, `devtools/shared/specs/*.js`). A reply may carry a
//!   `type` of its own (`getEnvironment` answers `type: "block"`), so only
//!   the listed names are events; a packet from an actor that has no
//!   request outstanding is also kept as an event (the root's greeting).
//!   Events go to an inbox and are found later, whatever their order
//!   relative to replies.
//! - Every wait is bounded by the timeout; a closed socket, a malformed
//!   frame or invalid JSON is an error, never a panic.
//!
//! Packets are `serde_json::Value`: traces keep the raw packet, and only a
//! handful of fields are read.

use doppel_core::RawMessage;
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::net::tcp::OwnedWriteHalf;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// Packet `type`s that are events (unsolicited), not replies.
pub const EVENT_TYPES: &[&str] = &[
    "paused",
    "resumed",
    "newSource",
    "frameUpdate",
    "tabNavigated",
    "tabListChanged",
    "addonListChanged",
    "workerListChanged",
    "serviceWorkerRegistrationListChanged",
    "processListChanged",
    "forwardingCancelled",
    "descriptor-destroyed",
    "target-available-form",
    "target-destroyed-form",
    "resources-available-array",
    "resources-updated-array",
    "resources-destroyed-array",
    "resource-available-form",
    "resource-updated-form",
    "resource-destroyed-form",
    "consoleAPICall",
    "pageError",
    "logMessage",
    "evaluationResult",
    "documentEvent",
    "networkEvent",
];

/// Why an RDP exchange failed (see [`super::ClientError`]).
pub type RdpError = super::ClientError;

/// The frame of one packet: `<byte length>:<json>`.
pub fn encode(packet: &Value) -> Vec<u8> {
    let text = packet.to_string();
    let mut out = format!("{}:", text.len()).into_bytes();
    out.extend_from_slice(text.as_bytes());
    out
}

/// The longest length prefix accepted (a 1 GB packet is not a debugger's).
const MAX_LEN_DIGITS: usize = 9;

/// Splits a byte stream into packets; bytes may arrive in any chunks.
#[derive(Debug, Default)]
pub struct FrameDecoder {
    buf: Vec<u8>,
}

impl FrameDecoder {
    /// Appends received bytes.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes received but not yet a whole packet.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    /// The next whole packet, `Ok(None)` when more bytes are needed.
    ///
    /// Errors: a length prefix that is not decimal digits followed by `:`
    /// (including bulk packets), too long, or a body that is not JSON. The
    /// stream cannot be resynchronised after an error.
    pub fn next_packet(&mut self) -> Result<Option<Value>, String> {
        let colon = match self.buf.iter().position(|&b| b == b':') {
            Some(i) => i,
            None => {
                if let Some(b) = self.buf.iter().find(|b| !b.is_ascii_digit()) {
                    return Err(format!("bad frame: byte {b:#04x} in the length prefix"));
                }
                if self.buf.len() > MAX_LEN_DIGITS {
                    return Err(format!("bad frame: length prefix longer than {MAX_LEN_DIGITS} digits"));
                }
                return Ok(None);
            }
        };
        let prefix = &self.buf[..colon];
        if prefix.is_empty() || prefix.len() > MAX_LEN_DIGITS || !prefix.iter().all(u8::is_ascii_digit) {
            let shown = String::from_utf8_lossy(&prefix[..prefix.len().min(40)]).into_owned();
            return Err(format!("bad frame: length prefix {shown:?}"));
        }
        let len: usize = std::str::from_utf8(prefix)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| "bad frame: unreadable length".to_string())?;
        if len > super::MAX_MESSAGE_BYTES {
            return Err(format!(
                "bad frame: a {len}-byte packet, over the cap of {} bytes",
                super::MAX_MESSAGE_BYTES
            ));
        }
        let end = colon + 1 + len;
        if self.buf.len() < end {
            return Ok(None);
        }
        let body: Vec<u8> = self.buf.drain(..end).skip(colon + 1).collect();
        serde_json::from_slice(&body).map(Some).map_err(|e| {
            format!(
                "invalid JSON in a {len}-byte packet ({e}): {}",
                String::from_utf8_lossy(&body[..body.len().min(200)])
            )
        })
    }
}

/// Whether `packet` is an event (see the module documentation).
pub fn is_event_type(packet: &Value) -> bool {
    packet["type"].as_str().is_some_and(|t| EVENT_TYPES.contains(&t))
}

/// The `error` of a reply as text, if it is an error reply.
pub fn reply_error(reply: &Value) -> Option<String> {
    let e = reply.get("error")?;
    let name = e.as_str().map_or_else(|| e.to_string(), str::to_string);
    Some(match reply["message"].as_str() {
        Some(m) => format!("{name}: {m}"),
        None => name,
    })
}

/// What the reader task hands over.
enum Incoming {
    Packet(Value),
    Malformed(String),
    Closed(String),
}

/// One request waiting for its reply.
type Ticket = u64;

/// An RDP client over one TCP connection.
pub struct RdpClient {
    writer: OwnedWriteHalf,
    rx: mpsc::Receiver<Incoming>,
    reader: JoinHandle<()>,
    next_ticket: Ticket,
    /// Per actor, the unanswered requests, oldest first.
    outstanding: HashMap<String, VecDeque<Ticket>>,
    /// Replies that arrived for requests not yet collected.
    replies: HashMap<Ticket, Value>,
    inbox: VecDeque<Value>,
    transcript: crate::protocol::Transcript,
    record: fn(&Value) -> bool,
    timeout: Duration,
    closed: Option<String>,
}

impl Drop for RdpClient {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl RdpClient {
    /// Starts a client on a connected stream. The root's greeting is the
    /// first event of the inbox ([`RdpClient::greeting`]). Every later wait
    /// lasts at most `timeout`.
    pub fn new(stream: TcpStream, timeout: Duration) -> Self {
        let _ = stream.set_nodelay(true);
        let (mut read, writer) = stream.into_split();
        // Bounded: a flooding peer waits on its socket or pipe instead of
        // filling doppel's memory.
        let (tx, rx) = mpsc::channel(1024);
        let reader = tokio::spawn(async move {
            let mut dec = FrameDecoder::default();
            let mut chunk = vec![0u8; 64 * 1024];
            loop {
                let n = match read.read(&mut chunk).await {
                    Ok(0) => {
                        let _ = tx.send(Incoming::Closed("end of stream".into())).await;
                        return;
                    }
                    Ok(n) => n,
                    Err(e) => {
                        let _ = tx.send(Incoming::Closed(format!("reading: {e}"))).await;
                        return;
                    }
                };
                dec.push(&chunk[..n]);
                loop {
                    match dec.next_packet() {
                        Ok(Some(p)) => {
                            if tx.send(Incoming::Packet(p)).await.is_err() {
                                return;
                            }
                        }
                        Ok(None) => break,
                        Err(e) => {
                            let _ = tx.send(Incoming::Malformed(e)).await;
                            return;
                        }
                    }
                }
            }
        });
        Self {
            writer,
            rx,
            reader,
            next_ticket: 0,
            outstanding: HashMap::new(),
            replies: HashMap::new(),
            inbox: VecDeque::new(),
            transcript: crate::protocol::Transcript::default(),
            record: |_| true,
            timeout,
            closed: None,
        }
    }

    /// Leaves received packets for which `record` is false out of the
    /// transcript (they are still delivered).
    pub fn set_record_filter(&mut self, record: fn(&Value) -> bool) {
        self.record = record;
    }

    /// The bound of every wait.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Changes the bound of every later wait.
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    /// Packets exchanged since the last call.
    pub fn take_transcript(&mut self) -> Vec<RawMessage> {
        self.transcript.take()
    }

    /// Adds a note of doppel's own to the transcript (`[doppel] ...`).
    pub fn note(&mut self, text: impl std::fmt::Display) {
        self.transcript.push(RawMessage::received(format!("[doppel] {text}")));
    }

    /// Whether the connection is known to be closed.
    pub fn is_closed(&self) -> bool {
        self.closed.is_some()
    }

    /// Waits for the root's greeting (`{from: "root", applicationType, ...}`).
    ///
    /// Errors: those of [`RdpClient::wait_event`].
    pub async fn greeting(&mut self) -> Result<Value, RdpError> {
        self.wait_event("the root's greeting", |p| {
            p["from"] == "root" && p.get("applicationType").is_some()
        })
        .await
    }

    /// Sends request `kind` to actor `to` with the members of `params` (an
    /// object or null); returns the ticket of its reply.
    ///
    /// Errors: [`RdpError::Closed`] when the connection is gone,
    /// [`RdpError::Timeout`] when the write blocks longer than the timeout.
    pub async fn send(&mut self, to: &str, kind: &str, params: Value) -> Result<Ticket, RdpError> {
        if let Some(why) = &self.closed {
            return Err(RdpError::Closed(format!("sending {kind} to {to} after {why}")));
        }
        let mut packet = json!({"to": to, "type": kind});
        if let Value::Object(members) = params {
            for (k, v) in members {
                packet[k] = v;
            }
        }
        let frame = encode(&packet);
        self.transcript.push(RawMessage::sent(packet.to_string()));
        match tokio::time::timeout(self.timeout, self.writer.write_all(&frame)).await {
            Err(_) => Err(RdpError::Timeout(format!(
                "writing {kind} took over {:?}",
                self.timeout
            ))),
            Ok(Err(e)) => {
                let why = format!("writing {kind} to {to}: {e}");
                self.closed = Some(why.clone());
                Err(RdpError::Closed(why))
            }
            Ok(Ok(())) => {
                self.next_ticket += 1;
                self.outstanding
                    .entry(to.to_string())
                    .or_default()
                    .push_back(self.next_ticket);
                Ok(self.next_ticket)
            }
        }
    }

    /// Routes one received packet: a reply to the oldest outstanding
    /// request of its actor, anything else to the inbox.
    fn route(&mut self, packet: Value) {
        if (self.record)(&packet) {
            self.transcript.push(RawMessage::received(packet.to_string()));
        }
        if !is_event_type(&packet)
            && let Some(from) = packet["from"].as_str()
            && let Some(queue) = self.outstanding.get_mut(from)
            && let Some(ticket) = queue.pop_front()
        {
            if queue.is_empty() {
                self.outstanding.remove(from);
            }
            self.replies.insert(ticket, packet);
            return;
        }
        self.inbox.push_back(packet);
    }

    /// Receives and routes the next packet from the connection.
    async fn recv(&mut self, deadline: Instant, what: &str) -> Result<(), RdpError> {
        if let Some(why) = &self.closed {
            return Err(RdpError::Closed(format!("{why}, while waiting for {what}")));
        }
        match super::recv_before(deadline, &mut self.rx).await {
            Err(_) => Err(RdpError::Timeout(format!(
                "timed out after {:?} waiting for {what}",
                self.timeout
            ))),
            Ok(None) => {
                self.closed = Some("reader stopped".into());
                Err(RdpError::Closed(format!("while waiting for {what}")))
            }
            Ok(Some(Incoming::Closed(why))) => {
                self.transcript.push(RawMessage::received(format!("[closed] {why}")));
                let e = RdpError::Closed(format!("{why}, while waiting for {what}"));
                self.closed = Some(why);
                Err(e)
            }
            Ok(Some(Incoming::Malformed(e))) => {
                self.transcript.push(RawMessage::received(format!("[malformed] {e}")));
                // The stream cannot be resynchronised.
                self.closed = Some(format!("malformed packet: {e}"));
                Err(RdpError::Protocol(e))
            }
            Ok(Some(Incoming::Packet(p))) => {
                if p.get("from").and_then(Value::as_str).is_none() {
                    let e = format!("a packet without `from`: {p}");
                    self.transcript.push(RawMessage::received(format!("[malformed] {e}")));
                    return Err(RdpError::Protocol(e));
                }
                self.route(p);
                Ok(())
            }
        }
    }

    /// Waits for the reply of `ticket` (a `kind` request) until `deadline`.
    ///
    /// Errors: [`RdpError::Failed`] for an error reply; timeouts, a closed
    /// connection and malformed packets.
    pub async fn reply_until(&mut self, ticket: Ticket, kind: &str, deadline: Instant) -> Result<Value, RdpError> {
        loop {
            if let Some(r) = self.replies.remove(&ticket) {
                return match reply_error(&r) {
                    Some(e) => Err(RdpError::Failed(format!("{kind}: {e}"))),
                    None => Ok(r),
                };
            }
            self.recv(deadline, &format!("reply to {kind}")).await?;
        }
    }

    /// Sends a request and waits (at most the timeout) for its reply.
    pub async fn request(&mut self, to: &str, kind: &str, params: Value) -> Result<Value, RdpError> {
        let deadline = Instant::now() + self.timeout;
        let t = self.send(to, kind, params).await?;
        self.reply_until(t, kind, deadline).await
    }

    /// Waits for the first event (inbox first) matching `pred`, at most
    /// until `deadline`; other packets stay queued.
    ///
    /// Errors: [`RdpError::Timeout`], [`RdpError::Closed`], [`RdpError::Protocol`].
    pub async fn wait_event_until(
        &mut self,
        deadline: Instant,
        what: &str,
        pred: impl Fn(&Value) -> bool,
    ) -> Result<Value, RdpError> {
        let mut seen = 0;
        loop {
            if let Some(i) = self.inbox.iter().skip(seen).position(&pred) {
                return Ok(self.inbox.remove(seen + i).expect("index in range"));
            }
            seen = self.inbox.len();
            self.recv(deadline, what).await?;
        }
    }

    /// Waits, at most until `deadline`, until some queued event matches
    /// `pred`, leaving it (and everything else) in the inbox.
    ///
    /// Errors: [`RdpError::Timeout`], [`RdpError::Closed`], [`RdpError::Protocol`].
    pub async fn wait_queued_until(
        &mut self,
        deadline: Instant,
        what: &str,
        pred: impl Fn(&Value) -> bool,
    ) -> Result<(), RdpError> {
        let mut seen = 0;
        loop {
            if self.inbox.iter().skip(seen).any(&pred) {
                return Ok(());
            }
            seen = self.inbox.len();
            self.recv(deadline, what).await?;
        }
    }

    /// Removes and returns the first queued event matching `pred`.
    pub fn take_first(&mut self, pred: impl Fn(&Value) -> bool) -> Option<Value> {
        let i = self.inbox.iter().position(pred)?;
        self.inbox.remove(i)
    }

    /// [`RdpClient::wait_event_until`] with a deadline one timeout from now.
    pub async fn wait_event(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Result<Value, RdpError> {
        let deadline = Instant::now() + self.timeout;
        self.wait_event_until(deadline, what, pred).await
    }

    /// Moves every packet already received into the inbox (or to its
    /// request), without waiting.
    ///
    /// Errors: a closed connection or a malformed packet.
    pub fn pump(&mut self) -> Result<(), RdpError> {
        loop {
            match self.rx.try_recv() {
                Ok(Incoming::Packet(p)) => self.route(p),
                Ok(Incoming::Malformed(e)) => {
                    self.transcript.push(RawMessage::received(format!("[malformed] {e}")));
                    self.closed = Some(format!("malformed packet: {e}"));
                    return Err(RdpError::Protocol(e));
                }
                Ok(Incoming::Closed(why)) => {
                    self.transcript.push(RawMessage::received(format!("[closed] {why}")));
                    self.closed = Some(why.clone());
                    return Err(RdpError::Closed(why));
                }
                Err(mpsc::error::TryRecvError::Empty) => return Ok(()),
                Err(mpsc::error::TryRecvError::Disconnected) => {
                    self.closed = Some("reader stopped".into());
                    return Err(RdpError::Closed("reader stopped".into()));
                }
            }
        }
    }

    /// Removes and returns the queued events matching `pred`, in arrival order.
    pub fn take_events(&mut self, pred: impl Fn(&Value) -> bool) -> Vec<Value> {
        let (take, keep): (VecDeque<Value>, VecDeque<Value>) =
            std::mem::take(&mut self.inbox).into_iter().partition(pred);
        self.inbox = keep;
        take.into()
    }

    /// Drops every queued event.
    pub fn clear_inbox(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.inbox).into()
    }

    /// Forgets requests whose replies will never be collected (after a
    /// wait that timed out, their replies would be taken for the next ones).
    pub fn forget_outstanding(&mut self) {
        self.outstanding.clear();
        self.replies.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_carry_the_byte_length_of_the_utf8_text() {
        let p = json!({"to": "root", "s": "ü€😀"});
        let f = encode(&p);
        let text = p.to_string();
        assert!(f.starts_with(format!("{}:", text.len()).as_bytes()));
        assert_ne!(text.len(), text.chars().count());
        let mut d = FrameDecoder::default();
        d.push(&f);
        assert_eq!(d.next_packet().unwrap(), Some(p));
        assert_eq!(d.next_packet().unwrap(), None);
    }

    #[test]
    fn bad_prefixes_and_bodies_are_errors() {
        let mut d = FrameDecoder::default();
        d.push(b"bulk actor type 3:abc");
        assert!(d.next_packet().is_err());
        let mut d = FrameDecoder::default();
        d.push(b"12345678901234");
        assert!(d.next_packet().is_err());
        let mut d = FrameDecoder::default();
        d.push(b"3:{x}");
        assert!(d.next_packet().is_err());
        let mut d = FrameDecoder::default();
        d.push(b":{}");
        assert!(d.next_packet().is_err());
    }

    #[test]
    fn events_are_told_from_replies_by_type() {
        assert!(is_event_type(&json!({"from": "t", "type": "paused"})));
        assert!(!is_event_type(&json!({"from": "f", "type": "block", "bindings": {}})));
        assert!(!is_event_type(&json!({"from": "f"})));
        assert_eq!(
            reply_error(&json!({"from": "a", "error": "noSuchActor", "message": "gone"})).as_deref(),
            Some("noSuchActor: gone")
        );
        assert_eq!(reply_error(&json!({"from": "a"})), None);
    }
}
