//! What a corpus run shows per technique: the share of measured cases
//! whose faulty line is in the report, ranked first (top 1, 3, 5; average
//! ties), report size (median, p90), per defect class, and the outcomes.

use crate::case::{CaseResult, Outcome};
use crate::darwin::DarwinOutcome;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One technique's figures over a set of measured cases.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TechniqueSummary {
    /// The technique.
    pub technique: String,
    /// Measured cases.
    pub cases: usize,
    /// Cases whose report holds a faulty line.
    pub hits: usize,
    /// Cases whose first faulty line is at (average) rank <= 1, 3, 5.
    pub top: [usize; 3],
    /// Median report size (lines).
    pub size_median: f64,
    /// 90th percentile of the report size.
    pub size_p90: f64,
}

/// The `q`-quantile (0..=1) of `v` by the nearest-rank method; 0 for none.
pub fn quantile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let rank = ((q * s.len() as f64).ceil() as usize).clamp(1, s.len());
    s[rank - 1]
}

/// Per technique (in first-seen order) over `results` with measures.
pub fn per_technique(results: &[&CaseResult]) -> Vec<TechniqueSummary> {
    let mut order = Vec::new();
    let mut by: BTreeMap<String, Vec<crate::report::Measures>> = BTreeMap::new();
    for r in results {
        for (rep, m) in &r.reports {
            if let Some(m) = m {
                if !by.contains_key(&rep.technique) {
                    order.push(rep.technique.clone());
                }
                by.entry(rep.technique.clone()).or_default().push(*m);
            }
        }
    }
    order
        .into_iter()
        .map(|t| {
            let ms = &by[&t];
            let sizes: Vec<f64> = ms.iter().map(|m| m.size as f64).collect();
            TechniqueSummary {
                technique: t,
                cases: ms.len(),
                hits: ms.iter().filter(|m| m.hit).count(),
                top: [1, 3, 5].map(|n| ms.iter().filter(|m| m.top(n)).count()),
                size_median: quantile(&sizes, 0.5),
                size_p90: quantile(&sizes, 0.9),
            }
        })
        .collect()
}

/// A Markdown report: outcomes, seconds per case, the technique table over
/// all measured cases, and hits / top-1 per class.
pub fn markdown(results: &[CaseResult]) -> String {
    let mut out = String::new();
    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    for r in results {
        let k = match &r.outcome {
            Outcome::Analyzed => match r.darwin.as_ref().map(|d| &d.outcome) {
                None => "analyzed (baselines only)",
                Some(DarwinOutcome::Localized) => "darwin: localized",
                Some(DarwinOutcome::NoDeviationFound) => "darwin: no deviation found",
                Some(DarwinOutcome::FirstDivergence { .. }) => "darwin: first divergence on t",
                Some(DarwinOutcome::BudgetSpent { .. }) => "darwin: budget spent",
                Some(DarwinOutcome::UnsupportedInstruction { .. }) => "darwin: unsupported instruction",
                Some(DarwinOutcome::Agree) => "darwin: P and P' agree on t under wasm",
                Some(DarwinOutcome::BuildFailure { .. }) => "darwin: wasm build failure",
                Some(DarwinOutcome::SolverFailure { .. }) => "darwin: solver failure",
            },
            Outcome::Agree { .. } => "P and P' agree on t",
            Outcome::BuildFailure { .. } => "build failure",
            Outcome::NoUsableTest { .. } => "no usable test",
        };
        *outcomes.entry(k.into()).or_default() += 1;
    }
    let _ = writeln!(out, "Cases: {}. Outcomes:", results.len());
    for (k, n) in &outcomes {
        let _ = writeln!(out, "- {k}: {n}");
    }
    let secs: Vec<f64> = results.iter().map(|r| r.seconds).collect();
    let dsecs: Vec<f64> = results
        .iter()
        .filter(|r| r.darwin.is_some())
        .map(|r| r.darwin_seconds)
        .collect();
    let _ = writeln!(
        out,
        "\nSeconds per case (all techniques): median {:.2}, p90 {:.2}; Darwin alone (wasm builds included): median {:.2}, p90 {:.2}.\n",
        quantile(&secs, 0.5),
        quantile(&secs, 0.9),
        quantile(&dsecs, 0.5),
        quantile(&dsecs, 0.9)
    );
    let measured: Vec<&CaseResult> = results
        .iter()
        .filter(|r| r.reports.iter().any(|(_, m)| m.is_some()))
        .collect();
    let _ = writeln!(
        out,
        "| technique | cases | faulty line in report | top-1 | top-3 | top-5 | size median | size p90 |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|");
    for s in per_technique(&measured) {
        let pct = |n: usize| format!("{n} ({:.0} %)", 100.0 * n as f64 / s.cases.max(1) as f64);
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            s.technique,
            s.cases,
            pct(s.hits),
            pct(s.top[0]),
            pct(s.top[1]),
            pct(s.top[2]),
            s.size_median,
            s.size_p90
        );
    }
    let mut classes: BTreeMap<String, Vec<&CaseResult>> = BTreeMap::new();
    for r in &measured {
        classes
            .entry(r.class.clone().unwrap_or_else(|| "-".into()))
            .or_default()
            .push(r);
    }
    let _ = writeln!(out, "\nPer class (faulty line in report / top-1):\n");
    let techniques: Vec<String> = per_technique(&measured).into_iter().map(|s| s.technique).collect();
    let _ = writeln!(out, "| class | cases | {} |", techniques.join(" | "));
    let _ = writeln!(out, "|---|---|{}", "---|".repeat(techniques.len()));
    for (c, rs) in &classes {
        let per: BTreeMap<String, TechniqueSummary> = per_technique(rs)
            .into_iter()
            .map(|s| (s.technique.clone(), s))
            .collect();
        let cells: Vec<String> = techniques
            .iter()
            .map(|t| {
                per.get(t)
                    .map(|s| format!("{}/{}", s.hits, s.top[0]))
                    .unwrap_or_default()
            })
            .collect();
        let _ = writeln!(out, "| {c} | {} | {} |", rs.len(), cells.join(" | "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_quantiles() {
        let v = [5.0, 1.0, 3.0, 2.0, 4.0];
        assert_eq!(quantile(&v, 0.5), 3.0);
        assert_eq!(quantile(&v, 0.9), 5.0);
        assert_eq!(quantile(&[], 0.5), 0.0);
        let ten: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(quantile(&ten, 0.9), 9.0);
    }
}
