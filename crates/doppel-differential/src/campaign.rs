//! A differential campaign: many (subject, seed) runs over a pool of jobs,
//! each job with its own warm debuggers, every finished run written to the
//! store at once, with a record of its own for every finding the run went
//! on past ([`crate::going_on::finding_records`]) (an interrupted campaign loses no finished run, and
//! `resume` skips the runs already stored).

use crate::config::DiffConfig;
use crate::control::{self, ControlCache};
use crate::engine;
use doppel_core::campaign::{self, CampaignStats, Item, ItemError, Job, Options, Progress, Sink, Technique};
use doppel_core::store::Store;
use doppel_core::{RunRecord, Subject, ToolInfo, Verdict};
use doppel_debuggers::{Debugger, DebuggerConfig, registry};
pub use doppel_lang::prepare::Prepared;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

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
    /// The knobs of Algorithm 1 (`[diff]` in `doppel.toml`).
    pub diff: DiffConfig,
    /// Parallel jobs, each with its own debugger processes.
    pub jobs: usize,
    /// Skip (subject, seed) runs whose key is already in the store (kept for
    /// stored specs; the runner's [`Options::resume`] decides).
    pub resume: bool,
    /// Executable per debugger name, overriding discovery (`lldb` → `/usr/bin/lldb-dap-22`).
    #[serde(default)]
    pub executables: BTreeMap<String, String>,
    /// The debuggers as probed at the start (executable and version), in
    /// `debuggers` order: part of every run key. Empty when not probed
    /// (the executables overrides stand in).
    #[serde(default)]
    pub tools: Vec<ToolInfo>,
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

/// The key of a run's inputs: technique, campaign, configuration
/// fingerprint, debuggers, their executables and versions, subject hash
/// and seed. Two campaigns (another name, another gdb) never share a key,
/// so one never replaces the other's runs.
pub fn run_key(spec: &CampaignSpec, subject: &Subject, seed: u64) -> String {
    let mut fingerprint = serde_json::to_string(&spec.diff).unwrap_or_default();
    // What the debuggers see of the system libraries changes the traces.
    if spec.debugger.system_debug_info {
        fingerprint.push_str("|system_debug_info");
    }
    let digest = Sha256::digest(fingerprint.as_bytes());
    format!(
        "{TECHNIQUE}|{}|{}|{}|{}|{}|{seed}",
        spec.name,
        &hex::encode(digest)[..12],
        spec.debuggers.join(","),
        tools_id(spec),
        subject.hash
    )
}

/// The identity of the debuggers: their probed executables and versions,
/// else the executable overrides.
fn tools_id(spec: &CampaignSpec) -> String {
    if spec.tools.is_empty() {
        let overrides = serde_json::to_string(&spec.executables).unwrap_or_default();
        campaign::tools_fingerprint(&[], &overrides)
    } else {
        campaign::tools_fingerprint(&spec.tools, "")
    }
}

/// Probes every debugger of `spec` (executable and version, without
/// starting a session) into [`CampaignSpec::tools`].
///
/// Errors: an unknown or missing debugger.
pub fn probe_tools(spec: &mut CampaignSpec) -> anyhow::Result<()> {
    let entries = registry::all();
    let mut tools = Vec::new();
    for name in &spec.debuggers {
        let e = entries
            .iter()
            .find(|e| e.name == name)
            .ok_or_else(|| anyhow::anyhow!("unknown debugger '{name}' (see `doppel backends`)"))?;
        tools.push((e.probe)(&spec.config_for(name))?);
    }
    spec.tools = tools;
    Ok(())
}

/// The configuration stored with each run: enough to replay it. For
/// JavaScript it includes the prelude and epilogue scripts
/// (`scripts.prelude` / `scripts.epilogue`: `[{name, text}]`), so a replay
/// does not depend on the cache or the corpus it came from.
pub fn run_config(spec: &CampaignSpec, prepared: &Prepared) -> serde_json::Value {
    crate::record::DiffRecord::new(spec, prepared).to_value()
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

/// The campaign's work items: every (subject, seed) pair, subjects
/// outermost (the deterministic order `--partition` splits).
pub fn items(spec: &CampaignSpec, subjects: &[Arc<Prepared>], seeds: &[u64]) -> Vec<Item<Arc<Prepared>>> {
    subjects
        .iter()
        .flat_map(|p| {
            seeds.iter().map(move |&seed| Item {
                key: run_key(spec, &p.subject, seed),
                subject: p.subject.name.clone(),
                seed,
                input: p.clone(),
            })
        })
        .collect()
}

/// Differential testing as the core runner sees it: each job has its own
/// warm instance of every debugger.
pub struct Differential<'a> {
    /// The campaign.
    pub spec: &'a CampaignSpec,
    /// The campaign's control runs, shared by its jobs.
    pub controls: &'a ControlCache,
}

/// One job: its debuggers, in the spec's order.
pub struct DiffJob<'a> {
    spec: &'a CampaignSpec,
    controls: &'a ControlCache,
    debuggers: Vec<Box<dyn Debugger>>,
}

impl<'a> Technique for Differential<'a> {
    type Input = Arc<Prepared>;
    type Job = DiffJob<'a>;

    fn name(&self) -> &str {
        TECHNIQUE
    }

    async fn setup(&self, _index: usize) -> anyhow::Result<DiffJob<'a>> {
        Ok(DiffJob {
            spec: self.spec,
            controls: self.controls,
            debuggers: create_debuggers(self.spec)?,
        })
    }
}

impl Job for DiffJob<'_> {
    type Input = Arc<Prepared>;

    fn preload(&mut self, next: &Item<Arc<Prepared>>) {
        for d in self.debuggers.iter_mut() {
            d.preload(&next.input.subject);
        }
    }

    async fn run(&mut self, item: &Item<Arc<Prepared>>, sink: &Sink<'_>) -> Result<(), ItemError> {
        let record = run_one_with(self.spec, &item.input, item.seed, &mut self.debuggers, self.controls).await;
        // The findings the run went on past, each a record of its own,
        // stored before the run's record: `--resume` skips an item whose
        // run is stored, so a campaign killed in between reruns the item
        // (its finding records are stored again under the same keys)
        // instead of losing them.
        for r in crate::going_on::finding_records(&record) {
            sink.store(r).await;
        }
        sink.store(record).await;
        Ok(())
    }

    async fn shutdown(mut self) {
        for d in self.debuggers.iter_mut() {
            d.shutdown().await;
        }
    }
}

/// Runs the campaign: every prepared subject with every seed, as `options`
/// say (jobs, resume, deadline, partition or claim).
///
/// Errors: the debuggers cannot be created or the store cannot be read;
/// single runs never fail the campaign (their failures are verdicts), and
/// runs not stored and environment failures are in the stats.
pub async fn run_campaign(
    spec: &CampaignSpec,
    subjects: Vec<Arc<Prepared>>,
    seeds: &[u64],
    store: &Store,
    options: &Options,
    on_progress: &(dyn Fn(Progress<'_>) + Sync),
) -> anyhow::Result<CampaignStats> {
    let items = items(spec, &subjects, seeds);
    let controls = ControlCache::default();
    campaign::run(
        &Differential {
            spec,
            controls: &controls,
        },
        &items,
        store,
        options,
        on_progress,
    )
    .await
}

/// Runs one (subject, seed) pair on the given debuggers and builds its
/// record; with `spec.diff.control_run`, its control run is run afresh.
pub async fn run_one(spec: &CampaignSpec, p: &Prepared, seed: u64, dbg: &mut [Box<dyn Debugger>]) -> RunRecord {
    run_one_with(spec, p, seed, dbg, &ControlCache::default()).await
}

/// The key of a program's control run in a campaign: the tools and the
/// program (its hash), not the seed.
pub fn control_key(spec: &CampaignSpec, subject: &Subject) -> String {
    format!("{}|{}|{}", spec.debuggers.join(","), tools_id(spec), subject.hash)
}

/// [`run_one`] with the campaign's control results: with
/// `spec.diff.control_run`, the program's control run is taken from
/// `controls` (run on `dbg` the first time), and a program that ends
/// differently in the tools is recorded as [`Verdict::NotComparable`]
/// without a run.
pub async fn run_one_with(
    spec: &CampaignSpec,
    p: &Prepared,
    seed: u64,
    dbg: &mut [Box<dyn Debugger>],
    controls: &ControlCache,
) -> RunRecord {
    let started_at_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_millis() as i64;
    let infos: Vec<ToolInfo> = dbg.iter().map(|d| d.info().clone()).collect();
    let (verdict, traces, duration_ms) = match &p.error {
        Some(reason) => (Verdict::SubjectError { reason: reason.clone() }, Vec::new(), 0.0),
        None if spec.diff.control_run
            && let Some(v) = control::verdict(
                &controls.get(&control_key(spec, &p.subject), dbg, &p.subject).await,
                &p.subject,
            ) =>
        {
            (v, Vec::new(), 0.0)
        }
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
