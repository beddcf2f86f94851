//! JavaScript conformance testing after JEST (Park et al., "JEST: N+1-version
//! Differential Testing of Both JavaScript Engines and Specification",
//! ICSE 2021): the ESMeta ECMAScript grammar and grammar-based seed synthesis
//! with syntax coverage (section III-A).
//!
//! - [`grammar`]: the ESMeta `grammar.json` model and loader.
//! - [`shortest`]: shortest strings per nonterminal and parameters.
//! - [`synth`]: one program per reachable alternative; syntax coverage.
//! - [`verdict`]: section III-E's verdicts and family votes; `verdict::panel`
//!   runs a test on every engine and engine262.
//! - [`matrix`]: the engine-by-test matrix, test262 files as tests, the
//!   cached test262 matrix (known vs new).
//! - [`localize`], [`group`]: SBFL over spec algorithms and steps; failure groups.
//! - [`reduce`]: each group's representative reduced by treereduce (issue 15 part 7b).
//! - [`technique`], [`technique_record`], [`technique_repro`],
//!   [`technique_campaign`], [`technique_pages`]: the technique seam, stored records,
//!   reproducers, tests as campaign work items, and the report's matrix and group pages.
//! - [`seed_check`]: the oxc check and the syntax tree mutators edit.
//! - [`seed_activate`]: grammar seeds made to run (values of the right
//!   shape, drivers that call what a seed declares).
//! - [`seed_random`]: random bounded derivations of a nonterminal.
//! - [`seed_builtins`]: built-ins walked in engine262, calls of each; spec vocabulary.
//! - [`mutate`]: the five mutators (§III-B, C), one file each.
//! - [`pool`]: the coverage-guided [`Generator`] (§III-B).
//! - [`inject`]: a program's final state in engine262 as labelled assertions (§III-D).
//! - [`test262`]: test262-format emission, the harness script, per-engine verdicts.
#![deny(missing_docs)]

pub mod grammar;
pub mod inject;
pub mod mutate;
pub mod pool;
pub mod seed_activate;
pub mod seed_builtins;
pub mod seed_check;
pub mod seed_random;
pub mod shortest;
pub mod synth;
pub mod test262;

pub mod group;
pub mod localize;
pub mod matrix;
pub mod reduce;
pub mod reduce_server;
pub mod technique;
pub mod technique_campaign;
pub mod technique_pages;
pub mod technique_record;
pub mod technique_repro;
pub mod verdict;

pub use grammar::{DEFAULT_GRAMMAR_PATH, Grammar, GrammarError};
pub use pool::{CoverageFigures, Generator, GeneratorConfig, GeneratorStats, Kept, Origin};
pub use synth::{Seed, SyntaxCoverage, Synthesis, synthesize, synthesize_checked};
