//! Interactive metamorphic debugger testing (Tolksdorf, Lehmann & Pradel,
//! "Interactive Metamorphic Testing of Debuggers", ISSTA 2019).
//!
//! One debugger is checked against itself: an initial run (a program and
//! DBDB-generated actions) is transformed, the follow-up run is driven live
//! (the action transformation decides from the debugger's current state),
//! and the two traces must be in the transformation's output relation.
//!
//! - [`transformation`]: the eight transformations of Table 1 by name;
//! - [`script`]: a run's actions and outputs as a script; sliding and
//!   location maps applied to it;
//! - [`action`]: the action transformations (section 3.2.1) and the
//!   follow-up plan;
//! - [`program`]: follow-up programs (built through the caches), node types,
//!   coverage; the program transformations themselves live in `doppel_lang`;
//! - [`relation`]: the output relation checker;
//! - [`follow_up`]: the live follow-up run with resynchronization;
//! - [`round`]: one metamorphic test;
//! - [`sequence`]: iterative testing (section 3.3);
//! - [`control`]: the control runs (programs with no breakpoint) before the tests (issue 17, item 2);
//! - [`reduce`]: delta debugging of a finding's initial actions (issue 17, item 5);
//! - [`reduce_program`]: then its initial program (C-Vise, treereduce), the round re-applied to each variant;
//! - [`repro`]: the two inputs of a test as stand-alone reproducers;
//! - [`record`]: what a test stores (configuration, inputs), written and read through one type;
//! - [`technique`]: the technique seam (show, replay, repro, report) for the commands;
//! - [`campaign`]: many sequences over a job pool, stored as they finish.

#![deny(missing_docs)]

pub mod action;
pub mod campaign;
pub mod config;
pub mod control;
pub mod follow_up;
pub mod program;
pub mod record;
pub mod reduce;
pub mod reduce_program;
pub mod relation;
pub mod repro;
pub mod round;
pub mod script;
pub mod sequence;
pub mod technique;
#[cfg(test)]
mod test_support;
pub mod transformation;

pub use config::MetaConfig;
pub use transformation::Transformation;
