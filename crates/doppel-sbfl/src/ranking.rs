//! Rankings by score with explicit ties.
//!
//! Elements with equal scores form a tie group occupying positions
//! `best..=worst` (1-based): `best` = 1 + the number of elements scoring
//! strictly higher, `worst` = the number scoring higher or equal. A
//! developer reading the list top-down inspects between `best` and `worst`
//! elements before reaching one of the group; `average` = (best + worst) / 2
//! is the expectation when ties are in random order (the convention of
//! the measurements in
//! ../shared/notes/darwin-measured.md section 3.2). doppel's localization
//! reports the average unless told otherwise ([`TieBreak`]).

use crate::{Formula, Spectra};
use serde::{Deserialize, Serialize};

/// How to turn a tie group into one position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TieBreak {
    /// The first position of the group (optimistic).
    Best,
    /// The last position of the group (pessimistic).
    Worst,
    /// The middle of the group (expected under random order).
    #[default]
    Average,
}

/// The positions of an element's tie group (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rank {
    /// 1 + the number of elements scoring strictly higher.
    pub best: usize,
    /// The number of elements scoring higher or equal.
    pub worst: usize,
    /// `(best + worst) / 2`.
    pub average: f64,
}

impl Rank {
    /// The position under `tie`.
    pub fn get(&self, tie: TieBreak) -> f64 {
        match tie {
            TieBreak::Best => self.best as f64,
            TieBreak::Worst => self.worst as f64,
            TieBreak::Average => self.average,
        }
    }
}

/// One ranked element.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ranked<E> {
    /// The element.
    pub element: E,
    /// Its score (finite or `+inf`; NaN is ranked as `-inf`).
    pub score: f64,
    /// Its tie group's positions.
    pub rank: Rank,
}

/// Elements in descending score order (ties in the elements' own order, so
/// the listing is deterministic).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ranking<E> {
    /// The ranked elements, most suspicious first.
    pub entries: Vec<Ranked<E>>,
}

impl<E: Ord + Clone> Ranking<E> {
    /// Ranks every element of `spectra` by `formula`.
    pub fn new(spectra: &Spectra<E>, formula: &dyn Formula) -> Self {
        Self::from_scores(spectra.iter().map(|(e, c)| (e.clone(), formula.score(c))))
    }

    /// Ranks the given (element, score) pairs; a NaN score counts as `-inf`.
    pub fn from_scores(scores: impl IntoIterator<Item = (E, f64)>) -> Self {
        let mut v: Vec<(E, f64)> = scores
            .into_iter()
            .map(|(e, s)| (e, if s.is_nan() { f64::NEG_INFINITY } else { s }))
            .collect();
        v.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let n = v.len();
        let mut ranks = Vec::with_capacity(n);
        let mut i = 0;
        while i < n {
            let mut j = i;
            while j + 1 < n && v[j + 1].1 == v[i].1 {
                j += 1;
            }
            let rank = Rank {
                best: i + 1,
                worst: j + 1,
                average: (i + j + 2) as f64 / 2.0,
            };
            ranks.extend(std::iter::repeat_n(rank, j - i + 1));
            i = j + 1;
        }
        let entries = v
            .into_iter()
            .zip(ranks)
            .map(|((element, score), rank)| Ranked { element, score, rank })
            .collect();
        Self { entries }
    }
}

impl<E: PartialEq> Ranking<E> {
    /// The rank of `element`, if it is ranked.
    pub fn rank_of(&self, element: &E) -> Option<Rank> {
        self.entries.iter().find(|r| &r.element == element).map(|r| r.rank)
    }

    /// The best rank among the elements `wanted` accepts (the position of
    /// the first faulty element a reader meets), by `tie`; `None` if no
    /// ranked element is wanted.
    pub fn first_rank(&self, wanted: impl Fn(&E) -> bool, tie: TieBreak) -> Option<f64> {
        self.entries
            .iter()
            .filter(|r| wanted(&r.element))
            .map(|r| r.rank.get(tie))
            .min_by(f64::total_cmp)
    }

    /// Number of ranked elements.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is ranked.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Verdict;
    use crate::formula::{Ochiai, Tarantula};

    #[test]
    fn ties_get_best_worst_and_average() {
        let r = Ranking::from_scores([("a", 0.5), ("b", 1.0), ("c", 0.5), ("d", 0.5), ("e", f64::NAN)]);
        let order: Vec<_> = r.entries.iter().map(|x| x.element).collect();
        assert_eq!(order, ["b", "a", "c", "d", "e"]);
        assert_eq!(
            r.rank_of(&"b").unwrap(),
            Rank {
                best: 1,
                worst: 1,
                average: 1.0
            }
        );
        let c = r.rank_of(&"c").unwrap();
        assert_eq!((c.best, c.worst, c.average), (2, 4, 3.0));
        assert_eq!(r.rank_of(&"e").unwrap().best, 5, "NaN ranks last");
        assert_eq!(r.first_rank(|e| *e == "d" || *e == "e", TieBreak::Best), Some(2.0));
        assert_eq!(r.first_rank(|e| *e == "d", TieBreak::Worst), Some(4.0));
        assert_eq!(r.first_rank(|e| *e == "d", TieBreak::Average), Some(3.0));
        assert_eq!(r.first_rank(|e| *e == "zz", TieBreak::Average), None);
    }

    /// The classic example shape: three passing and one failing run over
    /// five lines, scores computed by hand.
    #[test]
    fn ranking_from_spectra_by_hand() {
        let mut s = Spectra::new();
        s.add_run([1u32, 2, 3], Verdict::Passed);
        s.add_run([1u32, 2, 4], Verdict::Passed);
        s.add_run([1u32, 5], Verdict::Passed);
        s.add_run([1u32, 2, 5], Verdict::Failed);
        // Ochiai: 1: 1/sqrt(1*4) = .5; 2: 1/sqrt(3) = .577; 3, 4: 0; 5: 1/sqrt(2) = .707.
        let r = Ranking::new(&s, &Ochiai);
        let order: Vec<_> = r.entries.iter().map(|x| x.element).collect();
        assert_eq!(order, [5, 2, 1, 3, 4]);
        assert_eq!(r.rank_of(&3).unwrap().average, 4.5);
        // Tarantula: 1: 1/(1+1) = .5; 2: 1/(1+2/3) = .6; 5: 1/(1+1/3) = .75.
        let t = Ranking::new(&s, &Tarantula);
        assert!((t.entries[0].score - 0.75).abs() < 1e-12);
        assert!((t.entries[1].score - 0.6).abs() < 1e-12);
        assert_eq!(t.entries[2].score, 0.5);
    }
}
