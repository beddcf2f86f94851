//! What a stored localization case holds ([`RunRecord::config`]), written
//! by `doppel localize` and read by `show`, `replay`, `repro` and the
//! report through these types: the configuration (P, P', the tests, the
//! budget, the seed), and the evidence (the [`CaseResult`]: outcome,
//! Darwin's ranked root causes with witnesses, the baselines' reports).
//!
//! A record is self-contained: P's and P''s source texts and every test's
//! bytes are stored, so a case replays without the files it came from.
//!
//! Every case is stored as a finding (`Verdict::Divergence`) whose class
//! is its outcome and defect class (`localize:<outcome>|<class>`, plus
//! `darwin:<top1|in_report|missed>` when the ground truth is known), so
//! `doppel classes`, `sample` and the report group cases by how they ended.

use crate::case::{Case, CaseConfig, CaseResult, CaseTest, Outcome, TruthSource};
use crate::darwin::{DarwinConfig, DarwinOutcome};
use doppel_core::RunRecord;
use doppel_core::model::{ClassKey, ClassPartSpec, Finding, Verdict};
use doppel_core::subject::{Language, Subject};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The technique tag of localization records.
pub const TECHNIQUE: &str = "localize";

/// The class layout: outcome (`localize:`), defect class, and, when the
/// ground truth is known, whether Darwin's report holds a faulty line
/// (`darwin:top1`, `darwin:in_report`, `darwin:missed`).
pub const CLASS_PARTS: [ClassPartSpec; 3] = [
    ClassPartSpec {
        name: "outcome",
        prefix: Some("localize"),
        optional: false,
        header: "outcome",
    },
    ClassPartSpec {
        name: "class",
        prefix: None,
        optional: false,
        header: "defect class",
    },
    ClassPartSpec {
        name: "darwin",
        prefix: Some("darwin"),
        optional: true,
        header: "Darwin vs. ground truth",
    },
];

/// Everything besides P, P' and the tests that determines a case's run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LocalizeConfig {
    /// Darwin's wall-clock budget, seconds.
    pub budget_secs: f64,
    /// The seed (Darwin is deterministic given the solver; recorded so a
    /// run is named by seed and configuration like every doppel run).
    pub seed: u64,
    /// Whether Darwin runs (false: the baselines only).
    pub darwin: bool,
    /// Wall-clock limit of one native test run, seconds.
    pub run_timeout_secs: f64,
    /// Timeout of one full deviation query, milliseconds.
    pub query_timeout_ms: u64,
    /// Interpreter instructions per run (0: the interpreter's default).
    #[serde(default)]
    pub instructions: u64,
    /// Darwin's deviation queries sliced to the negated branch's input
    /// bytes (`DarwinConfig::slicing`). Records stored before the switch
    /// existed ran unsliced.
    #[serde(default)]
    pub slicing: bool,
    /// Darwin reports the first divergence of the runs on t when no
    /// deviation is validated (`DarwinConfig::first_divergence`). Records stored before
    /// the switch existed ran without it.
    #[serde(default)]
    pub first_divergence: bool,
    /// A predicate deviation must keep P's predicates
    /// (`DarwinConfig::strict_predicates`). Records stored before the
    /// switch existed ran without it.
    #[serde(default)]
    pub strict_predicates: bool,
    /// Darwin searches the critical predicates of P' on t
    /// (`DarwinConfig::predicate_switching`). Records stored before the
    /// switch existed ran without it.
    #[serde(default)]
    pub predicate_switching: bool,
    /// Darwin's report holds the lines found on t after validated
    /// deviations too (`DarwinConfig::on_t_with_deviations`). Records
    /// stored before the switch existed ran without it.
    #[serde(default)]
    pub on_t_with_deviations: bool,
}

impl Default for LocalizeConfig {
    fn default() -> Self {
        let d = DarwinConfig::default();
        Self {
            budget_secs: d.budget.as_secs_f64(),
            seed: 0,
            darwin: true,
            run_timeout_secs: 10.0,
            query_timeout_ms: d.query_timeout.as_millis() as u64,
            instructions: 0,
            slicing: d.slicing,
            first_divergence: d.first_divergence,
            strict_predicates: d.strict_predicates,
            predicate_switching: d.predicate_switching,
            on_t_with_deviations: d.on_t_with_deviations,
        }
    }
}

impl LocalizeConfig {
    /// The case runner's knobs; wasm builds are cached under `wasm_cache`.
    pub fn case_config(&self, wasm_cache: &Path) -> CaseConfig {
        let mut darwin = DarwinConfig {
            budget: Duration::from_secs_f64(self.budget_secs.max(0.001)),
            query_timeout: Duration::from_millis(self.query_timeout_ms.max(1)),
            slicing: self.slicing,
            first_divergence: self.first_divergence,
            strict_predicates: self.strict_predicates,
            predicate_switching: self.predicate_switching,
            on_t_with_deviations: self.on_t_with_deviations,
            ..DarwinConfig::default()
        };
        if self.instructions > 0 {
            darwin.run_budget.instructions = self.instructions;
        }
        CaseConfig {
            run_timeout: Duration::from_secs_f64(self.run_timeout_secs.max(0.001)),
            darwin: self.darwin.then_some(darwin),
            wasm_cache: wasm_cache.to_path_buf(),
            ..CaseConfig::default()
        }
    }

    /// 12 hex digits of SHA-256 of the configuration (part of run keys).
    pub fn fingerprint(&self) -> String {
        short_hash(serde_json::to_string(self).unwrap_or_default().as_bytes())
    }
}

fn short_hash(bytes: &[u8]) -> String {
    hex::encode(&Sha256::digest(bytes)[..6])
}

/// Bytes stored as a JSON string when they are UTF-8, else as
/// `{"hex": "..."}`: test inputs are text almost always.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bytes(pub Vec<u8>);

impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match std::str::from_utf8(&self.0) {
            Ok(t) => s.serialize_str(t),
            Err(_) => {
                use serde::ser::SerializeMap;
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("hex", &hex::encode(&self.0))?;
                m.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Form {
            Text(String),
            Hex { hex: String },
        }
        match Form::deserialize(d)? {
            Form::Text(t) => Ok(Bytes(t.into_bytes())),
            Form::Hex { hex } => hex::decode(hex).map(Bytes).map_err(serde::de::Error::custom),
        }
    }
}

/// One stored test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredTest {
    /// `neg1`, `pos3`, `t`.
    pub name: String,
    /// Standard input.
    pub input: Bytes,
    /// Expected standard output, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<Bytes>,
    /// Whether the corpus marks it failing.
    pub failing: bool,
}

/// The ground truth's source, with the texts it needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum StoredTruth {
    /// P is P''s own fix.
    SameAuthor,
    /// P''s own author's fix (file name and text).
    CrossAuthor {
        /// The fix's file name.
        name: String,
        /// The fix's source text.
        text: String,
    },
    /// Not known (a command-line case).
    Unknown,
}

/// A case as stored: names and texts of P and P', the tests, the truth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseInput {
    /// The case's name.
    pub name: String,
    /// The defect class, if known.
    pub class: Option<String>,
    /// P's file name and source text.
    pub reference: (String, String),
    /// P''s file name and source text.
    pub modified: (String, String),
    /// The ground truth's source.
    pub truth: StoredTruth,
    /// The tests.
    pub tests: Vec<StoredTest>,
    /// Tests dropped while reading, with the reason.
    #[serde(default)]
    pub dropped: Vec<(String, String)>,
    /// Command-line arguments of every run of both programs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
}

fn read_text(p: &Path) -> Result<String, String> {
    doppel_lang::c::codeflaws::read_bytes(p).map(|b| String::from_utf8_lossy(&b).into_owned())
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "program.c".into())
}

impl CaseInput {
    /// Reads the case's files. Errors: a program or fix cannot be read.
    pub fn of(case: &Case) -> Result<Self, String> {
        let truth = match &case.truth {
            TruthSource::SameAuthor => StoredTruth::SameAuthor,
            TruthSource::CrossAuthor(f) => StoredTruth::CrossAuthor {
                name: file_name(f),
                text: read_text(f)?,
            },
            TruthSource::Unknown => StoredTruth::Unknown,
        };
        Ok(Self {
            name: case.name.clone(),
            class: case.class.clone(),
            reference: (file_name(&case.reference), read_text(&case.reference)?),
            modified: (file_name(&case.modified), read_text(&case.modified)?),
            truth,
            tests: case
                .tests
                .iter()
                .map(|t| StoredTest {
                    name: t.name.clone(),
                    input: Bytes(t.input.clone()),
                    expected: t.expected.clone().map(Bytes),
                    failing: t.failing,
                })
                .collect(),
            dropped: case.dropped.clone(),
            args: case.args.clone(),
        })
    }

    /// Writes P, P' (and a cross-author fix) into `dir` (`P/<name>`,
    /// `P2/<name>`, `fix/<name>`) and returns the case over those files.
    ///
    /// Errors: the files cannot be written.
    pub fn materialize(&self, dir: &Path) -> std::io::Result<Case> {
        let put = |sub: &str, (name, text): (&String, &String)| -> std::io::Result<PathBuf> {
            let d = dir.join(sub);
            std::fs::create_dir_all(&d)?;
            let p = d.join(safe_name(name));
            std::fs::write(&p, text)?;
            Ok(p)
        };
        let reference = put("P", (&self.reference.0, &self.reference.1))?;
        let modified = put("P2", (&self.modified.0, &self.modified.1))?;
        let truth = match &self.truth {
            StoredTruth::SameAuthor => TruthSource::SameAuthor,
            StoredTruth::CrossAuthor { name, text } => TruthSource::CrossAuthor(put("fix", (name, text))?),
            StoredTruth::Unknown => TruthSource::Unknown,
        };
        Ok(Case {
            name: self.name.clone(),
            class: self.class.clone(),
            reference,
            modified,
            truth,
            tests: self
                .tests
                .iter()
                .map(|t| CaseTest {
                    name: t.name.clone(),
                    input: t.input.0.clone(),
                    expected: t.expected.as_ref().map(|b| b.0.clone()),
                    failing: t.failing,
                })
                .collect(),
            dropped: self.dropped.clone(),
            args: self.args.clone(),
        })
    }

    /// 12 hex digits of SHA-256 over the programs, the truth and the tests.
    pub fn hash(&self) -> String {
        short_hash(serde_json::to_string(self).unwrap_or_default().as_bytes())
    }

    /// A stored test's input by name.
    pub fn test_input(&self, name: &str) -> Option<&[u8]> {
        self.tests.iter().find(|t| t.name == name).map(|t| t.input.0.as_slice())
    }
}

/// A file name without directories (stored names come from the store).
fn safe_name(name: &str) -> String {
    let n: String = name
        .chars()
        .map(|c| if c == '/' || c == '\\' { '_' } else { c })
        .collect();
    if n.is_empty() || n == "." || n == ".." {
        "program.c".into()
    } else {
        n
    }
}

/// A stored localization case: configuration, case and evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LocalizeRecord {
    /// The configuration.
    pub config: LocalizeConfig,
    /// P, P', the tests.
    pub case: CaseInput,
    /// The evidence: the outcome, Darwin's result, every report.
    pub result: CaseResult,
}

/// The stable name of a case's outcome (the class key's first part):
/// `localized`, `no_deviation_found`, `first_divergence`, `budget_spent`,
/// `unsupported_instruction`, `wasm_agree`, `wasm_build_failure`,
/// `solver_failure`, `baselines_only` (Darwin not run) for analyzed cases;
/// `agree`, `build_failure`, `no_usable_test` otherwise.
pub fn outcome_name(r: &CaseResult) -> &'static str {
    match &r.outcome {
        Outcome::Analyzed => match r.darwin.as_ref().map(|d| &d.outcome) {
            None => "baselines_only",
            Some(DarwinOutcome::Localized) => "localized",
            Some(DarwinOutcome::NoDeviationFound) => "no_deviation_found",
            Some(DarwinOutcome::FirstDivergence { .. }) => "first_divergence",
            Some(DarwinOutcome::BudgetSpent { .. }) => "budget_spent",
            Some(DarwinOutcome::UnsupportedInstruction { .. }) => "unsupported_instruction",
            Some(DarwinOutcome::Agree) => "wasm_agree",
            Some(DarwinOutcome::BuildFailure { .. }) => "wasm_build_failure",
            Some(DarwinOutcome::SolverFailure { .. }) => "solver_failure",
        },
        Outcome::Agree { .. } => "agree",
        Outcome::BuildFailure { .. } => "build_failure",
        Outcome::NoUsableTest { .. } => "no_usable_test",
    }
}

/// Why a case ended as it did, for people (empty for `localized`).
pub fn outcome_reason(r: &CaseResult) -> String {
    match &r.outcome {
        Outcome::Analyzed => match r.darwin.as_ref().map(|d| &d.outcome) {
            None => "Darwin was not run (baselines only)".into(),
            Some(DarwinOutcome::Localized) => String::new(),
            Some(DarwinOutcome::NoDeviationFound) => {
                "every deviation was unsatisfiable or its alternate input failed validation".into()
            }
            Some(DarwinOutcome::FirstDivergence { after }) => {
                format!("{after}; reported: where the runs of P and P' on t first part")
            }
            Some(DarwinOutcome::BudgetSpent { reason }) => format!("budget spent: {reason}"),
            Some(DarwinOutcome::UnsupportedInstruction { reason }) => format!("unsupported instruction: {reason}"),
            Some(DarwinOutcome::Agree) => "P and P' print the same on t when built for wasm32-wasi".into(),
            Some(DarwinOutcome::BuildFailure { message }) => format!("wasm build failure: {message}"),
            Some(DarwinOutcome::SolverFailure { reason }) => format!("solver failure: {reason}"),
        },
        Outcome::Agree { tests } => format!("P and P' print the same on the failing tests {}", tests.join(", ")),
        Outcome::BuildFailure { program, message } => format!("{program} does not build: {message}"),
        Outcome::NoUsableTest { reason } => format!("no usable test: {reason}"),
    }
}

/// Darwin's report against the ground truth: `top1`, `in_report`,
/// `missed`; `None` when not measured.
pub fn darwin_hit(r: &CaseResult) -> Option<&'static str> {
    let (_, m) = r.reports.iter().find(|(rep, _)| rep.technique == "darwin")?;
    let m = (*m)?;
    Some(if m.top(1) {
        "top1"
    } else if m.hit {
        "in_report"
    } else {
        "missed"
    })
}

/// JSON has no infinity (serde_json writes `null`, which does not read
/// back as a number): DStar's `+inf` scores are stored as `f64::MAX`.
fn finite_scores(mut r: CaseResult) -> CaseResult {
    for (rep, _) in &mut r.reports {
        for e in &mut rep.entries {
            if e.score.is_nan() {
                e.score = f64::MIN;
            } else if e.score.is_infinite() {
                e.score = if e.score > 0.0 { f64::MAX } else { f64::MIN };
            }
        }
    }
    if let Some(d) = &mut r.darwin {
        for e in &mut d.report.entries {
            if !e.score.is_finite() {
                e.score = if e.score > 0.0 { f64::MAX } else { f64::MIN };
            }
        }
    }
    r
}

impl LocalizeRecord {
    /// A record of a finished case.
    pub fn new(config: LocalizeConfig, case: CaseInput, result: CaseResult) -> Self {
        Self {
            config,
            case,
            result: finite_scores(result),
        }
    }

    /// Reads a stored run. Errors: not a localization record.
    pub fn of(run: &RunRecord) -> anyhow::Result<Self> {
        anyhow::ensure!(
            run.technique == TECHNIQUE,
            "run {:?} is a {} run, not a localization case",
            run.key,
            run.technique
        );
        serde_json::from_value(run.config.clone())
            .map_err(|e| anyhow::anyhow!("run {:?}: not a localization record: {e}", run.key))
    }

    /// The class key: outcome, defect class, Darwin against the truth.
    pub fn class(&self) -> ClassKey {
        let mut k = ClassKey::new(TECHNIQUE)
            .with_prefixed("outcome", "localize", outcome_name(&self.result))
            .with(
                "class",
                self.result
                    .class
                    .clone()
                    .filter(|c| !c.is_empty())
                    .unwrap_or_else(|| "unknown".into())
                    .replace('|', "/"),
            );
        if let Some(h) = darwin_hit(&self.result) {
            k = k.with_prefixed("darwin", "darwin", h);
        }
        k
    }

    /// The verdict: a finding whose class is the outcome (see the module
    /// docs); its line is Darwin's first root cause in P', if any.
    pub fn verdict(&self) -> Verdict {
        let r = &self.result;
        let darwin_lines: Vec<String> = r
            .darwin
            .iter()
            .flat_map(|d| d.report.entries.iter().map(|e| e.line.to_string()))
            .collect();
        let mut detail = match &r.failing_test {
            Some(t) => format!("P and P' differ on test {t}"),
            None => "no failing test on which P and P' differ".into(),
        };
        if !darwin_lines.is_empty() {
            detail.push_str(&format!("; Darwin blames {}", darwin_lines.join(", ")));
        }
        let reason = outcome_reason(r);
        if !reason.is_empty() {
            detail.push_str(&format!("; {reason}"));
        }
        Verdict::Divergence(Finding {
            class: self.class(),
            action_index: None,
            last_action: None,
            line: r
                .darwin
                .as_ref()
                .and_then(|d| d.report.entries.first())
                .map(|e| e.line.line),
            detail,
        })
    }

    /// The run key: technique, campaign, configuration and case hashes.
    pub fn key(&self, campaign: &str) -> String {
        format!(
            "{TECHNIQUE}|{campaign}|{}|{}",
            self.config.fingerprint(),
            self.case.hash()
        )
    }

    /// The stored run of campaign `campaign`, started at `started_at_ms`.
    pub fn to_run(&self, campaign: &str, started_at_ms: i64) -> RunRecord {
        let (name, text) = &self.case.modified;
        RunRecord {
            id: None,
            key: self.key(campaign),
            technique: TECHNIQUE.into(),
            campaign: campaign.into(),
            subject: Subject {
                name: self.case.name.clone(),
                language: Language::C,
                source: PathBuf::from(name),
                source_name: name.clone(),
                line_count: text.lines().count() as u32,
                binary: None,
                prelude: Vec::new(),
                epilogue: Vec::new(),
                hash: self.case.hash(),
                build: "gcc -O0 --coverage (baselines); clang-16 --target=wasm32-wasi -O0 -g (Darwin)".into(),
            },
            seed: self.config.seed,
            config: serde_json::to_value(self).unwrap_or_default(),
            debuggers: Vec::new(),
            verdict: self.verdict(),
            traces: Vec::new(),
            duration_ms: self.result.seconds * 1000.0,
            started_at_ms,
        }
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_round_trip_as_text_or_hex() {
        for b in [b"3 4\n".to_vec(), vec![0xff, 0, 10]] {
            let j = serde_json::to_string(&Bytes(b.clone())).unwrap();
            assert_eq!(serde_json::from_str::<Bytes>(&j).unwrap().0, b, "{j}");
        }
        assert_eq!(serde_json::to_string(&Bytes(b"a\n".to_vec())).unwrap(), "\"a\\n\"");
        assert_eq!(serde_json::to_string(&Bytes(vec![0xff])).unwrap(), "{\"hex\":\"ff\"}");
    }

    #[test]
    fn stored_names_cannot_leave_the_directory() {
        assert_eq!(safe_name("../../etc/passwd"), ".._.._etc_passwd");
        assert_eq!(safe_name(".."), "program.c");
    }
}
