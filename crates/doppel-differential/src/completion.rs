//! DBDB Figure 7: how many runs have completed, and how, after at most x
//! execution actions.
//!
//! x = 0 counts runs that ended in the breakpoint phase (a divergence of
//! breakpoint locations or removals: the program never ran), x = 1 adds the
//! runs that ended right after start, and so on; a row is cumulative. DBDB
//! (Lehmann & Pradel, FSE 2018, section 5.2) reports 47.9% of its runs
//! diverging at x = 0 and 99.7% completed at x = 20.

use doppel_core::store::ActionCount;
use serde::Serialize;
use std::collections::BTreeMap;

/// One x of the curve: runs completed after at most `actions` execution actions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CompletionRow {
    /// x: the number of execution actions (start, resume, steps).
    pub actions: usize,
    /// Runs completed by x (cumulative), of every verdict.
    pub completed: u64,
    /// Of those, runs whose program finished with no divergence.
    pub finished: u64,
    /// Of those, divergent runs per divergence type, by name.
    pub divergences: BTreeMap<String, u64>,
    /// Of those, runs stopped at the maximum number of actions, all agreeing.
    pub max_actions: u64,
    /// Of those, runs that ended otherwise (inconclusive, subject error).
    pub other: u64,
}

impl CompletionRow {
    /// Divergent runs of every type.
    pub fn diverged(&self) -> u64 {
        self.divergences.values().sum()
    }
}

/// The cumulative curve for x in `xs` (ascending), over `runs`.
pub fn curve(runs: &[ActionCount], xs: &[usize]) -> Vec<CompletionRow> {
    xs.iter()
        .map(|&x| {
            let mut row = CompletionRow {
                actions: x,
                completed: 0,
                finished: 0,
                divergences: BTreeMap::new(),
                max_actions: 0,
                other: 0,
            };
            for r in runs.iter().filter(|r| r.execution_actions <= x) {
                row.completed += 1;
                match (r.verdict.as_str(), &r.divergence) {
                    ("program_finished", _) => row.finished += 1,
                    ("max_actions", _) => row.max_actions += 1,
                    ("divergence", Some(d)) => *row.divergences.entry(d.clone()).or_default() += 1,
                    _ => row.other += 1,
                }
            }
            row
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(verdict: &str, div: Option<&str>, n: usize) -> ActionCount {
        ActionCount {
            verdict: verdict.into(),
            divergence: div.map(Into::into),
            execution_actions: n,
        }
    }

    #[test]
    fn rows_are_cumulative_and_split_by_outcome() {
        let runs = [
            run("divergence", Some("breakpoint_location"), 0),
            run("divergence", Some("pause_location"), 1),
            run("program_finished", None, 1),
            run("divergence", Some("pause_location"), 5),
            run("max_actions", None, 20),
            run("inconclusive", None, 3),
        ];
        let c = curve(&runs, &[0, 1, 5, 20]);
        assert_eq!(c.iter().map(|r| r.completed).collect::<Vec<_>>(), vec![1, 3, 5, 6]);
        assert_eq!(c[0].divergences.get("breakpoint_location"), Some(&1));
        assert_eq!(c[1].finished, 1);
        assert_eq!(c[2].divergences.get("pause_location"), Some(&2));
        assert_eq!(c[2].diverged(), 3);
        assert_eq!((c[2].other, c[2].max_actions), (1, 0));
        assert_eq!(c[3].max_actions, 1);
    }
}
