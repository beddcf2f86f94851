//! JavaScript conformance testing after JEST (Park et al., "JEST: N+1-version
//! Differential Testing of Both JavaScript Engines and Specification",
//! ICSE 2021): the ESMeta ECMAScript grammar and grammar-based seed synthesis
//! with syntax coverage (section III-A).
//!
//! - [`grammar`]: the ESMeta `grammar.json` model and loader.
//! - [`shortest`]: shortest strings per nonterminal and parameters.
//! - [`synth`]: one program per reachable alternative; syntax coverage.
//! - [`inject`]: a program's final state in engine262 as labelled assertions (§III-D).
//! - [`test262`]: test262-format emission, the harness script, per-engine verdicts.
#![deny(missing_docs)]

pub mod grammar;
pub mod inject;
pub mod shortest;
pub mod synth;
pub mod test262;

pub use grammar::{DEFAULT_GRAMMAR_PATH, Grammar, GrammarError};
pub use synth::{Seed, SyntaxCoverage, Synthesis, synthesize};
