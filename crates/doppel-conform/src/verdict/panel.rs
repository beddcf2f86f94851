//! The panel: the N engines (every installed engine of the
//! `doppel-engines` registry, or those named) plus engine262 (the "+1"),
//! running one test on all of them at once and voting ([`super::vote`]).
//!
//! An engine that is not installed is left out with its reason
//! ([`Panel::missing`]); engine262 is required (without it there is no
//! expectation for generated programs and no coverage). Each engine keeps
//! its own long-lived worker; the panel runs a test on all of them
//! concurrently (they are separate processes), so a test's wall time is the
//! slowest engine's.
//!
//! Transpilers (`Family::is_transpiler`: Babel, SWC, esbuild, TypeScript,
//! each running its output on node's V8) are panel members like engines, on
//! by default when installed; they vote apart ([`super::Vote::transpilers`]).

use super::{EngineResult, EngineVerdict, Expected, Vote, judge, vote};
use doppel_engines::coverage::{Catalogue, ProgramCoverage};
use doppel_engines::engine::engine262::Engine262;
use doppel_engines::registry::{self, HostTraits};
use doppel_engines::{Engine, EngineInfo, EnginesConfig, Family, Outcome, RunOptions, RunResult, Script};
use serde::{Deserialize, Serialize};

/// One test as the panel runs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConformTest {
    /// Its name: a path relative to the suite root, or a generated id.
    pub name: String,
    /// The test as a file (test262 format, or a plain program), for
    /// reproducers and reports.
    pub text: String,
    /// What the engines run: harness files, then the test (with a
    /// `"use strict";` directive for `onlyStrict` tests), and its features.
    pub script: Script,
    /// What the test expects; `None`: what engine262 does.
    pub expected: Option<Expected>,
}

/// The panel's configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PanelConfig {
    /// Engine names (registry names, not engine262); empty: every installed engine.
    pub engines: Vec<String>,
    /// Whether engine262 measures semantics coverage (needed for
    /// localization and the known-vs-new check; about 1.6x slower).
    pub coverage: bool,
    /// Limits of one engine run.
    pub run: RunOptions,
    /// Limits of one engine262 run (slower: an interpreter of the spec in node).
    pub spec_run: RunOptions,
    /// Whether localization sees a test's own coverage: engine262's coverage
    /// of the test minus that of its prelude alone (the test262 harness
    /// files, or nothing for a plain program: the host's realm plumbing),
    /// measured once per prelude and engine262 version ([`TestRun::own_coverage`]).
    /// Off: SBFL ranks the harness's algorithms, which every test runs.
    #[serde(default = "yes")]
    pub subtract_harness: bool,
}

fn yes() -> bool {
    true
}

impl Default for PanelConfig {
    fn default() -> Self {
        Self {
            engines: Vec::new(),
            coverage: true,
            run: RunOptions {
                timeout: std::time::Duration::from_secs(10),
                output_cap: 16 * 1024,
            },
            spec_run: RunOptions {
                timeout: std::time::Duration::from_secs(30),
                output_cap: 16 * 1024,
            },
            subtract_harness: true,
        }
    }
}

/// An engine left out, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Missing {
    /// Registry name.
    pub engine: String,
    /// Why it is not in the panel (not installed: what is missing).
    pub reason: String,
}

/// A panel engine as stored with results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Member {
    /// Name, family, version and mode.
    pub info: EngineInfo,
    /// What its host can observe.
    pub traits: HostTraits,
}

/// One test's run on the panel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestRun {
    /// engine262's result; its verdict is against the test's own
    /// expectation, or `pass` when the expectation is engine262's.
    pub spec: EngineResult,
    /// The expectation the engines were judged against (`None`: engine262
    /// gave none, so no engine was judged).
    pub expected: Option<Expected>,
    /// The engines' results, in panel order.
    pub results: Vec<EngineResult>,
    /// engine262's semantics coverage of the test, with coverage on.
    pub coverage: Option<ProgramCoverage>,
    /// The test's own coverage: [`TestRun::coverage`] minus its prelude's
    /// (see [`PanelConfig::subtract_harness`]); what localization ranks.
    /// `None`: coverage or subtraction off, or the prelude's baseline could
    /// not be measured ([`TestRun::baseline_error`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_coverage: Option<ProgramCoverage>,
    /// Why the prelude's baseline coverage could not be measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_error: Option<String>,
    /// The families' votes.
    pub vote: Vote,
}

/// Why a panel cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum PanelError {
    /// A named engine is not registered.
    #[error(transparent)]
    Engine(#[from] doppel_engines::EngineError),
    /// engine262 (the executable specification) is not installed.
    #[error("engine262 (the executable specification) is required: {0}")]
    NoSpec(String),
    /// No engine is installed (or none of those named).
    #[error("no engine to test: {0}")]
    NoEngines(String),
}

struct Slot {
    member: Member,
    engine: Box<dyn Engine>,
    /// Whether its feature probe finds it ES5-level
    /// ([`super::EngineResult::legacy`]); read once, on its first verdict.
    legacy: Option<bool>,
}

impl Slot {
    /// Whether the engine is ES5-level. A probe that fails counts as modern:
    /// the engine then votes as it always did.
    async fn legacy(&mut self) -> bool {
        if let Some(l) = self.legacy {
            return l;
        }
        let l = match self.engine.features().await {
            Ok(set) => set.level().is_none(),
            Err(e) => {
                tracing::warn!(
                    "{}: no feature level ({e}); it votes as a modern engine",
                    self.member.info.name
                );
                false
            }
        };
        self.legacy = Some(l);
        l
    }
}

/// The engines and engine262, warm.
pub struct Panel {
    slots: Vec<Slot>,
    spec: Engine262,
    missing: Vec<Missing>,
    config: PanelConfig,
    cache: std::path::PathBuf,
    /// Baseline coverage per prelude hash (or why there is none).
    baselines: std::collections::HashMap<String, Result<ProgramCoverage, String>>,
}

impl Panel {
    /// Creates the panel (worker processes start on the first test).
    ///
    /// Errors: an unknown engine name, engine262 missing, or no engine at all.
    pub fn new(config: &PanelConfig, engines: &EnginesConfig) -> Result<Panel, PanelError> {
        let entries = registry::all();
        for name in &config.engines {
            if name == "engine262" || !entries.iter().any(|e| e.name == name) {
                return Err(doppel_engines::EngineError::Unknown(
                    name.clone(),
                    entries
                        .iter()
                        .filter(|e| e.family != Family::Engine262)
                        .map(|e| e.name)
                        .collect::<Vec<_>>()
                        .join(", "),
                )
                .into());
            }
        }
        let spec = Engine262::new(engines, config.coverage).map_err(|e| PanelError::NoSpec(e.to_string()))?;
        let mut slots = Vec::new();
        let mut missing = Vec::new();
        for e in entries {
            if e.family == Family::Engine262
                || !(config.engines.is_empty() || config.engines.iter().any(|n| n == e.name))
            {
                continue;
            }
            let made = (e.probe)(engines).and_then(|_| (e.create)(engines));
            match made {
                Ok(engine) => slots.push(Slot {
                    member: Member {
                        info: engine.info().clone(),
                        traits: e.traits,
                    },
                    engine,
                    legacy: None,
                }),
                Err(err) => missing.push(Missing {
                    engine: e.name.to_string(),
                    reason: err.to_string(),
                }),
            }
        }
        if slots.is_empty() {
            let why: Vec<String> = missing.iter().map(|m| format!("{}: {}", m.engine, m.reason)).collect();
            return Err(PanelError::NoEngines(why.join("; ")));
        }
        Ok(Panel {
            slots,
            spec,
            missing,
            config: config.clone(),
            cache: engines.cache.clone(),
            baselines: Default::default(),
        })
    }

    /// The engines in the panel.
    pub fn members(&self) -> Vec<Member> {
        self.slots.iter().map(|s| s.member.clone()).collect()
    }

    /// engine262's name, version and mode.
    pub fn spec_info(&self) -> EngineInfo {
        self.spec.info().clone()
    }

    /// The engines left out, with their reasons.
    pub fn missing(&self) -> &[Missing] {
        &self.missing
    }

    /// How many engine families the panel's engines belong to (transpilers,
    /// which vote apart, not counted).
    pub fn families(&self) -> usize {
        let mut f: Vec<Family> = self
            .slots
            .iter()
            .map(|s| s.member.info.family)
            .filter(|f| !f.is_transpiler())
            .collect();
        f.sort();
        f.dedup();
        f.len()
    }

    /// engine262's catalogue of algorithms and steps. Errors: coverage is
    /// off, or the worker could not build it.
    pub async fn catalogue(&mut self) -> Result<Catalogue, String> {
        self.spec.catalogue().await
    }

    /// engine262 itself, for callers that run programs on it alone
    /// (generation keeps programs by their coverage before judging them).
    pub fn spec_mut(&mut self) -> &mut Engine262 {
        &mut self.spec
    }

    /// Runs `test` on engine262 and every engine, all at once, and votes.
    /// Never fails: every engine's trouble is in its result.
    pub async fn run(&mut self, test: &ConformTest) -> TestRun {
        let Panel {
            slots, spec, config, ..
        } = self;
        let spec_fut = async {
            if config.coverage {
                spec.run_with_coverage(&test.script, &config.spec_run).await
            } else {
                (spec.run(&test.script, &config.spec_run).await, None)
            }
        };
        let run = config.run;
        let script = &test.script;
        // Without an expectation of its own the test needs engine262's
        // answer first; with one, everything runs at once.
        let (spec_result, coverage, mut raw) = if test.expected.is_some() {
            let engines_fut = futures::future::join_all(slots.iter_mut().map(|s| s.engine.run(script, &run)));
            let ((r, cov), raw) = futures::join!(spec_fut, engines_fut);
            (r, cov, Some(raw))
        } else {
            let (r, cov) = spec_fut.await;
            let raw = if Expected::from_spec(&r.outcome).is_some() {
                Some(futures::future::join_all(slots.iter_mut().map(|s| s.engine.run(script, &run))).await)
            } else {
                None
            };
            (r, cov, raw)
        };
        let retried = match raw.as_mut() {
            Some(raw) if spec_result.outcome != Outcome::Timeout => confirm_timeouts(slots, script, &run, raw).await,
            _ => vec![false; slots.len()],
        };
        let spec_info = spec.info().clone();
        let (expected, spec_verdict) = match &test.expected {
            Some(e) => (
                Some(e.clone()),
                judge(e, &spec_result.outcome, &spec_result.output, HostTraits::EXACT),
            ),
            None => match Expected::from_spec(&spec_result.outcome) {
                Some(e) => (Some(e), EngineVerdict::Pass),
                None => (
                    None,
                    EngineVerdict::NoVerdict {
                        reason: format!("engine262: {}", spec_result.outcome.label()),
                    },
                ),
            },
        };
        let spec_er = EngineResult {
            engine: spec_info.name.clone(),
            family: Family::Engine262,
            version: spec_info.version.clone(),
            outcome: spec_result.outcome.clone(),
            output: spec_result.output.clone(),
            millis: spec_result.millis,
            verdict: spec_verdict,
            timeout_retried: false,
            legacy: false,
        };
        let mut legacy = Vec::with_capacity(slots.len());
        for s in slots.iter_mut() {
            legacy.push(s.legacy().await);
        }
        let results: Vec<EngineResult> = match (&expected, raw) {
            (Some(e), Some(raw)) => slots
                .iter()
                .zip(raw)
                .zip(retried)
                .zip(legacy)
                .map(|(((s, r), retried), legacy)| EngineResult {
                    engine: s.member.info.name.clone(),
                    family: s.member.info.family,
                    version: s.member.info.version.clone(),
                    verdict: judge(e, &r.outcome, &r.output, s.member.traits),
                    outcome: r.outcome,
                    output: r.output,
                    millis: r.millis,
                    timeout_retried: retried,
                    legacy,
                })
                .collect(),
            _ => Vec::new(),
        };
        let mut v = vote(&results, test.expected.as_ref().map(|_| &spec_er.verdict));
        if expected.is_none() {
            v.candidate = super::Candidate::NoQuorum {
                reason: format!(
                    "engine262 gave no expectation ({}); no engine was judged",
                    spec_result.outcome.label()
                ),
            };
        }
        let (own_coverage, baseline_error) = match &coverage {
            Some(c) if self.config.subtract_harness => match self.baseline(test).await {
                Ok(base) => (Some(crate::localize::without(c, &base)), None),
                Err(e) => (None, Some(e)),
            },
            _ => (None, None),
        };
        TestRun {
            spec: spec_er,
            expected,
            results,
            coverage,
            own_coverage,
            baseline_error,
            vote: v,
        }
    }

    /// The coverage of `test`'s prelude alone (its script without the test's
    /// text: harness files and `"use strict"`, or nothing for a plain
    /// program; after test262's assert.js, its assertion functions called once
    /// each, [`crate::test262::harness::EXERCISE`]), memoised and cached on disk as
    /// `<cache>/engine262-<version>-baseline-<12 hex of what ran>.json`.
    /// Errors: engine262 did not complete the prelude normally, or gave no coverage.
    pub async fn baseline(&mut self, test: &ConformTest) -> Result<ProgramCoverage, String> {
        use sha2::{Digest, Sha256};
        let mut source = test
            .script
            .source
            .strip_suffix(test.text.as_str())
            .unwrap_or("")
            .to_string();
        if crate::test262::harness::has_assert(&source) {
            source.push_str(crate::test262::harness::EXERCISE);
        }
        let key = hex::encode(Sha256::digest(source.as_bytes()))[..12].to_string();
        if let Some(b) = self.baselines.get(&key) {
            return b.clone();
        }
        let version = self.spec.info().version.clone();
        let path = self.cache.join(format!("engine262-{version}-baseline-{key}.json"));
        let cached = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str::<ProgramCoverage>(&t).ok());
        let measured = match cached {
            Some(c) => Ok(c),
            None => {
                let script = Script {
                    source,
                    features: Vec::new(),
                };
                let (r, cov) = self.spec.run_with_coverage(&script, &self.config.spec_run).await;
                match (r.outcome, cov) {
                    (doppel_engines::Outcome::Normal, Some(c)) => {
                        let written = std::fs::create_dir_all(&self.cache)
                            .and_then(|_| std::fs::write(&path, serde_json::to_string(&c).unwrap_or_default()));
                        match written {
                            Ok(()) => Ok(c),
                            Err(e) => Err(format!("baseline cache {}: {e}", path.display())),
                        }
                    }
                    (o, _) => Err(format!("engine262 on the prelude alone: {}", o.label())),
                }
            }
        };
        self.baselines.insert(key, measured.clone());
        measured
    }

    /// Ends every engine's processes.
    pub async fn shutdown(&mut self) {
        for s in &mut self.slots {
            s.engine.shutdown().await;
        }
        self.spec.shutdown().await;
    }
}

/// Confirms every engine's timeout (on a test engine262 finished) with a
/// second run: in a fresh worker for a worker engine (the timed-out one was
/// killed; a worker's start-up is not timed), in a new process for a
/// process-per-script engine (Rhino's JVM, now with a warm page cache). A
/// cold start or a loaded machine can hold one run past the timeout, and a
/// timeout that does not repeat is not an engine's failure. The second run's result replaces
/// the first. Answers, per slot, whether it was run again.
async fn confirm_timeouts(slots: &mut [Slot], script: &Script, run: &RunOptions, raw: &mut [RunResult]) -> Vec<bool> {
    let again: Vec<bool> = raw.iter().map(|r| r.outcome == Outcome::Timeout).collect();
    if !again.contains(&true) {
        return again;
    }
    let reruns = futures::future::join_all(
        slots
            .iter_mut()
            .zip(&again)
            .filter(|(_, a)| **a)
            .map(|(s, _)| s.engine.run(script, run)),
    )
    .await;
    let slots_again = raw.iter_mut().zip(&again).filter(|(_, a)| **a).map(|(r, _)| r);
    for (r, second) in slots_again.zip(reruns) {
        *r = second;
    }
    again
}

#[cfg(test)]
mod tests {
    use super::*;
    use doppel_engines::FeatureSet;

    /// Answers its outcomes in turn (the last one again when they run out).
    struct Scripted {
        info: EngineInfo,
        outcomes: Vec<Outcome>,
        runs: usize,
    }

    #[async_trait::async_trait]
    impl Engine for Scripted {
        fn info(&self) -> &EngineInfo {
            &self.info
        }
        async fn run_unchecked(&mut self, _: &str, _: &RunOptions) -> RunResult {
            let outcome = self.outcomes[self.runs.min(self.outcomes.len() - 1)].clone();
            self.runs += 1;
            RunResult {
                outcome,
                output: String::new(),
                output_cut: false,
                millis: 1,
            }
        }
        async fn features(&mut self) -> Result<FeatureSet, doppel_engines::EngineError> {
            Ok(FeatureSet {
                engine: self.info.name.clone(),
                version: "1".into(),
                probe: String::new(),
                supported: Default::default(),
            })
        }
        async fn shutdown(&mut self) {}
    }

    fn slot(name: &str, outcomes: Vec<Outcome>) -> Slot {
        let info = EngineInfo {
            name: name.into(),
            family: Family::QuickJs,
            version: "1".into(),
            mode: "scripted".into(),
        };
        Slot {
            member: Member {
                info: info.clone(),
                traits: HostTraits::EXACT,
            },
            engine: Box::new(Scripted {
                info,
                outcomes,
                runs: 0,
            }),
            legacy: Some(false),
        }
    }

    #[tokio::test]
    async fn a_timeout_is_kept_only_when_a_second_run_times_out_too() {
        let mut slots = vec![
            slot("slow-start", vec![Outcome::Timeout, Outcome::Normal]),
            slot("hangs", vec![Outcome::Timeout]),
            slot("fine", vec![Outcome::Normal, Outcome::Timeout]),
        ];
        let script = Script {
            source: "1;".into(),
            features: vec![],
        };
        let opts = RunOptions::default();
        let mut raw = Vec::new();
        for s in &mut slots {
            raw.push(s.engine.run(&script, &opts).await);
        }
        let retried = confirm_timeouts(&mut slots, &script, &opts, &mut raw).await;
        assert_eq!(retried, [true, true, false]);
        let outcomes: Vec<&Outcome> = raw.iter().map(|r| &r.outcome).collect();
        assert_eq!(outcomes, [&Outcome::Normal, &Outcome::Timeout, &Outcome::Normal]);
    }
}
