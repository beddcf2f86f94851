//! engine262, the executable specification ("+1" of JEST's N+1): the pinned
//! npm build (`@engine262/engine262@0.0.1-d553e7b…`, notes §2) in a
//! long-lived node worker, a fresh Agent and ManagedRealm per program, a
//! node-count budget as the timeout, node's own stack overflow as
//! [`crate::Outcome::HostStackOverflow`]. [`Engine262::with_coverage`] also
//! returns each program's semantics coverage ([`crate::coverage`]).

use super::worker_file;
use crate::coverage::{Catalogue, ProgramCoverage};
use crate::features::FeatureSet;
use crate::hosted::probe_features;
use crate::registry::{EngineEntry, HostTraits};
use crate::worker::{Inspection, Worker, WorkerCommand};
use crate::{Engine, EngineError, EngineInfo, EnginesConfig, Family, RunOptions, RunResult, Script};
use async_trait::async_trait;
use std::path::PathBuf;

/// The pinned engine262 build (the `latest` npm tag is an older one).
pub const VERSION: &str = "0.0.1-d553e7b52501fbc47eae981c8d0fa7a5c26d0171";
const PACKAGE: &str = "@engine262/engine262";

/// The registry entry (without coverage).
pub fn entry() -> EngineEntry {
    EngineEntry {
        name: "engine262",
        family: Family::Engine262,
        about: "engine262 (the executable specification), npm @engine262/engine262, in node",
        traits: HostTraits::EXACT,
        probe,
        create: |cfg| Ok(Box::new(Engine262::new(cfg, false)?)),
    }
}

fn probe(cfg: &EnginesConfig) -> Result<String, EngineError> {
    super::node()?;
    let v = cfg
        .npm_version(PACKAGE)
        .map_err(|e| EngineError::NotInstalled(format!("{e}; {}", cfg.setup_hint())))?;
    if v != VERSION {
        return Err(EngineError::NotInstalled(format!(
            "engine262 {v} installed, {VERSION} pinned; {}",
            cfg.setup_hint()
        )));
    }
    Ok(v)
}

/// engine262 in a node worker.
pub struct Engine262 {
    info: EngineInfo,
    worker: Worker,
    cache: PathBuf,
    catalogue_path: Option<PathBuf>,
    features: Option<FeatureSet>,
}

impl Engine262 {
    /// engine262 without coverage (faster), or with it.
    ///
    /// Errors: node or the pinned engine262 is not installed.
    pub fn new(cfg: &EnginesConfig, coverage: bool) -> Result<Self, EngineError> {
        Self::build(cfg, coverage, None)
    }

    /// engine262 with coverage whose evaluation budget is `nodes` Evaluate()
    /// calls per program instead of the worker's default 2,000,000 (about
    /// 1.4 s without coverage on this machine kind): a deterministic, shorter
    /// timeout for a generator that must not wait seconds on every looping
    /// candidate. Errors: as [`Engine262::new`].
    pub fn with_coverage_budget(cfg: &EnginesConfig, nodes: u64) -> Result<Self, EngineError> {
        Self::build(cfg, true, Some(nodes))
    }

    fn build(cfg: &EnginesConfig, coverage: bool, budget: Option<u64>) -> Result<Self, EngineError> {
        let version = probe(cfg)?;
        let node = super::node()?;
        let catalogue_path = coverage.then(|| cfg.cache.join(format!("engine262-{version}-catalogue.json")));
        let mut args = vec![worker_file(cfg, "engine262.mjs")];
        if let Some(p) = &catalogue_path {
            args.push("--coverage".into());
            args.push(p.to_string_lossy().into_owned());
        }
        if let Some(n) = budget {
            args.push("--budget".into());
            args.push(n.to_string());
        }
        let mut cmd = WorkerCommand::new(node, &args.iter().map(String::as_str).collect::<Vec<_>>());
        cmd.env
            .push(("DOPPEL_ENGINES_DIR".into(), cfg.dir.to_string_lossy().into_owned()));
        // Deep recursion in engine262 overflows node's stack; a bigger one
        // than the default makes that rarer without changing any verdict.
        cmd.args.insert(0, "--stack-size=4000".into());
        if coverage {
            // Without TurboFan and Maglev: an inlined function's calls do not
            // count as calls in V8's coverage, so once engine262 got hot the
            // same program covered fewer algorithms (measured: 8 of 130 lost
            // after a 300k-iteration program). Costs about 1.6x per program.
            cmd.args.insert(0, "--no-opt".into());
            cmd.args.insert(1, "--no-maglev".into());
        }
        cmd.own_timeout = true;
        // The budget check runs every 4096 nodes; a single slow built-in can overshoot.
        cmd.grace = std::time::Duration::from_secs(3);
        let mode = if coverage {
            "worker: fresh Agent + ManagedRealm per program, node budget, V8 precise coverage"
        } else {
            "worker: fresh Agent + ManagedRealm per program, node budget"
        };
        Ok(Self {
            info: EngineInfo {
                name: "engine262".into(),
                family: Family::Engine262,
                version,
                mode: mode.into(),
            },
            worker: Worker::new(cmd),
            cache: cfg.cache.clone(),
            catalogue_path,
            features: None,
        })
    }

    /// engine262 with semantics coverage.
    ///
    /// Errors: as [`Engine262::new`].
    pub fn with_coverage(cfg: &EnginesConfig) -> Result<Self, EngineError> {
        Self::new(cfg, true)
    }

    /// Runs a program and returns its coverage (`None` without coverage mode
    /// or when the worker failed before measuring).
    pub async fn run_with_coverage(
        &mut self,
        script: &Script,
        opts: &RunOptions,
    ) -> (RunResult, Option<ProgramCoverage>) {
        if !script.features.is_empty() {
            let gate = match self.features().await {
                Ok(set) => {
                    let lacking = set.lacking(&script.features);
                    (!lacking.is_empty()).then_some(crate::Outcome::Unsupported { features: lacking })
                }
                Err(e) => Some(crate::Outcome::HostError { reason: e.to_string() }),
            };
            if let Some(outcome) = gate {
                let r = RunResult {
                    outcome,
                    output: String::new(),
                    output_cut: false,
                    millis: 0,
                };
                return (r, None);
            }
        }
        self.worker.run_with_coverage(&script.source, opts).await
    }

    /// Runs a program with an inspector script in the same realm (see
    /// [`crate::wire::Request::inspect`]): the run and the inspector's string
    /// result, or why there is none (`None`: the run ended before the
    /// inspector could run, e.g. a timeout or a host error). No feature gate:
    /// engine262 is the specification and supports every pinned feature.
    pub async fn run_inspected(
        &mut self,
        source: &str,
        inspect: &str,
        opts: &RunOptions,
    ) -> (RunResult, Option<Inspection>) {
        let (result, _, inspection) = self.worker.run_inspected(source, Some(inspect), opts).await;
        (result, inspection)
    }

    /// Runs a program with the host clock shifted by `skew_ms` milliseconds
    /// (ECMA-262 21.4.1.2 HostSystemUTCEpochNanoseconds; what `Date.now()`,
    /// `new Date()` and `Date()` read): a program whose result changes with
    /// it depends on the clock. No feature gate, no coverage.
    pub async fn run_with_clock_skew(&mut self, source: &str, opts: &RunOptions, skew_ms: i64) -> RunResult {
        self.worker.set_clock_skew(Some(skew_ms));
        let (result, _, _) = self.worker.run_inspected(source, None, opts).await;
        self.worker.set_clock_skew(None);
        result
    }

    /// The catalogue of algorithms and steps (built by the worker on its first
    /// start in coverage mode, then cached). Errors: not in coverage mode, or
    /// the worker could not build it.
    pub async fn catalogue(&mut self) -> Result<Catalogue, String> {
        let Some(path) = self.catalogue_path.clone() else {
            return Err("engine262 runs without coverage".into());
        };
        if self.worker.starts == 0 {
            // The worker checks (and if stale, rebuilds) the catalogue before its hello line.
            let r = self.worker.run("void 0;", &RunOptions::default()).await;
            if r.outcome != crate::Outcome::Normal {
                return Err(format!("engine262 worker: {}", r.outcome.label()));
            }
        }
        Catalogue::load(&path)
    }
}

#[async_trait]
impl Engine for Engine262 {
    fn info(&self) -> &EngineInfo {
        &self.info
    }

    async fn run_unchecked(&mut self, source: &str, opts: &RunOptions) -> RunResult {
        self.worker.run(source, opts).await
    }

    async fn features(&mut self) -> Result<FeatureSet, EngineError> {
        if let Some(f) = &self.features {
            return Ok(f.clone());
        }
        let cache = self.cache.clone();
        let set = probe_features(self, &cache).await?;
        self.features = Some(set.clone());
        Ok(set)
    }

    async fn shutdown(&mut self) {
        self.worker.stop();
    }
}
