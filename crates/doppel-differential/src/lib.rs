//! Differential debugger testing (DBDB: Lehmann & Pradel, "Feedback-Directed
//! Differential Testing of Interactive Debuggers", FSE 2018).
//!
//! - [`config`]: the knobs of Algorithm 1 (`doppel.toml` table `[diff]`);
//! - [`continuation`]: which policy divergences a run goes on past, and how;
//! - [`engine`]: one run, Algorithm 1 generalized to N debuggers;
//! - [`class`]: the class key's parts (divergence, last action, AST node, policy);
//! - [`oracle`]: the comparison of outputs (`doppel_debuggers::compare`,
//!   after `doppel_debuggers::normalize`) plus known policies;
//! - [`campaign`]: many runs over a job pool, stored as they finish;
//! - [`completion`]: completed runs per number of execution actions (DBDB Figure 7);
//! - [`record`]: what a run stores (configuration and input), written and read through one type;
//! - [`reclassify`]: re-judging stored runs under the current rules;
//! - [`scripted`]: a run of a given action sequence (delta debugging's test);
//! - [`reduce`]: delta debugging of a finding's actions; [`reduce_program`]: C-Vise on its program;
//! - [`replay`]: a stored run again, its subject rebuilt from the stored input;
//! - [`technique`]: the technique seam (show, replay, repro, reclassify, report) for the commands.
//!
//! Normalization, output comparison and the reproducer writers live in
//! `doppel-debuggers` (shared with metamorphic testing), and so does the
//! control run; [`normalize`], [`repro`] and [`control`] are re-exported here
//! for existing callers.

#![deny(missing_docs)]

pub mod campaign;
pub mod class;
pub mod completion;
pub mod config;
pub mod continuation;
pub mod engine;
pub mod going_on;
pub mod oracle;
pub mod reclassify;
pub mod record;
pub mod reduce;
pub mod reduce_program;
pub mod replay;
pub mod scripted;
pub mod technique;

pub use config::{ActionWeights, BreakpointLines, DiffConfig};

pub use doppel_debuggers::{control, normalize, repro};
