//! A differential campaign: many (subject, seed) runs over a pool of jobs,
//! each job with its own warm debuggers, every finished run written to the
//! store at once (an interrupted campaign loses no finished run, and
//! `resume` skips the runs already stored).

use crate::config::DiffConfig;
use crate::engine;
use doppel_core::store::Store;
use doppel_core::{RunRecord, Subject, ToolInfo, Verdict};
use doppel_debuggers::{Debugger, DebuggerConfig, registry};
pub use doppel_lang::prepare::Prepared;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::Mutex;

/// The technique name under which runs are stored.
pub const TECHNIQUE: &str = "differential";

/// Everything a campaign needs besides its inputs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CampaignSpec {
    /// Free-text campaign name stored with every run.
    pub name: String,
    /// Registered backend names, at least two (`gdb`, `lldb`).
    pub debuggers: Vec<String>,
    /// Backend settings (timeouts, warm reuse, limits).
    pub debugger: DebuggerConfig,
    pub diff: DiffConfig,
    /// Parallel jobs, each with its own debugger processes.
    pub jobs: usize,
    /// Skip (subject, seed) runs whose key is already in the store.
    pub resume: bool,
    /// Executable per debugger name, overriding discovery (`lldb` → `/usr/bin/lldb-dap-22`).
    #[serde(default)]
    pub executables: BTreeMap<String, String>,
}

impl CampaignSpec {
    /// The backend settings for one debugger (its executable override applied).
    pub fn config_for(&self, name: &str) -> DebuggerConfig {
        let mut c = self.debugger.clone();
        if let Some(exe) = self.executables.get(name) {
            c.executable = Some(exe.clone());
        }
        c
    }
}

/// Progress reports, for the progress bar.
#[derive(Debug, Clone)]
pub enum Progress {
    /// The campaign starts `total` runs after skipping `skipped` stored ones.
    Started { total: usize, skipped: usize },
    /// One run finished and was stored.
    RunDone {
        subject: String,
        seed: u64,
        verdict: String,
        class: Option<String>,
        duration_ms: f64,
    },
    /// A run could not be stored (the campaign goes on).
    StoreError { subject: String, seed: u64, error: String },
}

/// What a campaign did.
#[derive(Debug, Clone, Default)]
pub struct CampaignStats {
    pub runs: usize,
    pub skipped: usize,
    pub divergences: usize,
    pub store_errors: usize,
}

/// The key of a run's inputs: technique, configuration fingerprint,
/// debuggers, subject hash and seed.
pub fn run_key(spec: &CampaignSpec, subject: &Subject, seed: u64) -> String {
    let mut fingerprint = serde_json::to_string(&spec.diff).unwrap_or_default();
    // What the debuggers see of the system libraries changes the traces.
    if spec.debugger.system_debug_info {
        fingerprint.push_str("|system_debug_info");
    }
    let digest = Sha256::digest(fingerprint.as_bytes());
    format!(
        "{TECHNIQUE}|{}|{}|{}|{seed}",
        &hex::encode(digest)[..12],
        spec.debuggers.join(","),
        subject.hash
    )
}

/// The configuration stored with each run: enough to replay it. For
/// JavaScript it includes the prelude and epilogue scripts
/// (`scripts.prelude` / `scripts.epilogue`: `[{name, text}]`), so a replay
/// does not depend on the cache or the corpus it came from.
pub fn run_config(spec: &CampaignSpec, prepared: &Prepared) -> serde_json::Value {
    crate::record::DiffRecord::new(spec, prepared).to_value()
}

/// The work items of a campaign: every (subject, seed) pair, subjects
/// outermost, without those `done` says are stored; and how many were skipped.
pub fn work_queue<T: Clone>(
    subjects: &[T],
    seeds: &[u64],
    done: impl Fn(&T, u64) -> bool,
) -> (VecDeque<(T, u64)>, usize) {
    let mut queue = VecDeque::new();
    let mut skipped = 0;
    for p in subjects {
        for &seed in seeds {
            if done(p, seed) {
                skipped += 1;
            } else {
                queue.push_back((p.clone(), seed));
            }
        }
    }
    (queue, skipped)
}

/// Creates one instance of each of the spec's backends.
///
/// Errors: the backend's error (unknown name, not installed).
pub fn create_debuggers(spec: &CampaignSpec) -> anyhow::Result<Vec<Box<dyn Debugger>>> {
    spec.debuggers
        .iter()
        .map(|n| registry::create(n, &spec.config_for(n)).map_err(anyhow::Error::from))
        .collect()
}

/// Runs the campaign: every prepared subject with every seed.
///
/// Errors: only when the debuggers cannot be created or the store cannot be
/// read; single runs never fail the campaign (their failures are verdicts),
/// and a run that cannot be stored is reported through `on_progress`.
pub async fn run_campaign(
    spec: &CampaignSpec,
    subjects: Vec<Arc<Prepared>>,
    seeds: &[u64],
    store: &Store,
    on_progress: &(dyn Fn(Progress) + Sync),
) -> anyhow::Result<CampaignStats> {
    let done: HashSet<String> = if spec.resume {
        store.finished_keys(TECHNIQUE).await?
    } else {
        HashSet::new()
    };
    let (queue, skipped) = work_queue(&subjects, seeds, |p, seed| {
        done.contains(&run_key(spec, &p.subject, seed))
    });
    on_progress(Progress::Started {
        total: queue.len(),
        skipped,
    });
    let jobs = spec.jobs.max(1).min(queue.len().max(1));
    // Create every job's debuggers up front so that a missing debugger is one
    // clear error before any run.
    let mut pools = Vec::new();
    for _ in 0..jobs {
        pools.push(create_debuggers(spec)?);
    }
    let queue = Mutex::new(queue);
    let stats = Mutex::new(CampaignStats {
        skipped,
        ..Default::default()
    });
    let workers = pools.into_iter().map(|mut dbg| {
        let (queue, stats) = (&queue, &stats);
        async move {
            // Each worker holds the next item too, so its debuggers can
            // prepare that run while this one goes on (Debugger::preload).
            let mut next = queue.lock().await.pop_front();
            while let Some((p, seed)) = next.take() {
                next = queue.lock().await.pop_front();
                if let Some((n, _)) = &next {
                    for d in dbg.iter_mut() {
                        d.preload(&n.subject);
                    }
                }
                let record = run_one(spec, &p, seed, &mut dbg).await;
                let class = record.verdict.finding().map(|f| f.class.to_string());
                let verdict = record.verdict.name().to_string();
                let duration_ms = record.duration_ms;
                let stored = store.insert_run(&record).await;
                let mut s = stats.lock().await;
                s.runs += 1;
                if class.is_some() {
                    s.divergences += 1;
                }
                match stored {
                    Ok(_) => on_progress(Progress::RunDone {
                        subject: p.subject.name.clone(),
                        seed,
                        verdict,
                        class,
                        duration_ms,
                    }),
                    Err(e) => {
                        s.store_errors += 1;
                        on_progress(Progress::StoreError {
                            subject: p.subject.name.clone(),
                            seed,
                            error: format!("{e:#}"),
                        })
                    }
                }
            }
            for d in dbg.iter_mut() {
                d.shutdown().await;
            }
        }
    });
    futures::future::join_all(workers).await;
    Ok(stats.into_inner())
}

/// Runs one (subject, seed) pair on the given debuggers and builds its record.
pub async fn run_one(spec: &CampaignSpec, p: &Prepared, seed: u64, dbg: &mut [Box<dyn Debugger>]) -> RunRecord {
    let started_at_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_millis() as i64;
    let infos: Vec<ToolInfo> = dbg.iter().map(|d| d.info().clone()).collect();
    let (verdict, traces, duration_ms) = match &p.error {
        Some(reason) => (Verdict::SubjectError { reason: reason.clone() }, Vec::new(), 0.0),
        None => {
            let nt = |l: Option<u32>| p.node_type(l);
            let out = engine::run(dbg, &p.subject, seed, &spec.diff, &nt).await;
            (out.verdict, out.traces, out.duration_ms)
        }
    };
    RunRecord {
        id: None,
        key: run_key(spec, &p.subject, seed),
        technique: TECHNIQUE.into(),
        campaign: spec.name.clone(),
        subject: p.subject.clone(),
        seed,
        config: run_config(spec, p),
        debuggers: infos,
        verdict,
        traces,
        duration_ms,
        started_at_ms,
    }
}
