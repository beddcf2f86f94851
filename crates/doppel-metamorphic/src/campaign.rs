//! A metamorphic campaign: every program with every seed, one sequence each
//! (ISSTA'19 section 3.3), over a pool of jobs with one debugger each.
//! Every metamorphic test is stored as a run (technique `metamorphic`) the
//! moment it is done: traces `[initial, follow-up]`, the transformation,
//! both programs' text in the configuration, so that `doppel show`,
//! `replay` and `repro` need nothing else.
//!
//! Keys: `metamorphic|<config fingerprint>|<debugger>|<program hash>|<seed>|r<round>`,
//! with `|last` on the test that ends its sequence; `--resume` skips the
//! sequences whose last test is stored.

use crate::config::MetaConfig;
use crate::program::{Builder, Program};
use crate::sequence::{self, TestRecord};
use doppel_core::store::Store;
use doppel_core::{RunRecord, Verdict};
use doppel_debuggers::{Debugger, DebuggerConfig, registry};
use doppel_lang::prepare::Prepared;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};
use tokio::sync::Mutex;

/// The technique name in the store.
pub const TECHNIQUE: &str = "metamorphic";

/// Everything a campaign needs besides its inputs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MetaSpec {
    /// Free-text campaign name stored with every test.
    pub name: String,
    /// The registered backend under test (`gdb`, `lldb`, `node`, ...).
    pub debugger: String,
    /// Backend settings (timeouts, warm reuse, limits, executable).
    pub debugger_config: DebuggerConfig,
    pub meta: MetaConfig,
    /// Parallel jobs, each with its own debugger.
    pub jobs: usize,
    /// Skip sequences whose last test is stored.
    pub resume: bool,
}

/// Progress reports, for the progress bar.
#[derive(Debug, Clone)]
pub enum MetaProgress {
    /// `total` sequences to run after skipping `skipped` stored ones.
    Started { total: usize, skipped: usize },
    /// One metamorphic test was stored.
    TestDone {
        subject: String,
        seed: u64,
        round: usize,
        verdict: String,
        class: Option<String>,
    },
    /// A sequence ended.
    SequenceDone { subject: String, seed: u64 },
    /// A test could not be stored (the campaign goes on).
    StoreError { subject: String, seed: u64, error: String },
}

/// What a campaign did.
#[derive(Debug, Clone, Default)]
pub struct MetaStats {
    pub sequences: usize,
    pub skipped: usize,
    pub tests: usize,
    pub warnings: usize,
    pub inconclusive: usize,
    pub store_errors: usize,
}

/// The backend settings of every run metamorphic testing drives (initial
/// runs, control runs, follow-up runs, replays, `doppel bench meta`): `base`
/// with [`DebuggerConfig::absorb_breakpoint_restop`] on. The initial and the
/// follow-up run are both of the one debugger under test, so LLDB's re-stop
/// at a breakpoint a step ended on (intended since LLDB 20) can appear in
/// one and not in the other (a replaced continue, an added breakpoint):
/// absorbed in the backend, it is not reported at all, in either run
/// (docs/metamorphic.md, "Policies"). The differential mode leaves it off
/// and reports the policy.
pub fn debugger_config(base: &DebuggerConfig) -> DebuggerConfig {
    DebuggerConfig {
        absorb_breakpoint_restop: true,
        ..base.clone()
    }
}

/// The key of a sequence: technique, configuration fingerprint, debugger,
/// program hash, seed.
pub fn sequence_key(spec: &MetaSpec, program_hash: &str, seed: u64) -> String {
    let mut fingerprint = serde_json::to_string(&spec.meta).unwrap_or_default();
    if spec.debugger_config.system_debug_info {
        fingerprint.push_str("|system_debug_info");
    }
    // Only the lldb backend honours it: other campaigns keep their keys
    // (and `--resume` its stored sequences).
    if spec.debugger_config.absorb_breakpoint_restop && spec.debugger == "lldb" {
        fingerprint.push_str("|absorb_breakpoint_restop");
    }
    let digest = hex::encode(Sha256::digest(fingerprint.as_bytes()));
    format!("{TECHNIQUE}|{}|{}|{program_hash}|{seed}", &digest[..12], spec.debugger)
}

/// The key of test `round` of a sequence (`|last` when it ends the sequence).
pub fn test_key(sequence: &str, round: usize, last: bool) -> String {
    if last {
        format!("{sequence}|r{round}|last")
    } else {
        format!("{sequence}|r{round}")
    }
}

/// Runs the campaign.
///
/// Errors: only when the debugger cannot be created or the store cannot be
/// read; single tests never fail the campaign.
pub async fn run_campaign(
    spec: &MetaSpec,
    subjects: Vec<Arc<Prepared>>,
    seeds: &[u64],
    store: &Store,
    builder: &Builder,
    on_progress: &(dyn Fn(MetaProgress) + Sync),
) -> anyhow::Result<MetaStats> {
    let done: HashSet<String> = if spec.resume {
        store
            .finished_keys(TECHNIQUE)
            .await?
            .into_iter()
            .filter_map(|k| {
                k.strip_suffix("|last")
                    .and_then(|k| k.rsplit_once('|'))
                    .map(|(s, _)| s.to_string())
            })
            .collect()
    } else {
        HashSet::new()
    };
    let (queue, skipped) = doppel_differential::campaign::work_queue(&subjects, seeds, |p, seed| {
        done.contains(&sequence_key(spec, &p.subject.hash, seed))
    });
    on_progress(MetaProgress::Started {
        total: queue.len(),
        skipped,
    });
    let jobs = spec.jobs.max(1).min(queue.len().max(1));
    let mut pool = Vec::new();
    for _ in 0..jobs {
        pool.push(registry::create(
            &spec.debugger,
            &debugger_config(&spec.debugger_config),
        )?);
    }
    let queue = Mutex::new(queue);
    let stats = Mutex::new(MetaStats {
        skipped,
        ..Default::default()
    });
    let workers = pool.into_iter().map(|mut dbg| {
        let (queue, stats) = (&queue, &stats);
        async move {
            loop {
                let Some((p, seed)) = queue.lock().await.pop_front() else {
                    break;
                };
                run_sequence(spec, &p, seed, &mut dbg, store, builder, stats, on_progress).await;
                stats.lock().await.sequences += 1;
                on_progress(MetaProgress::SequenceDone {
                    subject: p.subject.name.clone(),
                    seed,
                });
            }
            dbg.shutdown().await;
        }
    });
    futures::future::join_all(workers).await;
    Ok(stats.into_inner())
}

#[allow(clippy::too_many_arguments)]
async fn run_sequence(
    spec: &MetaSpec,
    p: &Prepared,
    seed: u64,
    dbg: &mut Box<dyn Debugger>,
    store: &Store,
    builder: &Builder,
    stats: &Mutex<MetaStats>,
    on_progress: &(dyn Fn(MetaProgress) + Sync),
) {
    let key = sequence_key(spec, &p.subject.hash, seed);
    let program = Program::new(p.subject.clone(), p.source_text.clone());
    if let Some(reason) = &p.error {
        let record = TestRecord {
            round: 1,
            chain: vec![],
            applied: None,
            skipped: vec![],
            initial: program.clone(),
            initial_trace: doppel_core::Trace {
                debugger: dbg.info().clone(),
                events: vec![],
            },
            follow_up: program,
            follow_up_trace: None,
            verdict: Verdict::SubjectError { reason: reason.clone() },
            duration_ms: 0.0,
            last: true,
        };
        store_test(spec, &key, seed, record, store, stats, on_progress).await;
        return;
    }
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut emit = move |r: TestRecord| {
        let _ = tx.send(r);
    };
    let writer = async {
        while let Some(r) = rx.recv().await {
            store_test(spec, &key, seed, r, store, stats, on_progress).await;
        }
    };
    let runner = async {
        sequence::run(dbg, program, seed, &spec.meta, builder, &mut emit).await;
        drop(emit);
    };
    tokio::join!(runner, writer);
}

async fn store_test(
    spec: &MetaSpec,
    sequence: &str,
    seed: u64,
    t: TestRecord,
    store: &Store,
    stats: &Mutex<MetaStats>,
    on_progress: &(dyn Fn(MetaProgress) + Sync),
) {
    let record = record(spec, sequence, seed, &t);
    let class = record.verdict.finding().map(|f| f.class.to_string());
    let verdict = record.verdict.name().to_string();
    let stored = store.insert_run(&record).await;
    let mut s = stats.lock().await;
    s.tests += 1;
    if class.is_some() {
        s.warnings += 1;
    }
    if matches!(record.verdict, Verdict::Inconclusive { .. }) {
        s.inconclusive += 1;
    }
    let subject = t.initial.subject.name.clone();
    match stored {
        Ok(_) => on_progress(MetaProgress::TestDone {
            subject,
            seed,
            round: t.round,
            verdict,
            class,
        }),
        Err(e) => {
            s.store_errors += 1;
            on_progress(MetaProgress::StoreError {
                subject,
                seed,
                error: format!("{e:#}"),
            });
        }
    }
}

/// The stored form of one metamorphic test. `config` holds: `meta`,
/// `debugger`, `debugger_name`, `round`, `chain`, `transformation`
/// (`{transformation, description, node}`), `skipped`, `source_text` (the
/// initial program), `follow_up` (`{subject, source_text}`), and for
/// JavaScript `scripts` (prelude and epilogue).
pub fn record(spec: &MetaSpec, sequence: &str, seed: u64, t: &TestRecord) -> RunRecord {
    let started_at_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    let s = &t.initial.subject;
    let scripts = doppel_debuggers::record::StoredScripts::read(&s.prelude, &s.epilogue);
    let config = crate::record::MetaRecord {
        meta: spec.meta.clone(),
        debugger_name: spec.debugger.clone(),
        round: t.round,
        chain: t.chain.clone(),
        transformation: t.applied.clone(),
        skipped: t
            .skipped
            .iter()
            .map(|(k, r)| crate::record::Skipped {
                transformation: *k,
                reason: r.clone(),
            })
            .collect(),
        follow_up: crate::record::FollowUpProgram {
            subject: t.follow_up.subject.clone(),
            source_text: t.follow_up.text.clone(),
        },
        input: doppel_debuggers::record::DebuggerInput {
            source_text: t.initial.text.clone(),
            scripts: (!scripts.is_empty()).then_some(scripts),
            debugger: debugger_config(&spec.debugger_config),
        },
    }
    .to_value();
    let mut traces = vec![t.initial_trace.clone()];
    traces.extend(t.follow_up_trace.clone());
    RunRecord {
        id: None,
        key: test_key(sequence, t.round, t.last),
        technique: TECHNIQUE.into(),
        campaign: spec.name.clone(),
        subject: s.clone(),
        seed,
        config,
        debuggers: traces.iter().map(|tr| tr.debugger.clone()).collect(),
        verdict: t.verdict.clone(),
        traces,
        duration_ms: t.duration_ms,
        started_at_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(debugger: &str, absorb: bool) -> MetaSpec {
        MetaSpec {
            name: "t".into(),
            debugger: debugger.into(),
            debugger_config: DebuggerConfig {
                absorb_breakpoint_restop: absorb,
                ..DebuggerConfig::default()
            },
            meta: MetaConfig::default(),
            jobs: 1,
            resume: false,
        }
    }

    #[test]
    fn metamorphic_runs_absorb_lldbs_restop_and_their_keys_say_so_for_lldb_only() {
        let base = DebuggerConfig::default();
        assert!(!base.absorb_breakpoint_restop, "off by default (differential mode)");
        let cfg = debugger_config(&base);
        assert!(cfg.absorb_breakpoint_restop);
        assert_eq!(cfg.action_timeout, base.action_timeout);
        assert_ne!(
            sequence_key(&spec("lldb", true), "h", 1),
            sequence_key(&spec("lldb", false), "h", 1)
        );
        assert_eq!(
            sequence_key(&spec("gdb", true), "h", 1),
            sequence_key(&spec("gdb", false), "h", 1)
        );
    }
}
