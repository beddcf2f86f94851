//! doppel's language front ends.
//!
//! - [`c`]: C subjects: the AST node type of a line (for DBDB's equivalence
//!   classes), build recipes and a content-addressed build cache.
//! - [`js`]: JavaScript subjects: the AST node type of a line (oxc, ESTree
//!   names, `Program` for lines without tokens) and syntax errors, the
//!   determinism prelude (fixed `Date`, seeded `Math.random`), and corpus
//!   files as subjects (plain programs, test262 tests with their harness,
//!   SunSpider programs with a `run();` epilogue) in a content-addressed
//!   cache.
//! - [`reduce`]: running a program reducer (C-Vise for C, treereduce for
//!   JavaScript) with an interestingness command under a budget.
//! - [`edit`]: source edits and the location map they induce.
//! - [`transform`]: the program transformations of metamorphic debugger
//!   testing (ISSTA'19 Table 1), shared types; each language implements them.

#![deny(missing_docs)]

pub mod c;
pub mod edit;
pub mod js;
pub mod prepare;
pub mod reduce;
pub mod rust;
pub mod transform;
