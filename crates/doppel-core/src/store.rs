//! The store: every run of every technique, written when it finishes.
//!
//! SQLite file by default, PostgreSQL when the URL says `postgres://`; one
//! code path through sqlx's `Any` driver (portable SQL, `$N` placeholders,
//! JSON as TEXT, times as BIGINT milliseconds). Only the DDL differs (the
//! auto-increment column).
//!
//! Table `runs`: one row per run, with the columns that queries filter and
//! group on (technique, campaign, subject, seed, verdict, the class key's
//! `Display` form in `class_key` and the key itself as JSON in `class_json`,
//! the parts named `divergence`, `last_action`, `node` and `policy` when the
//! technique's key has them, debuggers, duration) and the whole
//! [`RunRecord`] as JSON (`record_json`, traces included). Seeds are `u64` stored as the `i64`
//! with the same bit pattern (`BIGINT`); durations are milliseconds
//! (`REAL`/`DOUBLE PRECISION`), `started_at_ms` milliseconds since the Unix
//! epoch. Table `doppel_schema` holds the schema version; a store of an
//! older version is migrated when opened (`store/migrate.rs`), one of a newer
//! version is refused. Table `triage` holds decisions about root causes
//! (`store/triage.rs`).
//!
//! Duplicate keys: the run key is unique, and storing a run whose key exists
//! *replaces* the stored record and keeps its id (an upsert). Neither an
//! error nor ignoring the new record fits doppel's callers: `doppel
//! reclassify` rewrites stored runs through [`Store::insert_run`], and two
//! machines that happen to run the same inputs store an equivalent record.
//! `--resume` skips the keys in [`Store::finished_keys`], so a campaign never
//! writes a key twice on its own.

pub mod cap;
mod migrate;
pub mod queue;
pub mod retry;
pub mod triage;

use crate::model::ClassKey;
use crate::run::RunRecord;
use anyhow::Context;
use sqlx::any::{AnyPoolOptions, AnyRow};
// Dynamic SQL here is assembled only from this module's constant fragments and
// `$N` placeholders; values are always bound, never spliced (hence AssertSqlSafe).
use sqlx::{AnyPool, AssertSqlSafe, Row};
use std::collections::HashSet;
use std::path::Path;

/// Which runs a query looks at. `Default` = all runs.
#[derive(Debug, Clone, Default)]
pub struct RunFilter {
    /// Only runs of this technique (`differential`, ...).
    pub technique: Option<String>,
    /// Only runs of this campaign.
    pub campaign: Option<String>,
}

/// An equivalence class and its size.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassSummary {
    /// The class (parsed from the stored `Display` form).
    pub key: ClassKey,
    /// Number of runs in the class.
    pub size: u64,
    /// Id of the class's first run (the smallest id).
    pub first_run: i64,
}

/// One run, without its traces.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    /// Database id (for [`Store::run`]).
    pub id: i64,
    /// [`crate::Subject::name`].
    pub subject_name: String,
    /// [`crate::RunRecord::seed`].
    pub seed: u64,
    /// The class, for a divergent run; `None` otherwise.
    pub class_key: Option<ClassKey>,
    /// Verdict name (`divergence`, `program_finished`, ...: [`crate::Verdict::name`]).
    pub verdict: String,
    /// Wall time of the run, milliseconds.
    pub duration_ms: f64,
}

/// How one run ended and after how many execution actions (DBDB Figure 7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionCount {
    /// Verdict name ([`crate::Verdict::name`]).
    pub verdict: String,
    /// Divergence type name, for a divergent run.
    pub divergence: Option<String>,
    /// [`RunRecord::execution_actions`].
    pub execution_actions: usize,
}

/// Counts over a set of runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CampaignSummary {
    /// (verdict name, runs), most frequent first.
    pub verdicts: Vec<(String, u64)>,
    /// Number of runs.
    pub runs: u64,
    /// Number of runs with verdict `divergence`.
    pub divergences: u64,
    /// Number of distinct equivalence classes among them.
    pub classes: u64,
    /// Median wall time of a run, milliseconds (mean of the middle two for
    /// an even count; 0 without runs).
    pub median_duration_ms: f64,
    /// Sum of the runs' wall times, milliseconds.
    pub total_duration_ms: f64,
}

/// A connection pool to the store. Cheap to clone (clones share the pool);
/// safe to use from many tasks at once.
#[derive(Debug, Clone)]
pub struct Store {
    pool: AnyPool,
    postgres: bool,
    /// The URL, password redacted (for messages).
    shown_url: String,
    /// The URL as connected (for a probe that names the real cause).
    url: String,
    /// How long a write waits for an unreachable PostgreSQL (`retry.rs`).
    retry_deadline: std::time::Duration,
    /// Set when an operation gave up on an unreachable PostgreSQL; until one
    /// succeeds again, operations try once instead of waiting the deadline
    /// each (a campaign that goes on would otherwise wait it per run).
    gave_up: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

/// How long [`Store::open`] waits for the database's first answer.
pub const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// How long a store operation waits for a pooled connection before the
/// attempt counts as failed (and is retried, `retry.rs`).
const ACQUIRE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Default of [`Store::with_retry_deadline`].
pub const DEFAULT_RETRY_DEADLINE: std::time::Duration = std::time::Duration::from_secs(120);

/// The session settings every connection gets: on SQLite a 30 s busy
/// timeout, WAL journal and `synchronous=FULL`.
async fn setup_connection(conn: &mut sqlx::AnyConnection, postgres: bool) -> Result<(), sqlx::Error> {
    if !postgres {
        // busy_timeout first: switching to WAL may wait for a lock.
        sqlx::query("PRAGMA busy_timeout = 30000").execute(&mut *conn).await?;
        sqlx::query("PRAGMA journal_mode = WAL").execute(&mut *conn).await?;
        // A commit is on disk (fsync of the WAL) when insert_run returns.
        sqlx::query("PRAGMA synchronous = FULL").execute(&mut *conn).await?;
    }
    Ok(())
}

/// One connection outside the pool, with the session settings, within
/// [`CONNECT_TIMEOUT`]: its error is the real cause (refused, wrong
/// password, not a database), where the pool would retry until its
/// timeout and say only that it timed out.
async fn probe(url: &str, postgres: bool) -> anyhow::Result<()> {
    use sqlx::Connection;
    let once = || async {
        let mut conn = sqlx::AnyConnection::connect(url).await?;
        setup_connection(&mut conn, postgres).await?;
        conn.close().await
    };
    // A server that is starting up (57P03 cannot_connect_now) is waited for.
    let attempt = async {
        loop {
            match once().await {
                Err(sqlx::Error::Database(d)) if d.code().as_deref() == Some("57P03") => {
                    tokio::time::sleep(std::time::Duration::from_millis(200)).await
                }
                r => return r,
            }
        }
    };
    match tokio::time::timeout(CONNECT_TIMEOUT, attempt).await {
        Ok(r) => Ok(r?),
        Err(_) => anyhow::bail!("no answer within {CONNECT_TIMEOUT:?}"),
    }
}

/// Version of the schema this code creates and reads (table `doppel_schema`).
///
/// 1: the first release. 2: technique-tagged class keys (`ClassKey` =
/// technique + named parts, in `record_json` and the new `class_json` column).
/// 3: debug-information records stop wearing the debugger model: verdict
/// `checked {checks}` instead of `program_finished {actions}`, findings
/// without an action index and last action. 4: the `triage` table
/// (`store/triage.rs`: decisions about root causes).
pub const SCHEMA_VERSION: i64 = 4;

/// Key of the PostgreSQL advisory lock held while the schema is created.
const SCHEMA_LOCK: i64 = 0x646f_7070_656c; // "doppel"

const COLUMNS: &str = "key, technique, campaign, subject_name, subject_hash, seed, verdict, class_key, \
     divergence, last_action, ast_node, policy, debuggers, duration_ms, started_at_ms, record_json, class_json";

impl Store {
    /// Opens (and creates, if needed) the store at `url`:
    /// - a file path (`doppel-out/doppel.db`) or a `sqlite:` URL: SQLite,
    ///   opened with `mode=rwc` unless the URL names a mode; the parent
    ///   directory is created; WAL journal and a 30 s busy timeout, one pooled
    ///   connection (SQLite has one writer at a time: this process's writers
    ///   queue on the pool, other processes wait on the busy timeout);
    /// - a `postgres://` or `postgresql://` URL: PostgreSQL, up to 8 connections.
    ///
    /// Creates the schema if it is missing (under an advisory lock on
    /// PostgreSQL, so several machines may open one database at once).
    ///
    /// A database that cannot be reached or opened (refused, a corrupt
    /// SQLite file) fails within [`CONNECT_TIMEOUT`] with the real cause.
    ///
    /// Errors: the directory or database cannot be created or reached, or the
    /// store has a newer schema version than this doppel knows.
    pub async fn open(url: &str) -> anyhow::Result<Store> {
        sqlx::any::install_default_drivers();
        let postgres = url.starts_with("postgres://") || url.starts_with("postgresql://");
        let url = if postgres { url.to_string() } else { sqlite_url(url)? };
        let shown_url = redact_password(&url);
        probe(&url, postgres)
            .await
            .with_context(|| format!("connecting to {shown_url}"))?;
        let pool = AnyPoolOptions::new()
            .max_connections(if postgres { 8 } else { 1 })
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .after_connect(move |conn, _| Box::pin(setup_connection(conn, postgres)))
            .connect(&url)
            .await
            .with_context(|| format!("connecting to {shown_url}"))?;
        let store = Store {
            pool,
            postgres,
            shown_url,
            url,
            retry_deadline: DEFAULT_RETRY_DEADLINE,
            gave_up: Default::default(),
        };
        store.migrate().await?;
        Ok(store)
    }

    async fn migrate(&self) -> anyhow::Result<()> {
        let id = if self.postgres {
            "BIGSERIAL PRIMARY KEY"
        } else {
            "INTEGER PRIMARY KEY AUTOINCREMENT"
        };
        let real = if self.postgres { "DOUBLE PRECISION" } else { "REAL" };
        let ddl = [
            "CREATE TABLE IF NOT EXISTS doppel_schema (version BIGINT NOT NULL)".to_string(),
            format!(
                "CREATE TABLE IF NOT EXISTS runs (id {id}, key TEXT NOT NULL UNIQUE, technique TEXT NOT NULL, \
                 campaign TEXT NOT NULL, subject_name TEXT NOT NULL, subject_hash TEXT NOT NULL, seed BIGINT NOT NULL, \
                 verdict TEXT NOT NULL, class_key TEXT, divergence TEXT, last_action TEXT, ast_node TEXT, policy TEXT, \
                 debuggers TEXT NOT NULL, duration_ms {real} NOT NULL, started_at_ms BIGINT NOT NULL, record_json TEXT NOT NULL, \
                 class_json TEXT)"
            ),
            "CREATE INDEX IF NOT EXISTS runs_class ON runs (class_key)".to_string(),
            // `technique` alone (finished_keys) and with a campaign; `campaign` alone (reports).
            "CREATE INDEX IF NOT EXISTS runs_campaign ON runs (technique, campaign)".to_string(),
            "CREATE INDEX IF NOT EXISTS runs_campaign_only ON runs (campaign)".to_string(),
        ];
        let mut tx = self.pool.begin().await.context("starting the schema transaction")?;
        if self.postgres {
            // Concurrent CREATE ... IF NOT EXISTS can still collide on PostgreSQL;
            // the lock is released at commit. (Wrapped so the row has an int column.)
            sqlx::query("SELECT 1 FROM (SELECT pg_advisory_xact_lock($1)) AS l")
                .bind(SCHEMA_LOCK)
                .execute(&mut *tx)
                .await
                .context("locking the schema")?;
        }
        for stmt in ddl {
            sqlx::query(AssertSqlSafe(stmt.clone()))
                .execute(&mut *tx)
                .await
                .with_context(|| format!("creating the schema: {stmt}"))?;
        }
        let version: Option<i64> = sqlx::query("SELECT MAX(version) FROM doppel_schema")
            .fetch_one(&mut *tx)
            .await?
            .try_get(0)
            .ok()
            .flatten();
        match version {
            None => {
                sqlx::query(triage::DDL)
                    .execute(&mut *tx)
                    .await
                    .context("creating the triage table")?;
                sqlx::query("INSERT INTO doppel_schema (version) VALUES ($1)")
                    .bind(SCHEMA_VERSION)
                    .execute(&mut *tx)
                    .await?;
            }
            Some(v) if v > SCHEMA_VERSION => {
                anyhow::bail!(
                    "the store has schema version {v}, written by a newer doppel; this doppel reads versions up to \
                     {SCHEMA_VERSION}: use a newer doppel, or another store"
                )
            }
            Some(v) if v < SCHEMA_VERSION => {
                migrate::upgrade(&mut tx, v)
                    .await
                    .with_context(|| format!("migrating the store from schema version {v} to {SCHEMA_VERSION}"))?;
            }
            Some(_) => {}
        }
        tx.commit().await.context("committing the schema")?;
        Ok(())
    }

    /// Stores a finished run (its `id` field is ignored) and returns its id.
    /// A run with the same key replaces the stored one and keeps its id (see
    /// the module docs for why).
    ///
    /// Durability: `Ok` means committed (with SQLite, in the WAL with
    /// `synchronous=FULL`); a failed commit (a full disk) is an error, so
    /// the caller counts the run as not stored.
    ///
    /// Errors: database errors; a record that cannot be serialized.
    pub async fn insert_run(&self, run: &RunRecord) -> anyhow::Result<i64> {
        let doing = || format!("storing run {}", run.key);
        self.retrying(&doing, || async {
            let mut conn = self.pool.acquire().await.with_context(doing)?;
            Self::upsert_run_on(&mut conn, run).await
        })
        .await
    }

    /// This store with writes waiting up to `deadline` for an unreachable
    /// PostgreSQL (default [`DEFAULT_RETRY_DEADLINE`]) before they fail with
    /// [`retry::StoreUnavailable`]. SQLite errors are never retried. After
    /// one operation gave up, the next ones try once (and fail at once
    /// while the server is still away) until one succeeds.
    pub fn with_retry_deadline(mut self, deadline: std::time::Duration) -> Store {
        self.retry_deadline = deadline;
        self
    }

    /// `op` under [`retry::with_retry`] on PostgreSQL; once on SQLite.
    pub(crate) async fn retrying<T, F, Fut>(&self, doing: &(dyn Fn() -> String + Sync), op: F) -> anyhow::Result<T>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = anyhow::Result<T>>,
    {
        let mut op = op;
        if !self.postgres {
            return op().await;
        }
        let probe_url = self.url.clone();
        let probe = || async move { probe(&probe_url, true).await.err().map(|e| format!("{e:#}")) };
        use std::sync::atomic::Ordering::Relaxed;
        let deadline = if self.gave_up.load(Relaxed) {
            std::time::Duration::ZERO
        } else {
            self.retry_deadline
        };
        let r = retry::with_retry(&self.shown_url, doing, deadline, probe, op).await;
        match &r {
            Ok(_) => self.gave_up.store(false, Relaxed),
            Err(e) if e.is::<retry::StoreUnavailable>() => self.gave_up.store(true, Relaxed),
            Err(_) => {}
        }
        r
    }

    /// [`Store::insert_run`] on one connection (or transaction, see
    /// `queue.rs`), so a run and the work item it completes commit together.
    pub(crate) async fn upsert_run_on(conn: &mut sqlx::AnyConnection, run: &RunRecord) -> anyhow::Result<i64> {
        let (json, cut) = cap::capped_json(serde_json::to_value(run)?, &cap::RunCaps::default())
            .with_context(|| format!("storing run {}", run.key))?;
        if cut.strings + cut.messages > 0 {
            tracing::warn!(key = %run.key, ?cut, "the run's record was cut to the store's cap");
        }
        let f = run.verdict.finding();
        let class = f.map(|f| f.class.to_string());
        let debuggers = run
            .debuggers
            .iter()
            .map(|d| d.name.as_str())
            .collect::<Vec<_>>()
            .join(",");
        let class_json = f.map(|f| serde_json::to_string(&f.class)).transpose()?;
        let sql = format!(
            "INSERT INTO runs ({COLUMNS}) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17) \
             ON CONFLICT (key) DO UPDATE SET technique=excluded.technique, campaign=excluded.campaign, \
             subject_name=excluded.subject_name, subject_hash=excluded.subject_hash, seed=excluded.seed, \
             verdict=excluded.verdict, class_key=excluded.class_key, divergence=excluded.divergence, \
             last_action=excluded.last_action, ast_node=excluded.ast_node, policy=excluded.policy, \
             debuggers=excluded.debuggers, duration_ms=excluded.duration_ms, started_at_ms=excluded.started_at_ms, \
             record_json=excluded.record_json, class_json=excluded.class_json"
        );
        // No `RETURNING` and no transaction: sqlx stops stepping a SQLite
        // statement after the row it returns, so the autocommit happens when
        // the statement is reset and an error there (`SQLITE_FULL` on a full
        // disk) is dropped (transact-rs/sqlx#2099); and after a failed
        // statement inside an explicit transaction SQLite may roll the
        // transaction back on its own, sqlx's count of open transactions
        // goes out of step, and later "commits" only release savepoints of a
        // transaction that is never committed. A plain statement run to its
        // end autocommits and returns the commit's error.
        let context = || format!("storing run {}", run.key);
        sqlx::query(AssertSqlSafe(sql))
            .bind(run.key.clone())
            .bind(run.technique.clone())
            .bind(run.campaign.clone())
            .bind(run.subject.name.clone())
            .bind(run.subject.hash.clone())
            .bind(run.seed as i64)
            .bind(run.verdict.name().to_string())
            .bind(class)
            .bind(f.and_then(|f| f.class.part("divergence").map(str::to_string)))
            .bind(f.and_then(|f| f.class.part("last_action").map(str::to_string)))
            .bind(f.and_then(|f| f.class.part("node").map(str::to_string)))
            .bind(f.and_then(|f| f.class.part("policy").map(str::to_string)))
            .bind(debuggers)
            .bind(run.duration_ms)
            .bind(run.started_at_ms)
            .bind(json)
            .bind(class_json)
            .execute(&mut *conn)
            .await
            .with_context(context)?;
        // The key is unique and an upsert keeps the id, so this is the id.
        let id: i64 = sqlx::query("SELECT id FROM runs WHERE key = $1")
            .bind(run.key.clone())
            .fetch_one(&mut *conn)
            .await
            .with_context(context)?
            .try_get(0)?;
        Ok(id)
    }

    /// The keys of all stored runs of `technique` (for `--resume`).
    ///
    /// Errors: database errors.
    pub async fn finished_keys(&self, technique: &str) -> anyhow::Result<HashSet<String>> {
        let rows = sqlx::query("SELECT key FROM runs WHERE technique = $1")
            .bind(technique.to_string())
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|r| r.try_get::<String, _>(0).map_err(Into::into))
            .collect()
    }

    /// The run with `id`, with its id filled in; `None` if there is none.
    ///
    /// Errors: database errors, or a stored record that no longer parses.
    pub async fn run(&self, id: i64) -> anyhow::Result<Option<RunRecord>> {
        let Some(row) = sqlx::query("SELECT record_json FROM runs WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
        else {
            return Ok(None);
        };
        let json: String = row.try_get(0)?;
        let mut rec: RunRecord = serde_json::from_str(&json).with_context(|| format!("run {id} does not parse"))?;
        rec.id = Some(id);
        Ok(Some(rec))
    }

    /// `WHERE` clause and bindings for a filter, placeholders from `$first`.
    fn filter_sql(filter: &RunFilter, first: usize) -> (String, Vec<String>) {
        let mut conds = Vec::new();
        let mut binds = Vec::new();
        for (col, val) in [("technique", &filter.technique), ("campaign", &filter.campaign)] {
            if let Some(v) = val {
                conds.push(format!("{col} = ${}", first + binds.len()));
                binds.push(v.clone());
            }
        }
        (conds.iter().map(|c| format!(" AND {c}")).collect(), binds)
    }

    /// The equivalence classes of the divergent runs matching `filter`,
    /// largest first, then by the key's `Display` form.
    ///
    /// Errors: database errors; a stored class key that no longer parses.
    pub async fn classes(&self, filter: &RunFilter) -> anyhow::Result<Vec<ClassSummary>> {
        let (cond, binds) = Self::filter_sql(filter, 1);
        let sql = format!(
            "SELECT class_key, COUNT(*), MIN(id), MIN(class_json) FROM runs WHERE class_key IS NOT NULL{cond} \
             GROUP BY class_key ORDER BY COUNT(*) DESC, class_key"
        );
        let mut q = sqlx::query(AssertSqlSafe(sql));
        for b in binds {
            q = q.bind(b);
        }
        let rows = q.fetch_all(&self.pool).await?;
        rows.iter()
            .map(|r| {
                let key: String = r.try_get(0)?;
                Ok(ClassSummary {
                    key: class_of(r.try_get(3)?).with_context(|| format!("bad class key in the store: {key}"))?,
                    size: r.try_get::<i64, _>(1)? as u64,
                    first_run: r.try_get(2)?,
                })
            })
            .collect()
    }

    fn summary_of(r: &AnyRow) -> anyhow::Result<RunSummary> {
        let class: Option<String> = r.try_get(3)?;
        Ok(RunSummary {
            id: r.try_get(0)?,
            subject_name: r.try_get(1)?,
            seed: r.try_get::<i64, _>(2)? as u64,
            class_key: class.map(Some).map(class_of).transpose()?,
            verdict: r.try_get(4)?,
            duration_ms: r.try_get(5)?,
        })
    }

    /// Ids of the divergent runs matching `filter`, in id order.
    ///
    /// Errors: database errors.
    pub async fn divergent_run_ids(&self, filter: &RunFilter) -> anyhow::Result<Vec<i64>> {
        let (cond, binds) = Self::filter_sql(filter, 1);
        let sql = format!("SELECT id FROM runs WHERE class_key IS NOT NULL{cond} ORDER BY id");
        let mut q = sqlx::query(AssertSqlSafe(sql));
        for b in binds {
            q = q.bind(b);
        }
        q.fetch_all(&self.pool)
            .await?
            .iter()
            .map(|r| r.try_get(0).map_err(Into::into))
            .collect()
    }

    /// Ids of the runs matching `filter` whose key matches the SQL `LIKE`
    /// pattern `key_like` (`conform|c1|%|summary|%`), in id order, at most
    /// `limit`: how a technique finds its own records (a campaign's
    /// summary, its test runs) for report pages.
    ///
    /// Errors: database errors.
    pub async fn run_ids_by_key(&self, filter: &RunFilter, key_like: &str, limit: usize) -> anyhow::Result<Vec<i64>> {
        let (cond, binds) = Self::filter_sql(filter, 3);
        let sql = format!("SELECT id FROM runs WHERE key LIKE $1{cond} ORDER BY id LIMIT $2");
        let mut q = sqlx::query(AssertSqlSafe(sql))
            .bind(key_like.to_string())
            .bind(limit as i64);
        for b in binds {
            q = q.bind(b);
        }
        q.fetch_all(&self.pool)
            .await?
            .iter()
            .map(|r| r.try_get(0).map_err(Into::into))
            .collect()
    }

    /// Up to `limit` runs of a class among the runs matching `filter`, by id.
    ///
    /// Errors: database errors.
    pub async fn runs_in_class(
        &self,
        key: &ClassKey,
        filter: &RunFilter,
        limit: usize,
    ) -> anyhow::Result<Vec<RunSummary>> {
        let (cond, binds) = Self::filter_sql(filter, 3);
        let sql = format!(
            "SELECT id, subject_name, seed, class_json, verdict, duration_ms FROM runs WHERE class_key = $1{cond} ORDER BY id LIMIT $2"
        );
        let mut q = sqlx::query(AssertSqlSafe(sql)).bind(key.to_string()).bind(limit as i64);
        for b in binds {
            q = q.bind(b);
        }
        q.fetch_all(&self.pool).await?.iter().map(Self::summary_of).collect()
    }

    /// DBDB section 3.4's sampling: classes largest first (as [`Store::classes`]),
    /// then round robin: the first run of every class, then the second run of
    /// every class that has one, ..., `per_class` rounds. Runs within a class
    /// are taken by id, so the result is deterministic. With classes of sizes
    /// 3, 2, 1 and `per_class` 2 the order is A1 B1 C1 A2 B2.
    ///
    /// Errors: as [`Store::classes`].
    pub async fn sample_round_robin(&self, filter: &RunFilter, per_class: usize) -> anyhow::Result<Vec<RunSummary>> {
        let classes = self.classes(filter).await?;
        let mut per: Vec<Vec<RunSummary>> = Vec::new();
        for c in &classes {
            per.push(self.runs_in_class(&c.key, filter, per_class).await?);
        }
        let mut out = Vec::new();
        for round in 0..per_class {
            for runs in &per {
                if let Some(r) = runs.get(round) {
                    out.push(r.clone());
                }
            }
        }
        Ok(out)
    }

    /// For every run matching `filter`: its verdict name, its divergence
    /// type (divergent runs only) and [`RunRecord::execution_actions`], for
    /// DBDB Figure 7. Records are streamed, one in memory at a time.
    ///
    /// Errors: database errors; a stored record that does not parse.
    pub async fn action_counts(&self, filter: &RunFilter) -> anyhow::Result<Vec<ActionCount>> {
        use futures::TryStreamExt;
        let (cond, binds) = Self::filter_sql(filter, 1);
        let sql = format!("SELECT id, verdict, divergence, record_json FROM runs WHERE 1=1{cond} ORDER BY id");
        let mut q = sqlx::query(AssertSqlSafe(sql));
        for b in binds {
            q = q.bind(b);
        }
        let mut rows = q.fetch(&self.pool);
        let mut out = Vec::new();
        while let Some(r) = rows.try_next().await? {
            let id: i64 = r.try_get(0)?;
            let json: String = r.try_get(3)?;
            let record: RunRecord =
                serde_json::from_str(&json).with_context(|| format!("run {id}: stored record does not parse"))?;
            out.push(ActionCount {
                verdict: r.try_get(1)?,
                divergence: r.try_get(2)?,
                execution_actions: record.execution_actions(),
            });
        }
        Ok(out)
    }

    /// Verdict counts, classes and durations of the runs matching `filter`
    /// (all zero when no run matches).
    ///
    /// Errors: database errors.
    pub async fn summary(&self, filter: &RunFilter) -> anyhow::Result<CampaignSummary> {
        let (cond, binds) = Self::filter_sql(filter, 1);
        let sql = format!(
            "SELECT verdict, COUNT(*) FROM runs WHERE 1=1{cond} GROUP BY verdict ORDER BY COUNT(*) DESC, verdict"
        );
        let mut q = sqlx::query(AssertSqlSafe(sql));
        for b in &binds {
            q = q.bind(b.clone());
        }
        let mut s = CampaignSummary::default();
        for r in q.fetch_all(&self.pool).await? {
            let (v, n): (String, i64) = (r.try_get(0)?, r.try_get(1)?);
            s.runs += n as u64;
            if v == "divergence" {
                s.divergences = n as u64;
            }
            s.verdicts.push((v, n as u64));
        }
        let sql = format!("SELECT duration_ms FROM runs WHERE 1=1{cond} ORDER BY duration_ms");
        let mut q = sqlx::query(AssertSqlSafe(sql));
        for b in &binds {
            q = q.bind(b.clone());
        }
        let durations: Vec<f64> = q
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|r| r.try_get(0))
            .collect::<Result<_, _>>()?;
        s.median_duration_ms = median(&durations);
        s.total_duration_ms = durations.iter().sum();
        s.classes = self.classes(filter).await?.len() as u64;
        Ok(s)
    }

    /// Whether the store is PostgreSQL.
    pub fn is_postgres(&self) -> bool {
        self.postgres
    }
}

/// A class key from its `class_json` column.
fn class_of(json: Option<String>) -> anyhow::Result<ClassKey> {
    let json = json.context("the class has no class_json")?;
    serde_json::from_str(&json).with_context(|| format!("class_json does not parse: {json}"))
}

/// `url` with the password of its user part (`user:secret@host`) replaced
/// by `***`, for error messages.
fn redact_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => match rest[..at].split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***{}", &rest[at..]),
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

/// The median of sorted values (mean of the middle two for an even count); 0 when empty.
fn median(sorted: &[f64]) -> f64 {
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// The sqlx URL for a SQLite store given as a path or a `sqlite:` URL:
/// `mode=rwc` added unless a mode is given, the parent directory created.
fn sqlite_url(url: &str) -> anyhow::Result<String> {
    let (path, query) = match url.strip_prefix("sqlite:") {
        Some(rest) => {
            let rest = rest.strip_prefix("//").unwrap_or(rest);
            match rest.split_once('?') {
                Some((p, q)) => (p.to_string(), Some(q.to_string())),
                None => (rest.to_string(), None),
            }
        }
        None => (url.to_string(), None),
    };
    anyhow::ensure!(!path.is_empty(), "no SQLite file named in {url:?}");
    if path != ":memory:"
        && let Some(parent) = Path::new(&path).parent().filter(|p| !p.as_os_str().is_empty())
    {
        std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    }
    let query = match query {
        Some(q) if q.split('&').any(|kv| kv.starts_with("mode=")) => q,
        Some(q) if !q.is_empty() => format!("{q}&mode=rwc"),
        _ => "mode=rwc".to_string(),
    };
    Ok(format!("sqlite:{path}?{query}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[]), 0.0);
        assert_eq!(median(&[1.0, 2.0, 9.0]), 2.0);
        assert_eq!(median(&[1.0, 2.0, 4.0, 9.0]), 3.0);
    }

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(
            redact_password("postgres://me:s3cr@t@db:5432/x"),
            "postgres://me:***@db:5432/x"
        );
        assert_eq!(redact_password("postgres://me@db/x"), "postgres://me@db/x");
        assert_eq!(redact_password("sqlite:a.db?mode=rwc"), "sqlite:a.db?mode=rwc");
    }

    #[test]
    fn sqlite_urls_are_normalized() {
        assert_eq!(sqlite_url("x.db").unwrap(), "sqlite:x.db?mode=rwc");
        assert_eq!(sqlite_url("sqlite:x.db").unwrap(), "sqlite:x.db?mode=rwc");
        assert_eq!(
            sqlite_url("sqlite://x.db?cache=shared").unwrap(),
            "sqlite:x.db?cache=shared&mode=rwc"
        );
        assert_eq!(sqlite_url("sqlite:x.db?mode=ro").unwrap(), "sqlite:x.db?mode=ro");
        assert_eq!(sqlite_url("sqlite::memory:").unwrap(), "sqlite::memory:?mode=rwc");
        assert!(sqlite_url("sqlite:").is_err());
    }
}
