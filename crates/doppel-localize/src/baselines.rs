//! The baselines computed beside Darwin (issue 16 part 5): the textual
//! diff, "every branch line the failing test executes in P'", and SBFL
//! (Ochiai, Tarantula, DStar, ER1b from doppel-sbfl) over line and branch
//! spectra of P' on the passing and failing tests.

use crate::report::Report;
use crate::truth::{Line, Side, changed_lines};
use doppel_lang::c::test_coverage::RunCoverage;
use doppel_sbfl::{Spectra, Verdict, registry};
use std::collections::BTreeMap;

fn modified(line: u32) -> Line {
    Line {
        side: Side::Modified,
        line,
    }
}

/// The textual diff: the lines of P' the diff to P deletes or replaces and
/// the lines of P it inserts or replaces, as one unranked set.
pub fn diff(modified_text: &str, reference_text: &str) -> Report {
    let (old, new, _) = changed_lines(modified_text, reference_text);
    let mut lines: Vec<Line> = old.into_iter().map(modified).collect();
    lines.extend(new.into_iter().map(|line| Line {
        side: Side::Reference,
        line,
    }));
    Report::set("diff", lines)
}

/// Every line of P' holding a conditional branch that the failing run
/// executed (gcov), as one unranked set.
pub fn executed_branch_lines(failing: &RunCoverage) -> Report {
    Report::set("branches", failing.executed_branch_lines().into_iter().map(modified))
}

/// SBFL over P''s line spectra and branch spectra, one report per formula
/// and spectrum (`sbfl-<formula>-line`, `sbfl-<formula>-branch`), holding
/// the lines a failing run executed (a line's branch score is the highest
/// of its arcs). `runs` pairs each run's coverage with its verdict.
pub fn sbfl(runs: &[(&RunCoverage, Verdict)]) -> Vec<Report> {
    let mut lines: Spectra<u32> = Spectra::new();
    let mut arcs: Spectra<(u32, u32)> = Spectra::new();
    for (cov, verdict) in runs {
        lines.add_run(cov.executed_lines(), *verdict);
        arcs.add_run(cov.taken_branches(), *verdict);
    }
    let mut out = Vec::new();
    for f in registry::all() {
        let line_scores = lines
            .iter()
            .filter(|(_, c)| c.ef > 0)
            .map(|(l, c)| (modified(*l), f.score(c)));
        out.push(Report::ranked(format!("sbfl-{}-line", f.name()), line_scores));
        let mut per_line: BTreeMap<u32, f64> = BTreeMap::new();
        for ((l, _), c) in arcs.iter().filter(|(_, c)| c.ef > 0) {
            let s = f.score(c);
            per_line.entry(*l).and_modify(|m| *m = m.max(s)).or_insert(s);
        }
        out.push(Report::ranked(
            format!("sbfl-{}-branch", f.name()),
            per_line.into_iter().map(|(l, s)| (modified(l), s)),
        ));
    }
    out
}
