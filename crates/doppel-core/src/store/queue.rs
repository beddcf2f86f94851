//! Dynamic work claiming on PostgreSQL (`--claim`): a table of a campaign's
//! work items that workers of unequal speed take from, so they finish
//! together; a dead worker's items come back when its lease expires.
//!
//! Table `work_items` (created on first use, beside the store's schema):
//! one row per (campaign, item key), with the item's 0-based `position` in
//! the campaign's deterministic order, its `payload` (JSON text: whatever the
//! runner needs to run it), `state` (`pending`, `claimed`, `done`), the
//! claiming `worker`, `lease_until_ms` and `attempts`.
//!
//! - Claiming is `SELECT ... ORDER BY position LIMIT n FOR UPDATE SKIP
//!   LOCKED` inside an `UPDATE`: concurrent workers never wait on each other
//!   and never get the same item from one round of claims.
//! - Leases are measured on the database server's clock
//!   (`clock_timestamp()`), the one clock all machines share; a worker
//!   renews its leases while a run goes on ([`WorkQueue::renew`]).
//! - [`WorkQueue::complete`] marks the item done and stores the run in one
//!   transaction: a run is stored if and only if its item is done
//!   ([`WorkQueue::complete_with`]: every record of an item that stores
//!   several). When a
//!   lease expired and two workers ran the same item, the first completion
//!   wins and the second stores nothing ([`Completion::AlreadyDone`]): no
//!   duplicate, no loss.
//! - Enqueuing is idempotent (`ON CONFLICT DO NOTHING`): every worker may
//!   enqueue the whole campaign at start; the first one adds the rows.

use super::Store;
use crate::run::RunRecord;
use anyhow::Context;
use sqlx::{AssertSqlSafe, Row};
use std::time::Duration;

/// Milliseconds since the Unix epoch on the database server's clock.
const NOW_MS: &str = "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)";

/// Key of the PostgreSQL advisory lock held while the table is created.
const QUEUE_LOCK: i64 = 0x646f_7070_6571; // "doppeq"

/// Rows per `INSERT` when enqueuing (4 parameters a row; PostgreSQL allows 65,535).
const ENQUEUE_BATCH: usize = 1000;

/// One work item to enqueue.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkItem {
    /// Unique within the campaign; the key of the run it produces
    /// ([`RunRecord::key`]), so `--resume` and the queue agree.
    pub key: String,
    /// What the runner needs to run the item (subject, seed, configuration).
    pub payload: serde_json::Value,
}

/// A work item this worker holds a lease on.
#[derive(Debug, Clone, PartialEq)]
pub struct Claimed {
    /// [`WorkItem::key`].
    pub key: String,
    /// 0-based position in the campaign's order (as enqueued).
    pub position: u64,
    /// [`WorkItem::payload`].
    pub payload: serde_json::Value,
    /// How many times the item has been claimed, this claim included (more
    /// than 1: a worker died or overran its lease holding it).
    pub attempt: u32,
}

/// What [`WorkQueue::complete`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completion {
    /// The run is stored (with this id; for [`WorkQueue::complete_with`],
    /// the last run's, 0 for none) and the item is done.
    Stored(i64),
    /// Another worker completed the item first (this worker's lease had
    /// expired); nothing was stored.
    AlreadyDone,
}

/// Items of a campaign by state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueCounts {
    /// Never claimed, or released.
    pub pending: u64,
    /// Claimed with a lease that has not expired.
    pub claimed: u64,
    /// Claimed with an expired lease (the worker died or stalls): claimable.
    pub expired: u64,
    /// Completed.
    pub done: u64,
}

impl QueueCounts {
    /// Items not done yet.
    pub fn remaining(&self) -> u64 {
        self.pending + self.claimed + self.expired
    }
}

/// One worker's handle on one campaign's work items.
#[derive(Debug, Clone)]
pub struct WorkQueue {
    store: Store,
    campaign: String,
    worker: String,
    lease_ms: i64,
}

impl WorkQueue {
    /// The queue of `campaign` in `store`, for `worker` (a name unique among
    /// the campaign's workers, e.g. `host:pid`), with leases of `lease`
    /// (renewed by [`WorkQueue::renew`]; an item whose lease ran out is
    /// claimable by others). Creates the table if needed.
    ///
    /// Errors: the store is not PostgreSQL (SQLite has no `SKIP LOCKED`;
    /// use `--partition` there); `lease` is under 1 s; database errors.
    pub async fn open(store: &Store, campaign: &str, worker: &str, lease: Duration) -> anyhow::Result<WorkQueue> {
        anyhow::ensure!(
            store.postgres,
            "work claiming needs a PostgreSQL store (SELECT ... FOR UPDATE SKIP LOCKED); \
             split a campaign over machines with a SQLite store by --partition k/N instead"
        );
        anyhow::ensure!(
            lease >= Duration::from_secs(1),
            "a lease must be at least 1 s, not {lease:?}"
        );
        let mut tx = store.pool.begin().await.context("creating the work-item table")?;
        sqlx::query("SELECT 1 FROM (SELECT pg_advisory_xact_lock($1)) AS l")
            .bind(QUEUE_LOCK)
            .execute(&mut *tx)
            .await
            .context("locking the work-item table")?;
        for ddl in [
            "CREATE TABLE IF NOT EXISTS work_items (campaign TEXT NOT NULL, key TEXT NOT NULL, \
             position BIGINT NOT NULL, payload TEXT NOT NULL, state TEXT NOT NULL DEFAULT 'pending', \
             worker TEXT, lease_until_ms BIGINT, attempts INTEGER NOT NULL DEFAULT 0, done_at_ms BIGINT, \
             PRIMARY KEY (campaign, key))",
            "CREATE INDEX IF NOT EXISTS work_items_order ON work_items (campaign, state, position)",
        ] {
            sqlx::query(ddl)
                .execute(&mut *tx)
                .await
                .with_context(|| format!("creating the work-item table: {ddl}"))?;
        }
        tx.commit().await.context("creating the work-item table")?;
        Ok(WorkQueue {
            store: store.clone(),
            campaign: campaign.to_string(),
            worker: worker.to_string(),
            lease_ms: lease.as_millis() as i64,
        })
    }

    /// This worker's name.
    pub fn worker(&self) -> &str {
        &self.worker
    }

    /// Adds the campaign's items (`items[i]` at position `i`); items already
    /// in the queue, done or not, are left as they are. Returns how many
    /// were new.
    ///
    /// Errors: database errors (nothing of a failed batch is added).
    pub async fn enqueue(&self, items: &[WorkItem]) -> anyhow::Result<u64> {
        let mut added = 0;
        for (b, batch) in items.chunks(ENQUEUE_BATCH).enumerate() {
            let rows: Vec<String> = (0..batch.len())
                .map(|i| format!("(${}, ${}, ${}, ${})", 4 * i + 1, 4 * i + 2, 4 * i + 3, 4 * i + 4))
                .collect();
            let sql = format!(
                "INSERT INTO work_items (campaign, key, position, payload) VALUES {} ON CONFLICT DO NOTHING",
                rows.join(",")
            );
            let doing = || format!("enqueuing the work items of campaign {}", self.campaign);
            added += self
                .store
                .retrying(&doing, || async {
                    let mut q = sqlx::query(AssertSqlSafe(sql.clone()));
                    for (i, item) in batch.iter().enumerate() {
                        q = q
                            .bind(self.campaign.clone())
                            .bind(item.key.clone())
                            .bind((b * ENQUEUE_BATCH + i) as i64)
                            .bind(item.payload.to_string());
                    }
                    q.execute(&self.store.pool).await.with_context(doing)
                })
                .await?
                .rows_affected();
        }
        Ok(added)
    }

    /// Takes up to `n` claimable items (pending, or claimed with an expired
    /// lease), lowest position first, with a fresh lease for this worker.
    /// Empty when nothing is claimable (which is not the same as all done:
    /// see [`WorkQueue::counts`]).
    ///
    /// Errors: database errors.
    pub async fn claim(&self, n: usize) -> anyhow::Result<Vec<Claimed>> {
        let sql = format!(
            "UPDATE work_items SET state = 'claimed', worker = $1, lease_until_ms = {NOW_MS} + $2, \
             attempts = attempts + 1 \
             WHERE campaign = $3 AND key IN (SELECT key FROM work_items WHERE campaign = $3 \
               AND (state = 'pending' OR (state = 'claimed' AND lease_until_ms < {NOW_MS})) \
               ORDER BY position LIMIT $4 FOR UPDATE SKIP LOCKED) \
             RETURNING key, position, payload, attempts"
        );
        let doing = || "claiming work items".to_string();
        let rows = self
            .store
            .retrying(&doing, || async {
                sqlx::query(AssertSqlSafe(sql.clone()))
                    .bind(self.worker.clone())
                    .bind(self.lease_ms)
                    .bind(self.campaign.clone())
                    .bind(n as i64)
                    .fetch_all(&self.store.pool)
                    .await
                    .context("claiming work items")
            })
            .await?;
        let mut out = rows
            .iter()
            .map(|r| {
                let key: String = r.try_get(0)?;
                let payload: String = r.try_get(2)?;
                Ok(Claimed {
                    payload: serde_json::from_str(&payload)
                        .with_context(|| format!("work item {key}: payload does not parse"))?,
                    key,
                    position: r.try_get::<i64, _>(1)? as u64,
                    attempt: r.try_get::<i32, _>(3)? as u32,
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        out.sort_by_key(|c| c.position);
        Ok(out)
    }

    /// Extends this worker's leases on `keys` by the lease length from now.
    /// Returns the keys this worker no longer holds (its lease expired and
    /// another worker claimed the item, or it is done): their runs may be
    /// abandoned.
    ///
    /// Errors: database errors.
    pub async fn renew(&self, keys: &[String]) -> anyhow::Result<Vec<String>> {
        let mut lost = Vec::new();
        for key in keys {
            let sql = format!(
                "UPDATE work_items SET lease_until_ms = {NOW_MS} + $1 \
                 WHERE campaign = $2 AND key = $3 AND worker = $4 AND state = 'claimed'"
            );
            let doing = || "renewing leases".to_string();
            let n = self
                .store
                .retrying(&doing, || async {
                    sqlx::query(AssertSqlSafe(sql.clone()))
                        .bind(self.lease_ms)
                        .bind(self.campaign.clone())
                        .bind(key.clone())
                        .bind(self.worker.clone())
                        .execute(&self.store.pool)
                        .await
                        .context("renewing leases")
                })
                .await?
                .rows_affected();
            if n == 0 {
                lost.push(key.clone());
            }
        }
        Ok(lost)
    }

    /// Stores `run` and marks item `key` done, in one transaction. If the
    /// item is already done (another worker took it over after this
    /// worker's lease expired, and finished first), stores nothing.
    ///
    /// Errors: `key` was never enqueued; `run.key` differs from `key`;
    /// database errors (then neither the run nor the completion is stored:
    /// the item stays claimed and comes back when the lease expires).
    pub async fn complete(&self, key: &str, run: &RunRecord) -> anyhow::Result<Completion> {
        anyhow::ensure!(
            run.key == key,
            "completing work item {key} with run {}: the run key is the item key",
            run.key
        );
        self.complete_with(key, std::slice::from_ref(run)).await
    }

    /// Stores `runs` (every record item `key` produced, whatever their keys:
    /// a metamorphic sequence's tests, a debug-information program's
    /// sessions and findings; possibly none) and marks the item done, all
    /// in one transaction, so an item's records are stored if and only if
    /// the item is done. [`Completion::Stored`] holds the id of the last run
    /// (0 for none). If the item is already done, stores nothing.
    ///
    /// Errors: as [`WorkQueue::complete`] (nothing is stored then).
    pub async fn complete_with(&self, key: &str, runs: &[RunRecord]) -> anyhow::Result<Completion> {
        let context = || format!("completing work item {key}");
        self.store
            .retrying(&context, || self.complete_once(key, runs, &context))
            .await
    }

    async fn complete_once(
        &self,
        key: &str,
        runs: &[RunRecord],
        context: &(dyn Fn() -> String + Sync),
    ) -> anyhow::Result<Completion> {
        let mut tx = self.store.pool.begin().await.with_context(context)?;
        let sql = format!(
            "UPDATE work_items SET state = 'done', worker = $1, done_at_ms = {NOW_MS} \
             WHERE campaign = $2 AND key = $3 AND state <> 'done'"
        );
        let n = sqlx::query(AssertSqlSafe(sql))
            .bind(self.worker.clone())
            .bind(self.campaign.clone())
            .bind(key.to_string())
            .execute(&mut *tx)
            .await
            .with_context(context)?
            .rows_affected();
        if n == 0 {
            let exists = sqlx::query("SELECT 1 FROM work_items WHERE campaign = $1 AND key = $2")
                .bind(self.campaign.clone())
                .bind(key.to_string())
                .fetch_optional(&mut *tx)
                .await
                .with_context(context)?
                .is_some();
            tx.rollback().await.with_context(context)?;
            anyhow::ensure!(exists, "work item {key} is not in campaign {}'s queue", self.campaign);
            return Ok(Completion::AlreadyDone);
        }
        let mut id = 0;
        for run in runs {
            id = Store::upsert_run_on(&mut tx, run).await?;
        }
        tx.commit().await.with_context(context)?;
        Ok(Completion::Stored(id))
    }

    /// Gives this worker's claims on `keys` back (pending again, for anyone),
    /// e.g. when it stops early. Items it no longer holds are left alone.
    ///
    /// Errors: database errors.
    pub async fn release(&self, keys: &[String]) -> anyhow::Result<()> {
        for key in keys {
            sqlx::query(
                "UPDATE work_items SET state = 'pending', worker = NULL, lease_until_ms = NULL \
                 WHERE campaign = $1 AND key = $2 AND worker = $3 AND state = 'claimed'",
            )
            .bind(self.campaign.clone())
            .bind(key.clone())
            .bind(self.worker.clone())
            .execute(&self.store.pool)
            .await
            .context("releasing work items")?;
        }
        Ok(())
    }

    /// The campaign's items by state.
    ///
    /// Errors: database errors.
    pub async fn counts(&self) -> anyhow::Result<QueueCounts> {
        let sql = format!(
            "SELECT CASE WHEN state = 'claimed' AND lease_until_ms < {NOW_MS} THEN 'expired' ELSE state END AS s, \
             COUNT(*) FROM work_items WHERE campaign = $1 GROUP BY s"
        );
        let mut c = QueueCounts::default();
        for r in sqlx::query(AssertSqlSafe(sql))
            .bind(self.campaign.clone())
            .fetch_all(&self.store.pool)
            .await
            .context("counting work items")?
        {
            let (state, n): (String, i64) = (r.try_get(0)?, r.try_get(1)?);
            let slot = match state.as_str() {
                "pending" => &mut c.pending,
                "claimed" => &mut c.claimed,
                "expired" => &mut c.expired,
                "done" => &mut c.done,
                other => anyhow::bail!("work item in unknown state {other:?}"),
            };
            *slot = n as u64;
        }
        Ok(c)
    }
}
