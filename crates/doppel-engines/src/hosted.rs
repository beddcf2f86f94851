//! The [`Engine`] implementation the registry's engines share: a long-lived
//! [`Worker`] or a [`OneShotCommand`] per script, plus the cached feature probe.

use crate::features::{self, FeatureSet};
use crate::oneshot::{self, OneShotCommand};
use crate::worker::{Worker, WorkerCommand};
use crate::{Engine, EngineError, EngineInfo, Outcome, RunOptions, RunResult};
use async_trait::async_trait;
use std::path::PathBuf;
use std::time::Duration;

/// How an engine runs scripts.
pub enum Launch {
    /// A long-lived worker process, a fresh realm per script.
    Worker(WorkerCommand),
    /// One process per script.
    OneShot(OneShotCommand),
}

/// An engine run through a worker or a shell, with its feature set cached
/// under the configuration's cache directory.
pub struct HostedEngine {
    info: EngineInfo,
    launch: Launch,
    worker: Option<Worker>,
    cache: PathBuf,
    features: Option<FeatureSet>,
}

/// Limits for the feature probe run.
const PROBE: RunOptions = RunOptions {
    timeout: Duration::from_secs(60),
    output_cap: 64 * 1024,
};

impl HostedEngine {
    /// An engine described by `info`, run by `launch`, caching features in `cache`.
    pub fn new(info: EngineInfo, launch: Launch, cache: PathBuf) -> Self {
        let worker = match &launch {
            Launch::Worker(cmd) => Some(Worker::new(cmd.clone())),
            Launch::OneShot(_) => None,
        };
        Self {
            info,
            launch,
            worker,
            cache,
            features: None,
        }
    }

    /// Worker processes started so far (0 for one-shot engines).
    pub fn worker_starts(&self) -> u64 {
        self.worker.as_ref().map_or(0, |w| w.starts)
    }
}

/// Loads `engine`'s feature set from the cache, or runs the probe through it
/// and stores the result. Shared with engine262's host.
pub async fn probe_features(engine: &mut dyn Engine, cache: &std::path::Path) -> Result<FeatureSet, EngineError> {
    let (name, version) = (engine.info().name.clone(), engine.info().version.clone());
    if let Some(set) = features::load_cached(cache, &name, &version) {
        return Ok(set);
    }
    let r = engine.run_unchecked(&features::probe_script(), &PROBE).await;
    if r.outcome != Outcome::Normal {
        return Err(EngineError::Probe(format!(
            "{name}: the probe ended with {}",
            r.outcome.label()
        )));
    }
    let set = FeatureSet::from_output(&name, &version, &r.output).map_err(EngineError::Probe)?;
    features::store(cache, &set);
    Ok(set)
}

#[async_trait]
impl Engine for HostedEngine {
    fn info(&self) -> &EngineInfo {
        &self.info
    }

    async fn run_unchecked(&mut self, source: &str, opts: &RunOptions) -> RunResult {
        match (&self.launch, self.worker.as_mut()) {
            (Launch::Worker(_), Some(w)) => w.run(source, opts).await,
            (Launch::OneShot(cmd), _) => oneshot::run(cmd, source, opts).await,
            (Launch::Worker(_), None) => unreachable!("a worker engine has a worker"),
        }
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
        if let Some(w) = self.worker.as_mut() {
            w.stop();
        }
    }
}
