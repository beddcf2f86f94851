//! Regression root-causing (issue 16; Qi, Roychoudhury, Liang and Vaswani,
//! "Darwin: An Approach for Debugging Evolving Programs", ESEC/FSE 2009 /
//! TOSEM): given a reference program P, a modified program P' and a test t
//! on which they disagree, which lines of P' (and P) are to blame.
//!
//! This crate holds the library core of the technique, independent of the
//! campaign runner:
//!
//! - [`truth`]: the ground truth of a pair (the fix's changed lines).
//! - [`report`]: ranked line reports and their measures (faulty line in
//!   the report, rank of the first faulty line, report size).
//! - [`baselines`]: the textual diff, the branch lines the failing test
//!   executes in P', SBFL (doppel-sbfl's formulas) over gcov line and
//!   branch spectra.
//! - [`case`]: one case from build to named outcome.
//! - [`summary`]: a corpus run's table per technique and defect class.
//! - [`record`], [`view`], [`technique`], [`repro`], [`campaign`]: the
//!   technique seam: stored cases, their view, replay and reproducer, and
//!   cases as work items of the core campaign runner (`doppel localize`).
//!
//! - [`darwin`]: Darwin proper, path-condition deviations on doppel-concolic
//!   with z3; [`slice`](mod@slice): the slicing of its deviation queries;
//!   [`divergence`]: where the runs on t first part, when no deviation
//!   exists; [`switching`]: the critical predicates of P' on t
//!   (predicate switching); [`ranking`]: the order of the causes and
//!   which of the lines found on t the report holds.

#![deny(missing_docs)]

pub mod baselines;
pub mod campaign;
pub mod case;
pub mod darwin;
pub mod divergence;
mod dual;
pub mod ranking;
pub mod record;
pub mod report;
pub mod repro;
pub mod slice;
mod sliced;
pub mod summary;
pub mod switching;
pub mod technique;
pub mod truth;
pub mod view;
