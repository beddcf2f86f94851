//! A localization report (ranked lines of P' and P) and its measures
//! against the ground truth (issue 16: faulty line in the report, rank of
//! the first faulty line, report size).

use crate::truth::{Line, Truth};
use doppel_sbfl::{Rank, Ranking, TieBreak};
use serde::{Deserialize, Serialize};

/// One reported line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The line (P' or P).
    pub line: Line,
    /// The technique's score (higher = more suspicious; sets give all 1).
    pub score: f64,
    /// The line's tie group in the report.
    pub rank: Rank,
}

/// The ranked lines one technique reports for one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// The technique: `diff`, `branches`, `sbfl-<formula>-<line|branch>`, `darwin`.
    pub technique: String,
    /// The lines, most suspicious first.
    pub entries: Vec<Entry>,
}

impl Report {
    /// A report from scored lines (ties share a rank group).
    pub fn ranked(technique: impl Into<String>, scores: impl IntoIterator<Item = (Line, f64)>) -> Self {
        let r = Ranking::from_scores(scores);
        Self {
            technique: technique.into(),
            entries: r
                .entries
                .into_iter()
                .map(|e| Entry {
                    line: e.element,
                    score: e.score,
                    rank: e.rank,
                })
                .collect(),
        }
    }

    /// An unranked set of lines: one tie group.
    pub fn set(technique: impl Into<String>, lines: impl IntoIterator<Item = Line>) -> Self {
        Self::ranked(technique, lines.into_iter().map(|l| (l, 1.0)))
    }

    /// The measures of this report against `truth`; the rank of a tie
    /// group is its average position (doppel-sbfl's `TieBreak::Average`).
    pub fn measure(&self, truth: &Truth) -> Measures {
        let first_rank = self
            .entries
            .iter()
            .filter(|e| truth.contains(&e.line))
            .map(|e| e.rank.get(TieBreak::Average))
            .min_by(f64::total_cmp);
        Measures {
            hit: first_rank.is_some(),
            first_rank,
            size: self.entries.len(),
        }
    }
}

/// How good one report is for one case.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Measures {
    /// A faulty line is in the report.
    pub hit: bool,
    /// Average-tie rank of the first faulty line (1 = alone at the top).
    pub first_rank: Option<f64>,
    /// Number of reported lines.
    pub size: usize,
}

impl Measures {
    /// Whether the first faulty line is within the top `n` (average ties).
    pub fn top(&self, n: usize) -> bool {
        self.first_rank.is_some_and(|r| r <= n as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::truth::Side;

    fn l(line: u32) -> Line {
        Line {
            side: Side::Modified,
            line,
        }
    }

    #[test]
    fn measures_with_ties() {
        let truth = Truth {
            lines: [l(7)].into_iter().collect(),
        };
        let r = Report::ranked("x", [(l(3), 0.9), (l(7), 0.5), (l(8), 0.5)]);
        let m = r.measure(&truth);
        assert!(m.hit);
        assert_eq!(m.first_rank, Some(2.5));
        assert_eq!(m.size, 3);
        assert!(m.top(3) && !m.top(2));
        let s = Report::set("y", [l(1), l(2)]);
        assert_eq!(s.measure(&truth).first_rank, None);
        assert!(!s.measure(&truth).hit);
        assert_eq!(Report::set("z", [l(7)]).measure(&truth).first_rank, Some(1.0));
    }
}
