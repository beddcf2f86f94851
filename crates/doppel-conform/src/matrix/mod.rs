//! The conformance matrix: every test on every engine, tallied per engine
//! (a compatibility table) and per candidate, with engine262's suite
//! coverage ([`Tally`]); and the cached matrix of the test262 corpus
//! (part 7a, "known vs new"): its observations saved once per panel
//! (engine names and versions, engine262's version) in the engines cache,
//! read back to build a [`crate::group::KnownIndex`].
//!
//! `load.rs`: test262-format files as tests.

pub mod load;

use crate::group::Observed;
use crate::technique_record::{ConformConfig, SummaryRecord};
use crate::verdict::EngineVerdict;
use crate::verdict::panel::{ConformTest, Member, Missing, TestRun};
use doppel_engines::EngineInfo;
use doppel_engines::coverage::CoverageUnion;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Running totals of a campaign.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    /// Engine name -> [pass, fail, unsupported, no verdict], in first-seen order.
    per_engine: Vec<(String, [usize; 4])>,
    candidates: BTreeMap<String, usize>,
    /// engine262's suite coverage.
    pub union: CoverageUnion,
    /// Tests run.
    pub tests: usize,
    /// What grouping needs of each test.
    pub observed: Vec<Observed>,
}

impl Tally {
    /// Adds one test's run (`run_id`: its stored id).
    pub fn add(&mut self, test: &ConformTest, run: &TestRun, run_id: Option<i64>) {
        self.tests += 1;
        for r in std::iter::once(&run.spec).chain(&run.results) {
            let i = match self.per_engine.iter().position(|(n, _)| *n == r.engine) {
                Some(i) => i,
                None => {
                    self.per_engine.push((r.engine.clone(), [0; 4]));
                    self.per_engine.len() - 1
                }
            };
            let slot = match r.verdict {
                EngineVerdict::Pass => 0,
                EngineVerdict::Fail(_) => 1,
                EngineVerdict::Unsupported { .. } => 2,
                EngineVerdict::NoVerdict { .. } => 3,
            };
            self.per_engine[i].1[slot] += 1;
        }
        *self
            .candidates
            .entry(run.vote.candidate.name().to_string())
            .or_default() += 1;
        if let Some(c) = &run.coverage {
            self.union.add(c);
        }
        self.observed.push(Observed {
            name: test.name.clone(),
            run_id,
            size: test.text.len(),
            features: test.script.features.clone(),
            expected: run.expected.clone(),
            vote: run.vote.clone(),
            spec_failure: run.spec.verdict.failure().cloned(),
            // Localization ranks the test's own coverage when the harness's is taken out.
            coverage: run.own_coverage.clone().or_else(|| run.coverage.clone()),
        });
    }

    /// Tests per candidate kind so far.
    pub fn candidates(&self) -> &BTreeMap<String, usize> {
        &self.candidates
    }

    /// The summary record without groups (the caller adds them).
    pub fn summary(
        &self,
        config: ConformConfig,
        members: Vec<Member>,
        missing: Vec<Missing>,
        skipped: &[String],
        catalogue: Option<&doppel_engines::coverage::Catalogue>,
    ) -> SummaryRecord {
        SummaryRecord {
            config,
            members,
            missing,
            tests: self.tests,
            skipped: skipped.iter().take(200).cloned().collect(),
            skipped_count: skipped.len(),
            per_engine: self
                .per_engine
                .iter()
                .map(|(n, c)| (n.clone(), c[0], c[1], c[2], c[3]))
                .collect(),
            candidates: self.candidates.iter().map(|(k, v)| (k.clone(), *v)).collect(),
            coverage: catalogue.map(|c| self.union.ratios(c)),
            groups: Vec::new(),
            localizations: Vec::new(),
        }
    }
}

/// The cached test262 matrix of one panel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatrixCache {
    /// The suite directory it was run on.
    pub suite: String,
    /// The panel's engines and engine262, with versions.
    pub engines: Vec<EngineInfo>,
    /// Every test's observation.
    pub observed: Vec<Observed>,
}

/// Where the cached matrix of a panel lives: `<cache>/conform-matrix-<12 hex>.json`,
/// keyed by the engines' names and versions and engine262's version (a new
/// engine version runs the suite again).
pub fn cache_path(cache_dir: &Path, spec: &EngineInfo, members: &[Member]) -> PathBuf {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for i in std::iter::once(spec).chain(members.iter().map(|m| &m.info)) {
        h.update(i.name.as_bytes());
        h.update([0]);
        h.update(i.version.as_bytes());
        h.update([0]);
    }
    cache_dir.join(format!("conform-matrix-{}.json", &hex::encode(h.finalize())[..12]))
}

/// Reads a cached matrix; `None` when there is none. Errors: unreadable or malformed.
pub fn read_cache(path: &Path) -> Result<Option<MatrixCache>, String> {
    match std::fs::read_to_string(path) {
        Ok(t) => serde_json::from_str(&t)
            .map(Some)
            .map_err(|e| format!("{}: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// Writes a matrix cache (through a temporary file, renamed into place).
/// Errors: the cache directory cannot be written.
pub fn write_cache(path: &Path, cache: &MatrixCache) -> Result<(), String> {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_string(cache).map_err(|e| e.to_string())?;
    std::fs::write(&tmp, text).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display()))
}
