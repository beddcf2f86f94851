//! The conformance pages of the HTML report (issue 15 part 9), generated
//! from stored records: per campaign summary, the engine-by-test matrix
//! (rows tests, columns engine262 then the engines, cells the verdict with
//! the failed assertion kind; first a compatibility row per engine: pass
//! rate over the tests it judged, from the summary's totals) and one page
//! per failure group (its key, tests, and the representative's reduced test
//! with its per-engine outcome, [`crate::reduce`]).

use crate::technique_record::{ConformRecord, GroupRecord, SummaryRecord, TAG, TestRecord};
use doppel_core::store::{RunFilter, Store};
use doppel_core::technique::{EvidenceRow, EvidenceTable, ReportPage, RunView};

/// Test rows shown per matrix page at most: every finding, then the
/// other tests by id up to this many rows (a test262 campaign has tens of
/// thousands; the page says how many are left out).
pub const MATRIX_ROWS: usize = 2000;

/// Campaign summaries looked at, at most (the latest per campaign is used).
const SUMMARIES: usize = 10_000;

fn row(cells: Vec<String>, highlight: bool) -> EvidenceRow {
    EvidenceRow { cells, highlight }
}

/// The report pages of the conformance campaigns among the runs matching
/// `filter`: for the latest summary of each campaign, its matrix page and
/// its group pages.
///
/// Errors: store errors.
pub async fn pages(store: &Store, filter: &RunFilter) -> anyhow::Result<Vec<ReportPage>> {
    if filter.technique.as_deref().is_some_and(|t| t != TAG) {
        return Ok(Vec::new());
    }
    let f = RunFilter {
        technique: Some(TAG.into()),
        campaign: filter.campaign.clone(),
    };
    let mut latest: Vec<(String, i64, SummaryRecord)> = Vec::new();
    for id in store
        .run_ids_by_key(&f, &format!("{TAG}|%|summary|%"), SUMMARIES)
        .await?
    {
        let Some(run) = store.run(id).await? else { continue };
        let Ok(ConformRecord::Summary(s)) = ConformRecord::of(&run) else {
            continue;
        };
        latest.retain(|(c, _, _)| *c != run.campaign);
        latest.push((run.campaign.clone(), id, *s));
    }
    let mut out = Vec::new();
    for (campaign, sid, summary) in latest {
        let cf = RunFilter {
            technique: Some(TAG.into()),
            campaign: Some(campaign.clone()),
        };
        let mut ids = store.divergent_run_ids(&cf).await?;
        let findings = ids.len();
        let all = store
            .run_ids_by_key(&cf, &format!("{TAG}|%"), MATRIX_ROWS + SUMMARIES)
            .await?;
        for id in all {
            if ids.len() >= MATRIX_ROWS.max(findings) {
                break;
            }
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        let mut tests = Vec::new();
        for id in ids {
            if let Some(run) = store.run(id).await?
                && let Ok(ConformRecord::Test(t)) = ConformRecord::of(&run)
            {
                tests.push((id, *t));
            }
        }
        out.push(matrix_page(&campaign, sid, &summary, &tests));
        for (i, g) in summary.groups.iter().enumerate() {
            out.push(group_page(&campaign, sid, i + 1, g));
        }
    }
    Ok(out)
}

/// The file of a campaign's matrix page.
pub fn matrix_file(summary_id: i64) -> String {
    format!("conform-matrix-{summary_id}.html")
}

/// The file of a campaign's `n`-th group page (1-based).
pub fn group_file(summary_id: i64, n: usize) -> String {
    format!("conform-group-{summary_id}-{n}.html")
}

/// The engine-by-test matrix of a campaign.
pub fn matrix_page(campaign: &str, summary_id: i64, s: &SummaryRecord, tests: &[(i64, TestRecord)]) -> ReportPage {
    // Columns: engine262, then the engines in the summary's (panel) order.
    let mut engines: Vec<String> = vec!["engine262".into()];
    engines.extend(
        s.per_engine
            .iter()
            .map(|(n, ..)| n.clone())
            .filter(|n| n != "engine262"),
    );
    let mut header = vec!["test".to_string(), "run".into(), "candidate".into()];
    header.extend(engines.iter().cloned());
    let mut rows = Vec::new();
    // The compatibility table as one row: pass rate over the judged tests.
    let mut compat = vec![
        format!("all {} tests", s.tests),
        "-".into(),
        "pass % (pass/judged)".into(),
    ];
    for e in &engines {
        compat.push(match s.per_engine.iter().find(|(n, ..)| n == e) {
            Some((_, p, f, u, x)) if p + f > 0 => format!(
                "{:.1}% ({p}/{}; {u} unsupported, {x} no verdict)",
                100.0 * *p as f64 / (p + f) as f64,
                p + f
            ),
            Some((_, _, _, u, x)) => format!("- (0 judged; {u} unsupported, {x} no verdict)"),
            None => "-".into(),
        });
    }
    rows.push(row(compat, false));
    for (id, t) in tests {
        let mut cells = vec![
            t.test.name.clone(),
            id.to_string(),
            t.run.vote.candidate.name().to_string(),
        ];
        for e in &engines {
            let r = std::iter::once(&t.run.spec)
                .chain(&t.run.results)
                .find(|r| r.engine == *e);
            cells.push(r.map(|r| r.verdict.label()).unwrap_or_else(|| "-".into()));
        }
        rows.push(row(cells, t.run.vote.candidate.is_finding()));
    }
    let shown = tests.len();
    let lines = vec![
        format!(
            "campaign {campaign}: {} tests on {} engines plus engine262 (summary run {summary_id}); {shown} rows shown{}",
            s.tests,
            s.members.len(),
            if shown < s.tests {
                format!(" (every finding, then the first tests by run id up to {MATRIX_ROWS})")
            } else {
                String::new()
            }
        ),
        "cells: pass, FAIL <failure> (assert.<kind> names the failed test262 assertion), unsupported (a feature the engine lacks), no verdict (its host failed); findings are highlighted".into(),
        format!(
            "failure groups: {} (pages {})",
            s.groups.len(),
            if s.groups.is_empty() {
                "-".into()
            } else {
                format!("{} .. {}", group_file(summary_id, 1), group_file(summary_id, s.groups.len()))
            }
        ),
    ];
    let groups = EvidenceTable {
        caption: Some("failure groups and their reduced representatives".into()),
        header: ["#", "page", "candidate", "family", "failure", "tests", "reduction"]
            .map(String::from)
            .to_vec(),
        rows: s
            .groups
            .iter()
            .enumerate()
            .map(|(i, g)| {
                row(
                    vec![
                        (i + 1).to_string(),
                        group_file(summary_id, i + 1),
                        g.candidate.clone(),
                        g.family.clone(),
                        g.failure.clone(),
                        g.tests.len().to_string(),
                        g.reduction.as_ref().map(|r| r.summary()).unwrap_or_else(|| "-".into()),
                    ],
                    g.known == Some(false),
                )
            })
            .collect(),
    };
    ReportPage {
        file: matrix_file(summary_id),
        title: format!("Conformance matrix: campaign {campaign} (engine by test)"),
        view: RunView {
            lines,
            tables: vec![
                EvidenceTable {
                    caption: Some("engine-by-test matrix".into()),
                    header,
                    rows,
                },
                groups,
            ],
        },
    }
}

/// The page of a campaign's `n`-th failure group.
pub fn group_page(campaign: &str, summary_id: i64, n: usize, g: &GroupRecord) -> ReportPage {
    let mut lines = vec![
        format!("candidate: {}", g.candidate),
        format!("family: {}", g.family),
        format!("failure: {}", g.failure),
        format!("blamed algorithm: {}", g.algorithm.as_deref().unwrap_or("-")),
        format!(
            "known: {}",
            match (g.known, &g.known_by) {
                (Some(true), Some(by)) => format!("known ({by})"),
                (Some(true), None) => "known".into(),
                (Some(false), _) => "new".into(),
                (None, _) => "not checked (no test262 matrix)".into(),
            }
        ),
        format!(
            "{} tests; representative {}{}",
            g.tests.len(),
            g.tests.first().cloned().unwrap_or_default(),
            g.representative_run
                .map(|i| format!(" (run {i}: doppel show {i}; doppel repro {i} --out repro-{i})"))
                .unwrap_or_default()
        ),
    ];
    for t in g.tests.iter().skip(1).take(20) {
        lines.push(format!("  also: {t}"));
    }
    let mut tables = Vec::new();
    match &g.reduction {
        None => lines.push("reduction: none (--no-reduce, or the campaign predates reduction)".into()),
        Some(r) => {
            lines.push(format!("reduction: {}", r.summary()));
            lines.extend(r.notes.iter().map(|n| format!("  {n}")));
            if let Some(text) = &r.text {
                lines.push("reduced test (test262 format):".into());
                lines.extend(text.lines().enumerate().map(|(i, l)| format!("{:4} | {l}", i + 1)));
            }
            let caption = if r.text.is_some() {
                "the reduced test per engine"
            } else {
                "the representative per engine"
            };
            tables.push(crate::technique::reduced_table(r, caption));
        }
    }
    ReportPage {
        file: group_file(summary_id, n),
        title: format!(
            "Conformance group {n} of campaign {campaign}: {} {} {}",
            g.candidate, g.family, g.failure
        ),
        view: RunView { lines, tables },
    }
}
