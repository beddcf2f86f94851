//! What the store does when its database goes away: a connection-class
//! error (refused, reset, the server shutting down, no pooled connection
//! within the acquire timeout) on PostgreSQL is retried with exponential
//! backoff (0.5 s doubling to 5 s) until a deadline; then the operation
//! fails with [`StoreUnavailable`], which names the last real cause, so a
//! campaign stops with a clear message and `--resume` completes it later.
//! Other errors (a bad statement, a constraint, a full disk on SQLite) are
//! not retried.

use std::future::Future;
use std::time::{Duration, Instant};

/// The database could not be reached until the retry deadline passed. A
/// campaign should stop on this error (every later run would fail the
/// same way) and report that `--resume` continues where it stopped.
#[derive(Debug, thiserror::Error)]
#[error("the store {store} was unreachable for {waited:.0?} ({attempts} attempts) while {doing}; last error: {cause}")]
pub struct StoreUnavailable {
    /// The store's URL, password redacted.
    pub store: String,
    /// What was being done (`storing run <key>`, ...).
    pub doing: String,
    /// Time from the first failure to giving up.
    pub waited: Duration,
    /// Attempts made.
    pub attempts: u32,
    /// The last error, as text (the real cause, not the pool's timeout).
    pub cause: String,
}

/// Whether `e` says the connection to the server failed (worth retrying),
/// as opposed to the statement or the data being wrong.
pub fn is_connection_error(e: &anyhow::Error) -> bool {
    e.chain().any(|c| match c.downcast_ref::<sqlx::Error>() {
        Some(sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut | sqlx::Error::Tls(_) | sqlx::Error::Protocol(_)) => true,
        // Class 57 (operator intervention: admin_shutdown, crash_shutdown,
        // cannot_connect_now) and class 08 (connection exception).
        Some(sqlx::Error::Database(d)) => d.code().is_some_and(|c| c.starts_with("57P") || c.starts_with("08")),
        _ => false,
    })
}

/// Runs `op` until it succeeds, fails with an error that is not a
/// connection error, or `deadline` has passed since the first failure
/// (then [`StoreUnavailable`], with `probe`'s answer as the cause when the
/// last error was only the pool's timeout).
pub(crate) async fn with_retry<T, F, Fut, P, PFut>(
    store: &str,
    doing: &(dyn Fn() -> String + Sync),
    deadline: Duration,
    probe: P,
    mut op: F,
) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = anyhow::Result<T>>,
    P: FnOnce() -> PFut,
    PFut: Future<Output = Option<String>>,
{
    let mut first_failure: Option<Instant> = None;
    let mut backoff = Duration::from_millis(500);
    let mut attempts = 0;
    loop {
        attempts += 1;
        let e = match op().await {
            Ok(v) => return Ok(v),
            Err(e) if is_connection_error(&e) => e,
            Err(e) => return Err(e),
        };
        let since = *first_failure.get_or_insert_with(Instant::now);
        if since.elapsed() + backoff > deadline {
            let mut cause = format!("{e:#}");
            if e.chain()
                .any(|c| matches!(c.downcast_ref(), Some(sqlx::Error::PoolTimedOut)))
                && let Some(real) = probe().await
            {
                cause = real;
            }
            return Err(StoreUnavailable {
                store: store.to_string(),
                doing: doing(),
                waited: since.elapsed(),
                attempts,
                cause,
            }
            .into());
        }
        tracing::warn!(error = %format!("{e:#}"), "store unreachable, retrying in {backoff:?}");
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_secs(5));
    }
}
