//! JavaScript conformance as the commands see it
//! ([`doppel_core::technique::Technique`]): a test's run is its expectation,
//! the vote and the engine-by-outcome table; a campaign summary is the
//! engine-by-verdict matrix (a compatibility table), the failure groups and
//! the SBFL rankings. Replay runs the test on a fresh panel; the reproducer
//! is a directory with the test in test262 format, the script as the
//! engines ran it, a plain shell command per engine and each engine's output.

use crate::technique_record::{CLASS_PARTS, ConformRecord, SummaryRecord, TAG, TestRecord};
use crate::verdict::panel::Panel;
use doppel_core::technique::{
    EvidenceRow, EvidenceTable, ReplayAttempt, ReplayReport, Reproducer, RunView, Technique, TechniqueContext,
};
use doppel_core::{ClassPartSpec, RunRecord};
use doppel_engines::EnginesConfig;
use std::path::Path;

/// The conformance technique (JEST, ICSE 2021).
#[derive(Debug, Default, Clone, Copy)]
pub struct Conform;

fn row(cells: Vec<String>, highlight: bool) -> EvidenceRow {
    EvidenceRow { cells, highlight }
}

fn test_view(t: &TestRecord) -> RunView {
    let mut lines = vec![
        format!("test: {}", t.test.name),
        format!(
            "expected: {}",
            t.run
                .expected
                .as_ref()
                .map(|e| e.label())
                .unwrap_or_else(|| "none (engine262 gave no verdict)".into())
        ),
        format!("vote: {}", t.run.vote.summary()),
    ];
    if !t.test.script.features.is_empty() {
        lines.push(format!("features: {}", t.test.script.features.join(", ")));
    }
    for m in &t.missing {
        lines.push(format!("left out: {} ({})", m.engine, m.reason));
    }
    if let Some(r) = &t.reduction {
        lines.push(format!("reduction (group representative): {}", r.summary()));
        for n in &r.notes {
            lines.push(format!("  {n}"));
        }
        if let Some(text) = &r.text {
            lines.push("reduced test:".into());
            for (i, l) in text.lines().take(60).enumerate() {
                lines.push(format!("{:4} | {l}", i + 1));
            }
        }
    }
    lines.push("test file:".into());
    for (i, l) in t.test.text.lines().take(60).enumerate() {
        lines.push(format!("{:4} | {l}", i + 1));
    }
    let mut rows = Vec::new();
    for r in std::iter::once(&t.run.spec).chain(&t.run.results) {
        let detail = match &r.verdict {
            crate::verdict::EngineVerdict::Fail(f) => f.detail.clone(),
            crate::verdict::EngineVerdict::Unsupported { features } => format!("lacks {}", features.join(", ")),
            crate::verdict::EngineVerdict::NoVerdict { reason } => reason.clone(),
            crate::verdict::EngineVerdict::Pass => String::new(),
        };
        rows.push(row(
            vec![
                r.engine.clone(),
                r.family.to_string(),
                r.version.clone(),
                if r.timeout_retried {
                    format!("{} (second run: the first timed out)", r.outcome.label())
                } else {
                    r.outcome.label()
                },
                r.verdict.label(),
                detail.chars().take(300).collect(),
            ],
            r.verdict.failure().is_some(),
        ));
    }
    let mut votes = Vec::new();
    for f in t.run.vote.families.iter().chain(&t.run.vote.transpilers) {
        let v = serde_json::to_value(&f.verdict).unwrap_or_default();
        votes.push(row(
            vec![
                f.family.to_string(),
                f.engines.join(", "),
                v["vote"].as_str().unwrap_or("?").to_string(),
            ],
            !matches!(
                f.verdict,
                crate::verdict::FamilyVerdict::Pass | crate::verdict::FamilyVerdict::Abstain
            ),
        ));
    }
    let mut tables = Vec::new();
    if let Some(r) = t.reduction.as_ref().filter(|r| r.text.is_some()) {
        tables.push(reduced_table(r, "reduced test per engine"));
    }
    RunView {
        lines,
        tables: [
            tables,
            vec![
                EvidenceTable {
                    caption: Some("engines".into()),
                    header: ["engine", "family", "version", "outcome", "verdict", "detail"]
                        .map(String::from)
                        .to_vec(),
                    rows,
                },
                EvidenceTable {
                    caption: Some("family votes".into()),
                    header: ["family", "builds", "vote"].map(String::from).to_vec(),
                    rows: votes,
                },
            ],
        ]
        .concat(),
    }
}

/// The reduced test's per-engine outcome, under `caption`.
pub(crate) fn reduced_table(r: &crate::reduce::Reduction, caption: &str) -> EvidenceTable {
    EvidenceTable {
        caption: Some(caption.into()),
        header: ["engine", "family", "verdict"].map(String::from).to_vec(),
        rows: r
            .engines
            .iter()
            .map(|e| {
                row(
                    vec![e.engine.clone(), e.family.clone(), e.verdict.clone()],
                    e.verdict.starts_with("FAIL"),
                )
            })
            .collect(),
    }
}

fn summary_view(s: &SummaryRecord) -> RunView {
    let mut lines = vec![
        format!(
            "campaign summary: {} tests on {} engines ({} left out), {} files skipped",
            s.tests,
            s.members.len(),
            s.missing.len(),
            s.skipped_count
        ),
        format!(
            "candidates: {}",
            s.candidates
                .iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    ];
    if let Some([a, st, top]) = s.coverage {
        lines.push(format!(
            "engine262 coverage: algorithms {}/{}, steps {}/{}, top-level steps {}/{}",
            a.0, a.1, st.0, st.1, top.0, top.1
        ));
    }
    for m in &s.missing {
        lines.push(format!("left out: {} ({})", m.engine, m.reason));
    }
    for k in s.skipped.iter().take(20) {
        lines.push(format!("skipped: {k}"));
    }
    let matrix = EvidenceTable {
        caption: Some("conformance matrix (tests per verdict)".into()),
        header: ["engine", "pass", "fail", "unsupported", "no verdict", "pass %"]
            .map(String::from)
            .to_vec(),
        rows: s
            .per_engine
            .iter()
            .map(|(n, p, f, u, x)| {
                let judged = p + f;
                let pct = if judged == 0 {
                    "-".into()
                } else {
                    format!("{:.1}", 100.0 * *p as f64 / judged as f64)
                };
                row(
                    vec![
                        n.clone(),
                        p.to_string(),
                        f.to_string(),
                        u.to_string(),
                        x.to_string(),
                        pct,
                    ],
                    false,
                )
            })
            .collect(),
    };
    let groups = EvidenceTable {
        caption: Some("failure groups (family, failure, blamed algorithm)".into()),
        header: [
            "candidate",
            "family",
            "failure",
            "algorithm",
            "tests",
            "known",
            "representative",
            "reduction",
        ]
        .map(String::from)
        .to_vec(),
        rows: s
            .groups
            .iter()
            .map(|g| {
                let known = match (g.known, &g.known_by) {
                    (Some(true), Some(by)) => format!("known ({by})"),
                    (Some(true), None) => "known".into(),
                    (Some(false), _) => "new".into(),
                    (None, _) => "-".into(),
                };
                row(
                    vec![
                        g.candidate.clone(),
                        g.family.clone(),
                        g.failure.clone(),
                        g.algorithm.clone().unwrap_or_else(|| "-".into()),
                        g.tests.len().to_string(),
                        known,
                        format!(
                            "{}{}",
                            g.tests.first().cloned().unwrap_or_default(),
                            g.representative_run.map(|i| format!(" (run {i})")).unwrap_or_default()
                        ),
                        g.reduction.as_ref().map(|r| r.summary()).unwrap_or_else(|| "-".into()),
                    ],
                    g.known == Some(false),
                )
            })
            .collect(),
    };
    let sbfl = EvidenceTable {
        caption: Some("SBFL over engine262 algorithms (step scores aggregated by maximum)".into()),
        header: ["target", "formula", "failing/passing", "top algorithms"]
            .map(String::from)
            .to_vec(),
        rows: s
            .localizations
            .iter()
            .map(|l| {
                let mut top: Vec<String> = l
                    .top
                    .iter()
                    .take(5)
                    .map(|e| format!("{} ({:.2}, rank {})", e.element, e.score, e.rank))
                    .collect();
                if let Some(f) = &l.true_fault {
                    top.push(format!("true fault {}: rank {} of {}", f.element, f.rank, l.ranked));
                }
                row(
                    vec![
                        l.target.clone(),
                        l.formula.clone(),
                        format!("{}/{}", l.failing, l.passing),
                        top.join("\n"),
                    ],
                    false,
                )
            })
            .collect(),
    };
    RunView {
        lines,
        tables: vec![matrix, groups, sbfl],
    }
}

#[async_trait::async_trait]
impl Technique for Conform {
    fn tag(&self) -> &'static str {
        TAG
    }

    fn title(&self) -> &'static str {
        "JavaScript conformance: N+1-version differential testing (JEST, ICSE 2021)"
    }

    fn class_parts(&self) -> &'static [ClassPartSpec] {
        CLASS_PARTS
    }

    fn class_legend(&self) -> &'static str {
        "conform:candidate (engine_bug: few families fail; spec_bug: most fail; engine262_bug: engine262 \
         fails a test262 test most pass; transpiler_bug: a transpiler's output fails where the engines and \
         untranspiled V8 agree) | failing families | failure (assert.<kind>, exception kind, crash, \
         timeout) | the test's first test262 feature"
    }

    fn view(&self, run: &RunRecord) -> anyhow::Result<RunView> {
        Ok(match ConformRecord::of(run)? {
            ConformRecord::Test(t) => test_view(&t),
            ConformRecord::Summary(s) => summary_view(&s),
        })
    }

    fn parameters(&self, run: &RunRecord) -> Vec<(String, String)> {
        let Ok(rec) = ConformRecord::of(run) else {
            return Vec::new();
        };
        let (config, members) = match &rec {
            ConformRecord::Test(t) => (&t.config, &t.members),
            ConformRecord::Summary(s) => (&s.config, &s.members),
        };
        vec![
            ("seed".into(), config.seed.to_string()),
            (
                "engines".into(),
                members
                    .iter()
                    .map(|m| m.info.name.clone())
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            ("coverage".into(), config.panel.coverage.to_string()),
        ]
    }

    async fn replay(&self, run: &RunRecord, _ctx: &TechniqueContext, times: usize) -> anyhow::Result<ReplayReport> {
        let ConformRecord::Test(t) = ConformRecord::of(run)? else {
            anyhow::bail!("a campaign summary is not replayed; replay one of its tests");
        };
        if t.test.script.source.is_empty() {
            anyhow::bail!("the record keeps no prepared script (only findings do); run the test file again");
        }
        let mut panel_cfg = t.config.panel.clone();
        panel_cfg.engines = t.members.iter().map(|m| m.info.name.clone()).collect();
        let mut panel = Panel::new(&panel_cfg, &EnginesConfig::default())?;
        let stored = t.run.vote.summary();
        let stored_key = crate::technique_record::class_key(&t.run, &t.test.script.features).map(|k| k.to_string());
        let mut attempts = Vec::new();
        for _ in 0..times.max(1) {
            let again = panel.run(&t.test).await;
            let key = crate::technique_record::class_key(&again, &t.test.script.features).map(|k| k.to_string());
            attempts.push(ReplayAttempt {
                reproduces: key == stored_key,
                got: again.vote.summary(),
                notes: Vec::new(),
            });
        }
        panel.shutdown().await;
        Ok(ReplayReport {
            stored,
            notes: Vec::new(),
            attempts,
        })
    }

    async fn report_pages(
        &self,
        store: &doppel_core::store::Store,
        filter: &doppel_core::store::RunFilter,
    ) -> anyhow::Result<Vec<doppel_core::technique::ReportPage>> {
        crate::technique_pages::pages(store, filter).await
    }

    fn reduced_reproducer(&self, run: &RunRecord) -> Option<String> {
        let ConformRecord::Test(t) = ConformRecord::of(run).ok()? else {
            return None;
        };
        let r = t.reduction.as_ref()?;
        let text = r.text.as_ref()?;
        let mut s = format!("{}\n{text}\nper engine:\n", r.summary());
        for e in &r.engines {
            s.push_str(&format!("  {} ({}): {}\n", e.engine, e.family, e.verdict));
        }
        Some(s)
    }

    async fn repro(&self, run: &RunRecord, _ctx: &TechniqueContext, out: &Path) -> anyhow::Result<Reproducer> {
        let ConformRecord::Test(t) = ConformRecord::of(run)? else {
            anyhow::bail!("a campaign summary has no reproducer; use one of its tests");
        };
        crate::technique_repro::write(&t, out)
    }
}
