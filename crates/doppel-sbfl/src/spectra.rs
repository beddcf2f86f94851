//! Program spectra: per element, the number of passing and failing runs
//! that executed it (Wong et al., TSE 2016, section 3.1).

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The outcome of one test run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The run gave the expected result.
    Passed,
    /// The run gave a wrong result (the symptom being localized).
    Failed,
}

/// The four counts of one element, each a number of test runs.
///
/// `ef`/`ep`: failing/passing runs that executed the element;
/// `nf`/`np`: failing/passing runs that did not. `ef + nf` is the number of
/// failing runs, `ep + np` the number of passing runs, for every element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Counts {
    /// Failing runs that executed the element.
    pub ef: u32,
    /// Passing runs that executed the element.
    pub ep: u32,
    /// Failing runs that did not execute the element.
    pub nf: u32,
    /// Passing runs that did not execute the element.
    pub np: u32,
}

impl Counts {
    /// Counts from the four numbers, in the order `ef, ep, nf, np`.
    pub const fn new(ef: u32, ep: u32, nf: u32, np: u32) -> Self {
        Self { ef, ep, nf, np }
    }
}

/// The spectra of a test suite over elements `E`.
///
/// Elements are known once a run executed them or [`Spectra::declare`]
/// named them (an element no run executes, such as a line with code that
/// only other inputs reach, has `ef = ep = 0`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spectra<E: Ord> {
    passed: u32,
    failed: u32,
    /// Per element: (ef, ep).
    executed: BTreeMap<E, (u32, u32)>,
}

impl<E: Ord> Default for Spectra<E> {
    fn default() -> Self {
        Self {
            passed: 0,
            failed: 0,
            executed: BTreeMap::new(),
        }
    }
}

impl<E: Ord + Clone> Spectra<E> {
    /// No runs, no elements.
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes `element` known without counting a run (its `ef` and `ep`
    /// stay as they are).
    pub fn declare(&mut self, element: E) {
        self.executed.entry(element).or_insert((0, 0));
    }

    /// Adds one run that executed `elements` (duplicates count once) with
    /// the given verdict.
    pub fn add_run(&mut self, elements: impl IntoIterator<Item = E>, verdict: Verdict) {
        let set: BTreeSet<E> = elements.into_iter().collect();
        match verdict {
            Verdict::Passed => self.passed += 1,
            Verdict::Failed => self.failed += 1,
        }
        for e in set {
            let c = self.executed.entry(e).or_insert((0, 0));
            match verdict {
                Verdict::Passed => c.1 += 1,
                Verdict::Failed => c.0 += 1,
            }
        }
    }

    /// Number of passing runs added.
    pub fn passed(&self) -> u32 {
        self.passed
    }

    /// Number of failing runs added.
    pub fn failed(&self) -> u32 {
        self.failed
    }

    /// The counts of `element`; an unknown element has `ef = ep = 0`.
    pub fn counts(&self, element: &E) -> Counts {
        let (ef, ep) = self.executed.get(element).copied().unwrap_or((0, 0));
        Counts {
            ef,
            ep,
            nf: self.failed - ef,
            np: self.passed - ep,
        }
    }

    /// Every known element with its counts, in the elements' order.
    pub fn iter(&self) -> impl Iterator<Item = (&E, Counts)> + '_ {
        self.executed.keys().map(move |e| (e, self.counts(e)))
    }

    /// Number of known elements.
    pub fn len(&self) -> usize {
        self.executed.len()
    }

    /// Whether no element is known.
    pub fn is_empty(&self) -> bool {
        self.executed.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_up_per_element() {
        let mut s = Spectra::new();
        s.add_run(["a", "b", "a"], Verdict::Passed);
        s.add_run(["b"], Verdict::Passed);
        s.add_run(["a", "c"], Verdict::Failed);
        s.declare("d");
        assert_eq!(s.passed(), 2);
        assert_eq!(s.failed(), 1);
        assert_eq!(
            s.counts(&"a"),
            Counts::new(1, 1, 0, 1),
            "a duplicate in one run counts once"
        );
        assert_eq!(s.counts(&"b"), Counts::new(0, 2, 1, 0));
        assert_eq!(s.counts(&"c"), Counts::new(1, 0, 0, 2));
        assert_eq!(s.counts(&"d"), Counts::new(0, 0, 1, 2));
        assert_eq!(s.counts(&"zzz"), Counts::new(0, 0, 1, 2));
        let names: Vec<_> = s.iter().map(|(e, _)| *e).collect();
        assert_eq!(names, ["a", "b", "c", "d"]);
    }
}
