//! Differential debugger testing (DBDB: Lehmann & Pradel, "Feedback-Directed
//! Differential Testing of Interactive Debuggers", FSE 2018).
//!
//! - [`config`]: the knobs of Algorithm 1 (`doppel.toml` table `[diff]`);
//! - [`engine`]: one run, Algorithm 1 generalized to N debuggers;
//! - [`oracle`]: the comparison of outputs (`doppel_debuggers::compare`,
//!   after `doppel_debuggers::normalize`) plus known policies;
//! - [`campaign`]: many runs over a job pool, stored as they finish;
//! - [`completion`]: completed runs per number of execution actions (DBDB Figure 7);
//! - [`reclassify`]: re-judging stored runs under the current rules;
//!
//! Normalization, output comparison and the reproducer writers live in
//! `doppel-debuggers` (shared with metamorphic testing); [`normalize`] and
//! [`repro`] are re-exported here for existing callers.

pub mod campaign;
pub mod completion;
pub mod config;
pub mod engine;
pub mod oracle;
pub mod reclassify;

pub use config::{ActionWeights, BreakpointLines, DiffConfig};

pub use doppel_debuggers::{normalize, repro};
