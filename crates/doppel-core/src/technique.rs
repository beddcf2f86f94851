//! The technique seam: what every command needs from a technique, so that no
//! command matches on technique names.
//!
//! A technique (differential testing, metamorphic testing, debug-information
//! validation, later conformance testing of engines or regression
//! localization) owns its record types: its configuration and its evidence,
//! serialized into [`RunRecord::config`] (and, for debugger techniques, the
//! traces), and its class key parts ([`ClassPartSpec`]). The writer and every
//! reader use the same types, in the technique's crate. This trait is how the
//! commands reach them: `doppel-cli`'s registry holds one implementation per
//! technique (one line each), and `show`, `replay`, `repro`, `classes`,
//! `sample`, `reclassify` and `report` look the implementation up by
//! [`RunRecord::technique`] (the tag).
//!
//! Views are plain text tables ([`RunView`]): the terminal and the HTML
//! report render the same view, so a technique's evidence looks alike in
//! both.

use crate::model::{ClassKey, ClassPartSpec, Verdict};
use crate::rootcause::RootCause;
use crate::run::RunRecord;
use crate::store::{RunFilter, Store};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// One row of an [`EvidenceTable`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvidenceRow {
    /// One text per column (may hold newlines).
    pub cells: Vec<String>,
    /// Whether this row is where the finding is (shown red).
    pub highlight: bool,
}

/// A table of what a run saw: a debugger trace side by side, a session's
/// checks, an engine's outcomes, ranked root-cause lines, ...
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct EvidenceTable {
    /// A caption (`initial`, `follow-up`), if the run has several tables.
    pub caption: Option<String>,
    /// Column headers.
    pub header: Vec<String>,
    /// The rows.
    pub rows: Vec<EvidenceRow>,
}

/// A run for people: lines of text (configuration, the finding's detail),
/// then tables. `doppel show` prints it, the HTML report renders it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RunView {
    /// Lines before the tables.
    pub lines: Vec<String>,
    /// The evidence.
    pub tables: Vec<EvidenceTable>,
}

/// A page of the HTML report a technique adds ([`Technique::report_pages`]),
/// rendered as a run view is and linked from the first page.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ReportPage {
    /// The file name (`conform-matrix-1.html`): letters, digits, `-`, `_`, `.` only.
    pub file: String,
    /// Its heading and link text.
    pub title: String,
    /// Its content.
    pub view: RunView,
}

/// What a technique needs from the command line's environment.
#[derive(Debug, Clone)]
pub struct TechniqueContext {
    /// The open store.
    pub store: Store,
    /// The build cache directory of this store (`<store dir>/cache`).
    pub cache_dir: PathBuf,
}

/// One replay of a stored run.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayAttempt {
    /// Whether the stored verdict came back.
    pub reproduces: bool,
    /// The verdict of the replay, for people.
    pub got: String,
    /// Remarks (another compiler version, the transformation applied).
    pub notes: Vec<String>,
}

/// The replays of a stored run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReplayReport {
    /// The stored verdict, for people.
    pub stored: String,
    /// Remarks that hold for every attempt (an option replayed as it is today).
    pub notes: Vec<String>,
    /// The attempts, in order.
    pub attempts: Vec<ReplayAttempt>,
}

/// A reproducer written by [`Technique::repro`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reproducer {
    /// The files written.
    pub files: Vec<PathBuf>,
    /// What to do with them, for people (`run sh DIR/run.sh ...`).
    pub how: String,
}

/// How [`Technique::reduce`] reduces a finding (issue 17, item 5).
#[derive(Debug, Clone)]
pub struct ReduceOptions {
    /// Wall-time budget of each step (delta debugging of the actions, then
    /// program reduction).
    pub budget: std::time::Duration,
    /// Whether the program is reduced too (C: C-Vise), after the actions.
    pub program: bool,
    /// The `doppel` executable an interestingness script calls.
    pub doppel_exe: PathBuf,
    /// A directory for the reduction's files (scripts, C-Vise's variants).
    pub work_dir: PathBuf,
}

/// A reduced finding.
#[derive(Debug, Clone)]
pub struct Reduction {
    /// The run with its reduced case in its record, to be stored again
    /// (same key: the stored run is replaced and keeps its id).
    pub run: RunRecord,
    /// For people: `reduced: 3 of 14 actions, 12 of 180 lines (...)`.
    pub summary: String,
    /// Actions of the reduced case and of the original up to its finding.
    pub actions: (usize, usize),
    /// Lines of the reduced program and of the original.
    pub lines: (usize, usize),
    /// Wall time of the whole reduction, milliseconds.
    pub elapsed_ms: f64,
}

/// A technique, as the commands see it. Object safe: the registry holds
/// `Box<dyn Technique>`.
#[async_trait::async_trait]
pub trait Technique: Send + Sync {
    /// The tag its runs are stored under ([`RunRecord::technique`],
    /// [`ClassKey::technique`]).
    fn tag(&self) -> &'static str;

    /// A heading for reports (`Differential testing (DBDB, FSE 2018)`).
    fn title(&self) -> &'static str;

    /// The layout of its class keys (for tables and [`ClassKey::parse`]).
    fn class_parts(&self) -> &'static [ClassPartSpec];

    /// A sentence explaining its class keys, for the report.
    fn class_legend(&self) -> &'static str;

    /// A reading of a class, if the technique knows one (a known policy
    /// difference).
    fn class_note(&self, _key: &ClassKey) -> Option<String> {
        None
    }

    /// The run for people: its configuration, finding and evidence.
    /// Errors: a record this technique's types cannot read.
    fn view(&self, run: &RunRecord) -> anyhow::Result<RunView>;

    /// The campaign parameters of a run, as (name, value), for the report.
    fn parameters(&self, _run: &RunRecord) -> Vec<(String, String)> {
        Vec::new()
    }

    /// Runs the stored run again `times` times with its seed and
    /// configuration. Errors: the run cannot be replayed (no input stored,
    /// tool missing), not a replay that differs.
    async fn replay(&self, run: &RunRecord, ctx: &TechniqueContext, times: usize) -> anyhow::Result<ReplayReport>;

    /// Writes a stand-alone reproducer of the run into `out`.
    async fn repro(&self, run: &RunRecord, ctx: &TechniqueContext, out: &Path) -> anyhow::Result<Reproducer>;

    /// Reduces the run's finding (`doppel reduce`, a campaign's `--reduce`).
    /// `Ok(None)`: the technique does not reduce its findings this way (the
    /// default). Errors: the run is not a finding, cannot be replayed, or
    /// does not reproduce.
    async fn reduce(
        &self,
        _run: &RunRecord,
        _ctx: &TechniqueContext,
        _options: &ReduceOptions,
    ) -> anyhow::Result<Option<Reduction>> {
        Ok(None)
    }

    /// The test of one program variant during program reduction, run by
    /// the reducer's interestingness check through `doppel reduce-probe`:
    /// `case_json` is the probe case this technique's reduction wrote
    /// beside the variant, `text` the variant (with its markers).
    /// `Ok(Ok(()))`: the variant is the same finding; `Ok(Err(why))`: it is
    /// not.
    ///
    /// Errors: the technique does not reduce programs (the default), the
    /// case is malformed, the tool under test cannot be started.
    async fn probe_variant(&self, _case_json: &str, _text: &str) -> anyhow::Result<Result<(), String>> {
        anyhow::bail!("technique {} does not reduce programs", self.tag())
    }

    /// Extra pages of the HTML report for the runs matching `filter`
    /// (a conformance campaign's engine-by-test matrix and its failure
    /// groups), generated from stored records; none by default.
    ///
    /// Errors: store errors, unreadable records.
    async fn report_pages(&self, _store: &Store, _filter: &RunFilter) -> anyhow::Result<Vec<ReportPage>> {
        Ok(Vec::new())
    }

    /// Whether `doppel reclassify` re-judges this technique's runs.
    fn reclassifies(&self) -> bool {
        false
    }

    /// The verdict the current rules give a stored divergent run, without
    /// running a tool; `None` when it cannot be re-judged (or the technique
    /// does not re-judge).
    fn reclassify(&self, _run: &RunRecord) -> Option<Verdict> {
        None
    }

    /// What caused a divergent run's finding ([`crate::rootcause`]): runs
    /// with equal causes are one root cause, however many classes they
    /// span. `None` for a run without a finding. The default is the class
    /// key itself ([`RootCause::from_class`]).
    fn root_cause(&self, run: &RunRecord) -> Option<RootCause> {
        run.verdict.finding().map(|f| RootCause::from_class(&f.class))
    }

    /// The run's reduced reproducer (a reduced program, a reduced action
    /// sequence), as text for people, when one is stored; `None` otherwise.
    fn reduced_reproducer(&self, _run: &RunRecord) -> Option<String> {
        None
    }
}
