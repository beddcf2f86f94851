//! A localization case for people ([`RunView`]): what `doppel localize`
//! and `doppel show` print and the HTML report renders. Darwin's ranked
//! root causes with their source lines and witnesses (alternate inputs and
//! both programs' outputs on them), the baselines' reports beside it, and
//! P and P' side by side (aligned by a line diff) with the root-cause
//! lines highlighted.

use crate::record::{LocalizeRecord, outcome_name, outcome_reason};
use crate::truth::{Line, Side};
use doppel_core::technique::{EvidenceRow, EvidenceTable, RunView};
use similar::{DiffOp, capture_diff_slices};
use std::collections::BTreeSet;

/// Longest text shown in one cell (inputs and outputs are cut, marked).
const CELL: usize = 400;

fn cut(s: &str) -> String {
    if s.len() <= CELL {
        return s.to_string();
    }
    let mut end = CELL;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... [{} bytes]", &s[..end], s.len())
}

/// Bytes as text for a cell, the final newline dropped.
fn text(b: &[u8]) -> String {
    cut(String::from_utf8_lossy(b).trim_end_matches('\n'))
}

/// The source text of `line` (`P'` or `P`), trimmed.
pub fn source_line(rec: &LocalizeRecord, line: Line) -> String {
    let src = match line.side {
        Side::Modified => &rec.case.modified.1,
        Side::Reference => &rec.case.reference.1,
    };
    src.lines()
        .nth((line.line as usize).saturating_sub(1))
        .unwrap_or("")
        .trim()
        .to_string()
}

/// The view; `side_by_side` adds the two programs aligned (long: the
/// report and `doppel show` include it, the command line's summary not).
pub fn view(rec: &LocalizeRecord, side_by_side: bool) -> RunView {
    let r = &rec.result;
    let mut lines = vec![format!(
        "case {} (defect class {}): {}",
        r.name,
        r.class.as_deref().filter(|c| !c.is_empty()).unwrap_or("unknown"),
        outcome_name(r)
    )];
    let reason = outcome_reason(r);
    if !reason.is_empty() {
        lines.push(format!("  {reason}"));
    }
    lines.push(format!(
        "P = {}, P' = {}; budget {}s, seed {}; {:.2}s (Darwin {:.2}s)",
        rec.case.reference.0, rec.case.modified.0, rec.config.budget_secs, rec.config.seed, r.seconds, r.darwin_seconds
    ));
    if !rec.case.args.is_empty() {
        lines.push(format!("command line of every run: {:?}", rec.case.args));
    }
    if let Some(t) = &r.failing_test {
        let input = rec.case.test_input(t).map(text).unwrap_or_default();
        lines.push(format!("t = {t}: {:?}", input));
        if let Some((p, q)) = &r.outputs_on_t {
            lines.push(format!("  P prints  {:?}", cut(p)));
            lines.push(format!("  P' prints {:?}", cut(q)));
        }
    }
    if let Some(d) = &r.darwin {
        let s = &d.stats;
        lines.push(format!(
            "Darwin: {} candidate branches, {} ruled out by the cheap check, {} queries ({} sat, {} unknown), \
             {} validated; path conditions {} / {} entries, {} / {} instructions",
            s.candidates,
            s.precheck_unsat,
            s.queries,
            s.sat,
            s.unknown,
            s.validated,
            s.path_lengths.0,
            s.path_lengths.1,
            s.instructions.0,
            s.instructions.1
        ));
    }
    if !r.truth.lines.is_empty() {
        let t: Vec<String> = r.truth.lines.iter().map(|l| l.to_string()).collect();
        lines.push(format!("ground truth (the fix's lines): {}", t.join(", ")));
    }
    if !r.skipped.is_empty() {
        lines.push(format!(
            "{} tests not used (first: {} - {})",
            r.skipped.len(),
            r.skipped[0].0,
            r.skipped[0].1
        ));
    }
    let mut tables = vec![causes_table(rec), baselines_table(rec)];
    if side_by_side {
        tables.push(side_by_side_table(rec));
    }
    RunView { lines, tables }
}

/// Darwin's root causes, ranked, with source lines and witnesses.
fn causes_table(rec: &LocalizeRecord) -> EvidenceTable {
    let mut rows = Vec::new();
    if let Some(d) = &rec.result.darwin {
        for e in &d.report.entries {
            let Some(c) = d.causes.iter().find(|c| c.line == e.line) else {
                continue;
            };
            let w = &c.witness;
            rows.push(EvidenceRow {
                cells: vec![
                    format!("{}", e.rank.average),
                    e.line.to_string(),
                    source_line(rec, e.line),
                    c.kind().into(),
                    c.function.clone(),
                    text(&w.input),
                    text(w.reference_output.as_bytes()),
                    text(w.modified_output.as_bytes()),
                    if w.successful { "agree" } else { "differ" }.into(),
                ],
                highlight: rec.result.truth.contains(&e.line),
            });
        }
    }
    EvidenceTable {
        caption: Some(
            "Darwin's root causes (highlighted: a faulty line of the ground truth; the witness is an \
             alternate input t' for a deviation, t itself for a critical predicate or a divergence point)"
                .into(),
        ),
        header: [
            "rank",
            "line",
            "source",
            "kind",
            "function",
            "witness input",
            "P on it",
            "P' on it",
            "P, P' on it",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    }
}

/// Every report's size, measure and first lines.
fn baselines_table(rec: &LocalizeRecord) -> EvidenceTable {
    let rows = rec
        .result
        .reports
        .iter()
        .map(|(rep, m)| {
            let first: Vec<String> = rep.entries.iter().take(5).map(|e| e.line.to_string()).collect();
            let more = if rep.entries.len() > 5 { ", ..." } else { "" };
            EvidenceRow {
                cells: vec![
                    rep.technique.clone(),
                    rep.entries.len().to_string(),
                    format!("{}{more}", first.join(", ")),
                    match m {
                        Some(m) if m.hit => format!("rank {}", m.first_rank.unwrap_or(0.0)),
                        Some(_) => "missed".into(),
                        None => "-".into(),
                    },
                ],
                highlight: rep.technique == "darwin",
            }
        })
        .collect();
    EvidenceTable {
        caption: Some("Reports (Darwin and the baselines)".into()),
        header: ["technique", "lines", "top lines", "first faulty line"]
            .map(String::from)
            .to_vec(),
        rows,
    }
}

/// P and P' aligned by a line diff; rows with a root-cause line (either
/// side) highlighted, marked `>`; ground-truth lines marked `*`.
pub fn side_by_side_table(rec: &LocalizeRecord) -> EvidenceTable {
    let p: Vec<&str> = rec.case.reference.1.lines().collect();
    let q: Vec<&str> = rec.case.modified.1.lines().collect();
    let blamed: BTreeSet<Line> = rec
        .result
        .darwin
        .iter()
        .flat_map(|d| d.report.entries.iter().map(|e| e.line))
        .collect();
    let truth = &rec.result.truth;
    let cell = |side: Side, i: Option<usize>, src: &[&str]| -> (String, String, bool) {
        match i {
            None => (String::new(), String::new(), false),
            Some(i) => {
                let l = Line {
                    side,
                    line: i as u32 + 1,
                };
                let mark = match (blamed.contains(&l), truth.contains(&l)) {
                    (true, true) => ">*",
                    (true, false) => "> ",
                    (false, true) => " *",
                    _ => "  ",
                };
                (format!("{mark}{}", i + 1), src[i].to_string(), blamed.contains(&l))
            }
        }
    };
    let mut rows = Vec::new();
    let mut push = |a: Option<usize>, b: Option<usize>| {
        let (pn, ps, ph) = cell(Side::Reference, a, &p);
        let (qn, qs, qh) = cell(Side::Modified, b, &q);
        rows.push(EvidenceRow {
            cells: vec![pn, qn, ps, qs],
            highlight: ph || qh,
        });
    };
    for op in capture_diff_slices(similar::Algorithm::Myers, &p, &q) {
        match op {
            DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => (0..len).for_each(|k| push(Some(old_index + k), Some(new_index + k))),
            DiffOp::Delete { old_index, old_len, .. } => (0..old_len).for_each(|k| push(Some(old_index + k), None)),
            DiffOp::Insert { new_index, new_len, .. } => (0..new_len).for_each(|k| push(None, Some(new_index + k))),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => (0..old_len.max(new_len)).for_each(|k| {
                push(
                    (k < old_len).then_some(old_index + k),
                    (k < new_len).then_some(new_index + k),
                )
            }),
        }
    }
    EvidenceTable {
        caption: Some(
            "P and P' side by side (> Darwin's root cause, highlighted; * a faulty line of the ground truth)".into(),
        ),
        header: ["P", "P'", "reference P", "modified P'"].map(String::from).to_vec(),
        rows,
    }
}
