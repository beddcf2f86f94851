//! Differential debugger testing (DBDB: Lehmann & Pradel, "Feedback-Directed
//! Differential Testing of Interactive Debuggers", FSE 2018).
//!
//! - [`config`]: the knobs of Algorithm 1 (`doppel.toml` table `[diff]`);
//! - [`engine`]: one run, Algorithm 1 generalized to N debuggers;
//! - [`normalize`]: switchable rules that make debuggers' renderings comparable;
//! - [`class`]: the class key's parts (divergence, last action, AST node, policy);
//! - [`oracle`]: divergence detection and types (section 3.4), known policies;
//! - [`campaign`]: many runs over a job pool, stored as they finish;
//! - [`completion`]: completed runs per number of execution actions (DBDB Figure 7);
//! - [`record`]: what a run stores (configuration and input), written and read through one type;
//! - [`reclassify`]: re-judging stored runs under the current rules;
//! - [`replay`]: a stored run again, its subject rebuilt from the stored input;
//! - [`technique`]: the technique seam (show, replay, repro, reclassify, report) for the commands;
//! - [`repro`]: stand-alone reproducers in each debugger's own command language.

pub mod campaign;
pub mod class;
pub mod completion;
pub mod config;
pub mod engine;
pub mod normalize;
pub mod oracle;
pub mod reclassify;
pub mod record;
pub mod replay;
pub mod repro;
pub mod technique;

pub use config::{ActionWeights, BreakpointLines, DiffConfig};
