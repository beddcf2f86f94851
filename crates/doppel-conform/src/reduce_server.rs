//! The warm probe of a reduction: one [`Panel`] kept across treereduce's
//! checks, where each `doppel conform-probe` used to start the whole panel
//! (a dozen engines and engine262) for a single test, so that a minute's
//! budget allowed a few probes.
//!
//! The reducing process listens on a Unix socket in the work directory
//! ([`ReduceCase::server`]) while treereduce runs; each `conform-probe`
//! sends the path of its variant's file as one line and reads one line
//! back: `interesting`, or `not <why>`. Checks are answered one at a time
//! (treereduce runs one job). Every engine runs each test in a fresh realm
//! (`doppel-engines`), so a warm panel judges as a fresh one; the kept
//! result is confirmed once more on a fresh panel at the end
//! ([`super::reduce::reduce`]). A probe that cannot reach the server runs
//! its own panel, as before.

use crate::reduce::{ReduceCase, probe_on};
use crate::verdict::panel::Panel;
use doppel_engines::EnginesConfig;
use std::path::Path;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};

/// Longest request line (a file path), bytes.
const REQUEST_CAP: u64 = 4096;
/// How long a connected probe may take to send its request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a probe waits to connect.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Answers probes on `listener` with one warm panel for `case` until
/// dropped (the caller races it against the reducer). Errors: the panel
/// cannot be made; a failed connection is only logged.
///
/// `answered` counts the probes answered (for the reduction's notes).
pub async fn serve(case: &ReduceCase, listener: UnixListener, answered: &std::cell::Cell<usize>) -> anyhow::Result<()> {
    let mut panel = Panel::new(&case.panel, &EnginesConfig::default())?;
    loop {
        let (stream, _) = listener.accept().await?;
        match answer(case, &mut panel, stream).await {
            Ok(()) => answered.set(answered.get() + 1),
            Err(e) => tracing::warn!("reduction probe server: {e:#}"),
        }
    }
}

async fn answer(case: &ReduceCase, panel: &mut Panel, stream: UnixStream) -> anyhow::Result<()> {
    let (read, mut write) = stream.into_split();
    let mut line = String::new();
    let mut reader = BufReader::new(read.take(REQUEST_CAP));
    tokio::time::timeout(REQUEST_TIMEOUT, reader.read_line(&mut line))
        .await
        .map_err(|_| anyhow::anyhow!("no request within {REQUEST_TIMEOUT:?}"))??;
    let path = line.trim_end_matches('\n');
    let reply = match std::fs::read_to_string(path) {
        Ok(body) => match probe_on(panel, case, &body).await? {
            Ok(_) => "interesting\n".to_string(),
            Err(why) => format!("not {}\n", why.replace('\n', " ")),
        },
        Err(e) => format!("not cannot read {path}: {e}\n"),
    };
    write.write_all(reply.as_bytes()).await?;
    write.shutdown().await?;
    Ok(())
}

/// Asks the server at `socket` about the variant in `body_file`: `Ok(None)`
/// when it is interesting, `Ok(Some(why))` when not. Errors: the server
/// cannot be reached or gave no answer (the caller then probes itself).
pub async fn ask(socket: &Path, body_file: &Path, wait: Duration) -> anyhow::Result<Option<String>> {
    let mut stream = tokio::time::timeout(CONNECT_TIMEOUT, UnixStream::connect(socket))
        .await
        .map_err(|_| anyhow::anyhow!("no connection to {} within {CONNECT_TIMEOUT:?}", socket.display()))??;
    let path = body_file.canonicalize()?;
    stream.write_all(format!("{}\n", path.display()).as_bytes()).await?;
    let mut reply = String::new();
    tokio::time::timeout(wait, BufReader::new(stream.take(REQUEST_CAP)).read_line(&mut reply))
        .await
        .map_err(|_| anyhow::anyhow!("no answer within {wait:?}"))??;
    match reply.trim_end() {
        "interesting" => Ok(None),
        r if r.starts_with("not ") => Ok(Some(r["not ".len()..].to_string())),
        r => anyhow::bail!("unreadable answer {r:?}"),
    }
}
