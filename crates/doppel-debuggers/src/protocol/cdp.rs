//! A Chrome DevTools Protocol client over a websocket (Node's inspector,
//! Chromium's browser endpoint).
//!
//! - Messages are JSON text frames. Commands are `{id, method, params,
//!   sessionId?}` with increasing `id`; a response carries the same `id` and
//!   either `result` or `error: {code, message}`. Events are `{method,
//!   params, sessionId?}`; `sessionId` names the flattened target session
//!   (`Target.attachToTarget{flatten: true}`) an event belongs to, absent for
//!   the browser (or Node) itself.
//! - Messages that arrive while waiting for something else go to an
//!   [`Inbox`] and are found later, so the order of a response and the
//!   events it causes does not matter.
//! - Every wait is bounded by the action timeout; every message is kept for
//!   the transcript (a backend may leave out noisy messages with
//!   [`CdpClient::set_record_filter`]).
//! - Linux `TCP_QUICKACK` is set on the socket before every read (it is not
//!   sticky): Node writes a command's response and the `Debugger.paused`
//!   event it causes as two small segments, and the kernel's delayed ACK of
//!   the first would hold the second for ~40 ms.
//!
//! Messages are `serde_json::Value`: traces keep the raw message, and only a
//! handful of fields are read.

use doppel_core::RawMessage;
use futures::SinkExt;
use futures::stream::{SplitSink, StreamExt};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;

/// Why a CDP exchange failed (see [`super::ClientError`]).
pub type CdpError = super::ClientError;

/// One message received from the debugger, classified.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// The answer to command `id`: its `result`, or the error's message.
    Response {
        /// The `id` of the command this answers.
        id: i64,
        /// The flat-mode `sessionId` of the target it came from (`None`: the browser).
        session: Option<String>,
        /// The command's `result`, or the `error.message`.
        result: Result<Value, String>,
    },
    /// An event `method` with its `params` (`null` if absent).
    Event {
        /// The event's name (`Debugger.paused`).
        method: String,
        /// The flat-mode `sessionId` of the target it came from (`None`: the browser).
        session: Option<String>,
        /// The event's `params` (`null` if absent).
        params: Value,
    },
}

/// Classifies a received message.
///
/// Errors: a description when it is neither a response (`id`) nor an event
/// (`method`), or when a response has neither `result` nor `error`.
pub fn classify(msg: &Value) -> Result<Incoming, String> {
    let session = msg["sessionId"].as_str().map(str::to_string);
    if let Some(id) = msg["id"].as_i64() {
        let result = if let Some(e) = msg.get("error") {
            let text = e["message"].as_str().unwrap_or("unknown error");
            Err(match e.get("data").and_then(Value::as_str) {
                Some(d) => format!("{text} ({d})"),
                None => text.to_string(),
            })
        } else if let Some(r) = msg.get("result") {
            Ok(r.clone())
        } else {
            return Err(format!("response without result or error: {msg}"));
        };
        return Ok(Incoming::Response { id, session, result });
    }
    if let Some(method) = msg["method"].as_str() {
        return Ok(Incoming::Event {
            method: method.to_string(),
            session,
            params: msg.get("params").cloned().unwrap_or(Value::Null),
        });
    }
    Err(format!("neither a response nor an event: {msg}"))
}

/// Whether `msg` is the response to command `id`.
pub fn is_response(msg: &Value, id: i64) -> bool {
    msg["id"].as_i64() == Some(id)
}

/// Whether `msg` is an event named in `methods` of session `session`
/// (`None`: the root session, a message without `sessionId`).
pub fn is_event(msg: &Value, methods: &[&str], session: Option<&str>) -> bool {
    msg.get("id").is_none()
        && msg["method"].as_str().is_some_and(|m| methods.contains(&m))
        && msg["sessionId"].as_str() == session
}

/// The messages received but not yet consumed, oldest first.
#[derive(Debug, Default)]
pub struct Inbox {
    queue: VecDeque<Value>,
}

impl Inbox {
    /// Queues a message.
    pub fn push(&mut self, msg: Value) {
        self.queue.push_back(msg);
    }

    /// Removes and returns the oldest message matching `pred`.
    pub fn take(&mut self, pred: impl Fn(&Value) -> bool) -> Option<Value> {
        let i = self.queue.iter().position(pred)?;
        self.queue.remove(i)
    }

    /// Removes and returns every message matching `pred`, oldest first.
    pub fn take_all(&mut self, pred: impl Fn(&Value) -> bool) -> Vec<Value> {
        let (hit, keep): (Vec<Value>, Vec<Value>) = self.queue.drain(..).partition(|m| pred(m));
        self.queue = keep.into();
        hit
    }

    /// Number of queued messages.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}

/// A `TcpStream` that sets `TCP_QUICKACK` before every read (see the module
/// documentation).
struct QuickAck(TcpStream);

impl QuickAck {
    fn quickack(&self) {
        use std::os::fd::AsRawFd;
        let one: libc::c_int = 1;
        // SAFETY: setsockopt on a socket we own, with a valid int option.
        let rc = unsafe {
            libc::setsockopt(
                self.0.as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_QUICKACK,
                (&one as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if rc != 0 {
            // Only latency depends on it; the exchange itself is unaffected.
            tracing::debug!("TCP_QUICKACK: {}", std::io::Error::last_os_error());
        }
    }
}

impl AsyncRead for QuickAck {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let me = self.get_mut();
        me.quickack();
        Pin::new(&mut me.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for QuickAck {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write(cx, buf)
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_flush(cx)
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_shutdown(cx)
    }
}

/// Connects to `host_port` from inside the network namespace of `pid`: a
/// short-lived thread of our own enters the namespace (`setns` changes only
/// the calling thread), creates the socket there and exits; the socket stays
/// in that namespace.
async fn connect_in_netns(pid: u32, host_port: &str, timeout: Duration) -> Result<TcpStream, CdpError> {
    use std::net::ToSocketAddrs;
    let addr = host_port
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| CdpError::Protocol(format!("not a socket address: {host_port}")))?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let run = || -> std::io::Result<std::net::TcpStream> {
            use std::os::fd::AsRawFd;
            let ns = std::fs::File::open(format!("/proc/{pid}/ns/net"))?;
            // SAFETY: setns with a namespace fd we hold open; affects this thread only.
            if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let s = std::net::TcpStream::connect_timeout(&addr, timeout)?;
            s.set_nonblocking(true)?;
            Ok(s)
        };
        let _ = tx.send(run());
    });
    let std_stream = rx
        .await
        .map_err(|_| CdpError::Closed("the connecting thread died".into()))?
        .map_err(|e| CdpError::Closed(format!("connecting to {host_port} in the namespace of {pid}: {e}")))?;
    TcpStream::from_std(std_stream).map_err(|e| CdpError::Closed(format!("registering the socket: {e}")))
}

/// What the reader task hands over.
enum Frame {
    Msg(Value),
    Malformed(String),
    Closed(String),
}

/// A CDP client over one websocket connection.
pub struct CdpClient {
    sink: SplitSink<WebSocketStream<QuickAck>, Message>,
    rx: mpsc::Receiver<Frame>,
    reader: JoinHandle<()>,
    next_id: i64,
    inbox: Inbox,
    transcript: crate::protocol::Transcript,
    record: fn(&Value) -> bool,
    discard: fn(&Value) -> bool,
    timeout: Duration,
    closed: Option<String>,
}

impl Drop for CdpClient {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// `ws://host:port/path` → `host:port`.
fn host_port(url: &str) -> Option<&str> {
    let rest = url.strip_prefix("ws://")?;
    let hp = rest.split('/').next()?;
    (!hp.is_empty()).then_some(hp)
}

impl CdpClient {
    /// Connects to the websocket `url` (`ws://127.0.0.1:PORT/...`; no TLS).
    /// With `netns_of: Some(pid)` the socket is created inside the network
    /// namespace of process `pid` (a debugger started in a namespace of its
    /// own listens on *its* loopback). The connection and every later wait
    /// last at most `timeout`.
    ///
    /// Errors: [`CdpError::Protocol`] for a URL that is not `ws://`,
    /// [`CdpError::Closed`] when the connection or handshake fails,
    /// [`CdpError::Timeout`] when it takes longer than `timeout`.
    pub async fn connect(url: &str, timeout: Duration, netns_of: Option<u32>) -> Result<Self, CdpError> {
        let hp = host_port(url)
            .ok_or_else(|| CdpError::Protocol(format!("not a ws:// URL: {url}")))?
            .to_string();
        let fut = async {
            let tcp = match netns_of {
                None => TcpStream::connect(&hp)
                    .await
                    .map_err(|e| CdpError::Closed(format!("connecting to {hp}: {e}")))?,
                Some(pid) => connect_in_netns(pid, &hp, timeout).await?,
            };
            tcp.set_nodelay(true)
                .map_err(|e| CdpError::Closed(format!("TCP_NODELAY on {hp}: {e}")))?;
            // A message over the cap ends the connection with the reason.
            let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
                .max_message_size(Some(super::MAX_MESSAGE_BYTES))
                .max_frame_size(Some(super::MAX_MESSAGE_BYTES));
            let (ws, _) = tokio_tungstenite::client_async_with_config(url, QuickAck(tcp), Some(config))
                .await
                .map_err(|e| CdpError::Closed(format!("websocket handshake with {url}: {e}")))?;
            Ok::<_, CdpError>(ws)
        };
        let ws = tokio::time::timeout(timeout, fut)
            .await
            .map_err(|_| CdpError::Timeout(format!("connecting to {url} took over {timeout:?}")))??;
        let (sink, mut stream) = ws.split();
        // Bounded: a flooding peer waits on its socket or pipe instead of
        // filling doppel's memory.
        let (tx, rx) = mpsc::channel(1024);
        let reader = tokio::spawn(async move {
            while let Some(m) = stream.next().await {
                let frame = match m {
                    Ok(Message::Text(t)) => serde_json::from_str(t.as_str())
                        .map(Frame::Msg)
                        .unwrap_or_else(|e| Frame::Malformed(format!("invalid JSON ({e}): {}", t.as_str()))),
                    Ok(Message::Binary(b)) => serde_json::from_slice(&b)
                        .map(Frame::Msg)
                        .unwrap_or_else(|e| Frame::Malformed(format!("invalid JSON in a binary frame ({e})"))),
                    Ok(Message::Close(c)) => Frame::Closed(format!("close frame {c:?}")),
                    Ok(_) => continue,
                    Err(e) => Frame::Closed(format!("websocket: {e}")),
                };
                let end = matches!(frame, Frame::Closed(_));
                if tx.send(frame).await.is_err() || end {
                    return;
                }
            }
            let _ = tx.send(Frame::Closed("end of stream".into())).await;
        });
        Ok(Self {
            sink,
            rx,
            reader,
            next_id: 0,
            inbox: Inbox::default(),
            transcript: crate::protocol::Transcript::default(),
            record: |_| true,
            discard: |_| false,
            timeout,
            closed: None,
        })
    }

    /// Leaves received messages for which `record` is false out of the
    /// transcript (they are still delivered).
    pub fn set_record_filter(&mut self, record: fn(&Value) -> bool) {
        self.record = record;
    }

    /// Drops received messages for which `discard` is true instead of
    /// queueing them (they are still recorded): events a backend never
    /// waits for would otherwise pile up in the inbox for a whole run.
    pub fn set_discard_filter(&mut self, discard: fn(&Value) -> bool) {
        self.discard = discard;
    }

    /// Changes the bound of every later wait.
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    /// The bound of every wait.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Messages exchanged since the last call.
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

    /// Sends command `method` (to target session `session`, if any); returns its `id`.
    ///
    /// Errors: [`CdpError::Closed`] when the connection is gone,
    /// [`CdpError::Timeout`] when the write blocks longer than the timeout.
    pub async fn send(&mut self, method: &str, params: Value, session: Option<&str>) -> Result<i64, CdpError> {
        if let Some(why) = &self.closed {
            return Err(CdpError::Closed(format!("sending {method} after {why}")));
        }
        self.next_id += 1;
        let mut msg = json!({"id": self.next_id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        let text = msg.to_string();
        self.transcript.push(RawMessage::sent(text.clone()));
        match tokio::time::timeout(self.timeout, self.sink.send(Message::text(text))).await {
            Err(_) => Err(CdpError::Timeout(format!(
                "writing {method} took over {:?}",
                self.timeout
            ))),
            Ok(Err(e)) => {
                let why = format!("writing {method}: {e}");
                self.closed = Some(why.clone());
                Err(CdpError::Closed(why))
            }
            Ok(Ok(())) => Ok(self.next_id),
        }
    }

    /// Receives the next message from the connection (not from the inbox).
    async fn recv(&mut self, deadline: Instant, what: &str) -> Result<Value, CdpError> {
        if let Some(why) = &self.closed {
            return Err(CdpError::Closed(format!("{why}, while waiting for {what}")));
        }
        match super::recv_before(deadline, &mut self.rx).await {
            Err(_) => Err(CdpError::Timeout(format!(
                "timed out after {:?} waiting for {what}",
                self.timeout
            ))),
            Ok(None) => {
                self.closed = Some("reader stopped".into());
                Err(CdpError::Closed(format!("while waiting for {what}")))
            }
            Ok(Some(Frame::Closed(why))) => {
                self.transcript.push(RawMessage::received(format!("[closed] {why}")));
                let e = CdpError::Closed(format!("{why}, while waiting for {what}"));
                self.closed = Some(why);
                Err(e)
            }
            Ok(Some(Frame::Malformed(e))) => {
                self.transcript.push(RawMessage::received(format!("[malformed] {e}")));
                Err(CdpError::Protocol(e))
            }
            Ok(Some(Frame::Msg(msg))) => {
                if (self.record)(&msg) {
                    self.transcript.push(RawMessage::received(msg.to_string()));
                }
                if let Err(e) = classify(&msg) {
                    return Err(CdpError::Protocol(e));
                }
                Ok(msg)
            }
        }
    }

    /// Waits for the first message (inbox first) matching `pred`, at most
    /// until `deadline`; other messages go to the inbox.
    ///
    /// Errors: [`CdpError::Timeout`], [`CdpError::Closed`], [`CdpError::Protocol`].
    pub async fn wait_until(
        &mut self,
        deadline: Instant,
        what: &str,
        pred: impl Fn(&Value) -> bool,
    ) -> Result<Value, CdpError> {
        if let Some(m) = self.inbox.take(&pred) {
            return Ok(m);
        }
        loop {
            let msg = self.recv(deadline, what).await?;
            if pred(&msg) {
                return Ok(msg);
            }
            if !(self.discard)(&msg) {
                self.inbox.push(msg);
            }
        }
    }

    /// [`CdpClient::wait_until`] with a deadline one timeout from now.
    pub async fn wait_for(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Result<Value, CdpError> {
        let deadline = Instant::now() + self.timeout;
        self.wait_until(deadline, what, pred).await
    }

    /// Waits for the response to command `id` (sent as `method`); its `result`.
    ///
    /// Errors: [`CdpError::Failed`] with the debugger's message for an
    /// `error` response; the errors of [`CdpClient::wait_for`].
    pub async fn response(&mut self, id: i64, method: &str) -> Result<Value, CdpError> {
        let m = self
            .wait_for(&format!("the response to {method}"), |m| is_response(m, id))
            .await?;
        match classify(&m) {
            Ok(Incoming::Response { result: Ok(r), .. }) => Ok(r),
            Ok(Incoming::Response { result: Err(e), .. }) => Err(CdpError::Failed(format!("{method}: {e}"))),
            Ok(Incoming::Event { .. }) => Err(CdpError::Protocol(format!("an event answered {method}"))),
            Err(e) => Err(CdpError::Protocol(e)),
        }
    }

    /// Sends a command and waits for its result.
    pub async fn call(&mut self, method: &str, params: Value, session: Option<&str>) -> Result<Value, CdpError> {
        let id = self.send(method, params, session).await?;
        self.response(id, method).await
    }

    /// Waits for an event named in `methods` of `session`; the whole message.
    pub async fn event(&mut self, methods: &[&str], session: Option<&str>) -> Result<Value, CdpError> {
        let what = format!("event {}", methods.join("/"));
        self.wait_for(&what, |m| is_event(m, methods, session)).await
    }

    /// Moves every message already delivered by the connection into the
    /// inbox, without waiting.
    pub fn pump(&mut self) -> Result<(), CdpError> {
        loop {
            match self.rx.try_recv() {
                Ok(Frame::Msg(msg)) => {
                    if (self.record)(&msg) {
                        self.transcript.push(RawMessage::received(msg.to_string()));
                    }
                    if !(self.discard)(&msg) {
                        self.inbox.push(msg);
                    }
                }
                Ok(Frame::Malformed(e)) => {
                    self.transcript.push(RawMessage::received(format!("[malformed] {e}")));
                    return Err(CdpError::Protocol(e));
                }
                Ok(Frame::Closed(why)) => {
                    self.transcript.push(RawMessage::received(format!("[closed] {why}")));
                    self.closed = Some(why.clone());
                    return Err(CdpError::Closed(why));
                }
                Err(mpsc::error::TryRecvError::Empty) => return Ok(()),
                Err(mpsc::error::TryRecvError::Disconnected) => {
                    self.closed = Some("reader stopped".into());
                    return Err(CdpError::Closed("reader stopped".into()));
                }
            }
        }
    }

    /// Removes and returns the queued events named `method` of `session`.
    pub fn take_events(&mut self, method: &str, session: Option<&str>) -> Vec<Value> {
        self.inbox.take_all(|m| is_event(m, &[method], session))
    }

    /// Removes and returns the queued events named in `methods` of
    /// `session`, in the order they arrived.
    pub fn take_events_of(&mut self, methods: &[&str], session: Option<&str>) -> Vec<Value> {
        self.inbox.take_all(|m| is_event(m, methods, session))
    }

    /// Drops every queued message of `session` (`None`: of the root session).
    pub fn forget_session(&mut self, session: Option<&str>) {
        self.inbox.take_all(|m| m["sessionId"].as_str() == session);
    }

    /// Closes the websocket (a close frame, bounded by the timeout).
    ///
    /// Errors: [`CdpError::Timeout`] when the close does not go out in time;
    /// a connection that is already gone is not an error.
    pub async fn close(&mut self) -> Result<(), CdpError> {
        if self.closed.is_some() {
            return Ok(());
        }
        self.closed = Some("closed by doppel".into());
        match tokio::time::timeout(self.timeout, self.sink.close()).await {
            Err(_) => Err(CdpError::Timeout("closing the websocket".into())),
            Ok(_) => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_and_events_are_classified() {
        let ok = json!({"id": 3, "result": {"breakpointId": "1:9:0:x", "locations": []}});
        assert_eq!(
            classify(&ok).unwrap(),
            Incoming::Response {
                id: 3,
                session: None,
                result: Ok(json!({"breakpointId": "1:9:0:x", "locations": []}))
            }
        );
        let err = json!({"id": 4, "sessionId": "S", "error": {"code": -32000, "message": "No script", "data": "x"}});
        match classify(&err).unwrap() {
            Incoming::Response { id, session, result } => {
                assert_eq!((id, session.as_deref()), (4, Some("S")));
                assert_eq!(result.unwrap_err(), "No script (x)");
            }
            other => panic!("{other:?}"),
        }
        let ev = json!({"method": "Debugger.paused", "params": {"reason": "other"}, "sessionId": "S"});
        assert!(is_event(&ev, &["Debugger.resumed", "Debugger.paused"], Some("S")));
        assert!(!is_event(&ev, &["Debugger.paused"], None));
        assert!(classify(&json!({"id": 5})).is_err());
        assert!(classify(&json!({"hello": 1})).is_err());
    }

    #[test]
    fn the_inbox_keeps_order_and_takes_by_predicate() {
        let mut inbox = Inbox::default();
        for i in 0..4 {
            inbox.push(json!({"method": "E", "params": {"i": i}, "sessionId": if i % 2 == 0 { "A" } else { "B" }}));
        }
        inbox.push(json!({"id": 9, "result": {}}));
        assert!(is_response(&inbox.take(|m| is_response(m, 9)).unwrap(), 9));
        assert_eq!(
            inbox.take(|m| is_event(m, &["E"], Some("B"))).unwrap()["params"]["i"],
            1
        );
        let a = inbox.take_all(|m| is_event(m, &["E"], Some("A")));
        assert_eq!(
            a.iter().map(|m| m["params"]["i"].as_i64().unwrap()).collect::<Vec<_>>(),
            [0, 2]
        );
        assert_eq!(inbox.len(), 1);
    }

    #[test]
    fn a_recorded_node_20_session_routes_every_response_and_event() {
        let text = include_str!("../../tests/data/node-session.jsonl");
        let mut inbox = Inbox::default();
        let mut sent: Vec<(i64, String)> = Vec::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let raw: RawMessage = serde_json::from_str(line).unwrap();
            let msg: Value = serde_json::from_str(&raw.text).unwrap();
            if raw.dir == "->" {
                sent.push((msg["id"].as_i64().unwrap(), msg["method"].as_str().unwrap().to_string()));
                continue;
            }
            classify(&msg).unwrap_or_else(|e| panic!("{e}"));
            // The same message as a flattened target session would send it.
            let mut tagged = msg.clone();
            tagged["sessionId"] = json!("S1");
            inbox.push(msg);
            inbox.push(tagged);
        }
        for (id, method) in &sent {
            for _ in 0..2 {
                let r = inbox
                    .take(|m| is_response(m, *id))
                    .unwrap_or_else(|| panic!("no response to {method}"));
                assert!(
                    matches!(classify(&r), Ok(Incoming::Response { result: Ok(_), .. })),
                    "{method}: {r}"
                );
                if method == "Debugger.setBreakpointByUrl" {
                    // The comment line 10 (0-based 9) slides to 0-based 10, column 8.
                    assert_eq!(r["result"]["locations"][0]["lineNumber"], 10);
                    assert_eq!(r["result"]["locations"][0]["columnNumber"], 8);
                }
            }
        }
        let root = inbox.take_all(|m| is_event(m, &["Debugger.paused"], None));
        let reasons: Vec<&str> = root.iter().map(|p| p["params"]["reason"].as_str().unwrap()).collect();
        assert_eq!(
            reasons,
            ["Break on start", "instrumentation", "other", "other", "other"]
        );
        assert_eq!(
            root[3]["params"]["hitBreakpoints"][0],
            "1:9:0:file:///tmp/doppel-rec/prog.js"
        );
        assert_eq!(
            inbox.take_all(|m| is_event(m, &["Debugger.paused"], Some("S1"))).len(),
            5
        );
        assert!(
            inbox
                .take(|m| is_event(m, &["Runtime.executionContextDestroyed"], None))
                .is_some()
        );
        assert!(
            inbox
                .take(|m| is_event(m, &["Runtime.executionContextDestroyed"], Some("S2")))
                .is_none()
        );
        assert!(
            inbox.take(|m| m.get("id").is_some()).is_none(),
            "every response was matched"
        );
    }

    #[test]
    fn host_and_port_come_from_the_ws_url() {
        assert_eq!(host_port("ws://127.0.0.1:9229/abc-def"), Some("127.0.0.1:9229"));
        assert_eq!(host_port("ws://127.0.0.1:1/devtools/browser/x"), Some("127.0.0.1:1"));
        assert_eq!(host_port("http://x"), None);
    }
}
