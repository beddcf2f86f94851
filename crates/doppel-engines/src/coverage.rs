//! engine262 semantics coverage: which spec algorithms and spec steps a
//! program exercised (JEST §III-B/C uses it to guide mutation and §III-E to
//! localize spec bugs).
//!
//! The [`Catalogue`] is the stable list of engine262's spec algorithms
//! (named functions in its spec-semantics sources: abstract operations,
//! `Evaluate_*` per production, built-ins such as `ArrayProto_join`) and of
//! the numbered spec steps inside them (`// 4.a.` comments, anchored at the
//! next code token of the pinned bundle and mapped through its source map).
//! It is built once per engine262 version by `workers/engine262-catalogue.mjs`
//! and cached as JSON. A [`ProgramCoverage`] holds indices into it: an
//! algorithm is covered when V8 precise coverage counts a call of its
//! function, a step when the innermost V8 block range around its anchor has
//! a non-zero count (../shared/notes/js-engines-measured.md §2.3).

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::Path;

/// One spec algorithm of engine262.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Algorithm {
    /// Stable id: the function name (`IsLooselyEqual`), `#2`.. for later same-named functions.
    pub id: String,
    /// The function name as in engine262 (named after the spec).
    pub name: String,
    /// `operation` (abstract operation or other algorithm), `evaluation`
    /// (`Evaluate_*`, the Evaluation SDO of one production) or `builtin`
    /// (`ArrayProto_join`-style built-in function).
    pub kind: String,
    /// engine262 source location, `src/abstract-ops/testing-comparison.mts:294`.
    pub source: String,
}

/// One numbered spec step inside an algorithm.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// Stable id: `IsLooselyEqual:6.a` (`#2`.. when a label repeats in one function).
    pub id: String,
    /// Index of its algorithm in [`Catalogue::algorithms`].
    pub algorithm: usize,
    /// The hierarchical step label (`6.a`).
    pub label: String,
    /// Whether it is a top-level step (`6`, not `6.a`).
    pub top: bool,
    /// engine262 source location of the step comment.
    pub source: String,
}

/// All algorithms and steps of the pinned engine262 build: the denominators
/// of coverage ratios.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Catalogue {
    /// engine262 npm version the catalogue was built from.
    pub engine262: String,
    /// The spec edition this build stands for (`ES2025`).
    pub edition: String,
    /// Spec algorithms.
    pub algorithms: Vec<Algorithm>,
    /// Spec steps.
    pub steps: Vec<Step>,
}

impl Catalogue {
    /// Reads a catalogue file written by the engine262 worker (the worker's
    /// internal offset tables in it are ignored). Errors: unreadable or malformed.
    pub fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Number of top-level steps.
    pub fn top_steps(&self) -> usize {
        self.steps.iter().filter(|s| s.top).count()
    }
}

/// What one program covered: sorted, deduplicated indices into the [`Catalogue`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgramCoverage {
    /// Indices into [`Catalogue::algorithms`].
    pub algorithms: Vec<u32>,
    /// Indices into [`Catalogue::steps`].
    pub steps: Vec<u32>,
}

/// The union of many programs' coverage, for suite-level ratios.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoverageUnion {
    /// Covered algorithm indices.
    pub algorithms: BTreeSet<u32>,
    /// Covered step indices.
    pub steps: BTreeSet<u32>,
}

impl CoverageUnion {
    /// Adds a program; returns how many algorithms and steps were new (JEST's
    /// criterion for keeping a mutant in the pool).
    pub fn add(&mut self, p: &ProgramCoverage) -> (usize, usize) {
        let a = p.algorithms.iter().filter(|i| self.algorithms.insert(**i)).count();
        let s = p.steps.iter().filter(|i| self.steps.insert(**i)).count();
        (a, s)
    }

    /// (covered, total) algorithms, steps and top-level steps of `cat`.
    pub fn ratios(&self, cat: &Catalogue) -> [(usize, usize); 3] {
        let top = self
            .steps
            .iter()
            .filter(|i| cat.steps.get(**i as usize).is_some_and(|s| s.top))
            .count();
        [
            (self.algorithms.len(), cat.algorithms.len()),
            (self.steps.len(), cat.steps.len()),
            (top, cat.top_steps()),
        ]
    }
}

/// A suite's coverage by id (`IsLooselyEqual`, `IsLooselyEqual:6.a`), stable
/// across catalogue orderings of one engine262 build: what two suites are
/// compared by, item by item.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoveredIds {
    /// engine262 version of the catalogue.
    pub engine262: String,
    /// Covered algorithm ids, catalogue order.
    pub algorithms: Vec<String>,
    /// Covered step ids, catalogue order.
    pub steps: Vec<String>,
}

impl CoverageUnion {
    /// The covered items' ids in `cat` (indices outside it are left out).
    pub fn ids(&self, cat: &Catalogue) -> CoveredIds {
        CoveredIds {
            engine262: cat.engine262.clone(),
            algorithms: self
                .algorithms
                .iter()
                .filter_map(|i| cat.algorithms.get(*i as usize).map(|a| a.id.clone()))
                .collect(),
            steps: self
                .steps
                .iter()
                .filter_map(|i| cat.steps.get(*i as usize).map(|s| s.id.clone()))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_counts_new_items_and_top_steps() {
        let step = |top| Step {
            id: String::new(),
            algorithm: 0,
            label: String::new(),
            top,
            source: String::new(),
        };
        let cat = Catalogue {
            engine262: "x".into(),
            edition: "ES2025".into(),
            algorithms: vec![],
            steps: vec![step(true), step(false), step(true)],
        };
        let mut u = CoverageUnion::default();
        let p = ProgramCoverage {
            algorithms: vec![1, 2],
            steps: vec![0, 1],
        };
        assert_eq!(u.add(&p), (2, 2));
        assert_eq!(u.add(&p), (0, 0));
        let [_, steps, top] = u.ratios(&cat);
        assert_eq!((steps, top), ((2, 3), (1, 2)));
        u.steps.insert(7);
        let ids = u.ids(&cat);
        assert_eq!(ids.steps.len(), 2, "index 7 is outside the catalogue");
    }
}
