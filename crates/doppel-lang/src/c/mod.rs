//! C: syntax (tree-sitter-c), compilation (gcc/clang into a build cache),
//! line coverage of a run (gcov) and the ISSTA'19 program transformations.

mod compile;
pub mod coverage;
mod syntax;
pub mod transform;

pub use compile::{BuildCache, BuildError, BuildRecipe, discover};
pub use syntax::CSyntax;
