//! One localization case: P, P', tests, ground truth; builds, checks the
//! premise (P and P' disagree on a failing test t), computes the spectra
//! and every report, and ends with a named [`Outcome`].

use crate::baselines;
use crate::darwin::{self, DarwinConfig, DarwinOutcome, DarwinResult, Program};
use crate::report::{Measures, Report};
use crate::truth::Side;
use crate::truth::{self, Truth};
use doppel_concolic::Module;
use doppel_core::process::Limits;
use doppel_lang::c::codeflaws::{self, RegressionPair, outputs_match};
use doppel_lang::c::run::RunEnd;
use doppel_lang::c::test_coverage::{RunCoverage, coverage_per_input};
use doppel_lang::c::wasm::WasmBuildCache;
use doppel_sbfl::Verdict;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// One test of a case: stdin bytes and, if known, the expected stdout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaseTest {
    /// `pos3`, `neg1`, `t` for a command-line input.
    pub name: String,
    /// Standard input.
    pub input: Vec<u8>,
    /// Expected standard output (Codeflaws' `output-*`), if any.
    pub expected: Option<Vec<u8>>,
    /// Whether the corpus marks it failing (a candidate for t).
    pub failing: bool,
}

/// Where the ground truth comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TruthSource {
    /// P is P''s own fix (same-author pair).
    SameAuthor,
    /// P''s own author's fix is this program (cross-author pair).
    CrossAuthor(PathBuf),
    /// None (a command-line case): reports are not measured.
    Unknown,
}

/// A case to localize.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Case {
    /// The case's name.
    pub name: String,
    /// The defect class, if known.
    pub class: Option<String>,
    /// The reference program P.
    pub reference: PathBuf,
    /// The modified program P'.
    pub modified: PathBuf,
    /// The ground truth's source.
    pub truth: TruthSource,
    /// The tests (truncated Codeflaws inputs already dropped).
    pub tests: Vec<CaseTest>,
    /// Tests dropped while reading, with the reason.
    pub dropped: Vec<(String, String)>,
    /// Command-line arguments (argv\[1..\]) of every run of both programs
    /// (`doppel localize --args`; none for Codeflaws, whose programs read
    /// stdin only). Darwin keeps them concrete: its alternate inputs
    /// change standard input.
    #[serde(default)]
    pub args: Vec<String>,
}

impl Case {
    /// A case from a Codeflaws pair (same- or cross-author); truncated
    /// inputs (darwin-measured.md trap 7) and unreadable files are dropped
    /// with the reason.
    pub fn from_pair(pair: &RegressionPair) -> Self {
        let mut tests = Vec::new();
        let mut dropped = Vec::new();
        let all = pair
            .failing
            .iter()
            .map(|t| (t, true))
            .chain(pair.passing.iter().map(|t| (t, false)));
        for (t, failing) in all {
            match (codeflaws::read_bytes(&t.input), codeflaws::read_bytes(&t.expected)) {
                (Ok(input), _) if codeflaws::is_truncated(&input) => {
                    dropped.push((t.name.clone(), "truncated input (ends in '...')".into()))
                }
                (Ok(input), Ok(expected)) => tests.push(CaseTest {
                    name: t.name.clone(),
                    input,
                    expected: Some(expected),
                    failing,
                }),
                (Err(e), _) | (_, Err(e)) => dropped.push((t.name.clone(), e)),
            }
        }
        Self {
            name: pair.name.clone(),
            class: pair.class.clone(),
            reference: pair.reference.clone(),
            modified: pair.modified.clone(),
            truth: match &pair.modified_fix {
                Some(f) => TruthSource::CrossAuthor(f.clone()),
                None => TruthSource::SameAuthor,
            },
            tests,
            dropped,
            args: Vec::new(),
        }
    }
}

/// How a case ended (issue 16's named outcomes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Outcome {
    /// The baselines were computed, and Darwin ran if asked (its own
    /// outcome is in [`CaseResult::darwin`]).
    Analyzed,
    /// P and P' print the same on every failing test (after Codeflaws'
    /// comparison): nothing to localize.
    Agree {
        /// The failing tests tried.
        tests: Vec<String>,
    },
    /// A program does not build (gcc's message).
    BuildFailure {
        /// `P` or `P'`.
        program: String,
        /// The compiler's message.
        message: String,
    },
    /// No failing test could be run on both programs.
    NoUsableTest {
        /// Why.
        reason: String,
    },
}

/// The result of one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseResult {
    /// The case's name.
    pub name: String,
    /// The defect class, if known.
    pub class: Option<String>,
    /// How it ended.
    pub outcome: Outcome,
    /// The failing test t the analysis used.
    pub failing_test: Option<String>,
    /// P's and P''s standard output on t.
    pub outputs_on_t: Option<(String, String)>,
    /// The faulty lines (empty when unknown).
    pub truth: Truth,
    /// Every report with its measures (`None` without ground truth).
    pub reports: Vec<(Report, Option<Measures>)>,
    /// Tests used for spectra (passing, failing).
    pub spectra_tests: (usize, usize),
    /// Tests not used, with the reason.
    pub skipped: Vec<(String, String)>,
    /// Darwin's result, when it ran.
    pub darwin: Option<DarwinResult>,
    /// Wall-clock seconds for the case.
    pub seconds: f64,
    /// Wall-clock seconds of Darwin alone (wasm builds included).
    pub darwin_seconds: f64,
}

/// Knobs of a case run.
#[derive(Debug, Clone)]
pub struct CaseConfig {
    /// Wall-clock limit of one test run.
    pub run_timeout: Duration,
    /// Resource limits of one test run.
    pub limits: Limits,
    /// Darwin's knobs; `None` runs the baselines only.
    pub darwin: Option<DarwinConfig>,
    /// The wasm build cache (default: `doppel-wasm-cache` in the system
    /// temp dir).
    pub wasm_cache: PathBuf,
}

impl Default for CaseConfig {
    fn default() -> Self {
        Self {
            run_timeout: Duration::from_secs(10),
            limits: Limits::default(),
            darwin: Some(DarwinConfig::default()),
            wasm_cache: std::env::temp_dir().join("doppel-wasm-cache"),
        }
    }
}

/// Runs one case. Never panics on bad input: every problem is an
/// [`Outcome`] or a skipped test.
pub async fn run_case(case: &Case, cfg: &CaseConfig) -> CaseResult {
    let start = Instant::now();
    let mut result = CaseResult {
        name: case.name.clone(),
        class: case.class.clone(),
        outcome: Outcome::Analyzed,
        failing_test: None,
        outputs_on_t: None,
        truth: Truth::default(),
        reports: Vec::new(),
        spectra_tests: (0, 0),
        skipped: case.dropped.clone(),
        darwin: None,
        seconds: 0.0,
        darwin_seconds: 0.0,
    };
    let text = |p: &PathBuf| codeflaws::read_bytes(p).map(|b| String::from_utf8_lossy(&b).into_owned());
    let (p_text, q_text) = match (text(&case.reference), text(&case.modified)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            result.outcome = Outcome::NoUsableTest { reason: e };
            return finish(result, start);
        }
    };
    result.truth = match &case.truth {
        TruthSource::SameAuthor => truth::same_author(&q_text, &p_text),
        TruthSource::CrossAuthor(fix) => match text(fix) {
            Ok(f) => truth::cross_author(&q_text, &f),
            Err(_) => Truth::default(),
        },
        TruthSource::Unknown => Truth::default(),
    };
    let inputs: Vec<Vec<u8>> = case.tests.iter().map(|t| t.input.clone()).collect();
    let p_runs = match coverage_per_input(&case.reference, &inputs, &case.args, cfg.run_timeout, cfg.limits).await {
        Ok(r) => r,
        Err(message) => {
            result.outcome = Outcome::BuildFailure {
                program: "P".into(),
                message,
            };
            return finish(result, start);
        }
    };
    let q_runs = match coverage_per_input(&case.modified, &inputs, &case.args, cfg.run_timeout, cfg.limits).await {
        Ok(r) => r,
        Err(message) => {
            result.outcome = Outcome::BuildFailure {
                program: "P'".into(),
                message,
            };
            return finish(result, start);
        }
    };
    // Verdicts: P' fails a test where its output differs from P's (P is the
    // oracle: some problems accept several answers, darwin-measured.md trap 9).
    let mut runs: Vec<(&RunCoverage, Verdict)> = Vec::new();
    let mut t_index = None;
    let mut tried = Vec::new();
    for (i, t) in case.tests.iter().enumerate() {
        let (p, q) = match (&p_runs[i], &q_runs[i]) {
            (Ok(p), Ok(q)) => (p, q),
            (Err(e), _) => {
                result.skipped.push((t.name.clone(), format!("P: {e}")));
                continue;
            }
            (_, Err(e)) => {
                result.skipped.push((t.name.clone(), format!("P': {e}")));
                continue;
            }
        };
        if p.end != RunEnd::Exited(0) && p.end != RunEnd::Exited(1) {
            result.skipped.push((t.name.clone(), format!("P ended {:?}", p.end)));
            continue;
        }
        let differs = !outputs_match(&p.stdout, &q.stdout);
        let verdict = if differs { Verdict::Failed } else { Verdict::Passed };
        runs.push((q, verdict));
        if t.failing {
            tried.push(t.name.clone());
            if differs && t_index.is_none() {
                t_index = Some(i);
            }
        }
    }
    result.spectra_tests = (
        runs.iter().filter(|r| r.1 == Verdict::Passed).count(),
        runs.iter().filter(|r| r.1 == Verdict::Failed).count(),
    );
    let Some(ti) = t_index else {
        result.outcome = if tried.is_empty() {
            Outcome::NoUsableTest {
                reason: "no failing test ran on both programs".into(),
            }
        } else {
            Outcome::Agree { tests: tried }
        };
        return finish(result, start);
    };
    let (p_t, q_t) = (p_runs[ti].as_ref().ok(), q_runs[ti].as_ref().ok());
    result.failing_test = Some(case.tests[ti].name.clone());
    if let (Some(p), Some(q)) = (p_t, q_t) {
        result.outputs_on_t = Some((
            String::from_utf8_lossy(&p.stdout).into_owned(),
            String::from_utf8_lossy(&q.stdout).into_owned(),
        ));
    }
    let mut reports = vec![baselines::diff(&q_text, &p_text)];
    if let Some(q) = q_t {
        reports.push(baselines::executed_branch_lines(q));
    }
    reports.extend(baselines::sbfl(&runs));
    if let Some(dc) = cfg.darwin {
        let t0 = Instant::now();
        let d = run_darwin(case, &case.tests[ti].input, &cfg.wasm_cache, dc).await;
        reports.insert(0, d.report.clone());
        result.darwin = Some(d);
        result.darwin_seconds = t0.elapsed().as_secs_f64();
    }
    let measured = !matches!(case.truth, TruthSource::Unknown);
    result.reports = reports
        .into_iter()
        .map(|r| {
            let m = measured.then(|| r.measure(&result.truth));
            (r, m)
        })
        .collect();
    finish(result, start)
}

/// Builds both programs for wasm, decodes them and runs Darwin on `t`.
async fn run_darwin(case: &Case, t: &[u8], cache: &std::path::Path, mut dc: DarwinConfig) -> DarwinResult {
    let began = Instant::now();
    let cache = WasmBuildCache::new(cache.to_path_buf());
    let mut built = Vec::new();
    for (path, label) in [(&case.reference, "P"), (&case.modified, "P'")] {
        let b = match cache.build_wasm(path).await {
            Ok(b) => b,
            Err(e) => {
                return darwin::not_run(DarwinOutcome::BuildFailure {
                    message: format!("{label}: {e}"),
                });
            }
        };
        let bytes = match std::fs::read(&b.output) {
            Ok(x) => x,
            Err(e) => {
                return darwin::not_run(DarwinOutcome::BuildFailure {
                    message: format!("{label}: {e}"),
                });
            }
        };
        match Module::decode(&bytes) {
            Ok(m) => built.push((m, b.source.to_string_lossy().into_owned())),
            Err(e) => {
                return darwin::not_run(DarwinOutcome::UnsupportedInstruction {
                    reason: format!("{label}: {e}"),
                });
            }
        }
    }
    let p = Program {
        module: &built[0].0,
        source: built[0].1.clone(),
        side: Side::Reference,
    };
    let q = Program {
        module: &built[1].0,
        source: built[1].1.clone(),
        side: Side::Modified,
    };
    // The builds count in Darwin's budget: the budget bounds the case's
    // Darwin time, not only its analysis.
    dc.budget = dc.budget.saturating_sub(began.elapsed());
    darwin::analyze_with_args(&p, &q, t, &case.args, dc)
}

fn finish(mut r: CaseResult, start: Instant) -> CaseResult {
    r.seconds = start.elapsed().as_secs_f64();
    r
}
