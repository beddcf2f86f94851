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
use doppel_core::campaign::{self, CampaignStats, Item, ItemError, Job, Options, Progress, Sink, Technique};
use doppel_core::store::Store;
use doppel_core::{RunRecord, ToolInfo, Verdict};
use doppel_debuggers::control::ControlCache;
use doppel_debuggers::{Debugger, DebuggerConfig, registry};
use doppel_lang::prepare::Prepared;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

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
    /// The knobs of the technique (`[meta]` in `doppel.toml`: rounds,
    /// transformations, ...).
    pub meta: MetaConfig,
    /// Parallel jobs, each with its own debugger.
    pub jobs: usize,
    /// Skip sequences whose last test is stored (kept for stored specs; the
    /// runner's `Options::resume` decides).
    pub resume: bool,
    /// The debugger as probed at the start (executable and version): part
    /// of every key. `None` when not probed (the configured executable
    /// stands in).
    #[serde(default)]
    pub tool: Option<ToolInfo>,
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

/// The key of a sequence: technique, campaign, configuration fingerprint,
/// debugger, its executable and version, program hash, seed.
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
    let tool = match &spec.tool {
        Some(t) => doppel_core::campaign::tools_fingerprint(std::slice::from_ref(t), ""),
        None => doppel_core::campaign::tools_fingerprint(&[], spec.debugger_config.executable.as_deref().unwrap_or("")),
    };
    format!(
        "{TECHNIQUE}|{}|{}|{}|{tool}|{program_hash}|{seed}",
        spec.name,
        &digest[..12],
        spec.debugger
    )
}

/// The sequence a stored test's key belongs to (`<sequence>|r<round>|last`),
/// if the test ended its sequence.
pub fn finished_sequence(test_key: &str) -> Option<String> {
    test_key
        .strip_suffix("|last")
        .and_then(|k| k.rsplit_once('|'))
        .map(|(s, _)| s.to_string())
}

/// Probes the debugger of `spec` (executable and version, without starting
/// a session) into [`MetaSpec::tool`].
///
/// Errors: an unknown or missing debugger.
pub fn probe_tool(spec: &mut MetaSpec) -> anyhow::Result<()> {
    let entries = registry::all();
    let e = entries
        .iter()
        .find(|e| e.name == spec.debugger)
        .ok_or_else(|| anyhow::anyhow!("unknown debugger '{}' (see `doppel backends`)", spec.debugger))?;
    spec.tool = Some((e.probe)(&spec.debugger_config)?);
    Ok(())
}

/// The key of test `round` of a sequence (`|last` when it ends the sequence).
pub fn test_key(sequence: &str, round: usize, last: bool) -> String {
    if last {
        format!("{sequence}|r{round}|last")
    } else {
        format!("{sequence}|r{round}")
    }
}

/// The campaign's work items: one sequence per (program, seed), programs
/// outermost (the deterministic order `--partition` splits).
pub fn items(spec: &MetaSpec, subjects: &[Arc<Prepared>], seeds: &[u64]) -> Vec<Item<Arc<Prepared>>> {
    subjects
        .iter()
        .flat_map(|p| {
            seeds.iter().map(move |&seed| Item {
                key: sequence_key(spec, &p.subject.hash, seed),
                subject: p.subject.name.clone(),
                seed,
                input: p.clone(),
            })
        })
        .collect()
}

/// Metamorphic testing as the core runner sees it: each job has its own
/// debugger under test.
pub struct Metamorphic<'a> {
    /// The campaign.
    pub spec: &'a MetaSpec,
    /// Builds follow-up programs.
    pub builder: &'a Builder,
    /// The campaign's control runs, shared by its jobs ([`crate::control`]).
    pub controls: &'a ControlCache,
}

/// One job: its debugger.
pub struct MetaJob<'a> {
    spec: &'a MetaSpec,
    builder: &'a Builder,
    controls: &'a ControlCache,
    debugger: Box<dyn Debugger>,
}

impl<'a> Technique for Metamorphic<'a> {
    type Input = Arc<Prepared>;
    type Job = MetaJob<'a>;

    fn name(&self) -> &str {
        TECHNIQUE
    }

    fn finished_item(&self, run_key: &str) -> Option<String> {
        finished_sequence(run_key)
    }

    async fn setup(&self, _index: usize) -> anyhow::Result<MetaJob<'a>> {
        Ok(MetaJob {
            spec: self.spec,
            builder: self.builder,
            controls: self.controls,
            debugger: registry::create(&self.spec.debugger, &debugger_config(&self.spec.debugger_config))?,
        })
    }
}

impl Job for MetaJob<'_> {
    type Input = Arc<Prepared>;

    async fn run(&mut self, item: &Item<Arc<Prepared>>, sink: &Sink<'_>) -> Result<(), ItemError> {
        run_sequence(
            self.spec,
            &item.input,
            item.seed,
            &mut self.debugger,
            self.builder,
            self.controls,
            sink,
        )
        .await;
        Ok(())
    }

    async fn shutdown(mut self) {
        self.debugger.shutdown().await;
    }
}

/// Runs the campaign: a sequence per (program, seed), as `options` say.
///
/// Errors: only when the debugger cannot be created or the store cannot be
/// read; single tests never fail the campaign.
pub async fn run_campaign(
    spec: &MetaSpec,
    subjects: Vec<Arc<Prepared>>,
    seeds: &[u64],
    store: &Store,
    builder: &Builder,
    options: &Options,
    on_progress: &(dyn Fn(Progress<'_>) + Sync),
) -> anyhow::Result<CampaignStats> {
    let items = items(spec, &subjects, seeds);
    let controls = ControlCache::default();
    let technique = Metamorphic {
        spec,
        builder,
        controls: &controls,
    };
    campaign::run(&technique, &items, store, options, on_progress).await
}

async fn run_sequence(
    spec: &MetaSpec,
    p: &Prepared,
    seed: u64,
    dbg: &mut Box<dyn Debugger>,
    builder: &Builder,
    controls: &ControlCache,
    sink: &Sink<'_>,
) {
    let key = sequence_key(spec, &p.subject.hash, seed);
    let program = Program::new(p.subject.clone(), p.source_text.clone());
    if let Some(reason) = &p.error {
        let test = TestRecord {
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
        sink.store(record(spec, &key, seed, &test)).await;
        return;
    }
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut emit = move |r: TestRecord| {
        let _ = tx.send(r);
    };
    let writer = async {
        while let Some(r) = rx.recv().await {
            sink.store(record(spec, &key, seed, &r)).await;
        }
    };
    let runner = async {
        sequence::run(dbg, program, seed, &spec.meta, builder, controls, &mut emit).await;
        drop(emit);
    };
    tokio::join!(runner, writer);
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
        reduced: None,
        reduced_follow_up: None,
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
            tool: None,
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
