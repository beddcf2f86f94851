//! The one campaign runner every technique uses: work items (subject, seed,
//! configuration) over J jobs, each job with its own warm tool instances
//! (made by the technique's per-job setup hook); every finished run stored
//! at once; `--resume`; a deadline; and where the items come from: all of
//! them, a deterministic partition (`--partition k/N`, [`Partition`]), or
//! claimed one at a time from PostgreSQL (`--claim`, [`WorkQueue`]).
//!
//! The runner knows no technique: a technique gives its items in a
//! deterministic order (the partition is taken over that order, before
//! `--resume` drops finished ones, so partitions do not shift between
//! invocations) and a [`Technique`] that makes jobs; a [`Job`] runs one item
//! and hands its records to the [`Sink`] as they finish (a metamorphic
//! sequence stores one record per test). What happened is reported through
//! [`Progress`] events (the command line draws its progress bar from them)
//! and counted in [`CampaignStats`].
//!
//! Errors of the campaign, not outcomes of a subject: a run the store did not
//! commit ([`CampaignStats::store_errors`]) and an environment failure of an
//! item ([`ItemError::Environment`]: an unwritable build cache, a full disk,
//! a missing compiler). Neither is stored as a finished run, so `--resume`
//! runs those items again; both make the command exit non-zero.

use crate::partition::Partition;
use crate::run::RunRecord;
use crate::store::Store;
use crate::store::queue::{Claimed, Completion, WorkItem, WorkQueue};
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One work item of a campaign.
#[derive(Debug, Clone)]
pub struct Item<I> {
    /// Unique within the campaign; the key of the run the item produces, or
    /// of its sequence ([`Technique::finished_item`] maps stored run keys
    /// back to it for `--resume`).
    pub key: String,
    /// Subject name, for progress messages.
    pub subject: String,
    /// The item's seed.
    pub seed: u64,
    /// What the technique needs to run it (a prepared subject, ...).
    pub input: I,
}

/// Why an item did not finish: not an outcome of the subject, so nothing is
/// stored and `--resume` runs the item again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ItemError {
    /// The environment failed (the build cache cannot be written, the disk
    /// is full, a tool is missing), with the cause.
    Environment(String),
}

impl std::fmt::Display for ItemError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ItemError::Environment(e) => write!(f, "environment failure: {e}"),
        }
    }
}

/// A technique as the runner sees it: a maker of jobs.
#[allow(async_fn_in_trait)]
pub trait Technique {
    /// The input of one item.
    type Input;
    /// One job: the warm tool instances it runs items on.
    type Job: Job<Input = Self::Input>;
    /// The technique tag of its stored runs (`differential`, ...).
    fn name(&self) -> &str;
    /// The item key a stored run's key finishes, if any (`--resume`): by
    /// default the run key itself (one run per item).
    fn finished_item(&self, run_key: &str) -> Option<String> {
        Some(run_key.to_string())
    }
    /// The per-job setup hook: creates job `index`'s tool instances.
    ///
    /// Errors: a tool cannot be created (the campaign stops before any run).
    async fn setup(&self, index: usize) -> anyhow::Result<Self::Job>;
}

/// One job of a campaign.
#[allow(async_fn_in_trait)]
pub trait Job {
    /// The input of one item.
    type Input;
    /// A hint: `next` runs after the current item (a backend may prepare it,
    /// e.g. start a spare process). Default: nothing.
    fn preload(&mut self, next: &Item<Self::Input>) {
        let _ = next;
    }
    /// Runs one item, giving each finished record to `sink` at once.
    ///
    /// Errors: [`ItemError`] for an environment failure (nothing of the item
    /// counts as finished).
    async fn run(&mut self, item: &Item<Self::Input>, sink: &Sink<'_>) -> Result<(), ItemError>;
    /// Ends the job's tools.
    async fn shutdown(self);
}

/// A short fingerprint (12 hex digits of SHA-256) of the tools under test:
/// each one's name, executable and version, plus `extra` (e.g. executable
/// overrides when the tools were not probed). Part of every run key, so
/// that campaigns with other tools never share keys.
pub fn tools_fingerprint(tools: &[crate::model::ToolInfo], extra: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for t in tools {
        for part in [&t.name, &t.executable, &t.version] {
            h.update(part.as_bytes());
            h.update([0]);
        }
    }
    h.update(extra.as_bytes());
    hex::encode(h.finalize())[..12].to_string()
}

/// Where a campaign's items come from.
#[derive(Debug, Clone, Default)]
pub enum Source {
    /// Every item.
    #[default]
    All,
    /// The items of one partition of the campaign's order (`--partition k/N`).
    Partition(Partition),
    /// Items claimed from the PostgreSQL work-item table (`--claim`): every
    /// worker enqueues the whole campaign (idempotent), then claims items
    /// one at a time under a lease it renews while the item runs; items of a
    /// dead worker come back when its lease expires. An item's runs (one or
    /// several, with any keys) are stored when it ends, with its completion
    /// in one transaction.
    Claim {
        /// This worker's name, unique among the campaign's workers.
        worker: String,
        /// Lease length (at least 1 s).
        lease: Duration,
    },
}

/// How to run a campaign.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Campaign name (the claim queue is per campaign).
    pub campaign: String,
    /// Parallel jobs (at least 1).
    pub jobs: usize,
    /// Skip items whose runs are stored.
    pub resume: bool,
    /// Take no new item after this instant; items running then finish.
    pub deadline: Option<Instant>,
    /// Where the items come from.
    pub source: Source,
}

/// What the runner reports as it goes.
#[derive(Debug)]
pub enum Progress<'a> {
    /// `total` items to run (for `--claim`: the campaign's items not done
    /// yet, shared with other workers), `skipped` already stored.
    Started {
        /// Items to run.
        total: usize,
        /// Items skipped because their runs are stored (`--resume`).
        skipped: usize,
    },
    /// A run was stored.
    Stored {
        /// The item's subject.
        subject: &'a str,
        /// The item's seed.
        seed: u64,
        /// The stored run.
        run: &'a RunRecord,
    },
    /// A run could not be stored (the campaign goes on, and fails at the end).
    StoreError {
        /// The item's subject.
        subject: &'a str,
        /// The item's seed.
        seed: u64,
        /// The store's error.
        error: String,
    },
    /// An item failed for a reason of the environment.
    ItemError {
        /// The item's subject.
        subject: &'a str,
        /// The item's seed.
        seed: u64,
        /// The error.
        error: &'a ItemError,
    },
    /// An item ended (with or without error).
    ItemDone {
        /// The item's subject.
        subject: &'a str,
        /// The item's seed.
        seed: u64,
    },
}

/// What a campaign did, in this invocation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CampaignStats {
    /// Items run.
    pub items: usize,
    /// Items skipped by `--resume`.
    pub skipped: usize,
    /// Runs stored.
    pub runs: usize,
    /// Stored runs with a finding.
    pub findings: usize,
    /// Stored runs judged inconclusive.
    pub inconclusive: usize,
    /// Stored runs judged not comparable by their control run
    /// ([`crate::model::Verdict::NotComparable`], issue 17 item 2).
    pub not_comparable: usize,
    /// Runs the store did not commit.
    pub store_errors: usize,
    /// Items that failed for a reason of the environment.
    pub item_errors: usize,
    /// Items not started because the deadline passed (`--resume` runs them;
    /// for `--claim`, other workers may).
    pub not_started: usize,
    /// `--claim`: runs another worker had completed first (this worker's
    /// lease had expired); not stored again.
    pub taken_over: usize,
    /// Sum of the stored runs' own durations, milliseconds.
    pub run_ms: f64,
    /// The store stayed unreachable past its retry deadline
    /// ([`crate::store::retry::StoreUnavailable`]): the campaign started no
    /// further item (they count as `not_started`; `--resume` runs them).
    pub store_unavailable: bool,
}

impl CampaignStats {
    /// Whether the campaign failed: a run not stored or an environment failure.
    pub fn failed(&self) -> bool {
        self.store_errors > 0 || self.item_errors > 0
    }
}

type OnProgress<'a> = &'a (dyn Fn(Progress<'_>) + Sync);

/// Where a job's finished records go.
pub struct Sink<'a> {
    store: &'a Store,
    /// `--claim`: the item's records, held until the item ends and then
    /// stored with its completion in one transaction.
    held: Option<Mutex<Vec<RunRecord>>>,
    subject: &'a str,
    seed: u64,
    stats: &'a Mutex<CampaignStats>,
    on_progress: OnProgress<'a>,
}

impl Sink<'_> {
    /// Stores one finished run and reports it; with `--claim`, holds it
    /// until the item ends, when all of the item's runs are stored with its
    /// completion in one transaction (an item's runs are stored if and only
    /// if the item is done, whichever worker finishes it). A failure to
    /// store is counted and reported, never lost silently. Returns whether
    /// the run was stored (with `--claim`: accepted; a later failure of the
    /// completion is counted and reported then).
    pub async fn store(&self, run: RunRecord) -> bool {
        if let Some(held) = &self.held {
            held.lock().unwrap_or_else(|e| e.into_inner()).push(run);
            return true;
        }
        let stored = self.store.insert_run(&run).await;
        self.account(std::slice::from_ref(&run), stored.map(|_| Completion::Stored(0)))
    }

    /// Counts and reports the outcome of storing `runs`; whether they were stored.
    fn account(&self, runs: &[RunRecord], stored: anyhow::Result<Completion>) -> bool {
        let progress = {
            let mut s = self.stats.lock().unwrap_or_else(|e| e.into_inner());
            match stored {
                Ok(Completion::Stored(_)) => {
                    for run in runs {
                        s.runs += 1;
                        s.run_ms += run.duration_ms;
                        if run.verdict.finding().is_some() {
                            s.findings += 1;
                        }
                        if matches!(run.verdict, crate::model::Verdict::Inconclusive { .. }) {
                            s.inconclusive += 1;
                        }
                        if matches!(run.verdict, crate::model::Verdict::NotComparable { .. }) {
                            s.not_comparable += 1;
                        }
                    }
                    Ok(())
                }
                Ok(Completion::AlreadyDone) => {
                    s.taken_over += runs.len();
                    return false;
                }
                Err(e) => {
                    s.store_errors += runs.len().max(1);
                    if e.is::<crate::store::retry::StoreUnavailable>() {
                        s.store_unavailable = true;
                    }
                    Err(format!("{e:#}"))
                }
            }
        };
        match progress {
            Ok(()) => {
                for run in runs {
                    (self.on_progress)(Progress::Stored {
                        subject: self.subject,
                        seed: self.seed,
                        run,
                    });
                }
                true
            }
            Err(error) => {
                (self.on_progress)(Progress::StoreError {
                    subject: self.subject,
                    seed: self.seed,
                    error,
                });
                false
            }
        }
    }
}

/// The items still to run: a local list, or the claim queue.
enum Feed<'a, I> {
    Local(Mutex<VecDeque<&'a Item<I>>>),
    Claim {
        queue: WorkQueue,
        by_key: HashMap<&'a str, &'a Item<I>>,
        lease: Duration,
    },
}

/// Runs a campaign: `items` (the whole campaign, in its deterministic
/// order) over `options.jobs` jobs of `technique`.
///
/// Errors: the store cannot be read (`--resume`), the claim queue cannot be
/// opened or filled, or a job's setup fails; all before any run. Single
/// items never fail the campaign: their failures are in the stats.
pub async fn run<T: Technique>(
    technique: &T,
    items: &[Item<T::Input>],
    store: &Store,
    options: &Options,
    on_progress: &(dyn Fn(Progress<'_>) + Sync),
) -> anyhow::Result<CampaignStats> {
    let done: HashSet<String> = if options.resume {
        store
            .finished_keys(technique.name())
            .await?
            .iter()
            .filter_map(|k| technique.finished_item(k))
            .collect()
    } else {
        HashSet::new()
    };
    let selected: Vec<&Item<T::Input>> = match &options.source {
        Source::Partition(p) => p.select(items.iter()),
        _ => items.iter().collect(),
    };
    let skipped = selected.iter().filter(|i| done.contains(&i.key)).count();
    let todo: Vec<&Item<T::Input>> = selected.into_iter().filter(|i| !done.contains(&i.key)).collect();
    let (feed, total) = match &options.source {
        Source::Claim { worker, lease } => {
            let queue = WorkQueue::open(store, &options.campaign, worker, *lease).await?;
            // The whole campaign in its order: positions agree across workers.
            let all: Vec<WorkItem> = items
                .iter()
                .map(|i| WorkItem {
                    key: i.key.clone(),
                    payload: serde_json::json!({"subject": i.subject, "seed": i.seed}),
                })
                .collect();
            queue.enqueue(&all).await?;
            let total = queue.counts().await?.remaining() as usize;
            // Every item, also those `--resume` found stored: the queue is
            // what says what is done, and an item stored outside it (by an
            // earlier run without --claim) is run again (same key, same
            // inputs: the stored run is replaced by its equal) so that the
            // queue completes.
            let by_key = items.iter().map(|i| (i.key.as_str(), i)).collect();
            (
                Feed::Claim {
                    queue,
                    by_key,
                    lease: *lease,
                },
                total,
            )
        }
        _ => {
            let n = todo.len();
            (Feed::Local(Mutex::new(todo.into_iter().collect())), n)
        }
    };
    on_progress(Progress::Started { total, skipped });
    let jobs = options.jobs.max(1).min(total.max(1));
    // Every job's tools first, so a missing tool is one clear error before any run.
    let mut made = Vec::with_capacity(jobs);
    for i in 0..jobs {
        made.push(technique.setup(i).await?);
    }
    let stats = Mutex::new(CampaignStats {
        skipped,
        ..Default::default()
    });
    let workers = made
        .into_iter()
        .map(|job| worker(job, &feed, store, options, &stats, on_progress));
    futures::future::join_all(workers).await;
    if let Feed::Local(rest) = &feed {
        stats.lock().unwrap_or_else(|e| e.into_inner()).not_started +=
            rest.lock().unwrap_or_else(|e| e.into_inner()).len();
    }
    Ok(stats.into_inner().unwrap_or_else(|e| e.into_inner()))
}

fn past(deadline: Option<Instant>) -> bool {
    deadline.is_some_and(|d| Instant::now() >= d)
}

/// Whether to start no further item: the deadline passed, or the store is
/// unreachable (every run would be lost).
fn stop(options: &Options, stats: &Mutex<CampaignStats>) -> bool {
    past(options.deadline) || stats.lock().unwrap_or_else(|e| e.into_inner()).store_unavailable
}

async fn worker<J: Job>(
    mut job: J,
    feed: &Feed<'_, J::Input>,
    store: &Store,
    options: &Options,
    stats: &Mutex<CampaignStats>,
    on_progress: OnProgress<'_>,
) {
    match feed {
        Feed::Local(queue) => {
            let pop = || queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
            // Each worker holds the next item too, so its tools can prepare
            // that run while this one goes on (Job::preload).
            let mut next = if stop(options, stats) { None } else { pop() };
            while let Some(item) = next.take() {
                if stop(options, stats) {
                    // The item held for preloading is not started either.
                    stats.lock().unwrap_or_else(|e| e.into_inner()).not_started += 1;
                    break;
                }
                next = if stop(options, stats) { None } else { pop() };
                if let Some(n) = next {
                    job.preload(n);
                }
                // An environment failure is counted; the next item may fare better.
                let _ = run_item(&mut job, item, store, None, stats, on_progress).await;
            }
        }
        Feed::Claim { queue, by_key, lease } => {
            claim_loop(&mut job, queue, by_key, *lease, store, options, stats, on_progress).await;
        }
    }
    job.shutdown().await;
}

async fn run_item<J: Job>(
    job: &mut J,
    item: &Item<J::Input>,
    store: &Store,
    queue: Option<&WorkQueue>,
    stats: &Mutex<CampaignStats>,
    on_progress: OnProgress<'_>,
) -> Result<(), ItemError> {
    let sink = Sink {
        store,
        held: queue.map(|_| Mutex::new(Vec::new())),
        subject: &item.subject,
        seed: item.seed,
        stats,
        on_progress,
    };
    let result = job.run(item, &sink).await;
    if let (Some(q), Some(held), Ok(())) = (queue, &sink.held, &result) {
        // The item's runs and its completion, in one transaction.
        let runs = std::mem::take(&mut *held.lock().unwrap_or_else(|e| e.into_inner()));
        sink.account(&runs, q.complete_with(&item.key, &runs).await);
    }
    {
        let mut s = stats.lock().unwrap_or_else(|e| e.into_inner());
        s.items += 1;
        if result.is_err() {
            s.item_errors += 1;
        }
    }
    if let Err(e) = &result {
        on_progress(Progress::ItemError {
            subject: &item.subject,
            seed: item.seed,
            error: e,
        });
    }
    on_progress(Progress::ItemDone {
        subject: &item.subject,
        seed: item.seed,
    });
    result
}

/// How long a worker waits before asking again when every remaining item is
/// leased by another worker (one of them may die).
fn idle_wait(lease: Duration) -> Duration {
    (lease / 4).clamp(Duration::from_millis(200), Duration::from_secs(5))
}

#[allow(clippy::too_many_arguments)]
async fn claim_loop<J: Job>(
    job: &mut J,
    queue: &WorkQueue,
    by_key: &HashMap<&str, &Item<J::Input>>,
    lease: Duration,
    store: &Store,
    options: &Options,
    stats: &Mutex<CampaignStats>,
    on_progress: OnProgress<'_>,
) {
    let fail = |e: anyhow::Error| {
        // The queue is the store: count it as a store error, and stop this worker.
        stats.lock().unwrap_or_else(|p| p.into_inner()).store_errors += 1;
        on_progress(Progress::StoreError {
            subject: "(work-item queue)",
            seed: 0,
            error: format!("{e:#}"),
        });
    };
    while !stop(options, stats) {
        let claimed: Vec<Claimed> = match queue.claim(1).await {
            Ok(c) => c,
            Err(e) => return fail(e),
        };
        let Some(c) = claimed.into_iter().next() else {
            match queue.counts().await {
                Ok(n) if n.remaining() == 0 => return,
                Ok(_) => {
                    tokio::time::sleep(idle_wait(lease)).await;
                    continue;
                }
                Err(e) => return fail(e),
            }
        };
        let Some(item) = by_key.get(c.key.as_str()) else {
            // Not an item of this worker's campaign configuration.
            let _ = queue.release(std::slice::from_ref(&c.key)).await;
            return fail(anyhow::anyhow!(
                "claimed work item {} is not one of this worker's items: the workers of campaign {} \
                 run different configurations (corpus, seeds, settings or tools)",
                c.key,
                options.campaign
            ));
        };
        let keys = [c.key.clone()];
        let renew = async {
            loop {
                tokio::time::sleep(lease / 3).await;
                let _ = queue.renew(&keys).await;
            }
        };
        let result = tokio::select! {
            r = run_item(job, item, store, Some(queue), stats, on_progress) => r,
            _ = renew => unreachable!("the renewal loop never ends"),
        };
        if result.is_err() {
            // A worker whose environment fails gives its item back and stops:
            // another worker (or a later `--resume`) runs it.
            let _ = queue.release(&keys).await;
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ToolInfo, Verdict};
    use crate::subject::{Language, Subject};

    struct Fake {
        fail_seed: Option<u64>,
    }

    struct FakeJob {
        fail_seed: Option<u64>,
    }

    fn record(key: &str, seed: u64) -> RunRecord {
        RunRecord {
            id: None,
            key: key.to_string(),
            technique: "fake".into(),
            campaign: "c".into(),
            subject: Subject {
                name: "s".into(),
                language: Language::C,
                source: "s.c".into(),
                source_name: "s.c".into(),
                line_count: 1,
                binary: None,
                prelude: vec![],
                epilogue: vec![],
                hash: "h".into(),
                build: "none".into(),
            },
            seed,
            config: serde_json::Value::Null,
            debuggers: vec![ToolInfo {
                name: "fake".into(),
                version: "1".into(),
                protocol: "none".into(),
                executable: "fake".into(),
            }],
            verdict: Verdict::ProgramFinished { actions: 1 },
            traces: vec![],
            duration_ms: 1.0,
            started_at_ms: 0,
        }
    }

    impl Technique for Fake {
        type Input = ();
        type Job = FakeJob;
        fn name(&self) -> &str {
            "fake"
        }
        async fn setup(&self, _index: usize) -> anyhow::Result<FakeJob> {
            Ok(FakeJob {
                fail_seed: self.fail_seed,
            })
        }
    }

    impl Job for FakeJob {
        type Input = ();
        async fn run(&mut self, item: &Item<()>, sink: &Sink<'_>) -> Result<(), ItemError> {
            if Some(item.seed) == self.fail_seed {
                return Err(ItemError::Environment("disk full".into()));
            }
            sink.store(record(&item.key, item.seed)).await;
            Ok(())
        }
        async fn shutdown(self) {}
    }

    fn items(n: u64) -> Vec<Item<()>> {
        (0..n)
            .map(|seed| Item {
                key: format!("k{seed}"),
                subject: "s".into(),
                seed,
                input: (),
            })
            .collect()
    }

    async fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("d.db").to_str().unwrap()).await.unwrap();
        (dir, store)
    }

    #[tokio::test]
    async fn partitions_resume_and_environment_failures() {
        let (_dir, store) = store().await;
        let opts = |source, resume| Options {
            campaign: "c".into(),
            jobs: 2,
            resume,
            deadline: None,
            source,
        };
        let fake = Fake { fail_seed: Some(3) };
        let s = run(
            &fake,
            &items(6),
            &store,
            &opts(Source::Partition("1/2".parse().unwrap()), false),
            &|_| {},
        )
        .await
        .unwrap();
        assert_eq!((s.items, s.runs, s.item_errors, s.skipped), (3, 3, 0, 0));
        let s = run(&fake, &items(6), &store, &opts(Source::All, true), &|_| {})
            .await
            .unwrap();
        // 0, 2, 4 stored; 1, 3, 5 run; 3 fails for the environment, not stored.
        assert_eq!((s.items, s.runs, s.item_errors, s.skipped), (3, 2, 1, 3));
        assert!(s.failed());
        let fixed = Fake { fail_seed: None };
        let s = run(&fixed, &items(6), &store, &opts(Source::All, true), &|_| {})
            .await
            .unwrap();
        assert_eq!((s.items, s.runs, s.item_errors, s.skipped), (1, 1, 0, 5));
        assert_eq!(store.finished_keys("fake").await.unwrap().len(), 6);
    }

    #[tokio::test]
    async fn a_past_deadline_starts_nothing_and_says_so() {
        let (_dir, store) = store().await;
        let opts = Options {
            campaign: "c".into(),
            jobs: 1,
            resume: false,
            deadline: Some(Instant::now()),
            source: Source::All,
        };
        let s = run(&Fake { fail_seed: None }, &items(4), &store, &opts, &|_| {})
            .await
            .unwrap();
        assert_eq!((s.items, s.runs, s.not_started), (0, 0, 4));
    }
}
