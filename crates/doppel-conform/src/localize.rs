//! Spectrum-based localization of conformance failures in the
//! specification (JEST §III-E): the program elements are engine262's spec
//! algorithms and their numbered steps ([`doppel_engines::coverage`]); the
//! spectra come from engine262's coverage of passing and failing tests;
//! scores are computed per step and per algorithm and aggregated to the
//! algorithm by their maximum (JEST's method-level aggregation after Sohn
//! and Yoo, ISSTA 2017). ER1b is the paper's formula; Ochiai, Tarantula
//! and DStar come from `doppel-sbfl` beside it.

use doppel_engines::coverage::{Catalogue, ProgramCoverage};
use doppel_sbfl::{Formula, Ranking, Spectra, Verdict};
use std::collections::BTreeMap;

/// One test's contribution: its coverage and whether it failed.
#[derive(Debug, Clone, Copy)]
pub struct Observation<'a> {
    /// engine262's coverage of the test.
    pub coverage: &'a ProgramCoverage,
    /// Whether the test failed (on the family, or as a spec candidate).
    pub failed: bool,
}

/// Algorithm-level ranking: algorithm ids of `catalogue` (`ArrayProto_join`)
/// by the maximum of the algorithm's own score and its steps' scores under
/// `formula`. Only algorithms some observed test executed are ranked.
pub fn rank_algorithms(
    catalogue: &Catalogue,
    observations: &[Observation<'_>],
    formula: &dyn Formula,
) -> Ranking<String> {
    let mut algs: Spectra<u32> = Spectra::new();
    let mut steps: Spectra<u32> = Spectra::new();
    for o in observations {
        let v = if o.failed { Verdict::Failed } else { Verdict::Passed };
        algs.add_run(o.coverage.algorithms.iter().copied(), v);
        steps.add_run(o.coverage.steps.iter().copied(), v);
    }
    let mut best: BTreeMap<u32, f64> = BTreeMap::new();
    for (a, c) in algs.iter() {
        best.insert(*a, formula.score(c));
    }
    for (s, c) in steps.iter() {
        let Some(step) = catalogue.steps.get(*s as usize) else {
            continue;
        };
        let score = formula.score(c);
        let e = best.entry(step.algorithm as u32).or_insert(f64::NEG_INFINITY);
        if score > *e {
            *e = score;
        }
    }
    Ranking::from_scores(
        best.into_iter()
            .filter_map(|(a, score)| catalogue.algorithms.get(a as usize).map(|alg| (alg.id.clone(), score))),
    )
}

/// `coverage` without what `baseline` covers (both sorted): a test's own
/// coverage once its harness's (or the host's) is taken out.
pub fn without(coverage: &ProgramCoverage, baseline: &ProgramCoverage) -> ProgramCoverage {
    let minus =
        |a: &[u32], b: &[u32]| -> Vec<u32> { a.iter().copied().filter(|x| b.binary_search(x).is_err()).collect() };
    ProgramCoverage {
        algorithms: minus(&coverage.algorithms, &baseline.algorithms),
        steps: minus(&coverage.steps, &baseline.steps),
    }
}

/// The algorithm to blame for one failing test: of the algorithms it
/// covers, the one ranked highest in `ranking` (ties: the ranking's order).
pub fn blame(catalogue: &Catalogue, coverage: &ProgramCoverage, ranking: &Ranking<String>) -> Option<String> {
    let mine: std::collections::BTreeSet<&str> = coverage
        .algorithms
        .iter()
        .filter_map(|i| catalogue.algorithms.get(*i as usize).map(|a| a.id.as_str()))
        .collect();
    ranking
        .entries
        .iter()
        .find(|e| mine.contains(e.element.as_str()))
        .map(|e| e.element.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use doppel_engines::coverage::{Algorithm, Step};
    use doppel_sbfl::formula::Er1b;

    fn cat() -> Catalogue {
        let alg = |id: &str| Algorithm {
            id: id.into(),
            name: id.into(),
            kind: "operation".into(),
            source: String::new(),
        };
        let step = |a: usize, label: &str| Step {
            id: format!("{a}:{label}"),
            algorithm: a,
            label: label.into(),
            top: !label.contains('.'),
            source: String::new(),
        };
        Catalogue {
            engine262: "x".into(),
            edition: "ES2025".into(),
            algorithms: vec![alg("ScriptEvaluation"), alg("IsLooselyEqual"), alg("ToPrimitive")],
            steps: vec![step(0, "1"), step(1, "1"), step(1, "6.a"), step(2, "1")],
        }
    }

    fn cov(algorithms: &[u32], steps: &[u32]) -> ProgramCoverage {
        ProgramCoverage {
            algorithms: algorithms.to_vec(),
            steps: steps.to_vec(),
        }
    }

    #[test]
    fn without_takes_the_baseline_out() {
        let c = without(&cov(&[0, 1, 2], &[0, 1, 2, 3]), &cov(&[0, 2], &[0, 3]));
        assert_eq!(c, cov(&[1], &[1, 2]));
    }

    #[test]
    fn er1b_blames_the_step_only_failing_tests_reach() {
        let c = cat();
        // Every test runs ScriptEvaluation and IsLooselyEqual's step 1; only
        // the failing ones reach step 6.a; one passing test runs ToPrimitive.
        let fail1 = cov(&[0, 1], &[0, 1, 2]);
        let fail2 = cov(&[0, 1, 2], &[0, 1, 2, 3]);
        let pass1 = cov(&[0, 1], &[0, 1]);
        let pass2 = cov(&[0, 1, 2], &[0, 1, 3]);
        let obs = [
            Observation {
                coverage: &fail1,
                failed: true,
            },
            Observation {
                coverage: &fail2,
                failed: true,
            },
            Observation {
                coverage: &pass1,
                failed: false,
            },
            Observation {
                coverage: &pass2,
                failed: false,
            },
        ];
        let r = rank_algorithms(&c, &obs, &Er1b);
        // ER1b = ef - ep / (ep + np + 1): step 6.a has ef 2, ep 0 -> 2.0;
        // ScriptEvaluation ef 2, ep 2 -> 2 - 2/3; ToPrimitive ef 1, ep 1 -> 1 - 1/3.
        assert_eq!(r.entries[0].element, "IsLooselyEqual");
        assert!((r.entries[0].score - 2.0).abs() < 1e-9);
        assert_eq!(r.entries[1].element, "ScriptEvaluation");
        assert!((r.entries[1].score - (2.0 - 2.0 / 3.0)).abs() < 1e-9);
        assert_eq!(r.entries[2].element, "ToPrimitive");
        assert_eq!(blame(&c, &fail1, &r).as_deref(), Some("IsLooselyEqual"));
        let only_prim = cov(&[2], &[3]);
        assert_eq!(blame(&c, &only_prim, &r).as_deref(), Some("ToPrimitive"));
    }
}
