//! JavaScript conformance testing after JEST (Park et al., "JEST: N+1-version
//! Differential Testing of Both JavaScript Engines and Specification",
//! ICSE 2021): the ESMeta ECMAScript grammar and grammar-based seed synthesis
//! with syntax coverage (section III-A).
//!
//! - [`grammar`]: the ESMeta `grammar.json` model and loader.
//! - [`shortest`]: shortest strings per nonterminal and parameters.
//! - [`synth`]: one program per reachable alternative; syntax coverage.
//! - [`seed_check`]: the oxc check and the syntax tree mutators edit.
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
pub mod seed_builtins;
pub mod seed_check;
pub mod seed_random;
pub mod shortest;
pub mod synth;
pub mod test262;

pub use grammar::{DEFAULT_GRAMMAR_PATH, Grammar, GrammarError};
pub use pool::{CoverageFigures, Generator, GeneratorConfig, GeneratorStats, Kept, Origin};
pub use synth::{Seed, SyntaxCoverage, Synthesis, synthesize, synthesize_checked};
