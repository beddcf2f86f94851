//! Differential debugger testing (DBDB: Lehmann & Pradel, "Feedback-Directed
//! Differential Testing of Interactive Debuggers", FSE 2018).
//!
//! - [`config`]: the knobs of Algorithm 1 (`doppel.toml` table `[diff]`);
//! - [`engine`]: one run, Algorithm 1 generalized to N debuggers;
//! - [`normalize`]: switchable rules that make debuggers' renderings comparable;
//! - [`oracle`]: divergence detection and types (section 3.4), known policies;
//! - [`campaign`]: many runs over a job pool, stored as they finish;
//! - [`completion`]: completed runs per number of execution actions (DBDB Figure 7);
//! - [`reclassify`]: re-judging stored runs under the current rules;
//! - [`repro`]: stand-alone reproducers in each debugger's own command language.

pub mod campaign;
pub mod completion;
pub mod config;
pub mod engine;
pub mod normalize;
pub mod oracle;
pub mod reclassify;
pub mod repro;

pub use config::{ActionWeights, BreakpointLines, DiffConfig};
