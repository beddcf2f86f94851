//! Protocol clients and parsers: one file per protocol.

pub mod cdp;
pub mod dap;
pub mod gdbmi;
pub mod rdp;

/// Why an exchange with a debugger through one of the protocol clients
/// failed. Each client names it after its protocol ([`dap::DapError`],
/// [`cdp::CdpError`], [`rdp::RdpError`]); a backend turns it into the run's
/// [`doppel_core::Output::Failed`] (timeout, crash, protocol error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientError {
    /// No matching message before the deadline.
    Timeout(String),
    /// The connection or pipe closed: the debugger exited, crashed or hung up.
    Closed(String),
    /// A message that is not of the protocol (bad frame, invalid JSON, a
    /// shape the protocol does not have).
    Protocol(String),
    /// The debugger answered the request with an error, with its message.
    Failed(String),
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::Timeout(s) => write!(f, "timeout: {s}"),
            ClientError::Closed(s) => write!(f, "connection closed: {s}"),
            ClientError::Protocol(s) => write!(f, "protocol error: {s}"),
            ClientError::Failed(s) => write!(f, "request failed: {s}"),
        }
    }
}

impl std::error::Error for ClientError {}

/// Receives from `rx` before `deadline`: `Err(Elapsed)` once it has passed,
/// even when a message is ready. `tokio::time::timeout_at` looks at its
/// deadline only when the inner future is pending, so a debugger flooding
/// messages would otherwise keep a wait going forever.
pub(crate) async fn recv_before<T, R: Receiver<T>>(
    deadline: tokio::time::Instant,
    rx: &mut R,
) -> Result<Option<T>, tokio::time::error::Elapsed> {
    if tokio::time::Instant::now() >= deadline {
        // An elapsed timeout, made by a zero wait on a pending future.
        return tokio::time::timeout_at(deadline, std::future::pending::<Option<T>>()).await;
    }
    tokio::time::timeout_at(deadline, rx.recv_msg()).await
}

/// A channel receiver of the readers (bounded or not).
pub(crate) trait Receiver<T> {
    /// The next message, `None` when the sender is gone.
    fn recv_msg(&mut self) -> impl std::future::Future<Output = Option<T>> + Send;
}

impl<T: Send> Receiver<T> for tokio::sync::mpsc::Receiver<T> {
    fn recv_msg(&mut self) -> impl std::future::Future<Output = Option<T>> + Send {
        self.recv()
    }
}

impl<T: Send> Receiver<T> for tokio::sync::mpsc::UnboundedReceiver<T> {
    fn recv_msg(&mut self) -> impl std::future::Future<Output = Option<T>> + Send {
        self.recv()
    }
}

/// Largest message (an MI line, a DAP/CDP/RDP message) a client keeps, in
/// bytes. A longer MI line is cut (with [`CUT_MARKER`]); a longer framed
/// message is a protocol error and its bytes are skipped.
pub const MAX_MESSAGE_BYTES: usize = 8 << 20;

/// Largest transcript kept between two [`Transcript::take`]s, in bytes:
/// later messages are dropped and counted in one closing marker.
pub const MAX_TRANSCRIPT_BYTES: usize = 16 << 20;

/// What marks a cut message or transcript.
pub const CUT_MARKER: &str = "[doppel: cut]";

/// Raw protocol messages of a run, bounded: each message to
/// [`MAX_MESSAGE_BYTES`] and the whole to [`MAX_TRANSCRIPT_BYTES`], with
/// what was cut marked ([`CUT_MARKER`]).
#[derive(Debug, Default)]
pub struct Transcript {
    messages: Vec<doppel_core::RawMessage>,
    bytes: usize,
    dropped: usize,
    dropped_bytes: usize,
}

impl Transcript {
    /// Adds a message (cut to [`MAX_MESSAGE_BYTES`]; dropped and counted
    /// once the transcript holds [`MAX_TRANSCRIPT_BYTES`]).
    pub fn push(&mut self, mut m: doppel_core::RawMessage) {
        cut(&mut m.text, MAX_MESSAGE_BYTES);
        if self.bytes + m.text.len() > MAX_TRANSCRIPT_BYTES {
            self.dropped += 1;
            self.dropped_bytes += m.text.len();
            return;
        }
        self.bytes += m.text.len();
        self.messages.push(m);
    }

    /// Adds every message of `ms`.
    pub fn extend(&mut self, ms: impl IntoIterator<Item = doppel_core::RawMessage>) {
        for m in ms {
            self.push(m);
        }
    }

    /// The messages since the last call, with a closing marker when some
    /// were dropped.
    pub fn take(&mut self) -> Vec<doppel_core::RawMessage> {
        let mut out = std::mem::take(&mut self.messages);
        if self.dropped > 0 {
            out.push(doppel_core::RawMessage::received(format!(
                "{CUT_MARKER} {} more messages ({} bytes) dropped: the transcript is capped at {} bytes",
                self.dropped, self.dropped_bytes, MAX_TRANSCRIPT_BYTES
            )));
        }
        *self = Self::default();
        out
    }

    /// The messages kept so far.
    pub fn messages(&self) -> &[doppel_core::RawMessage] {
        &self.messages
    }
}

/// Cuts `text` to at most `cap` bytes (at a character boundary) and marks
/// the cut with the number of bytes removed.
pub fn cut(text: &mut String, cap: usize) {
    if text.len() <= cap {
        return;
    }
    let mut at = cap;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let removed = text.len() - at;
    text.truncate(at);
    text.push_str(&format!(" {CUT_MARKER} {removed} bytes"));
}

/// Reads one line (without its `\n` or `\r\n`) from `r`, keeping at most
/// `cap` bytes of it: the rest of a longer line is read and dropped, and
/// the line is returned with `true`. `None` at end of stream. Memory stays
/// bounded however long the line, and bytes are returned as they came (the
/// caller decides about UTF-8).
pub async fn read_line_capped<R: tokio::io::AsyncBufRead + Unpin>(
    r: &mut R,
    cap: usize,
) -> std::io::Result<Option<(Vec<u8>, bool)>> {
    use tokio::io::AsyncBufReadExt;
    let mut line = Vec::new();
    let mut truncated = false;
    let mut any = false;
    loop {
        let buf = r.fill_buf().await?;
        if buf.is_empty() {
            return Ok(any.then_some((line, truncated)));
        }
        any = true;
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        let room = cap.saturating_sub(line.len());
        if chunk.len() > room {
            truncated = true;
        }
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let used = done.unwrap_or(buf.len());
        r.consume(used);
        if done.is_some() {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(Some((line, truncated)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn long_lines_are_cut_and_the_next_line_is_intact() {
        let mut input: Vec<u8> = vec![b'x'; 100_000];
        input.extend_from_slice(b"\r\nshort\n\xff\xfe\nlast");
        let mut r = tokio::io::BufReader::with_capacity(1000, &input[..]);
        let (l, cut) = read_line_capped(&mut r, 4096).await.unwrap().unwrap();
        assert_eq!((l.len(), cut), (4096, true));
        assert_eq!(
            read_line_capped(&mut r, 4096).await.unwrap(),
            Some((b"short".to_vec(), false))
        );
        assert_eq!(
            read_line_capped(&mut r, 4096).await.unwrap(),
            Some((vec![0xff, 0xfe], false))
        );
        assert_eq!(
            read_line_capped(&mut r, 4096).await.unwrap(),
            Some((b"last".to_vec(), false))
        );
        assert_eq!(read_line_capped(&mut r, 4096).await.unwrap(), None);
    }

    #[test]
    fn a_transcript_is_capped_with_markers() {
        let mut t = Transcript::default();
        t.push(doppel_core::RawMessage::received("é".repeat(MAX_MESSAGE_BYTES)));
        for _ in 0..20 {
            t.push(doppel_core::RawMessage::received("y".repeat(1 << 20)));
        }
        let ms = t.take();
        assert!(ms[0].text.len() <= MAX_MESSAGE_BYTES + 64);
        assert!(ms[0].text.contains(CUT_MARKER));
        let total: usize = ms.iter().map(|m| m.text.len()).sum();
        assert!(total <= MAX_TRANSCRIPT_BYTES + 200, "{total}");
        assert!(
            ms.last().unwrap().text.contains("more messages"),
            "{}",
            ms.last().unwrap().text
        );
        assert!(t.take().is_empty());
    }
}
